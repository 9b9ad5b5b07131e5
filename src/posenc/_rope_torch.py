"""The eager torch rotation behind :func:`posenc.apply_rope` and ``RotaryEmbedding`` (not public).

Where the time goes (torch profiler and timings; q and k of shape (1, 32, 4096, 128), float32,
on the 2-core CPU of ``make bench``): on 2026-11-26 Meta's complex multiply spent about 8 ms per
tensor multiplying and about 37 ms allocating its output and faulting it in, one 4 KiB page at a
time; on 2026-11-27 this machine faulted it in about 4.5 times faster (q and k: 38.8 ms as
run, 23.4 ms with the outputs in huge pages, against 96.1 and 27.4 ms), so how much the faults
weigh depends on the machine.
posenc's old path spent about as much again in ops on a stride-2 ``sin`` (a view of the
interleaved sin/cos table, which takes torch's non-vectorised loop) and in ``torch.complex`` of
two strided views on every call; its argument checks cost microseconds. So:

* the output of a large CPU call is advised for transparent huge pages (:func:`new_output`):
  one fault per 2 MiB instead of 512, 7 ms instead of 37 ms for 64 MiB;
* interleaved pairs ``(2i, 2i+1)`` are complex numbers: the rotation is one complex multiply by
  ``cis = f e^{i p w}`` into the output, the op Meta's code runs;
* half pairs ``(i, i + r/2)`` take two ops over the whole tensor (:func:`_half`): a multiply of
  the cross terms by ``[-sin, sin]``, through strided views that pair each half with the other
  half of the same row, then one multiply-add by ``[cos, cos]`` over whole rows. On 2026-11-27
  (outputs already faulted in, per tensor) the paired multiply took 7.8 ms (it walks rows of
  ``r/2`` elements), the multiply-add 4.5 ms and Meta's complex multiply 5.4 ms; the other
  order (whole-row multiply first, paired multiply-add second) took 4.8 + 8.3 ms and left half
  pairs at 1.08 times Meta's time where this order gives 1.01 times. Reading each half once
  through a ``(..., 2, r/2)`` view with the tables ``[cos; sin]`` and ``[-sin; cos]`` moves
  fewer bytes but was slower (the axis of size 2 broadcast: 16.4 ms against 11.8 ms a tensor);
  slabs that keep the second op in cache were as fast on an idle machine but need 3 ops per
  slab, and each op is a parallel region that waits for both cores: on a loaded machine they
  ran 5 to 8 times slower;
* ``cis`` (and the half pairing's contiguous cos/sin tables) are built straight from the float64
  angles: anchors every ``sqrt(seq)`` positions, exact rotations in between, as
  :func:`posenc.sinusoidal` does; no strided views, no per-call ``torch.complex`` of them. The
  half tables are one broadcast copy each (two ``cat`` of the strided ``real`` and ``imag``
  views took 1.6 ms); right after a rotation, with the caches cold, building them still takes
  about 1.8 ms, a tenth of a tensor's rotation, so the last call's tables are kept for a next
  call at equal integer positions (:func:`rope_tables`): q and then k build them once, as
  Meta's and Hugging Face's code do;
* float16/bfloat16 inputs go through a scratch buffer in the work dtype, slab by slab
  (:data:`CHUNK_BYTES`), so no temporary the size of ``x`` is made; interleaved inputs the
  complex view cannot take (an odd storage offset, a stride on the feature axis) are copied
  whole first, so that every layout gets the same op and the same result bit for bit.

Every branch reads shapes, strides and dtypes, never tensor values, except the test of whether
the positions run in equal steps (which picks the anchor method) and the comparison with the kept
positions (both read the positions, ``seq`` values, not ``x``); traced or differentiated calls
take :func:`rotate_functional` instead.
"""

from __future__ import annotations

import ctypes
import functools
import math
import sys
from typing import Any

import numpy as np

from ._array import compiling, functorch_active
from .sinusoidal import _NumpyOps, _TorchOps

# Slab size (in the work dtype) of the float16/bfloat16 paths: the slab, its float32 copy and
# its rotation stay in the last-level cache of a small CPU, in few enough ops per call.
CHUNK_BYTES = 2**23


# Outputs of at least this many bytes on the CPU are advised for transparent huge pages (Linux).
HUGE_PAGE_MIN = 2**22
_HUGE_PAGE = 2**21
_MADV_HUGEPAGE = 14  # <linux/mman.h>


def new_output(x: Any) -> Any:
    """``torch.empty`` of ``x``'s shape, dtype and device; a large CPU one in huge pages.

    First touching a new output is most of a rotation's time: Linux faults it in 4 KiB pages
    (a fault each, 16384 for 64 MiB). With transparent huge pages in ``madvise`` mode (the
    kernel's setting decides; ``always`` needs no advice, ``never`` ignores it) a 2 MiB page
    is one fault; what :envvar:`THP_MEM_ALLOC_ENABLE` does for every torch allocation is done
    here for this one. A hint only: where it is refused or unavailable nothing changes.
    """
    torch = sys.modules["torch"]
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    if x.device.type == "cpu" and out.numel() * out.element_size() >= HUGE_PAGE_MIN:
        madvise = _madvise()
        if madvise is not None:
            start = out.data_ptr()
            lo = -(-start // _HUGE_PAGE) * _HUGE_PAGE  # the whole 2 MiB pages inside it
            hi = (start + out.numel() * out.element_size()) // _HUGE_PAGE * _HUGE_PAGE
            if hi > lo:
                madvise(lo, hi - lo, _MADV_HUGEPAGE)  # -1 (EINVAL: no THP) changes nothing
    return out


@functools.cache
def _madvise() -> Any:
    """libc's ``madvise`` on Linux, else None."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        fn = ctypes.CDLL(None, use_errno=True).madvise
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    fn.restype = ctypes.c_int
    return fn


def eager(x: Any, *others: Any) -> bool:
    """Whether the ``out=`` path applies to ``x`` rotated by tables made from ``others``: not
    traced, no gradient wanted, a device with float64, no torch.func transform active.

    Under ``torch.func`` (``grad``, ``vjp``, ``jacrev``, ``jacfwd``, ``vmap``, ``functionalize``)
    the tensors are wrappers without storage: ``out=`` ops have no batching rule nor forward-mode
    derivative, and reading positions through NumPy needs a data pointer. One C call (about
    60 ns) tells whether any transform is active; then the functional path runs.
    """
    if compiling() or x.device.type in ("meta", "mps"):
        return False
    torch = sys.modules["torch"]
    if functorch_active():
        return False
    return not (
        torch.is_grad_enabled() and any(t.requires_grad for t in (x, *others) if t is not None)
    )


def work_dtype(x: Any) -> Any:
    torch = sys.modules["torch"]
    return torch.float64 if x.dtype == torch.float64 else torch.float32


def cis(pos: Any, inv_freq: Any, factor: float, work: Any) -> Any:
    """``factor * exp(i pos w)`` of shape ``pos.shape + (r/2,)``, complex of ``work``'s width.

    The angles are float64; positions in equal steps (each row of the last axis) use exact
    anchors every ``isqrt(seq)`` positions times exact in-block rotations, both rounded once to
    ``work`` and multiplied there (the error of :func:`posenc.sinusoidal`); other positions
    take ``cos`` and ``sin`` of the float64 angle, rounded once. CPU positions are read through
    NumPy (a few microseconds an op where torch's small ops take tens: most of a short call).
    """
    torch = sys.modules["torch"]
    ctype = torch.complex128 if work == torch.float64 else torch.complex64
    shape = tuple(pos.shape)
    half = len(inv_freq)
    rows = math.prod(shape[:-1]) if shape else 1
    length = shape[-1] if shape else 1
    device = pos.device
    if rows * length == 0:
        return torch.empty(shape + (half,), dtype=ctype, device=device)
    w = np.asarray(inv_freq, dtype=np.float64)
    host = None
    if device.type == "cpu" and not pos.requires_grad:
        try:
            host = pos.numpy().astype(np.float64).reshape(rows, length)
        except TypeError:  # a dtype NumPy lacks (bfloat16): torch does it
            host = None
    if host is not None:
        nctype = np.complex128 if work == torch.float64 else np.complex64
        ladder = _NumpyOps().progression(host)
        if ladder is None:
            table = (factor * np.exp(1j * (host[:, :, None] * w))).astype(nctype)
        else:
            z, u, n_full, block = _anchors(ladder[0], ladder[1], length, w, factor)
            table = np.empty((rows, length, half), nctype)
            _products(np.multiply, z.astype(nctype), u.astype(nctype), table, n_full, block)
        return torch.from_numpy(table.reshape(shape + (half,)))
    p64 = pos.to(torch.float64).reshape(rows, length)
    ladder = _TorchOps(p64).progression(p64)
    if ladder is None:
        angle = p64[:, :, None] * torch.as_tensor(w, device=device)  # (rows, length, half)
        out = torch.polar(torch.full_like(angle, factor), angle).to(ctype)
        return out.reshape(shape + (half,))
    z, u, n_full, block = _anchors(ladder[0], ladder[1], length, w, factor)
    out = torch.empty((rows, length, half), dtype=ctype, device=device)
    z_t = torch.from_numpy(z).to(device=device, dtype=ctype)
    u_t = torch.from_numpy(u).to(device=device, dtype=ctype)
    _products(lambda a, b, out: torch.mul(a, b, out=out), z_t, u_t, out, n_full, block)
    return out.reshape(shape + (half,))


# The tables of the last CPU call with integer positions (at most this many bytes) are kept for
# the next call: q and then k at the same positions take one build of cos/sin, as in Meta's and
# Hugging Face's code, which build it once for both.
KEEP_BYTES = 2**23
_kept: list[Any] = [None]  # [(key, a copy of the positions, tables)]: one reference, swapped whole


def rope_tables(pos: Any, inv_freq: Any, factor: float, work: Any, pairing: str) -> tuple[Any, ...]:
    """:func:`tables_from_cis` of :func:`cis`, or the last call's when it had equal integer
    positions (compared value by value, so a tensor changed in place is never taken for the
    old one), frequencies, factor, work dtype and pairing."""
    torch = sys.modules["torch"]
    keep = pos.device.type == "cpu" and not (pos.dtype.is_floating_point or pos.dtype.is_complex)
    if keep:
        key = (pairing, work, float(factor), np.asarray(inv_freq, np.float64).tobytes(), pos.dtype)
        last = _kept[0]
        if last is not None and last[0] == key and last[1].shape == pos.shape:
            if torch.equal(last[1], pos):
                return last[2]
    tabs = tables_from_cis(cis(pos, inv_freq, factor, work), pairing)
    if keep and sum(t.numel() * t.element_size() for t in tabs) <= KEEP_BYTES:
        _kept[0] = (key, pos.clone(), tabs)
    return tabs


def forget_tables() -> None:
    """Drop the kept tables (the benchmark does before each q and k, as a new step would)."""
    _kept[0] = None


def _anchors(starts: Any, step: float, length: int, w: Any, factor: float) -> tuple[Any, ...]:
    """Exact ``factor * e^{i a w}`` at anchors every ``block`` positions of each row
    ``(rows, n_anchor, half)`` and ``e^{i j step w}`` inside a block ``(block, half)``, complex128."""
    block = max(1, math.isqrt(length))
    n_full, rem = divmod(length, block)
    n_anchor = n_full + (1 if rem else 0)
    anchor = (starts[:, None] + (np.arange(n_anchor) * block * step)[None, :])[:, :, None] * w
    z = factor * np.exp(1j * anchor)
    u = np.exp(1j * ((np.arange(block) * step)[:, None] * w))
    return z, u, n_full, block


def _products(mul: Any, z: Any, u: Any, out: Any, n_full: int, block: int) -> None:
    """``out[:, k * block + j] = z[:, k] * u[j]`` (``out`` of shape (rows, length, half))."""
    rows, length, half = out.shape
    full = n_full * block
    mul(z[:, :n_full, None, :], u[None, None], out[:, :full].reshape(rows, n_full, block, half))
    if full < length:
        mul(z[:, n_full, None, :], u[None, : length - full], out[:, full:])


def tables_from_cis(c: Any, pairing: str) -> tuple[Any, ...]:
    """What :func:`rotate` multiplies by: ``(cis,)`` (interleaved) or, for the half pairing,
    ``([cos, cos], [-sin, sin])``, each contiguous (small: ``x``'s size over the heads)."""
    if pairing == "interleaved":
        return (c,)
    return _half_tables(c.real, c.imag)


def tables(cos: Any, sin: Any, pairing: str, work: Any) -> tuple[Any, ...]:
    """The same from real ``cos`` and ``sin`` (of one shape), in ``work``."""
    torch = sys.modules["torch"]
    cos, sin = cos.to(work), sin.to(work)
    if pairing == "interleaved":
        return (torch.complex(cos, sin),)
    return _half_tables(cos, sin)


def _half_tables(cos: Any, sin: Any) -> tuple[Any, Any]:
    """``[cos, cos]`` and ``[-sin, sin]`` along the last axis: one broadcast copy each (two
    ``cat`` of the strided ``real`` and ``imag`` views took 4 times as long)."""
    torch = sys.modules["torch"]
    pair = (*cos.shape[:-1], 2, cos.shape[-1])
    both = torch.empty(pair, dtype=cos.dtype, device=cos.device)
    signed = torch.empty_like(both)
    both.copy_(cos.unsqueeze(-2).expand(pair))
    signed.copy_(sin.unsqueeze(-2).expand(pair))
    signed[..., 0, :].neg_()
    return both.flatten(-2), signed.flatten(-2)


def complex_viewable(t: Any) -> bool:
    """Whether ``view_as_complex(t.unflatten(-1, (n, 2)))`` works: unit last stride, even other
    strides and an even storage offset (``x[..., 1:9]`` and ``x[..., ::2]`` are not)."""
    return (
        t.dim() >= 1
        and t.stride(-1) == 1
        and all(st % 2 == 0 for st in t.stride()[:-1])
        and t.storage_offset() % 2 == 0
    )


def _as_complex(t: Any) -> Any:
    torch = sys.modules["torch"]
    return torch.view_as_complex(t.unflatten(-1, (t.shape[-1] // 2, 2)))


def rotate(x: Any, tabs: tuple[Any, ...], *, pairing: str, rot: int) -> Any:
    """Rotate the first ``rot`` features of ``x`` (eager, no autograd) by :func:`tables`.

    One output allocation; the tables broadcast against ``x.shape[:-1]`` (aligned from the
    right, as NumPy does).
    """
    torch = sys.modules["torch"]
    work = work_dtype(x)
    out = new_output(x)
    if x.numel() == 0:  # nothing to rotate (an empty batch or seq axis): as NumPy does
        return out
    if rot < x.shape[-1]:
        out[..., rot:].copy_(x[..., rot:])
    src, dst = x[..., :rot], out[..., :rot]
    tabs = tuple(t.reshape((1,) * (x.dim() - t.dim()) + tuple(t.shape)) for t in tabs)
    same = x.dtype == work
    if pairing == "interleaved" and same and not complex_viewable(src):
        # an odd storage offset or a feature stride: rotate a contiguous copy, by the very op a
        # contiguous x gets, so that every layout gives the same result bit for bit (a slab-wise
        # copy would not: torch's vector and scalar complex multiplies round differently)
        src = x.clone(memory_format=torch.contiguous_format)[..., :rot]
    if pairing == "interleaved" and same and complex_viewable(src) and complex_viewable(dst):
        torch.mul(_as_complex(src), tabs[0], out=_as_complex(dst))  # (a + ib)(cos + i sin)
        return out
    if pairing == "half" and same:  # two ops over all of x, reading it twice
        _half(src, dst, *tabs)
        return out
    pieces = slabs(
        src, dst, tabs, max(1, CHUNK_BYTES // torch.empty((), dtype=work).element_size())
    )
    size = max(p[0].numel() for p in pieces)
    if pairing == "interleaved":  # a contiguous copy in the work dtype, rotated in place
        buf = torch.empty(size, dtype=work, device=x.device)
        for xs, ds, (c,) in pieces:
            b = buf[: xs.numel()].view(xs.shape)
            b.copy_(xs)
            bc = _as_complex(b)
            torch.mul(bc, c, out=bc)
            ds.copy_(b)
        return out
    xbuf = torch.empty(size, dtype=work, device=x.device)  # x's slab and its rotation, in work
    dbuf = torch.empty(size, dtype=work, device=x.device)
    for xs, ds, tabs_s in pieces:
        xw, dw = xbuf[: xs.numel()].view(xs.shape), dbuf[: xs.numel()].view(xs.shape)
        xw.copy_(xs)
        _half(xw, dw, *tabs_s)
        ds.copy_(dw)
    return out


def _half(xs: Any, ds: Any, both: Any, signed: Any) -> None:
    """``a' = a cos - b sin``, ``b' = b cos + a sin`` for ``(a, b)`` the two halves of each row.

    Two ops over all of ``xs``: first the cross terms ``ds = [b, a] * [-sin, sin]``, through
    views that pair row ``r``'s ``a'`` with its ``b`` and row ``r + 1``'s ``b'`` with its ``a``
    (a step of ``h`` in memory between the two, where a swap of the halves would need a step of
    ``-h``; the first row's ``b'`` and the last row's ``a'`` are left over, one small op each),
    then one multiply-add ``ds += xs * [cos, cos]`` over whole rows. Layouts the views cannot
    take (a seq stride under ``h`` features) take one multiply per half instead. Each element
    is ``fl(a cos + fl(-b sin))`` (``fl(b cos + fl(a sin))``) with the multiply-add's rounding,
    on every path.
    """
    torch = sys.modules["torch"]
    h, seq = xs.shape[-1] // 2, xs.shape[-2]
    if seq < 2 or xs.stride(-2) < h * xs.stride(-1):
        torch.mul(xs[..., h:], signed[..., :h], out=ds[..., :h])
        torch.mul(xs[..., :h], signed[..., h:], out=ds[..., h:])
    else:
        lead = tuple(xs.shape[:-2])
        torch.mul(
            _pairs(xs, h, 0, lead, seq),
            _pairs(signed, 0, h, lead, seq),
            out=_pairs(ds, 0, h, lead, seq),
        )
        torch.mul(xs[..., 0, :h], signed[..., 0, h:], out=ds[..., 0, h:])
        torch.mul(xs[..., seq - 1, h:], signed[..., -1, :h], out=ds[..., seq - 1, :h])
    ds.addcmul_(xs, both)


def _pairs(t: Any, first: int, second: int, lead: tuple[int, ...], seq: int) -> Any:
    """View of shape ``lead + (seq - 1, 2, h)``: ``[..., r, 0, :]`` is ``t[..., r, first:first+h]``
    and ``[..., r, 1, :]`` is ``t[..., r + 1, second:second+h]`` (``t`` of shape ``(..., seq or 1,
    2h)`` with axes of size 1 broadcast, seq stride at least ``(first - second) * feature
    stride``)."""
    h = t.shape[-1] // 2
    st = t.stride()
    strides = [st[i] if t.shape[i] == n else 0 for i, n in enumerate(lead)]
    row = st[-2] if t.shape[-2] == seq else 0
    return t.as_strided(
        (*lead, seq - 1, 2, h),
        (*strides, row, row + (second - first) * st[-1], st[-1]),
        t.storage_offset() + first * st[-1],
    )


def slabs(src: Any, dst: Any, tabs: tuple[Any, ...], limit: int) -> list[tuple[Any, Any, Any]]:
    """``[(src piece, dst piece, table pieces), ...]`` of at most ``limit`` elements each (or one
    feature row), split along the leading axes first, then along seq.

    ``tabs`` have ``src``'s number of axes, each axis of size 1 or ``src``'s, so every piece of
    ``src`` takes the matching piece of each table (all of it along an axis of size 1).
    """
    out: list[tuple[Any, Any, Any]] = []
    _split(src, dst, tabs, limit, out)
    return out


def _split(src: Any, dst: Any, tabs: tuple[Any, ...], limit: int, out: list[Any]) -> None:
    if src.numel() <= limit or src.dim() == 1:
        out.append((src, dst, tabs))
        return
    n, per = src.shape[0], math.prod(src.shape[1:])
    if per > limit:  # one index of the first axis is still too big: split inside it
        for i in range(n):
            sub = tuple(t[0] if t.shape[0] == 1 else t[i] for t in tabs)
            _split(src[i], dst[i], sub, limit, out)
        return
    step = max(1, limit // per)
    for i in range(0, n, step):
        sub = tuple(t if t.shape[0] == 1 else t[i : i + step] for t in tabs)
        out.append((src[i : i + step], dst[i : i + step], sub))


def cos_sin_functional(pos: Any, inv_freq: Any, factor: float, dtype: Any) -> tuple[Any, Any]:
    """``factor * cos(p w)`` and ``factor * sin(p w)`` of shape ``pos.shape + (r/2,)`` in
    ``dtype``, by the plain float64 formula (what a traced call computes), in functional ops
    only: for torch.func transforms, whose wrapped tensors have no data pointer to read the
    positions through NumPy and no batching rule for the table's in-place writes."""
    torch = sys.modules["torch"]
    if pos.device.type == "mps":  # no float64 on Apple GPUs
        cos, sin = cos_sin_functional(pos.cpu(), inv_freq, factor, dtype)
        return cos.to(pos.device), sin.to(pos.device)
    w = torch.as_tensor(np.asarray(inv_freq, dtype=np.float64), device=pos.device)
    angle = pos.to(torch.float64)[..., None] * w  # (..., r/2), float64
    cos, sin = torch.cos(angle), torch.sin(angle)
    if factor != 1.0:
        cos, sin = cos * factor, sin * factor
    return cos.to(dtype), sin.to(dtype)


def rotate_functional(x: Any, cos: Any, sin: Any, *, pairing: str, rot: int) -> Any:
    """The same rotation in functional ops: differentiable (``out=`` arguments do not support
    autograd) and traceable (no storage offsets or strides read)."""
    torch = sys.modules["torch"]
    work = work_dtype(x)
    half = rot // 2
    cos, sin = cos.to(work), sin.to(work)
    src = x[..., :rot].to(work)
    if pairing == "interleaved":
        a, b = src[..., 0::2], src[..., 1::2]
        out = torch.stack((a * cos - b * sin, a * sin + b * cos), dim=-1).flatten(-2)
    else:
        a, b = src[..., :half], src[..., half:]
        out = torch.cat((a * cos - b * sin, b * cos + a * sin), dim=-1)
    out = out.to(x.dtype)
    return out if rot == x.shape[-1] else torch.cat((out, x[..., rot:]), dim=-1)

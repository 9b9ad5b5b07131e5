"""The eager torch rotation behind :func:`posenc.apply_rope` and ``RotaryEmbedding`` (not public).

Where the time goes (torch profiler and timings, q and k of shape (1, 32, 4096, 128), float32,
2-core CPU): a call reads ``x`` once and writes a new output once, and allocating and first
touching that output (page faults) is a third to a half of it; the cos/sin table is 1/64 of
``x``. So the rotation is written to touch ``x`` and the output once each from memory:

* interleaved pairs ``(2i, 2i+1)`` are complex numbers: the whole rotation is one complex
  multiply by ``cis = f e^{i p w}``, as Meta's Llama code does, into the output;
* half pairs ``(i, i + r/2)`` need three element-wise ops (``dst = x * [cos, cos]`` and two
  multiply-adds of the halves by ``sin``); they run on slabs of about :data:`CHUNK_BYTES`, so
  the multiply-adds find the slab in cache. ``sin`` must be contiguous: a stride-2 ``sin`` (a
  view of an interleaved table) takes torch's scalar loop, about 100x slower per op;
* float16/bfloat16 inputs go through a slab-sized scratch buffer in the work dtype, so no
  temporary the size of ``x`` is made; interleaved inputs the complex view cannot take (an odd
  storage offset, a stride on the feature axis) are copied whole first, so that every layout
  gets the same op and the same result bit for bit.

``cis`` is built straight from the float64 angles (anchors every ``sqrt(seq)`` positions,
exact rotations in between, as :func:`posenc.sinusoidal` does), so no strided cos/sin views
and no ``torch.complex`` of them are needed per call.

Every branch here reads shapes, strides and dtypes, never tensor values, except the test of
whether the positions run in equal steps (which picks the anchor method); traced or
differentiated calls take :func:`rotate_functional` instead.
"""

from __future__ import annotations

import math
import sys
from typing import Any

import numpy as np

from ._array import compiling
from .sinusoidal import _TorchOps

# Slab size of the multiply-add path: the three ops on one slab (x, the output and the
# cos/sin rows) stay in the last-level cache of a small CPU.
CHUNK_BYTES = 2**21


def eager(x: Any, *others: Any) -> bool:
    """Whether the ``out=`` path applies to ``x`` rotated by tables made from ``others``: not
    traced, no gradient wanted, a device with float64."""
    if compiling() or x.device.type in ("meta", "mps"):
        return False
    torch = sys.modules["torch"]
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
    take ``cos`` and ``sin`` of the float64 angle, rounded once.
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
    p64 = pos.to(torch.float64).reshape(rows, length)
    ladder = _TorchOps(p64).progression(p64)
    w = np.asarray(inv_freq, dtype=np.float64)
    if ladder is None:
        angle = p64[:, :, None] * torch.as_tensor(w, device=device)  # (rows, length, half)
        out = torch.polar(torch.full_like(angle, factor), angle).to(ctype)
        return out.reshape(shape + (half,))
    starts, step = ladder
    block = max(1, math.isqrt(length))
    n_full, rem = divmod(length, block)
    n_anchor = n_full + (1 if rem else 0)
    anchor = (starts[:, None] + (np.arange(n_anchor) * block * step)[None, :])[:, :, None] * w
    z = torch.from_numpy(factor * np.exp(1j * anchor)).to(device=device, dtype=ctype)
    u = np.exp(1j * ((np.arange(block) * step)[:, None] * w))  # (block, half)
    u_t = torch.from_numpy(u).to(device=device, dtype=ctype)
    out = torch.empty((rows, length, half), dtype=ctype, device=device)
    full = n_full * block
    torch.mul(z[:, :n_full, None, :], u_t, out=out[:, :full].view(rows, n_full, block, half))
    if rem:
        torch.mul(z[:, n_full, None, :], u_t[:rem], out=out[:, full:])
    return out.reshape(shape + (half,))


def tables_from_cis(c: Any, pairing: str) -> tuple[Any, ...]:
    """What :func:`rotate` multiplies by: ``(cis,)`` (interleaved) or ``([cos, cos], sin)``."""
    if pairing == "interleaved":
        return (c,)
    torch = sys.modules["torch"]
    return torch.cat((c.real, c.real), dim=-1), c.imag.contiguous()


def tables(cos: Any, sin: Any, pairing: str, work: Any) -> tuple[Any, ...]:
    """The same from real ``cos`` and ``sin`` (of one shape), in ``work``."""
    torch = sys.modules["torch"]
    cos, sin = cos.to(work), sin.to(work)
    if pairing == "interleaved":
        return (torch.complex(cos, sin),)
    return torch.cat((cos, cos), dim=-1), sin.contiguous()


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
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
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
    if same:
        for xs, ds, (both, sn) in pieces:
            _half(xs, ds, both, sn)
        return out
    xbuf = torch.empty(size, dtype=work, device=x.device)  # x's slab and its rotation, in work
    dbuf = torch.empty(size, dtype=work, device=x.device)
    for xs, ds, (both, sn) in pieces:
        xw, dw = xbuf[: xs.numel()].view(xs.shape), dbuf[: xs.numel()].view(xs.shape)
        xw.copy_(xs)
        _half(xw, dw, both, sn)
        ds.copy_(dw)
    return out


def _half(xs: Any, ds: Any, both: Any, sn: Any) -> None:
    """``a' = a cos - b sin``, ``b' = b cos + a sin`` for ``(a, b)`` the two halves."""
    torch = sys.modules["torch"]
    h = xs.shape[-1] // 2
    torch.mul(xs, both, out=ds)
    ds[..., :h].addcmul_(xs[..., h:], sn, value=-1)
    ds[..., h:].addcmul_(xs[..., :h], sn)


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

"""Fixed sinusoidal position encodings (Vaswani et al., 2017), exact at long positions.

Why the fast path is exact
--------------------------
A float32 product ``position * frequency`` loses the angle once positions are large (at 2**20 the
angle itself is rounded by ~6e-2). Here every angle is formed in float64. For positions that run
in steps (``p0, p0 + s, p0 + 2s, ...`` -- an int count, ``arange``, an offset range, per-row
position ids), the table is built from the rotation identity of the rotation page::

    PE(a + j s) = R(j s w) PE(a)

In complex form, with ``z(t) = sin(t w) + i cos(t w)``, that is ``z(a + j s) = z(a) * exp(-i j s w)``:
exact float64 anchors ``z(a)`` every ``B`` rows and ``B`` exact in-block rotations, rounded to the
output dtype, and one complex multiply per output pair. Its error is at most 4 units of the output
dtype's roundoff (< 2.4e-7 in float32) on top of the rounding of the float64 angle itself. Other
positions take the plain float64 formula.

Where the float32 bound holds
-----------------------------
The reference is ``sin(p w_i)`` with ``w_i`` the float64 ladder of :func:`frequencies`. An angle
``p w_i`` formed in float64 is rounded by up to half an ulp of ``|p| w_i``: ``2**-23`` (1.2e-7)
for ``|p| < 2**31``, ``2**-22`` below ``2**32``, ``2**-20`` below ``2**33`` (4.8e-7, then 1.2e-4
at ``2**40``). That is float64 itself, not the method: past ``|p| = 2**31`` no float64 formula can
promise 2.4e-7 in float32. So the bound is stated, and tested, for ``|p| <= 2**31``.

Under torch.compile / torch.export
----------------------------------
Choosing the fast path reads the positions (are they in steps?), a data-dependent branch that
breaks a graph. While tracing (``posenc._array.compiling()``) every call takes the plain float64
formula instead (same bound, no graph break), and the finiteness check of tensor positions is
skipped.
"""

from __future__ import annotations

import math
import sys
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from ._array import (
    MAX_SIZE,
    as_positions,
    check_base,
    check_choice,
    check_count,
    check_dim,
    check_scalar,
    compiling,
    functorch_active,
    is_count,
    result_dtype,
    traced_constant,
)

if TYPE_CHECKING:
    from ._typing import DTypeLike, FloatArray, Layout, PositionsLike, Tensor, TorchDType

__all__ = ["frequencies", "sinusoidal", "shift_matrix"]

LAYOUTS = ("interleaved", "concat")


def frequencies(dim: int, *, base: float = 10000.0) -> FloatArray:
    """Angular frequencies of the sinusoidal encoding (Vaswani et al., 2017).

    Parameters
    ----------
    dim : int
        Encoding width, a positive even integer.
    base : float, default 10000.0
        The ladder's base: ``w_i = base ** (-2 i / dim)``.

    Returns
    -------
    numpy.ndarray of shape (dim // 2,), float64
        ``w_0 = 1`` (period ``2 pi``, the fast end) down to ``base ** (-(dim - 2) / dim)``.

    Examples
    --------
    >>> import numpy as np
    >>> import posenc
    >>> np.round(posenc.frequencies(8), 6)
    array([1.   , 0.1  , 0.01 , 0.001])
    """
    dim = check_dim(dim, maximum=MAX_SIZE)
    base = check_base(base)
    return np.float64(base) ** (-np.arange(0, dim, 2, dtype=np.float64) / dim)


@overload
def sinusoidal(
    positions: Tensor,
    dim: int,
    *,
    base: float = ...,
    layout: Layout = ...,
    dtype: TorchDType | None = ...,
) -> Tensor: ...
@overload
def sinusoidal(
    positions: PositionsLike,
    dim: int,
    *,
    base: float = ...,
    layout: Layout = ...,
    dtype: DTypeLike = ...,
) -> FloatArray: ...
def sinusoidal(
    positions: Tensor | PositionsLike,
    dim: int,
    *,
    base: float = 10000.0,
    layout: Layout = "interleaved",
    dtype: Any = None,
) -> Tensor | FloatArray:
    """Fixed sinusoidal position encodings (Vaswani et al., 2017).

    Parameters
    ----------
    positions : int or array of shape (...,)
        Only a Python ``int`` ``n`` is a count: positions ``0 .. n-1`` (``n <= 2**53``).
        Everything array-like (NumPy array, list, torch tensor, and also a NumPy scalar such as
        ``ids[1]``, a 0-d array or a 0-d tensor) holds the positions themselves: any shape,
        integer or float (fractional positions are valid), negative allowed. A single position
        gives shape ``(dim,)``.
    dim : int
        Encoding width, a positive even integer.
    base : float, default 10000.0
        Frequency ladder base: ``w_i = base ** (-2 i / dim)``.
    layout : {"interleaved", "concat"}, default "interleaved"
        ``"interleaved"``: ``[sin(p w_0), cos(p w_0), sin(p w_1), cos(p w_1), ...]`` (the paper).
        ``"concat"``: all sines then all cosines (HF Marian's halves layout).
    dtype : floating dtype, optional
        Output dtype. Default float64 for NumPy (and int) input,
        ``torch.get_default_dtype()`` for tensors. Computed in float32 for outputs of at most
        32 bits, in float64 otherwise (``np.longdouble`` gets float64 values).

    Returns
    -------
    array of shape positions.shape + (dim,)
        ``(n, dim)`` for an int. NumPy for NumPy/int input; a tensor on the input's device for
        tensor input.

    Raises
    ------
    TypeError
        ``dim`` not an integer, positions not real (or a bool, or a Python float), dtype not
        floating.
    ValueError
        ``dim`` odd or <= 0, ``base`` <= 0 or == 1, positions not finite, an int count < 0 or
        > 2**53, unknown layout.

    See Also
    --------
    frequencies : the ``w_i``.
    shift_matrix : the rotation that moves an encoding by an offset.

    Notes
    -----
    ``PE[p, 2i] = sin(p w_i)``, ``PE[p, 2i+1] = cos(p w_i)``, ``w_i = base ** (-2i / dim)``.
    Angles are formed in float64; a float32 result is within 2.4e-7 of ``sin(p w_i)`` for
    ``|p| <= 2**31`` (the naive float32 product ``p * w`` is off by ~6e-2 near ``2**20``). Past
    ``2**31`` the float64 angle itself is rounded by more (``|p| 2**-53``: 4.8e-7 at ``2**33``).
    Under ``torch.compile``/``torch.export`` the plain float64 formula is used (no
    data-dependent branch; same bound) and tensor positions are not checked for inf/nan.

    References
    ----------
    Vaswani et al., "Attention Is All You Need", arXiv:1706.03762.

    Examples
    --------
    >>> import numpy as np
    >>> import posenc
    >>> pe = posenc.sinusoidal(3, 4)
    >>> pe.shape
    (3, 4)
    >>> np.round(pe, 4)
    array([[ 0.    ,  1.    ,  0.    ,  1.    ],
           [ 0.8415,  0.5403,  0.01  ,  1.    ],
           [ 0.9093, -0.4161,  0.02  ,  0.9998]])
    >>> posenc.sinusoidal(np.array([[0.5, 7.0]]), 6, layout="concat").shape
    (1, 2, 6)
    """
    dim = check_dim(dim, maximum=MAX_SIZE)
    base = check_base(base)
    layout_ = check_choice(layout, name="layout", choices=LAYOUTS)
    if compiling() and is_count(positions):  # a NumPy table of static arguments: a constant
        n = check_count(positions)
        return _count_table(n, dim, base, layout_, result_dtype(dtype, torch_out=False).str)
    pos, torch_in = as_positions(positions)
    out_dtype = result_dtype(dtype, torch_out=torch_in)
    w = _ladder(dim, base)
    if (
        torch_in and pos.device.type == "mps"
    ):  # no float64 on Apple GPUs: exact on the CPU, then move
        cpu = sinusoidal(pos.cpu(), dim, base=base, layout=layout, dtype=out_dtype)
        return cpu.to(pos.device)
    backend = _TorchOps(pos) if torch_in else _NumpyOps()
    return _table(backend, pos, w, layout_, out_dtype)


def shift_matrix(offset: float, dim: int, *, base: float = 10000.0) -> FloatArray:
    """The rotation ``T_k`` that moves a sinusoidal encoding by ``k`` positions.

    ``sinusoidal(p + k) == sinusoidal(p) @ shift_matrix(k, dim).T`` for every ``p``
    (interleaved layout). ``T_k`` is block diagonal with 2x2 blocks
    ``[[cos(k w_i), sin(k w_i)], [-sin(k w_i), cos(k w_i)]]``; it does not depend on ``p``.

    Parameters
    ----------
    offset : float
        The shift ``k``; any finite real number.
    dim : int
        Encoding width, a positive even integer.
    base : float, default 10000.0
        Frequency ladder base.

    Returns
    -------
    numpy.ndarray of shape (dim, dim), float64

    Examples
    --------
    >>> import numpy as np
    >>> import posenc
    >>> T = posenc.shift_matrix(3, 8)
    >>> bool(np.allclose(posenc.sinusoidal(np.array([10.0]), 8) @ T.T,
    ...                  posenc.sinusoidal(np.array([13.0]), 8)))
    True
    """
    k = check_scalar(offset, name="offset")
    w = frequencies(dim, base=base)
    c, s = np.cos(k * w), np.sin(k * w)
    t = np.zeros((len(w), 2, len(w), 2))
    idx = np.arange(len(w))
    t[idx, 0, idx, 0] = c
    t[idx, 0, idx, 1] = s
    t[idx, 1, idx, 0] = -s
    t[idx, 1, idx, 1] = c
    return t.reshape(2 * len(w), 2 * len(w))


# --- the table ------------------------------------------------------------------------------


@traced_constant
def _ladder(dim: int, base: float) -> FloatArray:
    """:func:`frequencies`; under torch.compile a constant of the graph (no traced NumPy)."""
    return frequencies(dim, base=base)


@traced_constant
def _count_table(n: int, dim: int, base: float, layout: str, dtype: str) -> FloatArray:
    """``sinusoidal(n, dim, ...)`` for an int count; under torch.compile a graph constant."""
    return _table(_NumpyOps(), np.arange(n), frequencies(dim, base=base), layout, np.dtype(dtype))


def _sin_cos(pos: Any, w: Any, dtype: Any) -> Any:
    """Interleaved ``[sin(p w_0), cos(p w_0), ...]`` for any float64 ladder ``w`` (RoPE uses this).

    ``pos`` is a NumPy array or a tensor (its library and device are kept); ``dtype`` the output
    dtype of that library. Same exact method as :func:`sinusoidal`.
    """
    torch_in = not isinstance(pos, np.ndarray)
    if torch_in and pos.device.type == "mps":  # no float64 on Apple GPUs
        return _sin_cos(pos.cpu(), w, dtype).to(pos.device)
    ops = _TorchOps(pos) if torch_in else _NumpyOps()
    if not compiling():  # traced, w must already be a float64 array (a graph constant)
        w = np.asarray(w, dtype=np.float64)
    return _table(ops, pos, w, "interleaved", dtype)


def _table(ops: Any, pos: Any, w: Any, layout: Any, out_dtype: Any) -> Any:
    shape = tuple(pos.shape)
    if compiling():
        # the ladder becomes a tensor before anything reads it: no method of a NumPy array is
        # traced (torch 2.11 sends len() of one through set_default_device's function mode and
        # fails; a tensor's shape is a plain attribute there)
        w = ops.asarray(w, pos)
    half = int(w.shape[-1])
    rows = math.prod(shape[:-1]) if shape else 1
    length = shape[-1] if shape else 1
    work_dtype = ops.work_dtype(out_dtype)  # float32 or float64: where the multiply happens
    if ops.functional():
        # under a torch.func transform: no buffer filled in place (batched values cannot be
        # written into it), no values read; the plain float64 formula, built by stacking
        angle = ops.float64(pos).reshape(rows, length)[:, :, None] * ops.asarray(w, pos)
        out = ops.join(ops.sin(angle), ops.cos(angle), layout).to(work_dtype)
        return ops.cast(out, out_dtype).reshape(shape + (2 * half,))
    out = ops.empty((rows, length, 2 * half), work_dtype)
    if rows and length:
        p64 = ops.float64(pos).reshape(rows, length)
        ladder = None if compiling() else ops.progression(p64)  # tracing: branch-free path
        if ladder is None:
            _direct(ops, p64, w, out, layout)
        else:
            starts, step = ladder
            _rotated(ops, starts, step, w, out, layout)
    out = ops.cast(out, out_dtype)
    return out.reshape(shape + (2 * half,))


def _direct(ops: Any, p64: Any, w: Any, out: Any, layout: Any) -> Any:
    """Plain float64 formula, for positions that are not in steps."""
    angle = p64[:, :, None] * ops.asarray(w, p64)  # (rows, length, half), float64
    _store(ops, out, ops.sin(angle), ops.cos(angle), layout)


def _rotated(ops: Any, starts: Any, step: Any, w: Any, out: Any, layout: Any) -> Any:
    """Positions ``starts[r] + j * step``: exact anchors every ``block`` rows, rotations inside."""
    rows, length, dim = out.shape
    half = dim // 2
    block = max(1, math.isqrt(length))
    n_full, rem = divmod(length, block)
    n_anchor = n_full + (1 if rem else 0)
    # anchor positions (rows, n_anchor) and in-block offsets (block,), all float64 on the host
    anchor_pos = starts[:, None] + (np.arange(n_anchor) * block * step)[None, :]
    a = anchor_pos[:, :, None] * w  # (rows, n_anchor, half)
    z = np.sin(a) + 1j * np.cos(a)  # z(t) = sin(t w) + i cos(t w)
    b = (np.arange(block) * step)[:, None] * w  # (block, half)
    u = np.cos(b) - 1j * np.sin(b)  # exp(-i j s w)
    ctype = ops.complex_of(out)
    z, u = ops.to_complex(z, ctype, out), ops.to_complex(u, ctype, out)
    if layout == "interleaved":
        res = ops.as_complex(out)  # (rows, length, half), writes straight into out
    else:
        res = ops.empty_complex((rows, length, half), ctype, out)
    full = n_full * block
    ops.mul(z[:, :n_full, None, :], u[None, None, :, :], ops.split(res, full, n_full, block))
    if rem:
        ops.mul(z[:, n_full, None, :], u[None, :rem, :], res[:, full:])
    if layout == "concat":
        out[..., :half] = ops.real(res)
        out[..., half:] = ops.imag(res)


def _store(ops: Any, out: Any, s: Any, c: Any, layout: Any) -> Any:
    half = out.shape[-1] // 2
    if layout == "interleaved":
        pairs = out.reshape(out.shape[:-1] + (half, 2))
        pairs[..., 0] = s
        pairs[..., 1] = c
    else:
        out[..., :half] = s
        out[..., half:] = c


class _NumpyOps:
    def functional(self) -> bool:
        return False

    def work_dtype(self, dtype: Any) -> Any:
        if dtype in (np.float32, np.float64):
            return dtype
        # float16 is computed in float32; longdouble (and any wider float) in float64
        return np.dtype(np.float32 if np.dtype(dtype).itemsize <= 4 else np.float64)

    def empty(self, shape: Any, dtype: Any) -> Any:
        return np.empty(shape, dtype)

    def float64(self, pos: Any) -> Any:
        return np.asarray(pos, dtype=np.float64)

    def progression(self, p64: Any) -> Any:
        rows, length = p64.shape
        if length < 2:
            return None
        step = p64[0, 1] - p64[0, 0]
        if not np.array_equal(p64, p64[:, :1] + np.arange(length) * step):
            return None
        return p64[:, 0].copy(), float(step)

    def asarray(self, w: Any, like: Any) -> Any:
        return w

    def sin(self, x: Any) -> Any:  # methods, not staticmethod(np.sin): dynamo cannot wrap a ufunc
        return np.sin(x)

    def cos(self, x: Any) -> Any:
        return np.cos(x)

    def complex_of(self, out: Any) -> Any:
        return np.complex64 if out.dtype == np.float32 else np.complex128

    def to_complex(self, z: Any, ctype: Any, like: Any) -> Any:
        return z.astype(ctype)

    def as_complex(self, out: Any) -> Any:
        return out.view(self.complex_of(out))

    def empty_complex(self, shape: Any, ctype: Any, like: Any) -> Any:
        return np.empty(shape, ctype)

    def split(self, res: Any, full: Any, n_full: Any, block: Any) -> Any:
        view = res[:, :full]
        view = view.reshape(view.shape[0], n_full, block, view.shape[-1])
        return view

    def mul(self, a: Any, b: Any, out: Any) -> Any:
        np.multiply(a, b, out=out)

    def real(self, x: Any) -> Any:
        return np.real(x)

    def imag(self, x: Any) -> Any:
        return np.imag(x)

    def cast(self, out: Any, dtype: Any) -> Any:
        if compiling():  # dynamo traces neither ndarray.dtype nor astype(copy=False)
            return out.astype(dtype)
        return out if out.dtype == dtype else out.astype(dtype)


class _TorchOps:
    def __init__(self, like: Any) -> None:
        self.torch = sys.modules["torch"]
        self.device = like.device

    def work_dtype(self, dtype: Any) -> Any:
        t = self.torch
        return dtype if dtype in (t.float32, t.float64) else t.float32

    def functional(self) -> bool:
        return functorch_active()

    def join(self, s: Any, c: Any, layout: Any) -> Any:
        t = self.torch
        if layout == "interleaved":
            return t.stack((s, c), dim=-1).flatten(-2)
        return t.cat((s, c), dim=-1)

    def empty(self, shape: Any, dtype: Any) -> Any:
        return self.torch.empty(shape, dtype=dtype, device=self.device)

    def float64(self, pos: Any) -> Any:
        return pos.to(self.torch.float64)

    def progression(self, p64: Any) -> Any:
        t = self.torch
        rows, length = p64.shape
        if length < 2 or p64.device.type == "meta" or p64.requires_grad:
            return None  # meta has no values; a grad-tracking input keeps the differentiable path
        step = p64[0, 1] - p64[0, 0]
        expected = p64[:, :1] + t.arange(length, dtype=t.float64, device=p64.device) * step
        if not t.equal(p64, expected):
            return None
        return p64[:, 0].cpu().numpy(), float(step)

    def asarray(self, w: Any, like: Any) -> Any:
        return self.torch.as_tensor(w, dtype=self.torch.float64, device=like.device)

    def sin(self, x: Any) -> Any:
        return self.torch.sin(x)

    def cos(self, x: Any) -> Any:
        return self.torch.cos(x)

    def complex_of(self, out: Any) -> Any:
        t = self.torch
        return t.complex64 if out.dtype == t.float32 else t.complex128

    def to_complex(self, z: Any, ctype: Any, like: Any) -> Any:
        return self.torch.from_numpy(z).to(device=like.device, dtype=ctype)

    def as_complex(self, out: Any) -> Any:
        return self.torch.view_as_complex(out.view(out.shape[:-1] + (out.shape[-1] // 2, 2)))

    def empty_complex(self, shape: Any, ctype: Any, like: Any) -> Any:
        return self.torch.empty(shape, dtype=ctype, device=like.device)

    def split(self, res: Any, full: Any, n_full: Any, block: Any) -> Any:
        return res[:, :full].view(res.shape[0], n_full, block, res.shape[-1])

    def mul(self, a: Any, b: Any, out: Any) -> Any:
        self.torch.mul(a, b, out=out)

    def real(self, x: Any) -> Any:
        return x.real

    def imag(self, x: Any) -> Any:
        return x.imag

    def cast(self, out: Any, dtype: Any) -> Any:
        return out if out.dtype == dtype else out.to(dtype)

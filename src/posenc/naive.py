"""Naive absolute position encodings: the first ideas, each with the flaw that retires it.

``integer`` grows without bound, ``normalized`` changes meaning with the sequence length,
``binary`` is discrete and jumps unevenly between neighbours, and ``periodic`` (sines imitating
binary digits) wraps around far positions onto near ones. The site's "naive encodings" page
derives each flaw; ``posenc.sinusoidal`` is the encoding that fixes them.

Every function takes positions like ``posenc.sinusoidal``: only a Python ``int`` ``n`` is a
count, meaning ``0 .. n-1`` (NumPy out); everything array-like (arrays, lists, tensors, and a
NumPy scalar, 0-d array or 0-d tensor, which is one position) gives an array of the same library
on the same device, with one new trailing axis.
"""

from __future__ import annotations

import math
import sys
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from ._array import MAX_SIZE, as_positions, check_dim, result_dtype

if TYPE_CHECKING:
    from ._typing import DTypeLike, FloatArray, PositionsLike, Tensor, TorchDType

__all__ = ["integer", "normalized", "binary", "periodic"]


@overload
def integer(positions: Tensor, *, dtype: TorchDType | None = ...) -> Tensor: ...
@overload
def integer(positions: PositionsLike, *, dtype: DTypeLike = ...) -> FloatArray: ...
def integer(positions: Tensor | PositionsLike, *, dtype: Any = None) -> Tensor | FloatArray:
    """The position itself as a one-number code, ``PE(p) = [p]`` (the simplest absolute code).

    Parameters
    ----------
    positions : int or array of shape (...,)
        Only a Python ``int`` ``n`` is a count: positions ``0 .. n-1``. Everything array-like
        (NumPy array, list, torch tensor, and a NumPy scalar such as ``ids[1]``, a 0-d array or a
        0-d tensor: one position, output shape ``(1,)``) holds the positions themselves, any
        shape, integer (any width, unsigned included) or float.
    dtype : floating dtype, optional
        Output dtype. Default float64 for NumPy (and int) input, ``torch.get_default_dtype()``
        for tensors.

    Returns
    -------
    array of shape positions.shape + (1,)
        NumPy for NumPy/int input; a tensor on the input's device for tensor input.

    Raises
    ------
    TypeError
        positions not real numbers, dtype not floating.
    ValueError
        positions not finite, or a negative int count.

    See Also
    --------
    normalized : the same code squeezed into ``[0, 1]``.

    Notes
    -----
    ``PE(p) = [p]``. Unbounded: at position 4096 the code is 4096 while a word embedding's
    entries are of order 1, and a position never seen in training gives a value never seen.

    Examples
    --------
    >>> import numpy as np
    >>> import posenc
    >>> posenc.integer(4)
    array([[0.],
           [1.],
           [2.],
           [3.]])
    >>> posenc.integer(np.array([[3, 7]])).shape
    (1, 2, 1)
    """
    pos, torch_in = as_positions(positions)
    out_dtype = result_dtype(dtype, torch_out=torch_in)
    if torch_in:
        return pos.to(out_dtype).unsqueeze(-1)
    return np.asarray(pos).astype(out_dtype)[..., None]


@overload
def normalized(positions: Tensor, length: int, *, dtype: TorchDType | None = ...) -> Tensor: ...
@overload
def normalized(positions: PositionsLike, length: int, *, dtype: DTypeLike = ...) -> FloatArray: ...
def normalized(
    positions: Tensor | PositionsLike, length: int, *, dtype: Any = None
) -> Tensor | FloatArray:
    """Positions scaled into ``[0, 1]``: ``PE(p) = [p / (length - 1)]``.

    Parameters
    ----------
    positions : int or array of shape (...,)
        As in ``integer``. Every position must lie in ``[0, length - 1]`` (fractional
        positions in that range are valid).
    length : int
        The sequence length ``n`` whose last position maps to 1; a positive integer.
    dtype : floating dtype, optional
        Output dtype (default as in ``integer``).

    Returns
    -------
    array of shape positions.shape + (1,)
        Values in ``[0, 1]``. With ``length == 1`` the only position, 0, maps to 0.

    Raises
    ------
    TypeError
        ``length`` not an integer, positions not real numbers, dtype not floating.
    ValueError
        ``length`` <= 0, positions not finite or outside ``[0, length - 1]``.

    See Also
    --------
    integer : the unscaled code.

    Notes
    -----
    ``PE(p) = [p / (n - 1)]``. Bounded, but the step between neighbours is ``1 / (n - 1)``:
    the same position, and the same distance, get a different code in a sequence of another
    length.

    Examples
    --------
    >>> import numpy as np
    >>> import posenc
    >>> np.round(posenc.normalized(5, 5)[:, 0], 4)
    array([0.  , 0.25, 0.5 , 0.75, 1.  ])
    >>> np.round(posenc.normalized(np.array([2]), 9)[:, 0], 4)
    array([0.25])
    """
    length = check_dim(length, name="length", even=False, maximum=MAX_SIZE)
    pos, torch_in = as_positions(positions)
    out_dtype = result_dtype(dtype, torch_out=torch_in)
    if _has_values(pos, torch_in) and _size(pos):
        lo, hi = _min_max(pos, torch_in)
        if lo < 0 or hi > length - 1:
            bad = lo if lo < 0 else hi
            raise ValueError(
                f"positions must lie in [0, length - 1] = [0, {length - 1}] for length={length}, "
                f"got position {_fmt(bad)}"
            )
    p64 = _float64(pos, torch_in)
    den: Any = float(length - 1)
    if torch_in:
        # torch on CUDA divides by a CPU scalar as a product with its reciprocal, one rounding
        # more (5 / 7 gave 0.7142857142857142, NumPy's quotient is ...43): a divisor on p64's own
        # device is divided by, one rounding as in NumPy, on every device
        den = sys.modules["torch"].tensor(den, dtype=p64.dtype, device=p64.device)
    scaled = p64 / den if length > 1 else p64 * 0.0
    return _cast(scaled, out_dtype, torch_in)[..., None]


@overload
def binary(positions: Tensor, bits: int, *, dtype: TorchDType | None = ...) -> Tensor: ...
@overload
def binary(positions: PositionsLike, bits: int, *, dtype: DTypeLike = ...) -> FloatArray: ...
def binary(
    positions: Tensor | PositionsLike, bits: int, *, dtype: Any = None
) -> Tensor | FloatArray:
    """Positions written in base 2, one digit per dimension, most significant digit first.

    Parameters
    ----------
    positions : int or array of shape (...,)
        As in ``integer``, but every position must be a whole number in ``[0, 2**bits)``
        (integer dtype, or floats holding whole numbers).
    bits : int
        Number of binary digits, a positive integer.
    dtype : floating dtype, optional
        Output dtype (default as in ``integer``); the digits are 0.0 and 1.0.

    Returns
    -------
    array of shape positions.shape + (bits,)
        Entry ``j`` is the digit of weight ``2**(bits - 1 - j)``: position 1 with 4 bits is
        ``[0, 0, 0, 1]``.

    Raises
    ------
    TypeError
        ``bits`` not an integer, positions not real numbers, dtype not floating.
    ValueError
        ``bits`` <= 0, positions not finite, not whole, negative or ``>= 2**bits``.

    See Also
    --------
    periodic : smooth sines that imitate these digits.

    Notes
    -----
    ``PE(p)_j = floor(p / 2**(bits - 1 - j)) mod 2``. The last digit flips at every step, the
    first only once in ``2**bits`` positions. Bounded, but discrete, and the distance between
    neighbours is uneven: 3 -> 4 flips three digits, 4 -> 5 flips one.

    Examples
    --------
    >>> import numpy as np
    >>> import posenc
    >>> posenc.binary(np.array([1, 2, 3, 4]), 4).astype(int)
    array([[0, 0, 0, 1],
           [0, 0, 1, 0],
           [0, 0, 1, 1],
           [0, 1, 0, 0]])
    >>> posenc.binary(16, 4).shape
    (16, 4)
    """
    bits = check_dim(bits, name="bits", even=False, maximum=MAX_SIZE)
    pos, torch_in = as_positions(positions)
    out_dtype = result_dtype(dtype, torch_out=torch_in)
    integral = _is_integer_dtype(pos, torch_in)
    if _has_values(pos, torch_in) and _size(pos):
        if not integral:
            p64 = _float64(pos, torch_in)
            frac = p64 - (p64.floor() if torch_in else np.floor(p64))
            if bool((frac != 0).any()):
                bad = (p64[frac != 0].reshape(-1)[0]).item()
                raise ValueError(
                    f"positions must be whole numbers for a binary code, got position {_fmt(bad)}"
                )
        lo, hi = _min_max(pos, torch_in)
        # no real position reaches 2**1100 (float64 ends near 2**1024): never build 2**bits past it
        if lo < 0 or hi >= 2 ** min(bits, 1100):
            bad = lo if lo < 0 else hi
            bound = f" = [0, {2**bits})" if bits <= 64 else ""
            raise ValueError(
                f"positions must be whole numbers in [0, 2**bits){bound} for bits={bits}, "
                f"got position {_fmt(bad)}"
            )
    digits = _binary_digits(pos, bits, torch_in, integral)
    return _cast(digits, out_dtype, torch_in)


@overload
def periodic(positions: Tensor, dim: int, *, dtype: TorchDType | None = ...) -> Tensor: ...
@overload
def periodic(positions: PositionsLike, dim: int, *, dtype: DTypeLike = ...) -> FloatArray: ...
def periodic(
    positions: Tensor | PositionsLike, dim: int, *, dtype: Any = None
) -> Tensor | FloatArray:
    """Sines that imitate binary digits: ``PE(p)_i = sin(p w_i)``, ``w_i = (pi/2) / 2**i``.

    Dimension ``i`` first reaches 1 at ``p = 2**i``, where the binary digit of weight ``2**i``
    first turns on; its period is ``2**(i + 2)``. This is the bridge from ``binary`` to
    ``posenc.sinusoidal``, listed with the least significant (fastest) dimension first.

    Parameters
    ----------
    positions : int or array of shape (...,)
        As in ``integer``; fractional and negative positions are valid.
    dim : int
        Number of dimensions, a positive integer (odd is fine).
    dtype : floating dtype, optional
        Output dtype (default as in ``integer``).

    Returns
    -------
    array of shape positions.shape + (dim,)

    Raises
    ------
    TypeError
        ``dim`` not an integer, positions not real numbers, dtype not floating.
    ValueError
        ``dim`` <= 0, positions not finite, or a negative int count.

    See Also
    --------
    binary : the discrete digits this imitates.
    posenc.sinusoidal : adds a cosine to every sine so that a shift is a rotation.

    Notes
    -----
    ``PE(p)_i = sin(p (pi/2) / 2**i)``, angles formed in float64. Bounded and smooth, but
    dimension 0 repeats every 4 positions and all of them repeat after ``2**(dim + 1)``
    positions: far positions collide with near ones.

    Examples
    --------
    >>> import numpy as np
    >>> import posenc
    >>> posenc.periodic(16, 5).shape
    (16, 5)
    >>> np.round(np.diag(posenc.periodic(np.array([1, 2, 4, 8]), 4)), 4)  # dim i at p = 2**i
    array([1., 1., 1., 1.])
    >>> np.round(posenc.periodic(np.array([1, 5]), 2), 4)  # 4 steps apart: dim 0 repeats
    array([[ 1.    ,  0.7071],
           [ 1.    , -0.7071]])
    """
    dim = check_dim(dim, even=False, maximum=MAX_SIZE)
    pos, torch_in = as_positions(positions)
    out_dtype = result_dtype(dtype, torch_out=torch_in)
    w = _frequencies(dim)
    p64 = _float64(pos, torch_in)
    if torch_in:
        torch = sys.modules["torch"]
        angle = p64[..., None] * torch.as_tensor(w, dtype=torch.float64, device=pos.device)
        return torch.sin(angle).to(out_dtype)
    return np.sin(p64[..., None] * w).astype(out_dtype)


def _frequencies(dim: Any) -> Any:
    """The ``w_i = (pi/2) / 2**i`` of ``periodic``, float64, shape ``(dim,)``."""
    return np.ldexp(math.pi / 2, -np.arange(dim))


# --- helpers ------------------------------------------------------------------------------------


def _has_values(pos: Any, torch_in: bool) -> bool:
    """False for meta tensors, which carry shapes but no numbers."""
    return not (torch_in and pos.device.type == "meta")


def _size(pos: Any) -> int:
    return int(math.prod(tuple(pos.shape)))


def _min_max(pos: Any, torch_in: Any) -> Any:
    """Smallest and largest position as Python numbers (torch has no min/max for uint16..64)."""
    if torch_in and _torch_uint(pos):
        torch = sys.modules["torch"]
        if pos.dtype != torch.uint64:
            p = pos.to(torch.int64)  # uint16/uint32 fit exactly
            return p.min().item(), p.max().item()
        bits = pos.view(torch.int64)  # same bits; values >= 2**63 read as negative
        high = bits < 0
        values = [int(x) % 2**64 for x in (bits[~high].min(), bits[~high].max()) if (~high).any()]
        if bool(high.any()):
            values += [int(bits[high].min()) % 2**64, int(bits[high].max()) % 2**64]
        return min(values), max(values)
    return pos.min().item(), pos.max().item()


def _torch_uint(pos: Any) -> bool:
    torch = sys.modules["torch"]
    return pos.dtype in (torch.uint16, torch.uint32, torch.uint64)


def _fmt(value: Any) -> str:
    return str(int(value)) if float(value).is_integer() and abs(value) < 2**63 else repr(value)


def _float64(pos: Any, torch_in: Any) -> Any:
    if torch_in:
        return pos.to(sys.modules["torch"].float64)
    return np.asarray(pos, dtype=np.float64)


def _cast(x: Any, dtype: Any, torch_in: Any) -> Any:
    if torch_in:
        return x.to(dtype)
    return x.astype(dtype, copy=False)


def _is_integer_dtype(pos: Any, torch_in: bool) -> bool:
    if torch_in:
        return not pos.is_floating_point()
    return pos.dtype.kind in "iu"


def _binary_digits(pos: Any, bits: Any, torch_in: Any, integral: Any) -> Any:
    """Digits, most significant first, as 0/1 in float64 (values already validated)."""
    shifts = np.arange(bits - 1, -1, -1)  # weight exponent of each output column
    if torch_in:
        torch = sys.modules["torch"]
        s = torch.as_tensor(shifts, device=pos.device)
        if integral:
            # uint64 is read through an int64 view of the same bits (torch has no uint64
            # shifts); bit s of the view is bit s of the value, and columns s >= 64 are 0
            as64 = pos.view(torch.int64) if pos.dtype == torch.uint64 else pos.to(torch.int64)
            d = (as64[..., None] >> s.clamp(max=63)) & 1
            d = torch.where(s < 64, d, torch.zeros_like(d))
            return d.to(torch.float64)
        p64 = pos.to(torch.float64)[..., None]
        # dividing by a power of two is exact (2**s overflows to inf past 1023, giving 0);
        # floor(p / 2**s) mod 2 is the digit
        return torch.remainder(torch.floor(p64 / torch.exp2(s.to(torch.float64))), 2.0)
    if integral:
        p = np.asarray(pos).astype(np.uint64)[..., None]
        d = (p >> np.minimum(shifts, 63).astype(np.uint64)) & np.uint64(1)
        d = np.where(shifts < 64, d, np.uint64(0))
        return d.astype(np.float64)
    p64 = np.asarray(pos, dtype=np.float64)[..., None]
    return np.remainder(np.floor(np.ldexp(p64, -shifts)), 2.0)

"""Research-frontier relative position schemes: Kerple, Sandwich, FIRE, ReRoPE.

Experimental. None of these is used by the mainstream model families that Hugging Face
transformers ships; they are reference implementations of the papers' formulas, checked against
loop-by-loop oracles (tests/test_frontier.py), not against framework code. One module for four
small schemes of a distance because each is a few lines of arithmetic around a shared argument
check; a module per scheme would be mostly boilerplate. CoPE, the fifth scheme of the research
frontier page, reads queries and keys rather than distances: it lives in :mod:`posenc.cope`.
"""

from __future__ import annotations

import math
import sys
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from ._array import (
    as_positions,
    check_choice,
    check_dim,
    check_scalar,
    is_count,
    result_dtype,
)
from ._typing import ArrayLike, DTypeLike, FloatArray

if TYPE_CHECKING:
    from ._typing import Tensor, TorchDType

__all__ = [
    "kerple_bias",
    "sandwich_bias",
    "fire_relative",
    "rerope_distance",
]


def _distance(distance: Any, name: str = "distance") -> tuple[Any, bool]:
    """Relative distances: a Python int is one distance (never a count), arrays any shape."""
    if is_count(distance):
        if abs(distance) > 2**53:
            raise ValueError(f"{name} must lie within [-2**53, 2**53], got {distance}")
        return np.asarray(distance), False
    return as_positions(distance, name=name)


def _positive(value: Any, name: str) -> float:
    v = check_scalar(value, name=name)
    if v <= 0:
        raise ValueError(f"{name} must be a finite real number > 0, got {v}")
    return v


def _f64(d: Any, torch_in: bool) -> Any:
    if torch_in:
        torch = sys.modules["torch"]
        return d.to(torch.float64)
    return np.asarray(d, dtype=np.float64)


def _out(x: Any, torch_in: bool, dtype: Any) -> Any:
    out_dtype = result_dtype(dtype, torch_out=torch_in)
    return x.to(out_dtype) if torch_in else x.astype(out_dtype, copy=False)


@overload
def kerple_bias(
    distance: Tensor,
    *,
    r1: float,
    r2: float,
    kernel: str = ...,
    dtype: TorchDType | None = ...,
) -> Tensor: ...
@overload
def kerple_bias(
    distance: ArrayLike, *, r1: float, r2: float, kernel: str = ..., dtype: DTypeLike = ...
) -> FloatArray: ...
def kerple_bias(
    distance: Tensor | ArrayLike,
    *,
    r1: float,
    r2: float,
    kernel: str = "log",
    dtype: Any = None,
) -> Tensor | FloatArray:
    """Kerple attention bias of each relative distance (Chi et al., 2022). Experimental.

    Parameters
    ----------
    distance : int or array of shape (...,)
        Query position minus key position, ``i - j`` (NumPy, list or tensor; integer or float).
        A Python int is one distance (0-d result). Only ``|i - j|`` matters.
    r1, r2 : float
        The kernel's two parameters, both > 0 (learned per head in the paper). The power kernel
        needs ``0 < r2 <= 2``.
    kernel : {"log", "power"}, default "log"
        ``"log"``: ``-r1 * log(1 + r2 * |i - j|)``; ``"power"``: ``-r1 * |i - j| ** r2``.
    dtype : floating dtype, optional
        Output dtype; default float64 (NumPy) or ``torch.get_default_dtype()`` (tensor).

    Returns
    -------
    array of ``distance``'s shape
        Add it to the attention scores. 0 at distance 0, decreasing with ``|i - j|``. Computed
        in float64 with no intermediate overflow or underflow (where ``r2 * |i - j|`` or
        ``|i - j| ** r2`` alone leaves float64's normal range, through ``log r2 + log |i - j|``,
        ``r1 r2 |i - j|`` from the mantissas and exponents, or ``(r1 t) t`` with
        ``t = |i - j| ** (r2 / 2)``); a bias below float64's range is ``-inf``, as float64
        rounds it (its softmax weight is 0 either way).

    Raises
    ------
    TypeError
        ``distance`` not real, ``r1``/``r2`` not real numbers, ``dtype`` not floating.
    ValueError
        ``distance`` not finite, ``r1`` or ``r2`` <= 0, ``r2 > 2`` for the power kernel,
        ``kernel`` unknown.

    Notes
    -----
    The paper writes the conditionally positive definite kernels ``-r1 * log(1 + r2 |m - n|)``
    and ``-r1 |m - n| ** r2``; a per-row constant that makes them positive definite is
    cancelled by the softmax and left out.

    References
    ----------
    Chi, Fan, Ramadge and Rudnicky, "KERPLE: Kernelized Relative Positional Embedding for Length
    Extrapolation", arXiv:2205.09921 (v2).

    Examples
    --------
    >>> import numpy as np
    >>> import posenc
    >>> np.round(posenc.kerple_bias(np.arange(4), r1=1.0, r2=1.0), 4)
    array([ 0.    , -0.6931, -1.0986, -1.3863])
    >>> np.round(posenc.kerple_bias(np.arange(4), r1=0.5, r2=2, kernel="power"), 4)
    array([ 0. , -0.5, -2. , -4.5])
    """
    d, torch_in = _distance(distance)
    a = _positive(r1, "r1")
    b = _positive(r2, "r2")
    kind = check_choice(kernel, name="kernel", choices=("log", "power"))
    if kind == "power" and b > 2:
        raise ValueError(f"r2 must be in (0, 2] for kernel='power', got {b}")
    result_dtype(dtype, torch_out=torch_in)  # refuse a bad dtype before computing
    r = abs(_f64(d, torch_in))
    if kind == "log":
        bias = -_mul_log1p_mul(a, b, r, torch_in)
    else:
        bias = -_mul_pow(a, r, b, torch_in)
    return _out(0.0 + bias, torch_in, dtype)


_TINY = 2.0**-60  # below it log1p(y) rounds to y in float64 (the next term, y / 2, is < 2**-61 y)


def _mul_log1p_mul(a: float, b: float, r: Any, torch_in: bool) -> Any:
    """``a * log1p(b * r)`` for ``r >= 0``: where ``b * r < 2**-60`` it is ``a * b * r``, formed
    from the three mantissas and exponents, so that neither ``b * r`` (a subnormal keeps few
    bits) nor ``a * b`` passes float64's range on the way to a result inside it."""
    ma, ea = math.frexp(a)
    mb, eb = math.frexp(b)
    if torch_in:
        torch = sys.modules["torch"]
        m, e = torch.frexp(r)
        # 2**e as two factors, each within float64's range (e clamped where the product is 0
        # or inf whatever the mantissa): one rounding, at the end
        e = (e.to(torch.float64) + (ea + eb)).clamp(-2200.0, 2046.0)
        low = torch.floor(e / 2)
        product = (ma * mb * m) * torch.exp2(e - low) * torch.exp2(low)
        with_log = a * _log1p_mul(b, r, r / 2, True)
        return torch.where(b * r < _TINY, product, with_log)
    m, e = np.frexp(r)
    e = e.astype(np.int64) + (ea + eb)
    with np.errstate(over="ignore", under="ignore"):  # each branch where it is chosen
        product = np.ldexp(ma * mb * m, np.clip(e, -2200, 2200))
        small = b * r < _TINY
    out: FloatArray = np.where(small, product, a * _log1p_mul(b, r, r / 2, False))
    return out


def _log1p_mul(c: float, x: Any, half: Any, torch_in: bool) -> Any:
    """``log1p(c * x)`` in float64 for ``x >= 0``, given also ``half = x / 2`` (finite where ``x``
    itself overflowed, as ``i - j`` can): ``c * x`` is formed as ``(c * half) * 2`` there, and
    where it overflows the result is ``log(c) + log(half) + log(2)`` (``x >= 1`` then, as ``c`` is
    finite), exact to float64's precision."""
    if torch_in:
        torch = sys.modules["torch"]
        y = torch.where(torch.isinf(x), (c * half) * 2.0, c * x)
        far = math.log(c) + math.log(2.0) + torch.log(half.clamp(min=0.5))
        return torch.where(torch.isinf(y), far, torch.log1p(y))
    with np.errstate(over="ignore"):  # c * x past float64: the other branch
        y = np.where(np.isinf(x), (c * half) * 2.0, c * x)
    far = math.log(c) + math.log(2.0) + np.log(np.maximum(half, 0.5))
    out: FloatArray = np.where(np.isinf(y), far, np.log1p(y))
    return out


def _mul_pow(a: float, r: Any, p: float, torch_in: bool) -> Any:
    """``a * r ** p`` for ``r >= 0``, ``0 < p <= 2``, also where ``r ** p`` alone overflows or
    falls below float64's normal range: there it is ``(a * t) * t`` with ``t = r ** (p / 2)``
    (``<= 1.4e154``), which overflows only when the product does."""
    if torch_in:
        torch = sys.modules["torch"]
        rp = r**p
        t = r ** (p / 2)
        far = torch.isinf(rp) | (rp < _NORMAL)
        return torch.where(far, (a * t) * t, a * rp)
    with np.errstate(over="ignore", under="ignore"):  # r ** p past float64: the other branch
        rp = r**p
        t = r ** (p / 2)
        far = np.isinf(rp) | (rp < _NORMAL)
        out: FloatArray = np.where(far, (a * t) * t, a * rp)
    return out


_NORMAL = 2.0**-1022  # float64's smallest normal number


@overload
def sandwich_bias(
    distance: Tensor, dim: int, *, base: float = ..., dtype: TorchDType | None = ...
) -> Tensor: ...
@overload
def sandwich_bias(
    distance: ArrayLike, dim: int, *, base: float = ..., dtype: DTypeLike = ...
) -> FloatArray: ...
def sandwich_bias(
    distance: Tensor | ArrayLike, dim: int, *, base: float = 10000.0, dtype: Any = None
) -> Tensor | FloatArray:
    """Sandwich bias: the dot product of two sinusoidal codes (Chi et al., 2023). Experimental.

    Parameters
    ----------
    distance : int or array of shape (...,)
        Query position minus key position, ``i - j`` (a Python int is one distance).
    dim : int
        Width of the sinusoidal codes, a positive even integer.
    base : float, default 10000.0
        Frequency base of the ladder ``w_k = base ** (-2k / dim)``.
    dtype : floating dtype, optional
        Output dtype; default float64 (NumPy) or ``torch.get_default_dtype()`` (tensor).

    Returns
    -------
    array of ``distance``'s shape
        ``sum_k cos((i - j) * w_k)``, ``k = 0 .. dim/2 - 1``: ``dim / 2`` at distance 0.

    Raises
    ------
    TypeError
        ``distance`` not real, ``dim`` not an integer, ``base`` not real, ``dtype`` not floating.
    ValueError
        ``distance`` not finite, ``dim`` not positive and even, ``base`` <= 0 or == 1.

    Notes
    -----
    ``p_i . p_j = sum_k sin(i w_k) sin(j w_k) + cos(i w_k) cos(j w_k) = sum_k cos((i - j) w_k)``
    for the sinusoidal code ``p`` of :func:`posenc.sinusoidal`. This is the core of Sandwich;
    the paper's further per-head scaling is not reproduced here (see the site's page).

    References
    ----------
    Chi, Fan, Rudnicky and Ramadge, "Dissecting Transformer Length Extrapolation via the Lens of
    Receptive Field Analysis", arXiv:2212.10356 (v2).

    Examples
    --------
    >>> import numpy as np
    >>> import posenc
    >>> np.round(posenc.sandwich_bias(np.array([0, 1, 10]), 4), 4)
    array([2.    , 1.5403, 0.1559])
    """
    d, torch_in = _distance(distance)
    n = check_dim(dim, name="dim", maximum=2**40)
    from .sinusoidal import frequencies

    w = frequencies(n, base=check_scalar(base, name="base"))  # checks base > 0, != 1
    result_dtype(dtype, torch_out=torch_in)
    d64 = _f64(d, torch_in)
    if torch_in:
        torch = sys.modules["torch"]
        wt = torch.as_tensor(w, dtype=torch.float64, device=d.device)
        bias = torch.cos(d64[..., None] * wt).sum(-1)
    else:
        bias = np.cos(d64[..., None] * w).sum(-1)
    return _out(bias, torch_in, dtype)


@overload
def fire_relative(
    q_positions: Tensor,
    k_positions: Tensor,
    *,
    c: float,
    threshold: float,
    dtype: TorchDType | None = ...,
) -> Tensor: ...
@overload
def fire_relative(
    q_positions: ArrayLike,
    k_positions: ArrayLike,
    *,
    c: float,
    threshold: float,
    dtype: DTypeLike = ...,
) -> FloatArray: ...
def fire_relative(
    q_positions: Tensor | ArrayLike,
    k_positions: Tensor | ArrayLike,
    *,
    c: float,
    threshold: float,
    dtype: Any = None,
) -> Tensor | FloatArray:
    """FIRE's normalised relative position, the input of its MLP (Li et al., 2023). Experimental.

    Parameters
    ----------
    q_positions : int or array of shape (..., q)
        Query positions ``i`` (an int ``n`` means ``0 .. n-1``; a 0-d array is one position, an
        axis of length 1).
    k_positions : int or array of shape (..., k)
        Key positions ``j``. One tensor among the two gives a tensor on its device.
    c : float
        The slope inside ``psi(x) = log(c x + 1)``, > 0 (learned in the paper).
    threshold : float
        ``L`` in ``psi(max(L, i))``, > 0 (learned in the paper): queries before ``L`` share
        one normaliser, so short contexts are not stretched to [0, 1].
    dtype : floating dtype, optional
        Output dtype; default float64 (NumPy) or ``torch.get_default_dtype()`` (tensor).

    Returns
    -------
    array of shape (..., q, k)
        ``psi(i - j) / psi(max(L, i))`` for ``j <= i``, in ``[0, 1]`` when ``i >= L``; 0 for
        future keys ``j > i``, which the causal mask must hide (FIRE is a decoder scheme).
        The bias is ``f(this)`` for a small learned MLP ``f`` per head. Computed in float64
        for every finite ``c``: where ``c x`` passes float64, ``psi(x) = log c + log x``; where
        ``c * max(L, i) < 2**-60``, both ``psi`` equal ``c x`` to float64's precision and the
        ratio is ``(i - j) / max(L, i)``.

    Raises
    ------
    TypeError
        Positions not real, ``c``/``threshold`` not real, ``dtype`` not floating.
    ValueError
        Positions not finite or a negative count, ``c`` or ``threshold`` <= 0.

    References
    ----------
    Li et al., "Functional Interpolation for Relative Positions Improves Long Context
    Transformers", arXiv:2310.04418 (v2).

    Examples
    --------
    >>> import numpy as np
    >>> import posenc
    >>> np.round(posenc.fire_relative(4, 4, c=1.0, threshold=2.0), 3)
    array([[0.   , 0.   , 0.   , 0.   ],
           [0.631, 0.   , 0.   , 0.   ],
           [1.   , 0.631, 0.   , 0.   ],
           [1.   , 0.792, 0.5  , 0.   ]])
    """
    qp, q_torch = as_positions(q_positions, name="q_positions")
    kp, k_torch = as_positions(k_positions, name="k_positions")
    if q_torch != k_torch:  # one tensor: the other joins it on its device
        torch = sys.modules["torch"]
        device = (qp if q_torch else kp).device
        qp, kp = (torch.as_tensor(x, device=device) for x in (qp, kp))
        q_torch = True
    qp, kp = (x.reshape(1) if x.ndim == 0 else x for x in (qp, kp))  # one position: axis of 1
    cc = _positive(c, "c")
    big_l = _positive(threshold, "threshold")
    result_dtype(dtype, torch_out=q_torch)
    i = _f64(qp, q_torch)[..., :, None]
    j = _f64(kp, q_torch)[..., None, :]
    # psi(x) = log1p(c x) where c x overflows: log(c) + log(x) (x = i - j is read as 2 * its
    # half, which a huge i and negative j cannot overflow); where c * max(L, i) < 2**-60, both
    # psi are c x to float64's precision and the ratio is x / max(L, i) (no 0 / 0, no subnormal)
    if q_torch:
        torch = sys.modules["torch"]
        x = (i - j).clamp(min=0.0)
        big = i.clamp(min=big_l)
        num = _log1p_mul(cc, x, (i / 2 - j / 2).clamp(min=0.0), True)
        den = _log1p_mul(cc, big, big / 2, True)
        tiny = (cc * big < 2.0**-60) & (x <= big)
        ratio = torch.where(tiny, x / big, num / torch.where(tiny, 1.0, den))
    else:
        with np.errstate(over="ignore"):  # i - j past float64: read as 2 * its half
            x = np.maximum(i - j, 0.0)
        big = np.maximum(i, big_l)
        num = _log1p_mul(cc, x, np.maximum(i / 2 - j / 2, 0.0), False)
        den = _log1p_mul(cc, big, big / 2, False)
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):  # other branches
            tiny = (cc * big < 2.0**-60) & (x <= big)
            ratio = np.where(tiny, x / big, num / den)
    return _out(ratio, q_torch, dtype)


@overload
def rerope_distance(
    distance: Tensor, *, window: float, slope: float = ..., dtype: TorchDType | None = ...
) -> Tensor: ...
@overload
def rerope_distance(
    distance: ArrayLike, *, window: float, slope: float = ..., dtype: DTypeLike = ...
) -> FloatArray: ...
def rerope_distance(
    distance: Tensor | ArrayLike, *, window: float, slope: float = 0.0, dtype: Any = None
) -> Tensor | FloatArray:
    """The relative position ReRoPE / Leaky ReRoPE rotates by (Su, 2023). Experimental.

    Parameters
    ----------
    distance : int or array of shape (...,)
        Query position minus key position, ``i - j`` (a Python int is one distance).
    window : float
        ``w`` > 0: distances below it are kept as they are.
    slope : float, default 0.0
        ``1 / k`` in ``[0, 1]``: the step per token beyond the window. 0 is ReRoPE (every
        distance from ``w`` on is rotated by ``w``), ``0 < slope < 1`` Leaky ReRoPE, 1 plain
        RoPE.
    dtype : floating dtype, optional
        Output dtype; default float64 (NumPy) or ``torch.get_default_dtype()`` (tensor).

    Returns
    -------
    array of ``distance``'s shape
        ``d`` where ``d < w``, else ``w + slope * (d - w)``. The attention score of query
        ``i`` and key ``j`` is ``q_i . R(this) k_j`` with ``R`` RoPE's rotation (see the page:
        it needs two attention passes, one with rotated and one with fixed positions).

    Raises
    ------
    TypeError
        ``distance`` not real, ``window``/``slope`` not real, ``dtype`` not floating.
    ValueError
        ``distance`` not finite, ``window`` <= 0, ``slope`` outside ``[0, 1]``.

    References
    ----------
    Su, "Transformer升级之路：12、无限外推的ReRoPE？" (ReRoPE), 2023-08,
    https://kexue.fm/archives/9708.

    Examples
    --------
    >>> import numpy as np
    >>> import posenc
    >>> posenc.rerope_distance(np.arange(7), window=3)
    array([0., 1., 2., 3., 3., 3., 3.])
    >>> posenc.rerope_distance(np.arange(7), window=3, slope=0.5)
    array([0. , 1. , 2. , 3. , 3.5, 4. , 4.5])
    """
    d, torch_in = _distance(distance)
    w = _positive(window, "window")
    sl = check_scalar(slope, name="slope")
    if not 0.0 <= sl <= 1.0:
        raise ValueError(f"slope must be in [0, 1] (1 / k of Leaky ReRoPE), got {sl}")
    result_dtype(dtype, torch_out=torch_in)
    d64 = _f64(d, torch_in)
    if torch_in:
        torch = sys.modules["torch"]
        out = torch.where(d64 < w, d64, w + sl * (d64 - w))
    else:
        out = np.where(d64 < w, d64, w + sl * (d64 - w))
    return _out(out, torch_in, dtype)

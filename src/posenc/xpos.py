"""xPos: rotary position embedding with an exponential decay (Sun et al., 2022).

xPos rotates queries and keys as RoPE does, and multiplies pair ``i`` of the query at position
``n`` by ``zeta_i ** (n / B)`` and of the key by ``zeta_i ** (-n / B)``. In a query-key product
the two scales meet as ``zeta_i ** ((m - n) / B)``: a decay with the distance that differs per
frequency, on top of RoPE's relative rotation. ``B`` is ``scale_base`` (512 in the paper, in
torchscale and in rotary-embedding-torch), ``zeta_i = (2i/d + gamma) / (1 + gamma)``, ``gamma =
0.4``.

The scales are computed in float64 and multiplied into RoPE's cos and sin before the rotation,
so the result is exact to the working dtype, as :func:`posenc.apply_rope` is. Any centre ``c``
(scales ``zeta ** ((n - c) / B)``) gives the same scores; the centre only keeps the scales in
range (``zeta_0 ** (-n / B)`` passes float16's maximum at ``|n - c|`` of about 4500 and
float32's at about 36000). A scale outside the normal range of the working dtype or of q's and
k's own dtype (float16: ``[6.1e-5, 65504]``, ``|n - c|`` up to about 3966 with the defaults), or
a scaled q or k that overflows its dtype, is refused by name instead of returning inf or 0.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from ._array import (
    MAX_SIZE,
    _describe,
    as_positions,
    check_base,
    check_choice,
    check_dim,
    check_scalar,
    compiling,
    is_torch,
    result_dtype,
    traced_constant,
)
from ._typing import ArrayLike, FloatArray, Pairing, PositionsLike
from .rope import PAIRINGS, _check_x, _cos_sin, _fit_positions, _rotate, _work_dtype
from .rope_scaling import rope_frequencies

if TYPE_CHECKING:
    from ._typing import Tensor, TorchDType

__all__ = ["apply_xpos", "xpos_scale"]


@overload
def xpos_scale(
    positions: Tensor,
    dim: int,
    *,
    scale_base: float = ...,
    gamma: float = ...,
    center: float = ...,
    dtype: TorchDType | None = ...,
) -> Tensor: ...
@overload
def xpos_scale(
    positions: PositionsLike,
    dim: int,
    *,
    scale_base: float = ...,
    gamma: float = ...,
    center: float = ...,
    dtype: Any = ...,
) -> FloatArray: ...
def xpos_scale(
    positions: Tensor | PositionsLike,
    dim: int,
    *,
    scale_base: float = 512.0,
    gamma: float = 0.4,
    center: float = 0.0,
    dtype: Any = None,
) -> Tensor | FloatArray:
    """The query scales of xPos, ``zeta_i ** ((n - center) / scale_base)``. Experimental.

    Sun et al., "A Length-Extrapolatable Transformer", arXiv:2212.10554; the same numbers as
    rotary-embedding-torch 0.9.1 ``RotaryEmbedding(use_xpos=True).get_scale`` (which repeats
    each pair's scale twice and centres at ``seq_len // 2``). The keys take the inverse.

    Parameters
    ----------
    positions : int or array of shape (...,)
        A Python ``int`` ``n`` is a count (``0 .. n-1``); anything array-like (NumPy or torch,
        integer or float) holds the positions.
    dim : int
        The head dim (even); one scale per pair, ``dim // 2`` of them.
    scale_base : float, default 512.0
        ``B``: the positions are divided by it (rotary-embedding-torch ``xpos_scale_base``).
    gamma : float, default 0.4
        The paper's ``gamma`` in ``zeta_i = (2i/dim + gamma) / (1 + gamma)``, > 0.
    center : float, default 0.0
        ``c``: the position whose scale is 1. The scores do not depend on it.
    dtype : dtype, optional
        Output dtype; float64 for NumPy, torch's default dtype for a tensor.

    Returns
    -------
    array or tensor of shape positions.shape + (dim // 2,)
        In the positions' library and on their device.

    Raises
    ------
    TypeError, ValueError
        Bad positions, ``dim`` not a positive even integer, ``scale_base`` or ``gamma`` not a
        finite number > 0, ``center`` not finite, ``dtype`` not floating.

    Examples
    --------
    >>> import numpy as np
    >>> import posenc
    >>> np.round(posenc.xpos_scale(np.array([0, 512, -512]), 4), 4)
    array([[1.    , 1.    ],
           [0.2857, 0.6429],
           [3.5   , 1.5556]])
    """
    pos, torch_out = as_positions(positions)
    dim = check_dim(dim, maximum=MAX_SIZE)
    inv_b = 1.0 / _positive(scale_base, "scale_base")
    g = _positive(gamma, "gamma")
    c = check_scalar(center, name="center")
    out_dtype = result_dtype(dtype, torch_out=torch_out)
    return (
        _scale(pos, dim, inv_b, g, c).to(out_dtype)
        if torch_out
        else (_scale(pos, dim, inv_b, g, c).astype(out_dtype, copy=False))
    )


@overload
def apply_xpos(
    q: Tensor,
    k: Tensor,
    positions: Tensor | PositionsLike,
    *,
    base: float = ...,
    scale_base: float = ...,
    gamma: float = ...,
    center: float | None = ...,
    pairing: Pairing = ...,
) -> tuple[Tensor, Tensor]: ...
@overload
def apply_xpos(
    q: ArrayLike,
    k: ArrayLike,
    positions: PositionsLike,
    *,
    base: float = ...,
    scale_base: float = ...,
    gamma: float = ...,
    center: float | None = ...,
    pairing: Pairing = ...,
) -> tuple[FloatArray, FloatArray]: ...
def apply_xpos(
    q: Tensor | ArrayLike,
    k: Tensor | ArrayLike,
    positions: Tensor | PositionsLike,
    *,
    base: float = 10000.0,
    scale_base: float = 512.0,
    gamma: float = 0.4,
    center: float | None = None,
    pairing: Pairing = "interleaved",
) -> tuple[Tensor, Tensor] | tuple[FloatArray, FloatArray]:
    """Rotate and scale queries and keys: xPos (Sun et al., 2022). Experimental.

    RoPE (:func:`posenc.apply_rope`) with the query's pair ``i`` at position ``n`` multiplied
    by ``zeta_i ** ((n - c) / scale_base)`` and the key's by its inverse, so that
    ``q'_m . k'_n`` depends on the positions only through ``m - n``. Reproduces
    rotary-embedding-torch 0.9.1 ``RotaryEmbedding(dim, use_xpos=True)
    .rotate_queries_and_keys`` (interleaved pairs, centre ``seq // 2``); the paper is
    arXiv:2212.10554 (torchscale's ``XPOS``).

    Parameters
    ----------
    q, k : array or tensor of shape (..., seq, dim)
        Queries and keys, floating, same library and head dim (even); the leading axes may
        differ (grouped keys) as long as the positions fit both.
    positions : int or array of shape (..., seq)
        As for :func:`posenc.apply_rope`: an ``int`` ``n`` is ``0 .. n-1``; arrays hold the
        positions and line up with ``q``'s and ``k``'s leading axes.
    base : float, default 10000.0
        RoPE's frequency base.
    scale_base : float, default 512.0
        ``B``, the paper's and rotary-embedding-torch's ``scale_base``.
    gamma : float, default 0.4
        ``gamma`` in ``zeta_i = (2i/dim + gamma) / (1 + gamma)``, > 0.
    center : float, optional
        The position whose scale is 1. Default ``seq // 2`` (``q``'s seq axis), as
        rotary-embedding-torch. The scores do not depend on it; it keeps the scales in range.
    pairing : {"interleaved", "half"}, default "interleaved"
        As for :func:`posenc.apply_rope`; the library and torchscale interleave.

    Returns
    -------
    (q', k') : arrays or tensors
        Each with its input's shape, dtype, library and device.

    Raises
    ------
    TypeError, ValueError
        As :func:`posenc.apply_rope` for ``q``, ``k`` and ``positions`` (naming the argument);
        head dims that differ or are odd; ``scale_base`` or ``gamma`` not a finite number > 0;
        ``center`` not finite; a scale ``zeta ** (+-(n - c) / B)`` outside the normal range of
        the working dtype (float32, or float64 for float64 input) or of ``q``'s and ``k``'s
        dtype (float16: ``[6.1e-5, 65504]``); a scaled ``q`` or ``k`` that overflows its dtype.

    Examples
    --------
    >>> import numpy as np
    >>> import posenc
    >>> rng = np.random.default_rng(0)
    >>> q, k = rng.normal(size=(2, 6, 8))
    >>> q2, k2 = posenc.apply_xpos(q, k, 6)
    >>> s = q2 @ k2.T                    # depends on m - n only: shift everything by 100
    >>> q3, k3 = posenc.apply_xpos(q, k, np.arange(100, 106))
    >>> bool(np.allclose(s, q3 @ k3.T, rtol=1e-12, atol=1e-12))
    True
    """
    pair = check_choice(pairing, name="pairing", choices=PAIRINGS)
    qa = _checked(q, "q")
    ka = _checked(k, "k")
    if is_torch(qa) != is_torch(ka):
        raise TypeError(
            f"q and k must come from one library, got {_describe(qa)} and {_describe(ka)}"
        )
    dim = qa.shape[-1]
    if ka.shape[-1] != dim or dim % 2:
        raise ValueError(
            f"q and k must have the same even head dim, got {qa.shape[-1]} and {ka.shape[-1]}"
        )
    base = check_base(base)
    inv_b = 1.0 / _positive(scale_base, "scale_base")
    g = _positive(gamma, "gamma")
    c = qa.shape[-2] // 2 if center is None else check_scalar(center, name="center")
    inv_freq, _ = rope_frequencies(dim, base=base)
    outs = []
    for x, sign, name in ((qa, 1.0, "q"), (ka, -1.0, "k")):
        pos = _fit_positions(positions, x)
        cos, sin = _cos_sin(pos, inv_freq, 1.0)  # float64, (..., seq, dim/2)
        scale = _scale(pos, dim, sign * inv_b, g, c)
        work = _work_dtype(x)
        cos, sin = cos * scale, sin * scale
        if is_torch(x):
            cos, sin = cos.to(work), sin.to(work)
        else:
            with np.errstate(over="ignore"):  # refused just below
                cos, sin = cos.astype(work), sin.astype(work)
        _check_range(cos, sin, scale, x.dtype)
        if is_torch(x):
            out = _rotate(x, cos, sin, pairing=pair, rotary_dim=dim)
        else:
            with np.errstate(over="ignore"):  # an overflowing q or k is refused just below
                out = _rotate(x, cos, sin, pairing=pair, rotary_dim=dim)
        _check_result(out, x, name)
        outs.append(out)
    return outs[0], outs[1]


def _checked(x: Any, name: str) -> Any:
    try:
        arr, _ = _check_x(x)
    except (TypeError, ValueError) as exc:  # rope's messages name "x"
        msg = str(exc)
        raise type(exc)(name + msg[1:] if msg.startswith("x ") else f"{name}: {msg}") from None
    return arr


def _positive(value: Any, name: str) -> float:
    v = check_scalar(value, name=name)
    if v <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {v}")
    return v


@traced_constant  # a graph constant under torch.compile: no NumPy arithmetic is traced
def _zeta(dim: int, gamma: float) -> FloatArray:
    """``zeta_i = (2i/dim + gamma) / (1 + gamma)``, float64, ``dim // 2`` of them."""
    zeta: FloatArray = (np.arange(0, dim, 2, dtype=np.float64) / dim + gamma) / (1.0 + gamma)
    return zeta


def _scale(pos: Any, dim: int, inv_b: float, gamma: float, center: float) -> Any:
    """``zeta ** ((pos - center) * inv_b)`` in float64, shape ``pos.shape + (dim/2,)``."""
    zeta = _zeta(dim, gamma)
    if is_torch(pos):
        torch = sys.modules["torch"]
        z = torch.as_tensor(zeta, device=pos.device)
        power = (pos.to(torch.float64) - center) * inv_b
        return torch.pow(z, power[..., None])
    power = (np.asarray(pos, dtype=np.float64) - center) * inv_b
    with np.errstate(over="ignore", under="ignore"):
        out: FloatArray = np.power(zeta, power[..., None])
    return out


def _check_range(cos: Any, sin: Any, scale: Any, out_dtype: Any) -> None:
    """Refuse scales outside the normal range of the working dtype or of the output dtype
    (float16's is [6.1e-5, 65504]: past it the scaled q or k overflows to inf, or underflows to
    subnormals that keep a few bits of it, or to 0)."""
    if is_torch(cos):
        torch = sys.modules["torch"]
        if compiling() or cos.device.type == "meta":
            return
        infos = (torch.finfo(cos.dtype), torch.finfo(out_dtype))
        lo, hi = (float(scale.min()), float(scale.max())) if scale.numel() else (1.0, 1.0)
    else:
        infos = (np.finfo(cos.dtype), np.finfo(out_dtype))
        lo, hi = (float(scale.min()), float(scale.max())) if scale.size else (1.0, 1.0)
    tiny = max(float(i.tiny) for i in infos)
    big = min(float(i.max) for i in infos)
    if not tiny <= lo <= hi <= big:
        raise ValueError(
            "positions lie too far from center: the xPos scale zeta ** (+-(n - center) / "
            f"scale_base) reaches {lo:.3g} .. {hi:.3g}, outside the normal range of {out_dtype} "
            f"([{tiny:.3g}, {big:.3g}]); pass a center near the positions (the scores do not "
            "depend on it) or a larger scale_base"
        )


def _check_result(out: Any, x: Any, name: str) -> None:
    """Refuse a scaled q or k that overflows its dtype although ``x`` is finite (``|x|`` near the
    dtype's maximum, times a scale above 1)."""
    if is_torch(out):
        torch = sys.modules["torch"]
        if compiling() or out.device.type == "meta":
            return
        bad = not bool(torch.isfinite(out).all()) and bool(torch.isfinite(x).all())
    else:
        bad = not bool(np.isfinite(out).all()) and bool(np.isfinite(x).all())
    if bad:
        raise ValueError(
            f"{name} times its xPos scale overflows {x.dtype} (a finite {name} gave inf): pass "
            f"{name} in a wider dtype, a center near the positions, or a larger scale_base"
        )

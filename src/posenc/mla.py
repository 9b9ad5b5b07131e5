"""Decoupled RoPE of multi-head latent attention (MLA; DeepSeek-V2, DeepSeek-V3).

MLA caches one compressed vector ``c`` per token instead of every head's key and value; the key
of head ``h`` is ``W_UK[h] c``. Without a position-dependent factor the up-projection folds into
the query (``q^T W_UK c = (W_UK^T q)^T c``), so attention runs on the cache itself. A RoPE
rotation ``R_n`` of the key would sit between them (``q^T R_m^T R_n W_UK c``) and depend on the
key's position, so it cannot be folded. MLA therefore rotates only a small extra part of width
``qk_rope_head_dim``: each head's query gets ``qk_rope_head_dim`` rotated features after its
``qk_nope_head_dim`` unrotated ones, and the key gets one rotated part ``k_pe`` shared by every
head (cached next to ``c``). The score of head ``h`` is
``q_nope . k_nope + R_m q_pe . R_n k_pe``.

:func:`apply_mla_rope` rotates the query heads and the shared key part in DeepSeek's layout;
:func:`mla_softmax_scale` gives the softmax scale with DeepSeek's YaRN ``mscale_all_dim``.
"""

from __future__ import annotations

import math
import numbers
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal, overload

import numpy as np

from ._array import (
    MAX_SIZE,
    _describe,
    check_base,
    check_choice,
    check_dim,
    check_length,
    is_torch,
)
from ._typing import ArrayLike, FloatArray, PositionsLike
from .rope import apply_rope
from .rope_scaling import _check_scaling, _yarn_mscale

if TYPE_CHECKING:
    from ._typing import Tensor

__all__ = ["apply_mla_rope", "mla_softmax_scale"]

MLA_PAIRINGS = ("interleaved", "half", "deinterleave")
MLAPairing = Literal["interleaved", "half", "deinterleave"]


@overload
def apply_mla_rope(
    q: Tensor,
    k_pe: Tensor,
    positions: Tensor | PositionsLike,
    *,
    base: float = ...,
    pairing: MLAPairing = ...,
    scaling: Mapping[str, Any] | None = ...,
) -> tuple[Tensor, Tensor]: ...
@overload
def apply_mla_rope(
    q: ArrayLike,
    k_pe: ArrayLike,
    positions: PositionsLike,
    *,
    base: float = ...,
    pairing: MLAPairing = ...,
    scaling: Mapping[str, Any] | None = ...,
) -> tuple[FloatArray, FloatArray]: ...
def apply_mla_rope(
    q: Tensor | ArrayLike,
    k_pe: Tensor | ArrayLike,
    positions: Tensor | PositionsLike,
    *,
    base: float = 10000.0,
    pairing: MLAPairing = "interleaved",
    scaling: Mapping[str, Any] | None = None,
) -> tuple[Tensor, Tensor] | tuple[FloatArray, FloatArray]:
    """Rotate MLA's query heads and shared key part: decoupled RoPE (DeepSeek-V2/V3).

    Experimental. Only the last ``qk_rope_head_dim = k_pe.shape[-1]`` features of each query
    head are rotated (the first ``qk_nope_head_dim`` pass through), and the key's rotated part
    ``k_pe`` is one vector per token, shared by every head (DeepSeek-AI, 2024, arXiv:2405.04434,
    section 2.1.3). Reproduces transformers 5.23's ``DeepseekV3Attention`` (its rotary embedding
    plus ``apply_rotary_pos_emb`` / ``apply_rotary_pos_emb_interleave``) and
    ``DeepseekV2Attention`` (``apply_rotary_emb``).

    Parameters
    ----------
    q : array or tensor of shape (..., heads, seq, qk_nope_head_dim + qk_rope_head_dim)
        Query heads, ``[q_nope, q_pe]`` on the last axis, floating.
    k_pe : array or tensor of shape (..., 1, seq, qk_rope_head_dim)
        The shared key part (HF's ``k_rot`` / ``k_pe``), floating, same library and device as
        ``q``; its width (even, at most ``q``'s) is ``qk_rope_head_dim``. Any leading shape
        that the positions fit, as for :func:`posenc.apply_rope`.
    positions : int or array of shape (..., seq)
        As for :func:`posenc.apply_rope`: ``(seq,)``, or ``(batch, seq)`` position ids for
        ``(batch, heads, seq, dim)`` inputs; for DeepSeek's own ``(batch, seq, heads, dim)``
        layout pass ``(1, seq, 1)``.
    base : float, default 10000.0
        ``rope_theta``.
    pairing : {"interleaved", "half", "deinterleave"}, default "interleaved"
        ``"interleaved"``: pairs ``(2i, 2i+1)``, output in place (the paper's complex product;
        DeepSeek's ``model.py``; HF ``deepseek_v2``). ``"half"``: pairs ``(i, i + r/2)``
        (HF ``deepseek_v3`` with ``rope_interleave=False``). ``"deinterleave"``: pairs
        ``(2i, 2i+1)``, output with the rotated first members, then the second members (HF
        ``deepseek_v3``'s default ``rope_interleave=True``: ``apply_rotary_pos_emb_interleave``);
        that is the ``"interleaved"`` result permuted by :func:`posenc.rope_permutation`, the same
        for ``q_pe`` and ``k_pe``, so every score is the same as with ``"interleaved"``.
    scaling : dict, optional
        HF ``rope_scaling``, as for :func:`posenc.rope_frequencies` (DeepSeek: ``"yarn"`` with
        ``mscale`` and ``mscale_all_dim``), for width ``qk_rope_head_dim``. Its attention factor
        multiplies cos and sin; the softmax scale is :func:`mla_softmax_scale`.

    Returns
    -------
    (q_out, k_pe_out)
        ``q`` with its last ``qk_rope_head_dim`` features rotated, and ``k_pe`` rotated; each of
        its input's shape, dtype, library and device.

    Raises
    ------
    TypeError
        ``q`` or ``k_pe`` not a floating array, one a tensor and the other not, bad positions.
    ValueError
        ``q`` or ``k_pe`` with fewer than 2 axes, ``k_pe`` of odd width or wider than ``q``,
        different seq axes or devices, bad ``pairing``, ``base``, ``scaling`` or positions.

    See Also
    --------
    mla_softmax_scale : the softmax scale with YaRN's ``mscale_all_dim``.
    posenc.apply_rope : the rotation itself.

    Notes
    -----
    Score of head ``h`` between query ``m`` and key ``n``: ``q_nope . k_nope[h] + (f R_m q_pe)
    . (f R_n k_pe)``, ``f`` the attention factor of ``scaling``.

    References
    ----------
    DeepSeek-AI, "DeepSeek-V2: A Strong, Economical, and Efficient Mixture-of-Experts Language
    Model", arXiv:2405.04434. DeepSeek-AI, "DeepSeek-V3 Technical Report", arXiv:2412.19437.

    Examples
    --------
    >>> import numpy as np
    >>> import posenc
    >>> rng = np.random.default_rng(0)
    >>> q = rng.normal(size=(2, 4, 5, 24))     # (batch, heads, seq, 16 nope + 8 rope)
    >>> k_pe = rng.normal(size=(2, 1, 5, 8))   # one rotated key part for all heads
    >>> q2, k2 = posenc.apply_mla_rope(q, k_pe, 5)
    >>> q2.shape, k2.shape
    ((2, 4, 5, 24), (2, 1, 5, 8))
    >>> bool(np.array_equal(q2[..., :16], q[..., :16]))   # q_nope untouched
    True
    >>> np.allclose(q2[..., 16:], posenc.apply_rope(q[..., 16:], 5))
    True
    """
    pair = check_choice(pairing, name="pairing", choices=MLA_PAIRINGS)
    q_arr = _check_floating(q, "q")
    k_arr = _check_floating(k_pe, "k_pe")
    if is_torch(q_arr) != is_torch(k_arr):
        raise TypeError(
            f"q and k_pe must come from one library, got q as {type(q_arr).__name__} and k_pe as "
            f"{type(k_arr).__name__}"
        )
    if is_torch(q_arr) and q_arr.device != k_arr.device:
        raise ValueError(f"k_pe is on {k_arr.device} but q is on {q_arr.device}; move one of them")
    width, rope = q_arr.shape[-1], k_arr.shape[-1]
    if rope % 2:
        raise ValueError(
            f"k_pe's last axis is qk_rope_head_dim and must be even, got shape {tuple(k_arr.shape)}"
        )
    if rope > width:
        raise ValueError(
            f"k_pe's width (qk_rope_head_dim = {rope}) must be at most q's head width {width}, "
            f"got q of shape {tuple(q_arr.shape)} and k_pe of shape {tuple(k_arr.shape)}"
        )
    if k_arr.shape[-2] != q_arr.shape[-2]:
        raise ValueError(
            f"k_pe must have q's seq axis (axis -2, {q_arr.shape[-2]}), got shape "
            f"{tuple(k_arr.shape)} for q of shape {tuple(q_arr.shape)}"
        )
    nope = width - rope
    kw: dict[str, Any] = {"base": base, "scaling": scaling}
    q_rot = _rotate(q_arr[..., nope:], positions, pair, kw)
    k_rot = _rotate(k_arr, positions, pair, kw)
    q_out = _cat(q_arr[..., :nope], q_rot) if nope else q_rot
    return q_out, k_rot


def mla_softmax_scale(
    qk_nope_head_dim: int,
    qk_rope_head_dim: int,
    *,
    scaling: Mapping[str, Any] | None = None,
) -> float:
    """The softmax scale of DeepSeek's MLA, with YaRN's ``mscale_all_dim`` (DeepSeek-V2/V3).

    Experimental. ``(qk_nope_head_dim + qk_rope_head_dim) ** -0.5``, times ``g**2`` with
    ``g = 0.1 * mscale_all_dim * ln(factor) + 1`` (1 for ``factor <= 1``) when ``scaling`` is
    YaRN with a non-zero ``mscale_all_dim`` (DeepSeek's ``yarn_get_mscale``; transformers 5.23
    ``DeepseekV3Attention.scaling`` via ``yarn_apply_mscale``; DeepSeek-V3 ``inference/model.py``
    ``softmax_scale``). Unlike the attention factor that multiplies cos and sin
    (``g(mscale) / g(mscale_all_dim)``, see :func:`posenc.rope_frequencies`), it scales the whole
    score, the unrotated ``q_nope . k_nope`` part included.

    Parameters
    ----------
    qk_nope_head_dim : int
        Unrotated query/key features per head (>= 0).
    qk_rope_head_dim : int
        Rotated features per head (positive, even).
    scaling : dict, optional
        HF ``rope_scaling`` / ``rope_parameters``, checked as by :func:`posenc.rope_frequencies`
        (a ``"rope_theta"`` key is allowed).

    Returns
    -------
    float

    Raises
    ------
    TypeError, ValueError
        A dim that is not a (positive, even) integer; a bad ``scaling``, named by key; an
        ``mscale_all_dim`` with ``g <= 0``.

    See Also
    --------
    apply_mla_rope : the rotation, whose cos/sin carry the attention factor.

    References
    ----------
    DeepSeek-AI, arXiv:2405.04434 (DeepSeek-V2); Peng et al., "YaRN: Efficient Context Window
    Extension of Large Language Models", arXiv:2309.00071.

    Examples
    --------
    >>> import posenc
    >>> yarn = {"rope_type": "yarn", "factor": 40.0, "mscale": 1.0, "mscale_all_dim": 1.0,
    ...         "original_max_position_embeddings": 4096, "beta_fast": 32, "beta_slow": 1}
    >>> round(posenc.mla_softmax_scale(128, 64), 6)            # 192 ** -0.5
    0.072169
    >>> round(posenc.mla_softmax_scale(128, 64, scaling=yarn), 6)
    0.135234
    """
    nope = check_length(qk_nope_head_dim, name="qk_nope_head_dim")
    rope = check_dim(qk_rope_head_dim, name="qk_rope_head_dim", maximum=MAX_SIZE)
    if nope > MAX_SIZE:
        raise ValueError(f"qk_nope_head_dim must be at most 2**53, got {nope}")
    theta = 10000.0
    if isinstance(scaling, Mapping) and scaling.get("rope_theta") is not None:
        theta = check_base(scaling["rope_theta"], name="scaling['rope_theta']")
    rope_type, params = _check_scaling(scaling, rope, theta)  # every key, by name
    scale = 1.0 / math.sqrt(nope + rope)
    mscale, mscale_all = params.get("mscale"), params.get("mscale_all_dim")
    if rope_type == "yarn" and mscale_all:  # HF: `if mscale_all_dim:` (0 or absent: no change)
        g = _yarn_mscale(params["factor"], mscale_all, "mscale_all_dim")
        if mscale:  # refused as by rope_frequencies: the cos/sin factor would be <= 0
            _yarn_mscale(params["factor"], mscale, "mscale")
        scale *= g * g
    return scale


def _check_floating(x: Any, name: str) -> Any:
    """``x`` as a floating array or tensor with at least 2 axes and a non-empty last axis."""
    if is_torch(x):
        if not x.is_floating_point():
            raise TypeError(f"{name} must be a floating tensor, got {_describe(x)}")
    else:
        if isinstance(x, (numbers.Number, str, bytes)) or x is None:
            raise TypeError(
                f"{name} must be a floating array of shape (..., seq, dim), got {_describe(x)}"
            )
        try:
            x = np.asarray(x)
        except Exception as exc:  # ragged lists and the like
            raise TypeError(
                f"{name} must be a floating array of shape (..., seq, dim), got "
                f"{type(x).__name__} that is not a rectangular array"
            ) from exc
        if x.dtype.kind != "f":
            raise TypeError(f"{name} must be a floating array, got dtype {x.dtype}")
    shape = tuple(x.shape)
    if len(shape) < 2 or shape[-1] == 0:
        raise ValueError(f"{name} must have shape (..., seq, dim) with dim >= 2, got shape {shape}")
    return x


def _rotate(x: Any, positions: Any, pairing: str, kw: dict[str, Any]) -> Any:
    if pairing == "half":
        return apply_rope(x, positions, pairing="half", **kw)
    out = apply_rope(x, positions, pairing="interleaved", **kw)
    if pairing == "deinterleave":  # out[..., rope_permutation(r)]: first members, then second
        out = _cat(out[..., 0::2], out[..., 1::2])
    return out


def _cat(a: Any, b: Any) -> Any:
    if is_torch(a):
        return sys.modules["torch"].cat((a, b), dim=-1)
    return np.concatenate((a, b), axis=-1)

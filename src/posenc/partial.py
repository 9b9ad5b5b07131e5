"""Partial and frequency-pruned RoPE: which features of a head rotate, and at which frequency.

Two rules leave part of each head unrotated, and they are not the same rotation:

- ``rule="rotary_dim"`` (GPT-NeoX ``rotary_pct``, HF ``partial_rotary_factor`` for Phi, GLM,
  StableLM, Persimmon, Qwen3-Next, Qwen3.5): the first ``r = int(head_dim * fraction)`` features
  form a RoPE of width ``r`` of their own, with ``w_i = base ** (-2 i / r)``; the other
  ``head_dim - r`` features pass through. With half pairing the partners are ``(i, i + r/2)``.
- ``rule="proportional"`` (HF ``rope_type="proportional"``, Gemma 4's full-attention layers;
  p-RoPE of Barbero et al.): the whole head is a RoPE of width ``head_dim`` whose ladder keeps
  its first ``n = int(fraction * head_dim // 2)`` frequencies ``base ** (-2 i / head_dim)`` and
  sets the lowest ``head_dim/2 - n`` to zero. A zero frequency is no rotation, so those pairs
  pass through; with half pairing they are features ``n .. d/2 - 1`` *and* ``d/2 + n .. d - 1``.

Same fraction, two answers: the rotary_dim rule squeezes the full range of wavelengths into its
``r/2`` pairs (its slowest pair turns at ``base ** (-(r - 2)/r)``); the proportional rule keeps
the fastest ``n`` frequencies of the full ladder and drops the slow ones.
"""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING, Any, Literal, cast, overload

import numpy as np

from ._array import _describe, check_base, check_choice
from ._typing import ArrayLike, FloatArray, Pairing, PositionsLike
from .rope import PAIRINGS, _check_x, _cos_sin, _fit_positions, _rotate, _work_dtype, apply_rope
from .rope_scaling import _check_width

if TYPE_CHECKING:
    from ._typing import Tensor

__all__ = ["partial_rope_frequencies", "apply_partial_rope"]

PARTIAL_RULES = ("rotary_dim", "proportional")
Rule = Literal["rotary_dim", "proportional"]


def partial_rope_frequencies(
    head_dim: int,
    fraction: float,
    *,
    rule: Rule = "rotary_dim",
    base: float = 10000.0,
    pairing: Pairing = "half",
) -> FloatArray:
    """The frequency each feature of a head turns at under partial RoPE (0: it does not rotate).

    Experimental: the name, signature or results may change in any release.

    Parameters
    ----------
    head_dim : int
        Features per head, a positive even integer.
    fraction : float
        ``partial_rotary_factor`` / ``rotary_pct``, in ``(0, 1]``.
    rule : {"rotary_dim", "proportional"}, default "rotary_dim"
        ``"rotary_dim"``: the first ``int(head_dim * fraction)`` features rotate as a RoPE of
        that width (GPT-NeoX, Phi, GLM, Qwen3-Next; HF's default and linear rope types).
        ``"proportional"``: a RoPE of width ``head_dim`` keeping its
        ``int(fraction * head_dim // 2)`` fastest frequencies (Gemma 4, p-RoPE).
    base : float, default 10000.0
        ``rope_theta``.
    pairing : {"half", "interleaved"}, default "half"
        Which features form a pair: ``"half"`` (HF ``rotate_half``: GPT-NeoX, Phi, Qwen, Gemma)
        or ``"interleaved"`` (GLM, GPT-J).

    Returns
    -------
    numpy.ndarray of shape (head_dim,), float64
        Feature ``j`` turns by ``positions * w[j]``; the two features of a pair share a
        frequency; ``w[j] == 0`` for every feature that passes through unchanged.

    Raises
    ------
    TypeError, ValueError
        ``head_dim`` not a positive even integer, ``fraction`` not a number in ``(0, 1]`` or
        giving an odd or zero rotated width under ``rule="rotary_dim"``, bad ``rule``,
        ``base`` or ``pairing``.

    See Also
    --------
    apply_partial_rope : rotates by these frequencies.

    Notes
    -----
    rotary_dim: ``r = int(head_dim * fraction)``, pair ``i < r/2`` has ``base ** (-2i / r)``.
    proportional: ``n = int(fraction * head_dim // 2)``, pair ``i < n`` has
    ``base ** (-2i / head_dim)``, pairs ``n .. head_dim/2 - 1`` have 0. Both as in
    transformers 5.23 (``modeling_rope_utils``).

    References
    ----------
    Barbero et al., "Round and Round We Go! What makes Rotary Positional Encodings useful?",
    arXiv:2410.06205.

    Examples
    --------
    >>> import numpy as np
    >>> import posenc
    >>> np.round(posenc.partial_rope_frequencies(8, 0.5), 3)
    array([1.  , 0.01, 1.  , 0.01, 0.  , 0.  , 0.  , 0.  ])
    >>> np.round(posenc.partial_rope_frequencies(8, 0.5, rule="proportional"), 3)
    array([1. , 0.1, 0. , 0. , 1. , 0.1, 0. , 0. ])
    """
    head_dim, frac, rul, pair = _check_args(head_dim, fraction, rule, pairing)
    base = check_base(base)
    pairs = _pair_frequencies(head_dim, frac, rul, base)  # (width/2,)
    width = head_dim if rul == "proportional" else 2 * pairs.size
    out = np.zeros(head_dim)
    if pair == "interleaved":
        out[0:width:2] = pairs
        out[1:width:2] = pairs
    else:
        out[: width // 2] = pairs
        out[width // 2 : width] = pairs
    return out


@overload
def apply_partial_rope(
    x: Tensor,
    positions: Tensor | PositionsLike,
    *,
    fraction: float,
    rule: Rule = ...,
    base: float = ...,
    pairing: Pairing = ...,
) -> Tensor: ...
@overload
def apply_partial_rope(
    x: ArrayLike,
    positions: PositionsLike,
    *,
    fraction: float,
    rule: Rule = ...,
    base: float = ...,
    pairing: Pairing = ...,
) -> FloatArray: ...
def apply_partial_rope(
    x: Tensor | ArrayLike,
    positions: Tensor | PositionsLike,
    *,
    fraction: float,
    rule: Rule = "rotary_dim",
    base: float = 10000.0,
    pairing: Pairing = "half",
) -> Tensor | FloatArray:
    """Rotate queries or keys by partial RoPE: a fraction of the head, by either rule.

    Experimental: the name, signature or results may change in any release.

    Parameters
    ----------
    x : array or tensor of shape (..., seq, head_dim)
        Queries or keys, floating (NumPy or torch).
    positions : int or array of shape (..., seq)
        As for :func:`apply_rope` (a Python ``int`` is a count; arrays line up with ``x``'s
        leading axes from the left).
    fraction : float
        ``partial_rotary_factor`` / ``rotary_pct``, in ``(0, 1]``.
    rule : {"rotary_dim", "proportional"}, default "rotary_dim"
        See :func:`partial_rope_frequencies`.
    base : float, default 10000.0
        ``rope_theta``.
    pairing : {"half", "interleaved"}, default "half"
        ``"half"`` for HF ``rotate_half`` models, ``"interleaved"`` for GLM.

    Returns
    -------
    array or tensor
        Same shape, dtype, library and device as ``x``. Features that do not rotate are
        returned unchanged, bit for bit.

    Raises
    ------
    TypeError, ValueError
        As for :func:`apply_rope` and :func:`partial_rope_frequencies`; ``x``'s last axis must
        be ``head_dim`` (even).

    See Also
    --------
    partial_rope_frequencies : which feature turns at which frequency.
    apply_rope : ``rule="rotary_dim"`` is ``apply_rope(x, p, rotary_dim=int(d * fraction))``.

    Notes
    -----
    Angles are formed in float64 and the rotation runs in float32 (float64 for float64 input),
    as in :func:`apply_rope`. A zero frequency gives ``cos = 1`` and ``sin = 0`` exactly.

    Examples
    --------
    >>> import numpy as np
    >>> import posenc
    >>> q = np.random.default_rng(0).normal(size=(4, 16))        # (seq, head_dim)
    >>> y = posenc.apply_partial_rope(q, 4, fraction=0.25, rule="proportional")
    >>> bool(np.array_equal(y[:, 2:8], q[:, 2:8])), bool(np.array_equal(y[:, 10:], q[:, 10:]))
    (True, True)
    """
    arr, _ = _check_x(x)
    head_dim, frac, rul, pair = _check_args(arr.shape[-1], fraction, rule, pairing, from_x=True)
    base = check_base(base)
    if rul == "rotary_dim":
        rot = _rotated_width(head_dim, frac)
        pos_any: Any = positions  # checked by apply_rope itself
        out: Tensor | FloatArray = apply_rope(
            arr, pos_any, base=base, pairing=cast(Pairing, pair), rotary_dim=rot
        )
        return out
    inv_freq = _pair_frequencies(head_dim, frac, rul, base)
    pos = _fit_positions(positions, arr)
    cos, sin = _cos_sin(pos, inv_freq, 1.0, dtype=_work_dtype(arr))
    out = _rotate(arr, cos, sin, pairing=pair, rotary_dim=head_dim)
    return out


# --- helpers -----------------------------------------------------------------------------------


def _check_args(
    head_dim: Any, fraction: Any, rule: Any, pairing: Any, *, from_x: bool = False
) -> tuple[int, float, str, str]:
    pair = check_choice(pairing, name="pairing", choices=PAIRINGS)
    rul = check_choice(rule, name="rule", choices=PARTIAL_RULES)
    if from_x:
        if head_dim % 2:
            raise ValueError(f"x's last axis (head_dim) must be even, got {head_dim}")
        head_dim = int(head_dim)
    else:
        head_dim = _check_width(head_dim, "head_dim")
    if isinstance(fraction, bool) or not isinstance(fraction, numbers.Real):
        raise TypeError(f"fraction must be a number in (0, 1], got {_describe(fraction)}")
    frac = float(fraction)
    if not 0 < frac <= 1:  # also refuses nan
        raise ValueError(f"fraction must be a number in (0, 1], got {frac}")
    if rul == "rotary_dim":
        _rotated_width(head_dim, frac)
    return head_dim, frac, rul, pair


def _rotated_width(head_dim: int, fraction: float) -> int:
    """``int(head_dim * fraction)`` as transformers and GPT-NeoX compute it: even and > 0."""
    rot = int(head_dim * fraction)
    if rot <= 0 or rot % 2:
        raise ValueError(
            f"fraction gives a rotated width int(head_dim * fraction) = int({head_dim} * "
            f"{fraction}) = {rot}; it must be a positive even integer"
        )
    return rot


def _pair_frequencies(head_dim: int, fraction: float, rule: str, base: float) -> FloatArray:
    """One frequency per pair: ``r/2`` of them (rotary_dim) or ``head_dim/2`` (proportional)."""
    if rule == "rotary_dim":
        rot = _rotated_width(head_dim, fraction)
        return np.float64(base) ** (-np.arange(0, rot, 2, dtype=np.float64) / rot)
    n = int(fraction * head_dim // 2)
    out = np.zeros(head_dim // 2)
    out[:n] = np.float64(base) ** (-np.arange(0, 2 * n, 2, dtype=np.float64) / head_dim)
    return out

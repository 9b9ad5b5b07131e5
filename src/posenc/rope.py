"""Rotary position embeddings (RoPE; Su et al., 2021), exact at long positions.

RoPE rotates each pair of features of a query or key by an angle ``m * w_i`` that grows with
the position ``m``; the dot product of a rotated query and key then depends on the positions
only through ``m - n``.

Pairings
--------
``pairing="interleaved"`` rotates features ``(0, 1), (2, 3), ...`` (the paper, Meta's Llama
code, GPT-J, RoFormer, ``rotary_embedding_torch``). ``pairing="half"`` rotates ``(i, i + r/2)``
(HF Llama ``rotate_half``, GPT-NeoX). Both use frequency ``w_i`` for pair ``i``; a checkpoint
moves from one to the other by permuting the rows of its q/k projections
(:func:`rope_permutation`).

Why the angles are exact
------------------------
The common code forms ``position * inv_freq`` in float32: at position 2**20 the angle is
rounded by up to 6e-2 rad, and the output is off by as much. Here every angle is formed in
float64 from the positions as given (never rounded to ``x``'s dtype), cos and sin are taken in
float64 and multiplied by the attention factor, and only then rounded to the working dtype
(float32 for float16/bfloat16/float32 input, float64 for float64 input). The rotation runs in
the working dtype and the result is rounded once to ``x``'s dtype: a float32 result is within
1e-6 * max|x| of the exact rotation at any position (measured 7.6e-8 near 2**20), and float16 /
bfloat16 results are within half a unit of their own rounding plus float32 noise.

Positions against ``x``
-----------------------
``x`` has shape ``(..., seq, dim)``. The last axis of ``positions`` runs along ``x``'s seq axis;
its other axes line up with ``x``'s leading axes *from the left*, and the axes it lacks are
inserted as size 1 just before seq. With ``x`` of shape ``(batch, heads, seq, dim)``:
``(seq,)`` is shared by all, ``(batch, seq)`` is per-batch position ids (HF's ``position_ids``,
read as ``(batch, 1, seq)``), ``(batch, 1, seq)`` and ``(batch, heads, seq)`` are used as they
are. The result must broadcast to ``x.shape[:-1]`` exactly. For a ``(batch, seq, heads, dim)``
layout (Meta's Llama, GPT-J), pass positions of shape ``(batch, seq, 1)`` or ``(1, seq, 1)``:
with as many axes as ``x.shape[:-1]`` the rule is plain broadcasting. Positions with fewer axes
whose last axis has size 1 while seq does not (``(seq, 1)`` against that layout) are refused
rather than silently lined up with the wrong axes. A 0-d array is one position for every token.
"""

from __future__ import annotations

import math
import numbers
import sys
from collections.abc import Mapping

import numpy as np

from ._array import as_positions, check_base, check_choice, check_dim, is_torch
from .sinusoidal import _sin_cos

__all__ = ["rope_frequencies", "apply_rope", "rope_permutation"]

PAIRINGS = ("interleaved", "half")
ROPE_TYPES = ("default", "linear", "dynamic", "yarn", "llama3", "longrope")

# rope_type: (required keys, optional keys); "rope_type"/"type" and "rope_theta" are always allowed.
_KEYS = {
    "default": ((), ()),
    "linear": (("factor",), ()),
    "dynamic": (("factor", "original_max_position_embeddings"), ()),
    "yarn": (
        ("factor", "original_max_position_embeddings"),
        ("beta_fast", "beta_slow", "mscale", "mscale_all_dim", "attention_factor", "truncate"),
    ),
    "llama3": (("factor", "original_max_position_embeddings", "low_freq_factor", "high_freq_factor"), ()),
    "longrope": (("short_factor", "long_factor", "original_max_position_embeddings"), ("factor", "attention_factor")),
}


# --- frequencies ------------------------------------------------------------------------------


def rope_frequencies(dim, *, base=10000.0, scaling=None, seq_len=None):
    """RoPE inverse frequencies (Su et al., 2021) and the attention factor, with HF's scalings.

    Parameters
    ----------
    dim : int
        The rotated width (the head dim, or ``rotary_dim`` for partial rotary), even.
    base : float, default 10000.0
        ``w_i = base ** (-2 i / dim)`` (HF ``rope_theta``).
    scaling : dict, optional
        None (plain RoPE) or a dict in the form of HF's ``rope_scaling`` / ``rope_parameters``
        with ``"rope_type"`` (or the legacy ``"type"``) one of ``"default"``, ``"linear"``,
        ``"dynamic"``, ``"yarn"``, ``"llama3"``, ``"longrope"``, and that type's keys:

        - linear: ``factor``.
        - dynamic: ``factor``, ``original_max_position_embeddings`` (the trained length; HF
          reads it from ``config.max_position_embeddings``).
        - yarn: ``factor``, ``original_max_position_embeddings``; optional ``beta_fast`` (32),
          ``beta_slow`` (1), ``mscale``, ``mscale_all_dim``, ``attention_factor``, ``truncate``
          (True).
        - llama3: ``factor``, ``original_max_position_embeddings``, ``low_freq_factor``,
          ``high_freq_factor``.
        - longrope: ``short_factor``, ``long_factor`` (``dim // 2`` numbers each),
          ``original_max_position_embeddings``; ``factor`` or ``attention_factor``.

        A ``"rope_theta"`` key is allowed if it equals ``base``. Keys set to None count as
        absent (as in HF). Unknown keys are refused.
    seq_len : int, optional
        The current sequence length, read by ``"dynamic"`` (NTK base grows once
        ``seq_len > original_max_position_embeddings``) and ``"longrope"`` (``long_factor``
        once ``seq_len > original_max_position_embeddings``). HF passes ``max(position_ids) + 1``.
        None means the trained length. Ignored by the other types.

    Returns
    -------
    inv_freq : numpy.ndarray of shape (dim // 2,), float64
    attention_factor : float
        HF's ``attention_scaling``: cos and sin are multiplied by it (yarn and longrope; 1.0
        for the others).

    Raises
    ------
    TypeError
        ``dim`` not an integer, ``scaling`` not a dict, a key of the wrong type.
    ValueError
        ``dim`` odd or <= 0, bad ``base``, unknown ``rope_type`` (the valid ones are listed),
        missing or unknown keys, ``factor < 1``, ``high_freq_factor <= low_freq_factor``,
        ``beta_fast < beta_slow``, factor lists of the wrong length.

    See Also
    --------
    apply_rope : rotates queries and keys with these frequencies.

    Notes
    -----
    Plain: ``w_i = base ** (-2 i / dim)``. Linear (position interpolation): ``w_i / factor``.
    Dynamic NTK: ``base' = base * (factor * L / L0 - (factor - 1)) ** (dim / (dim - 2))`` with
    ``L = max(seq_len, L0)``. YaRN: ``w_i / factor`` for slow pairs, ``w_i`` for fast ones and a
    linear ramp over the pair index between ``beta_slow`` and ``beta_fast`` rotations over
    ``L0``; attention factor ``0.1 ln(factor) + 1``. Llama 3: ``w_i / factor`` for
    wavelengths above ``L0 / low_freq_factor``, ``w_i`` below ``L0 / high_freq_factor``, a
    smooth blend between. LongRoPE: ``w_i / ext_i``; attention factor
    ``sqrt(1 + ln(factor) / ln(L0))``. Each equals
    ``transformers.modeling_rope_utils.ROPE_INIT_FUNCTIONS[rope_type]`` (which computes in
    float32) for the same config.

    References
    ----------
    Su et al., "RoFormer", arXiv:2104.09864. Chen et al., "Extending Context Window of Large
    Language Models via Positional Interpolation", arXiv:2306.15595. Peng et al., "YaRN",
    arXiv:2309.00071. Ding et al., "LongRoPE", arXiv:2402.13753. Grattafiori et al.,
    "The Llama 3 Herd of Models", arXiv:2407.21783.

    Examples
    --------
    >>> import numpy as np
    >>> import posenc
    >>> inv_freq, factor = posenc.rope_frequencies(8)
    >>> np.round(inv_freq, 6), factor
    (array([1.   , 0.1  , 0.01 , 0.001]), 1.0)
    >>> yarn = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64}
    >>> inv_freq, factor = posenc.rope_frequencies(8, scaling=yarn)
    >>> np.round(inv_freq / posenc.rope_frequencies(8)[0], 4), round(factor, 4)
    (array([1.   , 0.625, 0.25 , 0.25 ]), 1.1386)
    """
    dim = check_dim(dim)
    base = check_base(base)
    if seq_len is not None:
        seq_len = _positive_int(seq_len, "seq_len")
    rope_type, params = _check_scaling(scaling, dim, base)
    i = np.arange(0, dim, 2, dtype=np.float64) / dim  # 2i / dim
    plain = np.float64(base) ** -i
    if rope_type == "default":
        return plain, 1.0
    if rope_type == "linear":
        return plain / params["factor"], 1.0
    if rope_type == "dynamic":
        return _dynamic(params, dim, base, i, seq_len), 1.0
    if rope_type == "yarn":
        return _yarn(params, dim, base, plain)
    if rope_type == "llama3":
        return _llama3(params, plain), 1.0
    return _longrope(params, plain, seq_len)


def _dynamic(params, dim, base, i, seq_len):
    factor, trained = params["factor"], params["original_max_position_embeddings"]
    length = trained if seq_len is None else max(seq_len, trained)
    if dim == 2:  # one pair, frequency base**0 = 1 whatever the base (HF divides by dim - 2)
        return np.ones(1)
    grown = base * (factor * length / trained - (factor - 1)) ** (dim / (dim - 2))
    return np.float64(grown) ** -i


def _yarn(params, dim, base, plain):
    factor, trained = params["factor"], params["original_max_position_embeddings"]
    attention = params.get("attention_factor")
    if attention is None:
        mscale, mscale_all = params.get("mscale"), params.get("mscale_all_dim")
        if mscale and mscale_all:  # HF: both set and non-zero, else the plain 0.1 ln(s) + 1
            attention = _yarn_mscale(factor, mscale) / _yarn_mscale(factor, mscale_all)
        else:
            attention = _yarn_mscale(factor, 1.0)
    beta_fast = params.get("beta_fast", 32.0)
    beta_slow = params.get("beta_slow", 1.0)

    def pair_index(rotations):  # the pair whose wavelength fits `rotations` times in `trained`
        return dim * math.log(trained / (rotations * 2 * math.pi)) / (2 * math.log(base))

    low, high = pair_index(beta_fast), pair_index(beta_slow)
    if params.get("truncate", True):
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:
        high += 0.001  # as in the reference code: avoids 0 / 0
    ramp = np.clip((np.arange(dim // 2, dtype=np.float64) - low) / (high - low), 0.0, 1.0)
    inv_freq = (plain / factor) * ramp + plain * (1.0 - ramp)
    return inv_freq, float(attention)


def _yarn_mscale(scale, mscale):
    return 1.0 if scale <= 1 else 0.1 * mscale * math.log(scale) + 1.0


def _llama3(params, plain):
    factor = params["factor"]
    low_ff, high_ff = params["low_freq_factor"], params["high_freq_factor"]
    trained = params["original_max_position_embeddings"]
    wavelen = 2 * math.pi / plain
    low_wavelen, high_wavelen = trained / low_ff, trained / high_ff
    out = np.where(wavelen > low_wavelen, plain / factor, plain)
    smooth = (trained / wavelen - low_ff) / (high_ff - low_ff)
    medium = ~(wavelen < high_wavelen) & ~(wavelen > low_wavelen)
    return np.where(medium, (1 - smooth) * out / factor + smooth * out, out)


def _longrope(params, plain, seq_len):
    trained = params["original_max_position_embeddings"]
    long = seq_len is not None and seq_len > trained
    ext = np.asarray(params["long_factor" if long else "short_factor"], dtype=np.float64)
    attention = params.get("attention_factor")
    if attention is None:
        factor = params["factor"]
        attention = 1.0 if factor <= 1 else math.sqrt(1 + math.log(factor) / math.log(trained))
    return plain / ext, float(attention)


# --- validation of `scaling` -------------------------------------------------------------------


def _positive_int(value, name, *, minimum=1):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer >= {minimum}, got {value!r} ({type(value).__name__})")
    if int(value) < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {int(value)}")
    return int(value)


def _real(value, name, *, minimum=None, strict=False):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a finite real number, got {value!r} ({type(value).__name__})")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be a finite real number, got {value}")
    if minimum is not None and (value <= minimum if strict else value < minimum):
        raise ValueError(f"{name} must be {'>' if strict else '>='} {minimum:g}, got {value:g}")
    return value


def _check_scaling(scaling, dim, base):
    """Validate ``scaling``; return ``(rope_type, params)`` with params' values checked."""
    if scaling is None:
        return "default", {}
    if not isinstance(scaling, Mapping):
        raise TypeError(
            f"scaling must be None or a dict like HF's rope_scaling, got {type(scaling).__name__}"
        )
    raw = {k: v for k, v in scaling.items() if v is not None}
    rope_type = raw.pop("rope_type", None)
    legacy = raw.pop("type", None)
    if rope_type is None:
        rope_type = legacy
    elif legacy is not None and legacy != rope_type:
        raise ValueError(f"scaling has 'rope_type'={rope_type!r} and 'type'={legacy!r}; they must agree")
    if rope_type is None:
        raise ValueError("scaling must name its 'rope_type' (one of " + ", ".join(map(repr, ROPE_TYPES)) + ")")
    check_choice(rope_type, name="scaling['rope_type']", choices=ROPE_TYPES)
    theta = raw.pop("rope_theta", None)
    if theta is not None and _real(theta, "scaling['rope_theta']") != base:
        raise ValueError(
            f"scaling['rope_theta'] = {theta!r} disagrees with base = {base!r}; pass base={theta!r}"
        )
    if "partial_rotary_factor" in raw:
        raise ValueError(
            "scaling['partial_rotary_factor'] is not read here: pass the rotated width as "
            "rotary_dim (apply_rope, RotaryEmbedding) or as dim (rope_frequencies)"
        )
    required, optional = _KEYS[rope_type]
    missing = [k for k in required if k not in raw]
    if missing:
        raise ValueError(
            f"scaling for rope_type={rope_type!r} is missing {', '.join(map(repr, missing))} "
            f"(required: {', '.join(map(repr, required))})"
        )
    unknown = sorted(set(raw) - set(required) - set(optional))
    if unknown:
        allowed = ", ".join(map(repr, ("rope_type", "rope_theta", *required, *optional)))
        raise ValueError(
            f"scaling for rope_type={rope_type!r} has unknown keys {', '.join(map(repr, unknown))} "
            f"(allowed: {allowed})"
        )
    params = {}
    for key, value in raw.items():
        name = f"scaling[{key!r}]"
        if key == "factor":
            params[key] = _real(value, name, minimum=1.0)
        elif key == "original_max_position_embeddings":
            params[key] = _positive_int(value, name, minimum=2 if rope_type == "longrope" else 1)
        elif key in ("short_factor", "long_factor"):
            params[key] = _factor_list(value, name, dim)
        elif key == "truncate":
            if not isinstance(value, (bool, np.bool_)):
                raise TypeError(f"{name} must be a bool, got {value!r} ({type(value).__name__})")
            params[key] = bool(value)
        elif key in ("mscale", "mscale_all_dim"):
            params[key] = _real(value, name)
        else:  # attention_factor, beta_fast, beta_slow, low_freq_factor, high_freq_factor
            params[key] = _real(value, name, minimum=0.0, strict=True)
    if rope_type == "yarn" and params.get("beta_fast", 32.0) < params.get("beta_slow", 1.0):
        raise ValueError(
            f"scaling['beta_fast'] must be >= scaling['beta_slow'] (defaults 32 and 1), got "
            f"beta_fast={params.get('beta_fast', 32.0):g} and beta_slow={params.get('beta_slow', 1.0):g}"
        )
    if rope_type == "llama3" and params["high_freq_factor"] <= params["low_freq_factor"]:
        raise ValueError(
            "scaling['high_freq_factor'] must be > scaling['low_freq_factor'], got "
            f"high_freq_factor={params['high_freq_factor']:g} and low_freq_factor={params['low_freq_factor']:g}"
        )
    if rope_type == "longrope" and "factor" not in params and "attention_factor" not in params:
        raise ValueError(
            "scaling for rope_type='longrope' needs 'factor' or 'attention_factor' (HF derives "
            "factor = max_position_embeddings / original_max_position_embeddings)"
        )
    return rope_type, params


def _factor_list(value, name, dim):
    if isinstance(value, (str, bytes, Mapping)) or is_torch(value):
        raise TypeError(f"{name} must be a list of dim // 2 = {dim // 2} positive numbers, got {type(value).__name__}")
    try:
        arr = np.asarray(value)
    except Exception as exc:
        raise TypeError(f"{name} must be a list of dim // 2 = {dim // 2} positive numbers") from exc
    if arr.dtype == np.bool_ or arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be a list of dim // 2 = {dim // 2} positive numbers, got dtype {arr.dtype}")
    if arr.shape != (dim // 2,):
        raise ValueError(f"{name} must hold dim // 2 = {dim // 2} numbers, got shape {arr.shape}")
    arr = arr.astype(np.float64)
    if not (np.isfinite(arr).all() and (arr > 0).all()):
        raise ValueError(f"{name} must hold finite numbers > 0")
    return arr


# --- rotation ----------------------------------------------------------------------------------


def apply_rope(x, positions, *, base=10000.0, pairing="interleaved", scaling=None, rotary_dim=None, seq_len=None):
    """Rotate queries or keys by their positions: rotary position embedding (Su et al., 2021).

    Parameters
    ----------
    x : array or tensor of shape (..., seq, dim)
        Queries or keys, floating (NumPy or torch; float16, bfloat16, float32, float64).
    positions : int or array of shape (..., seq)
        An int ``n`` means ``0 .. n-1`` (``n`` must equal seq). An array (NumPy, list, or
        tensor on ``x``'s device) holds the positions: integer or float (fractional positions
        are valid), negative allowed. Its last axis runs along seq; its other axes line up with
        ``x``'s leading axes from the left, missing ones inserted before seq: for ``x`` of
        shape ``(batch, heads, seq, dim)`` pass ``(seq,)``, ``(batch, seq)`` (per-batch ids),
        ``(batch, 1, seq)`` or ``(batch, heads, seq)``; for ``(batch, seq, heads, dim)`` pass
        ``(batch, seq, 1)``.
    base : float, default 10000.0
        Frequency base (HF ``rope_theta``).
    pairing : {"interleaved", "half"}, default "interleaved"
        ``"interleaved"``: pairs ``(2i, 2i+1)`` (the paper, Meta Llama, GPT-J, RoFormer).
        ``"half"``: pairs ``(i, i + r/2)`` (HF Llama/Mistral/Qwen ``rotate_half``, GPT-NeoX).
    scaling : dict, optional
        HF-style ``rope_scaling``; see :func:`rope_frequencies`. The attention factor of yarn
        and longrope multiplies cos and sin, as HF does.
    rotary_dim : int, optional
        Rotate only the first ``rotary_dim`` features (even); the rest pass through unchanged
        (GPT-J ``rotary_dim``, GPT-NeoX ``rotary_pct * head_dim``). Frequencies are those of
        width ``rotary_dim``. Default: all of ``dim`` (then ``dim`` must be even).
    seq_len : int, optional
        Current sequence length for ``"dynamic"`` and ``"longrope"`` scaling; see
        :func:`rope_frequencies`.

    Returns
    -------
    array or tensor
        Same shape, dtype, library and device as ``x``.

    Raises
    ------
    TypeError
        ``x`` not a floating array, positions not real, NumPy ``x`` with tensor positions.
    ValueError
        Positions that do not fit ``x``, bad ``rotary_dim``, ``pairing`` or ``scaling``,
        positions on another device than ``x``.

    See Also
    --------
    rope_frequencies : the frequencies and attention factor.
    rope_permutation : converts a checkpoint between the two pairings.
    posenc.torch.RotaryEmbedding : the same with a cos/sin cache.

    Notes
    -----
    For pair ``(a, b)`` with frequency ``w_i`` at position ``m`` (RoFormer eq. 34):
    ``a' = a cos(m w_i) - b sin(m w_i)``, ``b' = a sin(m w_i) + b cos(m w_i)``. Angles are
    formed in float64; the rotation runs in float32 (float64 for float64 input).

    References
    ----------
    Su et al., "RoFormer: Enhanced Transformer with Rotary Position Embedding",
    arXiv:2104.09864.

    Examples
    --------
    >>> import numpy as np
    >>> import posenc
    >>> x = np.ones((3, 4))
    >>> np.round(posenc.apply_rope(x, 3, base=100.0), 4)
    array([[ 1.    ,  1.    ,  1.    ,  1.    ],
           [-0.3012,  1.3818,  0.8952,  1.0948],
           [-1.3254,  0.4932,  0.7814,  1.1787]])
    >>> q = np.random.default_rng(0).normal(size=(2, 8, 5, 16))   # (batch, heads, seq, dim)
    >>> ids = np.array([[0, 1, 2, 3, 4], [7, 8, 9, 10, 11]])      # (batch, seq)
    >>> posenc.apply_rope(q, ids, pairing="half", rotary_dim=8).shape
    (2, 8, 5, 16)
    """
    pairing = check_choice(pairing, name="pairing", choices=PAIRINGS)
    x, torch_x = _check_x(x)
    rot = _rotary_dim(rotary_dim, x.shape[-1])
    inv_freq, factor = rope_frequencies(rot, base=base, scaling=scaling, seq_len=seq_len)
    pos = _fit_positions(positions, x)
    cos, sin = _cos_sin(pos, inv_freq, factor, dtype=_work_dtype(x))
    return _rotate(x, cos, sin, pairing=pairing, rotary_dim=rot)


def rope_permutation(dim, *, inverse=False):
    """Row permutation of a q/k projection from interleaved to half pairing (Meta -> HF Llama).

    For a per-head projection ``W`` (rows are the head's ``dim`` features), ``W[perm]`` used
    with ``pairing="half"`` gives the same attention scores as ``W`` with
    ``pairing="interleaved"``: ``perm = [0, 2, 4, ..., 1, 3, 5, ...]`` moves pair ``i`` from
    rows ``(2i, 2i+1)`` to rows ``(i, i + dim/2)``, keeping its frequency. This is what
    ``permute`` in HF's ``convert_llama_weights_to_hf.py`` does to every head of ``wq`` and
    ``wk``. The inverse (HF -> Meta, half -> interleaved) is ``np.argsort(perm)``, returned
    with ``inverse=True``.

    Parameters
    ----------
    dim : int
        Head dim (rotated width), a positive even integer.
    inverse : bool, default False
        Return the half -> interleaved permutation instead.

    Returns
    -------
    numpy.ndarray of shape (dim,), int64

    Raises
    ------
    TypeError, ValueError
        ``dim`` not a positive even integer; ``inverse`` not a bool.

    See Also
    --------
    apply_rope : its ``pairing`` argument.

    Notes
    -----
    ``apply_rope(x[..., perm], p, pairing="half") == apply_rope(x, p)[..., perm]``; a shared
    permutation of q and k leaves every dot product unchanged. For a full projection of
    ``n_heads`` heads: ``W.reshape(n_heads, dim, -1)[:, perm].reshape(n_heads * dim, -1)``.

    Examples
    --------
    >>> import posenc
    >>> posenc.rope_permutation(8)
    array([0, 2, 4, 6, 1, 3, 5, 7])
    >>> posenc.rope_permutation(8, inverse=True)
    array([0, 4, 1, 5, 2, 6, 3, 7])
    """
    dim = check_dim(dim)
    if not isinstance(inverse, (bool, np.bool_)):
        raise TypeError(f"inverse must be a bool, got {inverse!r} ({type(inverse).__name__})")
    perm = np.concatenate([np.arange(0, dim, 2), np.arange(1, dim, 2)]).astype(np.int64)
    return np.argsort(perm).astype(np.int64) if inverse else perm


# --- shared with posenc.torch.RotaryEmbedding (not public) ------------------------------------


def _check_x(x):
    if is_torch(x):
        if not x.is_floating_point():
            raise TypeError(f"x must be a floating tensor, got Tensor of dtype {x.dtype}")
        if x.dim() < 2:
            raise ValueError(f"x must have shape (..., seq, dim), got shape {tuple(x.shape)}")
        return x, True
    if isinstance(x, (numbers.Number, str, bytes)) or x is None:
        raise TypeError(f"x must be a floating array of shape (..., seq, dim), got {type(x).__name__}")
    arr = np.asarray(x)
    if arr.dtype.kind != "f":
        raise TypeError(f"x must be a floating array of shape (..., seq, dim), got dtype {arr.dtype}")
    if arr.ndim < 2:
        raise ValueError(f"x must have shape (..., seq, dim), got shape {arr.shape}")
    return arr, False


def _rotary_dim(rotary_dim, width, *, what="x's last axis"):
    if rotary_dim is None:
        if width % 2:
            raise ValueError(f"{what} must be even to rotate all of it, got {width}; pass rotary_dim")
        return width
    rot = check_dim(rotary_dim, name="rotary_dim")
    if rot > width:
        raise ValueError(f"rotary_dim must be <= {what} ({width}), got {rot}")
    return rot


def _fit_positions(positions, x):
    """Positions in ``x``'s library and device, shaped to broadcast against ``x.shape[:-1]``."""
    want = tuple(x.shape[:-1])
    if isinstance(positions, numbers.Integral) and not isinstance(positions, bool):
        pos, _ = as_positions(positions)
        if len(pos) != want[-1]:
            raise ValueError(
                f"positions as an int is a count and must equal x's seq axis ({want[-1]}), got {len(pos)}"
            )
    else:
        pos, torch_pos = as_positions(positions)
        if torch_pos and not is_torch(x):
            raise TypeError("positions is a torch tensor but x is a NumPy array; pass both from one library")
        if torch_pos and pos.device != x.device:
            raise ValueError(f"positions is on {pos.device} but x is on {x.device}; move one of them")
    shape = tuple(pos.shape)
    if len(shape) > len(want):
        raise ValueError(f"positions of shape {shape} have more axes than x.shape[:-1] = {want}")
    if 0 < len(shape) < len(want) and shape[-1] == 1 and want[-1] != 1:
        # (seq, 1) meant for a (batch, seq, heads, dim) layout would line seq up with batch
        raise ValueError(
            f"positions of shape {shape} have a size-1 last axis, but that axis runs along x's seq "
            f"axis (x.shape = {tuple(x.shape)}); for a (batch, seq, heads, dim) layout pass "
            f"positions with one axis per axis of x.shape[:-1], e.g. shape (1, seq, 1)"
        )
    if shape:
        shape = shape[:-1] + (1,) * (len(want) - len(shape)) + shape[-1:]
    else:
        shape = (1,) * len(want)
    try:
        fits = np.broadcast_shapes(shape, want) == want
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(
            f"positions of shape {tuple(pos.shape)} do not fit x of shape {tuple(x.shape)}: the last "
            "axis of positions runs along seq (x's axis -2), its other axes line up with x's leading "
            f"axes from the left; expected e.g. ({want[-1]},) or a shape broadcastable to {want}"
        )
    if is_torch(x):
        torch = sys.modules["torch"]
        pos = torch.as_tensor(pos, device=x.device)
    return pos.reshape(shape)


def _work_dtype(x):
    """The dtype the rotation runs in: float64 for float64 input, else float32."""
    if is_torch(x):
        torch = sys.modules["torch"]
        return torch.float64 if x.dtype == torch.float64 else torch.float32
    return np.dtype(np.float64) if x.dtype.itemsize >= 8 else np.dtype(np.float32)


def _cos_sin(pos, inv_freq, factor, dtype=None):
    """``attention_factor * cos(p w)`` and ``... sin(p w)``, shape ``pos.shape + (r/2,)``.

    Exact to the output dtype (float64 by default): the angles are formed in float64, by the
    anchor-and-rotation method of :func:`posenc.sinusoidal` where positions run in steps.
    """
    if is_torch(pos):
        torch = sys.modules["torch"]
        dtype = torch.float64 if dtype is None else dtype
    else:
        dtype = np.dtype(np.float64) if dtype is None else np.dtype(dtype)
    table = _sin_cos(pos, inv_freq, dtype)  # (..., r): sin, cos interleaved
    sin, cos = table[..., 0::2], table[..., 1::2]
    if factor != 1.0:
        cos, sin = cos * factor, sin * factor
    return cos, sin


def _rotate(x, cos, sin, *, pairing, rotary_dim):
    """Rotate the first ``rotary_dim`` features of ``x`` by precomputed cos/sin (any float dtype)."""
    rot, half = rotary_dim, rotary_dim // 2
    if is_torch(x):
        return _rotate_torch(x, cos, sin, pairing=pairing, rot=rot)
    work = np.float64 if x.dtype.itemsize >= 8 else np.float32
    cos, sin = cos.astype(work, copy=False), sin.astype(work, copy=False)
    xr = x[..., :rot].astype(work, copy=False)
    if pairing == "interleaved":
        a, b = xr[..., 0::2], xr[..., 1::2]
        out = np.stack((a * cos - b * sin, a * sin + b * cos), axis=-1).reshape(a.shape[:-1] + (rot,))
    else:
        a, b = xr[..., :half], xr[..., half:]
        out = np.concatenate((a * cos - b * sin, a * sin + b * cos), axis=-1)
    out = out.astype(x.dtype, copy=False)
    return out if rot == x.shape[-1] else np.concatenate((out, x[..., rot:]), axis=-1)


def _rotate_torch(x, cos, sin, *, pairing, rot):
    """The torch rotation, written for memory traffic: one output allocation, no temporaries the
    size of ``x`` (float32/float64 inputs), and the interleaved pairs as one complex multiply."""
    torch = sys.modules["torch"]
    half = rot // 2
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    cos, sin = cos.to(work), sin.to(work)  # (..., seq, half): small
    if torch.is_grad_enabled() and (x.requires_grad or cos.requires_grad or sin.requires_grad):
        return _rotate_torch_autograd(x, cos, sin, pairing=pairing, rot=rot, work=work)
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    src = x[..., :rot] if x.dtype == work else x[..., :rot].to(work)
    dst = out[..., :rot] if x.dtype == work else torch.empty(src.shape, dtype=work, device=x.device)
    pairs_ok = src.dim() < 2 or all(st % 2 == 0 for st in src.stride()[:-1])
    if pairing == "interleaved" and pairs_ok and all(st % 2 == 0 for st in dst.stride()[:-1]):
        # (a + ib) * (cos + i sin): a' = a cos - b sin, b' = a sin + b cos
        cis = torch.complex(cos, sin)
        src_c = torch.view_as_complex(src.unflatten(-1, (half, 2)))
        torch.mul(src_c, cis, out=torch.view_as_complex(dst.unflatten(-1, (half, 2))))
    else:
        # a' = a cos - b sin, b' = b cos + a sin, as dst = src * [cos, cos] and two multiply-adds,
        # in chunks of the seq axis small enough that the multiply-adds find dst in cache
        even = slice(0, None, 2) if pairing == "interleaved" else slice(0, half)
        odd = slice(1, None, 2) if pairing == "interleaved" else slice(half, rot)
        both = torch.empty(cos.shape[:-1] + (rot,), dtype=work, device=x.device)
        both[..., even], both[..., odd] = cos, cos
        seq = src.shape[-2]
        lead = math.prod(src.shape[:-2])
        shared = all(n == 1 for n in cos.shape[:-2])  # one cos/sin for every leading row
        if shared and src.is_contiguous() and dst.is_contiguous() and lead > 1:
            # whole (seq, rot) slabs at a time, ~1 MB each, so the multiply-adds find dst in cache
            src3, dst3 = src.reshape(lead, seq, rot), dst.view(lead, seq, rot)
            c, sn = both.reshape(seq, rot), sin.reshape(seq, half)
            step = max(1, 2**20 // (seq * rot * src.element_size()))
            chunks = [(src3[i : i + step], dst3[i : i + step]) for i in range(0, lead, step)]
        else:
            c, sn, chunks = both, sin, [(src, dst)]
        for xs, ds in chunks:
            torch.mul(xs, c, out=ds)
            ds[..., even].addcmul_(xs[..., odd], sn, value=-1)
            ds[..., odd].addcmul_(xs[..., even], sn)
    if x.dtype != work:
        out[..., :rot].copy_(dst)
    if rot < x.shape[-1]:
        out[..., rot:].copy_(x[..., rot:])
    return out


def _rotate_torch_autograd(x, cos, sin, *, pairing, rot, work):
    """The same rotation in differentiable ops (``out=`` arguments do not support autograd)."""
    torch = sys.modules["torch"]
    half = rot // 2
    src = x[..., :rot].to(work)
    if pairing == "interleaved":
        a, b = src[..., 0::2], src[..., 1::2]
        out = torch.stack((a * cos - b * sin, a * sin + b * cos), dim=-1).flatten(-2)
    else:
        a, b = src[..., :half], src[..., half:]
        out = torch.cat((a * cos - b * sin, b * cos + a * sin), dim=-1)
    out = out.to(x.dtype)
    return out if rot == x.shape[-1] else torch.cat((out, x[..., rot:]), dim=-1)

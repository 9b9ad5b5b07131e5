"""RoPE frequencies and the context-extension scalings of Hugging Face's ``rope_scaling``.

:func:`rope_frequencies` gives the inverse frequencies ``w_i`` and the attention factor that
:func:`posenc.apply_rope` and :class:`posenc.torch.RotaryEmbedding` rotate with: plain RoPE
(Su et al., 2021) and HF's ``"linear"``, ``"dynamic"``, ``"yarn"``, ``"llama3"`` and
``"longrope"`` scalings, with every key of the ``scaling`` dict checked by name. The rotation
itself lives in :mod:`posenc.rope`, which re-exports :func:`rope_frequencies`.

Lengths (``seq_len``, ``original_max_position_embeddings``) are at most ``2**53``, the largest
count float64 holds exactly; every derived number (the dynamic NTK base, YaRN's attention
factor) is checked to be finite and positive, so a bad combination of keys is refused by name
instead of giving a sign flip, ``inf`` or a ``ZeroDivisionError``.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from typing import Any

import numpy as np

from ._array import (
    check_base,
    check_choice,
    check_dim,
    compiling,
    static_value,
    traced_constant,
)
from ._typing import FloatArray

__all__ = ["rope_frequencies"]

ROPE_TYPES = ("default", "linear", "dynamic", "yarn", "llama3", "longrope")
# Lengths: past 2**53 float64 does not hold every integer, and the formulas divide by them.
MAX_LENGTH = 2**53

# rope_type: (required keys, optional keys); "rope_type"/"type" and "rope_theta" are always allowed.
_KEYS = {
    "default": ((), ()),
    "linear": (("factor",), ()),
    "dynamic": (("factor", "original_max_position_embeddings"), ()),
    "yarn": (
        ("factor", "original_max_position_embeddings"),
        ("beta_fast", "beta_slow", "mscale", "mscale_all_dim", "attention_factor", "truncate"),
    ),
    "llama3": (
        ("factor", "original_max_position_embeddings", "low_freq_factor", "high_freq_factor"),
        (),
    ),
    "longrope": (
        ("short_factor", "long_factor", "original_max_position_embeddings"),
        ("factor", "attention_factor"),
    ),
}


def rope_frequencies(
    dim: int,
    *,
    base: float = 10000.0,
    scaling: Mapping[str, Any] | None = None,
    seq_len: int | None = None,
) -> tuple[FloatArray, float]:
    """RoPE inverse frequencies (Su et al., 2021) and the attention factor, with HF's scalings.

    Parameters
    ----------
    dim : int
        The rotated width (the head dim, or ``rotary_dim`` for partial rotary), even, at most
        ``2**53``.
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

        Keys are strings. A ``"rope_theta"`` key is allowed if it equals ``base``. Keys set to
        None count as absent (as in HF). Unknown keys are refused.
    seq_len : int, optional
        The current sequence length, read by ``"dynamic"`` (NTK base grows once
        ``seq_len > original_max_position_embeddings``) and ``"longrope"`` (``long_factor``
        once ``seq_len > original_max_position_embeddings``). HF passes ``max(position_ids) + 1``.
        None means the trained length. Ignored by the other types. At most ``2**53``.

    Returns
    -------
    inv_freq : numpy.ndarray of shape (dim // 2,), float64
    attention_factor : float
        HF's ``attention_scaling``: cos and sin are multiplied by it (yarn and longrope; 1.0
        for the others). Always finite and > 0.

    Raises
    ------
    TypeError
        ``dim`` not an integer, ``scaling`` not a dict, a key that is not a string, a value of
        the wrong type (named as ``scaling['key']``).
    ValueError
        ``dim`` odd or <= 0, bad ``base``, unknown ``rope_type`` (the valid ones are listed),
        missing or unknown keys, ``factor < 1``, ``high_freq_factor < low_freq_factor``,
        ``beta_fast < beta_slow``, factor lists of the wrong length, a length above ``2**53``,
        a YaRN ``mscale`` / ``mscale_all_dim`` whose term ``0.1 * mscale * ln(factor) + 1`` is
        <= 0 (the attention factor would flip the sign of q and k, or divide by zero), a
        dynamic NTK base that overflows float64.

    See Also
    --------
    apply_rope : rotates queries and keys with these frequencies.

    Notes
    -----
    Plain: ``w_i = base ** (-2 i / dim)``. Linear (position interpolation): ``w_i / factor``.
    Dynamic NTK: ``base' = base * (factor * L / L0 - (factor - 1)) ** (dim / (dim - 2))`` with
    ``L = max(seq_len, L0)``. YaRN: ``w_i / factor`` for slow pairs, ``w_i`` for fast ones and a
    linear ramp over the pair index between ``beta_slow`` and ``beta_fast`` rotations over
    ``L0``; attention factor ``0.1 ln(factor) + 1``, or ``g(mscale) / g(mscale_all_dim)`` with
    ``g(m) = 0.1 m ln(factor) + 1`` when both are set. Llama 3: ``w_i / factor`` for
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
    if compiling():
        # traced: every number made static (see static_value), then the constant function runs
        # once at trace time
        return _frequencies_constant(
            static_value(dim), static_value(base), _static_scaling(scaling), static_value(seq_len)
        )
    return _frequencies(dim, base, scaling, seq_len)


def _static_scaling(scaling: Any) -> Any:
    """``scaling`` with every number static, for the traced constant below (which needs Python
    constants); anything unhashable or not a plain dict/list is left to its checks."""
    if isinstance(scaling, Mapping):
        return {k: _static_scaling(v) for k, v in scaling.items()}
    if isinstance(scaling, (list, tuple)):
        return type(scaling)(_static_scaling(v) for v in scaling)
    if isinstance(scaling, numbers.Number):
        return static_value(scaling)
    return scaling


def _frequencies(dim: Any, base: Any, scaling: Any, seq_len: Any) -> tuple[FloatArray, float]:
    dim = _check_width(dim, "dim")
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


# torch.compile / torch.export: the result depends only on these Python arguments, so the tracer
# may call the function as it is and keep its result as a constant, instead of tracing its NumPy
# arithmetic as tensor ops (which fails under torch.set_default_device). traced_constant sets the
# flag that torch.compiler.assume_constant_result sets, so that importing posenc never imports
# torch. rope_frequencies makes its arguments static first: a constant function cannot take a
# number that dynamo traces as symbolic (a base or factor that changed between calls).
_frequencies_constant = traced_constant(_frequencies)


def _dynamic(
    params: dict[str, Any], dim: int, base: float, i: FloatArray, seq_len: int | None
) -> FloatArray:
    factor, trained = params["factor"], params["original_max_position_embeddings"]
    length = trained if seq_len is None else max(seq_len, trained)
    if dim == 2:  # one pair, frequency base**0 = 1 whatever the base (HF divides by dim - 2)
        return np.ones(1)
    try:
        grown = base * (factor * length / trained - (factor - 1)) ** (dim / (dim - 2))
    except OverflowError:
        grown = math.inf
    if not math.isfinite(grown):
        raise ValueError(
            f"seq_len = {length} with scaling['factor'] = {factor:g} and "
            f"scaling['original_max_position_embeddings'] = {trained} makes the dynamic NTK base "
            "overflow float64; pass a smaller seq_len or factor"
        )
    out: FloatArray = np.float64(grown) ** -i
    return out


def _yarn(
    params: dict[str, Any], dim: int, base: float, plain: FloatArray
) -> tuple[FloatArray, float]:
    factor, trained = params["factor"], params["original_max_position_embeddings"]
    attention = params.get("attention_factor")
    if attention is None:
        mscale, mscale_all = params.get("mscale"), params.get("mscale_all_dim")
        if mscale and mscale_all:  # HF: both set and non-zero, else the plain 0.1 ln(s) + 1
            attention = _yarn_mscale(factor, mscale, "mscale") / _yarn_mscale(
                factor, mscale_all, "mscale_all_dim"
            )
            if not math.isfinite(attention):
                raise ValueError(
                    f"scaling['mscale'] = {mscale:g} and scaling['mscale_all_dim'] = {mscale_all:g} "
                    f"with scaling['factor'] = {factor:g} give an attention factor that overflows "
                    "float64; expected g(mscale) / g(mscale_all_dim) finite"
                )
        else:
            attention = _yarn_mscale(factor, 1.0, None)
    beta_fast = params.get("beta_fast", 32.0)
    beta_slow = params.get("beta_slow", 1.0)

    def pair_index(rotations: float) -> float:  # the pair whose wavelength fits `rotations` times
        wavelength = trained / (rotations * 2 * math.pi)  # inf or 0 for extreme betas
        if wavelength == 0:
            return -math.inf
        return dim * math.log(wavelength) / (2 * math.log(base))

    # As transformers' find_correction_range and the code released with the paper: floor the
    # low bound and ceil the high one, then clamp low from below only (>= 0) and high from
    # above only (<= dim - 1). The two bounds may then cross (low > high, a long trained length
    # or a small base): the ramp then runs backwards, and HF's blend with it is what a checkpoint
    # expects, so it is kept. Note the ramp runs over dim // 2 pairs but the clamp is dim - 1.
    low = max(pair_index(beta_fast), 0.0)
    high = min(pair_index(beta_slow), dim - 1.0)
    pairs = np.arange(dim // 2, dtype=np.float64)
    if low == math.inf or high == -math.inf:
        # an index past float64 (a beta near 0 or past 1e300; HF's floor/ceil raise here): the
        # limit of HF's ramp, 1 (interpolate every pair) as low -> inf, 0 as high -> -inf
        ramp = np.full(dim // 2, 1.0 if low == math.inf else 0.0)
    else:
        if params.get("truncate", True):
            low, high = float(math.floor(low)), float(math.ceil(high))
        if low == high:
            high += 0.001  # as in the reference code: avoids 0 / 0
        ramp = np.clip((pairs - low) / (high - low), 0.0, 1.0)
    inv_freq = (plain / factor) * ramp + plain * (1.0 - ramp)
    return inv_freq, float(attention)


def _yarn_mscale(scale: float, mscale: float, key: str | None) -> float:
    """``0.1 * mscale * ln(scale) + 1`` (1 for ``scale <= 1``); refuses a value <= 0 by key."""
    value = 1.0 if scale <= 1 else 0.1 * mscale * math.log(scale) + 1.0
    if not (0 < value < math.inf):  # only reachable with a set mscale (key is then a name)
        raise ValueError(
            f"scaling[{key!r}] = {mscale:g} with scaling['factor'] = {scale:g} gives "
            f"0.1 * {key} * ln(factor) + 1 = {value:.6g}, but YaRN's attention factor "
            "g(mscale) / g(mscale_all_dim) needs both terms finite and > 0 (a term <= 0 flips the "
            f"sign of every rotated q and k, or divides by zero); expected {key} > "
            f"{-1 / (0.1 * math.log(scale)):.6g}"
        )
    return value


def _llama3(params: dict[str, Any], plain: FloatArray) -> FloatArray:
    factor = params["factor"]
    low_ff, high_ff = params["low_freq_factor"], params["high_freq_factor"]
    trained = params["original_max_position_embeddings"]
    wavelen = 2 * math.pi / plain
    low_wavelen, high_wavelen = trained / low_ff, trained / high_ff
    out = np.where(wavelen > low_wavelen, plain / factor, plain)
    if high_ff == low_ff:  # no middle band (Llama 4 Scout): divide or keep, nothing between
        return out
    smooth = (trained / wavelen - low_ff) / (high_ff - low_ff)
    medium = ~(wavelen < high_wavelen) & ~(wavelen > low_wavelen)
    result: FloatArray = np.where(medium, (1 - smooth) * out / factor + smooth * out, out)
    return result


def _longrope(
    params: dict[str, Any], plain: FloatArray, seq_len: int | None
) -> tuple[FloatArray, float]:
    trained = params["original_max_position_embeddings"]
    long = seq_len is not None and seq_len > trained
    ext = np.asarray(params["long_factor" if long else "short_factor"], dtype=np.float64)
    attention = params.get("attention_factor")
    if attention is None:
        factor = params["factor"]
        attention = 1.0 if factor <= 1 else math.sqrt(1 + math.log(factor) / math.log(trained))
    return plain / ext, float(attention)


# --- validation of `scaling` -------------------------------------------------------------------


def _check_width(value: Any, name: str) -> int:
    """A positive even width, at most 2**53 (the ladder has one float64 per pair)."""
    width = check_dim(value, name=name)
    if width > MAX_LENGTH:
        raise ValueError(f"{name} must be a positive even integer <= 2**53, got {width}")
    return width


def _positive_int(value: Any, name: str, *, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(
            f"{name} must be an integer >= {minimum}, got {value!r} ({type(value).__name__})"
        )
    if int(value) < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {int(value)}")
    if int(value) > MAX_LENGTH:
        raise ValueError(
            f"{name} must be an integer <= 2**53 (the largest length float64 holds exactly), "
            f"got {int(value)}"
        )
    return int(value)


def _real(value: Any, name: str, *, minimum: float | None = None, strict: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(
            f"{name} must be a finite real number, got {value!r} ({type(value).__name__})"
        )
    try:
        value = float(value)
    except OverflowError:  # an int past float64's range
        raise ValueError(f"{name} must be a finite real number, got {value!r}") from None
    if not math.isfinite(value):
        raise ValueError(f"{name} must be a finite real number, got {value}")
    if minimum is not None and (value <= minimum if strict else value < minimum):
        raise ValueError(f"{name} must be {'>' if strict else '>='} {minimum:g}, got {value:g}")
    return value


def _check_scaling(scaling: Any, dim: int, base: float) -> tuple[str, dict[str, Any]]:
    """Validate ``scaling``; return ``(rope_type, params)`` with params' values checked."""
    if scaling is None:
        return "default", {}
    if not isinstance(scaling, Mapping):
        raise TypeError(
            f"scaling must be None or a dict like HF's rope_scaling, got {type(scaling).__name__}"
        )
    bad_keys = [k for k in scaling if not isinstance(k, str)]
    if bad_keys:
        shown = ", ".join(f"{k!r} ({type(k).__name__})" for k in bad_keys)
        raise TypeError(f"scaling must have string keys (like HF's rope_scaling), got {shown}")
    raw = {k: v for k, v in scaling.items() if v is not None}
    rope_type = raw.pop("rope_type", None)
    legacy = raw.pop("type", None)
    for key, value in (("rope_type", rope_type), ("type", legacy)):
        if value is not None and not isinstance(value, str):
            raise TypeError(
                f"scaling[{key!r}] must be a string, one of {', '.join(map(repr, ROPE_TYPES))}, "
                f"got {value!r} ({type(value).__name__})"
            )
    if rope_type is None:
        rope_type = legacy
    elif legacy is not None and legacy != rope_type:
        raise ValueError(
            f"scaling has 'rope_type'={rope_type!r} and 'type'={legacy!r}; they must agree"
        )
    if rope_type is None:
        raise ValueError(
            "scaling must name its 'rope_type' (one of " + ", ".join(map(repr, ROPE_TYPES)) + ")"
        )
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
    params: dict[str, Any] = {}
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
    if rope_type == "llama3" and params["high_freq_factor"] < params["low_freq_factor"]:
        # equal factors are Llama 4 Scout's: transformers warns, and the middle band is empty
        raise ValueError(
            "scaling['high_freq_factor'] must be >= scaling['low_freq_factor'], got "
            f"high_freq_factor={params['high_freq_factor']:g} and low_freq_factor={params['low_freq_factor']:g}"
        )
    if rope_type == "longrope" and "factor" not in params and "attention_factor" not in params:
        raise ValueError(
            "scaling for rope_type='longrope' needs 'factor' or 'attention_factor' (HF derives "
            "factor = max_position_embeddings / original_max_position_embeddings)"
        )
    return rope_type, params


def _factor_list(value: Any, name: str, dim: int) -> list[float]:
    """``dim // 2`` finite numbers > 0, from a list, tuple or 1-D array."""
    want = f"a list of dim // 2 = {dim // 2} positive numbers"
    if isinstance(value, np.ndarray):
        if value.ndim != 1:
            raise ValueError(
                f"{name} must hold dim // 2 = {dim // 2} numbers, got shape {value.shape}"
            )
        if value.dtype == np.bool_ or value.dtype.kind not in "iuf":
            raise TypeError(f"{name} must be {want}, got dtype {value.dtype}")
        value = value.tolist()
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"{name} must be {want}, got {type(value).__name__}")
    for k, v in enumerate(value):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
            raise TypeError(f"{name} must be {want}, got {v!r} ({type(v).__name__}) at index {k}")
    if len(value) != dim // 2:
        raise ValueError(
            f"{name} must hold dim // 2 = {dim // 2} numbers, got shape ({len(value)},)"
        )
    out = []
    for k, v in enumerate(value):
        try:
            f = float(v)
        except OverflowError:  # an int past float64's range
            f = math.inf
        if not (0 < f < math.inf):
            raise ValueError(f"{name} must hold finite numbers > 0, got {v!r} at index {k}")
        out.append(f)
    return out

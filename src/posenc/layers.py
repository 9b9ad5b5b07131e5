"""Layer patterns: which layers rotate, with which base and window (NoPE/iRoPE, local/global bases).

Recent models do not give every layer the same position encoding. Llama 4 leaves every fourth
layer without RoPE (NoPE; "iRoPE") and sharpens the attention of those layers at long
positions; Gemma 2/3, ModernBERT and Cohere2 alternate sliding-window layers and full-attention
layers, with a small RoPE base on the local layers and a large one (or none) on the global ones.

:func:`llama4_nope_layers` and :func:`llama4_attn_scale` reproduce
``transformers.models.llama4`` (5.23); :func:`layer_rope_parameters` reads a config (a dict, as
in ``config.json``, or a ``transformers`` config object) and returns one layer's RoPE
parameters as a :class:`LayerRope`, which feeds :func:`posenc.rope_frequencies` directly.
"""

from __future__ import annotations

import math
import numbers
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from ._array import _describe, as_positions, check_base, compiling, result_dtype
from ._typing import DTypeLike, FloatArray, PositionsLike

if TYPE_CHECKING:
    from ._typing import Tensor, TorchDType

# LayerRope is the result type of layer_rope_parameters: posenc.layers.LayerRope, not a top-level
# name (nothing builds one by hand).
__all__ = ["layer_rope_parameters", "llama4_attn_scale", "llama4_nope_layers"]

_MAX = 2**53
_LAYERS = 2**20  # more layers than any model has: refused before a loop over them


def _int(value: Any, name: str, *, minimum: int, maximum: int = _MAX) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer >= {minimum}, got {_describe(value)}")
    value = int(value)
    if not minimum <= value <= maximum:
        raise ValueError(f"{name} must be an integer in [{minimum}, {maximum}], got {value}")
    return value


def llama4_nope_layers(
    num_hidden_layers: int,
    *,
    no_rope_layers: Any = None,
    no_rope_layer_interval: int = 4,
) -> tuple[int, ...]:
    """Experimental. The indices (from 0) of Llama 4's NoPE layers: the layers without RoPE.

    Llama 4 interleaves layers that rotate queries and keys (RoPE, chunked local attention) with
    layers that do not (NoPE, full causal attention): "iRoPE". This reproduces
    ``Llama4TextConfig.__post_init__`` and ``Llama4TextAttention.use_rope`` of transformers 5.23.

    Parameters
    ----------
    num_hidden_layers : int
        Number of decoder layers, 1 to 2**20.
    no_rope_layers : sequence of 0/1, optional
        HF's ``no_rope_layers``: despite its name, a **1 means the layer uses RoPE** and a 0 that
        it is a NoPE layer. At least ``num_hidden_layers`` entries (the first ones are read).
        None or empty: the default pattern from ``no_rope_layer_interval`` (as in HF, where an
        empty list also falls back to the default).
    no_rope_layer_interval : int, default 4
        Without ``no_rope_layers``: layer ``i`` is NoPE when ``(i + 1) % interval == 0``, so
        with 4 the NoPE layers are 3, 7, 11, ... (the last of each group of four).

    Returns
    -------
    tuple of int
        The NoPE layer indices, ascending.

    Raises
    ------
    TypeError
        A count that is not an integer, ``no_rope_layers`` not a sequence of 0/1 integers.
    ValueError
        A count < 1, ``no_rope_layers`` shorter than ``num_hidden_layers`` or holding a value
        other than 0 and 1.

    See Also
    --------
    llama4_attn_scale : the query scale of the NoPE layers.
    layer_rope_parameters : the same pattern read from a config.

    References
    ----------
    Meta, "The Llama 4 herd" (2025-04-05). Kazemnejad et al., "The Impact of Positional Encoding
    on Length Generalization in Transformers", arXiv:2305.19466.

    Examples
    --------
    >>> import posenc
    >>> posenc.llama4_nope_layers(8)
    (3, 7)
    >>> posenc.llama4_nope_layers(4, no_rope_layers=[1, 0, 1, 1])
    (1,)
    """
    n = _int(num_hidden_layers, "num_hidden_layers", minimum=1, maximum=_LAYERS)
    interval = _int(no_rope_layer_interval, "no_rope_layer_interval", minimum=1)
    if no_rope_layers is None or (
        isinstance(no_rope_layers, (list, tuple)) and len(no_rope_layers) == 0
    ):
        return tuple(i for i in range(n) if (i + 1) % interval == 0)
    if not isinstance(no_rope_layers, (list, tuple)):
        raise TypeError(
            f"no_rope_layers must be a list of 0/1 (1: the layer uses RoPE), "
            f"got {_describe(no_rope_layers)}"
        )
    if len(no_rope_layers) < n:
        raise ValueError(
            f"no_rope_layers must have at least num_hidden_layers={n} entries, "
            f"got {len(no_rope_layers)}"
        )
    out = []
    for i, flag in enumerate(no_rope_layers[:n]):
        if not isinstance(flag, numbers.Integral):
            raise TypeError(f"no_rope_layers[{i}] must be 0 or 1, got {_describe(flag)}")
        if int(flag) not in (0, 1):
            raise ValueError(f"no_rope_layers[{i}] must be 0 or 1, got {int(flag)}")
        if int(flag) == 0:
            out.append(i)
    return tuple(out)


@overload
def llama4_attn_scale(
    positions: Tensor,
    floor_scale: int = ...,
    attn_scale: float = ...,
    *,
    dtype: TorchDType | None = ...,
) -> Tensor: ...
@overload
def llama4_attn_scale(
    positions: PositionsLike,
    floor_scale: int = ...,
    attn_scale: float = ...,
    *,
    dtype: DTypeLike = ...,
) -> FloatArray: ...
def llama4_attn_scale(
    positions: Tensor | PositionsLike,
    floor_scale: int = 8192,
    attn_scale: float = 0.1,
    *,
    dtype: Any = None,
) -> Tensor | FloatArray:
    """Experimental. Llama 4's attention temperature of NoPE layers: the factor on each query.

    ``s(p) = 1 + attn_scale * log(1 + floor((p + 1) / floor_scale))``: 1 for the first
    ``floor_scale - 1`` positions, then growing like a logarithm, in steps. HF multiplies the
    queries of NoPE layers by it (``attn_temperature_tuning=True``), before the softmax scale
    ``1/sqrt(head_dim)``, so the logits of a query at position ``p`` are ``s(p)`` times larger.
    Exactly ``Llama4TextAttention.forward`` of transformers 5.23 (which computes it in float32;
    here in float64, then rounded to ``dtype``).

    Parameters
    ----------
    positions : int or array of shape (...,)
        A Python ``int`` ``n`` means ``0 .. n-1``; otherwise the positions, integer or float,
        >= 0. Note that HF uses ``arange(seq) + cache length``, not ``position_ids``: with left
        padding the scale follows the slot, not the token's position id.
    floor_scale : int, default 8192
        HF ``floor_scale``, >= 1.
    attn_scale : float, default 0.1
        HF ``attn_scale``, finite and >= 0.
    dtype : floating dtype, optional
        Default float64 for NumPy (and int) input, ``torch.get_default_dtype()`` for tensors.

    Returns
    -------
    array of shape positions.shape
        NumPy for NumPy/int input; a tensor on the input's device for tensor input.

    Raises
    ------
    TypeError
        Positions not real numbers, ``floor_scale`` not an integer, ``attn_scale`` not a real
        number, ``dtype`` not floating.
    ValueError
        Positions negative or not finite, ``floor_scale < 1``, ``attn_scale`` negative or not
        finite.

    See Also
    --------
    llama4_nope_layers : which layers this applies to.

    References
    ----------
    Nakanishi, "Scalable-Softmax Is Superior for Attention", arXiv:2501.19399 (cited by the HF
    code for this tuning). transformers 5.23, ``models/llama4/modeling_llama4.py``.

    Examples
    --------
    >>> import numpy as np
    >>> import posenc
    >>> np.round(posenc.llama4_attn_scale(np.array([0, 8190, 8191, 16383])), 6)
    array([1.      , 1.      , 1.069315, 1.109861])
    """
    pos, torch_in = as_positions(positions)
    fs = _int(floor_scale, "floor_scale", minimum=1)
    if isinstance(attn_scale, bool) or not isinstance(attn_scale, numbers.Real):
        raise TypeError(f"attn_scale must be a real number >= 0, got {_describe(attn_scale)}")
    a = float(attn_scale)
    if not (math.isfinite(a) and a >= 0):
        raise ValueError(f"attn_scale must be finite and >= 0, got {a}")
    out_dtype = result_dtype(dtype, torch_out=torch_in)
    if torch_in:
        torch = sys.modules["torch"]
        p = pos.to(torch.float64)
        if p.device.type != "meta" and not compiling() and p.numel() and bool((p < 0).any()):
            raise ValueError("positions must be >= 0, got a negative position")
        return (torch.log1p(torch.floor((p + 1.0) / fs)) * a + 1.0).to(out_dtype)
    p = np.asarray(pos, dtype=np.float64)
    if p.size and bool((p < 0).any()):
        raise ValueError(f"positions must be >= 0, got {p.min()}")
    return (np.log1p(np.floor((p + 1.0) / fs)) * a + 1.0).astype(out_dtype)


@dataclass(frozen=True)
class LayerRope:
    """Experimental. One layer's position encoding, as read by :func:`layer_rope_parameters`.

    Attributes
    ----------
    kind : str
        ``"full"`` (global attention), ``"sliding"`` (a sliding window) or ``"chunked"``
        (Llama 4's chunked local attention).
    rope : bool
        False for a NoPE layer (Llama 4's NoPE layers, Cohere2's full layers).
    base : float or None
        The RoPE base (HF ``rope_theta``) of this layer; None when ``rope`` is False.
    scaling : mapping or None
        The layer's ``rope_parameters`` without ``rope_theta`` and ``partial_rotary_factor``,
        ready for ``rope_frequencies(dim, base=base, scaling=scaling)``; None for plain RoPE
        (or no RoPE).
    partial_rotary_factor : float
        The rotated share of the head dim (1.0: all of it).
    window : int or None
        ``"sliding"``: a causal layer's query ``i`` sees keys ``i - window < j <= i``
        (Gemma, Cohere2); ModernBERT's bidirectional one sees ``|i - j| <= window``
        (``local_attention // 2``). ``"chunked"``: the chunk size. None for full layers.
    bidirectional : bool
        True for an encoder (ModernBERT): no causal mask.
    pairing : str
        ``"half"`` (HF ``rotate_half``) or ``"interleaved"`` (Cohere2, Llama 4), for
        :func:`posenc.apply_rope`.
    """

    kind: str
    rope: bool
    base: float | None
    scaling: Mapping[str, Any] | None
    partial_rotary_factor: float
    window: int | None
    bidirectional: bool
    pairing: str


# model_type -> (nested rope parameters?, (global theta key, default), (local key, default),
#                rope_scaling applies to the local layers too?)
_NESTED = {
    "gemma3_text": (("rope_theta", 1_000_000.0), ("rope_local_base_freq", 10_000.0), False),
    "modernbert": (("global_rope_theta", 160_000.0), ("local_rope_theta", 10_000.0), True),
}
_TYPES = {"full_attention": "full", "sliding_attention": "sliding", "chunked_attention": "chunked"}


def _getter(config: Any) -> Any:
    if isinstance(config, Mapping):

        def get(key: str, default: Any = None) -> Any:
            value = config.get(key)
            return default if value is None else value

    else:

        def get(key: str, default: Any = None) -> Any:
            value = getattr(config, key, None)
            return default if value is None else value

    return get


def _checked_layer_types(types: Any, n: int | None, where: str) -> list[str]:
    """A config's ``layer_types`` (read from ``where``): strings, one per layer when ``n`` is
    known. Shared with posenc.hf, which reads the same key."""
    if not isinstance(types, (list, tuple)) or not all(isinstance(t, str) for t in types):
        raise TypeError(f"{where} must be a list of strings, got {_describe(types)}")
    if n is not None and len(types) != n:
        raise ValueError(f"{where} must have num_hidden_layers = {n} entries, got {len(types)}")
    return list(types)


def _layer_types(get: Any, model_type: str, n: int | None) -> list[str]:
    types = get("layer_types")
    if types is not None:
        return _checked_layer_types(types, n, "config['layer_types']")
    if n is None:
        raise ValueError("config must hold 'num_hidden_layers' or 'layer_types', got neither")
    if model_type == "modernbert":  # layer 0 is global, then every n-th
        every = _int(
            get("global_attn_every_n_layers", 3), "config['global_attn_every_n_layers']", minimum=1
        )
        return ["sliding_attention" if i % every else "full_attention" for i in range(n)]
    default = {"gemma3_text": 6, "cohere2": 4, "gemma2": 2}.get(model_type)
    if default is not None:  # the last layer of each group is global
        key = "config['sliding_window_pattern']"
        pattern = 2 if model_type == "gemma2" else get("sliding_window_pattern", default)
        pattern = _int(pattern, key, minimum=1)
        return ["sliding_attention" if (i + 1) % pattern else "full_attention" for i in range(n)]
    if model_type == "llama4_text":
        nope = set(
            llama4_nope_layers(
                n,
                no_rope_layers=get("no_rope_layers"),
                no_rope_layer_interval=get("no_rope_layer_interval", 4),
            )
        )
        return ["full_attention" if i in nope else "chunked_attention" for i in range(n)]
    return ["full_attention"] * n


def _params(get: Any, model_type: str, layer_type: str) -> dict[str, Any]:
    rp = get("rope_parameters")
    if rp is not None and not isinstance(rp, Mapping):
        raise TypeError(f"config['rope_parameters'] must be a dict, got {_describe(rp)}")
    rp = dict(rp or {})
    nested = any(k in _TYPES for k in rp)
    legacy = get("rope_scaling")
    if legacy is not None and not isinstance(legacy, Mapping):
        raise TypeError(f"config['rope_scaling'] must be a dict, got {_describe(legacy)}")
    if legacy is not None and (dict(legacy) == rp or any(k in _TYPES for k in legacy)):
        legacy = None  # transformers' config objects alias rope_scaling to rope_parameters
    if model_type in _NESTED:
        (gkey, gdef), (lkey, ldef), both = _NESTED[model_type]
        if rp and not nested:
            raise ValueError(
                f"config['rope_parameters'] of a {model_type} config must be nested by layer "
                f"type ('full_attention', 'sliding_attention'), got keys {sorted(rp)}"
            )
        out = dict(rp.get(layer_type) or {"rope_type": "default"})
        if legacy is not None and (layer_type == "full_attention" or both):
            out.update(legacy)
        if layer_type == "full_attention":
            out.setdefault("rope_theta", get(gkey, gdef))
        else:
            out.setdefault("rope_theta", get(lkey, ldef))
    else:
        if nested:
            if rp.get(layer_type) is None:
                raise ValueError(
                    f"config['rope_parameters'] has no entry for layer type {layer_type!r}"
                )
            out = dict(rp[layer_type])
        else:
            out = dict(legacy or rp)
        default = 500_000.0 if model_type == "llama4_text" else 10_000.0
        out.setdefault("rope_theta", get("rope_theta", default))
        if get("partial_rotary_factor") is not None:
            out.setdefault("partial_rotary_factor", get("partial_rotary_factor"))
    rope_type = out.pop("type", None)
    out.setdefault("rope_type", rope_type or "default")
    if out["rope_type"] in ("llama3", "yarn", "longrope", "dynamic"):
        original = get("original_max_position_embeddings")
        if original is not None and out["rope_type"] != "dynamic":
            out["original_max_position_embeddings"] = original
        else:
            out.setdefault("original_max_position_embeddings", get("max_position_embeddings"))
    return out


def layer_rope_parameters(config: Any, layer: int) -> LayerRope:
    """Experimental. The RoPE parameters of layer ``layer`` (from 0) of a model config.

    Reads a ``config.json`` dict (old keys or transformers-5 keys) or a ``transformers`` config
    object, and resolves them the way transformers 5.23 does (``convert_rope_params_to_dict``,
    ``standardize_rope_params`` and the models' default patterns). Keys read (None = absent):

    - ``model_type``: picks the defaults below; ``"gemma3"`` and ``"llama4"`` (multimodal)
      are read through their ``text_config``. Any other type is generic.
    - ``num_hidden_layers``; ``layer_types`` (``"full_attention"``, ``"sliding_attention"``,
      ``"chunked_attention"``), else the model's default pattern: Gemma 3 and Cohere2 make
      layer ``i`` full when ``(i + 1) % sliding_window_pattern == 0`` (defaults 6 and 4),
      Gemma 2 alternates (1, 3, 5, ... full), ModernBERT makes it full when
      ``i % global_attn_every_n_layers == 0`` (default 3: layer 0 is global), Llama 4 and
      SmolLM3 read ``no_rope_layers`` / ``no_rope_layer_interval`` for their NoPE layers (see
      :func:`llama4_nope_layers`); generic configs without ``layer_types``: every layer full.
    - ``rope_parameters`` (flat, or nested by layer type), ``rope_scaling`` (legacy),
      ``rope_theta``, ``partial_rotary_factor``, ``max_position_embeddings`` and
      ``original_max_position_embeddings``; Gemma 3: ``rope_local_base_freq`` (default 10000)
      and ``rope_theta`` (default 1e6), ``rope_scaling`` on full layers only; ModernBERT:
      ``local_rope_theta`` (10000) and ``global_rope_theta`` (160000), ``rope_scaling`` on both;
      others: ``rope_theta`` (default 10000; Llama 4 500000), on every rotating layer.
    - Windows: ``sliding_window`` (Gemma, Cohere2, generic), ``local_attention`` (ModernBERT;
      the window is ``local_attention // 2``), ``attention_chunk_size`` (Llama 4).
    - Gemma 3's ``use_bidirectional_attention`` (EmbeddingGemma) is refused, not guessed.

    Parameters
    ----------
    config : dict or object
        The config (``config.json`` as a dict, or a ``PretrainedConfig``).
    layer : int
        The layer index, ``0 <= layer < num_hidden_layers``.

    Returns
    -------
    LayerRope

    Raises
    ------
    TypeError
        ``config`` neither a dict nor an object with ``model_type``, ``layer`` not an integer, a
        key of the wrong type (named as ``config['key']``).
    ValueError
        ``layer`` out of range, an unknown layer type, a missing window or base, a flat
        ``rope_parameters`` for Gemma 3 / ModernBERT.

    See Also
    --------
    posenc.rope_frequencies : turns ``base`` and ``scaling`` into inverse frequencies.

    References
    ----------
    Gemma Team, "Gemma 3 Technical Report", arXiv:2503.19786. Warner et al., "Smarter, Better,
    Faster, Longer: ModernBERT", arXiv:2412.13663. transformers 5.23, ``models/gemma3``,
    ``models/modernbert``, ``models/cohere2``, ``models/llama4``.

    Examples
    --------
    >>> import posenc
    >>> cfg = {"model_type": "gemma3_text", "num_hidden_layers": 12,
    ...        "rope_theta": 1e6, "rope_local_base_freq": 1e4, "sliding_window": 512}
    >>> posenc.layer_rope_parameters(cfg, 0).base, posenc.layer_rope_parameters(cfg, 5).base
    (10000.0, 1000000.0)
    >>> posenc.layer_rope_parameters(cfg, 5).kind, posenc.layer_rope_parameters(cfg, 0).window
    ('full', 512)
    """
    if isinstance(config, (str, bytes)) or not (
        isinstance(config, Mapping) or hasattr(config, "model_type")
    ):
        raise TypeError(
            f"config must be a dict or a config object with model_type, got {_describe(config)}"
        )
    get = _getter(config)
    model_type = get("model_type", "")
    if not isinstance(model_type, str):
        raise TypeError(f"config['model_type'] must be a string, got {_describe(model_type)}")
    if model_type in ("gemma3", "llama4"):
        text = get("text_config")
        if text is None:
            raise ValueError(f"config of model_type {model_type!r} must hold 'text_config'")
        if not (isinstance(text, Mapping) or hasattr(text, "model_type")):
            raise TypeError(f"config['text_config'] must be a dict, got {_describe(text)}")
        get = _getter(text)
        model_type = model_type + "_text"
    if model_type == "gemma3_text" and get("use_bidirectional_attention"):
        raise ValueError(
            "config['use_bidirectional_attention']=True (Gemma 3 as an encoder) is not supported"
        )
    n_raw, key = get("num_hidden_layers"), "config['num_hidden_layers']"
    n = None if n_raw is None else _int(n_raw, key, minimum=1, maximum=_LAYERS)
    types = _layer_types(get, model_type, n)
    if isinstance(layer, bool) or not isinstance(layer, numbers.Integral):
        raise TypeError(f"layer must be an integer, got {_describe(layer)}")
    if not 0 <= int(layer) < len(types):
        raise ValueError(f"layer must be in [0, {len(types)}) (layers count from 0), got {layer}")
    i = int(layer)
    layer_type = types[i]
    if layer_type not in _TYPES:
        raise ValueError(
            f"config['layer_types'][{i}] must be one of {sorted(_TYPES)}, got {layer_type!r}"
        )
    kind = _TYPES[layer_type]
    rope = True
    if model_type == "cohere2":
        rope = kind == "sliding"
    elif model_type in ("llama4_text", "smollm3"):  # the same no_rope_layers rule
        nope = llama4_nope_layers(
            len(types),
            no_rope_layers=get("no_rope_layers"),
            no_rope_layer_interval=get("no_rope_layer_interval", 4),
        )
        rope = i not in nope
    window = None
    if kind == "sliding":
        if model_type == "modernbert":
            w = get("local_attention", 128)
            window = _int(w, "config['local_attention']", minimum=1) // 2
        else:
            default = 4096 if model_type in ("gemma2", "gemma3_text", "cohere2") else None
            w = get("sliding_window", default)
            if w is None:
                raise ValueError(f"config['sliding_window'] is needed by sliding layer {i}")
            window = _int(w, "config['sliding_window']", minimum=1)
    elif kind == "chunked":
        w = get("attention_chunk_size", 8192 if model_type == "llama4_text" else None)
        if w is None:
            raise ValueError(f"config['attention_chunk_size'] is needed by chunked layer {i}")
        window = _int(w, "config['attention_chunk_size']", minimum=1)
    pairing = "interleaved" if model_type in ("cohere2", "llama4_text") else "half"
    bidirectional = model_type == "modernbert"
    if not rope:
        return LayerRope(kind, False, None, None, 1.0, window, bidirectional, pairing)
    params = _params(get, model_type, layer_type)
    base = check_base(params.pop("rope_theta"), name=f"config rope_theta of layer {i}")
    prf = params.pop("partial_rotary_factor", 1.0)
    if isinstance(prf, bool) or not isinstance(prf, numbers.Real) or not 0 < prf <= 1:
        raise ValueError(f"config['partial_rotary_factor'] must be in (0, 1], got {prf!r}")
    scaling = None if params == {"rope_type": "default"} else MappingProxyType(params)
    return LayerRope(kind, True, base, scaling, float(prf), window, bidirectional, pairing)

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

from ._array import _describe, as_positions, compiling, result_dtype
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
        The rotated share of the head dim (1.0: all of it), as the model's code rotates it:
        ``rotary_dim / head_dim`` of :meth:`posenc.hf.Scheme.layer` (GPT-J's ``rotary_dim`` 64
        of 256: 0.25; Moonshine's 46 of 52); ``round(head_dim * partial_rotary_factor)``
        features rotate, the first ones.
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


# layer kinds as a LayerRope names them; a "hybrid" layer (Zamba2) runs a full-attention block
_TYPES = {
    "full_attention": "full",
    "sliding_attention": "sliding",
    "chunked_attention": "chunked",
    "hybrid": "full",
}


def layer_rope_parameters(config: Any, layer: int) -> LayerRope:
    """Experimental. The RoPE parameters of layer ``layer`` (from 0) of a model config.

    Reads a ``config.json`` dict (old keys or transformers-5 keys) or a ``transformers`` config
    object, and resolves them the way transformers' config class of its ``model_type`` does
    (``convert_rope_params_to_dict``, ``standardize_rope_params``, the class's defaults and
    ``attribute_map``, the models' default patterns): the one reading of :mod:`posenc.hf`,
    whose :func:`posenc.hf.describe` gives the same base, scaling and layer kinds. Keys read
    (None = absent):

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
      others: ``rope_theta`` (default: the config class's, 10000 for most, Llama 4 500000), on
      every rotating layer. The top-level ``original_max_position_embeddings`` wins over one in
      a flat ``rope_scaling`` (as in transformers); dynamic scaling takes
      ``max_position_embeddings`` as the trained length. ``partial_rotary_factor`` is
      reported where the model's code reads it (1.0 for Llama, whose default RoPE spans the
      whole head).
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
    from .hf.conventions import CONVENTIONS
    from .hf.read import read_generic
    from .hf.schema import ModelRow

    model_type = config.get("model_type") if isinstance(config, Mapping) else config.model_type
    if model_type is None:
        config = {**config, "model_type": ""} if isinstance(config, Mapping) else config
    elif not isinstance(model_type, str):
        raise TypeError(f"config['model_type'] must be a string, got {_describe(model_type)}")
    # one reading of the config, describe's: a type posenc.hf has no row for is read by its
    # keys (the generic row); the layer is the Scheme's layer, turned into a LayerRope
    if isinstance(layer, bool) or not isinstance(layer, numbers.Integral):
        raise TypeError(f"layer must be an integer, got {_describe(layer)}")
    scheme, cfg, row = read_generic(config, ModelRow("llama"))
    if cfg.bool("use_bidirectional_attention", False) and cfg.model_type == "gemma3_text":
        raise ValueError(
            "config['use_bidirectional_attention']=True (Gemma 3 as an encoder) is not supported"
        )
    if scheme.kind != "rope":
        raise ValueError(
            f"config['model_type'] {scheme.model_type!r} is {scheme.kind!r}, not RoPE: "
            "layer_rope_parameters describes rotary layers (see posenc.hf.describe)"
        )
    n = scheme.num_layers
    if not 0 <= int(layer) < n:
        raise ValueError(f"layer must be in [0, {n}) (layers count from 0), got {layer}")
    i = int(layer)
    spec = scheme.layer(i)
    kind = _TYPES.get(spec.layer_type)
    if spec.kind == "none":
        raise ValueError(
            f"layer {i} of this {scheme.model_type} config is a {spec.layer_type} layer, which "
            "takes no positions and is none of a LayerRope's kinds: see "
            f"posenc.hf.describe(config).layer({i})"
        )
    if kind is None:
        raise ValueError(
            f"config['layer_types'][{i}] must be one of {sorted(_TYPES)}, got {spec.layer_type!r}"
        )
    if kind in ("sliding", "chunked") and spec.window is None:
        key = "sliding_window" if kind == "sliding" else "attention_chunk_size"
        raise ValueError(f"config['{key}'] is needed by {kind} layer {i}")
    conv = CONVENTIONS[row.convention]
    if spec.kind == "nope":
        pairing = conv.pairing if row.pairing is None else row.pairing
        return LayerRope(kind, False, None, None, 1.0, spec.window, row.bidirectional, pairing)
    beyond = _beyond_layer_rope(spec)
    if beyond:
        raise ValueError(
            f"layer {i} of this {scheme.model_type} config {beyond}, which a LayerRope cannot "
            "say: use posenc.hf.describe(config).rotate"
        )
    assert spec.head_dim and spec.rotary_dim and spec.pairing  # set on every rotary layer
    return LayerRope(
        kind,
        True,
        spec.base,
        None if spec.scaling is None else MappingProxyType(dict(spec.scaling)),
        spec.rotary_dim / spec.head_dim,
        spec.window,
        row.bidirectional,
        spec.pairing,
    )


def _beyond_layer_rope(spec: Any) -> str:
    """What of a rotary layer a LayerRope (base, scaling, leading share, half/interleaved
    pairing) cannot express; empty when it can express all of it."""
    checks = (
        (spec.slot == "tail", "rotates the last features of a head (MLA)"),
        (spec.pairing not in ("half", "interleaved"), f"pairs features as {spec.pairing!r}"),
        (spec.proportional_angles is not None, "turns only some of its pairs"),
        (spec.angle_sign != 1, "turns by negative angles"),
        (spec.rotated_heads is not None, "rotates only some heads"),
    )
    return "; ".join(why for bad, why in checks if bad)

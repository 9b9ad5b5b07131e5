"""``describe``: read a transformers config (object or ``config.json`` dict) into a ``Scheme``."""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from .._array import _describe
from ..rope_scaling import _KEYS
from .registry import CONVENTIONS, ModelRow, row_for
from .scheme import LayerScheme, Scheme

__all__ = ["describe"]

# layer types with no attention, hence no positions (state-space, linear-attention and
# convolution blocks of hybrid models)
_NO_ATTENTION = ("linear_attention", "conv", "mamba", "mamba2", "recurrent", "ssm", "short_conv")
_LAYER_TYPES = ("full_attention", "sliding_attention", "chunked_attention", "linear_attention")
_ROPE_TYPES = (*_KEYS, "proportional")
_NEEDS_ORIGINAL = ("yarn", "llama3", "longrope")
# keys of rope_parameters read elsewhere than in the scaling formulas
_READ_ELSEWHERE = (
    "rope_theta",
    "rope_type",
    "type",
    "partial_rotary_factor",
    "mrope_section",
    "mrope_interleaved",
)


class _Config:
    """Key lookup over a dict or a config object; None counts as absent."""

    def __init__(
        self, config: Any, where: str = "config", defaults: Mapping[str, Any] | None = None
    ) -> None:
        self.config = config
        self.where = where
        self.is_dict = isinstance(config, Mapping)
        self.defaults = dict(defaults or {})
        self.defaulted: set[str] = set()

    def get(self, key: str, default: Any = None) -> Any:
        if self.is_dict:
            value = self.config.get(key)
        else:
            try:
                value = getattr(self.config, key, None)
            except Exception:  # transformers' per-layer attributes refuse a global read
                value = vars(self.config).get(key)
        if value is None and self.defaults.get(key) is not None:
            self.defaulted.add(key)  # a key config.json leaves out: the config class's default
            return self.defaults[key]
        return default if value is None else value

    def overrides(self, layer: int) -> dict[str, Any]:
        """Per-layer overrides: ``per_layer_config`` (config.json) or transformers' spec."""
        if self.is_dict:
            table = self.config.get("per_layer_config") or {}
            if not isinstance(table, Mapping):
                raise TypeError(
                    f"{self.name('per_layer_config')} must be a dict, got {_describe(table)}"
                )
            found = table.get(str(layer), table.get(layer)) or {}
        else:
            spec = vars(self.config).get("_heterogeneity_spec")
            found = getattr(spec, "per_layer_overrides", {}).get(layer) or {}
        if not isinstance(found, Mapping):
            raise TypeError(
                f"{self.name('per_layer_config')}[{layer}] must be a dict, got {_describe(found)}"
            )
        return dict(found)

    def name(self, key: str) -> str:
        suffix = " (transformers default)" if key in self.defaulted else ""
        return f"{self.where}['{key}']{suffix}"

    def int(self, key: str, default: Any = None, *, minimum: int = 1) -> Any:
        value = self.get(key, default)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise TypeError(f"{self.name(key)} must be an int, got {_describe(value)}")
        if value < minimum:
            raise ValueError(f"{self.name(key)} must be >= {minimum}, got {value}")
        return int(value)

    def real(self, key: str, value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise TypeError(f"{self.name(key)} must be a number, got {_describe(value)}")
        if not math.isfinite(float(value)) or value <= 0:
            raise ValueError(f"{self.name(key)} must be finite and > 0, got {value}")
        return float(value)


def describe(config: Any) -> Scheme:
    """Experimental. What a transformers model does with positions, read from its config.

    Parameters
    ----------
    config : dict or object
        A ``config.json`` loaded as a dict, or a transformers config object (read through its
        attributes; transformers itself is never imported). Both the 4.x keys (``rope_theta``,
        ``rope_scaling``) and the 5.x ones (``rope_parameters``, flat or nested by layer type)
        are read.

    Returns
    -------
    Scheme

    Raises
    ------
    TypeError
        ``config`` neither a dict nor an object with ``model_type``; a key of the wrong type
        (named as ``config['key']``).
    ValueError
        No ``model_type``; a sub-config the model needs is missing; contradictory keys (e.g.
        ``rope_scaling`` and ``rope_parameters`` that disagree, ``layer_types`` of the wrong
        length, an ``mrope_section`` that does not sum to ``rotary_dim / 2``).

    Examples
    --------
    >>> import posenc.hf
    >>> cfg = {"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32,
    ...        "num_hidden_layers": 32, "rope_theta": 500000.0,
    ...        "max_position_embeddings": 131072,
    ...        "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
    ...                         "high_freq_factor": 4.0,
    ...                         "original_max_position_embeddings": 8192}}
    >>> s = posenc.hf.describe(cfg)
    >>> s.convention, s.layer(0).pairing, s.layer(0).rotary_dim, s.layer(0).rope_type
    ('llama', 'half', 128, 'llama3')
    """
    if isinstance(config, (str, bytes)) or not (
        isinstance(config, Mapping) or hasattr(config, "model_type")
    ):
        raise TypeError(
            f"config must be a dict (config.json) or a transformers config object, got "
            f"{_describe(config)}"
        )
    return _describe_config(_Config(config), outer=None)


def _describe_config(cfg: _Config, outer: str | None) -> Scheme:
    model_type = cfg.get("model_type")
    inherited = model_type is None and outer is not None
    if model_type is None:
        if outer is None:
            raise ValueError(
                "config must name its model_type (as every transformers config.json does), got "
                "none; without it the model's code, which decides the pairing, is unknown"
            )
        # a text_config without its own model_type: the outer type's text model when the
        # registry has one (gemma3 -> gemma3_text), else the outer type itself
        model_type = f"{outer}_text" if row_for(f"{outer}_text") is not None else outer
    if not isinstance(model_type, str):
        raise TypeError(f"{cfg.name('model_type')} must be a string, got {_describe(model_type)}")
    row = row_for(model_type)
    if inherited and row is not None:  # a text_config without its own model_type
        row = replace(row, sub_config=None)
    sub_key = row.sub_config if row is not None else _generic_sub_config(cfg)
    if sub_key is not None and outer is not None:
        raise ValueError(
            f"{cfg.name(sub_key)} nests a config inside a sub-config; a model's positions live at "
            "most one level down"
        )
    if (
        sub_key is not None
        and cfg.get(sub_key) is None
        and (cfg.get("num_attention_heads") is not None or cfg.get("hidden_size") is not None)
    ):
        # a flat (4.x) config.json of a model that transformers 5 nests: read the top level
        # as the text model (transformers moves these keys into text_config)
        flat = row_for(f"{model_type}_text")
        row = flat if flat is not None else replace(row, sub_config=None) if row else None
        sub_key = None
    if row is not None and row.defaults and not cfg.defaults:
        cfg = _Config(cfg.config, cfg.where, dict(row.defaults))
    if sub_key is not None:
        sub = cfg.get(sub_key)
        if sub is None:
            raise ValueError(
                f"a {model_type} config keeps its positions in {cfg.name(sub_key)}, which is missing"
            )
        if not (isinstance(sub, Mapping) or hasattr(sub, "__dict__")):
            raise TypeError(f"{cfg.name(sub_key)} must be a dict, got {_describe(sub)}")
        inner = _describe_config(_Config(sub, cfg.name(sub_key)), outer=model_type)
        return Scheme(
            model_type=model_type,
            convention=inner.convention,
            kind=inner.kind,
            known=row is not None and inner.known,
            layers=inner.layers,
            max_position_embeddings=inner.max_position_embeddings,
            sources=inner.sources,
            notes=(row.notes_en if row else ()) + inner.notes,
            notes_zh=(row.notes_zh if row else ()) + inner.notes_zh,
            ignored_keys=inner.ignored_keys,
        )
    known = row is not None
    if row is None:
        row = ModelRow(_generic_convention(cfg))
    return _read_rows(cfg, model_type, row, known)


def _generic_sub_config(cfg: _Config) -> str | None:
    """An unknown multimodal config: its text_config when the top level has no heads."""
    if cfg.get("num_attention_heads") is None and cfg.get("text_config") is not None:
        return "text_config"
    return None


def _generic_convention(cfg: _Config) -> str:
    rp = cfg.get("rope_parameters") or cfg.get("rope_scaling") or {}
    if isinstance(rp, Mapping) and (rp.get("mrope_section") or cfg.get("mrope_section")):
        return "mrope"
    partial = cfg.get("partial_rotary_factor")
    if isinstance(rp, Mapping) and rp.get("partial_rotary_factor") is not None:
        partial = rp.get("partial_rotary_factor")
    if partial is not None and partial != 1:
        return "partial"
    return "llama"


def _first(cfg: _Config, keys: tuple[str, ...], sources: dict[str, str], what: str) -> Any:
    for key in keys:
        if cfg.get(key) is not None:
            sources[what] = cfg.name(key)
            return cfg.int(key)
    return None


def _read_fixed(cfg: _Config, model_type: str, row: ModelRow, conv: Any, known: bool) -> Scheme:
    """ALiBi, T5 buckets and sinusoidal tables: the parameters of the posenc function."""
    sources: dict[str, str] = {}
    n = _first(
        cfg,
        ("num_hidden_layers", "num_layers", "n_layer", "n_layers", "encoder_layers"),
        sources,
        "layers",
    )
    fixed: dict[str, Any] = {}
    if conv.kind == "alibi":
        heads = _first(cfg, ("num_attention_heads", "n_head", "n_heads"), sources, "num_heads")
        if heads is None:
            raise ValueError(f"{cfg.where} must hold num_attention_heads (or n_head, n_heads)")
        attn = cfg.get("attn_config")
        max_bias = 8.0
        if isinstance(attn, Mapping) and attn.get("alibi_bias_max") is not None:
            max_bias = cfg.real("attn_config['alibi_bias_max']", attn["alibi_bias_max"])
            sources["max_bias"] = cfg.name("attn_config") + "['alibi_bias_max']"
        fixed = {"num_heads": heads, "max_bias": max_bias}
    elif conv.kind == "t5":
        fixed = {
            "num_buckets": cfg.int("relative_attention_num_buckets", 32),
            "max_distance": cfg.int("relative_attention_max_distance", 128),
            "bidirectional": True,
        }
        sources["num_buckets"] = cfg.name("relative_attention_num_buckets") + " (default 32)"
        sources["max_distance"] = cfg.name("relative_attention_max_distance") + " (default 128)"
    elif conv.kind == "sinusoidal":
        dim = _first(cfg, ("d_model", "hidden_size", "n_embd"), sources, "dim")
        if dim is None:
            raise ValueError(f"{cfg.where} must hold d_model (or hidden_size)")
        table = row.table or "fairseq"
        fixed = {"table": table, "dim": dim}
        if table == "fairseq":
            pad = cfg.get("pad_token_id")
            fixed["padding_idx"] = pad
            sources["padding_idx"] = cfg.name("pad_token_id")
    layers = tuple(LayerScheme(i, "full_attention", conv.kind) for i in range(n or 0))
    return Scheme(
        model_type,
        conv.name,
        conv.kind,
        known,
        layers,
        cfg.int("max_position_embeddings"),
        sources,
        row.notes_en,
        row.notes_zh,
        fixed=fixed,
    )


def _read_rows(cfg: _Config, model_type: str, row: ModelRow, known: bool) -> Scheme:
    if row.switch is not None and cfg.get(row.switch[0]):
        row = replace(row, convention=row.switch[1], switch=None)
    conv = CONVENTIONS[row.convention]
    if conv.kind not in ("rope", "mrope"):
        return _read_fixed(cfg, model_type, row, conv, known)
    sources: dict[str, str] = {}
    n = cfg.int("num_hidden_layers")
    types = _layer_types(cfg, row, n, sources)
    max_pos = cfg.int("max_position_embeddings")
    head_dim, rot_default = _head_dims(cfg, row, sources)
    layer_heads = _layer_head_dims(cfg, row, types, head_dim, sources)
    pairing = conv.pairing if row.pairing is None else row.pairing
    if row.pairing_key is not None and cfg.get(row.pairing_key):
        pairing = "deinterleave" if conv.slot == "tail" else "interleaved"
        sources["pairing"] = cfg.name(row.pairing_key)
    nope = _nope_layers(cfg, row, types, sources)
    ignored: set[str] = set()
    rows: list[LayerScheme] = []
    per_type: dict[tuple[str, int], LayerScheme] = {}
    rp = cfg.get("rope_parameters")
    for i, t in enumerate(types):
        if t in _NO_ATTENTION:
            rows.append(LayerScheme(i, t, "none"))
            continue
        if i in nope or (_nested(rp) and t in rp and rp[t] is None):
            if i not in nope:
                sources["NoPE layers"] = f"{cfg.name('rope_parameters')}['{t}'] = None"
            rows.append(LayerScheme(i, t, "nope", window=_window(cfg, t)))
            continue
        hd = layer_heads[i]
        if (t, hd) not in per_type:
            per_type[(t, hd)] = _rotary_layer(
                cfg,
                row,
                conv.kind,
                t,
                hd,
                rot_default,
                pairing,
                conv.slot,
                max_pos,
                sources,
                ignored,
            )
        proto = per_type[(t, hd)]
        rows.append(LayerScheme(**{**proto.__dict__, "index": i}))
    return Scheme(
        model_type,
        conv.name,
        conv.kind,
        known,
        tuple(rows),
        max_pos,
        sources,
        row.notes_en,
        row.notes_zh,
        tuple(sorted(ignored)),
    )


def _layer_types(cfg: _Config, row: ModelRow, n: int | None, sources: dict[str, str]) -> list[str]:
    types = cfg.get("layer_types")
    if types is not None:
        if not isinstance(types, (list, tuple)) or not all(isinstance(t, str) for t in types):
            raise TypeError(
                f"{cfg.name('layer_types')} must be a list of strings, got {_describe(types)}"
            )
        if n is not None and len(types) != n:
            raise ValueError(
                f"{cfg.name('layer_types')} must have num_hidden_layers = {n} entries, got {len(types)}"
            )
        sources["layer_types"] = cfg.name("layer_types")
        return list(types)
    if n is None:
        raise ValueError(f"{cfg.where} must hold 'num_hidden_layers' or 'layer_types', got neither")
    sources["layers"] = cfg.name("num_hidden_layers")
    if row.pattern is not None:
        key, default, first_full = row.pattern
        every = cfg.int(key, default)
        sources["layer pattern"] = f"{cfg.name(key)} (default {default})"
        return [
            "full_attention" if ((i if first_full else i + 1) % every == 0) else "sliding_attention"
            for i in range(n)
        ]
    return ["full_attention"] * n


def _nope_layers(
    cfg: _Config, row: ModelRow, types: list[str], sources: dict[str, str]
) -> set[int]:
    if row.nope == "full_attention":
        sources["NoPE layers"] = "full_attention layers (model code)"
        return {i for i, t in enumerate(types) if t == "full_attention"}
    if row.nope == "no_rope_layers":
        flags = cfg.get("no_rope_layers")
        empty = flags is None or (isinstance(flags, (list, tuple)) and len(flags) == 0)
        if empty and row.nope_interval is not None:
            # the config code's default (Llama 4): every no_rope_layer_interval-th layer is NoPE
            every = cfg.int("no_rope_layer_interval", row.nope_interval)
            sources["NoPE layers"] = (
                f"{cfg.name('no_rope_layer_interval')} (default {row.nope_interval})"
            )
            return {i for i in range(len(types)) if (i + 1) % every == 0}
        if empty:
            return set()
        if not isinstance(flags, (list, tuple)) or len(flags) != len(types):
            raise ValueError(
                f"{cfg.name('no_rope_layers')} must be a list of {len(types)} flags (1 = the layer "
                f"rotates), got {_describe(flags)}"
            )
        sources["NoPE layers"] = cfg.name("no_rope_layers")
        return {i for i, f in enumerate(flags) if not f}
    return set()


def _head_dims(cfg: _Config, row: ModelRow, sources: dict[str, str]) -> tuple[int, int | None]:
    if row.head_dim_key is not None:
        widths = [cfg.int(k) for k in row.head_dim_key]
        if None in widths:
            missing = [k for k, w in zip(row.head_dim_key, widths, strict=True) if w is None]
            raise ValueError(f"{cfg.where} must hold {missing} for a {row.convention} model")
        sources["head_dim"] = " + ".join(cfg.name(k) for k in row.head_dim_key)
        head_dim = sum(widths)
    elif cfg.get("head_dim") is not None:
        head_dim = cfg.int("head_dim")
        sources["head_dim"] = cfg.name("head_dim")
    else:
        hidden, heads = cfg.int("hidden_size"), cfg.int("num_attention_heads")
        if hidden is None or heads is None:
            raise ValueError(
                f"{cfg.where} must hold head_dim, or hidden_size and num_attention_heads"
            )
        if hidden % heads:
            raise ValueError(
                f"{cfg.name('hidden_size')} ({hidden}) must be a multiple of "
                f"{cfg.name('num_attention_heads')} ({heads}) when the config has no head_dim"
            )
        head_dim = hidden // heads
        sources["head_dim"] = f"{cfg.name('hidden_size')} // {cfg.name('num_attention_heads')}"
    rot = None
    if row.dim_key is not None:
        rot = cfg.int(row.dim_key)
        sources["rotary_dim"] = cfg.name(row.dim_key)
    return head_dim, rot


def _layer_head_dims(
    cfg: _Config, row: ModelRow, types: list[str], head_dim: int, sources: dict[str, str]
) -> list[int]:
    """Each layer's head dim: per-layer overrides, else the row's key for its layer type."""
    out = []
    for i, t in enumerate(types):
        value = cfg.overrides(i).get("head_dim")
        if value is not None:
            sources[f"{t}: head_dim"] = f"{cfg.name('per_layer_config')}[{i}]['head_dim']"
        elif row.layer_head_dim is not None and t == row.layer_head_dim[0]:
            _, key, default = row.layer_head_dim
            value = cfg.int(key, default)
            sources[f"{t}: head_dim"] = f"{cfg.name(key)} (default {default})"
        out.append(head_dim if value is None else int(value))
    return out


def _window(cfg: _Config, layer_type: str) -> int | None:
    if layer_type == "sliding_attention":
        return cfg.get("sliding_window")
    if layer_type == "chunked_attention":
        return cfg.get("attention_chunk_size")
    return None


def _nested(rp: Any) -> bool:
    """rope_parameters keyed by layer type (values dicts, or None for a layer type that does not
    rotate) rather than one flat dict."""
    if not isinstance(rp, Mapping) or not rp:
        return False
    values = list(rp.values())
    return all(v is None or isinstance(v, Mapping) for v in values) and any(
        isinstance(v, Mapping) for v in values
    )


def _rope_dict(cfg: _Config, layer_type: str, row: ModelRow) -> tuple[dict[str, Any], str]:
    """The layer type's rope parameters and the key they came from (5.x, else 4.x spellings)."""
    rp = cfg.get("rope_parameters")
    legacy = cfg.get("rope_scaling")
    for key, value in (("rope_parameters", rp), ("rope_scaling", legacy)):
        if value is not None and not isinstance(value, Mapping):
            raise TypeError(f"{cfg.name(key)} must be a dict, got {_describe(value)}")
    nested = _nested(rp)
    if nested:
        if rp.get(layer_type) is None:
            raise ValueError(
                f"{cfg.name('rope_parameters')} has no entry for layer type {layer_type!r}"
            )
        return dict(rp[layer_type]), f"{cfg.name('rope_parameters')}['{layer_type}']"
    if rp is not None and legacy is not None and dict(legacy) != dict(rp):
        flat = {k: v for k, v in rp.items() if k != "rope_theta"}
        if {k: v for k, v in legacy.items() if k != "rope_theta"} != flat:
            raise ValueError(
                f"{cfg.name('rope_parameters')} and {cfg.name('rope_scaling')} disagree: "
                f"{dict(rp)} against {dict(legacy)}; keep one of them"
            )
    if layer_type == "sliding_attention" and row.local_base is not None and rp is None:
        key, default = row.local_base
        return {"rope_theta": cfg.get(key, default)}, cfg.name(key)
    if rp is not None:
        return dict(rp), cfg.name("rope_parameters")
    if legacy is not None:
        return dict(legacy), cfg.name("rope_scaling")
    return {}, "default"


def _rotary_layer(
    cfg: _Config,
    row: ModelRow,
    kind: str,
    layer_type: str,
    head_dim: int,
    rot: int | None,
    pairing: str,
    slot: str,
    max_pos: int | None,
    sources: dict[str, str],
    ignored: set[str],
) -> LayerScheme:
    params, where = _rope_dict(cfg, layer_type, row)
    prefix = "" if layer_type == "full_attention" else f"{layer_type}: "
    rope_type = params.get("rope_type") or params.get("type") or "default"
    if rope_type == "mrope":  # transformers 4.x's Qwen2-VL spelling: plain frequencies
        rope_type = "default"
    if rope_type not in _ROPE_TYPES:
        raise ValueError(
            f"{where}['rope_type'] must be one of {list(_ROPE_TYPES)}, got {rope_type!r}"
        )
    spelled = "rope_type" if "rope_type" in params else "type" if "type" in params else None
    sources[prefix + "rope_type"] = f"{where}['{spelled}']" if spelled else "default"
    theta = params.get("rope_theta")
    if theta is not None and row.local_base is not None and where == cfg.name(row.local_base[0]):
        sources[prefix + "base"] = where  # Gemma 3 (4.x keys): the local base is its own key
    elif theta is not None:
        sources[prefix + "base"] = f"{where}['rope_theta']"
    elif cfg.get("rope_theta") is not None:
        theta = cfg.get("rope_theta")
        sources[prefix + "base"] = cfg.name("rope_theta")
    else:
        theta = row.default_base
        sources[prefix + "base"] = f"default {row.default_base:g}"
    base = cfg.real("rope_theta", theta)
    partial = params.get("partial_rotary_factor")
    if partial is not None:
        sources["partial_rotary_factor"] = f"{where}['partial_rotary_factor']"
    else:
        for key in ("partial_rotary_factor", "rotary_pct"):
            if cfg.get(key) is not None:
                partial = cfg.get(key)
                sources["partial_rotary_factor"] = cfg.name(key)
                break
    if partial is not None:
        key = sources["partial_rotary_factor"]
        if isinstance(partial, bool) or not isinstance(partial, numbers.Real):
            raise TypeError(f"{key} must be a number in (0, 1], got {_describe(partial)}")
        if not 0 < float(partial) <= 1:
            raise ValueError(f"{key} must be a number in (0, 1], got {partial}")
    proportional = None
    if rot is None:
        if rope_type == "proportional":
            rot = head_dim
            proportional = int((1.0 if partial is None else float(partial)) * head_dim // 2)
        elif cfg.get("rotary_dim") is not None and partial is None:
            rot = cfg.int("rotary_dim")
            sources["rotary_dim"] = cfg.name("rotary_dim")
        else:
            rot = int(head_dim * (1.0 if partial is None else float(partial)))
    if rot % 2 or not 0 < rot <= head_dim:
        raise ValueError(
            f"the rotated width must be even and in (0, head_dim = {head_dim}], got {rot} "
            f"(from {sources.get('rotary_dim') or sources.get('partial_rotary_factor')})"
        )
    section, interleaved = None, False
    if kind == "mrope":
        section = params.get("mrope_section", cfg.get("mrope_section"))
        if section is None and row.mrope_default is not None:
            section = row.mrope_default
            sources["mrope_section"] = f"default {list(section)} (model code)"
        elif section is not None:
            sources["mrope_section"] = f"{where}['mrope_section']"
        if section is None:
            raise ValueError(f"{where} must hold 'mrope_section' for an M-RoPE model")
        key = sources["mrope_section"]
        if isinstance(section, (str, bytes, Mapping)) or not isinstance(section, (list, tuple)):
            raise TypeError(f"{key} must be a list of 3 ints, got {_describe(section)}")
        if len(section) != 3 or not all(
            isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in section
        ):
            raise TypeError(f"{key} must be a list of 3 ints, got {list(section)}")
        if min(section) < 0:
            raise ValueError(f"{key} must hold non-negative counts, got {list(section)}")
        section = tuple(int(v) for v in section)
        if sum(section) != rot // 2:
            raise ValueError(
                f"{where}['mrope_section'] must sum to rotary_dim / 2 = {rot // 2}, got {list(section)}"
            )
        interleaved = bool(params.get("mrope_interleaved") or row.convention == "mrope_interleaved")
    scaling = _scaling(cfg, params, rope_type, max_pos, where, ignored)
    layer = LayerScheme(
        index=0,
        layer_type=layer_type,
        kind=kind,
        pairing=pairing,
        slot=slot,
        head_dim=head_dim,
        rotary_dim=rot,
        base=base,
        rope_type=rope_type,
        scaling=scaling,
        window=_window(cfg, layer_type),
        mrope_section=section,
        mrope_interleaved=interleaved,
        proportional_angles=proportional,
        angle_sign=row.angle_sign,
    )
    if rope_type != "proportional":
        _, factor = layer.inv_freq()
        layer = LayerScheme(**{**layer.__dict__, "attention_factor": factor})
    else:
        layer = LayerScheme(**{**layer.__dict__, "attention_factor": 1.0})
    return layer


def _scaling(
    cfg: _Config,
    params: dict[str, Any],
    rope_type: str,
    max_pos: int | None,
    where: str,
    ignored: set[str],
) -> dict[str, Any] | None:
    if rope_type == "default":
        ignored.update(k for k in params if k not in _READ_ELSEWHERE)
        return None
    if rope_type == "proportional":
        ignored.update(k for k in params if k not in (*_READ_ELSEWHERE, "factor"))
        return {"factor": params["factor"]} if params.get("factor") is not None else None
    required, optional = _KEYS[rope_type]
    out: dict[str, Any] = {"rope_type": rope_type}
    for k, v in params.items():
        if k in _READ_ELSEWHERE:
            continue
        if k in required or k in optional or k == "factor":
            if v is not None:
                out[k] = v
        else:
            ignored.add(k)
    original = out.get("original_max_position_embeddings")
    if rope_type == "dynamic":
        # transformers' dynamic NTK reads config.max_position_embeddings as the trained length
        out["original_max_position_embeddings"] = max_pos
    elif rope_type in _NEEDS_ORIGINAL and original is None:
        original = cfg.get("original_max_position_embeddings") or max_pos
        out["original_max_position_embeddings"] = original
    if rope_type in ("yarn", "longrope") and out.get("factor") is None and max_pos and original:
        out["factor"] = max_pos / original  # transformers' fallback
    if rope_type == "longrope" and "factor" in out and "attention_factor" not in out:
        if out["factor"] <= 1.0:
            out["attention_factor"] = 1.0
    return out

"""Rotary layers: layer types, NoPE layers, head widths and each layer type's RoPE parameters."""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from typing import Any

from .._array import _describe
from ..layers import _checked_layer_types
from ..rope_scaling import _KEYS
from .keys import Config, nested
from .schema import ModelRow
from .scheme import LayerScheme

# layer types with no attention, hence no positions (state-space, linear-attention and
# convolution blocks of hybrid models)
NO_ATTENTION = ("linear_attention", "conv", "mamba", "mamba2", "recurrent", "ssm", "short_conv")
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


def layer_types(cfg: Config, row: ModelRow, n: int | None, sources: dict[str, str]) -> list[str]:
    types = cfg.get("layer_types")
    if types is not None:
        sources["layer_types"] = cfg.name("layer_types")
        return _checked_layer_types(types, n, cfg.name("layer_types"))
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


def nope_layers(cfg: Config, row: ModelRow, types: list[str], sources: dict[str, str]) -> set[int]:
    if row.requires is not None and cfg.get(row.requires, True) is False:
        # no rotary embedding is built (CLVP's use_rotary_embedding): no layer rotates
        sources["NoPE layers"] = f"{cfg.name(row.requires)} = False: every layer"
        return set(range(len(types)))
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


def head_dims(cfg: Config, row: ModelRow, sources: dict[str, str]) -> tuple[int, int | None]:
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
    if row.dim_rule is not None:  # CLVP: max(projection_dim // (2 * heads), 32)
        key, floor = row.dim_rule
        width, heads = cfg.int(key), cfg.int("num_attention_heads")
        if width is None or heads is None:
            raise ValueError(
                f"{cfg.where} must hold {key!r} and 'num_attention_heads' for a "
                f"{row.convention} model (its rotated width is max({key} // (2 * heads), {floor}))"
            )
        rot = max(width // (2 * heads), floor)
        sources["rotary_dim"] = (
            f"max({cfg.name(key)} // (2 * {cfg.name('num_attention_heads')}), {floor}) (model code)"
        )
    if row.dim_key is not None:
        rot = cfg.int(row.dim_key)
        if rot is not None:
            sources["rotary_dim"] = cfg.name(row.dim_key)
    return head_dim, rot


def layer_head_dims(
    cfg: Config, row: ModelRow, types: list[str], head_dim: int, sources: dict[str, str]
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


def window(cfg: Config, layer_type: str) -> int | None:
    if layer_type == "sliding_attention":
        return cfg.get("sliding_window")
    if layer_type == "chunked_attention":
        return cfg.get("attention_chunk_size")
    return None


def _rope_dict(cfg: Config, layer_type: str, row: ModelRow) -> tuple[dict[str, Any], str]:
    """The layer type's rope parameters and the key they came from (5.x, else 4.x spellings)."""
    rp = cfg.get("rope_parameters")
    legacy = cfg.get("rope_scaling")
    for key, value in (("rope_parameters", rp), ("rope_scaling", legacy)):
        if value is not None and not isinstance(value, Mapping):
            raise TypeError(f"{cfg.name(key)} must be a dict, got {_describe(value)}")
    if nested(rp):
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


def rotary_layer(
    cfg: Config,
    row: ModelRow,
    kind: str,
    layer_type: str,
    head_dim: int,
    rot: int | None,
    pairing: str,
    slot: str,
    axes: int,
    layout: str,
    max_pos: int | None,
    sources: dict[str, str],
    ignored: set[str],
) -> LayerScheme:
    params, where = _rope_dict(cfg, layer_type, row)
    prefix = "" if layer_type == "full_attention" else f"{layer_type}: "
    rope_type = params.get("rope_type") or params.get("type") or "default"
    if rope_type == "mrope":  # transformers 4.x's Qwen2-VL spelling: plain frequencies
        rope_type = "default"
    rope_type = dict(row.rope_type_aliases).get(rope_type, rope_type)  # HunYuan-VL's "xdrope"
    if rope_type not in _ROPE_TYPES:
        raise ValueError(
            f"{where}['rope_type'] must be one of {list(_ROPE_TYPES)}, got {rope_type!r}"
        )
    spelled = "rope_type" if "rope_type" in params else "type" if "type" in params else None
    sources[prefix + "rope_type"] = f"{where}['{spelled}']" if spelled else "default"
    theta = params.get("rope_theta")
    base_key = "rope_theta"
    if theta is not None and row.local_base is not None and where == cfg.name(row.local_base[0]):
        sources[prefix + "base"] = where  # Gemma 3 (4.x keys): the local base is its own key
    elif theta is not None:
        sources[prefix + "base"] = f"{where}['rope_theta']"
    elif cfg.get("rope_theta") is not None:
        theta = cfg.get("rope_theta")
        sources[prefix + "base"] = cfg.name("rope_theta")
    elif row.base_key is not None and cfg.get(row.base_key) is not None:
        theta = cfg.get(row.base_key)
        sources[prefix + "base"] = cfg.name(row.base_key)
        base_key = row.base_key
    else:
        theta = row.default_base
        sources[prefix + "base"] = f"default {row.default_base:g}"
    base = cfg.real(base_key, theta)
    if row.ntk_alpha and rope_type == "dynamic" and params.get("alpha") is not None:
        base, rope_type = _ntk_alpha(params, base, head_dim, where, prefix, sources), "default"
        params = {k: v for k, v in params.items() if k not in ("alpha", "factor")}
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
        else:  # a config's rotary_dim is read only where a row names it (GPT-J, CodeGen)
            rot = int(head_dim * (1.0 if partial is None else float(partial)))
    if rot % 2 or not 0 < rot <= head_dim:
        raise ValueError(
            f"the rotated width must be even and in (0, head_dim = {head_dim}], got {rot} "
            f"(from {sources.get('rotary_dim') or sources.get('partial_rotary_factor')})"
        )
    section: Any = None
    interleaved = False
    if kind == "mrope" and axes == 2:  # NeoMME: pair j turns by axis j % 2 (row, column)
        half = rot // 2
        section, interleaved = ((half + 1) // 2, half // 2), True
        sources["mrope_section"] = "model code (pairs alternate row, column)"
    elif kind == "mrope":
        section = params.get("mrope_section", cfg.get("mrope_section"))
        alias = params.get(row.section_alias) if row.section_alias else None
        if (
            isinstance(alias, (list, tuple))
            and isinstance(section, (list, tuple))
            and list(alias) != list(section)
        ):
            raise ValueError(
                f"{where}['mrope_section'] and {where}['{row.section_alias}'] disagree: "
                f"{list(section)} against {list(alias)}; keep one of them"
            )
        if section is None and alias is not None:
            section = alias
            sources["mrope_section"] = f"{where}['{row.section_alias}']"
        elif section is None and row.mrope_default is not None:
            section = row.mrope_default
            sources["mrope_section"] = f"default {list(section)} (model code)"
        elif section is not None:
            sources["mrope_section"] = f"{where}['mrope_section']"
        if section is None:
            raise ValueError(f"{where} must hold 'mrope_section' for an M-RoPE model")
        key = sources["mrope_section"]
        want = "a list of ints, one per axis" if layout == "xd" else "a list of 3 ints"
        if isinstance(section, (str, bytes, Mapping)) or not isinstance(section, (list, tuple)):
            raise TypeError(f"{key} must be {want}, got {_describe(section)}")
        if (len(section) != 3 and not (layout == "xd" and len(section) >= 1)) or not all(
            isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in section
        ):
            raise TypeError(f"{key} must be {want}, got {list(section)}")
        if min(section) < 0:
            raise ValueError(f"{key} must hold non-negative counts, got {list(section)}")
        section = tuple(int(v) for v in section)
        if sum(section) != rot // 2:
            raise ValueError(
                f"{where}['mrope_section'] must sum to rotary_dim / 2 = {rot // 2}, got {list(section)}"
            )
        interleaved = bool(params.get("mrope_interleaved") or row.convention == "mrope_interleaved")
        if layout == "hw_then_t" and section[0] != section[1]:
            raise ValueError(
                f"{key} must give h and w the same number of pairs (they take turns), got "
                f"{list(section)}"
            )
    if row.section_alias is not None:  # read above, with mrope_section
        params.pop(row.section_alias, None)
    if row.rotated_heads is not None:
        sources["rotated_heads"] = "model code (its attention rotates the first heads only)"
    scaling = _scaling(cfg, params, rope_type, max_pos, where, ignored)
    if scaling is not None:
        sources[prefix + "scaling"] = where
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
        window=window(cfg, layer_type),
        mrope_section=section,
        mrope_interleaved=interleaved,
        proportional_angles=proportional,
        angle_sign=row.angle_sign,
        rotated_heads=row.rotated_heads,
        mrope_layout=layout or None,
    )
    if rope_type != "proportional":
        _, factor = layer.inv_freq()
        layer = LayerScheme(**{**layer.__dict__, "attention_factor": factor})
    else:
        layer = LayerScheme(**{**layer.__dict__, "attention_factor": 1.0})
    return layer


def _scaling(
    cfg: Config,
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


def _ntk_alpha(
    params: dict[str, Any], base: float, head_dim: int, where: str, prefix: str, sources: dict
) -> float:
    """HunYuan's NTK-alpha: the static base ``rope_theta * alpha ** (d / (d - 2))``."""
    alpha = params["alpha"]
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real):
        raise TypeError(f"{where}['alpha'] must be a number > 0, got {_describe(alpha)}")
    if not math.isfinite(float(alpha)) or not float(alpha) > 0:
        raise ValueError(f"{where}['alpha'] must be a number > 0, got {alpha!r}")
    if head_dim <= 2:
        raise ValueError(f"NTK-alpha needs a head dim above 2 (d / (d - 2)), got {head_dim}")
    key = "rope_type" if "rope_type" in params else "type"
    sources[prefix + "rope_type"] = (
        f"{where}['{key}'] = {params.get(key)!r} with 'alpha': NTK-alpha, static (model code)"
    )
    sources[prefix + "base"] = (
        f"{sources[prefix + 'base']} * {where}['alpha'] ** (d / (d - 2)), d = {head_dim}"
    )
    return float(base) * float(alpha) ** (head_dim / (head_dim - 2))

"""Rotary layers: layer types, NoPE layers, head widths and each layer type's RoPE parameters."""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from typing import Any

from .._array import _describe, check_base
from ..rope_scaling import _KEYS
from .classes import layer_type_names
from .keys import MAX_HEAD_DIM, MAX_LAYERS, Config, check_width
from .layer import LayerScheme
from .params import RopeEntry
from .schema import ModelRow

# layer types with no attention, hence no positions (state-space, linear-attention and
# convolution blocks of hybrid models; MoE- or MLP-only blocks)
NO_ATTENTION = ("linear_attention", "conv", "moe", "dense", "sparse", "cross_attention")
_ROPE_TYPES = (*_KEYS, "proportional")
_NEEDS_ORIGINAL = ("yarn", "llama3", "longrope")
# conventions whose rotated width is not head_dim * partial_rotary_factor
_NO_PARTIAL = ("hidden_rope", "partial_qkv", "one_head")
# keys of rope_parameters read elsewhere than in the scaling formulas
_READ_ELSEWHERE = (
    "rope_theta",
    "rope_type",
    "type",
    "partial_rotary_factor",
    "mrope_section",
    "mrope_interleaved",
)


def checked_layer_types(types: Any, n: int | None, where: str) -> list[str]:
    """A config's ``layer_types`` (read from ``where``): a list of known layer kinds, one per
    layer when ``n`` is known, at most :data:`MAX_LAYERS`."""
    if not isinstance(types, (list, tuple)) or not all(isinstance(t, str) for t in types):
        raise TypeError(f"{where} must be a list of strings, got {_describe(types)}")
    if n is not None and len(types) != n:
        raise ValueError(f"{where} must have num_hidden_layers = {n} entries, got {len(types)}")
    if len(types) > MAX_LAYERS:
        raise ValueError(f"{where} must have at most {MAX_LAYERS} entries, got {len(types)}")
    known, remap = layer_type_names()
    out = [str(remap.get(t, t)) for t in types]  # legacy names, as transformers renames them
    for i, t in enumerate(out):
        if t not in known:
            raise ValueError(
                f"{where}[{i}] must be one of transformers' layer kinds {list(known)}, got {t!r}"
            )
    return out


def layer_types(cfg: Config, row: ModelRow, n: int | None, sources: dict[str, str]) -> list[str]:
    types = cfg.get("layer_types")
    if types is not None:
        sources["layer_types"] = cfg.name("layer_types")
        out = checked_layer_types(types, n, cfg.name("layer_types"))
    elif n is None:
        raise ValueError(f"{cfg.where} must hold 'num_hidden_layers' or 'layer_types', got neither")
    elif row.layers_rule is not None:
        out = derived_layer_types(cfg, row.layers_rule, n, sources)
    else:
        sources["layers"] = cfg.name(row.layers_key)
        out = ["full_attention"] * n
        if row.pattern is not None:
            key, default, first_full = row.pattern
            if row.nope_when is not None and cfg.get(row.nope_when) is None:
                # EXAONE 4's config code: a null sliding_window makes the pattern 0, and its
                # layer_types comprehension then divides by zero
                raise ValueError(
                    f"{cfg.name(row.nope_when)} is null and the config has no layer_types: "
                    f"{cfg.class_name} then derives the layer pattern with {key} = 0 and fails "
                    "(a division by zero); give layer_types or a sliding_window"
                )
            every = default if key is None else cfg.int(key, default, maximum=MAX_LAYERS)
            sources["layer pattern"] = (
                f"one full layer in every {default} (model code)"
                if key is None
                else f"{cfg.name(key)} (model code's default {default})"
            )
            out = [
                "full_attention"
                if ((i if first_full else i + 1) % every == 0)
                else row.pattern_other
                for i in range(n)
            ]
    if row.cross_layers is not None:  # mllama: cross-attention layers take no positions
        cross_key, cross_default = row.cross_layers
        listed: Any = cfg.get(cross_key, list(cross_default))
        where = (
            cfg.name(cross_key)
            if cfg.raw(cross_key) is not None
            else f"default {list(cross_default)} (model code)"
        )
        if not isinstance(listed, (list, tuple)) or not all(
            isinstance(i, numbers.Integral) and not isinstance(i, bool) and int(i) >= 0
            for i in listed
        ):
            raise ValueError(
                f"{where} must be a list of layer indices >= 0, got {_describe(listed)}"
            )
        for index in listed:  # an index past the last layer matches no layer, as in the model
            if int(index) < len(out):
                out[int(index)] = "cross_attention"
        sources["cross-attention layers"] = where
    return out


def derived_layer_types(
    cfg: Config, rule: tuple[Any, ...], n: int, sources: dict[str, str]
) -> list[str]:
    """The layer kinds a config class derives from other keys when the file has no
    ``layer_types`` (:attr:`ModelRow.layers_rule`), as its ``__init__`` or property does."""
    how = rule[0]
    if how == "indices":  # Bamba: attn_layer_indices are attention, the rest Mamba
        key = rule[1]
        listed: Any = cfg.get(key)
        if listed is None:
            sources["layer_types"] = f"{cfg.name(key)} absent: every layer Mamba (config code)"
            return ["linear_attention"] * n
        if isinstance(listed, (str, bytes, Mapping)) or not isinstance(listed, (list, tuple)):
            raise TypeError(
                f"{cfg.name(key)} must be a list of layer indices, got {_describe(listed)}"
            )
        for i, v in enumerate(listed):
            if isinstance(v, bool) or not isinstance(v, numbers.Integral):
                raise TypeError(f"{cfg.name(key)}[{i}] must be an int, got {_describe(v)}")
        chosen = {int(v) for v in listed}
        sources["layer_types"] = (
            f"{cfg.name(key)}: attention layers, the others Mamba (config code)"
        )
        return ["full_attention" if i in chosen else "linear_attention" for i in range(n)]
    if how == "cycle":  # RecurrentGemma: block_types repeated over the layers
        _, key, default, linear_block, kind = rule
        blocks: Any = cfg.get(key, list(default))
        where = (
            cfg.name(key) if cfg.raw(key) is not None else f"default {list(default)} (config code)"
        )
        if (
            isinstance(blocks, (str, bytes, Mapping))
            or not isinstance(blocks, (list, tuple))
            or not blocks
            or not all(isinstance(b, str) for b in blocks)
        ):
            raise TypeError(
                f"{where} must be a non-empty list of block names, got {_describe(blocks)}"
            )
        cycled = (list(blocks) * 100)[:n]  # as the config class's layers_block_type cuts it
        if len(cycled) < n:
            raise ValueError(
                f"{where} names {len(blocks)} blocks, which {cfg.class_name} repeats 100 times: "
                f"fewer than the {n} layers, and the model fails on the missing ones"
            )
        sources["layer_types"] = f"{where}, repeated over the layers (config code)"
        return ["linear_attention" if b == linear_block else kind for b in cycled]
    if how == "list":  # Zamba2: the class's default layers_block_type
        default = list(rule[1])
        if len(default) != n:
            raise ValueError(
                f"{cfg.name('num_hidden_layers')} = {n}, but without layers_block_type "
                f"{cfg.class_name} uses its default list of {len(default)} layers; give "
                "layers_block_type"
            )
        sources["layer_types"] = f"{cfg.class_name}'s default layers_block_type (config code)"
        return checked_layer_types(default, n, sources["layer_types"])
    if how == "fill":  # GraniteMoeHybrid: every layer Mamba
        sources["layer_types"] = f"every layer {rule[1]} (config code's default)"
        return [str(rule[1])] * n
    raise AssertionError(f"unknown layers_rule {rule!r}")


def chunked(
    cfg: Config, row: ModelRow, types: list[str], nope: set[int], sources: dict[str, str]
) -> list[str]:
    """Llama 4 with no ``layer_types``: its rotating layers are chunked when the config has an
    ``attention_chunk_size`` (its config code), its NoPE layers full attention."""
    if not row.chunk_rotating or "layer_types" in sources:
        return types
    if cfg.int("attention_chunk_size") is None:
        return types
    sources["chunked layers"] = (
        f"the layers that rotate, {cfg.name('attention_chunk_size')} set (model code)"
    )
    return [
        "chunked_attention" if t == "full_attention" and i not in nope else t
        for i, t in enumerate(types)
    ]


def nope_layers(cfg: Config, row: ModelRow, types: list[str], sources: dict[str, str]) -> set[int]:
    if row.requires is not None and not cfg.bool(row.requires, True):
        # no rotary embedding is built (CLVP's use_rotary_embedding): no layer rotates
        sources["NoPE layers"] = f"{cfg.name(row.requires)} = False: every layer"
        return set(range(len(types)))
    if row.rope_when is not None:
        key, want, default = row.rope_when
        got = cfg.get(key, default)
        if got != want:
            # GraniteMoeHybrid builds no rotary module unless position_embedding_type is
            # "rope"; Zamba2 rotates only with use_mem_rope
            sources["NoPE layers"] = (
                f"{cfg.name(key)} = {got!r}, not {want!r}: every layer (model code)"
            )
            return set(range(len(types)))
        sources["rotates"] = f"{cfg.name(key)} = {want!r} (model code)"
    if (
        row.nope == "full_attention"
        and row.nope_when is not None
        and cfg.get(row.nope_when) is None
    ):
        sources["NoPE layers"] = f"none: {cfg.name(row.nope_when)} is null (model code)"
        return set()
    if row.nope == "full_attention":
        sources["NoPE layers"] = "full_attention layers (model code)"
        return {i for i, t in enumerate(types) if t == "full_attention"}
    if row.nope == "no_rope_layers":
        flags = cfg.get("no_rope_layers")
        empty = flags is None or (isinstance(flags, (list, tuple)) and len(flags) == 0)
        if empty and row.nope_interval is not None:
            # the config code's default (Llama 4, SmolLM3): every no_rope_layer_interval-th
            # layer is NoPE
            every = cfg.int("no_rope_layer_interval", row.nope_interval, maximum=MAX_LAYERS)
            sources["NoPE layers"] = (
                f"{cfg.name('no_rope_layer_interval')} (model code's default {row.nope_interval})"
            )
            return {i for i in range(len(types)) if (i + 1) % every == 0}
        if empty:
            return set()
        key = cfg.name("no_rope_layers")
        if not isinstance(flags, (list, tuple)):
            raise TypeError(
                f"{key} must be a list of 0/1 flags (1 = the layer rotates), got {_describe(flags)}"
            )
        if len(flags) < len(types):
            raise ValueError(
                f"{key} must hold a flag for each of the {len(types)} layers (1 = the layer "
                f"rotates), got {len(flags)}"
            )
        for i, flag in enumerate(flags[: len(types)]):  # the model reads the first n
            if not isinstance(flag, numbers.Integral):
                raise TypeError(f"{key}[{i}] must be 0 or 1, got {_describe(flag)}")
            if int(flag) not in (0, 1):
                raise ValueError(f"{key}[{i}] must be 0 or 1, got {int(flag)}")
        sources["NoPE layers"] = key
        return {i for i, f in enumerate(flags[: len(types)]) if not int(f)}
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
    elif row.head_dim_rule is not None:
        # the config class derives head_dim when the file has none (Zamba2's doubled width)
        hidden, heads = cfg.int("hidden_size"), cfg.int("num_attention_heads")
        if hidden is None or heads is None:
            raise ValueError(f"{cfg.where} must hold hidden_size and num_attention_heads")
        head_dim = row.head_dim_rule * hidden // heads
        factor = f"{row.head_dim_rule} * " if row.head_dim_rule != 1 else ""
        sources["head_dim"] = (
            f"{factor}{cfg.name('hidden_size')} // {cfg.name('num_attention_heads')} (config code)"
        )
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
    check_width(head_dim, f"head_dim = {sources['head_dim']}")
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
    if rot is not None:
        check_width(rot, f"rotary_dim = {sources['rotary_dim']}")
    return head_dim, rot


def layer_head_dims(
    cfg: Config, row: ModelRow, types: list[str], head_dim: int, sources: dict[str, str]
) -> list[int]:
    """Each layer's head dim: per-layer overrides, else the row's key for its layer type."""
    out = []
    for i, t in enumerate(types):
        value = cfg.overrides(i).get("head_dim")
        if value is not None:
            where = f"{cfg.where}['per_layer_config'][{i}]['head_dim']"
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                raise TypeError(f"{where} must be an int, got {_describe(value)}")
            if value < 1:
                raise ValueError(f"{where} must be >= 1, got {value}")
            check_width(int(value), where)
            sources[f"{t}: head_dim"] = where
        elif row.layer_head_dim is not None and t == row.layer_head_dim[0]:
            _, key, default = row.layer_head_dim
            value = cfg.int(key, default, maximum=MAX_HEAD_DIM)
            sources[f"{t}: head_dim"] = f"{cfg.name(key)} (default {default})"
        out.append(head_dim if value is None else int(value))
    return out


def window(cfg: Config, layer_type: str, row: ModelRow | None = None) -> int | None:
    """The window of a sliding layer or the chunk of a chunked one (None when the config has
    none); a positive int, refused by name otherwise."""
    if layer_type == "sliding_attention":
        if row is not None and row.window_rule is not None:  # ModernBERT: local_attention // 2
            key, divisor = row.window_rule
            width = cfg.int(key)
            return None if width is None else width // divisor
        return cfg.int("sliding_window")
    if layer_type == "chunked_attention":
        return cfg.int("attention_chunk_size")
    return None


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
    entry: RopeEntry,
) -> LayerScheme:
    params, where = dict(entry.params), entry.where
    prefix = "" if layer_type == "full_attention" else f"{layer_type}: "
    rope_type = params.get("rope_type", "default")
    if not isinstance(rope_type, str) or rope_type not in _ROPE_TYPES:
        exc = TypeError if not isinstance(rope_type, str) else ValueError
        raise exc(
            f"{entry.origins.get('rope_type', where)} must be one of {list(_ROPE_TYPES)}, got "
            f"{rope_type!r}"
        )
    sources[prefix + "rope_type"] = entry.origins.get("rope_type", "default")
    sources[prefix + "base"] = entry.origins.get("rope_theta", where)
    base = cfg.real("rope_theta", params.get("rope_theta"), name=sources[prefix + "base"])
    if base is not None:
        base = check_base(base, name=sources[prefix + "base"])
    if row.ntk_alpha and rope_type == "dynamic" and params.get("alpha") is not None:
        base, rope_type = _ntk_alpha(params, base, head_dim, where, prefix, sources), "default"
        params = {k: v for k, v in params.items() if k not in ("alpha", "factor")}
    partial = params.get("partial_rotary_factor")
    derived_key = None
    if partial is None and row.partial_from is not None and cfg.get(row.partial_from) is not None:
        # MiniMax-M2's config class: partial_rotary_factor = rotary_dim / head_dim
        legacy = cfg.int(row.partial_from, maximum=MAX_HEAD_DIM)
        partial = legacy / head_dim
        derived_key = f"{cfg.name(row.partial_from)} / head_dim (config code)"
        if not 0 < partial <= 1:
            raise ValueError(
                f"{cfg.name(row.partial_from)} must be at most head_dim = {head_dim}, got {legacy}"
            )
    if partial is not None:
        key = derived_key or entry.origins.get(
            "partial_rotary_factor", f"{where}['partial_rotary_factor']"
        )
        if isinstance(partial, bool) or not isinstance(partial, numbers.Real):
            raise TypeError(f"{key} must be a number in (0, 1], got {_describe(partial)}")
        number: Any = partial  # compared as it is: float(10**400) overflows
        if not 0 < number <= 1:
            raise ValueError(f"{key} must be a number in (0, 1], got {partial}")
        partial = float(partial)
        reads = (cfg.facts or {}).get("reads_partial")
        if rot is not None or row.convention in _NO_PARTIAL:
            partial = None  # the width is the row's key or rule (GPT-J, MLA, CLVP)
        elif rope_type == "default" and reads is False:
            # the model's own default frequencies span the whole head whatever the key says
            sources["rotary_dim"] = (
                f"head_dim: {key} is not read by {cfg.model_type}'s default RoPE (model code)"
            )
            partial = None
        elif rope_type not in ("default", "proportional") and reads is False and partial != 1.0:
            raise ValueError(
                f"{key} = {partial:g} with rope_type {rope_type!r}: transformers' {rope_type} "
                f"frequencies then span {partial:g} of the head, but {cfg.model_type}'s code "
                "rotates the whole head with them and fails on this config; posenc.hf does not "
                "describe a config its model cannot run"
            )
        else:
            sources["partial_rotary_factor"] = key
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
        flag = params.get("mrope_interleaved")
        if flag is not None and not isinstance(flag, bool):
            raise TypeError(
                f"{where}['mrope_interleaved'] must be true or false (a JSON boolean), got "
                f"{_describe(flag)}"
            )
        interleaved = bool(flag) or row.convention == "mrope_interleaved"
        if layout == "hw_then_t" and section[0] != section[1]:
            raise ValueError(
                f"{key} must give h and w the same number of pairs (they take turns), got "
                f"{list(section)}"
            )
    if row.section_alias is not None:  # read above, with mrope_section
        params.pop(row.section_alias, None)
    if row.rotated_heads is not None:
        sources["rotated_heads"] = "model code (its attention rotates the first heads only)"
    mscale = None
    if row.mscale_keys is not None:
        if rope_type != "default":  # the default rope type scales by 1.0 and reads neither
            mscale = _mscales(params, row.mscale_keys, where, entry.origins)
            sources[prefix + "mscale"] = (
                f"{where}['{row.mscale_keys[0]}'], ['{row.mscale_keys[1]}'] by length (model code)"
            )
    scaling = scaling_of(cfg, params, rope_type, max_pos, ignored, where=where)
    if scaling is not None:
        sources[prefix + "scaling"] = where
        if "original_max_position_embeddings" in scaling:
            sources[prefix + "original_max_position_embeddings"] = (
                f"{cfg.name('max_position_embeddings')} (dynamic NTK reads it, model code)"
                if rope_type == "dynamic"
                else entry.origins.get(
                    "original_max_position_embeddings",
                    f"{where}['original_max_position_embeddings']",
                )
            )
        if "factor" in scaling and "factor" not in params:
            sources[prefix + "factor"] = (
                f"{cfg.name('max_position_embeddings')} / "
                f"{sources[prefix + 'original_max_position_embeddings']} (model code)"
            )
        if rope_type in ("yarn", "longrope") and mscale is None:
            sources[prefix + "attention_factor"] = (
                f"{where}['attention_factor']"
                if params.get("attention_factor") is not None
                else f"from the factor (model code's {rope_type} formula)"
            )
    width = window(cfg, layer_type, row)
    if width is not None:
        key = (
            row.window_rule[0]
            if layer_type == "sliding_attention" and row.window_rule is not None
            else "sliding_window"
            if layer_type == "sliding_attention"
            else "attention_chunk_size"
        )
        sources[prefix + "window"] = cfg.name(key) + (
            f" // {row.window_rule[1]} (model code)"
            if row.window_rule is not None and layer_type == "sliding_attention"
            else ""
        )
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
        window=width,
        mrope_section=section,
        mrope_interleaved=interleaved,
        proportional_angles=proportional,
        angle_sign=row.angle_sign,
        rotated_heads=row.rotated_heads,
        mrope_layout=layout or None,
        mscale=mscale,
    )
    if rope_type != "proportional":
        _, factor = layer.inv_freq()
        layer = LayerScheme(**{**layer.__dict__, "attention_factor": factor})
    else:
        layer = LayerScheme(**{**layer.__dict__, "attention_factor": 1.0})
    return layer


def scaling_of(
    cfg: Config,
    params: dict[str, Any],
    rope_type: str,
    max_pos: int | None,
    ignored: set[str],
    where: str = "config['rope_parameters']",
) -> dict[str, Any] | None:
    """The scaling parameters of a layer in the form :func:`posenc.rope_frequencies` takes
    (None for plain RoPE); the keys no formula reads go to ``ignored``. ``where`` names the
    dict the parameters came from, in refusals."""
    if rope_type == "default":
        ignored.update(k for k in params if k not in _READ_ELSEWHERE)
        return None
    if rope_type == "proportional":
        ignored.update(k for k in params if k not in (*_READ_ELSEWHERE, "factor"))
        factor = params.get("factor")
        if factor is None:
            return None
        if isinstance(factor, bool) or not isinstance(factor, numbers.Real):
            raise TypeError(
                f"rope_parameters['factor'] must be a number > 0, got {_describe(factor)}"
            )
        if not math.isfinite(float(factor)) or float(factor) <= 0:
            raise ValueError(f"rope_parameters['factor'] must be finite and > 0, got {factor!r}")
        return {"factor": float(factor)}
    required, optional = _KEYS[rope_type]
    out: dict[str, Any] = {"rope_type": rope_type}
    for k, v in params.items():
        if k in _READ_ELSEWHERE:
            continue
        if k in required or k in optional or k == "factor":
            if v is not None:
                out[k] = _plain_number(v)
        else:
            ignored.add(k)
    original = out.get("original_max_position_embeddings")
    if rope_type == "dynamic":
        # transformers' dynamic NTK reads config.max_position_embeddings as the trained length
        out["original_max_position_embeddings"] = max_pos
    elif rope_type in _NEEDS_ORIGINAL and original is None:
        original = cfg.get("original_max_position_embeddings") or max_pos
        out["original_max_position_embeddings"] = original
    if rope_type == "yarn" and out.get("factor") is None:
        # transformers' config validation requires it (KeyError: missing 'factor'): a value it
        # would refuse is never inferred
        raise ValueError(
            f"{where}['factor'] must be given with rope_type 'yarn' (transformers requires the "
            "key and refuses the config without it), got none"
        )
    if rope_type == "longrope" and out.get("factor") is None and max_pos and original:
        out["factor"] = max_pos / original  # transformers' fallback
    if rope_type == "longrope" and "factor" in out and "attention_factor" not in out:
        if out["factor"] <= 1.0:
            out["attention_factor"] = 1.0
    return out


def _mscales(
    params: dict[str, Any], keys: tuple[str, str], where: str, origins: Any
) -> tuple[float, float]:
    """Phi-3.5-MoE's ``(short_mscale, long_mscale)``, taken out of ``params``: numbers, both
    required with a scaled rope type (its config class refuses the config otherwise)."""
    out = []
    for k in keys:
        value = params.pop(k, None)
        name = origins.get(k, f"{where}['{k}']")
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise TypeError(
                f"{name} must be a number with a scaled rope_type (transformers' config class "
                f"requires it), got {_describe(value)}"
            )
        if not math.isfinite(float(value)):
            raise ValueError(f"{name} must be finite, got {value}")
        out.append(float(value))
    return out[0], out[1]


def _plain_number(value: Any) -> Any:
    """NumPy scalars (a config built in Python) as Python numbers, so that to_dict is JSON;
    anything else as it is, for rope_frequencies to check."""
    if isinstance(value, bool):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    if isinstance(value, (list, tuple)):
        return [_plain_number(v) for v in value]
    return value


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
    sources[prefix + "rope_type"] = (
        f"{sources[prefix + 'rope_type']} = 'dynamic' with 'alpha': NTK-alpha, static (model code)"
    )
    sources[prefix + "base"] = (
        f"{sources[prefix + 'base']} * {where}['alpha'] ** (d / (d - 2)), d = {head_dim}"
    )
    return float(base) * float(alpha) ** (head_dim / (head_dim - 2))

"""``describe``: read a transformers config (object or ``config.json`` dict) into a ``Scheme``."""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from .._array import _describe
from ..rope_scaling import MAX_LENGTH
from .classes import READ_KEYS, class_facts, classes_version
from .conventions import CONVENTIONS
from .fixed import read_fixed
from .keys import LENGTH_KEYS, MAX_HEAD_DIM, MAX_LAYERS, Config
from .layer import LayerScheme
from .params import rope_entries
from .registry import row_for, walk_reason
from .rotary import (
    NO_ATTENTION,
    chunked,
    head_dims,
    layer_head_dims,
    layer_types,
    nope_layers,
    rotary_layer,
    window,
)
from .schema import ModelRow
from .scheme import Scheme

__all__ = ["describe"]


def describe(config: Any) -> Scheme:
    """Experimental. What a transformers model does with positions, read from its config.

    A ``config.json`` dict is read as transformers' config class of its ``model_type`` reads
    it: keys the file leaves out take the class's defaults, ``attribute_map`` aliases
    (``n_layer``, ``n_embd``, ...) count as the standard names, a sub-config the file leaves
    sparse (or out) is completed with its class's defaults, and the RoPE keys are resolved
    into ``rope_parameters`` with transformers' precedence (see ``posenc.hf.params``). A model
    type posenc.hf has no verified row for is described as unknown (``kind == "unknown"``, no
    layers, notes saying what a description would need): never guessed.

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
        (named as ``config['key']``), a boolean key that is not a JSON boolean.
    ValueError
        No ``model_type``; contradictory keys (e.g. ``rope_scaling`` and ``rope_parameters``
        that disagree, ``layer_types`` of the wrong length, an ``mrope_section`` that does not
        sum to ``rotary_dim / 2``); a config transformers' code for the model cannot run.

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
    >>> posenc.hf.describe({"model_type": "bert"}).kind
    'unknown'
    """
    if isinstance(config, (str, bytes)) or not (
        isinstance(config, Mapping) or hasattr(config, "model_type")
    ):
        raise TypeError(
            f"config must be a dict (config.json) or a transformers config object, got "
            f"{_describe(config)}"
        )
    model_type = _model_type(config, "config")
    row = row_for(model_type)
    if row is None:
        return unknown(model_type, config)
    return _describe_config(Config(config, "config", model_type), row)


def _model_type(config: Any, where: str) -> str:
    raw = (
        config.get("model_type")
        if isinstance(config, Mapping)
        else getattr(config, "model_type", None)
    )
    if raw is None:
        raise ValueError(
            f"{where} must name its model_type (as every transformers config.json does), got "
            "none; without it the model's code, which decides the pairing, is unknown"
        )
    if not isinstance(raw, str):
        raise TypeError(f"{where}['model_type'] must be a string, got {_describe(raw)}")
    return raw


def describe_with(config: Any, rows: Mapping[str, ModelRow]) -> Scheme:
    """``config`` described with ``rows`` (model type -> row) in place of the registry's, for
    its own type and a sub-config's: the walks try candidate rows on types posenc.hf has none
    for; ``describe`` never guesses one."""
    model_type = _model_type(config, "config")
    row = rows.get(model_type) or row_for(model_type)
    if row is None:
        return unknown(model_type, config)
    return _describe_config(Config(config, "config", model_type), row, rows=rows)


def unknown(model_type: str, config: Any = None) -> Scheme:
    """The scheme of a model type posenc.hf has no verified row for: kind ``"unknown"``, no
    layers, and notes saying why and what a description would need."""
    facts = class_facts(model_type)
    version = classes_version()
    hub = isinstance(config, Mapping) and isinstance(config.get("auto_map"), Mapping)
    if facts is None and hub:
        why_en = (
            f"transformers {version} has no model type {model_type!r}: its config.json's auto_map "
            "points at modeling code in the checkpoint's own repository (trust_remote_code), "
            "which posenc.hf does not read."
        )
        why_zh = (
            f"transformers {version} 没有模型类型 {model_type!r}：其 config.json 的 auto_map 指向"
            "权重仓库自带的建模代码（trust_remote_code），posenc.hf 不读取这类代码。"
        )
    elif facts is None:
        why_en = f"transformers {version} has no model type {model_type!r}."
        why_zh = f"transformers {version} 没有模型类型 {model_type!r}。"
    else:
        reason = walk_reason(model_type)
        why_en = (
            f"transformers {version} has {facts['class']} for it, but posenc.hf has no verified "
            "row for it" + (f" (the atlas walk: {reason})." if reason else ".")
        )
        why_zh = (
            f"transformers {version} 中它对应 {facts['class']}，但 posenc.hf 没有经过验证的条目"
            + (f"（图谱遍历的结论：{reason}）。" if reason else "。")
        )
    need_en = (
        "posenc.hf does not guess: a description needs a row in posenc.hf.MODELS naming the "
        "convention its attention code follows, verified against that code by the atlas walk "
        "(tests/hf_walk.py)."
    )
    need_zh = (
        "posenc.hf 不做猜测：要描述它，须在 posenc.hf.MODELS 中加一行，写明其注意力代码遵循的约定，"
        "并由图谱遍历（tests/hf_walk.py）对照该代码验证。"
    )
    return Scheme(
        model_type=model_type,
        convention="unknown",
        kind="unknown",
        known=False,
        layers=(),
        notes=(why_en, need_en),
        notes_zh=(why_zh, need_zh),
    )


def _sub(cfg: Config, key: str) -> tuple[Any, str | None, dict[str, Any]]:
    """The sub-config ``key``: (its dict or object, its model type, the defaults it gets when
    the file leaves it out), as the composite's config class builds it."""
    spec = ((cfg.facts or {}).get("subs") or {}).get(key) or {}
    sub = cfg.raw(key)
    if sub is not None and not (isinstance(sub, Mapping) or hasattr(sub, "__dict__")):
        raise TypeError(f"{cfg.name(key)} must be a dict, got {_describe(sub)}")
    if sub is None:
        return {}, spec.get("model_type"), dict(spec.get("init") or {})
    given = sub.get("model_type") if isinstance(sub, Mapping) else getattr(sub, "model_type", None)
    if given is not None and not isinstance(given, str):
        raise TypeError(f"{cfg.name(key)}['model_type'] must be a string, got {_describe(given)}")
    if spec and not spec.get("auto"):
        return sub, spec.get("model_type"), {}  # the class is fixed: a model_type in it is ignored
    return sub, given or spec.get("model_type"), {}


def _descend(
    cfg: Config, row: ModelRow, rows: Mapping[str, ModelRow] | None = None
) -> tuple[Config, ModelRow, list[ModelRow]] | Scheme:
    """Down the sub-configs the rows name to the config that holds the positions: (that config,
    its row, the rows passed on the way), or the unknown scheme of a sub-config's type."""
    outer: list[ModelRow] = []
    seen = [id(cfg.config)]
    for depth in range(3):
        model_type = cfg.model_type or ""
        sub_key = row.sub_config
        if sub_key is None:
            return cfg, row, outer
        if depth >= 2:
            raise ValueError(
                f"{cfg.name(sub_key)} nests a config three levels down; a model's positions live "
                "at most two levels down (Qwen2.5-Omni: thinker_config, then its text_config)"
            )
        if cfg.raw(sub_key) is None and (
            cfg.raw("num_attention_heads") is not None or cfg.raw("hidden_size") is not None
        ):
            # a flat (4.x) config.json of a model that transformers 5 nests: read the top level
            # as the text model (transformers moves these keys into text_config)
            flat = (rows or {}).get(f"{model_type}_text") or row_for(f"{model_type}_text")
            if flat is not None:
                outer.append(row)
                cfg, row = Config(cfg.config, cfg.where, f"{model_type}_text"), flat
            else:
                row = replace(row, sub_config=None)
            continue
        sub, inner_type, init = _sub(cfg, sub_key)
        where = cfg.name(sub_key) if cfg.raw(sub_key) is not None else f"{cfg.where}['{sub_key}']"
        if id(sub) in seen:
            raise ValueError(f"{where} holds a config that holds it (a cycle, not a config.json)")
        seen.append(id(sub))
        if inner_type is None:
            raise ValueError(
                f"{where} names no model_type and the {model_type} config class gives it none"
            )
        inner_row = (rows or {}).get(inner_type) or row_for(inner_type)
        if inner_row is None:
            return unknown(inner_type, sub)
        outer.append(row)
        cfg, row = Config(sub, where, inner_type, init), inner_row
    raise AssertionError("unreachable: the loop returns or raises by depth 2")


def _describe_config(
    cfg: Config, row: ModelRow, depth: int = 0, rows: Mapping[str, ModelRow] | None = None
) -> Scheme:
    model_type = cfg.model_type or ""
    found = _descend(cfg, row, rows)
    if isinstance(found, Scheme):
        return found
    inner_cfg, inner_row, outer = found
    inner = _read_rows(inner_cfg, inner_cfg.model_type or "", inner_row)
    if not outer:
        return inner
    notes_en = tuple(n for r in outer for n in r.notes_en)
    notes_zh = tuple(n for r in outer for n in r.notes_zh)
    return replace(
        inner,
        model_type=model_type,
        notes=notes_en + inner.notes,
        notes_zh=notes_zh + inner.notes_zh,
    )


def resolve(config: Any, generic: ModelRow | None = None) -> tuple[Config, ModelRow]:
    """The config that holds a model's positions (down its sub-configs) and its row, for
    readers other than ``describe`` (``posenc.layer_rope_parameters``). ``generic``: the row
    to read a model type with no row by (its keys only); without it such a type is refused."""
    model_type = _model_type(config, "config")
    row = row_for(model_type) or generic
    if row is None:
        raise ValueError(f"config['model_type'] {model_type!r} is not described by posenc.hf")
    rows = {} if generic is None else _generic_rows(config, generic)
    found = _descend(Config(config, "config", model_type), row, rows)
    if isinstance(found, Scheme):
        raise ValueError(f"config['model_type'] {found.model_type!r} is not described by posenc.hf")
    return found[0], found[1]


def read_generic(config: Any, generic: ModelRow) -> tuple[Scheme, Config, ModelRow]:
    """The scheme ``describe`` reads from the config that holds the model's positions, that
    config and its row (after a switch such as Falcon's ``alibi``), for readers other than
    ``describe`` (``posenc.layer_rope_parameters``); a model type posenc.hf has no row for is
    read by ``generic`` (its keys only)."""
    cfg, row = resolve(config, generic)
    if row.switch is not None and cfg.bool(row.switch[0], False):
        row = row.switch[1]
    return _read_rows(cfg, cfg.model_type or "", row), cfg, row


def _generic_rows(config: Any, generic: ModelRow) -> dict[str, ModelRow]:
    """The generic row for a config's type and its text_config's type, where they have none."""
    out = {}
    for cfg in (config, _get(config, "text_config")):
        mt = _get(cfg, "model_type") if cfg is not None else None
        if isinstance(mt, str) and row_for(mt) is None:
            out[mt] = generic
    return out


def _get(config: Any, key: str) -> Any:
    return config.get(key) if isinstance(config, Mapping) else getattr(config, key, None)


def _read_rows(cfg: Config, model_type: str, row: ModelRow) -> Scheme:
    if row.switch is not None and cfg.bool(row.switch[0], False):
        row = row.switch[1]
    conv = CONVENTIONS[row.convention]
    if conv.kind not in ("rope", "mrope"):
        return read_fixed(cfg, model_type, row, conv, True)
    sources: dict[str, str] = {}
    if row.selector is not None:
        _select(cfg, model_type, row.selector, sources)
    n = cfg.int(row.layers_key, maximum=MAX_LAYERS)
    types = layer_types(cfg, row, n, sources)
    # a length past 2**53 has no exact float64 (10**400 overflowed Phi-3's factor max_pos / L0)
    max_pos = cfg.int("max_position_embeddings", maximum=MAX_LENGTH)
    head_dim, rot_default = head_dims(cfg, row, sources)
    layer_heads = layer_head_dims(cfg, row, types, head_dim, sources)
    pairing = conv.pairing if row.pairing is None else row.pairing
    if row.pairing_key is not None:
        if cfg.bool(row.pairing_key, False):
            pairing = "deinterleave" if conv.slot == "tail" else "interleaved"
        sources["pairing"] = _origin_text(cfg, row.pairing_key)
    nope = nope_layers(cfg, row, types, sources)
    types = chunked(cfg, row, types, nope, sources)
    applies_to = conv.applies_to
    if row.value_key is not None and cfg.bool(row.value_key, False):  # RoFormer's rotary_value
        applies_to = "qkv"
        sources["values rotate"] = cfg.name(row.value_key)
    entries, is_nested = rope_entries(cfg, row)
    temperature = _query_temperature(cfg, row, sources) if nope else None
    ignored: set[str] = set()
    rows: list[LayerScheme] = []
    per_type: dict[tuple[str, int], LayerScheme] = {}
    for i, t in enumerate(types):
        if t in NO_ATTENTION:
            rows.append(LayerScheme(i, t, "none"))
            continue
        entry_key = t if is_nested else ""
        if is_nested and t not in entries:
            raise ValueError(
                f"{cfg.name('rope_parameters')} has no entry for layer type {t!r} (layer {i})"
            )
        entry = entries[entry_key]
        if i in nope or entry is None:
            if i not in nope:
                sources["NoPE layers"] = f"{cfg.name('rope_parameters')}['{t}'] = None"
            rows.append(
                LayerScheme(
                    i,
                    t,
                    "nope",
                    window=window(cfg, t),
                    query_temperature=temperature if i in nope else None,
                )
            )
            continue
        hd = layer_heads[i]
        if (t, hd) not in per_type:
            per_type[(t, hd)] = rotary_layer(
                cfg,
                row,
                conv.kind,
                t,
                hd,
                rot_default,
                pairing,
                conv.slot,
                conv.axes,
                conv.layout,
                max_pos,
                sources,
                ignored,
                entry,
            )
        proto = per_type[(t, hd)]
        rows.append(replace(proto, index=i))
    return Scheme(
        model_type,
        conv.name,
        conv.kind,
        True,
        tuple(rows),
        max_pos,
        sources,
        row.notes_en,
        row.notes_zh,
        tuple(sorted(ignored)),
        applies_to=applies_to,
        indexer=_indexer(cfg, row, per_type, sources),
        length_keys=_length_keys(cfg),
    )


def _length_keys(cfg: Config) -> dict[str, Any]:
    """The config's :data:`LENGTH_KEYS` that it (or its class) sets, raw: posenc.engines checks
    them where an engine reads them. The class's default where classes.json records it
    (``max_position_embeddings``, ``original_max_position_embeddings``, ...); the others no
    config class of posenc.engines' model types sets (transformers 5.24). Read last: a read
    records where the key came from."""
    found = {key: cfg.get(key) if key in READ_KEYS else cfg.raw(key) for key in LENGTH_KEYS}
    return {key: value for key, value in found.items() if value is not None}


def _indexer(
    cfg: Config,
    row: ModelRow,
    per_type: Mapping[tuple[str, int], LayerScheme],
    sources: dict[str, str],
) -> LayerScheme | None:
    """The DSA lightning indexer (DeepSeek-V3.2, GLM-MoE-DSA): the attention's frequencies on
    the first ``rotary_dim`` features of ``index_head_dim``-wide heads, in the row's pairing."""
    if row.indexer is None:
        return None
    main = next(iter(per_type.values()), None)
    if main is None:  # no layer rotates
        return None
    width = cfg.int("index_head_dim", maximum=MAX_HEAD_DIM)
    if width is None:
        raise ValueError(f"{cfg.name('index_head_dim')} must be an int, got none")
    rot = int(main.rotary_dim or 0)
    if width < rot:
        raise ValueError(
            f"{cfg.name('index_head_dim')} must be at least the rotated width {rot} "
            f"(qk_rope_head_dim), got {width}"
        )
    sources["indexer: head_dim"] = _origin_text(cfg, "index_head_dim")
    sources["indexer: pairing"] = "model code (the indexer's own apply function)"
    return replace(main, layer_type="indexer", pairing=row.indexer, slot="head", head_dim=width)


def _query_temperature(
    cfg: Config, row: ModelRow, sources: dict[str, str]
) -> dict[str, float] | None:
    """Llama 4's query temperature on NoPE layers (``Llama4TextAttention``: with
    ``attn_temperature_tuning``, queries times ``1 + attn_scale * log1p(floor((p + 1) /
    floor_scale))``), or None where the row or the config has none."""
    if not row.query_temperature:
        return None
    on = cfg.bool("attn_temperature_tuning", False)
    sources["query temperature"] = _origin_text(cfg, "attn_temperature_tuning") + (
        "" if on else " = false"
    )
    if not on:
        return None
    scale = cfg.get("attn_scale")
    if scale is None:
        raise ValueError(
            f"{cfg.name('attn_scale')} must be a number with attn_temperature_tuning true, got none"
        )
    if isinstance(scale, bool) or not isinstance(scale, numbers.Real):
        raise TypeError(f"{cfg.name('attn_scale')} must be a number, got {_describe(scale)}")
    try:
        finite = math.isfinite(float(scale))
    except OverflowError:  # an int past float64 (10**400)
        finite = False
    if not finite:
        raise ValueError(f"{cfg.name('attn_scale')} must be finite, got {scale}")
    floor_scale = cfg.int("floor_scale")
    if floor_scale is None:
        raise ValueError(
            f"{cfg.name('floor_scale')} must be an int >= 1 with attn_temperature_tuning true, "
            "got none"
        )
    sources["attn_scale"] = _origin_text(cfg, "attn_scale")
    sources["floor_scale"] = _origin_text(cfg, "floor_scale")
    return {"attn_scale": float(scale), "floor_scale": floor_scale}


def _origin_text(cfg: Config, key: str) -> str:
    kind, where = cfg.origin(key)
    if kind == "key":
        return where
    if kind == "class default":
        return f"{cfg.where}['{key}'] (absent: {where}'s default)"
    return f"{cfg.where}['{key}'] (absent: false, model code)"


def _select(
    cfg: Config, model_type: str, selector: tuple[str, str], sources: dict[str, str]
) -> None:
    """Refuse a config whose ``selector`` key picks position code the row does not describe."""
    key, want = selector
    got = cfg.get(key)
    if got != want:
        raise ValueError(
            f"{cfg.name(key)} must be {want!r} for posenc.hf to describe a {model_type} model, "
            f"got {got!r}: that setting selects position code posenc.hf does not describe"
        )
    sources["selected by"] = f"{cfg.name(key)} = {want!r}"

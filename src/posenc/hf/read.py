"""``describe``: read a transformers config (object or ``config.json`` dict) into a ``Scheme``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from .._array import _describe
from .conventions import CONVENTIONS
from .fixed import read_fixed
from .keys import Config, nested
from .registry import row_for
from .rotary import (
    NO_ATTENTION,
    head_dims,
    layer_head_dims,
    layer_types,
    nope_layers,
    rotary_layer,
    window,
)
from .schema import ModelRow
from .scheme import LayerScheme, Scheme

__all__ = ["describe"]


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
    return _describe_config(Config(config), outer=None)


def _describe_config(cfg: Config, outer: str | None, depth: int = 0) -> Scheme:
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
    if sub_key is not None and depth >= 2:
        raise ValueError(
            f"{cfg.name(sub_key)} nests a config three levels down; a model's positions live at "
            "most two levels down (Qwen2.5-Omni: thinker_config, then its text_config)"
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
        cfg = Config(cfg.config, cfg.where, dict(row.defaults))
    if sub_key is not None:
        sub = cfg.get(sub_key)
        if sub is None:
            raise ValueError(
                f"a {model_type} config keeps its positions in {cfg.name(sub_key)}, which is missing"
            )
        if not (isinstance(sub, Mapping) or hasattr(sub, "__dict__")):
            raise TypeError(f"{cfg.name(sub_key)} must be a dict, got {_describe(sub)}")
        inner = _describe_config(Config(sub, cfg.name(sub_key)), outer=model_type, depth=depth + 1)
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
            fixed=inner.fixed,
            applies_to=inner.applies_to,
        )
    known = row is not None
    if row is None:
        row = ModelRow(_generic_convention(cfg))
    return _read_rows(cfg, model_type, row, known)


def _generic_sub_config(cfg: Config) -> str | None:
    """An unknown multimodal config: its text_config when the top level has no heads."""
    if cfg.get("num_attention_heads") is None and cfg.get("text_config") is not None:
        return "text_config"
    return None


def _generic_convention(cfg: Config) -> str:
    rp = cfg.get("rope_parameters") or cfg.get("rope_scaling") or {}
    if isinstance(rp, Mapping) and (rp.get("mrope_section") or cfg.get("mrope_section")):
        return "mrope"
    partial = cfg.get("partial_rotary_factor")
    if isinstance(rp, Mapping) and rp.get("partial_rotary_factor") is not None:
        partial = rp.get("partial_rotary_factor")
    if partial is not None and partial != 1:
        return "partial"
    return "llama"


def _read_rows(cfg: Config, model_type: str, row: ModelRow, known: bool) -> Scheme:
    if row.switch is not None and cfg.get(row.switch[0]):
        row = row.switch[1]
    conv = CONVENTIONS[row.convention]
    if conv.kind not in ("rope", "mrope"):
        return read_fixed(cfg, model_type, row, conv, known)
    sources: dict[str, str] = {}
    if row.selector is not None:
        _select(cfg, model_type, row.selector, sources)
    n = cfg.int("num_hidden_layers")
    types = layer_types(cfg, row, n, sources)
    max_pos = cfg.int("max_position_embeddings")
    head_dim, rot_default = head_dims(cfg, row, sources)
    layer_heads = layer_head_dims(cfg, row, types, head_dim, sources)
    pairing = conv.pairing if row.pairing is None else row.pairing
    if row.pairing_key is not None and cfg.get(row.pairing_key):
        pairing = "deinterleave" if conv.slot == "tail" else "interleaved"
        sources["pairing"] = cfg.name(row.pairing_key)
    nope = nope_layers(cfg, row, types, sources)
    applies_to = conv.applies_to
    if row.value_key is not None and cfg.get(row.value_key):  # RoFormer's rotary_value
        applies_to = "qkv"
        sources["values rotate"] = cfg.name(row.value_key)
    ignored: set[str] = set()
    rows: list[LayerScheme] = []
    per_type: dict[tuple[str, int], LayerScheme] = {}
    rp = cfg.get("rope_parameters")
    for i, t in enumerate(types):
        if t in NO_ATTENTION:
            rows.append(LayerScheme(i, t, "none"))
            continue
        if i in nope or (nested(rp) and t in rp and rp[t] is None):
            if i not in nope:
                sources["NoPE layers"] = f"{cfg.name('rope_parameters')}['{t}'] = None"
            rows.append(LayerScheme(i, t, "nope", window=window(cfg, t)))
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
        applies_to=applies_to,
    )


_ABSENT = object()


def _select(
    cfg: Config, model_type: str, selector: tuple[str, str], sources: dict[str, str]
) -> None:
    """Refuse a config whose ``selector`` key picks position code the row does not describe."""
    key, want = selector
    raw = cfg.config.get(key, _ABSENT) if cfg.is_dict else getattr(cfg.config, key, _ABSENT)
    got = None if raw is None else cfg.get(key)
    if got != want:
        raise ValueError(
            f"{cfg.name(key)} must be {want!r} for posenc.hf to describe a {model_type} model, "
            f"got {got!r}: that setting selects position code posenc.hf does not describe"
        )
    sources["selected by"] = f"{cfg.name(key)} = {want!r}"

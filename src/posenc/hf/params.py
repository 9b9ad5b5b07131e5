"""A config's RoPE parameters as transformers resolves them: ``rope_parameters`` per layer type.

transformers 5 turns whatever a ``config.json`` holds (the 4.x ``rope_scaling`` and
``rope_theta``, a 5.x ``rope_parameters`` flat or nested by layer type, a model's own keys such
as GPT-NeoX's ``rotary_emb_base`` or Gemma 3's ``rope_local_base_freq``, or nothing at all) into
one ``rope_parameters`` dict per layer type: ``PreTrainedConfig.convert_rope_params_to_dict``
and ``standardize_rope_params``, and the overrides of some config classes. This module does the
same for a dict, from the facts of ``classes.json`` (which keys feed each entry's base and
partial factor, the class's defaults, where a legacy ``rope_scaling`` goes, the rope type
spellings it renames); a transformers config object already holds the result.

Precedence, as transformers 5.23 has it:

- ``rope_scaling`` (4.x) over ``rope_parameters`` (5.x) over the class's default; posenc.hf
  refuses a file holding both with different contents rather than pick one silently;
- within an entry, its own ``rope_theta`` / ``partial_rotary_factor`` over the top-level keys
  that feed them (in the class's order) over the class's defaults;
- ``original_max_position_embeddings`` of YaRN, Llama 3 and LongRoPE: where the config class
  declares the field (Phi-3), its value (the file's top-level key, else the class's default)
  over the one inside a flat ``rope_parameters``; in every other class the entry's own, else
  ``max_position_embeddings`` (a top-level key there is kept on the config object but never
  reaches ``rope_parameters``); a nested entry keeps its own, else ``max_position_embeddings``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .._array import _describe
from .keys import Config, nested
from .schema import ModelRow

__all__ = ["RopeEntry", "rope_entries"]

NEEDS_ORIGINAL = ("yarn", "llama3", "longrope")


@dataclass
class RopeEntry:
    """One layer type's resolved RoPE parameters and where each came from."""

    params: dict[str, Any]
    where: str  # the dict the entry came from, e.g. "config['rope_scaling']"
    origins: dict[str, str] = field(default_factory=dict)  # parameter -> its source


def _mapping(cfg: Config, key: str) -> Any:
    value = cfg.raw(key)
    if value is not None and not isinstance(value, Mapping):
        raise TypeError(f"{cfg.name(key)} must be a dict, got {_describe(value)}")
    return value


def _entry_dict(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise TypeError(f"{where} must be a dict or null, got {_describe(value)}")
    return dict(value)


def _top(cfg: Config, keys: list[str]) -> tuple[Any, str] | None:
    """The first of ``keys`` the config itself holds, with its name."""
    for key in keys:
        value = cfg.raw(key)
        if value is not None:
            return value, cfg.name(key)
    return None


def rope_entries(cfg: Config, row: ModelRow) -> tuple[dict[str, RopeEntry | None], bool]:
    """``({layer type or "": entry}, nested)``: each layer type's RoPE parameters (None: the
    layer type does not rotate), as transformers resolves the config."""
    rp = _mapping(cfg, "rope_parameters")
    facts = (cfg.facts or {}).get("rope")
    if facts is None:
        return _plain(cfg, row, rp)
    rs = _mapping(cfg, "rope_scaling")
    if rs is not None and rp is not None and (rs is rp or dict(rs) == dict(rp)):
        rs = None  # a config object's rope_scaling is its rope_parameters; or the same dict twice
    nested_class = facts["entries"] != [""]
    if rp is not None and nested(rp):
        out: dict[str, RopeEntry | None] = {}
        for key, value in rp.items():
            where = f"{cfg.name('rope_parameters')}['{key}']"
            out[key] = None if value is None else RopeEntry(_entry_dict(value, where), where)
        if rs:
            if not nested_class:
                raise ValueError(
                    f"{cfg.name('rope_scaling')} beside a {cfg.name('rope_parameters')} nested by "
                    "layer type: transformers would replace the nested dict with it; keep one"
                )
            _merge(cfg, out, rs, facts)
        return _finish(cfg, out, facts, nested_=True, given=True), True
    if nested_class:
        if rp is not None:
            raise ValueError(
                f"{cfg.name('rope_parameters')} of a {cfg.model_type} config must be nested by "
                f"layer type ({', '.join(repr(e) for e in facts['entries'])}), got keys "
                f"{sorted(rp)}"
            )
        out = {}
        for key, value in (facts["default"] or {}).items():
            where = f"{cfg.class_name}'s default rope_parameters['{key}']"
            out[key] = None if value is None else RopeEntry(copy.deepcopy(dict(value)), where)
        if rs:
            _merge(cfg, out, rs, facts)
        return _finish(cfg, out, facts, nested_=True, given=False), True
    if rs and rp is not None:
        a = {k: v for k, v in rs.items() if k != "rope_theta"}
        b = {k: v for k, v in rp.items() if k != "rope_theta"}
        if a != b:
            raise ValueError(
                f"{cfg.name('rope_parameters')} and {cfg.name('rope_scaling')} disagree: "
                f"{dict(rp)} against {dict(rs)}; keep one of them"
            )
    if rs:
        entry = RopeEntry(dict(rs), cfg.name("rope_scaling"))
    elif rp is not None:
        entry = RopeEntry(dict(rp), cfg.name("rope_parameters"))
    else:
        default = facts["default"] or {"rope_type": "default"}
        entry = RopeEntry(
            copy.deepcopy(dict(default)), f"{cfg.class_name}'s default rope_parameters"
        )
    given = bool(rs) or rp is not None
    return _finish(cfg, {"": entry}, facts, nested_=False, given=given), False


def _merge(
    cfg: Config, out: dict[str, RopeEntry | None], rs: Mapping[str, Any], facts: Any
) -> None:
    """A legacy rope_scaling merged into the entries the class merges it into (``update``)."""
    for key in facts["scaling_into"]:
        entry = out.get(key)
        if entry is None:
            continue
        had_type = "rope_type" in entry.params
        for k in entry.params:  # what was there keeps its source; what rope_scaling brings, its
            entry.origins.setdefault(k, f"{entry.where}['{k}']")
        for k in rs:
            entry.origins[k] = f"{cfg.name('rope_scaling')}['{k}']"
        entry.params.update(rs)
        entry.where = f"{entry.where} updated with {cfg.name('rope_scaling')}"
        if had_type and "rope_type" not in rs and facts.get("type_key") is False:
            entry.params.pop("type", None)  # the class ignores a "type" spelling here
            entry.origins["rope_type"] = (
                f"{cfg.name('rope_scaling')}['type'] ignored: {cfg.class_name} keeps "
                "rope_type of the entry it updates (model code)"
            )


def _finish(
    cfg: Config,
    out: dict[str, RopeEntry | None],
    facts: Any,
    *,
    nested_: bool,
    given: bool,
) -> dict[str, RopeEntry | None]:
    """Fill base, partial factor, rope type and trained length as transformers does."""
    theta_keys = facts["theta_keys"] if given else facts["default_theta_keys"]
    partial_keys = facts["partial_keys"] if given else facts["default_partial_keys"]
    for key, entry in out.items():
        if entry is None:
            continue
        p = entry.params
        if "rope_theta" in p and p["rope_theta"] is not None:
            entry.origins.setdefault("rope_theta", f"{entry.where}['rope_theta']")
            if not given:  # a class default the file's top-level keys may replace
                found = _top(cfg, theta_keys.get(key, []))
                if found is not None:
                    p["rope_theta"], entry.origins["rope_theta"] = found
        else:
            found = _top(cfg, theta_keys.get(key, []))
            if found is not None:
                p["rope_theta"], entry.origins["rope_theta"] = found
            elif facts["theta_default"].get(key) is not None:
                p["rope_theta"] = facts["theta_default"][key]
                entry.origins["rope_theta"] = f"{cfg.class_name}'s default base"
        if p.get("partial_rotary_factor") is not None:
            entry.origins.setdefault(
                "partial_rotary_factor", f"{entry.where}['partial_rotary_factor']"
            )
            if not given:
                found = _top(cfg, partial_keys.get(key, []))
                if found is not None:
                    p["partial_rotary_factor"], entry.origins["partial_rotary_factor"] = found
        else:
            found = _top(cfg, partial_keys.get(key, []))
            if found is not None:
                p["partial_rotary_factor"], entry.origins["partial_rotary_factor"] = found
            elif facts["partial_default"].get(key) is not None:
                p["partial_rotary_factor"] = facts["partial_default"][key]
                entry.origins["partial_rotary_factor"] = f"{cfg.class_name}'s default"
        _rope_type(entry, facts)
        _original(cfg, entry, nested_)
    return out


def _rope_type(entry: RopeEntry, facts: Any) -> None:
    p = entry.params
    spelled = "rope_type" if p.get("rope_type") is not None else "type" if "type" in p else None
    value = p.get(spelled) if spelled else "default"
    try:
        renamed = facts.get("type_aliases", {}).get(value, value) if facts else value
    except TypeError:  # an unhashable rope_type (a list): refused by name below
        renamed = value
    if renamed != value and facts:
        missing = [k for k in facts.get("type_alias_needs", {}).get(value, []) if k not in p]
        if missing:
            raise ValueError(
                f"{entry.where}['{spelled}'] = {value!r} without {missing} in {entry.where}: "
                f"transformers refuses this file (its config class renames {value!r} to "
                f"{renamed!r} only after filling in the keys of the scaling types it knows, then "
                f"requires {missing} there); add {missing} to {entry.where}, or spell the type "
                f"{renamed!r}"
            )
    p["rope_type"] = renamed
    p.pop("type", None)
    if "rope_type" not in entry.origins:
        entry.origins["rope_type"] = (
            f"{entry.where}['{spelled}']" if spelled else "default (no rope_type key)"
        )
    if renamed != value:
        entry.origins["rope_type"] += f", {value!r} read as {renamed!r} (config class)"


def _original(cfg: Config, entry: RopeEntry, nested_: bool) -> None:
    """``original_max_position_embeddings`` of the scaling types that need it."""
    p = entry.params
    if p.get("rope_type") not in NEEDS_ORIGINAL:
        return
    # transformers gives the top-level value priority only where the config class declares the
    # field (Phi-3's hasattr(self, ...) when it standardizes): a file's top-level key in any
    # other class is set after that and never reaches rope_parameters
    declared = cfg.is_dict and cfg.class_default("original_max_position_embeddings") is not None
    if not nested_ and declared:
        top = cfg.get("original_max_position_embeddings")
        if top is not None:
            p["original_max_position_embeddings"] = top
            entry.origins["original_max_position_embeddings"] = cfg.name(
                "original_max_position_embeddings"
            )
            return
    if p.get("original_max_position_embeddings") is not None:
        entry.origins["original_max_position_embeddings"] = (
            f"{entry.where}['original_max_position_embeddings']"
        )
        return
    top_len = cfg.get("max_position_embeddings")
    if top_len is not None:
        p["original_max_position_embeddings"] = top_len
        entry.origins["original_max_position_embeddings"] = cfg.name("max_position_embeddings")


def _plain(cfg: Config, row: ModelRow, rp: Any) -> tuple[dict[str, RopeEntry | None], bool]:
    """A config object (transformers resolved it), or a class without ``rope_parameters`` (GPT-J,
    RoFormer, wav2vec2): the parameters as they stand, the base from the row's key or default."""
    legacy = _mapping(cfg, "rope_scaling")
    if legacy is not None and rp is not None and (legacy is rp or dict(legacy) == dict(rp)):
        legacy = None
    if rp is not None and nested(rp):
        out: dict[str, RopeEntry | None] = {}
        for key, value in rp.items():
            where = f"{cfg.name('rope_parameters')}['{key}']"
            out[key] = None if value is None else RopeEntry(_entry_dict(value, where), where)
        for entry in out.values():
            if entry is not None:
                _plain_fill(cfg, row, entry)
        return out, True
    if rp is not None and legacy is not None and dict(legacy) != dict(rp):
        a = {k: v for k, v in legacy.items() if k != "rope_theta"}
        if a != {k: v for k, v in rp.items() if k != "rope_theta"}:
            raise ValueError(
                f"{cfg.name('rope_parameters')} and {cfg.name('rope_scaling')} disagree: "
                f"{dict(rp)} against {dict(legacy)}; keep one of them"
            )
    if rp is not None:
        entry = RopeEntry(dict(rp), cfg.name("rope_parameters"))
    elif legacy is not None:
        entry = RopeEntry(dict(legacy), cfg.name("rope_scaling"))
    else:
        entry = RopeEntry({}, "model code")
    _plain_fill(cfg, row, entry)
    return {"": entry}, False


def _plain_fill(cfg: Config, row: ModelRow, entry: RopeEntry) -> None:
    p = entry.params
    if p.get("rope_theta") is not None:
        entry.origins["rope_theta"] = f"{entry.where}['rope_theta']"
    elif cfg.get("rope_theta") is not None:
        p["rope_theta"] = cfg.get("rope_theta")
        entry.origins["rope_theta"] = cfg.name("rope_theta")
    elif row.base_key is not None and cfg.get(row.base_key) is not None:
        p["rope_theta"] = cfg.get(row.base_key)
        entry.origins["rope_theta"] = cfg.name(row.base_key)
    else:
        p["rope_theta"] = row.default_base
        entry.origins["rope_theta"] = f"default {row.default_base:g} (model code)"
    if p.get("partial_rotary_factor") is not None:
        entry.origins["partial_rotary_factor"] = f"{entry.where}['partial_rotary_factor']"
    elif cfg.get("partial_rotary_factor") is not None:
        p["partial_rotary_factor"] = cfg.get("partial_rotary_factor")
        entry.origins["partial_rotary_factor"] = cfg.name("partial_rotary_factor")
    _rope_type(entry, None)
    _original(cfg, entry, nested_=False)

"""Generate src/posenc/hf/classes.json: how transformers' config classes read a config.json.

posenc.hf reads a Hub ``config.json`` the way transformers' config class of its ``model_type``
would, without importing transformers: the class's defaults for the keys a sparse file leaves
out, its ``attribute_map`` aliases (GPT-J's ``n_layer``), the sub-configs a composite builds
(LLaVA's ``text_config`` is a ``LlamaConfig`` unless it names another type) and how the class
turns its RoPE keys into ``rope_parameters`` (which top-level keys feed ``rope_theta`` and
``partial_rotary_factor``, with which defaults; where a legacy ``rope_scaling`` goes; the rope
type spellings it renames). This tool asks transformers itself, class by class, and writes the
answers as data; nothing here is typed by hand. The RoPE facts come from probes: a config built
with one key set to a marker value, and where the marker lands in ``rope_parameters``.

Run it for every transformers release (``make atlas`` does, before the walk), review the diff:

    .venv/bin/python tools/hf_classes.py [--out PATH] [--check]

``--check`` writes nothing and exits 1 when the file on disk differs from what the installed
transformers gives (the suite's test of the record runs it).
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import inspect
import json
import logging
import math
import os
import re
import sys
import typing
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "src" / "posenc" / "hf" / "classes.json"

_THETA_MARK = 12345.0
_PARTIAL_MARK = 0.375
_OTHER_MARK = 23456.0
# rope type spellings a config class may rename (Phi-3's "su" and "yarn" are LongRoPE, Qwen2-VL's
# "mrope" is plain frequencies, HunYuan-VL's "xdrope" is dynamic)
_LEGACY_TYPES = ("su", "yarn", "mrope", "xdrope")


def _read_keys() -> tuple[str, ...]:
    """posenc.hf.classes.READ_KEYS, read from the source file (the package need not import)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("_classes", OUT.parent / "classes.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return tuple(module.READ_KEYS)


def _jsonable(value: Any) -> Any:
    """``value`` if JSON holds it exactly (finite numbers, strings, bools, lists, dicts)."""
    if value is None or isinstance(value, (bool, str, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, (list, tuple)):
        items = [_jsonable(v) for v in value]
        return (
            None
            if any(v is None and w is not None for v, w in zip(items, value, strict=True))
            else items
        )
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        items = {k: _jsonable(v) for k, v in value.items()}
        return None if any(items[k] is None and value[k] is not None for k in value) else items
    return None


def _field_default(f: dataclasses.Field) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:  # type: ignore[misc]
        try:
            return f.default_factory()  # type: ignore[misc]
        except Exception:
            return None
    return None


def _is_bool(annotation: Any) -> bool:
    """Whether a field's annotation is ``bool`` or ``bool | None``."""
    if annotation is bool:
        return True
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    return bool(args) and all(a is bool for a in args)


def _annotations(cls: type) -> dict[str, Any]:
    try:
        return typing.get_type_hints(cls)
    except Exception:
        out: dict[str, Any] = {}
        for c in reversed(cls.__mro__):
            out.update(getattr(c, "__annotations__", {}))
        return out


def _rope(cfg: Any) -> Any:
    return copy.deepcopy(getattr(cfg, "rope_parameters", None))


def _entries(cfg: Any, rp: Any) -> list[str]:
    try:
        nested = list(cfg.nested_rope_parameter_keys(rp or {}))
    except Exception:
        nested = []
    return nested or [""]


def _at(rp: Any, entry: str) -> Any:
    if not isinstance(rp, dict):
        return None
    return rp if entry == "" else rp.get(entry)


def _bare(entries: list[str]) -> dict[str, Any]:
    """rope_parameters without a base or a partial factor, shaped as the class nests them."""
    if entries == [""]:
        return {"rope_type": "default"}
    return {e: {"rope_type": "default"} for e in entries}


def _source_keys(cls: type) -> set[str]:
    """Top-level keys the class's own code pops or gets from its kwargs."""
    names: set[str] = set()
    for c in cls.__mro__:
        if not c.__module__.startswith("transformers.models."):
            continue
        try:
            src = inspect.getsource(c)
        except (OSError, TypeError):
            continue
        names.update(re.findall(r"kwargs\.(?:pop|get)\(\s*[\"'](\w+)[\"']", src))
    return names


def _probe(cls: type, kwargs: dict[str, Any]) -> Any:
    try:
        return cls(**copy.deepcopy(kwargs))
    except Exception:
        return None


def _keys_feeding(
    cls: type, entries: list[str], field: str, candidates: list[str], mark: float, bare: bool
) -> tuple[dict[str, list[str]], dict[str, Any]]:
    """For each entry of rope_parameters: the top-level keys whose value lands in
    ``entry[field]`` (highest precedence first), and the value it takes when none is given;
    with ``bare``, for a config that gives ``rope_parameters`` without this field, else for one
    that gives neither ``rope_parameters`` nor ``rope_scaling`` (the class's default)."""

    def given() -> dict[str, Any]:  # fresh each time: the class fills the dict in place
        return {"rope_parameters": _bare(entries)} if bare else {}

    base = _probe(cls, given())
    defaults = {e: _jsonable((_at(_rope(base), e) or {}).get(field)) for e in entries}
    found: dict[str, list[str]] = {e: [] for e in entries}
    for key in candidates:
        cfg = _probe(cls, {**given(), key: mark})
        rp = _rope(cfg)
        for e in entries:
            if (_at(rp, e) or {}).get(field) == mark:
                found[e].append(key)
    for e, keys in found.items():
        if len(keys) > 1:  # order by precedence: the key whose value wins against each other
            wins = dict.fromkeys(keys, 0)
            for a in keys:
                for b in keys:
                    if a == b:
                        continue
                    cfg = _probe(cls, {**given(), a: mark, b: mark + 1})
                    if (_at(_rope(cfg), e) or {}).get(field) == mark:
                        wins[a] += 1
            found[e] = sorted(keys, key=lambda k: -wins[k])
    return {e: k for e, k in found.items() if k}, defaults


def _half(base: Any) -> int | None:
    """Half the rotated width of a default-built config (for probes that need factor lists)."""
    rp0 = _rope(base)
    entry = _at(rp0, _entries(base, rp0)[0]) or {}
    try:
        head = getattr(base, "head_dim", None) or (
            base.hidden_size // base.num_attention_heads
            if getattr(base, "hidden_size", None) and getattr(base, "num_attention_heads", None)
            else None
        )
    except Exception:  # a per-layer attribute (heterogeneous configs) refuses a global read
        return None
    if not head:
        return None
    return int(head * (entry.get("partial_rotary_factor") or 1.0)) // 2


def _scalings(half: int | None, spelled: str, key: str = "rope_type") -> list[dict[str, Any]]:
    """Legacy ``rope_scaling`` dicts of rope type ``spelled`` to try, plainest first (a class
    that validates its rope types refuses some: Phi-3 takes only LongRoPE)."""
    plain = {key: spelled, "factor": _OTHER_MARK}
    if half is None:
        return [plain]
    full = {
        **plain,
        "short_factor": [1.0] * half,
        "long_factor": [1.0] * half,
        "original_max_position_embeddings": 16,
        "mrope_section": [half - 2 * (half // 4), half // 4, half // 4],
        "alpha": 1.0,
    }
    return [plain, full, {**full, key: "longrope"}] if spelled == "linear" else [full]


def _build_scaled(cls: type, scalings: list[dict[str, Any]]) -> Any:
    for scaling in scalings:
        cfg = _probe(cls, {"rope_scaling": scaling})
        if cfg is not None:
            return cfg
    return None


def _scaling_into(cls: type, half: int | None) -> list[str]:
    """The entries a legacy ``rope_scaling`` dict is merged into ("" when it replaces a flat
    rope_parameters)."""
    cfg = _build_scaled(cls, _scalings(half, "linear"))
    rp = _rope(cfg)
    return [e for e in _entries(cfg, rp) if (_at(rp, e) or {}).get("factor") == _OTHER_MARK]


def _type_key_read(cls: type, half: int | None, into: list[str]) -> bool | None:
    """Whether the class reads the legacy ``"type"`` spelling of a ``rope_scaling`` merged into
    ``into`` (a nested class that updates a dict already holding ``rope_type`` ignores it)."""
    if not into:
        return None
    cfg = _build_scaled(cls, _scalings(half, "linear", key="type"))
    if cfg is None:
        return None
    got = (_at(_rope(cfg), into[0]) or {}).get("rope_type")
    return got is not None and got != "default"


def _type_aliases(
    cls: type, half: int | None, into: list[str]
) -> tuple[dict[str, str], dict[str, list[str]]]:
    """Rope type spellings the class renames, found by building it with each one; and, per
    spelling, the keys without which the class refuses it (Phi-3 renames "su" only after
    filling ``original_max_position_embeddings``, then requires that key in the dict)."""
    if not into or half is None:
        return {}, {}
    out, needs = {}, {}
    for spelled in _LEGACY_TYPES:
        scalings = _scalings(half, spelled)
        cfg = _build_scaled(cls, scalings)
        got = (_at(_rope(cfg), into[0]) or {}).get("rope_type")
        if got is not None and got != spelled:
            out[spelled] = got
            full = scalings[-1]
            needs[spelled] = sorted(
                key
                for key in full
                if key != "rope_type"
                and _probe(cls, {"rope_scaling": {k: v for k, v in full.items() if k != key}})
                is None
            )
    return out, {k: v for k, v in needs.items() if v}


def _reads_partial(cls: type) -> bool | None:
    """Whether the default frequencies of the rotary class built from this config read
    ``partial_rotary_factor`` (model code): None when no rotary class takes this config."""
    import importlib

    from transformers.models.auto.configuration_auto import model_type_to_module_name

    mt = cls.model_type
    try:
        mod = importlib.import_module(
            f"transformers.models.{model_type_to_module_name(mt)}.modeling_"
            f"{model_type_to_module_name(mt)}"
        )
    except Exception:
        return None
    found = None
    for name, c in vars(mod).items():
        if not (inspect.isclass(c) and name.endswith("RotaryEmbedding")):
            continue
        try:
            hint = typing.get_type_hints(c.__init__).get("config")
        except Exception:
            hint = None
        if hint is not cls:
            continue
        fn = getattr(c, "compute_default_rope_parameters", None)
        if fn is None:
            continue
        try:
            src = inspect.getsource(fn)
        except (OSError, TypeError):
            continue
        found = bool(found) or "partial_rotary_factor" in src
    return found


def describe_class(cls: type, read_keys: tuple[str, ...]) -> dict[str, Any]:
    """What posenc.hf needs to know of one config class."""
    fields = {f.name: f for f in dataclasses.fields(cls)}
    hints = _annotations(cls)
    out: dict[str, Any] = {"class": cls.__name__}
    defaults = {}
    for key in read_keys:
        if key in fields:
            value = _jsonable(_field_default(fields[key]))
            if value is not None:
                defaults[key] = value
    out["defaults"] = defaults
    out["bools"] = sorted(k for k in read_keys if k in fields and _is_bool(hints.get(k)))
    out["aliases"] = dict(sorted(getattr(cls, "attribute_map", {}).items()))
    subs = {}
    for key, spec in (getattr(cls, "sub_configs_defaults", None) or {}).items():
        from transformers import PreTrainedConfig

        auto = not (
            isinstance(spec.config_class, type) and issubclass(spec.config_class, PreTrainedConfig)
        )
        init = {k: _jsonable(v) for k, v in spec.init_kwargs.items() if k in read_keys}
        subs[key] = {
            "model_type": spec.model_type,
            "auto": auto,
            "optional": bool(spec.optional),
            "init": {k: v for k, v in init.items() if v is not None},
        }
    out["subs"] = subs
    if "rope_parameters" in fields:
        base = _probe(cls, {})
        if base is not None:
            rp0 = _rope(base)
            entries = _entries(base, rp0)
            candidates = sorted(
                ({"rope_theta"} | {k for k in _source_keys(cls) if re.search("theta|base|freq", k)})
                - {"rope_parameters", "rope_scaling"}
            )
            partials = sorted(
                {"partial_rotary_factor", "rotary_pct"}
                | {k for k in _source_keys(cls) if re.search("partial|pct", k)}
            )
            half = _half(base)
            into = _scaling_into(cls, half)
            aliases, alias_needs = _type_aliases(cls, half, into)
            theta_keys, theta_default = _keys_feeding(
                cls, entries, "rope_theta", candidates, _THETA_MARK, True
            )
            partial_keys, partial_default = _keys_feeding(
                cls, entries, "partial_rotary_factor", partials, _PARTIAL_MARK, True
            )
            default_theta_keys, _ = _keys_feeding(
                cls, entries, "rope_theta", candidates, _THETA_MARK, False
            )
            default_partial_keys, _ = _keys_feeding(
                cls, entries, "partial_rotary_factor", partials, _PARTIAL_MARK, False
            )
            out["rope"] = {
                "default": _jsonable(rp0),
                "entries": entries,
                "theta_keys": theta_keys,
                "theta_default": theta_default,
                "partial_keys": partial_keys,
                "partial_default": {k: v for k, v in partial_default.items() if v is not None},
                "default_theta_keys": default_theta_keys,
                "default_partial_keys": default_partial_keys,
                "scaling_into": into,
                "type_key": _type_key_read(cls, half, into),
                "type_aliases": aliases,
                "type_alias_needs": alias_needs,
            }
    reads = _reads_partial(cls)
    if reads is not None:
        out["reads_partial"] = reads
    return out


def generate() -> dict[str, Any]:
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    warnings.filterwarnings("ignore")
    logging.disable(logging.WARNING)
    import transformers
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    keys = _read_keys()
    classes = {}
    for mt in sorted(CONFIG_MAPPING.keys()):
        try:
            cls = CONFIG_MAPPING[mt]
        except Exception:
            continue
        classes[mt] = describe_class(cls, keys)
    from transformers import configuration_utils as cu

    return {
        "transformers": transformers.__version__,
        "generated_by": "tools/hf_classes.py",
        "read_keys": list(keys),
        # the layer kinds transformers' configs accept, and the legacy names it renames
        "layer_types": list(getattr(cu, "ALLOWED_LAYER_TYPES", ())),
        "layer_type_remap": dict(getattr(cu, "_LEGACY_LAYER_TYPE_REMAP", {})),
        "classes": classes,
    }


def dumps(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT, help=f"where to write (default {OUT})")
    parser.add_argument(
        "--check", action="store_true", help="exit 1 if the file differs; write nothing"
    )
    args = parser.parse_args(argv)
    text = dumps(generate())
    if args.check:
        same = args.out.exists() and args.out.read_text(encoding="utf-8") == text
        print(f"{args.out}: {'up to date' if same else 'differs from the installed transformers'}")
        return 0 if same else 1
    args.out.write_text(text, encoding="utf-8")
    n = len(json.loads(text)["classes"])
    print(f"{args.out}: {n} config classes")
    return 0


if __name__ == "__main__":
    sys.exit(main())

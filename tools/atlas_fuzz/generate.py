"""Config dicts around a type's small base config, generated from transformers' own code.

The keys varied are those the type's config class declares (its ``__init__`` parameters and
dataclass fields) and its modeling code reads (``config.<key>``, ``getattr(config, "<key>")``),
kept where their name says they carry positions or the layer pattern. Each rope type, and the
keys each one takes, are read from transformers' ``modeling_rope_utils`` (the validator of
each type: its required and optional keys, and the keys its rotary code reads). The values are
picked from the key's default, its type and the base config's sizes; nothing is written per
model type.
"""

from __future__ import annotations

import ast
import copy
import functools
import inspect
import json
import random
import re
from importlib.util import find_spec
from typing import Any

from . import bases

# keys whose name says they carry positions, a layer pattern or the widths a rotation uses
POSITION_KEY = re.compile(
    r"rope|rotary|position|layer_type|block_type|layers_block|attn_layer|attention_layer|"
    r"pattern|nope|sliding|window|head_dim|partial|theta|scaling|chunk|interleave|mscale|"
    r"alibi|bucket|relative|max_distance|hybrid|global|local|mrope|num_hidden_layers|"
    r"^num_layers$|^n_layer|layer_ids|layer_indices|full_attn|swa|attn_type|attention_type|"
    r"rel_pos|pos_emb|n_positions|attention_heads$|^n_head"
)
# what the pattern above would take but carries no positions (the MLP's layer pattern)
NOT_POSITION_KEY = re.compile(r"^mlp_|^model_type$|_dropout$")
_READS = (
    re.compile(r"config\.(\w+)"),
    re.compile(r"getattr\(\s*\w*config\w*,\s*[\"'](\w+)[\"']"),
    re.compile(r"rope_parameters\w*(?:\[[^\]]*\])*(?:\.get\(|\[)\s*[\"'](\w+)[\"']"),
)
# what a config class's own code takes from its keyword arguments (rotary_dim, rope_scaling, ...)
_KWARGS = re.compile(r"kwargs\.(?:get|pop)\(\s*[\"'](\w+)[\"']")
# where a composite keeps its text model (the walk's NESTED paths come first)
SUB_KEYS = ("text_config", "thinker_config", "llm_config", "language_config", "decoder",
            "encoder", "encoder_config", "audio_config", "asr_config")  # fmt: skip
ROPE_SPELLINGS = ("rope_parameters", "rope_scaling")


@functools.cache
def rope_types() -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
    """rope type -> (required keys, optional keys), from each ``_validate_<type>_rope_parameters``
    of transformers.modeling_rope_utils (parsed, not called)."""
    import transformers.modeling_rope_utils as mru

    tree = ast.parse(inspect.getsource(mru))
    out: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef):
            continue
        m = re.fullmatch(r"_validate_(\w+)_rope_parameters", node.name)
        if not m:
            continue
        sets: dict[str, set[str]] = {"required_keys": set(), "optional_keys": set()}
        for sub in ast.walk(node):
            if (
                isinstance(sub, ast.Assign)
                and len(sub.targets) == 1
                and isinstance(sub.targets[0], ast.Name)
                and sub.targets[0].id in sets
                and isinstance(sub.value, ast.Set)
            ):
                sets[sub.targets[0].id] |= {
                    e.value for e in sub.value.elts if isinstance(e, ast.Constant)
                }
        req = sets["required_keys"] - {"rope_type"}
        out[m.group(1)] = (tuple(sorted(req)), tuple(sorted(sets["optional_keys"] - req)))
    out.setdefault("default", ((), ("rope_theta",)))
    return out


def _source(module: str) -> str:
    spec = find_spec(module)
    if spec is None or spec.origin is None:
        return ""
    with open(spec.origin) as f:
        return f.read()


@functools.cache
def read_keys(model_type: str) -> frozenset[str]:
    """The config keys the type's modeling code reads (and, for modular code, its parents')."""
    bases.tests_on_path()
    import hf_walk

    module = hf_walk.modeling_modules().get(model_type)
    if module is None:
        return frozenset()
    keys = set()
    src = _source(module)
    config_src = _source(module.replace(".modeling_", ".configuration_"))
    for pat in _READS:
        keys |= set(pat.findall(src)) | set(pat.findall(config_src))
    keys |= set(_KWARGS.findall(config_src))
    return frozenset(keys)


def declared_keys(cls: Any) -> set[str]:
    keys = set()
    for c in cls.__mro__:
        if c.__module__.startswith("transformers.configuration_utils") or c is object:
            break
        with_sig = getattr(c, "__init__", None)
        try:
            keys |= {
                p
                for p, v in inspect.signature(with_sig).parameters.items()
                if p != "self" and v.kind not in (v.VAR_KEYWORD, v.VAR_POSITIONAL)
            }
        except (TypeError, ValueError):
            pass
        keys |= set(getattr(c, "__dataclass_fields__", {}) or {})
        keys |= set(getattr(c, "__annotations__", {}) or {})
    keys |= set(getattr(cls, "attribute_map", {}) or {})
    return {k for k in keys if not k.startswith("_")}


def position_path(model_type: str, d: dict[str, Any]) -> tuple[str, ...]:
    """Where in ``d`` the positions live: the walk's nested path, else the first text-like
    sub-config that holds attention keys, else the top level."""
    bases.tests_on_path()
    import hf_walk

    path = hf_walk.NESTED.get(model_type)
    if path and _at(d, path) is not None:
        return path
    for key in SUB_KEYS:
        sub = d.get(key)
        if isinstance(sub, dict) and any(
            k in sub for k in ("num_attention_heads", "rope_parameters", "hidden_size", "d_model")
        ):
            return (key,)
    return ()


def _at(d: dict[str, Any], path: tuple[str, ...]) -> Any:
    for key in path:
        d = d.get(key) if isinstance(d, dict) else None  # type: ignore[assignment]
    return d


def _class_of(model_type: str, d: dict[str, Any], path: tuple[str, ...]) -> Any:
    from transformers import CONFIG_MAPPING

    cls = CONFIG_MAPPING[model_type]
    for key in path:
        sub = _at(d, path[: path.index(key) + 1])
        mt = sub.get("model_type") if isinstance(sub, dict) else None
        if mt in CONFIG_MAPPING:
            cls = CONFIG_MAPPING[mt]
        else:
            cls = (getattr(cls, "sub_configs", None) or {}).get(key, cls)
    return cls


class Space:
    """What can vary in one type's configs: the keys, their defaults, the sizes."""

    def __init__(self, model_type: str, base: dict[str, Any]) -> None:
        self.model_type = model_type
        self.base = base
        self.path = position_path(model_type, base)
        self.cls = _class_of(model_type, base, self.path)
        inner = _at(base, self.path)
        self.inner_type = (inner or {}).get("model_type") or getattr(self.cls, "model_type", "")
        reads = read_keys(model_type) | read_keys(self.inner_type)
        declared = declared_keys(self.cls) | set(_KWARGS.findall(_source(self.cls.__module__)))
        try:
            self.defaults = self.cls().to_dict()
        except Exception:
            self.defaults = {}
        self.keys = sorted(
            k
            for k in (declared | set(inner or {})) & (reads | {"rope_parameters", "rope_scaling"})
            if POSITION_KEY.search(k) and not NOT_POSITION_KEY.search(k)
        )
        self.rope_reads = {k for k in reads if k not in declared}
        self.has_rope = "rope_parameters" in (inner or {}) or "rope_parameters" in declared

    def value(self, key: str, cur: Any, inner: dict[str, Any], rng: random.Random) -> Any:
        """A value for ``key``: from its default's shape and the config's sizes."""
        n = _layers(inner)
        default = self.defaults.get(key, cur)
        sample = cur if cur is not None else default
        if isinstance(sample, bool):
            return rng.choice([True, False])
        if key in ("position_embedding_type", "position_embeddings_type"):
            return rng.choice(sorted({"rope", "nope", "absolute", str(sample)}))
        if isinstance(sample, str) and len(sample) > 1 and n and set(sample) <= set("*-MEAS"):
            return "".join(rng.choice(sorted(set(sample) | {"*", "M"})) for _ in range(n))
        if isinstance(sample, list) and sample and all(isinstance(x, str) for x in sample):
            vocab = sorted(set(sample) | {rng.choice(_layer_vocab())})
            length = n if rng.random() < 0.9 else max(1, n + rng.choice([-1, 1]))
            return [rng.choice(vocab) for _ in range(length)]
        if isinstance(sample, list) and all(isinstance(x, int) for x in sample):
            if sample and set(sample) <= {0, 1} and len(sample) == n:
                return [rng.choice([0, 1]) for _ in range(n)]
            return sorted(rng.sample(range(max(n, 1)), rng.randint(0, max(n, 1))))
        if "head_dim" in key or key in ("rotary_dim", "qk_rope_head_dim"):
            return rng.choice([4, 8, 16, 32, None])
        if "partial" in key or key in ("rotary_pct",):
            return rng.choice([0.25, 0.5, 1.0])
        if "theta" in key or "base" in key:
            return rng.choice([1e4, 5e5, 1e6])
        if "window" in key or "chunk" in key:
            return rng.choice([None, 4, 16, 4096])
        if key in ("num_hidden_layers", "num_layers", "n_layer", "n_layers"):
            return rng.choice([2, 3, 4, 6])
        if isinstance(sample, int):
            return rng.choice(sorted({1, 2, 3, max(1, sample), 2 * max(1, sample)}))
        if isinstance(sample, float):
            return rng.choice([sample * 0.5, sample, sample * 2])
        if sample is None:
            return rng.choice([None, 1, 2, 4, 16])
        return copy.deepcopy(sample)

    def rope(self, inner: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        """A rope dict of a random type, with a random subset of its keys (each required key
        left out now and then: transformers must refuse that, and so must posenc)."""
        types = rope_types()
        kind = rng.choice(sorted(types))
        req, opt = types[kind]
        head = _head_dim(inner)
        maxpos = int(inner.get("max_position_embeddings") or 64)
        choices: dict[str, list[Any]] = {
            "factor": [1.0, 2.0, 4.0, 8.0],
            "rope_theta": [1e4, 5e5, 1e6],
            "original_max_position_embeddings": [16, 32, maxpos, 2 * maxpos],
            "attention_factor": [0.8, 1.0, 1.2432],
            "beta_fast": [16.0, 32.0, 64.0],
            "beta_slow": [1.0, 2.0],
            "mscale": [0.707, 1.0, 1.2432],
            "mscale_all_dim": [0.0, 0.707, 1.0],
            "truncate": [True, False],
            "low_freq_factor": [1.0, 2.0],
            "high_freq_factor": [4.0, 8.0],
            "partial_rotary_factor": [0.25, 0.5, 1.0],
            "short_mscale": [1.0, 1.2432],
            "long_mscale": [1.0, 1.2432],
        }
        out: dict[str, Any] = {"rope_type": kind}
        old = inner.get("rope_parameters") if isinstance(inner.get("rope_parameters"), dict) else {}
        for key in ("mrope_section", "mrope_interleaved"):  # keep the model's axes
            if key in (old or {}) and rng.random() < 0.9:
                out[key] = copy.deepcopy(old[key])
        for key in req:
            if rng.random() < 0.9:
                out[key] = self._rope_value(key, choices, head, rng)
        for key in opt:
            if rng.random() < 0.5:
                out[key] = self._rope_value(key, choices, head, rng)
        extra = sorted(self.rope_reads & set(choices))  # keys the model's own rotary reads
        for key in extra:
            if rng.random() < 0.6:
                out[key] = self._rope_value(key, choices, head, rng)
        return out

    @staticmethod
    def _rope_value(key: str, choices: dict[str, list[Any]], head: int, rng: random.Random) -> Any:
        if key in ("short_factor", "long_factor"):
            half = max(1, head // 2)
            if rng.random() < 0.1:
                half += 1  # a wrong length: transformers refuses it
            return [rng.choice([1.0, 1.5, 2.0, 4.0]) for _ in range(half)]
        return rng.choice(choices.get(key, [1.0, 2.0]))

    def mutate(self, rng: random.Random) -> tuple[dict[str, Any], list[str]]:
        """A config: the base with one to three changes; and what was changed."""
        d = copy.deepcopy(self.base)
        inner = _at(d, self.path)
        what: list[str] = []
        for _ in range(rng.randint(1, 3)):
            op = rng.random()
            if self.has_rope and op < 0.35:
                self._set_rope(inner, rng, what)
            elif op < 0.5 and [k for k in inner if k in self.keys]:
                key = rng.choice(sorted(k for k in inner if k in self.keys))
                inner.pop(key)
                what.append(f"-{key}")
            elif self.keys:
                key = rng.choice(self.keys)
                if key in ROPE_SPELLINGS:
                    self._set_rope(inner, rng, what)
                    continue
                inner[key] = self.value(key, inner.get(key), inner, rng)
                what.append(f"{key}={json.dumps(inner[key])[:40]}")
        return d, what

    def _set_rope(self, inner: dict[str, Any], rng: random.Random, what: list[str]) -> None:
        rope = self.rope(inner, rng)
        old = inner.get("rope_parameters")
        nested = isinstance(old, dict) and any(isinstance(v, dict) for v in old.values())
        if nested:  # per layer type (Gemma 3, ...): change one layer type's entry
            lt = rng.choice(sorted(k for k, v in old.items() if isinstance(v, dict)))
            old[lt] = rope
            what.append(f"rope_parameters[{lt}]={rope['rope_type']}")
            return
        if rng.random() < 0.7:  # transformers 5 spelling
            inner.pop("rope_scaling", None)
            inner["rope_parameters"] = rope
            what.append(f"rope_parameters={rope['rope_type']}")
            return
        # transformers 4: rope_scaling (legacy "type" half the time), theta at the top level
        inner.pop("rope_parameters", None)
        theta = rope.pop("rope_theta", None)
        if theta is not None:
            inner["rope_theta"] = theta
        if rng.random() < 0.5:
            rope["type"] = rope.pop("rope_type")
        inner["rope_scaling"] = None if rope.get("rope_type") == "default" else rope
        what.append(f"rope_scaling={rope.get('rope_type') or rope.get('type')}")


@functools.cache
def _layer_vocab() -> tuple[str, ...]:
    path = bases.ROOT / "src" / "posenc" / "hf" / "classes.json"
    return tuple(json.loads(path.read_text(encoding="utf-8"))["layer_types"])


def _layers(inner: dict[str, Any]) -> int:
    for key in ("num_hidden_layers", "num_layers", "n_layer", "n_layers"):
        if isinstance(inner.get(key), int):
            return int(inner[key])
    return 0


def _head_dim(inner: dict[str, Any]) -> int:
    if isinstance(inner.get("head_dim"), int):
        return int(inner["head_dim"])
    heads = inner.get("num_attention_heads") or inner.get("n_head") or 4
    return int((inner.get("hidden_size") or inner.get("d_model") or 64) // heads)

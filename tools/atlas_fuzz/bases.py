"""One small, valid config dict per position-bearing model type: the config the suite's own
walks (tests/hf_walk.py, tests/hf_walk_fixed.py) build for that type, captured as it is handed
to ``posenc.hf.describe``, plus the learned-table types the walks do not reach.

Nothing is written per type here: the walks decide how a type is built small; this module
records what they built (``config.to_diff_dict()``, what ``save_pretrained`` writes) and why a
type has no base (the walk's reason).
"""

from __future__ import annotations

import contextlib
import copy
import importlib
import json
import re
import sys
from importlib.util import find_spec
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
CACHE = ROOT / "build" / "atlas_fuzz" / "bases.json"

# a learned absolute table: an nn.Embedding sized by a config key (BERT, GPT-2, OPT, ...)
_LEARNED = re.compile(
    r"(?:position_embeddings|wpe|embed_positions|pos_emb\w*)\s*=\s*\w*\.?(?:Learned\w*|Embedding)"
    r"\(\s*config\.(\w+)"
)


def tests_on_path() -> None:
    if str(TESTS) not in sys.path:
        sys.path.insert(0, str(TESTS))


def quiet() -> None:
    import logging
    import os
    import warnings

    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    warnings.filterwarnings("ignore")
    logging.disable(logging.WARNING)


def learned_types() -> dict[str, str]:
    """model type -> the config key that sizes its learned position table, from its modeling
    source (the types no walk reaches: posenc.hf has no learned-table scheme)."""
    tests_on_path()
    import hf_walk

    out = {}
    for mt, module in sorted(hf_walk.modeling_modules().items()):
        with open(find_spec(module).origin) as f:
            m = _LEARNED.search(f.read())
        if m:
            out[mt] = m.group(1)
    return out


def decoders_without_positions() -> list[str]:
    """Causal LMs whose modeling code no walk reaches (no rotary, ALiBi, bucket, sinusoidal or
    learned-table code): attention without positions (NoPE) or recurrent blocks; transformers
    runs them, so posenc must describe them or refuse them naming the mechanism."""
    tests_on_path()
    import hf_walk

    out = []
    for mt, module in sorted(hf_walk.modeling_modules().items()):
        with open(find_spec(module).origin) as f:
            src = f.read()
        if re.search(r"class \w+ForCausalLM\(", src) and "Rotary" not in src:
            out.append(mt)
    return out


def _diff_dict(obj: Any) -> dict[str, Any]:
    d = obj.to_diff_dict()
    d["model_type"] = obj.model_type
    return json.loads(json.dumps(d, default=str))


@contextlib.contextmanager
def _capture(seen: dict[str, Any]):
    """Every config object handed to describe / describe_with, by its model type (the last)."""
    import posenc.hf
    import posenc.hf.read as read

    saved = (posenc.hf.describe, read.describe, read.describe_with)

    def wrap(fn: Any) -> Any:
        def inner(cfg: Any, *args: Any, **kwargs: Any) -> Any:
            mt = getattr(cfg, "model_type", None)
            if mt and not isinstance(cfg, dict):
                with contextlib.suppress(Exception):
                    seen[mt] = _diff_dict(cfg)
            return fn(cfg, *args, **kwargs)

        return inner

    posenc.hf.describe = wrap(saved[0])
    read.describe = wrap(saved[1])
    read.describe_with = wrap(saved[2])
    try:
        yield
    finally:
        posenc.hf.describe, read.describe, read.describe_with = saved


def collect() -> dict[str, Any]:
    """{"bases": {type: dict}, "kinds": {type: convention or "learned"}, "uncovered": {type:
    reason}} over every position-bearing type (the walks' types and the learned tables)."""
    tests_on_path()
    quiet()
    from transformers import CONFIG_MAPPING

    import hf_walk
    import hf_walk_fixed

    seen: dict[str, Any] = {}
    with _capture(seen):
        outcomes = hf_walk_fixed.walk_all()
    bases, kinds, uncovered = {}, {}, {}
    for o in outcomes:
        if o.model_type in seen:  # fuzzed whatever the walk's status: a mismatch is a finding
            bases[o.model_type] = seen[o.model_type]
            kinds[o.model_type] = o.convention or f"walk {o.status}"
        else:
            uncovered[o.model_type] = f"{o.status}: {o.reason}"[:200]
    extra = {mt: f"learned:{key}" for mt, key in learned_types().items()}
    extra.update(dict.fromkeys(decoders_without_positions(), "no position code"))
    for mt, kind in sorted(extra.items()):
        if mt in bases or mt in uncovered:
            continue
        try:
            obj = hf_walk.construct(CONFIG_MAPPING[mt], dict(hf_walk_fixed.SMALL))
            bases[mt] = _diff_dict(obj)
            kinds[mt] = kind
        except Exception as exc:
            uncovered[mt] = f"{kind}, no small config: {exc!r}"[:200]
    return {"bases": bases, "kinds": kinds, "uncovered": uncovered}


def load(refresh: bool = False) -> dict[str, Any]:
    """The collected bases, cached under build/ (the walks take minutes)."""
    import transformers

    if CACHE.exists() and not refresh:
        data = json.loads(CACHE.read_text(encoding="utf-8"))
        if data.get("transformers") == transformers.__version__:
            return data
    data = {"transformers": transformers.__version__, **collect()}
    CACHE.parent.mkdir(parents=True, exist_ok=True)
    CACHE.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return data


def module_of(model_type: str) -> Any:
    tests_on_path()
    import hf_walk

    name = hf_walk.modeling_modules().get(model_type)
    return None if name is None else importlib.import_module(name)


_ = copy


def small(model_type: str) -> dict[str, Any]:
    """The base of a type whose config holds its own positions, built without the walks (the
    suite's sample): the rotary walk's small config, else the fixed walk's."""
    tests_on_path()
    from transformers import CONFIG_MAPPING

    import hf_walk
    import hf_walk_fixed

    cls = CONFIG_MAPPING[model_type]
    try:
        obj = hf_walk.small_config(cls, hf_walk.EXTRA.get(model_type))
    except Exception:
        obj = hf_walk_fixed.small(cls, hf_walk_fixed.EXTRA.get(model_type))
    return _diff_dict(obj)

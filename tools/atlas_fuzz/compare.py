"""The verdict of one config dict: posenc against transformers, and the shrinking.

``tests/hf_corpus.py``'s ``check`` does the three-way comparison (describe of the dict against
describe of transformers' config object; rotated q and k against the model's rotary module and
apply function at small and large positions, float64 and float32; NoPE layers against the
attention run on the meta device; ALiBi / T5 / sinusoidal tables against the walks' probes).
This module adds what a generated config needs around it:

- ``agree``: check matched;
- ``shared_refusal``: posenc refuses and transformers refuses (its config class, or its rotary
  module built from the config);
- ``disagree``: anything else where transformers runs the config, or where posenc describes a
  config transformers refuses (``check`` says ``wrong``, or transformers' own code raises in the
  comparison after posenc described the config), or posenc refuses one that transformers runs;
- ``harness``: the comparison itself broke (reported, never counted as agreement).
"""

from __future__ import annotations

import contextlib
import copy
import json
import re
import signal
import tempfile
import traceback
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from . import bases

TIMEOUT_S = 60
# tests/hf_corpus.py's words for a config its comparison cannot reach (no reference found)
HARNESS = (
    "no rotary class",
    "no modeling module",
    "no apply function",
    "fixed walk:",
    "kind ",
)


@dataclass
class Verdict:
    category: str  # agree | shared_refusal | disagree | harness
    posenc: str  # what posenc said: "described" or its refusal
    transformers: str  # what transformers did: "runs" or its refusal
    detail: str = ""

    def family(self) -> str:
        """The kind of disagreement, numbers and quoted names dropped (shrinking keeps it)."""
        text = re.sub(r"'[^']*'|\"[^\"]*\"", "'_'", self.detail)
        return self.category + ":" + re.sub(r"[-+]?\d[\d.e+-]*", "#", text)[:60]

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


class _Timeout(Exception):
    pass


@contextlib.contextmanager
def _limit(seconds: int):
    def alarm(*_: Any) -> None:
        raise _Timeout(f"over {seconds} s")

    old = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def _raised_in(exc: BaseException) -> str:
    """Which code raised: "transformers", "posenc" or "harness" (the innermost frame's)."""
    frames = traceback.extract_tb(exc.__traceback__)
    for fr in reversed(frames):
        name = fr.filename.replace("\\", "/")
        if "/transformers/" in name:
            return "transformers"
        if "/posenc/" in name:
            return "posenc"
        if "/tests/" in name or "/tools/" in name:
            return "harness"
    return "harness"


def _short(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}".replace("\n", " ")[:240]


def transformers_refusal(d: dict[str, Any]) -> str:
    """Why transformers refuses ``d`` (its config class, or the model's rotary module built from
    the config object and run once), or "" when it runs it."""
    bases.tests_on_path()
    import torch

    import hf_corpus
    import hf_walk

    try:
        obj = hf_corpus.hf_config(d)
    except Exception as exc:
        return "config: " + _short(exc)
    ref = hf_corpus._rotary_reference(obj)
    if isinstance(ref, str):
        return ""
    rc, apply_fn, mla_fn, text, _ = ref
    try:
        head = getattr(text, "head_dim", None) or text.hidden_size // text.num_attention_heads
        q = torch.zeros(1, 1, 2, int(head))
        lt = None
        types = getattr(text, "layer_types", None)
        if types and "layer_type" in hf_walk.inspect.signature(rc.forward).parameters:
            lt = types[0]
        hf_walk.run_model(rc, text, apply_fn, lt, q, q, torch.arange(2)[None], mla_fn)
    except Exception as exc:
        if _raised_in(exc) == "transformers":
            return "rotary module: " + _short(exc)
    return ""


def verdict(d: dict[str, Any]) -> Verdict:
    """posenc's readings of ``d`` against transformers' (see the module's docstring)."""
    bases.tests_on_path()
    import hf_corpus

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "fuzz" / "config.json"
        path.parent.mkdir()
        path.write_text(json.dumps(d), encoding="utf-8")
        try:
            with _limit(TIMEOUT_S):
                res = hf_corpus.check(path)
        except _Timeout as exc:
            return Verdict("harness", "?", "?", f"timeout: {exc}")
        except Exception as exc:
            where = _raised_in(exc)
            if where == "transformers":
                return Verdict(
                    "disagree",
                    "described",
                    "refuses: " + _short(exc),
                    "posenc describes a config transformers' modules refuse",
                )
            if where == "posenc":
                return Verdict("disagree", "crashes: " + _short(exc), "?", "posenc crashes")
            return Verdict("harness", "?", "?", "harness: " + _short(exc))
    if res.status == "matched":
        return Verdict("agree", "described", "runs")
    if res.status == "refused":
        why = transformers_refusal(d)
        if why:
            return Verdict("shared_refusal", res.detail[:240], why)
        return Verdict(
            "disagree", res.detail[:240], "runs", "posenc refuses a config transformers runs"
        )
    if res.detail.startswith("described, but transformers refuses"):
        return Verdict(
            "disagree",
            "described",
            res.detail.split(":", 1)[-1].strip()[:240],
            "posenc describes a refused config",
        )
    if res.detail.startswith(HARNESS):  # the corpus's comparison cannot reach this config
        return Verdict("harness", "described", "?", "harness: " + res.detail[:230])
    why = transformers_refusal(d)
    if why:
        return Verdict("disagree", "described", why, "posenc describes a refused config")
    return Verdict("disagree", "described", "runs", res.detail[:240])


def _paths(d: dict[str, Any], inner: tuple[str, ...]) -> list[tuple[str, ...]]:
    """The keys shrinking tries to drop: the top level, the position sub-config, its rope dict."""
    out: list[tuple[str, ...]] = [(k,) for k in d if k != "model_type"]
    sub = d
    for depth, key in enumerate(inner):
        sub = sub.get(key, {}) if isinstance(sub, dict) else {}
        out += [(*inner[: depth + 1], k) for k in (sub or {}) if k != "model_type"]
    for spelling in ("rope_parameters", "rope_scaling"):
        rope = (sub or {}).get(spelling)
        if isinstance(rope, dict):
            out += [(*inner, spelling, k) for k in rope]
    # the most nested first: dropping a whole sub-config first would lose the finding
    return sorted(out, key=len, reverse=True)


def _drop(d: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any] | None:
    out = copy.deepcopy(d)
    sub = out
    for key in path[:-1]:
        sub = sub.get(key) if isinstance(sub, dict) else None  # type: ignore[assignment]
        if not isinstance(sub, dict):
            return None
    if path[-1] not in sub:
        return None
    sub.pop(path[-1])
    return out


def shrink(
    d: dict[str, Any], found: Verdict, inner: tuple[str, ...], budget: int = 12
) -> tuple[dict[str, Any], Verdict, int]:
    """Drop keys one at a time while the config still disagrees the same way (same family);
    (the smallest config, its verdict, the number of checks spent)."""
    want, spent, best, best_v = found.family(), 0, d, found
    changed = True
    while changed and spent < budget:
        changed = False
        for path in _paths(best, inner):
            if spent >= budget:
                break
            cand = _drop(best, path)
            if cand is None:
                continue
            spent += 1
            v = verdict(cand)
            if v.family() == want:
                best, best_v, changed = cand, v, True
    return best, best_v, spent

"""The explorers' numbers, computed by posenc at build time and written as JSON (hooks/explorers.py).

The explorers' scripts (docs/assets/explorers/) draw; they do not compute. For each setting their
controls can reach, the numbers they show come from posenc, in files under
``assets/explorers/data/<explorer>/`` that a script fetches when a control needs one it has not
loaded yet (never with the page). A file covers the settings that change without a new fetch:

- ``rope-scaling/<method>-<base>-<dim>-<trained>.json``: for every factor the slider offers and
  every current length, ``posenc.rope_frequencies``' inverse frequencies (0 where a pair keeps
  its plain frequency, -1 where it is divided by the factor: the script divides, which rounds as
  NumPy does), the attention factor, each pair's class, and the readout's numbers (scaled base,
  YaRN's ramp, Llama 3's counts, LongRoPE's last factor). The plain ladder and the pairs' classes
  come along.
- ``bias/alibi.json``: ``posenc.alibi_slopes(n)`` and their log2 for every head count (the
  slope of a bias is all the script needs: ALiBi's bias is the slope times the distance, one
  multiplication, as posenc.alibi_bias forms it);
  ``bias/t5-<direction>.json``: ``posenc.t5_bucket`` of every relative position a 256-token map
  holds, for every number of buckets and ``max_distance`` (runs of equal buckets), and the
  readout's numbers (``t5_setting``).

``python hooks/explorer_data.py <folder>`` writes them without a build.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
from explorer_specs import EXPLORERS

import posenc

FOLDER = "assets/explorers/data"

# --- rope-scaling -----------------------------------------------------------------------------


def options(explorer: str, control: str) -> tuple[str, ...]:
    """The values a select of an explorer offers (hooks/explorer_specs.py): the grid computed."""
    (spec,) = [c for c in EXPLORERS[explorer]["controls"] if c["name"] == control]
    return tuple(value for value, _ in spec["options"])


METHODS = options("rope-scaling", "method")
BASES = options("rope-scaling", "base")
DIMS = options("rope-scaling", "dim")
TRAINED = options("rope-scaling", "trained")
FACTORS = options("rope-scaling", "factor")
CURRENT = options("rope-scaling", "current")
TWO_PI = 2 * math.pi


def longrope_factors(d: int, s: float) -> tuple[list[float], list[float]]:
    """The explorer's made-up LongRoPE factors, by the rule the rope-scaling page states:
    short eᵢ = 1 + 0.25·uᵢ, long eᵢ = max(1, the broken line through (0, 1), (16/63, 1.2),
    (40/63, 0.75·s), (1, 1.25·s)), uᵢ = i/(d/2 − 1)."""
    u = np.arange(d // 2) / (d // 2 - 1)
    short = np.interp(u, [0, 1], [1.0, 1.25])
    long = np.maximum(1.0, np.interp(u, [0, 16 / 63, 40 / 63, 1], [1.0, 1.2, 0.75 * s, 1.25 * s]))
    return short.tolist(), long.tolist()


def current_length(current: str, trained: int, factor: float) -> float:
    return {"half": trained / 2, "trained": trained, "double": 2 * trained}.get(
        current, factor * trained
    )


def scaled(method: str, d: int, b: float, trained: int, s: float, length: float) -> Any:
    """(inv_freq, attention factor, base of the ladder or None) from posenc for one setting."""
    keys: dict[str, Any] = {"factor": float(s), "original_max_position_embeddings": trained}
    if method == "none":
        inv, a = posenc.rope_frequencies(d, base=b)
        return inv, a, None
    if method == "ntk":  # NTK-aware scaling is plain RoPE with a larger base
        grown = b * s ** (d / (d - 2))
        inv, a = posenc.rope_frequencies(d, base=grown)
        return inv, a, grown
    if method == "linear":
        inv, a = posenc.rope_frequencies(d, base=b, scaling={"rope_type": "linear", "factor": s})
        return inv, a, None
    if method == "llama3":
        keys |= {"low_freq_factor": 1.0, "high_freq_factor": 4.0}
    if method == "longrope":
        short, long = longrope_factors(d, s)
        keys |= {"short_factor": short, "long_factor": long}
    inv, a = posenc.rope_frequencies(
        d, base=b, scaling={"rope_type": method, **keys}, seq_len=int(length)
    )
    # dynamic NTK: the base of the ladder posenc used (inv[1] = b' ** (-2/d))
    return inv, a, float(inv[1] ** (-d / 2)) if method == "dynamic" else None


def classes(plain: Any, inv: Any, trained: int, length: float) -> str:
    """Each pair: "s" turned a full circle within L₀ (wavelength ≤ L₀), "i" its angles up to L
    stay within those of training (L·θᵢ′ ≤ L₀·θᵢ, to a relative 1e-9 so that an exact tie such
    as linear scaling at L = s·L₀ is not decided by rounding), "b" they go beyond."""
    seen = TWO_PI / plain <= trained
    inside = length * inv <= trained * plain * (1 + 1e-9)
    return "".join("s" if a else "i" if b else "b" for a, b in zip(seen, inside, strict=True))


def scaling_setting(method: str, d: int, b: float, trained: int, s: float, current: str) -> Any:
    """Everything the rope-scaling explorer shows for one setting, as the file stores it."""
    plain, _ = posenc.rope_frequencies(d, base=b)
    length = current_length(current, trained, s)
    inv, attention, base = scaled(method, d, b, trained, s, length)
    info: dict[str, Any] = {}
    if base is not None:
        info["b"] = base
    if method == "yarn":
        # γᵢ = 1 keeps θᵢ, 0 divides it by s; the ramp is where it falls from 1 to 0
        gamma = np.ones_like(plain) if s == 1 else 1 - (1 - inv / plain) / (1 - 1 / s)
        gamma = np.where(np.abs(gamma) < 1e-12, 0.0, np.where(np.abs(gamma - 1) < 1e-12, 1, gamma))
        ones = np.flatnonzero(gamma == 1)
        zeros = np.flatnonzero(gamma == 0)
        info["lo"] = int(ones[-1]) if ones.size else 0
        info["hi"] = int(zeros[0]) if zeros.size else plain.size  # past the last pair
        info["gamma"] = gamma.tolist()
    if method == "llama3":  # the bands of low_freq_factor 1, high_freq_factor 4
        wave = TWO_PI / plain
        kept, divided = wave < trained / 4, wave > trained
        info |= {
            "kept": int(kept.sum()),
            "divided": int(divided.sum()),
            "blended": int((~kept & ~divided).sum()),
        }
    if method == "longrope":
        short, long = longrope_factors(d, s)
        info |= {"long": length > trained, "last": (long if length > trained else short)[-1]}
    pairs = [
        0 if x == p else -1 if x == p / s else x
        for x, p in zip(inv.tolist(), plain.tolist(), strict=True)
    ]
    return {"inv": pairs, "a": attention, "info": info, "cls": classes(plain, inv, trained, length)}


def scaling_file(method: str, base: str, dim: str, trained: str) -> dict[str, Any]:
    d, b, L0 = int(dim), float(base), int(trained)
    plain, _ = posenc.rope_frequencies(d, base=b)
    out: dict[str, Any] = {"plain": plain.tolist(), "at": {}}
    for factor in FACTORS:
        s = float(factor)
        rows = {c: scaling_setting(method, d, b, L0, s, c) for c in CURRENT}
        # most methods do not read the current length: its rows differ in the classes only
        same = {k: v for k, v in rows["trained"].items() if k != "cls"}
        if all({k: v for k, v in r.items() if k != "cls"} == same for r in rows.values()):
            out["at"][factor] = {**same, "cls": {c: r["cls"] for c, r in rows.items()}}
        else:  # a row equal to an earlier one is stored as that one's name
            seen: dict[str, str] = {}
            out["at"][factor] = {}
            for c, r in rows.items():
                text = json.dumps(r, sort_keys=True)
                out["at"][factor][c] = seen.get(text, r)
                seen.setdefault(text, c)
    return out


# --- bias ---------------------------------------------------------------------------------------


def _span(explorer: str, control: str) -> range:
    (spec,) = [c for c in EXPLORERS[explorer]["controls"] if c["name"] == control]
    return range(spec["min"], spec["max"] + 1, spec["step"])


HEADS = _span("bias", "heads")
T5_BUCKETS = _span("bias", "buckets")
T5_DISTANCES = options("bias", "maxdist")
T5_SPAN = max(int(t) for t in options("bias", "tokens")) - 1  # the map's farthest distance


def alibi_file() -> dict[str, Any]:
    """Per head count: ``[slopes, their log2]``."""
    out = {}
    for n in HEADS:
        slopes = posenc.alibi_slopes(n)
        out[str(n)] = [slopes.tolist(), np.log2(slopes).tolist()]
    return out


def t5_setting(bidirectional: bool, buckets: int, max_distance: int) -> dict[str, Any]:
    """The bucket of each relative position −255..255 as runs ``[[bucket, count], ...]``, the
    number of exact buckets per direction, the first distance into the past that falls in the
    last bucket (``far``) and that bucket; only ``exact`` where posenc.t5_bucket refuses the
    setting."""
    per_direction = buckets // 2 if bidirectional else buckets
    exact = per_direction // 2
    kwargs: dict[str, Any] = {
        "bidirectional": bidirectional,
        "num_buckets": buckets,
        "max_distance": max_distance,
    }
    rel = np.arange(-T5_SPAN, T5_SPAN + 1)
    try:
        values = posenc.t5_bucket(rel, **kwargs)
    except ValueError:
        return {"exact": exact}
    starts = np.r_[0, np.flatnonzero(np.diff(values)) + 1]
    counts = np.diff(np.r_[starts, values.size])
    past = posenc.t5_bucket(-np.arange(4 * max_distance + 1), **kwargs)
    last = int(past.max())
    return {
        "runs": [[int(values[k]), int(c)] for k, c in zip(starts, counts, strict=True)],
        "exact": exact,
        "far": int(np.argmax(past == last)),
        "last": last,
    }


def t5_file(direction: str) -> dict[str, Any]:
    """Per ``<buckets>-<max_distance>``: ``t5_setting``."""
    return {
        f"{n}-{dist}": t5_setting(direction == "bidirectional", n, int(dist))
        for n in T5_BUCKETS
        for dist in T5_DISTANCES
    }


# --- the files ----------------------------------------------------------------------------------


def files() -> Iterator[tuple[str, Any]]:
    """(path under FOLDER, data) of every file."""
    for method in METHODS:
        for base in BASES:
            for dim in DIMS:
                for trained in TRAINED:
                    name = f"rope-scaling/{method}-{base}-{dim}-{trained}.json"
                    yield name, scaling_file(method, base, dim, trained)
    yield "bias/alibi.json", alibi_file()
    for direction in ("causal", "bidirectional"):
        yield f"bias/t5-{direction}.json", t5_file(direction)


def write(folder: Path) -> int:
    """Writes every file under ``folder``; returns how many bytes."""
    total = 0
    for name, data in files():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(data, separators=(",", ":"), allow_nan=False)
        path.write_text(text, encoding="utf-8")
        total += len(text)
    return total


if __name__ == "__main__":
    print(write(Path(sys.argv[1])), "bytes")

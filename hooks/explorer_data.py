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
from collections.abc import Callable, Iterator
from functools import partial
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


def _span(explorer: str, control: str) -> range:
    (spec,) = [c for c in EXPLORERS[explorer]["controls"] if c["name"] == control]
    return range(spec["min"], spec["max"] + 1, spec["step"])


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


# --- rope-decay ---------------------------------------------------------------------------------

DECAY_BASES = options("rope-decay", "base")
DECAY_DIMS = options("rope-decay", "dim")
PAIRINGS = options("rope-decay", "pairing")
VECTORS = options("rope-decay", "vector")
RANGES = options("rope-decay", "range")
KEYS = options("rope-decay", "key")
PROBES = options("rope-decay", "probe")


def distances(R: int) -> list[int]:
    """The distances drawn: every integer up to R <= 1024, else every one up to 128 and 256
    steps evenly spaced on a log scale from 128 to R."""
    if R <= 1024:
        return list(range(R + 1))
    out = list(range(129))
    for k in range(1, 257):
        r = round(128 * (R / 128) ** (k / 256))
        if r > out[-1]:
            out.append(r)
    return out


def decay_vector(kind: str, d: int) -> Any:
    j = np.arange(d)
    return {"ones": np.ones(d), "alternate": (j % 2 == 0) * 1.0, "front": (j < d // 2) * 1.0}[kind]


def scores(q: Any, rs: Any, n: int, base: float, pairing: Any) -> Any:
    """q rotated at n + r dotted with k = q rotated at n, for every r: posenc.apply_rope's."""
    x = np.broadcast_to(q, (len(rs), 2, q.size))
    positions = np.stack([np.asarray(rs) + n, np.full(len(rs), n)], axis=-1)
    out = posenc.apply_rope(x, positions, base=base, pairing=pairing)
    return np.sum(out[:, 0] * out[:, 1], axis=-1)


def pair_weights(q: Any, pairing: str) -> Any:
    """hᵢ = |q⁽ⁱ⁾|² for q = k: the squared length of each pair of q under the pairing."""
    d = q.size
    x, y = (q[0::2], q[1::2]) if pairing == "interleaved" else (q[: d // 2], q[d // 2 :])
    return x * x + y * y


def partial_sums(rs: Any, theta: Any) -> Any:
    """|S_j| = |Σ_{l<j} e^{i r θ_l}| for j = 1..d/2, for every r (rows)."""
    return np.abs(np.cumsum(np.exp(1j * np.asarray(rs, dtype=float)[:, None] * theta), axis=1))


def roformer_bound(h: Any, rs: Any, theta: Any) -> Any:
    """RoFormer's bound on |q·k| (§3.4.3, by Abel summation; the rope page's formula):
    max_j |h_j − h_{j−1}| · Σ_{j=1}^{d/2} |S_j|, with h_{d/2} = 0."""
    jump = np.abs(np.diff(np.append(h, 0.0))).max()
    return jump * partial_sums(rs, theta).sum(axis=1)


def decay_file(base: str, dim: str, pairing: str, vector: str) -> dict[str, Any]:
    """Per range: the distances drawn, posenc's score of q = k at each (key at 0) and RoFormer's
    bound; per key position n, the score with the key at n minus the one at 0 (rounded to
    1e-12; the largest difference over each range exact); per probe distance, the score, the bound and the
    table's columns. Plus θᵢ (posenc.rope_frequencies), hᵢ and q·q."""
    d, b = int(dim), float(base)
    q = decay_vector(vector, d)
    theta, _ = posenc.rope_frequencies(d, base=b)
    h = pair_weights(q, pairing)
    rs = sorted(set().union(*(distances(int(R)) for R in RANGES)))
    at0 = scores(q, rs, 0, b, pairing)
    shifted = {}
    for key in KEYS:
        diff = scores(q, rs, int(key), b, pairing) - at0
        shifted[key] = {"diff": np.round(diff, 12).tolist(), "max": {}}
        for R in RANGES:  # the largest difference over the range's own distances
            mask = np.isin(rs, distances(int(R)))
            shifted[key]["max"][R] = float(np.abs(diff[mask]).max())
    probes = {}
    for probe in PROBES:
        r = int(probe)
        probes[probe] = {
            "score": float(scores(q, [r], 0, b, pairing)[0]),
            "bound": float(roformer_bound(h, [r], theta)[0]),
            "S": partial_sums([r], theta)[0].tolist(),
            "term": (h * np.cos(r * theta)).tolist(),
        }
    return {
        "theta": theta.tolist(),
        "h": h.tolist(),
        "qq": float(q @ q),
        "r": rs,
        "ranges": {R: distances(int(R)) for R in RANGES},
        "score": at0.tolist(),
        "bound": roformer_bound(h, rs, theta).tolist(),
        "shifted": shifted,
        "probes": probes,
    }


# --- mrope --------------------------------------------------------------------------------------


def _mrope_range(name: str) -> list[int]:
    return list(_span("mrope", name))


def _grid_ids(segment: tuple[Any, ...], merge: int, resume: Any, tps: int | None) -> Any:
    """posenc.mrope_position_ids of one grid at the start of a prompt, then one text token: the
    grid's (t, h, w) ids, and the id the text after it resumes at."""
    kwargs: dict[str, Any] = {} if tps is None else {"tokens_per_second": tps}
    ids = posenc.mrope_position_ids(
        [[segment, ("text", 1)]], spatial_merge_size=merge, resume=resume, **kwargs
    )[:, 0]
    return ids[:, :-1], int(ids[0, -1])


def _grid(segment: tuple[Any, ...], merge: int, hw: dict[str, Any], tps: int | None = None) -> Any:
    """A grid as the file stores it: the t id of each frame, the key of its frames' (h, w) ids
    in ``hw`` and where the text after it resumes (per rule); each checked to give posenc's ids
    back when put together as mrope.js does (frame by frame, the frame's t with the (h, w) of
    ``hw``), so the script's assembly is posenc's for every grid."""
    _, (t, h, w), *_ = segment
    ids, after_max = _grid_ids(segment, merge, "max", tps)
    _, after_spatial = _grid_ids(segment, merge, "spatial", tps)
    per_frame = ids.shape[1] // t
    frames = ids[0, ::per_frame].tolist()
    spatial = ids[1:, :per_frame].tolist()
    hw.setdefault(f"{h}-{w}-{merge}", spatial)
    rebuilt = [
        [f for f in frames for _ in range(per_frame)],
        *[row * t for row in hw[f"{h}-{w}-{merge}"]],
    ]
    if rebuilt != ids.tolist():
        raise ValueError(f"mrope explorer: the ids of {segment} (merge {merge}) are not per frame")
    return {
        "t": frames,
        "hw": f"{h}-{w}-{merge}",
        "next": {"max": after_max, "spatial": after_spatial},
    }


def mrope_file() -> dict[str, Any]:
    """Per grid the explorer can show: ``image-<h>-<w>-<m>``, ``video-<t>-<h>-<w>-<m>``
    (Qwen2-VL), ``video-<t>-<h>-<w>-<m>-<seconds>-<tps>`` (Qwen2.5-VL), ``frame-<h>-<w>-<m>``
    (a Qwen3-VL frame, a video grid of T = 1): ``_grid``; ``hw``: the (h, w) ids of a frame of
    h × w patches merged by m; ``axes``: the axis (0 t, 1 h, 2 w) of each of the 64 pairs of
    a 128-wide head under posenc.apply_mrope, for mrope_section [16, 24, 24] in bands and
    [24, 20, 20] interleaved."""
    hw: dict[str, Any] = {}
    grids: dict[str, Any] = {}
    merges = [int(m) for m in options("mrope", "merge")]
    for m in merges:
        for h in _mrope_range("imgh"):
            for w in _mrope_range("imgw"):
                grids[f"image-{h}-{w}-{m}"] = _grid(("image", (1, h, w)), m, hw)
        for h in _mrope_range("vidh"):
            for w in _mrope_range("vidw"):
                grids[f"frame-{h}-{w}-{m}"] = _grid(("video", (1, h, w)), m, hw)
                for t in _mrope_range("frames"):
                    grids[f"video-{t}-{h}-{w}-{m}"] = _grid(("video", (t, h, w)), m, hw)
                    for sec in options("mrope", "seconds"):
                        for tps in options("mrope", "tps"):
                            segment = ("video", (t, h, w), float(sec))
                            key = f"video-{t}-{h}-{w}-{m}-{sec}-{tps}"
                            grids[key] = _grid(segment, m, hw, int(tps))
    axes = {}
    for name, section, interleaved in (
        ("bands", [16, 24, 24], False),
        ("interleaved", [24, 20, 20], True),
    ):
        # token a has id 1 on axis a only: the pairs it turns are axis a's
        out = posenc.apply_mrope(
            np.ones((3, 128)), np.eye(3, dtype=np.int64), section, interleaved=interleaved
        )
        axes[name] = np.argmax(out[:, :64] != 1, axis=0).tolist()
    return {"grids": grids, "hw": hw, "axes": axes}


# --- bias ---------------------------------------------------------------------------------------


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


def _makers() -> Iterator[tuple[str, Callable[[], Any]]]:
    """(path under FOLDER, what computes its data) of every file."""
    for method in METHODS:
        for base in BASES:
            for dim in DIMS:
                for trained in TRAINED:
                    name = f"rope-scaling/{method}-{base}-{dim}-{trained}.json"
                    yield name, partial(scaling_file, method, base, dim, trained)
    for base in DECAY_BASES:
        for dim in DECAY_DIMS:
            for pairing in PAIRINGS:
                for vector in VECTORS:
                    name = f"rope-decay/{base}-{dim}-{pairing}-{vector}.json"
                    yield name, partial(decay_file, base, dim, pairing, vector)
    yield "mrope/grids.json", mrope_file
    yield "bias/alibi.json", alibi_file
    for direction in ("causal", "bidirectional"):
        yield f"bias/t5-{direction}.json", partial(t5_file, direction)


def names() -> list[str]:
    """The path under FOLDER of every file."""
    return [name for name, _ in _makers()]


def files(prefix: str = "") -> Iterator[tuple[str, Any]]:
    """(path under FOLDER, data) of every file whose path starts with ``prefix``."""
    for name, make in _makers():
        if name.startswith(prefix):
            yield name, make()


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

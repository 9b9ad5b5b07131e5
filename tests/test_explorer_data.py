"""The explorers' numbers (hooks/explorer_data.py writes them at build time from posenc), read by
the explorers' scripts (docs/assets/explorers/) under Node.js, over every setting the controls
allow, compared with posenc.

The browser tests (tests/test_browser_explorers*.py) check a grid of settings in Chromium. This
one runs the scripts' decoding of every data file: rope-scaling.js's compute() for every method,
base, head dimension and trained length, a spread of factors and every current length (the
inverse frequencies, attention factor, classes and readout numbers); bias.js's ALiBi slopes for
1 to 64 heads and T5 buckets (each number of buckets, max_distance and direction, every relative
position a map of 256 tokens holds); mrope.js's prompts put together from the grids of its
file for a sample of 300 prompts (each grid is checked against posenc by the build itself).
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import posenc
from sitecheck import import_hook

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = ROOT / "docs" / "assets" / "explorers"

DUMP = """
import { readFileSync } from "node:fs"
import { t5Buckets } from "./bias.mjs"
import { layout, positionIds } from "./mrope.mjs"
import { compute } from "./rope-scaling.mjs"
const read = (name) => JSON.parse(readFileSync(`data/${name}.json`, "utf8"))
const grids = read("mrope/grids")
const out = { slopes: read("bias/alibi"), t5: {}, refused: [], mrope: [], scaling: [] }
for (const name of JSON.parse(readFileSync("scaling.json", "utf8"))) {
  const [method, base, dim, trained] = name.split("-")
  const data = read(`rope-scaling/${name}`)
  for (const factor of ["1", "3", "8", "64"])
    for (const current of ["half", "trained", "double", "scaled"]) {
      const v = { method, base, dim, trained, factor, current }
      const r = compute(v, data)
      out.scaling.push([v, r.scaled, r.attention, r.cls, r.info, r.L])
    }
}
for (const direction of ["bidirectional", "causal"])
  for (const [key, rule] of Object.entries(read(`bias/t5-${direction}`))) {
    if (!rule.runs) { out.refused.push([direction, key, rule.exact]); continue }
    const bucket = t5Buckets(rule.runs)
    const row = []
    for (let rel = -255; rel <= 255; rel++) row.push(bucket(rel))
    out.t5[`${direction} ${key}`] = [row, rule.far, rule.last, rule.exact]
  }
let seed = 7
const pick = (a) => a[(seed = (seed * 16807) % 2147483647) % a.length]
const span = (lo, hi, step = 1) => Array.from({ length: (hi - lo) / step + 1 }, (_, k) => lo + k * step)
for (let k = 0; k < 300; k++) {
  const v = {
    model: pick(["Qwen2-VL", "Qwen2.5-VL", "Qwen3-VL"]), resume: pick(["max", "spatial"]),
    merge: pick([1, 2]), before: pick(span(1, 8)), imgh: pick(span(2, 16, 2)),
    imgw: pick(span(2, 16, 2)), between: pick(span(1, 8)), frames: pick(span(1, 8)),
    vidh: pick(span(2, 8, 2)), vidw: pick(span(2, 8, 2)), seconds: pick(["0.5", "1", "2"]),
    tps: pick(["1", "2", "4"]), stamp: pick(span(1, 6)), after: pick(span(1, 8)),
  }
  const ids = positionIds(layout(v), v.resume, grids)
  out.mrope.push([v, ["t", "h", "w"].map((a) => ids.map((tok) => tok[a]))])
}
out.axes = [grids.axes.bands, grids.axes.interleaved]
console.log(JSON.stringify(out))
"""


@pytest.fixture(scope="module")
def dump(tmp_path_factory):
    node = shutil.which("node")
    if node is None:
        pytest.skip("needs Node.js")
    where = tmp_path_factory.mktemp("explorers")
    for name in ("common", "bias", "mrope", "rope-scaling"):  # as ES modules
        text = (SCRIPTS / f"{name}.js").read_text(encoding="utf-8")
        (where / f"{name}.mjs").write_text(text.replace('"./common.js"', '"./common.mjs"'))
    scaling = []
    data = import_hook("explorer_data")
    chosen = [*data.files("rope-scaling/"), *data.files("bias/"), *data.files("mrope/")]
    for name, content in chosen:
        (where / "data" / name).parent.mkdir(parents=True, exist_ok=True)
        (where / "data" / name).write_text(json.dumps(content), encoding="utf-8")
        if name.startswith("rope-scaling/"):
            scaling.append(name.removeprefix("rope-scaling/").removesuffix(".json"))
    (where / "scaling.json").write_text(json.dumps(scaling), encoding="utf-8")
    (where / "dump.mjs").write_text(DUMP)
    run = subprocess.run([node, "dump.mjs"], cwd=where, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def test_alibi_slopes_are_posencs_for_every_head_count(dump):
    assert sorted(map(int, dump["slopes"])) == list(range(1, 65))
    for n in range(1, 65):
        slopes, logs = dump["slopes"][str(n)]
        assert slopes == posenc.alibi_slopes(n).tolist(), n
        assert logs == np.log2(posenc.alibi_slopes(n)).tolist(), n


def test_t5_buckets_are_posencs_for_every_setting(dump):
    rel = np.arange(-255, 256)
    for key, (row, far, last, exact) in dump["t5"].items():
        direction, setting = key.split()
        n, d = map(int, setting.split("-"))
        kwargs = {
            "bidirectional": direction == "bidirectional",
            "num_buckets": n,
            "max_distance": d,
        }
        assert row == posenc.t5_bucket(rel, **kwargs).tolist(), key
        past = posenc.t5_bucket(-np.arange(0, 4 * d), **kwargs)
        per_direction = n // 2 if direction == "bidirectional" else n
        assert last == per_direction - 1 and far == int(np.argmax(past == last)), key
        assert exact == per_direction // 2 and row[255 - exact] == exact, key  # first inexact
    assert len(dump["t5"]) == 697  # of 2 * 61 * 6 settings, those posenc accepts
    for direction, setting, _ in dump["refused"]:
        n, d = map(int, setting.split("-"))
        with pytest.raises(ValueError, match="max_distance"):
            posenc.t5_bucket(
                0, bidirectional=direction == "bidirectional", num_buckets=n, max_distance=d
            )


def test_mrope_ids_are_posencs(dump):
    for v, ids in dump["mrope"]:
        layout = [
            ("text", v["before"]),
            ("image", (1, v["imgh"], v["imgw"])),
            ("text", v["between"]),
        ]
        grid = (v["frames"], v["vidh"], v["vidw"])
        kwargs = {}
        if v["model"] == "Qwen3-VL":
            for _ in range(v["frames"]):
                layout += [("text", v["stamp"]), ("video", (1, v["vidh"], v["vidw"]))]
        elif v["model"] == "Qwen2.5-VL":
            layout.append(("video", grid, float(v["seconds"])))
            kwargs["tokens_per_second"] = int(v["tps"])
        else:
            layout.append(("video", grid))
        layout.append(("text", v["after"]))
        want = posenc.mrope_position_ids(
            [layout], spatial_merge_size=v["merge"], resume=v["resume"], **kwargs
        )[:, 0]
        assert ids == want.tolist(), v
    models = {v["model"] for v, _ in dump["mrope"]}
    assert models == {"Qwen2-VL", "Qwen2.5-VL", "Qwen3-VL"}
    one = np.eye(3, dtype=np.int64)
    for axes, section, inter in zip(
        dump["axes"], ([16, 24, 24], [24, 20, 20]), (False, True), strict=True
    ):
        out = posenc.apply_mrope(np.ones((3, 128)), one, section, interleaved=inter)
        assert axes == np.argmax(out[:, :64] != 1, axis=0).tolist()


def _longrope_factors(d, s):
    """The made-up LongRoPE factors, by the rule the rope-scaling page states."""
    u = np.arange(d // 2) / (d // 2 - 1)
    short = np.interp(u, [0, 1], [1.0, 1.25])
    long = np.maximum(1.0, np.interp(u, [0, 16 / 63, 40 / 63, 1], [1.0, 1.2, 0.75 * s, 1.25 * s]))
    return short.tolist(), long.tolist()


def _posenc_scaling(method, d, b, L0, s, L):
    keys = {"factor": s, "original_max_position_embeddings": L0}
    if method == "none":
        return posenc.rope_frequencies(d, base=b)
    if method == "ntk":
        return posenc.rope_frequencies(d, base=b * s ** (d / (d - 2)))
    if method == "linear":
        return posenc.rope_frequencies(d, base=b, scaling={"rope_type": "linear", "factor": s})
    if method == "llama3":
        keys |= {"low_freq_factor": 1.0, "high_freq_factor": 4.0}
    if method == "longrope":
        short, long = _longrope_factors(d, s)
        keys |= {"short_factor": short, "long_factor": long}
    return posenc.rope_frequencies(d, base=b, scaling={"rope_type": method, **keys}, seq_len=L)


def test_rope_scaling_numbers_are_posencs_for_every_file(dump):
    """rope-scaling.js's compute() on the data files: posenc's inverse frequencies to the last
    bit, its attention factor, and the page's classes and readout numbers."""
    names = {"seen": "s", "inside": "i", "beyond": "b"}
    methods = set()
    for v, scaled, attention, cls, info, L in dump["scaling"]:
        d, b, L0, s = int(v["dim"]), float(v["base"]), int(v["trained"]), float(v["factor"])
        want_L = {"half": L0 / 2, "trained": L0, "double": 2 * L0, "scaled": s * L0}[v["current"]]
        assert L == want_L, v
        plain, _ = posenc.rope_frequencies(d, base=b)
        inv, a = _posenc_scaling(v["method"], d, b, L0, s, int(L))
        assert scaled == inv.tolist() and attention == a, v  # exact
        seen = 2 * np.pi / plain <= L0
        inside = L * inv <= L0 * plain * (1 + 1e-9)
        want = ["s" if x else "i" if y else "b" for x, y in zip(seen, inside, strict=True)]
        assert [names[c] for c in cls] == want, v
        if v["method"] == "llama3":
            wave = 2 * np.pi / plain
            kept, divided = wave < L0 / 4, wave > L0
            assert [info["kept"], info["divided"], info["blended"]] == [
                kept.sum(),
                divided.sum(),
                (~kept & ~divided).sum(),
            ], v
        if v["method"] in ("ntk", "dynamic"):
            assert math.isclose(info["b"], inv[1] ** (-d / 2), rel_tol=1e-9), v
        if v["method"] == "yarn" and s > 1:
            gamma = np.array(info["gamma"])
            assert np.allclose(gamma, 1 - (1 - inv / plain) / (1 - 1 / s), rtol=0, atol=1e-9), v
            assert (gamma[: info["lo"] + 1] == 1).all() and (gamma[info["hi"] :] == 0).all(), v
        if v["method"] == "longrope":
            short, long = _longrope_factors(d, s)
            assert info["last"] == (long if L > L0 else short)[-1], v
        methods.add(v["method"])
    assert methods == {"none", "linear", "ntk", "dynamic", "yarn", "llama3", "longrope"}
    assert len(dump["scaling"]) == 7 * 3 * 4 * 4 * 4 * 4

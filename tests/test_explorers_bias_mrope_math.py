"""The arithmetic of the bias and M-RoPE explorers (docs/assets/explorers/bias.js, mrope.js),
run under Node.js over their whole range of settings and compared with posenc.

The browser test (tests/test_browser_explorers_bias_mrope.py) checks a grid of settings in
Chromium. This one checks every setting the controls allow for ALiBi's slopes (1 to 64 heads)
and T5's buckets (each number of buckets, max_distance and direction, every relative position a
map of 256 tokens holds), and a sample of M-RoPE prompts, in another JavaScript engine: Node's
Math.pow misses the last bit of some slopes that Chromium's gets right, so it also exercises the
correction that makes the explorer's slopes NumPy's in every engine.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import posenc

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = ROOT / "docs" / "assets" / "explorers"

DUMP = """
import { slopes, t5Rule, t5Bucket } from "./bias.mjs"
import { layout, positionIds, pairAxes } from "./mrope.mjs"
const out = { slopes: {}, t5: {}, refused: [], mrope: [] }
for (let n = 1; n <= 64; n++) out.slopes[n] = slopes(n)[0].map(String)
for (const bidi of [true, false])
  for (let N = 4; N <= 64; N++)
    for (const D of [16, 32, 64, 128, 256, 512]) {
      const rule = t5Rule(N, D, bidi)
      if (!rule) { out.refused.push([bidi, N, D]); continue }
      const row = []
      for (let rel = -255; rel <= 255; rel++) row.push(t5Bucket(rel, bidi, rule))
      out.t5[`${bidi} ${N} ${D}`] = row
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
  const ids = positionIds(layout(v), v.merge, v.resume)
  out.mrope.push([v, ["t", "h", "w"].map((a) => ids.map((tok) => tok[a]))])
}
out.axes = [pairAxes(false), pairAxes(true)]
console.log(JSON.stringify(out))
"""


@pytest.fixture(scope="module")
def dump(tmp_path_factory):
    node = shutil.which("node")
    if node is None:
        pytest.skip("needs Node.js")
    where = tmp_path_factory.mktemp("explorers")
    for name in ("common", "bias", "mrope"):  # as ES modules, whatever package.json says
        text = (SCRIPTS / f"{name}.js").read_text(encoding="utf-8")
        (where / f"{name}.mjs").write_text(text.replace('"./common.js"', '"./common.mjs"'))
    (where / "dump.mjs").write_text(DUMP)
    run = subprocess.run([node, "dump.mjs"], cwd=where, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def test_alibi_slopes_are_posencs_for_every_head_count(dump):
    for n in range(1, 65):
        assert [float(s) for s in dump["slopes"][str(n)]] == posenc.alibi_slopes(n).tolist(), n


def test_t5_buckets_are_posencs_for_every_setting(dump):
    rel = np.arange(-255, 256)
    for key, row in dump["t5"].items():
        bidi, n, d = key.split()
        want = posenc.t5_bucket(
            rel, bidirectional=bidi == "true", num_buckets=int(n), max_distance=int(d)
        )
        assert row == want.tolist(), key
    assert len(dump["t5"]) == 697  # of 2 * 61 * 6 settings, those posenc accepts
    for bidi, n, d in dump["refused"]:
        with pytest.raises(ValueError, match="max_distance"):
            posenc.t5_bucket(0, bidirectional=bidi, num_buckets=n, max_distance=d)


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

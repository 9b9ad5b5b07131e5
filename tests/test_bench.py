"""Smoke test of ``make bench``: the harness runs on tiny sizes and its numbers hang together.

No time is asserted here (speed goals are met in `make bench`, never in a test); what is
checked is that every case ran, that ratios are the ratios of the reported times, and that the
errors reported for posenc meet the precision bounds while the naive peers' do not.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest
import torch

from ci_rule import require

pytestmark = [pytest.mark.values, pytest.mark.slow]

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    for name in ("transformers", "positional_encodings", "rotary_embedding_torch"):
        require(name)  # skip without it; fail under CI=true
    sys.path.insert(0, str(ROOT))
    from bench.report import run

    path = tmp_path_factory.mktemp("bench") / "bench.json"
    with torch.device("cpu"):  # run(device="cpu"): what its cases make without a device, too
        results = run(quick=True, repeat=2, memory=True, build=False, json_path=path)
    return results, json.loads(path.read_text(encoding="utf-8"))


def test_build_is_timed_as_rebuilt_and_as_drawn_anew():
    """The goal is measured on a rebuild (figures read from .cache/figures/, filled by an untimed
    build first); the build that draws every figure is timed and recorded beside it."""
    sys.path.insert(0, str(ROOT))
    from bench.report import build_record

    calls = []

    def fake(figure_cache):
        calls.append(figure_cache)
        return {False: 31.0, True: 17.0 + len(calls)}[figure_cache]

    record = build_record(fake)
    assert calls == [False, True, True]
    assert record["seconds"] == 20.0 and record["cold_seconds"] == 31.0 and record["met"]
    assert not build_record(lambda figure_cache: None if figure_cache else 9.0)["met"]


def test_every_case_ran_and_was_written(quick):
    results, written = quick
    assert [c["id"] for c in written["cases"]] == [
        "sinusoidal-torch",
        "sinusoidal-numpy",
        "rope-torch",
        "modules-torch",
    ]
    assert written["machine"]["torch"] and written["date"]
    for case in written["cases"]:
        assert case["rows"], case["id"]
        for row in case["rows"]:
            assert row["ms"] > 0 and math.isfinite(row["ms"]), row


def test_ratios_are_ratios_of_the_times(quick):
    _, written = quick
    for case in written["cases"]:
        peers = [r["ms"] for r in case["rows"] if r["kind"] == "peer"]
        for row in case["rows"]:
            if row.get("ratio_to_fastest_peer") is not None:
                assert row["ratio_to_fastest_peer"] == pytest.approx(row["ms"] / min(peers))
        assert case["met"] == (case["measured_ratio"] <= case["goal_ratio"])
        for row in case["rows"]:
            for key in ("ratio_noise", "ratio_to_bare_noise"):
                assert row.get(key, 0.0) >= 0.0


def test_reported_errors_separate_posenc_from_naive_code(quick):
    _, written = quick
    by_case = {c["id"]: {r["name"]: r for r in c["rows"]} for c in written["cases"]}
    sin = by_case["sinusoidal-torch"]
    assert sin["posenc.sinusoidal"]["max_error"] <= 3e-7  # includes positions near 2**24
    assert sin["naive torch (tutorial code)"]["max_error"] > 1e-5  # already wrong near 4096
    assert by_case["sinusoidal-numpy"]["posenc.sinusoidal (NumPy)"]["max_error"] <= 3e-7
    rope = by_case["rope-torch"]
    for name in ("posenc.apply_rope interleaved", "posenc.apply_rope half"):
        assert rope[name]["max_error"] <= 1e-6
    assert rope["Meta Llama complex multiply"]["max_error"] > 1e-5


def test_memory_rows_compare_peak_with_output(quick):
    results, _ = quick
    for row in results["memory"]:
        assert row["output_mb"] > 0
        assert row["ratio"] == pytest.approx(row["peak_mb"] / row["output_mb"])


# --- the regression gate (bench.gate) ----------------------------------------------------------


def _record(ratio, noise, title="t", date="2026-01-01"):
    rows = [
        {
            "name": "posenc.x",
            "kind": "posenc",
            "ratio_to_fastest_peer": ratio,
            "ratio_noise": noise,
        },
        {"name": "peer", "kind": "peer", "ratio_to_fastest_peer": 1.0, "ratio_noise": 0.0},
        {
            "name": "Module.forward",
            "kind": "posenc",
            "ratio_to_bare": ratio,
            "ratio_to_bare_noise": noise,
        },
    ]
    return {"date": date, "cases": [{"id": "c", "title": title, "rows": rows}]}


@pytest.fixture(scope="module")
def gate():
    sys.path.insert(0, str(ROOT))
    from bench import gate

    return gate


def test_gate_flags_only_moves_past_twice_the_combined_noise(gate):
    old = _record(1.00, 0.03)
    # threshold 2 * hypot(0.03, 0.04) = 0.10
    within = gate.compare(old, _record(1.09, 0.04))
    assert [r["verdict"] for r in within] == ["within noise", "within noise"]
    slower = gate.compare(old, _record(1.11, 0.04))
    assert {r["verdict"] for r in slower} == {"SLOWER"}
    assert {r["against"] for r in slower} == {"fastest peer", "bare op"}
    faster = gate.compare(old, _record(0.89, 0.04))
    assert {r["verdict"] for r in faster} == {"faster"}
    assert gate.report(slower, old) is False and gate.report(faster, old) is True


def test_gate_compares_only_cases_run_at_the_same_sizes(gate):
    assert gate.compare(_record(1.0, 0.01, title="(1, 32, 4096, 128)"), _record(9.0, 0.01)) == []
    assert gate.compare(None, _record(1.0, 0.01)) == []
    old = _record(1.0, 0.0)  # a record without noise: the new run's noise alone
    assert {r["verdict"] for r in gate.compare(old, _record(1.5, 0.1))} == {"SLOWER"}


def test_gate_reads_the_committed_record(gate):
    record = gate.committed(ROOT / "docs" / "assets" / "bench.json")
    assert record is not None and record["cases"]
    assert gate.ratios(record)  # the committed record has ratios to compare with


def test_torch_peers_make_their_tables_on_the_device_asked_for():
    """`make bench DEVICE=cuda` times every torch contender on the card: the sinusoidal peers
    take no device argument, so the case runs them with the device as torch's default (the meta
    device stands in for one here: a peer left on the CPU would return a CPU tensor)."""
    require("positional_encodings")  # timm is read without importing it (bench.peers.timm_sincos)
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from bench import cases, peers

    made = [
        cases._on("meta", lambda: peers.naive_torch(8, 4))(),
        cases._on("meta", lambda: peers.timm_table()(8, 4))(),
        cases._on("meta", lambda: peers.positional_encodings_1d()(8, 4))(),
    ]
    assert [t.device.type for t in made] == ["meta"] * 3
    assert peers.naive_torch(8, 4).device.type == torch.get_default_device().type


def test_lighthouse_pages_are_the_heaviest_of_each_kind_and_every_explorer(tmp_path):
    sys.path.insert(0, str(ROOT))
    from bench.lighthouse import choose_pages

    pages = {
        "rope": '<div class="arithmatex"></div>' * 3 + '<div data-explorer="decay"></div>',
        "sinusoidal": '<div class="posenc-figure"></div>' * 2,
        "api-rope": "<p></p>" * 50,
        "alibi": '<div data-explorer="bias"></div>',
        "glossary": "<p></p>",
    }
    for name, html in pages.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "index.html").write_text(html, encoding="utf-8")
    chosen = choose_pages(tmp_path)
    assert chosen[:5] == [
        ("math", "/rope/"),
        ("figures", "/sinusoidal/"),
        ("home", "/"),
        ("api", "/api-rope/"),
        ("explorer", "/alibi/"),  # /rope/ has one too, and is measured as the math page
    ]
    assert chosen[5:] == [(kind, "/zh" + path) for kind, path in chosen[:5]]


def test_lighthouse_keeps_the_median_run_of_each_page():
    from bench.lighthouse import RUNS, median_run

    runs = [
        {"performance": 91, "tbt_ms": 300},
        {"performance": 99, "tbt_ms": 40},
        {"performance": 96, "tbt_ms": 150},
    ]
    row = median_run(runs)
    assert RUNS % 2 == 1 and RUNS >= 3
    assert row["performance"] == 96 and row["tbt_ms"] == 150 and row["runs"] == [91, 99, 96]
    # equal scores are ranked by blocking time, the longer first
    tied = median_run(
        [
            {"performance": 95, "tbt_ms": 100},
            {"performance": 95, "tbt_ms": 200},
            {"performance": 97, "tbt_ms": 10},
        ]
    )
    assert tied["performance"] == 95 and tied["tbt_ms"] == 100


def test_lighthouse_will_not_measure_the_chinese_pages_without_a_chinese_font(monkeypatch):
    from bench import lighthouse

    def listing(text):
        return [sys.executable, "-c", f"print({text!r}, end='')"]

    monkeypatch.setattr(
        lighthouse,
        "ZH_FONTS",
        listing("Noto Serif CJK JP\nNoto Sans CJK SC,Noto Sans CJK SC Regular\n"),
    )
    assert lighthouse.chinese_font() == "Noto Sans CJK SC"
    monkeypatch.setattr(lighthouse, "ZH_FONTS", listing("WenQuanYi Micro Hei\n"))
    assert lighthouse.chinese_font() == "WenQuanYi Micro Hei"
    for empty in (listing(""), listing("\n"), ["posenc-no-such-tool"]):
        monkeypatch.setattr(lighthouse, "ZH_FONTS", empty)
        with pytest.raises(FileNotFoundError, match="no Chinese font.*fonts-noto-cjk"):
            lighthouse.chinese_font()


def test_lighthouse_times_how_long_the_first_frame_waited_to_be_shown():
    from bench.lighthouse import frame_wait_ms

    url = "http://127.0.0.1:8000/zh/rope/"

    def nav(ts, pid, frame, where):
        data = {"documentLoaderURL": where}
        return {
            "name": "navigationStart",
            "ts": ts,
            "pid": pid,
            "args": {"frame": frame, "data": data},
        }

    events = [
        nav(1_000, 7, "F0", "about:blank"),
        {"name": "ActivateLayerTree", "ts": 1_500, "pid": 7},  # before the page: not counted
        nav(10_000, 7, "F1", url),
        {"name": "ActivateLayerTree", "ts": 260_000, "pid": 9},  # another renderer
        {"name": "ActivateLayerTree", "ts": 310_000, "pid": 7},
        {"name": "ActivateLayerTree", "ts": 1_300_000, "pid": 7},
        {"name": "firstPaint", "ts": 320_000, "args": {"frame": "F0"}},  # another frame
        {"name": "firstPaint", "ts": 1_250_000, "args": {"frame": "F1"}},
    ]
    assert frame_wait_ms(events, url) == 940.0
    assert frame_wait_ms(events, url + "other/") is None  # not in the trace
    assert frame_wait_ms([e for e in events if e["name"] != "firstPaint"], url) is None


def test_lighthouse_sets_aside_runs_whose_first_frame_was_held_back(monkeypatch):
    from bench import lighthouse

    def fake(runs):
        made = iter(runs)
        return lambda url: next(made)

    waits = [(84, 1002), (99, 8), (94, 918), (98, 21), (99, 8), (97, 980), (98, 8), (96, None)]
    runs = [
        {"performance": p, "tbt_ms": 0, "frame_wait_ms": w, "host_index": 1000 + i}
        for i, (p, w) in enumerate(waits)
    ]
    row = lighthouse.measure("u", once=fake(runs))
    assert row["runs"] == [99, 98, 99, 98, 96] and row["performance"] == 98
    assert row["set_aside"] == [84, 94, 97] and row["stalled"] is False
    # the machine's benchmark at every run made, set aside or not, in order
    assert row["host_index"] == list(range(1000, 1008))
    # never more than ATTEMPTS runs: then every run counts, and the row says so
    monkeypatch.setattr(lighthouse, "ATTEMPTS", 5)
    held = [{"performance": 80 + i, "tbt_ms": 0, "frame_wait_ms": 900} for i in range(4)]
    row = lighthouse.measure("u", once=fake([*held, runs[1]]))
    assert row["stalled"] is True and row["runs"] == [80, 81, 82, 83, 99]
    assert row["performance"] == 82 and row["set_aside"] == [80, 81, 82, 83]

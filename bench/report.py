"""Run the cases, measure peak memory and the site build, print the table, write the JSON."""

from __future__ import annotations

import datetime
import gc
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

import posenc

from . import cases, gate

ROOT = Path(__file__).resolve().parent.parent


def machine(device: str) -> dict:
    info = {
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpus": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "torch": torch.__version__,
        "posenc": posenc.__version__,
        "device": device,
    }
    if device == "cuda":
        info["gpu"] = torch.cuda.get_device_name()
    for mod in ("transformers", "timm", "rotary_embedding_torch", "positional_encodings"):
        try:
            from importlib.metadata import version

            info[mod] = version(mod.replace("_", "-"))
        except Exception:  # not installed: its rows are missing, not wrong
            info[mod] = None
    return info


# --- peak memory (Linux: reset the high-water mark, call, read it) ----------------------------


def _status(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise OSError(field)


def peak_bytes(fn):
    """Peak resident memory added while ``fn()`` runs (its output included), or None."""
    gc.collect()
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # reset VmHWM to the current RSS
        before = _status("VmRSS")
        out = fn()
        peak = _status("VmHWM")
    except OSError:
        return None, None
    nbytes = sum(
        t.numel() * t.element_size() if isinstance(t, torch.Tensor) else t.nbytes
        for t in (out if isinstance(out, tuple) else (out,))
    )
    del out
    gc.collect()
    return peak - before, nbytes


def memory_rows(size, device):
    if device != "cpu":
        return []
    n, d, shape = size["n"], size["d"], size["rope"]
    q = torch.randn(shape)
    pos = torch.arange(shape[-2])
    items = {
        "posenc.sinusoidal torch float32": lambda: posenc.sinusoidal(torch.arange(n), d),
        "posenc.sinusoidal NumPy float32": lambda: posenc.sinusoidal(n, d, dtype=np.float32),
        "posenc.sinusoidal NumPy float64": lambda: posenc.sinusoidal(n, d),
        "posenc.apply_rope interleaved (q)": lambda: posenc.apply_rope(q, pos),
        "posenc.apply_rope half (q)": lambda: posenc.apply_rope(q, pos, pairing="half"),
    }
    rows = []
    for name, fn in items.items():
        fn()  # warm caches and allocator
        peak, out = peak_bytes(fn)
        if peak is None:
            return []
        rows.append(
            {"name": name, "peak_mb": peak / 2**20, "output_mb": out / 2**20, "ratio": peak / out}
        )
    return rows


def build_seconds(figure_cache=True):
    """Seconds of one ``properdocs build --strict`` into a temporary folder (None if it failed);
    ``figure_cache=False`` draws every figure anew (``POSENC_FIGURE_CACHE=0``, hooks/figures.py)
    where by default the figures kept in ``.cache/figures/`` by an earlier build are read."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    env["POSENC_FIGURE_CACHE"] = "1" if figure_cache else "0"
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "properdocs",
                "build",
                "--strict",
                "-f",
                "mkdocs.yml",
                "-q",
                "-d",
                tmp,
            ],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
        )
        seconds = time.perf_counter() - t0
    return seconds if proc.returncode == 0 else None


def build_record(time_build=build_seconds):
    """The build's time as ``make serve`` rebuilds it (the figures of an earlier build read from
    ``.cache/figures/``: one untimed build first fills it), the goal's measure, and the time of a
    build that draws every figure (a fresh clone's first build)."""
    cold = time_build(figure_cache=False)
    time_build(figure_cache=True)  # fills .cache/figures/ for the timed build after it
    warm = time_build(figure_cache=True)
    return {
        "goal": "mkdocs build --strict <= 20 s (figures kept by an earlier build)",
        "seconds": warm,
        "cold_seconds": cold,
        "met": warm is not None and warm <= 20,
    }


# --- printing --------------------------------------------------------------------------------


def _fmt(x, spec):
    return "-" if x is None else format(x, spec)


def print_case(case):
    print(f"\n## {case['title']}")
    if "error_at" in case:
        print(f"   error: {case['error_at']}")
    print(
        f"   {'contender':48s} {'ms':>9s} {'x fastest peer':>14s} {'x floors':>18s} {'max error':>10s}"
    )
    for r in case["rows"]:
        floors = " ".join(f"{v:.2f}" for v in r.get("ratio_to_floor", {}).values())
        extra = f"  (x{r['ratio_to_bare']:.2f} the bare op)" if "ratio_to_bare" in r else ""
        if "ratio_noise" in r:
            extra += f"  (+-{r['ratio_noise']:.2f})"
        note = f"  [{r['note']}]" if "note" in r else ""
        print(
            f"   {r['name']:48s} {r['ms']:9.2f} {_fmt(r.get('ratio_to_fastest_peer'), '14.2f')} "
            f"{floors:>18s} {_fmt(r.get('max_error'), '10.1e')}{extra}{note}"
        )
    if case["met"] is None:
        print(f"   goal: {case['goal']}")
    else:
        verdict = "met" if case["met"] else "MISSED"
        print(f"   goal: {case['goal']}: measured {case['measured_ratio']:.2f} -> {verdict}")


def run(
    *,
    device="cpu",
    quick=False,
    repeat=None,
    memory=True,
    build=True,
    json_path=None,
    gate_against=None,
):
    """Run every case; ``gate_against``: a record to compare the ratios with (bench.gate)."""
    size = cases.QUICK if quick else cases.BIG
    repeat = repeat or (3 if quick else 9)
    torch.manual_seed(0)
    results = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "quick": quick,
        "repeat": repeat,
        "machine": machine(device),
        "load_average_at_start": [round(v, 2) for v in os.getloadavg()],
        "cases": [],
    }
    print(
        f"posenc bench on {device} ({'quick sizes' if quick else 'full sizes'}, {repeat} rounds, medians)"
    )
    for case_fn in cases.CASES:
        case = case_fn(size, repeat, device)
        if case is None:  # not on this device or platform
            continue
        results["cases"].append(case)
        print_case(case)
    results["memory"] = memory_rows(size, device) if memory else []
    if results["memory"]:
        print("\n## peak memory added by one call (output included)")
        for r in results["memory"]:
            print(
                f"   {r['name']:40s} peak {r['peak_mb']:8.1f} MB  output {r['output_mb']:8.1f} MB  x{r['ratio']:.2f}"
            )
        worst = max(r["ratio"] for r in results["memory"])
        results["memory_goal"] = {
            "goal": "peak <= 2x the output",
            "measured_ratio": worst,
            "met": worst <= 2.0,
        }
        print(
            f"   goal: peak <= 2x the output: measured {worst:.2f} -> {'met' if worst <= 2 else 'MISSED'}"
        )
    if build:
        results["build"] = build_record()
        b = results["build"]
        print(
            f"\n## site build: mkdocs build --strict {_fmt(b['seconds'], '.1f')} s with the "
            f"figures kept by an earlier build (goal <= 20 s), "
            f"{_fmt(b['cold_seconds'], '.1f')} s drawing every figure"
        )
    results["load_average"] = [round(v, 2) for v in os.getloadavg()]
    print(f"\nload average (1, 5, 15 min): {results['load_average']}")
    gate_ok = None
    if gate_against is not None:
        gate_ok = gate.report(gate.compare(gate_against, results), gate_against)
    if json_path:
        Path(json_path).parent.mkdir(parents=True, exist_ok=True)
        if Path(json_path).exists():  # keep the sections other runs merged in (--only ...)
            old = json.loads(Path(json_path).read_text(encoding="utf-8"))
            results = {
                **{k: v for k, v in old.items() if k in ("compile", "lighthouse")},
                **results,
            }
        Path(json_path).write_text(
            json.dumps(results, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
        )
        print(f"\nwrote {json_path}")
    if gate_ok is not None:
        results["gate_ok"] = gate_ok  # for the caller's exit status; not written
    return results

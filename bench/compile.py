"""torch.compile (inductor) against eager for the posenc.torch modules.

``python -m bench --only compile [--quick] [--device cpu|cuda] [--json PATH]`` (or
``python -m bench.compile``). Each module's forward is timed eagerly and compiled with
``torch.compile(fullgraph=True)`` (inductor, the default backend), alternating, after warm-up;
the first compiled call (tracing + code generation) is timed on its own. The result is merged
into docs/assets/bench.json under the key ``"compile"``, leaving the other sections as they are.
Inductor on the CPU needs a C++ compiler: without one its rows carry the error instead of times.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
import time
from pathlib import Path

import torch

from .timing import _sync, measure

DEFAULT_JSON = Path(__file__).resolve().parent.parent / "docs" / "assets" / "bench.json"
KEY = "compile"

# x: (batch, seq, d); q, k: (batch, heads, seq, head_dim), as in the modules-torch case
BIG = {"batch": 4, "seq": 4096, "d": 1024, "heads": 32, "head_dim": 128, "buckets_len": 1024}
QUICK = {"batch": 2, "seq": 64, "d": 64, "heads": 2, "head_dim": 16, "buckets_len": 32}


def _contenders(size, device):
    """name -> (module call, eager reference kwargs) for every module and path worth compiling."""
    from posenc.torch import (
        LearnedPositionalEmbedding,
        RotaryEmbedding,
        SinusoidalPositionalEncoding,
        T5RelativeBias,
    )

    b, seq, d, h, hd = size["batch"], size["seq"], size["d"], size["heads"], size["head_dim"]
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(b, seq, d, generator=gen).to(device)
    q = torch.randn(b, h, seq, hd, generator=gen).to(device)
    k = torch.randn(b, h, seq, hd, generator=gen).to(device)
    ids = torch.arange(seq, device=device).expand(b, seq)  # per-batch ids, as HF passes them
    spe = SinusoidalPositionalEncoding(d, max_len=seq).to(device)
    learned = LearnedPositionalEmbedding(seq, d).to(device).requires_grad_(False)
    half = RotaryEmbedding(hd, pairing="half", max_len=seq).to(device)
    inter = RotaryEmbedding(hd, pairing="interleaved", max_len=seq).to(device)
    t5 = T5RelativeBias(h).to(device).requires_grad_(False)
    n = size["buckets_len"]
    return {
        "SinusoidalPositionalEncoding(x)": lambda m=spe: m(x),
        "LearnedPositionalEmbedding(x, positions=ids)": lambda m=learned: m(x, positions=ids),
        "RotaryEmbedding(half)(q, k)": lambda m=half: m(q, k),
        "RotaryEmbedding(interleaved)(q, k)": lambda m=inter: m(q, k),
        "RotaryEmbedding(half)(q, k, positions=ids)": lambda m=half: m(q, k, positions=ids),
        f"T5RelativeBias({n}, {n})": lambda m=t5: m(n, n),
    }


def _max_error(got, want):
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    return max(
        float((g.double() - w.double()).abs().max() / w.double().abs().max())
        for g, w in zip(got, want, strict=True)
    )


def compile_case(size, repeat, device):
    """Rows of eager and inductor times per module call, their ratio and the first-call time."""
    torch.manual_seed(0)
    rows = []
    with torch.no_grad():
        for name, eager in _contenders(size, device).items():
            torch._dynamo.reset()
            compiled = torch.compile(eager, fullgraph=True)
            row = {"name": name}
            try:
                _sync(device)
                t0 = time.perf_counter()
                first = compiled()
                _sync(device)
                row["compile_s"] = time.perf_counter() - t0
            except Exception as exc:  # no C++ compiler, an inductor bug: reported, not fatal
                row.update(error=f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}")
                rows.append(row)
                continue
            row["max_error"] = _max_error(first, eager())  # relative to max|eager result|
            times = measure({"eager": eager, "inductor": compiled}, repeat=repeat, device=device)
            row.update(eager_ms=times["eager"] * 1e3, inductor_ms=times["inductor"] * 1e3)
            row["ratio"] = times["inductor"] / times["eager"]
            rows.append(row)
    timed = [r["ratio"] for r in rows if "ratio" in r]
    return {
        "id": KEY,
        "title": f"posenc.torch modules, torch.compile(fullgraph=True, inductor) vs eager, torch {device}",
        "shapes": dict(size),
        "rows": rows,
        "note": "ratio = inductor ms / eager ms (< 1: compiled is faster); compile_s = first call",
        "worst_ratio": max(timed) if timed else None,
        "best_ratio": min(timed) if timed else None,
    }


def print_case(case):
    print(f"\n## {case['title']}")
    print(
        f"   {'module call':48s} {'eager ms':>9s} {'inductor ms':>11s} {'ratio':>6s} {'compile s':>9s} {'max rel err':>11s}"
    )
    for r in case["rows"]:
        if "error" in r:
            print(f"   {r['name']:48s} inductor failed: {r['error']}")
            continue
        print(
            f"   {r['name']:48s} {r['eager_ms']:9.2f} {r['inductor_ms']:11.2f} {r['ratio']:6.2f} "
            f"{r['compile_s']:9.1f} {r['max_error']:11.1e}"
        )


def merge_into(path, case, meta):
    """Write ``case`` under ``"compile"`` in the JSON at ``path``, keeping every other key."""
    path = Path(path)
    data = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    data[KEY] = {**meta, **case}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def run(*, device="cpu", quick=False, repeat=None, json_path=None):
    size = QUICK if quick else BIG
    repeat = repeat or (3 if quick else 9)
    print(
        f"posenc compile bench on {device} ({'quick sizes' if quick else 'full sizes'}, {repeat} rounds, medians)"
    )
    case = compile_case(size, repeat, device)
    print_case(case)
    if json_path:
        meta = {
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "quick": quick,
            "repeat": repeat,
            "device": device,
            "torch": torch.__version__,
            "torch_threads": torch.get_num_threads(),
        }
        merge_into(json_path, case, meta)
        print(f"\nmerged into {json_path} under {KEY!r}")
    return case


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench.compile", description=__doc__)
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--quick", action="store_true", help="tiny sizes")
    parser.add_argument("--repeat", type=int, default=None, help="timed rounds per contender")
    parser.add_argument(
        "--json",
        type=Path,
        default=None,
        help=f"where to merge the results (default {DEFAULT_JSON}; none with --quick)",
    )
    args = parser.parse_args(argv)
    path = args.json if args.json else (None if args.quick else DEFAULT_JSON)
    case = run(device=args.device, quick=args.quick, repeat=args.repeat, json_path=path)
    return 0 if any("ratio" in r for r in case["rows"]) else 1


if __name__ == "__main__":
    sys.exit(main())

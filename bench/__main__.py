"""``python -m bench [--device cpu|cuda] [--quick] [--repeat N] [--json PATH] [--only compile|lighthouse]``.

A full run ends with the regression gate (bench.gate): every ratio against the committed record,
and which moved by more than the noise measured; the exit status is 3 when one got slower.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .report import run

DEFAULT_JSON = Path(__file__).resolve().parent.parent / "docs" / "assets" / "bench.json"


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument(
        "--quick", action="store_true", help="tiny sizes (the smoke test in make test)"
    )
    parser.add_argument("--repeat", type=int, default=None, help="timed rounds per contender")
    parser.add_argument(
        "--json",
        type=Path,
        default=None,
        help=f"where to write results (default {DEFAULT_JSON}; none with --quick)",
    )
    parser.add_argument(
        "--no-memory", action="store_true", help="skip the peak-memory measurements"
    )
    parser.add_argument("--no-build", action="store_true", help="skip timing the site build")
    parser.add_argument(
        "--only",
        choices=["compile", "lighthouse"],
        default=None,
        help="run one extra case on its own and merge it into the JSON under its key "
        "(compile: torch.compile inductor vs eager for the modules; lighthouse: "
        "Lighthouse mobile over the heaviest pages of the built site)",
    )
    parser.add_argument(
        "--no-lighthouse", action="store_true", help="skip Lighthouse in a full run"
    )
    parser.add_argument(
        "--no-gate", action="store_true", help="do not compare with the committed record"
    )
    parser.add_argument(
        "--site",
        type=Path,
        default=None,
        help="a built site for Lighthouse (default: build one into a temporary folder)",
    )
    args = parser.parse_args(argv)
    path = args.json if args.json else (None if args.quick else DEFAULT_JSON)
    if args.only == "compile":
        from . import compile as compile_bench

        case = compile_bench.run(
            device=args.device, quick=args.quick, repeat=args.repeat, json_path=path
        )
        return 0 if any("ratio" in r for r in case["rows"]) else 1
    if args.only == "lighthouse":
        from . import lighthouse

        return 0 if lighthouse.run(path, site=args.site)["pages"] else 1
    from . import gate

    against = None if (args.no_gate or args.quick) else gate.committed(path or DEFAULT_JSON)
    results = run(
        device=args.device,
        quick=args.quick,
        repeat=args.repeat,
        memory=not args.no_memory,
        build=not (args.no_build or args.quick),
        json_path=path,
        gate_against=against,
    )
    if results and not (args.quick or args.no_lighthouse):
        from . import lighthouse

        lighthouse.run(path, site=args.site)
    if not results:
        return 1
    if results.get("gate_ok") is False:
        print("regression gate: a ratio got slower by more than its noise (see above)")
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())

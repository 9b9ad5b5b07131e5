"""``python -m bench [--device cpu|cuda] [--quick] [--repeat N] [--json PATH]``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .report import run

DEFAULT_JSON = Path(__file__).resolve().parent.parent / "docs" / "assets" / "bench.json"


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--quick", action="store_true", help="tiny sizes (the smoke test in make test)")
    parser.add_argument("--repeat", type=int, default=None, help="timed rounds per contender")
    parser.add_argument("--json", type=Path, default=None, help=f"where to write results (default {DEFAULT_JSON}; none with --quick)")
    parser.add_argument("--no-memory", action="store_true", help="skip the peak-memory measurements")
    parser.add_argument("--no-build", action="store_true", help="skip timing the site build")
    args = parser.parse_args(argv)
    path = args.json if args.json else (None if args.quick else DEFAULT_JSON)
    results = run(device=args.device, quick=args.quick, repeat=args.repeat, memory=not args.no_memory,
                  build=not (args.no_build or args.quick), json_path=path)
    return 0 if results else 1


if __name__ == "__main__":
    sys.exit(main())

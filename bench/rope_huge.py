"""The RoPE case again with every torch allocation in transparent huge pages.

``python -m bench.rope_huge [--quick] [--repeat N]`` prints the case as JSON; ``make bench`` runs it
in a subprocess with ``THP_MEM_ALLOC_ENABLE=1`` (torch reads it once, at its first allocation,
so it cannot be switched on inside the main run). posenc advises its own large CPU outputs for
huge pages (posenc._rope_torch.new_output), which makes first touching them about five times
cheaper than the 4 KiB pages every other contender's outputs get. With huge pages for every
allocation that advantage is gone and what is left is the rotations' arithmetic: this case shows
it, with no goal of its own.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENV = "THP_MEM_ALLOC_ENABLE"


def case(size: dict, repeat: int, device: str) -> dict | None:
    """Run this module in a subprocess with huge pages for every torch allocation (Linux CPU;
    not at ``--quick`` sizes, where nothing is large enough for huge pages to matter)."""
    if size.get("quick") or device != "cpu" or not sys.platform.startswith("linux"):
        return None
    cmd = [sys.executable, "-m", "bench.rope_huge", "--repeat", str(repeat)]
    if size.get("quick"):
        cmd.append("--quick")
    proc = subprocess.run(
        cmd, cwd=ROOT, env={**os.environ, ENV: "1"}, capture_output=True, text=True
    )
    if proc.returncode != 0:
        print(f"   (rope with huge pages everywhere failed: {proc.stderr[-500:]})")
        return None
    return json.loads(proc.stdout)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.rope_huge", description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args(argv)
    from . import cases

    size = cases.QUICK if args.quick else cases.BIG
    result = cases.rope_torch(size, args.repeat, "cpu")
    result["id"] = "rope-torch-huge-pages"
    result["title"] += f", every allocation in huge pages ({ENV}=1)"
    result["goal"] = (
        "none (the arithmetic alone: every contender's output in huge pages); "
        f"posenc / Meta: {result['measured_ratio']:.2f}"
    )
    result["goal_ratio"] = None
    result["met"] = None
    result["environment"] = {ENV: os.environ.get(ENV)}
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())

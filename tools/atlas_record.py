"""Record the atlas's verification run: docs/assets/atlas.json (``make atlas``).

Runs the generic walks of tests/hf_walk.py (each transformers model type's own rotary code
against ``posenc.hf.describe(config).rotate``) and tests/hf_walk_fixed.py (ALiBi, T5 buckets
and sinusoidal tables against ``describe(config).function()``) and writes what it found, one entry per walked
model type, with the versions it ran against and, per verified type, the row that matched
(written in posenc.hf's registry, or found by the walk: a convention and a sub-config) and the
transformers version it was verified on. The atlas page (docs/*/atlas.md, drawn by
hooks/atlas.py) is built from this file; the package keeps the same verdicts in
src/posenc/hf/verified.json, from which posenc.hf.MODELS takes the walk's rows and
``explain --list`` its list: one run, one source for both.

The file is stable: keys sorted, errors rounded to three significant digits and memory
addresses removed from the reasons, so a rerun on the same versions changes only the date.

    .venv/bin/python tools/atlas_record.py [--out PATH]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "assets" / "atlas.json"
# the package's copy of the walk's outcome: the rows the walk found and what explain --list shows
PACKAGE = ROOT / "src" / "posenc" / "hf" / "verified.json"
STATUSES = ("verified", "mismatch", "unverified")
# walk reasons of types that carry no token positions of their own: a sub-config no rotary
# embedding is built from, a vision encoder (2-D patch grids), a diffusion timestep table, a
# text model whose attention takes no positions. The rest are the position-bearing types.
NOT_POSITION_BEARING = (
    "no rotary embedding takes this config",
    "vision encoder",
    "timestep embedding",
    "no positions",
)


def _stable_reason(reason: str) -> str:
    """``reason`` without what changes from run to run (object addresses)."""
    return re.sub(r"0x[0-9a-fA-F]+", "0x…", reason)


def _stable_error(error: float | None) -> float | None:
    return None if error is None else float(f"{error:.3g}")


def record() -> dict[str, Any]:
    """Run the walk and return the record (a JSON-ready dict)."""
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    sys.path.insert(0, str(ROOT / "tests"))
    try:
        import hf_walk_fixed
    finally:
        sys.path.remove(str(ROOT / "tests"))
    import torch
    import transformers
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES

    import hf_walk

    outcomes = hf_walk_fixed.walk_all()
    types = {}
    for o in outcomes:
        if o.status not in STATUSES:
            raise ValueError(
                f"walk: status of {o.model_type} must be one of {STATUSES}, got {o.status!r}"
            )
        row = "registry" if hf_walk.written(o.model_type) else "walk"
        types[o.model_type] = {
            "status": o.status,
            "reason": _stable_reason(o.reason),
            "convention": o.convention,
            "layer_kinds": list(o.layer_kinds),
            "error": _stable_error(o.error),
            "module": o.module,
            "row": row,
            "sub_config": o.sub_config if row == "walk" else None,
            "verified_on": transformers.__version__ if o.status == "verified" else None,
        }
    summary = {s: sum(t["status"] == s for t in types.values()) for s in STATUSES}
    summary["walked"] = len(types)
    summary["total_model_types"] = len(CONFIG_MAPPING_NAMES)
    bearing = [t for t in types.values() if not t["reason"].startswith(NOT_POSITION_BEARING)]
    summary["position_bearing"] = len(bearing)
    summary["verified_percent"] = round(
        100 * sum(t["status"] == "verified" for t in bearing) / max(1, len(bearing)), 1
    )
    return {
        "transformers": transformers.__version__,
        "torch": torch.__version__,
        "date": datetime.date.today().isoformat(),
        "summary": summary,
        "types": types,
    }


def package_record(data: dict[str, Any]) -> dict[str, Any]:
    """What the package keeps of the record (src/posenc/hf/verified.json): per model type its
    status, the row the walk found (a convention and a sub-config) or the reason it is not
    verified, and the transformers version it was verified on."""
    types = {}
    for mt, t in data["types"].items():
        if t["status"] == "verified":
            types[mt] = {
                "status": "verified",
                "convention": t["convention"],
                "row": t["row"],
                "verified_on": t["verified_on"],
            }
            if t["row"] == "walk" and t.get("sub_config"):
                types[mt]["sub_config"] = t["sub_config"]
        else:
            types[mt] = {"status": t["status"], "reason": t["reason"]}
    return {"transformers": data["transformers"], "types": types}


def dumps(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT, help=f"where to write (default {OUT})")
    parser.add_argument(
        "--package-out", type=Path, default=PACKAGE, help=f"the package's copy (default {PACKAGE})"
    )
    args = parser.parse_args(argv)
    data = record()
    args.out.write_text(dumps(data), encoding="utf-8")
    args.package_out.write_text(dumps(package_record(data)), encoding="utf-8")
    s = data["summary"]
    print(
        f"{args.out}: {s['verified']} verified, {s['mismatch']} mismatch, "
        f"{s['unverified']} unverified of {s['walked']} walked "
        f"({s['total_model_types']} model types in transformers {data['transformers']}); "
        f"{s['verified_percent']}% of {s['position_bearing']} position-bearing types verified"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

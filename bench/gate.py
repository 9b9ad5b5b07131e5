"""The regression gate of ``make bench``: every ratio of a new run against the committed record.

A ratio (posenc over the fastest peer, or a module over its bare operation) has a noise measured
in the run itself: half the interquartile range of its per-round ratios (bench.timing). A ratio
*moved* when it differs from the committed one by more than twice the combined noise of the two
runs (the old record's noise where it has one), ``2 * sqrt(n_old**2 + n_new**2)``. The committed
record is ``git show HEAD:docs/assets/bench.json`` (the file itself outside a git checkout), read
before the run rewrites the file. Cases run at other sizes (``--quick``) are not compared.
"""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def committed(path: Path) -> dict[str, Any] | None:
    """The record at ``path`` as committed in git (HEAD), else as on disk, else None."""
    path = Path(path).resolve()
    try:
        rel = path.relative_to(ROOT).as_posix()
        proc = subprocess.run(
            ["git", "show", f"HEAD:{rel}"], cwd=ROOT, capture_output=True, text=True, check=True
        )
        return json.loads(proc.stdout)
    except (ValueError, OSError, subprocess.CalledProcessError, json.JSONDecodeError):
        pass
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None


def ratios(record: dict[str, Any]) -> dict[tuple[str, str], tuple[float, float | None, str]]:
    """``(case id, row name) -> (ratio, noise or None, what it is a ratio to)`` of a record."""
    out = {}
    for case in record.get("cases", []):
        for row in case["rows"]:
            if row["kind"] != "posenc":
                continue
            key = (case["id"], row["name"])
            if row.get("ratio_to_bare") is not None:
                out[key] = (row["ratio_to_bare"], row.get("ratio_to_bare_noise"), "bare op")
            elif row.get("ratio_to_fastest_peer") is not None:
                out[key] = (row["ratio_to_fastest_peer"], row.get("ratio_noise"), "fastest peer")
    return out


def compare(old: dict[str, Any] | None, new: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per ratio present in both records (same case at the same sizes)."""
    if not old:
        return []
    titles = {c["id"]: c["title"] for c in old.get("cases", [])}
    before = ratios(old)
    rows = []
    for key, (value, noise, against) in ratios(new).items():
        if key not in before or titles.get(key[0]) != _title(new, key[0]):
            continue
        was, was_noise, _ = before[key]
        spread = math.hypot(noise or 0.0, was_noise or 0.0)
        threshold = 2 * spread
        delta = value - was
        if spread == 0.0:
            verdict = "no noise measured"
        elif abs(delta) <= threshold:
            verdict = "within noise"
        else:
            verdict = "SLOWER" if delta > 0 else "faster"
        rows.append(
            {
                "case": key[0],
                "name": key[1],
                "against": against,
                "was": was,
                "now": value,
                "delta": delta,
                "threshold": threshold,
                "verdict": verdict,
            }
        )
    return rows


def _title(record: dict[str, Any], case_id: str) -> str | None:
    return next((c["title"] for c in record["cases"] if c["id"] == case_id), None)


def report(rows: list[dict[str, Any]], old: dict[str, Any] | None) -> bool:
    """Print the comparison; True when no ratio got slower by more than its noise."""
    if not rows:
        print("\n## regression gate: no committed record at these sizes to compare with")
        return True
    print(f"\n## regression gate: against the committed record of {old['date'][:10]}")
    print(f"   {'case / contender':62s} {'was':>6s} {'now':>6s} {'change':>7s} {'noise x2':>8s}")
    for r in rows:
        label = f"{r['case']}: {r['name']} / {r['against']}"
        print(
            f"   {label[:62]:62s} {r['was']:6.2f} {r['now']:6.2f} {r['delta']:+7.2f} "
            f"{r['threshold']:8.2f}  {r['verdict']}"
        )
    moved = [r for r in rows if r["verdict"] in ("SLOWER", "faster")]
    slower = [r for r in moved if r["verdict"] == "SLOWER"]
    if moved:
        names = ", ".join(f"{r['case']}: {r['name']}" for r in moved)
        print(f"   moved by more than the noise: {names}")
    else:
        print("   every ratio within the noise of the two runs")
    return not slower

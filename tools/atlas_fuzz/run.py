"""The fuzzer's loop: per type, N generated configs, their verdicts, the disagreements shrunk
and written to tests/hf_corpus/fuzz/found/, a JSON report and a summary table."""

from __future__ import annotations

import argparse
import json
import random
import time
import zlib
from collections import Counter
from pathlib import Path
from typing import Any

from . import bases, compare, generate

FOUND = bases.ROOT / "tests" / "hf_corpus" / "fuzz" / "found"
CATEGORIES = ("agree", "shared_refusal", "disagree", "harness")


def type_seed(seed: int, model_type: str) -> int:
    """One stream per (seed, type): a type's configs do not depend on which others run."""
    return zlib.crc32(f"{seed}:{model_type}".encode())


def fuzz_type(
    model_type: str,
    base: dict[str, Any],
    per_type: int,
    seed: int,
    shrink: bool = True,
    max_shrink: int = 2,
) -> dict[str, Any]:
    """The base config and ``per_type`` generated ones of one type: counts, and the
    disagreements (one per family, shrunk)."""
    t0 = time.time()
    rng = random.Random(type_seed(seed, model_type))
    row: dict[str, Any] = {"configs": 0, **dict.fromkeys(CATEGORIES, 0), "findings": []}
    try:
        space = generate.Space(model_type, base)
    except Exception as exc:
        row["error"] = f"no config space: {exc!r}"[:200]
        return row
    row["keys"] = space.keys
    families: dict[str, dict[str, Any]] = {}
    for i in range(per_type + 1):
        if i == 0:
            d, what = base, ["base"]
        else:
            d, what = space.mutate(rng)
        try:
            v = compare.verdict(d)
        except Exception as exc:  # the comparison itself broke: reported, never agreement
            v = compare.Verdict("harness", "?", "?", f"harness: {exc!r}"[:240])
        row["configs"] += 1
        row[v.category] += 1
        if v.category in ("disagree", "harness") and v.family() not in families:
            families[v.family()] = {"config": d, "verdict": v, "changes": what}
    shrunk = 0
    for fam, f in families.items():
        d, v, spent = f["config"], f["verdict"], 0
        if shrink and f["verdict"].category == "disagree" and shrunk < max_shrink:
            shrunk += 1
            d, v, spent = compare.shrink(d, v, space.path)
        row["findings"].append(
            {
                "family": fam,
                "changes": f["changes"],
                "config": d,
                "verdict": v.to_dict(),
                "shrink_checks": spent,
            }  # fmt: skip
        )
    row["seconds"] = round(time.time() - t0, 2)
    return row


def write_findings(model_type: str, row: dict[str, Any], seed: int, per_type: int) -> list[str]:
    """One JSON per disagreement family: tests/hf_corpus/fuzz/found/<type>-<n>.json."""
    import transformers

    FOUND.mkdir(parents=True, exist_ok=True)
    paths = []
    n = 0
    for f in row["findings"]:
        if f["verdict"]["category"] != "disagree":
            continue
        n += 1
        path = FOUND / f"{model_type}-{n}.json"
        doc = {
            "model_type": model_type,
            "config": f["config"],
            "verdict": f["verdict"],
            "found_by": f"python -m tools.atlas_fuzz --types {model_type} --seed {seed} "
            f"--per-type {per_type}",
            "changes_from_base": f["changes"],
            "transformers": transformers.__version__,
        }
        path.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        paths.append(str(path.relative_to(bases.ROOT)))
    return paths


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.atlas_fuzz", description=__doc__)
    ap.add_argument("--types", nargs="*", help="model types (default: every one with a base)")
    ap.add_argument("--per-type", type=int, default=5, help="generated configs per type")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, help="the JSON report")
    ap.add_argument("--no-shrink", action="store_true")
    ap.add_argument("--kinds", choices=("positions", "tables"),
                    help="positions: the walks' types; tables: learned tables, no position code")  # fmt: skip
    ap.add_argument("--write-findings", action="store_true",
                    help="write each minimal disagreement to tests/hf_corpus/fuzz/found/")  # fmt: skip
    ap.add_argument("--refresh-bases", action="store_true", help="rerun the walks for the bases")
    args = ap.parse_args(argv)
    bases.tests_on_path()
    bases.quiet()
    import torch
    from transformers import GenerationMixin  # imported whole before any timeout can cut it

    torch.set_num_threads(1)
    _ = GenerationMixin
    t0 = time.time()
    data = bases.load(refresh=args.refresh_bases)
    types = args.types or sorted(data["bases"])
    if args.kinds:
        table = ("learned", "no position code")
        types = [
            t
            for t in types
            if str(data["kinds"].get(t, "")).startswith(table) == (args.kinds == "tables")
        ]
    report: dict[str, Any] = {
        "transformers": data["transformers"],
        "seed": args.seed,
        "per_type": args.per_type,
        "types": {},
        "uncovered": {t: r for t, r in data["uncovered"].items() if not args.types or t in types},
    }
    for mt in types:
        if mt not in data["bases"]:
            report["uncovered"][mt] = data["uncovered"].get(mt, "no base config")
            continue
        row = fuzz_type(mt, data["bases"][mt], args.per_type, args.seed, not args.no_shrink)
        row["kind"] = data["kinds"].get(mt)
        if args.write_findings:
            row["files"] = write_findings(mt, row, args.seed, args.per_type)
        report["types"][mt] = row
        print(
            f"{mt:34s} {row['configs']:3d} agree {row['agree']:3d} refused {row['shared_refusal']:3d}"
            f" disagree {row['disagree']:3d} harness {row['harness']:3d} {row.get('seconds', 0):6.1f}s "
            + "; ".join(f["family"][:70] for f in row["findings"])[:200],
            flush=True,
        )
    total = Counter()
    for row in report["types"].values():
        for c in (*CATEGORIES, "configs"):
            total[c] += row.get(c, 0)
    report["totals"] = {**total, "types": len(report["types"]), "seconds": round(time.time() - t0)}
    print(json.dumps(report["totals"]))
    print(f"uncovered: {len(report['uncovered'])}")
    if args.out:
        args.out.write_text(json.dumps(report, indent=1, sort_keys=True, default=str) + "\n")
    return 0

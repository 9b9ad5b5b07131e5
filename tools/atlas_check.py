"""Re-verify the atlas against another transformers release, in a throwaway venv (``make atlas-check``).

Nothing of the repository changes: a temporary venv gets the requested transformers (the newest
on PyPI by default) on top of this checkout's own environment (its torch and everything else,
seen through a ``.pth`` file), a temporary copy of ``src``, ``tests`` and ``tools`` regenerates
``classes.json`` (tools/hf_classes.py) and reruns the walk (tools/atlas_record.py) there, and
this tool prints what changed against the committed record:

- model types transformers added or dropped, and types whose status or convention changed;
- for types that stopped being verified, the walk's reason (a renamed keyword argument shows up
  here: ``unexpected keyword argument 'past_key_values_length'``);
- config classes whose facts changed (defaults, aliases, sub-configs, how RoPE keys are read:
  a renamed kwarg or a changed convention of a config class shows up here);
- how long it took.

Exit status 0 when the new release verifies every row the committed record verifies, 1 when a
verified row is lost (the record is stale for that release), 2 when the venv cannot be built.
The suite is not touched: it keeps passing on the pinned transformers. To move the pin: fix
what this reports, pin the new version in requirements/constraints.txt, ``make setup``, ``make
atlas`` (which records on the now installed release), review and commit.

    .venv/bin/python tools/atlas_check.py [--version 5.24.0] [--keep] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RECORD = ROOT / "docs" / "assets" / "atlas.json"
CLASSES = ROOT / "src" / "posenc" / "hf" / "classes.json"
CONSTRAINTS = ROOT / "requirements" / "constraints.txt"


def _run(cmd: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, text=True, capture_output=True, **kwargs)


def build_venv(where: Path, version: str | None) -> tuple[Path, str]:
    """A venv at ``where`` with transformers ``version`` (newest if None) over this
    environment's packages; its python and the transformers version it got."""
    subprocess.run([sys.executable, "-m", "venv", str(where)], check=True)
    py = where / "bin" / "python"
    purelib = _run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"])
    site = Path(purelib.stdout.strip())
    # this checkout's packages (torch, numpy, ...) after the venv's own: a newer transformers
    # and any newer dependency it needs land in the venv and win
    (site / "zz_posenc_base.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    pins = [
        line
        for line in CONSTRAINTS.read_text(encoding="utf-8").splitlines()
        if line.strip().startswith("torch==")
    ]
    constraint = where / "constraints.txt"
    constraint.write_text("\n".join(pins) + "\n")
    spec = "transformers" + (f"=={version}" if version else "")
    got = _run(
        [str(py), "-m", "pip", "install", "--quiet", "--upgrade", "-c", str(constraint), spec],
        env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
    )
    if got.returncode:
        raise RuntimeError(f"pip install {spec} failed:\n{got.stderr[-2000:]}")
    v = _run([str(py), "-c", "import transformers; print(transformers.__version__)"])
    return py, v.stdout.strip()


def rerun(py: Path, work: Path) -> tuple[dict[str, Any], dict[str, Any], str]:
    """Regenerate classes.json and rerun the walk in ``work`` (a copy of src, tests, tools)."""
    for part in ("src", "tests", "tools", "docs/assets"):
        dst = work / part
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(ROOT / part, dst, ignore=shutil.ignore_patterns("__pycache__"))
    env = {
        **os.environ,
        "PYTHONPATH": str(work / "src"),
        "TRANSFORMERS_VERBOSITY": "error",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    log = ""
    for cmd in (["tools/hf_classes.py"], ["tools/atlas_record.py"]):
        done = _run([str(py), *cmd], cwd=work, env=env)
        log += done.stdout + done.stderr[-4000:]
        if done.returncode:
            raise RuntimeError(f"{' '.join(cmd)} failed:\n{done.stderr[-4000:]}")
    classes = json.loads((work / "src/posenc/hf/classes.json").read_text(encoding="utf-8"))
    record = json.loads((work / "docs/assets/atlas.json").read_text(encoding="utf-8"))
    return classes, record, log


def diff(
    old: dict[str, Any], new: dict[str, Any], old_classes: Any, new_classes: Any
) -> dict[str, Any]:
    """What changed between two records and two classes.json."""
    a, b = old["types"], new["types"]
    changed = {
        mt: {
            "was": f"{a[mt]['status']} {a[mt]['convention']}".strip(),
            "now": f"{b[mt]['status']} {b[mt]['convention']}".strip(),
            "reason": b[mt]["reason"],
        }
        for mt in sorted(set(a) & set(b))
        if (a[mt]["status"], a[mt]["convention"]) != (b[mt]["status"], b[mt]["convention"])
    }
    ca, cb = old_classes["classes"], new_classes["classes"]
    classes = {}
    for mt in sorted(set(ca) & set(cb)):
        keys = sorted(k for k in set(ca[mt]) | set(cb[mt]) if ca[mt].get(k) != cb[mt].get(k))
        if keys:
            classes[mt] = {k: {"was": ca[mt].get(k), "now": cb[mt].get(k)} for k in keys}
    return {
        "from": old["transformers"],
        "to": new["transformers"],
        "new_types": {
            mt: f"{b[mt]['status']} {b[mt]['reason']}".strip() for mt in sorted(set(b) - set(a))
        },
        "gone_types": sorted(set(a) - set(b)),
        "changed": changed,
        "lost": sorted(
            mt
            for mt in set(a) & set(b)
            if a[mt]["status"] == "verified" and b[mt]["status"] != "verified"
        ),  # fmt: skip
        "new_classes": sorted(set(cb) - set(ca)),
        "classes_changed": classes,
        "summary": {"old": old["summary"], "new": new["summary"]},
    }


def report(d: dict[str, Any], seconds: float) -> str:
    lines = [
        f"atlas re-verification: transformers {d['from']} (committed record) -> {d['to']}",
        f"  verified {d['summary']['old']['verified']} -> {d['summary']['new']['verified']}, "
        f"mismatch {d['summary']['old']['mismatch']} -> {d['summary']['new']['mismatch']}, "
        f"walked {d['summary']['old']['walked']} -> {d['summary']['new']['walked']}",
        f"  new model types ({len(d['new_types'])}):",
        *(f"    {mt}: {why}" for mt, why in d["new_types"].items()),
        f"  model types gone ({len(d['gone_types'])}): {', '.join(d['gone_types'])}",
        f"  status or convention changed ({len(d['changed'])}):",
        *(
            f"    {mt}: {c['was']} -> {c['now']}"
            + (f"  ({c['reason'][:160]})" if c["reason"] else "")
            for mt, c in d["changed"].items()
        ),
        f"  config classes new: {', '.join(d['new_classes']) or 'none'}",
        f"  config classes whose facts changed ({len(d['classes_changed'])}):",
    ]
    for mt, keys in d["classes_changed"].items():
        for key, v in keys.items():
            lines.append(
                f"    {mt}.{key}: {json.dumps(v['was'])[:120]} -> {json.dumps(v['now'])[:120]}"
            )
    lines.append(f"  verified rows lost: {', '.join(d['lost']) or 'none'}   (took {seconds:.0f} s)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", help="transformers version to check (default: newest)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    parser.add_argument("--json", type=Path, help="also write the diff as JSON here")
    args = parser.parse_args(argv)
    start = time.time()
    tmp = Path(tempfile.mkdtemp(prefix="posenc-atlas-check-"))
    try:
        try:
            py, version = build_venv(tmp / "venv", args.version)
        except (RuntimeError, subprocess.CalledProcessError) as exc:
            print(f"atlas-check: cannot build the venv: {exc}", file=sys.stderr)
            return 2
        classes, record, _ = rerun(py, tmp / "work")
        old = json.loads(RECORD.read_text(encoding="utf-8"))
        old_classes = json.loads(CLASSES.read_text(encoding="utf-8"))
        d = diff(old, record, old_classes, classes)
        d["seconds"] = round(time.time() - start, 1)
        print(report(d, d["seconds"]))
        if args.json:
            args.json.write_text(json.dumps(d, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        return 1 if d["lost"] else 0
    finally:
        if args.keep:
            print(f"kept {tmp}", file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

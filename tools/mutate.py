"""``make mutate``: a small AST mutation run over posenc's core modules (issue 8).

Why not mutmut: mutmut 3 rewrites every function into a trampoline inside a ``mutants/`` copy
and runs its own pytest session; with this package's lazy ``posenc.torch`` import, Sybil page
collection and the ``--device`` option it needs a project-specific setup, and it cannot bound
a run by time. This script needs nothing beyond the test dependencies, and it is pinned by
being in the repository.

For each module it parses the source, makes one mutant per mutable node (an arithmetic or
comparison operator swapped, a boolean operator swapped, a numeric constant moved by one, a
``not`` dropped, ``True``/``False`` swapped), picks ``--max`` of them (evenly spread, the same
ones every run), writes each mutant into a copy of ``src/`` and runs that module's tests on it
(``-x``, first failure ends the run). A mutant is *killed* when the tests fail, *survived*
when they pass, *timeout* when they run past ``--timeout`` (counted as killed, as mutmut
does). Prints every survivor (file:line, the change) and the score.

    python tools/mutate.py                     # every core module, 12 mutants each
    python tools/mutate.py --module alibi --max 40
"""

from __future__ import annotations

import argparse
import ast
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# module -> the tests that should catch its mutants
MODULES = {
    "sinusoidal": ["tests/test_sinusoidal.py", "tests/test_torch_sinusoidal_module.py"],
    "rope": ["tests/test_rope.py", "tests/test_torch_rope.py"],
    "alibi": ["tests/test_alibi.py"],
    "t5": ["tests/test_t5.py"],
    "attention": ["tests/test_attention.py"],
    "positions": ["tests/test_positions.py"],
    "relative": ["tests/test_relative.py"],
    "_array": [
        "tests/test_sinusoidal_hostile.py",
        "tests/test_sinusoidal.py",
        "tests/test_naive.py",
    ],
}

SWAP = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.Div,
    ast.Div: ast.Mult,
    ast.FloorDiv: ast.Div,
    ast.Mod: ast.FloorDiv,
    ast.Pow: ast.Mult,
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.And: ast.Or,
    ast.Or: ast.And,
    ast.BitAnd: ast.BitOr,
    ast.BitOr: ast.BitAnd,
}


def _skip(node, parents) -> bool:
    """Error messages, annotations and decorators are not behaviour."""
    for child, p in zip([node, *parents], parents, strict=False):
        if isinstance(p, (ast.JoinedStr, ast.Raise, ast.AnnAssign, ast.arg)):
            return True
        if isinstance(p, ast.FunctionDef) and (child is p.returns or child in p.decorator_list):
            return True
    return False


def mutants(source: str):
    """Yield ``(lineno, description, mutated_source)`` for every mutable node."""
    tree = ast.parse(source)
    parents: dict[ast.AST, ast.AST] = {}
    for parent in ast.walk(tree):
        for child in ast.iter_child_nodes(parent):
            parents[child] = parent
    sites = []
    for node in ast.walk(tree):
        chain, p = [], parents.get(node)
        while p is not None:
            chain.append(p)
            p = parents.get(p)
        if _skip(node, chain):
            continue
        if isinstance(node, (ast.BinOp, ast.BoolOp)) and type(node.op) in SWAP:
            sites.append((node, "op"))
        elif isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in SWAP:
            sites.append((node, "cmp"))
        elif (
            isinstance(node, ast.Constant)
            and type(node.value) in (int, float)
            and not isinstance(node.value, bool)
        ):
            sites.append((node, "num"))
        elif isinstance(node, ast.Constant) and isinstance(node.value, bool):
            sites.append((node, "bool"))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            sites.append((node, "not"))
    for node, kind in sites:
        before = ast.unparse(node)
        if kind == "op":
            old = node.op
            node.op = SWAP[type(old)]()
            out = (ast.unparse(tree), before, ast.unparse(node))
            node.op = old
        elif kind == "cmp":
            old = node.ops[0]
            node.ops[0] = SWAP[type(old)]()
            out = (ast.unparse(tree), before, ast.unparse(node))
            node.ops[0] = old
        elif kind == "num":
            old = node.value
            node.value = old + 1
            out = (ast.unparse(tree), before, ast.unparse(node))
            node.value = old
        elif kind == "bool":
            node.value = not node.value
            out = (ast.unparse(tree), before, ast.unparse(node))
            node.value = not node.value
        else:  # drop a `not`
            parent = parents[node]
            for field, value in ast.iter_fields(parent):
                if value is node:
                    setattr(parent, field, node.operand)
                    out = (ast.unparse(tree), before, ast.unparse(node.operand))
                    setattr(parent, field, node)
                    break
                if isinstance(value, list) and node in value:
                    i = value.index(node)
                    value[i] = node.operand
                    out = (ast.unparse(tree), before, ast.unparse(node.operand))
                    value[i] = node
                    break
            else:
                continue
        yield node.lineno, f"{out[1]}  ->  {out[2]}", out[0]


def _spread(items, n):
    if n >= len(items):
        return items
    step = len(items) / n
    return [items[int(i * step)] for i in range(n)]


def run_module(name, tests, *, max_mutants, timeout, python, workdir):
    path = ROOT / "src" / "posenc" / f"{name}.py"
    source = path.read_text(encoding="utf-8")
    chosen = _spread(list(mutants(source)), max_mutants)
    target = workdir / "src" / "posenc" / f"{name}.py"
    env = {**os.environ, "PYTHONPATH": str(workdir / "src"), "PYTHONDONTWRITEBYTECODE": "1"}
    cmd = [python, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests]
    target.write_text(ast.unparse(ast.parse(source)), encoding="utf-8")  # the mutants' formatting
    base = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, timeout=timeout * 2)
    if base.returncode != 0:
        target.write_text(source, encoding="utf-8")
        tail = base.stdout.decode(errors="replace").strip().splitlines()[-3:]
        print(
            f"  {name}: its tests fail without any mutant; skipped ({' | '.join(tail)})", flush=True
        )
        return []
    results = []
    for lineno, what, mutated in chosen:
        target.write_text(mutated, encoding="utf-8")
        start = time.monotonic()
        try:
            proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, timeout=timeout)
            status = "survived" if proc.returncode == 0 else "killed"
            if proc.returncode not in (0, 1):
                status = f"killed (exit {proc.returncode})"
        except subprocess.TimeoutExpired:
            status = "timeout"
        results.append((f"{name}.py:{lineno}", what, status, time.monotonic() - start))
        print(f"  {status:9} {name}.py:{lineno}  {what}", flush=True)
    target.write_text(source, encoding="utf-8")
    return results


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--module", action="append", choices=sorted(MODULES), help="default: all")
    parser.add_argument("--max", type=int, default=12, help="mutants per module (default 12)")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per mutant run")
    parser.add_argument(
        "--budget", type=float, default=1800.0, help="stop starting modules after this many seconds"
    )
    args = parser.parse_args(argv)
    names = args.module or list(MODULES)
    start = time.monotonic()
    results = []
    with tempfile.TemporaryDirectory(prefix="posenc-mutate-") as tmp:
        workdir = Path(tmp)
        shutil.copytree(ROOT / "src", workdir / "src", ignore=shutil.ignore_patterns("__pycache__"))
        for name in names:
            if time.monotonic() - start > args.budget:
                print(f"budget of {args.budget:.0f} s spent: {name} and later modules not run")
                break
            print(f"{name}: {' '.join(MODULES[name])}", flush=True)
            results += run_module(
                name,
                MODULES[name],
                max_mutants=args.max,
                timeout=args.timeout,
                python=sys.executable,
                workdir=workdir,
            )
    killed = sum(r[2] != "survived" for r in results)
    survivors = [r for r in results if r[2] == "survived"]
    print("\nsurvivors:" if survivors else "\nno survivors")
    for where, what, _, _ in survivors:
        print(f"  {where}  {what}")
    score = 100.0 * killed / len(results) if results else 0.0
    print(
        f"\nmutation score: {killed}/{len(results)} killed ({score:.0f}%) in {time.monotonic() - start:.0f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Compare two builds of the site file by file, ignoring only the ``generator`` meta tag.

Used when the build moved from MkDocs 1.6.1 to ProperDocs 1.6.7 (issue 19): build the same
commit with each (``mkdocs build -d A``, ``properdocs build -f mkdocs.yml -d B``) and run
``python tools/site_diff.py A B``. It prints each file that differs beyond that tag (or exists in
one build only) and exits 1 if there is any.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

GENERATOR = re.compile(rb'\s*<meta name="generator" content="[^"]*">')


def differences(a: Path, b: Path) -> tuple[list[str], int]:
    """Files of ``a`` and ``b`` that differ beyond the generator tag; how many had the tag differ."""
    names = {p.relative_to(a) for p in a.rglob("*") if p.is_file()}
    names |= {p.relative_to(b) for p in b.rglob("*") if p.is_file()}
    differ, generator_only = [], 0
    for name in sorted(names):
        left, right = a / name, b / name
        if not (left.is_file() and right.is_file()):
            differ.append(f"{name} (only in {a if left.is_file() else b})")
            continue
        x, y = left.read_bytes(), right.read_bytes()
        if x == y:
            continue
        if GENERATOR.sub(b"", x) == GENERATOR.sub(b"", y):
            generator_only += 1
        else:
            differ.append(str(name))
    return differ, generator_only


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__)
        return 2
    differ, generator_only = differences(Path(argv[0]), Path(argv[1]))
    print(f"{generator_only} files differ in the generator tag only")
    for name in differ:
        print(f"differs: {name}")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

"""Reading the Markdown pages as structure: headings with their anchors, fenced code blocks.

Used by test_site.py to hold each English page and its Chinese twin to the same outline, the
same anchors and the same include lines of docs_src/ code.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent


def load_hook(name: str) -> ModuleType:
    """hooks/<name>.py as a module, loaded from its file (the hooks are not a package)."""
    spec = importlib.util.spec_from_file_location(
        f"posenc_hook_{name}", ROOT / "hooks" / f"{name}.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def import_hook(name: str) -> ModuleType:
    """hooks/<name>.py imported as the build imports it: hooks/ is on sys.path while it is
    imported (so its imports of neighbouring hooks resolve), and every call gets the same module
    (unlike :func:`load_hook`, a private copy loaded from the file)."""
    sys.path.insert(0, str(ROOT / "hooks"))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(ROOT / "hooks"))


# The pages' fenced blocks are read as the build reads them (hooks/notebooks.py, which imports
# only the standard library and its neighbour hooks/notebook_prose.py).
fenced = import_hook("notebooks").fenced

DOCS = ROOT / "docs"
LANGS = ("en", "zh")

HEADING = re.compile(
    r"^(?P<level>#{1,6})\s+(?P<title>.*?)\s*(?:\{\s*#(?P<anchor>[^}\s]+)\s*\})?\s*$"
)


def pages(lang: str) -> list[str]:
    return sorted(p.relative_to(DOCS / lang).as_posix() for p in (DOCS / lang).rglob("*.md"))


def api_pages(lang: str = "en") -> list[str]:
    """The API reference: its overview (api.md) and its sub-pages (api-*.md)."""
    return [p for p in pages(lang) if p == "api.md" or p.startswith("api-")]


def parse(text: str):
    """Return (headings, code_blocks): headings as (level, anchor or None, title); code blocks
    as (info string, dedented body) in page order. Headings inside code blocks are ignored."""
    headings, blocks = [], []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        block = fenced(lines, i)
        if block is not None:
            _, info, body, i = block
            blocks.append((info, "\n".join(body)))
            continue
        h = HEADING.match(lines[i])
        if h:
            headings.append((len(h.group("level")), h.group("anchor"), h.group("title")))
        i += 1
    return headings, blocks

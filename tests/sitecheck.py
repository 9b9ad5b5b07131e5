"""Reading the Markdown pages as structure: headings with their anchors, fenced code blocks.

Used by test_site.py to hold each English page and its Chinese twin to the same outline, the
same anchors and byte-identical code blocks.
"""

from __future__ import annotations

import importlib.util
import re
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


DOCS = ROOT / "docs"
LANGS = ("en", "zh")

FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>[^\n`]*)$")
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
        m = FENCE.match(lines[i])
        if m:
            indent, fence, info = m.group("indent"), m.group("fence"), m.group("info").strip()
            body = []
            i += 1
            while i < len(lines):
                close = FENCE.match(lines[i])
                if (
                    close
                    and close.group("fence")[0] == fence[0]
                    and len(close.group("fence")) >= len(fence)
                    and not close.group("info").strip()
                ):
                    break
                line = lines[i]
                body.append(line[len(indent) :] if line.startswith(indent) else line.lstrip())
                i += 1
            blocks.append((info, "\n".join(body)))
        else:
            h = HEADING.match(lines[i])
            if h:
                headings.append((len(h.group("level")), h.group("anchor"), h.group("title")))
        i += 1
    return headings, blocks

"""MkDocs hook: every page with code can be downloaded as a notebook (.ipynb) and a script (.py).

Both files are written at build time from the page's own ```python blocks, the same blocks the
test suite runs as doctests, so what a reader downloads is what was checked:

- one code cell per block (in the script: one ``# %%`` cell per block, the percent format that
  Jupyter, VS Code and jupytext open as cells);
- doctest prompts (``>>>``, ``...``) and expected output are dropped, so a cell is plain code;
  an example whose expected output is a traceback is kept inside ``try``/``except``, so the
  script runs on to the end as the page's checks do;
- blocks that markdown-exec runs to draw figures (``exec="on"``) are build machinery, not
  checks, and are left out.

The files sit next to the page (``rope/rope.ipynb``, ``zh/rope/rope.py``); hooks/page_meta.py
links them. tests/test_site.py runs every generated script.
"""

from __future__ import annotations

import builtins
import html
import json
import re
from pathlib import Path

FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>[^\n`]*)$")
DIRECTIVE = re.compile(r"\s*#\s*doctest:.*$")


def code_blocks(markdown: str) -> list[str]:
    """Bodies (dedented) of the ```python blocks of a page that are not markdown-exec blocks."""
    blocks, lines, i = [], markdown.splitlines(), 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
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
        i += 1
        words = info.split()
        if words and words[0] in ("python", "py", "pycon") and "exec=" not in info:
            blocks.append("\n".join(body).strip("\n"))
    return blocks


def _is_prompt(line: str, prompt: str) -> bool:
    return line == prompt or line.startswith(prompt + " ")


def _expected_exception(output: list[str]) -> str | None:
    if not output or not output[0].startswith("Traceback (most recent call last)"):
        return None
    name = output[-1].split(":", 1)[0].strip()
    return name if isinstance(getattr(builtins, name, None), type) else "Exception"


def plain_code(block: str, keep_errors: bool = True) -> str:
    """A doctest block as plain code: prompts and expected output dropped. Other code as is.

    With ``keep_errors`` an example that the page shows failing is wrapped in ``try``/``except``
    (for a script that must run to the end); without it, it is kept as typed (for the clipboard).
    """
    lines = block.splitlines()
    if not any(_is_prompt(line, ">>>") for line in lines):
        return block
    out: list[str] = []
    i = 0
    while i < len(lines):
        if not _is_prompt(lines[i], ">>>"):
            i += 1
            continue
        source = [lines[i][4:]]
        i += 1
        while i < len(lines) and _is_prompt(lines[i], "..."):
            source.append(lines[i][4:])
            i += 1
        expected = []
        while i < len(lines) and lines[i].strip() and not _is_prompt(lines[i], ">>>"):
            expected.append(lines[i])
            i += 1
        source = [DIRECTIVE.sub("", s) for s in source]
        while source and not source[-1].strip():
            source.pop()
        error = _expected_exception(expected)
        if error and keep_errors:
            out.append("try:")
            out.extend("    " + s if s.strip() else "" for s in source)
            out.append(f"except {error} as error:  # the page shows this error on purpose")
            out.append("    print(type(error).__name__, error)")
        else:
            out.extend(source)
    return "\n".join(out)


def script(title: str, url: str, cells: list[str]) -> str:
    head = f"# {title}\n# {url}\n# Generated from the page's code blocks; run it top to bottom.\n"
    return head + "".join(f"\n# %%\n{cell}\n" for cell in cells)


def notebook(title: str, url: str, lang: str, cells: list[str]) -> dict:
    def code(src: str) -> dict:
        return {
            "cell_type": "code",
            "execution_count": None,
            "metadata": {},
            "outputs": [],
            "source": src.splitlines(keepends=True),
        }

    intro = {
        "cell_type": "markdown",
        "metadata": {},
        "source": [f"# {title}\n", "\n", f"<{url}>\n"],
    }
    return {
        "cells": [intro, *(code(c) for c in cells)],
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
            "posenc": {"page": url, "language": lang},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def on_page_markdown(markdown, page, **kwargs):
    cells = [plain_code(b) for b in code_blocks(markdown)]
    cells = [c for c in cells if c.strip()]
    if cells:
        stem = Path(page.file.src_uri).stem
        page.meta["posenc_downloads"] = {"stem": stem, "cells": cells}
    return markdown


HIGHLIGHT = re.compile(
    r'<div class="(?:language-(?:python|py|pycon) )?highlight">(<pre.*?</pre>)</div>', re.S
)
TAG = re.compile(r"<[^>]+>")


def _with_copy_text(match: re.Match) -> str:
    """Give a doctest block a ``data-copy`` attribute: Material's copy button copies that text
    (the code alone) instead of what the block shows (prompts and output)."""
    shown = html.unescape(TAG.sub("", match.group(1)))
    if not any(_is_prompt(line, ">>>") for line in shown.splitlines()):
        return match.group(0)
    code = html.escape(plain_code(shown, keep_errors=False), quote=True).replace("\n", "&#10;")
    return match.group(0).replace('highlight">', f'highlight" data-copy="{code}">', 1)


def on_page_content(content, page, **kwargs):
    if "&gt;&gt;&gt;" not in content:
        return content
    return HIGHLIGHT.sub(_with_copy_text, content)


def on_post_page(output, page, config, **kwargs):
    info = page.meta.get("posenc_downloads")
    if not info:
        return output
    lang = "zh" if page.file.src_uri.startswith("zh/") else "en"
    title = re.sub(r"<[^>]+>", "", page.title or config.site_name)
    url = page.canonical_url or page.url
    folder = Path(config.site_dir) / Path(page.file.dest_uri).parent
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{info['stem']}.py").write_text(script(title, url, info["cells"]), encoding="utf-8")
    nb = notebook(title, url, lang, info["cells"])
    (folder / f"{info['stem']}.ipynb").write_text(
        json.dumps(nb, ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
    )
    return output

"""MkDocs hook: every page with code can be downloaded as a notebook (.ipynb) and a script (.py).

Both files are written at build time from the page itself, in the page's language, so what a
reader downloads is what the page says and what was checked:

- the page's prose as Markdown cells, one per section: headings (without their ``{ #anchor }``),
  paragraphs, math, lists, notes and tab titles; links point to the site (``rope.md#pairings``
  becomes the page's address there); where the page shows a figure drawn at build time, a line
  says so and links to it (the drawing code is the site's, not the reader's);
- the page's ```python blocks, the same blocks the test suite runs as doctests, as code cells. A
  doctest block is cut after each example that shows a result, so each cell shows its own: the
  cell's output is the result the page shows (doctest prompts dropped, ``<BLANKLINE>`` as an
  empty line), as Jupyter shows it (the value of the last expression, or printed text). An
  example whose result is an error is kept inside ``try``/``except`` and prints the error's last
  line, so the notebook and the script run on to the end as the page's checks do;
- the script holds the same cells in the percent format that Jupyter, VS Code and jupytext open
  as cells (``# %%``; the prose as ``# %% [markdown]`` comments), and prints what the page shows:
  an expression whose value the page shows is printed with ``print(repr(...))``, as doctest
  shows it.

The files sit next to the page, named by language (``rope/rope.ipynb``,
``zh/rope/rope.zh.ipynb``); hooks/page_meta.py links them. tests/test_site.py holds the cells to
the page (its code, its results) and runs every script, comparing what each cell prints with
the result the page shows.
"""

from __future__ import annotations

import ast
import builtins
import html
import json
import re
from pathlib import Path
from typing import Any

FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>[^\n`]*)$")
DIRECTIVE = re.compile(r"\s*#\s*doctest:.*$")
PYTHON = ("python", "py", "pycon")

TEXT = {
    "en": {
        "figure": "*(The page shows a figure here, drawn from its code when the site is built: "
        "[see it on the page]({url}).)*",
        "generated": "*(The page shows a table here, made from the record of the last "
        "`make bench` run when the site is built: [see it on the page]({url}).)*",
        "source": "From the page <{url}>. Run the cells from the top; the outputs shown are the "
        "ones the page shows (its checks compare them).",
        "script": "Generated from the page's text and code; run it top to bottom.",
    },
    "zh": {
        "figure": "*（网页在此处有一幅插图，由页面代码在构建网站时绘制：[在网页上查看]({url})。）*",
        "generated": "*（网页在此处有一张表，在构建网站时由最近一次 `make bench` 的记录生成："
        "[在网页上查看]({url})。）*",
        "source": "来自网页 <{url}>。请从上到下运行各单元；所示输出即网页上的输出（页面的检验会比对它们）。",
        "script": "由网页的正文与代码生成；请从上到下运行。",
    },
}


# --- the page's code blocks ----------------------------------------------------------------


def _blocks(markdown: str) -> list[tuple[str, str, str, str]]:
    """The page as pieces: ("text", lines) between fences, and ("code", info, body) for each
    fenced block (bodies dedented). Returned as (kind, info, body, indent)."""
    pieces: list[tuple[str, str, str, str]] = []
    lines, i, text = markdown.splitlines(), 0, []
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            text.append(lines[i])
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
        if text:
            pieces.append(("text", "", "\n".join(text), ""))
            text = []
        pieces.append(("code", info, "\n".join(body).strip("\n"), indent))
    if text:
        pieces.append(("text", "", "\n".join(text), ""))
    return pieces


def _is_python(info: str) -> bool:
    words = info.split()
    return bool(words) and words[0] in PYTHON and "exec=" not in info


def code_blocks(markdown: str) -> list[str]:
    """Bodies (dedented) of the ```python blocks of a page that are not markdown-exec blocks."""
    return [
        body for kind, info, body, _ in _blocks(markdown) if kind == "code" and _is_python(info)
    ]


def _is_prompt(line: str, prompt: str) -> bool:
    return line == prompt or line.startswith(prompt + " ")


def _expected_exception(output: list[str]) -> str | None:
    if not output or not output[0].startswith("Traceback (most recent call last)"):
        return None
    name = output[-1].split(":", 1)[0].strip()
    return name if isinstance(getattr(builtins, name, None), type) else "Exception"


def examples(block: str) -> list[tuple[list[str], list[str]]]:
    """A doctest block as (source lines, expected output lines) per example."""
    lines = block.splitlines()
    out = []
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
        out.append((source, expected))
    return out


def _caught(source: list[str], error: str) -> list[str]:
    return [
        "try:",
        *("    " + s if s.strip() else "" for s in source),
        f"except {error} as error:  # the page shows this error on purpose",
        '    print(f"{type(error).__name__}: {error}")',
    ]


def plain_code(block: str, keep_errors: bool = True) -> str:
    """A doctest block as plain code: prompts and expected output dropped. Other code as is.

    With ``keep_errors`` an example that the page shows failing is wrapped in ``try``/``except``
    (for a script that must run to the end); without it, it is kept as typed (for the clipboard).
    """
    if not any(_is_prompt(line, ">>>") for line in block.splitlines()):
        return block
    out: list[str] = []
    for source, expected in examples(block):
        error = _expected_exception(expected)
        out.extend(_caught(source, error) if error and keep_errors else source)
    return "\n".join(out)


def _shown(expected: list[str]) -> str:
    """What the page shows for an example: its expected output (an error: its last line)."""
    if _expected_exception(expected):
        return expected[-1] + "\n"
    return "".join(("" if line == "<BLANKLINE>" else line) + "\n" for line in expected)


def _printed(source: list[str]) -> list[str]:
    """``source`` with its last expression printed as doctest shows it (``print(repr(...))``);
    as it is when it ends in a statement or a call to ``print``."""
    text = "\n".join(source)
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return source
    last = tree.body[-1] if tree.body else None
    if not isinstance(last, ast.Expr):
        return source
    value = last.value
    if (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id == "print"
    ):
        return source
    starts = [0]
    for line in source:
        starts.append(starts[-1] + len(line) + 1)
    begin = starts[value.lineno - 1] + value.col_offset
    end = starts[value.end_lineno - 1] + value.end_col_offset  # type: ignore[operator]
    expr = text[begin:end]
    if isinstance(value, ast.Tuple) and not expr.startswith("("):  # a, b: one value, a tuple
        expr = f"({expr})"
    return (text[:begin] + "print(repr(" + expr + "))" + text[end:]).split("\n")


def code_cells(block: str) -> list[dict[str, Any]]:
    """A ```python block as cells: ``code`` (for the notebook), ``script`` (prints what the page
    shows) and ``output`` (what the page shows, "" for none) with its ``kind`` ("result": the
    value of the last expression; "stream": printed text)."""
    if not any(_is_prompt(line, ">>>") for line in block.splitlines()):
        return [{"code": block, "script": block, "output": "", "kind": ""}] if block.strip() else []
    cells: list[dict[str, Any]] = []
    code: list[str] = []
    script: list[str] = []
    for source, expected in examples(block):
        error = _expected_exception(expected)
        if error:
            code += _caught(source, error)
            script += _caught(source, error)
        else:
            code += source
            script += _printed(source) if expected else source
        if expected:
            kind = "stream" if error or _printed(source) == source else "result"
            cells.append(
                {
                    "code": "\n".join(code),
                    "script": "\n".join(script),
                    "output": _shown(expected),
                    "kind": kind,
                }
            )
            code, script = [], []
    if any(line.strip() for line in code):
        cells.append(
            {"code": "\n".join(code), "script": "\n".join(script), "output": "", "kind": ""}
        )
    return cells


# --- the page's prose ------------------------------------------------------------------------

ANCHOR = re.compile(r"\s*\{\s*#[^}]*\}\s*$")
ATTRS = re.compile(r"(?<=[)\]])\{\s*[.#:][^}]*\}")
LINK = re.compile(r"(?<=\]\()(?P<target>[^)\s]+)(?=[)\s])")
COMMENT = re.compile(r"<!--.*?-->", re.S)
CONTAINER = re.compile(r"^(?P<indent> *)(?P<kind>!!!|\?\?\?\+?|===)\s*(?P<rest>.*)$")


def _url(target: str, page_url: str, site: str, lang: str) -> str:
    """A page's link as an address on the site (the notebook lives outside it)."""
    if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("//"):
        return target
    if target.startswith("#"):
        return page_url + target
    path, _, hash_ = target.partition("#")
    prefix = "zh/" if lang == "zh" else ""
    if path.endswith(".md"):
        stem = path[:-3]
        path = "" if stem == "index" else f"{stem}/"
        path = prefix + path
    else:  # an asset, relative to the page's folder
        path = re.sub(r"^(\.\./)+", "", path)
    return site + path + (f"#{hash_}" if hash_ else "")


def prose(text: str, page_url: str, site: str, lang: str) -> str:
    """The Markdown of a piece of page text as Jupyter reads it: containers (notes, tabs)
    opened up, anchors and attribute lists dropped, links made absolute."""
    out: list[str] = []
    inside = quote = False  # in a tab or note (its lines are indented) / in a note
    for line in COMMENT.sub("", text).splitlines():
        m = CONTAINER.match(line)
        if m and not m["indent"]:
            title = re.findall(r'"([^"]*)"', m["rest"])
            if m["kind"] == "===":
                out.append(f"**{title[0] if title else m['rest']}**")
                quote = False
            else:
                kind = m["rest"].split()[0] if m["rest"].split() else "note"
                out.append(f"> **{title[0] if title else kind.capitalize()}**")
                quote = True
            inside = True
            continue
        if inside and line.startswith("    "):
            line = ("> " if quote else "") + line[4:]
        elif line.strip():
            inside = quote = False
        elif quote:
            line = ">"
        if line.lstrip("> ").startswith("#"):
            line = ANCHOR.sub("", line)
        line = ATTRS.sub("", line)
        out.append(LINK.sub(lambda m: _url(m["target"], page_url, site, lang), line))
    return "\n".join(out).strip("\n")


def _sections(text: str) -> list[str]:
    """Markdown cut before each heading, empty pieces dropped."""
    parts, current = [], []
    for line in text.splitlines():
        if re.match(r"#{1,6} ", line) and any(x.strip() for x in current):
            parts.append("\n".join(current).strip("\n"))
            current = []
        current.append(line)
    if any(x.strip() for x in current):
        parts.append("\n".join(current).strip("\n"))
    return parts


def page_cells(markdown: str, lang: str, page_url: str, site: str) -> list[dict[str, Any]]:
    """The page as notebook cells, in order: {"markdown": text} or a code cell of code_cells."""
    cells: list[dict[str, Any]] = []
    text: list[str] = []

    def flush() -> None:
        joined = "\n\n".join(t for t in text if t.strip())
        cells.extend({"markdown": part} for part in _sections(joined))
        text.clear()

    for kind, info, body, _ in _blocks(markdown):
        if kind == "text":
            text.append(prose(body, page_url, site, lang))
        elif _is_python(info):
            flush()
            cells.extend(code_cells(body))
        elif "exec=" in info:  # drawn or computed when the site is built
            what = "figure" if 'html="1"' in info else "generated"
            text.append(TEXT[lang][what].format(url=page_url))
        else:  # a block of text, shell or data: shown as it is
            fence = "```" + (info.split()[0] if info else "")
            text.append(f"{fence}\n{body}\n```")
    flush()
    return cells


# --- the files ---------------------------------------------------------------------------------


def script(title: str, url: str, lang: str, cells: list[dict[str, Any]]) -> str:
    head = f"# {title}\n# {url}\n# {TEXT[lang]['script']}\n"
    parts = []
    for cell in cells:
        if "markdown" in cell:
            comment = "\n".join(("# " + line).rstrip() for line in cell["markdown"].splitlines())
            parts.append(f"\n# %% [markdown]\n{comment}\n")
        else:
            parts.append(f"\n# %%\n{cell['script']}\n")
    return head + "".join(parts)


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def notebook(title: str, url: str, lang: str, cells: list[dict[str, Any]]) -> dict:
    out: list[dict[str, Any]] = [
        {
            "cell_type": "markdown",
            "id": "page",
            "metadata": {},
            "source": _lines(f"# {title}\n\n{TEXT[lang]['source'].format(url=url)}"),
        }
    ]
    count = 0
    for n, cell in enumerate(cells):
        if "markdown" in cell:
            if re.fullmatch(r"# [^\n]*", cell["markdown"].strip()):
                continue  # the title, already in the first cell
            out.append(
                {
                    "cell_type": "markdown",
                    "id": f"md{n}",
                    "metadata": {},
                    "source": _lines(cell["markdown"]),
                }
            )
            continue
        count += 1
        outputs: list[dict[str, Any]] = []
        if cell["output"] and cell["kind"] == "result":
            outputs.append(
                {
                    "output_type": "execute_result",
                    "execution_count": count,
                    "metadata": {},
                    "data": {"text/plain": _lines(cell["output"].rstrip("\n"))},
                }
            )
        elif cell["output"]:
            outputs.append(
                {"output_type": "stream", "name": "stdout", "text": _lines(cell["output"])}
            )
        out.append(
            {
                "cell_type": "code",
                "id": f"code{n}",
                "execution_count": count,
                "metadata": {},
                "outputs": outputs,
                "source": _lines(cell["code"]),
            }
        )
    return {
        "cells": out,
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
            "posenc": {"page": url, "language": lang},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def file_stem(src_uri: str) -> str:
    """The download's name without suffix: ``rope`` for en/rope.md, ``rope.zh`` for zh/rope.md."""
    stem = Path(src_uri).stem
    return f"{stem}.zh" if src_uri.startswith("zh/") else stem


def on_page_markdown(markdown, page, config, **kwargs):
    if not any(c.strip() for c in code_blocks(markdown)):
        return markdown
    lang = "zh" if page.file.src_uri.startswith("zh/") else "en"
    site = config.get("site_url") or "/"
    site = site if site.endswith("/") else site + "/"
    page_url = site + page.url
    page.meta["posenc_downloads"] = {
        "stem": file_stem(page.file.src_uri),
        "cells": page_cells(markdown, lang, page_url, site),
    }
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
    stem = info["stem"]
    (folder / f"{stem}.py").write_text(script(title, url, lang, info["cells"]), encoding="utf-8")
    nb = notebook(title, url, lang, info["cells"])
    (folder / f"{stem}.ipynb").write_text(
        json.dumps(nb, ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
    )
    return output

"""MkDocs hook: every page with code can be downloaded as a notebook (.ipynb) and a script (.py).

Both files are written at build time from the page itself, in the page's language, so what a
reader downloads is what the page says and what the suite checked:

- the page's prose as Markdown cells (hooks/notebook_prose.py), cut at its headings: headings without their
  ``{ #anchor }``, paragraphs, math as TeX, lists, notes and tab titles; links point to the site
  (``rope.md#pairings`` becomes that section's address). Where the page shows something drawn
  or generated when the site is built (a figure, a table read from a record: a markdown-exec
  block, or a ``<!-- name:part -->`` line that a hook fills), a line says so and links to that
  section of the page: that code is the site's, not the reader's;
- the page's ```python blocks, the blocks the suite runs as doctests (Sybil), as code cells. A
  doctest block is cut after each example that shows a result, so each cell shows its own, and
  the cell's output is the result the page shows (prompts dropped, ``<BLANKLINE>`` as an empty
  line): a value as Jupyter shows the value of a cell's last expression, printed text as
  printed text. The outputs are the page's expected output, checked by the suite; they are not
  produced by running the notebook. An example whose result is an error is kept inside
  ``try``/``except`` and prints the error's last line, so "Run all" goes on to the end;
- the script holds the same cells in the percent format (``# %%``; the prose as
  ``# %% [markdown]`` comments), which Jupyter, VS Code and jupytext open as cells, and prints
  what the page shows: an expression whose value the page shows is printed with
  ``print(repr(...))``, the text doctest compares.

The files sit next to the page, named by language (``rope/rope.ipynb``,
``zh/rope/rope.zh.ipynb``) so that both can be kept side by side; hooks/page_meta.py links them.
tests/test_site.py holds each notebook to its page (code, outputs, headings, link back; valid
nbformat 4) and runs every script, comparing what each cell prints with what the page shows.
"""

from __future__ import annotations

import ast
import builtins
import html
import json
import re
from pathlib import Path
from typing import Any

from notebook_prose import COMMENT, GENERATED, PLACEHOLDER, Prose

FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>[^\n`]*)$")
DIRECTIVE = re.compile(r"\s*#\s*doctest:.*$")
PYTHON = ("python", "py", "pycon")

TEXT = {
    "en": {
        "source": "This notebook is the page [{title}]({url}) of posenc, in English: its text, "
        "its code, and under each cell the output the page shows (the site's tests check "
        "them). Run the cells from the top.",
        "script": "Generated from the page's text and code; run it top to bottom: each cell "
        "prints what the page shows.",
    },
    "zh": {
        "source": "本笔记本即 posenc 网站的页面[{title}]({url})（中文版）：页面的正文、代码，"
        "以及每个单元下方页面所示的输出（网站的测试会核对这些输出）。请从上到下运行各单元。",
        "script": "由页面的正文与代码生成；请从上到下运行，每个单元打印的内容即页面所示的输出。",
    },
}


# --- the page's code blocks ------------------------------------------------------------------

# The pages' code is written once, in docs_src/<page>.md, and a page includes each block with a
# line of pymdownx.snippets (mkdocs.yml): ``--8<-- "docs_src/rope.md:pairings"``. The build
# expands those lines after the hooks' on_page_markdown; what reads a page's code here (and in
# tests/) expands them first, with the same result (tests/test_site.py holds it to snippets').
ROOT = Path(__file__).resolve().parent.parent
INCLUDE = re.compile(
    r'^(?P<indent>[ \t]*)-+8<-+[ \t]+"(?P<path>[^":]+)(?::(?P<section>[a-z][-_0-9a-z]*))?"$'
)
SECTION = re.compile(r"-+8<-+[ \t]+\[[ \t]*(?P<type>start|end)[ \t]*:[ \t]*(?P<name>[-_0-9a-z]+)")


def _section(lines: list[str], name: str, path: str) -> list[str]:
    start = next((n for n, x in enumerate(lines) if _marks(x, "start", name)), None)
    if start is None:
        raise ValueError(f"{path}: no section {name!r} (a page includes it)")
    stop = next((n for n, x in enumerate(lines) if n > start and _marks(x, "end", name)), None)
    if stop is None:
        raise ValueError(f"{path}: section {name!r} is not closed")
    return lines[start + 1 : stop]


def _marks(line: str, kind: str, name: str) -> bool:
    m = SECTION.search(line)
    return m is not None and m["type"] == kind and m["name"] == name


def expand(markdown: str, root: Path = ROOT) -> str:
    """The page with each include line replaced by the lines it includes (a named section of a
    file, or the file without its section marks), indented as the line is."""
    out = []
    for line in markdown.split("\n"):
        m = INCLUDE.match(line)
        if m is None:
            out.append(line)
            continue
        path = root / m["path"]
        if not path.is_file():
            raise ValueError(f"{m['path']}: no such file (a page includes it)")
        lines = path.read_text(encoding="utf-8").split("\n")
        if m["section"]:
            lines = _section(lines, m["section"], m["path"])
        else:
            lines = [x for x in lines if not SECTION.search(x)]
        out.extend(m["indent"] + x for x in lines)
    return "\n".join(out)


def fenced(lines: list[str], i: int) -> tuple[str, str, list[str], int] | None:
    """The fenced block opening at ``lines[i]``: (indent, info, dedented body, next line);
    None when none opens there. An unclosed block runs to the end. tests/sitecheck.py reads the
    pages' blocks with it too."""
    m = FENCE.match(lines[i])
    if not m:
        return None
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
    return indent, info, body, i + 1


def _is_python(info: str) -> bool:
    words = info.split()
    return bool(words) and words[0] in PYTHON and "exec=" not in info


def code_blocks(markdown: str) -> list[str]:
    """Bodies (dedented) of the ```python blocks of a page that are not markdown-exec blocks,
    its include lines expanded."""
    blocks, lines, i = [], expand(markdown).splitlines(), 0
    while i < len(lines):
        block = fenced(lines, i)
        if block is None:
            i += 1
            continue
        _, info, body, i = block
        if _is_python(info):
            blocks.append("\n".join(body).strip("\n"))
    return blocks


def _is_prompt(line: str, prompt: str) -> bool:
    return line == prompt or line.startswith(prompt + " ")


def _expected_exception(output: list[str]) -> str | None:
    if not output or not output[0].startswith("Traceback (most recent call last)"):
        return None
    name = output[-1].split(":", 1)[0].strip()
    return name if isinstance(getattr(builtins, name, None), type) else "Exception"


def examples(block: str) -> list[tuple[list[str], list[str]]]:
    """A doctest block as (source lines, expected output lines), example by example."""
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


def _is_doctest(block: str) -> bool:
    return any(_is_prompt(line, ">>>") for line in block.splitlines())


def plain_code(block: str, keep_errors: bool = True) -> str:
    """A doctest block as plain code: prompts and expected output dropped. Other code as is.

    With ``keep_errors`` an example that the page shows failing is wrapped in ``try``/``except``
    (for a script that must run to the end); without it, it is kept as typed (for the clipboard).
    """
    if not _is_doctest(block):
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


def _last_value(source: list[str]) -> tuple[int, int, bool] | None:
    """Where, in ``"\\n".join(source)``, the expression whose value doctest shows begins and
    ends, and whether it is a tuple (printed in parentheses); None when the example ends
    in a statement or in a call to ``print``."""
    text = "\n".join(source)
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    last = tree.body[-1] if tree.body else None
    if not isinstance(last, ast.Expr):
        return None
    value = last.value
    if (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id == "print"
    ):
        return None
    starts = [0]
    for line in source:
        starts.append(starts[-1] + len(line) + 1)

    def at(line: int, byte: int) -> int:  # ast counts UTF-8 bytes within a line
        return starts[line - 1] + len(source[line - 1].encode()[:byte].decode())

    begin = at(value.lineno, value.col_offset)
    end = at(value.end_lineno, value.end_col_offset)  # type: ignore[arg-type]
    # a tuple's span leaves out its parentheses: ``(a, b), c`` starts at ``(a, b)``
    return begin, end, isinstance(value, ast.Tuple)


def _printed(source: list[str]) -> list[str]:
    """``source`` with the value doctest shows printed as doctest shows it (its ``repr``)."""
    where = _last_value(source)
    if where is None:
        return source
    text = "\n".join(source)
    begin, end, tuple_ = where
    expr = f"({text[begin:end]})" if tuple_ else text[begin:end]
    return (text[:begin] + "print(repr(" + expr + "))" + text[end:]).split("\n")


def code_cells(block: str) -> list[dict[str, Any]]:
    """A ```python block as cells: ``code`` (for the notebook), ``script`` (the same code, that
    prints what the page shows), ``output`` (what the page shows, "" for nothing) and ``kind``
    ("result": the value of the cell's last expression; "stream": printed text)."""
    if not _is_doctest(block):
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
            value = not error and _last_value(source) is not None
            cells.append(
                {
                    "code": "\n".join(code),
                    "script": "\n".join(script),
                    "output": _shown(expected),
                    "kind": "result" if value else "stream",
                }
            )
            code, script = [], []
    if any(line.strip() for line in code):
        cells.append(
            {"code": "\n".join(code), "script": "\n".join(script), "output": "", "kind": ""}
        )
    return cells


def page_cells(markdown: str, lang: str, page_url: str, site: str) -> list[dict[str, Any]]:
    """The page as cells, in order: {"markdown": text}, or a code cell of code_cells."""
    prose = Prose(page_url, site, lang)
    cells: list[dict[str, Any]] = []
    lines, i = COMMENT.sub("", PLACEHOLDER.sub(GENERATED, expand(markdown))).splitlines(), 0
    while i < len(lines):
        block = fenced(lines, i)
        if block is None:
            if lines[i] == GENERATED:
                prose.note("generated")
            else:
                prose.add(lines[i])
            i += 1
            continue
        indent, info, body, i = block
        if _is_python(info):
            prose.flush()
            cells.extend({"markdown": text} for text in prose.cells)
            prose.cells.clear()
            cells.extend(code_cells("\n".join(body).strip("\n")))
        elif "exec=" in info:  # drawn or generated when the site is built
            prose.note("figure" if 'html="1"' in info else "generated")
        else:
            prose.block(info, body)
    prose.flush()
    cells.extend({"markdown": text} for text in prose.cells)
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


def notebook(title: str, url: str, lang: str, cells: list[dict[str, Any]]) -> dict[str, Any]:
    """An nbformat 4.5 notebook: the title and the link back, then the page's cells."""
    intro = f"# {title}\n\n" + TEXT[lang]["source"].format(title=title, url=url)
    out: list[dict[str, Any]] = [
        {"cell_type": "markdown", "id": "page", "metadata": {}, "source": _lines(intro)}
    ]
    count = 0
    for n, cell in enumerate(cells):
        if "markdown" in cell:
            out.append(
                {
                    "cell_type": "markdown",
                    "id": f"text-{n}",
                    "metadata": {},
                    "source": _lines(cell["markdown"]),
                }
            )
            continue
        count += 1
        outputs: list[dict[str, Any]] = []
        if cell["kind"] == "result":
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
                "id": f"code-{n}",
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
    """The downloads' name without suffix: ``rope`` for en/rope.md, ``rope.zh`` for zh/rope.md."""
    stem = Path(src_uri).stem
    return f"{stem}.zh" if src_uri.startswith("zh/") else stem


def _language(page: Any) -> str:
    return "zh" if page.file.src_uri.startswith("zh/") else "en"


def on_page_markdown(markdown, page, config, **kwargs):
    if not any(block.strip() for block in code_blocks(markdown)):
        return markdown
    site = config.get("site_url") or "/"
    site = site if site.endswith("/") else site + "/"
    page.meta["posenc_downloads"] = {
        "stem": file_stem(page.file.src_uri),
        "cells": page_cells(markdown, _language(page), site + page.url, site),
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
    if not _is_doctest(shown):
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
    lang = _language(page)
    title = TAG.sub("", page.title or config.site_name)
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

"""MkDocs hook: typeset every formula at build time with KaTeX; the reader gets HTML and CSS.

pymdownx.arithmatex (generic mode) leaves ``<span class="arithmatex">\\(...\\)</span>`` and
``<div class="arithmatex">\\[...\\]</div>`` in each page. This hook sends every formula of a page
to ONE Node process (``hooks/katex-render.cjs``, started once for the whole build, both
languages) and puts KaTeX's output in its place: HTML+CSS for the eye (``aria-hidden``) and MathML
for screen readers. No script runs in the browser to show math, so it reads with JavaScript off.

* The stylesheet (KaTeX's ``font-display: swap`` variant, trimmed to the fonts the site uses,
  woff2 only) is copied to ``assets/katex/`` and linked only from pages that have math.
* The table of contents and the search index get a readable text form of each formula
  (``θ_i = 10000^(−2i/d)`` style, derived from the MathML) instead of TeX.
* A formula KaTeX cannot parse fails the build, naming the page and the TeX.
"""

from __future__ import annotations

import atexit
import html
import json
import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError
from mkdocs.plugins import CombinedEvent, event_priority

ROOT = Path(__file__).resolve().parent.parent
KATEX = ROOT / "node_modules" / "katex" / "dist"
SCRIPT = Path(__file__).resolve().parent / "katex-render.cjs"
ASSET_DIR = "assets/katex"

MATH = re.compile(
    r'<(?P<tag>span|div) class="arithmatex">\s*(?P<open>\\\(|\\\[)(?P<tex>.*?)(?:\\\)|\\\])\s*</(?P=tag)>',
    re.S,
)
TOC_MATH = re.compile(r"\\\((.*?)\\\)|\\\[(.*?)\\\]", re.S)
# A figure marked for the search plugin to skip (hooks/figures.py): its inline SVG holds
# thousands of tags that the plugin's pure-Python HTML parser would walk only to drop them, so
# the search form of the page keeps the marked <div> but not the SVG inside it (same index).
SKIPPED_FIGURE = re.compile(r'<div class="posenc-figure" data-search-exclude="[^"]*"[^>]*>\s*<svg')
FIGURE_END = re.compile(r"</svg>\s*</div>")
NEXT_SVG = re.compile(r"</svg>\s*<svg\b")


def _without_figures(text: str) -> str:
    """``text`` with the SVG of each search-excluded figure taken out (its ``<div>`` stays)."""
    pieces, last = [], 0
    for m in SKIPPED_FIGURE.finditer(text):
        if m.start() < last:  # inside a figure already taken out
            continue
        end = text.find("</svg>", m.end())
        while end >= 0 and (more := NEXT_SVG.match(text, end)):  # its phone rendition
            end = text.find("</svg>", more.end())
        close = FIGURE_END.match(text, end) if end >= 0 else None
        if close is None:  # not site_figures.to_html's shape: the plugin skips it as before
            continue
        pieces += [text[last : m.end() - 4], text[close.end() - 6 : close.end()]]
        last = close.end()
    return "".join(pieces) + text[last:] if pieces else text


PRE = re.compile(r"<pre\b[^>]*>.*?</pre>", re.S)
CODE_SPAN = re.compile(r'<span(?: class="[^"]*")?>|</span>')


def _plain_code(match: re.Match[str]) -> str:
    """A highlighted code block without its token ``<span>`` tags: the search plugin keeps no
    span, and inside ``<pre>`` it joins the text pieces as they come, so the entry is the same
    while its parser visits a third as many tags. A block with any other span is left alone."""
    block = match[0]
    if block.count("<span") != len(re.findall(r'<span(?: class="[^"]*")?>', block)):
        return block
    return CODE_SPAN.sub("", block)


def _searched_html(text: str) -> str:
    """What the search plugin parses instead of ``text``: the same index, parsed faster."""
    return PRE.sub(_plain_code, _without_figures(text))


DISPLAY_STYLE = "\\displaystyle "

_node: list[subprocess.Popen[str]] = []
_cache: dict[tuple[str, bool], dict[str, str]] = {}
_classes: set[str] = set()


def _process() -> subprocess.Popen[str]:
    if not _node:
        node = shutil.which("node")
        if node is None or not (KATEX / "katex.js").is_file():
            raise PluginError(
                "KaTeX needs Node.js and node_modules/katex: run `npm ci` (make does)"
            )
        _node.append(
            subprocess.Popen(
                [node, str(SCRIPT)],
                cwd=ROOT,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                encoding="utf-8",
                bufsize=1,
            )
        )
        atexit.register(_stop)
    return _node[0]


def _stop() -> None:
    while _node:
        proc = _node.pop()
        if proc.stdin:
            proc.stdin.close()
        proc.wait(timeout=10)


_TEX_ANNOTATION = re.compile(
    r'<semantics>|<annotation encoding="application/x-tex">.*?</annotation></semantics>', re.S
)


def typeset(items: list[tuple[str, bool]], where: str = "") -> list[dict[str, str]]:
    """KaTeX HTML (``html``) and readable text (``text``) for each (tex, display) pair."""
    todo = sorted({item for item in items if item not in _cache})
    if todo:
        proc = _process()
        assert proc.stdin is not None and proc.stdout is not None
        # A display formula is set in display style but in KaTeX's inline mode, so that, like
        # inline math, it can break after a top-level relation or operator when the column is
        # narrower than the formula (KaTeX's display mode never breaks).
        # Where it may break is chosen from its atoms (hooks/katex-render.cjs): a display
        # formula at its separators and top-level relations, never inside brackets.
        request = [
            (DISPLAY_STYLE + tex if display else tex, False, "display" if display else "inline")
            for tex, display in todo
        ]
        proc.stdin.write(json.dumps(request, ensure_ascii=False) + "\n")
        answers = json.loads(proc.stdout.readline())
        for (tex, display), out in zip(todo, answers, strict=True):
            if "error" in out:
                raise PluginError(f"{where}: KaTeX cannot typeset {tex!r}: {out['error']}")
            if display:
                out["html"] = (
                    out["html"]
                    .replace("<math ", '<math display="block" ', 1)
                    .replace(f">{html.escape(DISPLAY_STYLE, quote=False)}", ">", 1)
                )
            _classes.update(
                c for m in re.finditer(r'class="([^"]*)"', out["html"]) for c in m[1].split()
            )
            text = mathml_text(out["html"]) or tex
            # the TeX source KaTeX keeps in <semantics><annotation> is read by no screen reader
            # (they read the presentation MathML) and doubles as DOM weight: dropped
            out["html"] = _TEX_ANNOTATION.sub("", out["html"])
            _cache[(tex, display)] = {"html": out["html"], "text": text}
    return [_cache[item] for item in items]


# --- a readable text form of a formula, from its MathML --------------------------------------

_SUB = str.maketrans("0123456789+-−=()aehijklmnoprstuvx", "₀₁₂₃₄₅₆₇₈₉₊₋₋₌₍₎ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ")
_SUP = str.maketrans("0123456789+-−=()inT⊤", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁻⁼⁽⁾ⁱⁿᵀᵀ")
_SUB_OK = set("0123456789+-−=()aehijklmnoprstuvx")
_SUP_OK = set("0123456789+-−=()inT⊤")
_SPACED = set("=<>≤≥≠≈∈→↦⇒⟹+−×⋅·±⊕∼≡")
_DOUBLE = {"R": "ℝ", "N": "ℕ", "Z": "ℤ", "C": "ℂ", "Q": "ℚ"}
_NS = "{http://www.w3.org/1998/Math/MathML}"


def _script(text: str, ok: set[str], table: dict[int, str], mark: str) -> str:
    text = text.replace(" ", "")
    if text and set(text) <= ok:
        return text.translate(table)
    return f"{mark}{text}" if len(text) == 1 else f"{mark}({text})"


def _text(el: ET.Element) -> str:
    tag = el.tag.replace(_NS, "")
    kids = [k for k in el if k.tag.replace(_NS, "") != "annotation"]
    if tag in ("mi", "mn", "mtext", "ms"):
        text = el.text or ""
        return _DOUBLE.get(text, text) if el.get("mathvariant") == "double-struck" else text
    if tag == "mo":
        op = (el.text or "").strip()
        if op in "\u2061\u2062\u2063\u2064":  # invisible: function application, times, ...
            return " " if op else ""
        return f" {op} " if op in _SPACED else (", " if op == "," else op)
    if tag == "mspace":
        return " "
    if tag == "mphantom":
        return ""
    parts = [_text(k) for k in kids]
    if tag in ("msub", "munder") and len(parts) == 2:
        if tag == "munder" and parts[1].strip() in ("⏟", "‾", "_"):
            return parts[0]
        return parts[0] + _script(parts[1], _SUB_OK, _SUB, "_")
    if tag in ("msup", "mover") and len(parts) == 2:
        if el.get("accent") == "true" or parts[1].strip() in ("‾", "^", "~", "⏞", "¯"):
            return parts[0]
        return parts[0] + _script(parts[1], _SUP_OK, _SUP, "^")
    if tag in ("msubsup", "munderover") and len(parts) == 3:
        return (
            parts[0] + _script(parts[1], _SUB_OK, _SUB, "_") + _script(parts[2], _SUP_OK, _SUP, "^")
        )
    if tag == "mfrac" and len(parts) == 2:
        a, b = (p.strip() for p in parts)
        a = a if re.fullmatch(r"\w+", a) else f"({a})"
        b = b if re.fullmatch(r"\w+", b) else f"({b})"
        return f"{a}/{b}"
    if tag == "msqrt":
        inner = "".join(parts).strip()
        return f"√{inner}" if re.fullmatch(r"\w+", inner) else f"√({inner})"
    if tag == "mroot" and len(parts) == 2:
        return f"{parts[1]}√({parts[0]})"
    if tag == "mtable":
        return "; ".join(p.strip() for p in parts)
    if tag == "mtr":
        return " ".join(p.strip() for p in parts)
    return "".join(parts)


def mathml_text(rendered: str) -> str:
    """``<math>`` of KaTeX's output as one line of plain text (no TeX)."""
    m = re.search(r"<math\b.*?</math>", rendered, re.S)
    if not m:
        return ""
    try:
        root = ET.fromstring(m[0])  # KaTeX escapes only &, <, >, " and ': valid XML
    except ET.ParseError:
        return ""
    text = re.sub(r"\s+", " ", _text(root)).strip()
    text = re.sub(r"(\w) ([(\[])", r"\1\2", text)
    return re.sub(r"([(\[]) ", r"\1", re.sub(r" ([)\],.;])", r"\1", text))


# --- the hook ---------------------------------------------------------------------------------


def _toc_text(title: str, where: str) -> str:
    def one(m: re.Match[str]) -> str:
        tex, display = (m[1], False) if m[1] is not None else (m[2], True)
        return html.escape(typeset([(html.unescape(tex), display)], where)[0]["text"], quote=False)

    return TOC_MATH.sub(one, title)


def _fix_toc(items: Any, where: str) -> None:
    for item in items:
        if "\\(" in item.title or "\\[" in item.title:
            item.title = _toc_text(item.title, where)
        _fix_toc(item.children, where)


def on_page_content(html_text: str, page: Any, config: Any, files: Any) -> str:
    where = page.file.src_uri
    matches = list(MATH.finditer(html_text))
    _fix_toc(page.toc, where)
    if page.title and "\\(" in page.title:
        page.title = html.unescape(_toc_text(page.title, where))
    if not matches:
        page.posenc_search_content = None
        return html_text
    items = [(html.unescape(m["tex"]).strip(), m["open"] == "\\[") for m in matches]
    record = os.environ.get("POSENC_MATH_RECORD")
    if record:  # tools/math_engines.py: each page's formulas, in the order they appear on it
        with open(record, "a", encoding="utf-8") as f:
            f.write(json.dumps({"page": page.url, "formulas": items}, ensure_ascii=False) + "\n")
    out = typeset(items, where)
    pieces, search, last = [], [], 0
    for m, rendered in zip(matches, out, strict=True):
        tag = m["tag"]
        # a display formula that is wider than a phone scrolls: keyboard users can focus it
        attrs = ' tabindex="0"' if tag == "div" else ""
        pieces += [
            html_text[last : m.start()],
            f'<{tag} class="arithmatex"{attrs}>{rendered["html"]}</{tag}>',
        ]
        search += [
            html_text[last : m.start()],
            f"<{tag}>{html.escape(rendered['text'], quote=False)}</{tag}>",
        ]
        last = m.end()
    pieces.append(html_text[last:])
    search.append(html_text[last:])
    page.posenc_search_content = "".join(search)
    return "".join(pieces)


@event_priority(100)  # before the search plugin reads page.content ...
def _search_form(context: Any, page: Any, config: Any, nav: Any) -> Any:
    alt = getattr(page, "posenc_search_content", None)
    # the page as the other hooks left it, or the text form of its math built above
    form = _searched_html(alt if alt is not None else page.content)
    if form != page.content:
        page.posenc_rendered_content, page.content = page.content, form
    return context


@event_priority(-100)  # ... and the typeset page back before the theme renders it
def _restore(context: Any, page: Any, config: Any, nav: Any) -> Any:
    rendered = getattr(page, "posenc_rendered_content", None)
    if rendered is not None:
        page.content = rendered
        page.posenc_rendered_content = None
    return context


on_page_context = CombinedEvent(_search_form, _restore)


# KaTeX's upright text and italic letters: the fonts every page with math uses first
PRELOADED = ("KaTeX_Main-Regular", "KaTeX_Math-Italic")


def on_post_page(output: str, page: Any, config: Any) -> str:
    if 'class="katex' not in output:
        return output
    root = "../" * page.url.count("/") + ASSET_DIR
    # The two faces of nearly every formula load with the stylesheet, not after it: with
    # font-display swap, math first drawn in a fallback font and redrawn in KaTeX's moves the
    # lines below it (Lighthouse measured a layout shift of 0.09-0.12 on /errata/).
    link = (
        "".join(
            f'<link rel="preload" href="{root}/fonts/{face}.woff2" as="font" type="font/woff2" '
            "crossorigin>\n    "
            for face in PRELOADED
        )
        + f'<link rel="stylesheet" href="{root}/katex.css">'
    )
    anchor = re.search(r'<link rel="stylesheet" href="[^"]*assets/posenc\.css">', output)
    at = anchor.start() if anchor else output.index("</head>")
    return output[:at] + link + "\n    " + output[at:]


def stylesheet() -> tuple[str, list[str]]:
    """KaTeX's CSS with only the @font-face rules of the families the site's math uses (woff2),
    and the font files those rules name."""
    css = (KATEX / "katex-swap.min.css").read_text(encoding="utf-8")
    families = {"KaTeX_Main", "KaTeX_Math"}  # the text and the italic letters of any formula
    for rule in re.finditer(r"([^{}@]+)\{([^{}]*font-family:\s*(KaTeX_\w+)[^{}]*)\}", css):
        for selector in rule[1].split(","):
            classes = re.findall(r"\.([\w-]+)", selector)
            if classes and all(c == "katex" or c in _classes for c in classes):
                families.add(rule[3])
    fonts: list[str] = []

    def face(m: re.Match[str]) -> str:
        family = re.search(r"font-family:(KaTeX_\w+)", m[0])
        woff2 = re.search(r"url\((fonts/[\w-]+\.woff2)\) format\(\"woff2\"\)", m[0])
        if not (family and woff2) or family[1] not in families:
            return ""
        fonts.append(woff2[1])
        return re.sub(r"src:[^;}]*", f'src:url({woff2[1]}) format("woff2")', m[0])

    css = re.sub(r"@font-face\{[^}]*\}", face, css)
    return css, fonts


def on_post_build(config: Any) -> None:
    site = Path(config["site_dir"])
    if config.theme.get("language", "en") != "en" and (site.parent / "index.html").is_file():
        site = site.parent  # the i18n plugin builds zh into site/zh: assets live at the root
    if not _classes:
        return
    css, fonts = stylesheet()
    target = site / ASSET_DIR
    (target / "fonts").mkdir(parents=True, exist_ok=True)
    (target / "katex.css").write_text(css, encoding="utf-8")
    for font in fonts:
        shutil.copy2(KATEX / font, target / font)


def on_shutdown() -> None:
    _stop()

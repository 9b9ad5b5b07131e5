"""MkDocs hook: what a reader (or a crawler) needs around each page, generated, never typed.

- ``page.meta.description`` from the page's first plain paragraph (no formula in it), for the
  ``<meta name="description">`` and Open Graph tags of overrides/main.html, unless the page sets
  one in its front matter;
- under the content, in the page's language: the downloads written by hooks/notebooks.py, the
  date and the library versions its checks last ran against (read from docs/assets/bench.json,
  which ``make bench`` writes; never typed by hand), and a "Cite this page" BibTeX entry built
  from CITATION.cff and the page's canonical URL. The block carries ``data-search-exclude``, so
  the search index holds the page, not this boilerplate;
- 404 pages: mkdocs-static-i18n renders both languages' 404 to the site root, the Chinese one
  last. The English one is kept at the root and the Chinese one goes to ``zh/404.html``. A
  static host is told to serve that one for /zh/ paths in its own configuration; under
  ``mkdocs serve`` this hook does it (``on_serve``): a /zh/ path that does not exist gets the
  Chinese 404, any other the English one.
"""

from __future__ import annotations

import html
import json
import os
import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "docs" / "assets" / "bench.json"
CITATION = ROOT / "CITATION.cff"
LIBRARIES = ("torch", "transformers", "timm")

TAG = re.compile(r"<[^>]+>")

TEXT = {
    "en": {
        "downloads": "Download this page to run it, with its text and the outputs it shows:",
        "notebook": "notebook <code>{file}</code>",
        "script": "script <code>{file}</code>",
        "checked": "The checks on this page last ran on {date} against {versions}.",
        "checked_src": " <small>(recorded by <code>make bench</code> in bench.json)</small>",
        "cite": "Cite this page",
        "language": "english",
        "not_found": "Page not found",
    },
    "zh": {
        "downloads": "下载本页的中文版，在本地运行（含正文、代码与页面所示的输出）：",
        "notebook": "Jupyter 笔记本 <code>{file}</code>",
        "script": "Python 脚本 <code>{file}</code>",
        "checked": "本页的检验代码最近一次于 {date} 运行，所用版本：{versions}。",
        # full-width parentheses, no space after the full stop (issue 23)
        "checked_src": "<small>（由 <code>make bench</code> 记录在 bench.json 中）</small>",
        "cite": "引用本页",
        "language": "chinese",
        "not_found": "页面不存在",
    },
}


def _lang(page) -> str:
    return "zh" if page.file.src_uri.startswith("zh/") else "en"


def checked_against() -> dict | None:
    """Date and library versions of the last recorded run, from bench.json (None if absent)."""
    try:
        record = json.loads(BENCH.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    machine = record.get("machine") or {}
    versions = {name: machine[name] for name in LIBRARIES if machine.get(name)}
    date = str(record.get("date", ""))[:10]
    if not date or not versions:
        return None
    return {"date": date, "versions": versions}


def citation() -> dict:
    try:
        return yaml.safe_load(CITATION.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError):
        return {}


def _authors(cff: dict) -> str:
    names = []
    for a in cff.get("authors") or []:
        if a.get("name"):
            names.append("{" + a["name"] + "}")
        elif a.get("family-names"):
            names.append(f"{a['family-names']}, {a.get('given-names', '')}".strip(", "))
    return " and ".join(names) or "{posenc contributors}"


def bibtex(page, lang: str, cff: dict, checked: dict | None) -> str:
    stem = Path(page.file.src_uri).stem
    key = f"posenc-{stem}" + ("-zh" if lang == "zh" else "")
    title = TAG.sub("", page.title or "")
    fields = [
        ("title", "{" + title + "}"),
        ("author", "{" + _authors(cff) + "}"),
        ("howpublished", "{\\url{" + (page.canonical_url or page.url) + "}}"),
    ]
    if checked:
        fields.append(("year", "{" + checked["date"][:4] + "}"))
    note = f"{cff.get('title', 'posenc')}" + (
        f", version {cff['version']}" if cff.get("version") else ""
    )
    fields += [("note", "{" + note + "}"), ("language", "{" + TEXT[lang]["language"] + "}")]
    width = max(len(k) for k, _ in fields)
    body = ",\n".join(f"  {k.ljust(width)} = {v}" for k, v in fields)
    return f"@misc{{{key},\n{body}\n}}"


SKIP = re.compile(
    r"^(#|!!!|\?\?\?|\||[-*+] |>|<|:::|===|\d+\. |\[\^|\$\$|\\\[|    |\t|```|~~~|--8<--)"
)
INLINE_MATH = re.compile(r"\$([^$\n]+)\$|\\\((.+?)\\\)")
SIMPLE_MATH = re.compile(r"^[\w\s+\-=(),.<>/]*$")
CJK = r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]"


def _paragraphs(markdown: str):
    """Plain paragraphs of a page's Markdown source: no code, heading, list, table or admonition."""
    text = re.sub(r"^(`{3,}|~{3,}).*?^\1[ \t]*$", "", markdown, flags=re.S | re.M)
    for block in re.split(r"\n[ \t]*\n", text):
        lines = block.strip("\n").splitlines()
        if lines and not SKIP.match(lines[0]):
            yield re.sub(rf"(?<={CJK})\n(?={CJK})", "", "\n".join(lines)).replace("\n", " ")


def _plain(paragraph: str) -> str:
    """Markdown to text: links keep their text, emphasis and code marks go, simple math stays
    (``$p$`` -> p) and the text stops before the first formula that needs typesetting."""

    def math(m: re.Match) -> str:
        tex = m.group(1) or m.group(2)
        return tex if SIMPLE_MATH.match(tex) else "\x00"

    text = INLINE_MATH.sub(math, paragraph).split("\x00")[0]
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"\{[^}]*\}", "", text)
    text = re.sub(r"`([^`]*)`", r"\1", text)
    text = re.sub(r"(?<!\w)[*_]+|[*_]+(?!\w)", "", text)
    return " ".join(text.split())


def description(markdown: str, lang: str) -> str | None:
    """A page's first plain paragraph as text, cut to what a search result shows."""
    limit, shortest = (160, 60) if lang == "en" else (90, 25)
    for paragraph in _paragraphs(markdown):
        text = _plain(paragraph)
        if len(text) < shortest:
            continue
        if len(text) > limit:
            cut = text[: limit - 1]
            if lang == "en" and " " in cut:
                cut = cut.rsplit(" ", 1)[0]
            text = cut.rstrip(" ,;:，、") + "…"
        elif len(_plain(paragraph)) < len(" ".join(paragraph.split())) - 20 and not text.endswith(
            (".", "。")
        ):
            text = text.rstrip(" ,;:，、") + "…"
        return text
    return None


def footer(page, lang: str) -> str:
    t = TEXT[lang]
    parts = []
    downloads = page.meta.get("posenc_downloads")
    if downloads:
        stem = downloads["stem"]
        parts.append(
            f'<p class="posenc-downloads">{t["downloads"]} '
            f'<a href="{stem}.ipynb" download>{t["notebook"].format(file=stem + ".ipynb")}</a> · '
            f'<a href="{stem}.py" download>{t["script"].format(file=stem + ".py")}</a></p>'
        )
    checked = _RECORDS.get("checked") if _RECORDS else checked_against()
    if checked:
        versions = ", ".join(f"{name} {v}" for name, v in checked["versions"].items())
        parts.append(
            f'<p class="posenc-checked">{t["checked"].format(date=checked["date"], versions=versions)}'
            f"{t['checked_src']}</p>"
        )
    cff = _RECORDS.get("cff") if _RECORDS else citation()
    entry = html.escape(bibtex(page, lang, cff or {}, checked), quote=False)
    parts.append(
        f'<details class="posenc-cite"><summary>{t["cite"]}</summary>'
        f'<pre><code class="language-bibtex">{entry}</code></pre></details>'
    )
    return '<div class="posenc-page-meta" data-search-exclude>' + "".join(parts) + "</div>"


_RECORDS: dict = {}


def on_config(config, **kwargs):
    """With REPO_URL set and no EDIT_URI, edit links point at docs/ on the main branch (mkdocs
    would guess ``edit/master/docs/`` for GitHub)."""
    if config.repo_url and not os.environ.get("EDIT_URI"):
        config.edit_uri = "edit/main/docs/"
    _RECORDS.update(checked=checked_against(), cff=citation())  # read once per build
    return config


def on_page_markdown(markdown, page, **kwargs):
    if not page.meta.get("description"):
        text = description(markdown, _lang(page))
        if text:
            page.meta["description"] = text
    return markdown


def on_page_content(content, page, **kwargs):
    return content + footer(page, _lang(page))


_ROOT_404: dict[str, str] = {}


def on_post_template(output, template_name, config, **kwargs):
    if template_name != "404.html":
        return output
    i18n = config.plugins.get("i18n")
    lang = getattr(i18n, "current_language", None) or config.theme.get("language", "en")
    if lang == "en":
        _ROOT_404["en"] = output
        return output
    folder = Path(config.site_dir) / lang
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "404.html").write_text(output, encoding="utf-8")
    return _ROOT_404.get("en", output)


def on_serve(server, config, builder, **kwargs):
    """Under ``mkdocs serve``, a /zh/ path that does not exist gets zh/404.html (MkDocs' dev
    server answers every missing path with the root's 404.html)."""
    serve = server._serve_request

    def serve_request(environ, start_response):
        result = serve(environ, start_response)
        if result is not None:
            return result
        path = environ.get("PATH_INFO", "").encode("latin-1").decode("utf-8", "ignore")
        mount = getattr(server, "mount_path", "/")
        page = Path(server.root) / "zh" / "404.html"
        if path.startswith(mount) and path[len(mount) :].startswith("zh/") and page.is_file():
            start_response("404 Not Found", [("Content-Type", "text/html; charset=utf-8")])
            return [page.read_bytes()]
        return None

    server._serve_request = serve_request
    return server

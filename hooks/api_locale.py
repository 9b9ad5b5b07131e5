"""MkDocs hook: render mkdocstrings' section labels in the page's own language.

mkdocstrings fixes its locale once per build, but mkdocs-static-i18n builds both languages in
one run; this sets the locale per page from the language folder (docs/zh/... -> zh), so the
labels mkdocstrings translates itself (Parameters, Returns, Raises, Examples, ...) follow the
page. The numpydoc sections it renders as boxes (See Also, Notes, References, ...) keep the
docstring's English heading as their title; on a Chinese page those titles are translated here.
The docstrings themselves stay in English (the zh API pages say so). It acts on every page by
its language folder, so the API overview (api.md) and its sub-pages (api-*.md) are all covered.
"""

from __future__ import annotations

import re
from typing import Any

# numpydoc section headings that griffe turns into admonitions, and their zh titles.
ZH_TITLES = {
    "See Also": "另请参阅",
    "Notes": "说明",
    "Note": "说明",
    "References": "参考文献",
    "Warnings": "警告",
    "Warning": "警告",
    "Examples": "示例",
    "Example": "示例",
}

# mkdocstrings-python renders an admonition as <details class="KIND" open><summary>TITLE</summary>.
_SUMMARY = re.compile(
    r'(<details class="[^"]*"[^>]*>\s*<summary>)('
    + "|".join(map(re.escape, ZH_TITLES))
    + r")(</summary>)"
)


def _is_zh(page: Any) -> bool:
    return bool(page.file.src_uri.startswith("zh/"))


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any, **kwargs: Any) -> str:
    plugin = config.plugins.get("mkdocstrings")
    handlers = getattr(plugin, "handlers", None) if plugin else None
    if handlers is not None:
        handlers._locale = "zh" if _is_zh(page) else "en"
    return markdown


def translate_titles(html: str) -> str:
    """The docstring boxes' English titles in ``html`` replaced by their Chinese ones."""
    return _SUMMARY.sub(lambda m: m.group(1) + ZH_TITLES[m.group(2)] + m.group(3), html)


def on_page_content(html: str, page: Any, config: Any, files: Any, **kwargs: Any) -> str:
    if _is_zh(page) and "doc-contents" in html:  # a page with mkdocstrings output
        return translate_titles(html)
    return html

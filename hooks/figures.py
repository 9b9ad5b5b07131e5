"""MkDocs hook: draw each figure once per build, not once per language.

Both languages run byte-identical code blocks (a test holds them so), so posenc.plots reuses the
SVG drawn for the English page on its Chinese twin. mkdocs-static-i18n builds the English site
first and the Chinese one after it, in the same process; the cache is emptied when a new build
(of the default language) starts, so `mkdocs serve` never shows a stale figure.
"""

from __future__ import annotations

from posenc import plots


def on_pre_build(config, **kwargs):
    if config.theme.get("language", "en") == "en":
        plots._set_page(None)


def on_page_markdown(markdown, page, **kwargs):
    plots._set_page(page.file.src_uri)
    return markdown

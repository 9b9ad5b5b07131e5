"""MkDocs hook: draw each figure once per build, not once per language, and keep it out of search.

Both languages run byte-identical code blocks (a test holds them so), so posenc.plots draws each
figure once, for the English page, and gives its Chinese twin that SVG with the words translated
(labels, legends, titles, aria-label): matplotlib lays out and renders no figure twice.
mkdocs-static-i18n builds the English site first and the Chinese one after it, in the same
process; the cache is emptied when a new build (of the default language) starts, so
`mkdocs serve` never shows a stale figure.

A figure's SVG text (tick numbers, labels) is no search result: the figure is marked
``data-search-exclude`` for the search plugin and the mark is removed once the page is indexed.
"""

from __future__ import annotations

from mkdocs.plugins import event_priority

from posenc import plots

MARK = ' data-search-exclude="figure"'


def on_pre_build(config, **kwargs):
    if config.theme.get("language", "en") == "en":
        plots._set_page(None)


def on_page_markdown(markdown, page, **kwargs):
    plots._set_page(page.file.src_uri)
    return markdown


@event_priority(50)  # before hooks/katex.py builds the page's search form
def on_page_content(html, page, **kwargs):
    return html.replace('<div class="posenc-figure"', f'<div class="posenc-figure"{MARK}')


@event_priority(-200)  # after the search plugin (0) and hooks/katex.py's restore (-100)
def on_page_context(context, page, **kwargs):
    page.content = page.content.replace(MARK, "")
    return context

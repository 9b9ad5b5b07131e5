"""MkDocs hook: draw each figure once per build, not once per language, and keep it out of search.

Both languages run byte-identical code blocks (a test holds them so), so posenc.plots draws each
figure once, for the English page, and gives its Chinese twin that SVG with the words translated
(labels, legends, titles, aria-label): matplotlib lays out and renders no figure twice.
mkdocs-static-i18n builds the English site first and the Chinese one after it, in the same
process; the cache is emptied when a new build (of the default language) starts, so
`mkdocs serve` never shows a stale figure.

Across builds, drawn figures are kept in ``.cache/figures/`` (git ignores it): matplotlib's
drawing is half of a build's time. A figure is taken from there only when everything it is drawn
from is unchanged: the page's Markdown (all its code blocks), the source of the posenc package,
the data files pages read (docs/assets/*.json: bench.json, atlas.json) and the versions of
Python, NumPy and matplotlib with the fonts it may use; any change draws it anew. ``POSENC_FIGURE_CACHE=0`` turns the store off.

A figure's SVG text (tick numbers, labels) is no search result: the figure is marked
``data-search-exclude`` for the search plugin and the mark is removed once the page is indexed.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
from pathlib import Path

from mkdocs.plugins import event_priority

from posenc import plots

MARK = ' data-search-exclude="figure"'
PACKAGE = Path(plots.__file__).resolve().parent


class FigureStore:
    """Drawn figures on disk, keyed by what they are drawn from (see the module docstring)."""

    def __init__(self, folder: Path, data: list[Path]) -> None:
        import matplotlib
        import numpy

        self.folder = folder
        digest = hashlib.sha256()
        for source in [*sorted(PACKAGE.rglob("*.py")), *data]:
            digest.update(source.name.encode())
            digest.update(source.read_bytes())
        fonts = plots._cjk_fonts()
        versions = (platform.python_version(), numpy.__version__, matplotlib.__version__, fonts)
        digest.update(repr(versions).encode())
        self.salt = digest.hexdigest()
        self.page = ""

    def _path(self, key: str) -> Path:
        name = hashlib.sha256(f"{self.salt}\0{self.page}\0{key}".encode()).hexdigest()
        return self.folder / f"{name}.json"

    def get(self, key: str):
        try:
            svg, sizes, layout, narrow, narrow_layout = json.loads(
                self._path(key).read_text(encoding="utf-8")
            )
        except (OSError, ValueError):  # also an entry of the older form (no phone rendition)
            return None
        words = [tuple(word) for word in layout]
        narrow_words = [tuple(word) for word in narrow_layout] if narrow_layout else None
        return svg, sizes, words, narrow, narrow_words

    def put(self, key: str, value) -> None:
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            self._path(key).write_text(json.dumps(value), encoding="utf-8")
        except OSError:  # a read-only checkout builds without the store
            pass


def on_pre_build(config, **kwargs):
    if config.theme.get("language", "en") == "en":
        plots._set_page(None)
        use = os.environ.get("POSENC_FIGURE_CACHE", "1") != "0"
        root = Path(config.config_file_path).resolve().parent
        data = sorted(Path(config.docs_dir).glob("assets/*.json"))
        plots._store[0] = FigureStore(root / ".cache" / "figures", data) if use else None


def on_page_markdown(markdown, page, **kwargs):
    plots._set_page(page.file.src_uri)
    if plots._store[0] is not None:
        plots._store[0].page = hashlib.sha256(markdown.encode()).hexdigest()
    return markdown


@event_priority(50)  # before hooks/katex.py builds the page's search form
def on_page_content(html, page, **kwargs):
    return html.replace('<div class="posenc-figure"', f'<div class="posenc-figure"{MARK}')


@event_priority(-200)  # after the search plugin (0) and hooks/katex.py's restore (-100)
def on_page_context(context, page, **kwargs):
    page.content = page.content.replace(MARK, "")
    return context

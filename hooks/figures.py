"""MkDocs hook: tell site_figures which page is built, keep drawn figures across builds, and keep
figures out of search.

The pages' code blocks import site_figures (beside this hook; this hook puts its folder on
``sys.path``) and draw each figure in the language of the page being built: this hook names the
page (``on_page_markdown``), so the same code draws the English figure with English words and
the Chinese one with Chinese words, each laid out for its own. mkdocs-static-i18n builds the
English site first and the Chinese one after it, in the same process; what site_figures keeps
per build is emptied when a new build (of the default language) starts, so `mkdocs serve` never
shows a stale figure.

Across builds, drawn figures are kept in ``.cache/figures/`` (git ignores it): matplotlib's
drawing is half of a build's time. A figure is taken from there only when everything it is drawn
from is unchanged: the page's Markdown in its language (all its code blocks), the source of the
posenc package and of site_figures,
the data files pages read (docs/assets/*.json: bench.json, atlas.json) and the versions of
Python, NumPy and matplotlib with the fonts it may use; any change draws it anew. ``POSENC_FIGURE_CACHE=0`` turns the store off.

A figure's SVG text (tick numbers, labels) is no search result: the figure is marked
``data-search-exclude`` for the search plugin and the mark is removed once the page is indexed.

Raster parts of figures (heat maps, rasterized meshes: PNG or WebP that matplotlib embeds in the
SVG as base64) of 2 KiB or more are written to ``assets/figures/<content hash>.<ext>`` in the built site and the
SVG points at that file (``on_post_page``): the HTML stays light to download and parse, the
browser decodes the image off the main thread, and both languages share one cached file.
The file is shown by an HTML ``<img loading="lazy">`` in a ``<foreignObject>`` with the box and
transform of matplotlib's ``<image>`` (an SVG image cannot wait: it was fetched as the page
loaded, 64 KiB on /sinusoidal/ for figures two screens down, and a phone's rendition of a figure
fetched its wide twin's image too; issue 25: Lighthouse's LCP 3.0-3.4 s -> 1.9-2.6 s there).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import platform
import re
import sys
from pathlib import Path

from mkdocs.plugins import event_priority
from mkdocs.utils import get_relative_url

import posenc

HOOKS = Path(__file__).resolve().parent
# MkDocs puts a hook's folder on sys.path only while it loads the hook: the pages' code and
# site_figures itself import from here during the build, so the folder stays on it (on_config).
sys.path.insert(0, str(HOOKS))
import notebooks  # noqa: E402
import site_figures as plots  # noqa: E402

sys.path.remove(str(HOOKS))

MARK = ' data-search-exclude="figure"'
PACKAGE = Path(posenc.__file__).resolve().parent
# an image embedded in a figure's SVG (<image xlink:href="data:..."> / href="data:...")
EMBEDDED = re.compile(r'((?:xlink:)?href=")data:image/(png|webp);base64,([A-Za-z0-9+/=\s]+)"')
# matplotlib's <image .../> element around one, and the attributes it writes on it
IMAGE = re.compile(r"<image\b[^>]*?/>")
ATTR = re.compile(r'\s([\w:-]+)="([^"]*)"')
BOX = ("id", "transform", "x", "y", "width", "height")
IMAGES = "assets/figures"
INLINE_MAX = 2048  # bytes: smaller images (colour bars) stay inline, cheaper than a request


class FigureStore:
    """Drawn figures on disk, keyed by what they are drawn from (see the module docstring)."""

    def __init__(self, folder: Path, data: list[Path]) -> None:
        import matplotlib
        import numpy

        self.folder = folder
        digest = hashlib.sha256()
        drawing = sorted(HOOKS.glob("site_figures*.py"))
        for source in [*sorted(PACKAGE.rglob("*.py")), *drawing, *data]:
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
        """(svg, font sizes of its words, svg for a phone or None), or None."""
        try:
            svg, sizes, narrow = json.loads(self._path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):  # also an entry of an older form
            return None
        return svg, sizes, narrow

    def put(self, key: str, value) -> None:
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            self._path(key).write_text(json.dumps(value), encoding="utf-8")
        except OSError:  # a read-only checkout builds without the store
            pass


def on_config(config, **kwargs):
    if str(HOOKS) not in sys.path:
        sys.path.insert(0, str(HOOKS))
    return config


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
        # the page with its included code (docs_src/): a change to an earlier block redraws
        page_text = notebooks.expand(markdown)
        plots._store[0].page = hashlib.sha256(page_text.encode()).hexdigest()
    return markdown


@event_priority(50)  # before hooks/katex.py builds the page's search form
def on_page_content(html, page, **kwargs):
    return html.replace('<div class="posenc-figure"', f'<div class="posenc-figure"{MARK}')


@event_priority(-200)  # after the search plugin (0) and hooks/katex.py's restore (-100)
def on_page_context(context, page, **kwargs):
    page.content = page.content.replace(MARK, "")
    return context


def on_post_page(output, page, config, **kwargs):
    """Embedded raster images of figures become files of the built site (see the docstring)."""
    if "data:image/" not in output:
        return output
    folder = Path(config.site_dir) / IMAGES

    def to_file(image: re.Match[str]) -> str:
        m = EMBEDDED.search(image[0])
        if m is None:
            return image[0]
        data = base64.b64decode(re.sub(r"\s+", "", m[3]))
        if len(data) < INLINE_MAX:
            return image[0]
        name = f"{hashlib.sha256(data).hexdigest()[:16]}.{m[2]}"
        path = folder / name
        if not path.is_file():  # the twin page in the other language wrote it already
            folder.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        return lazy_image(image[0], get_relative_url(f"{IMAGES}/{name}", page.url))

    return IMAGE.sub(to_file, output)


def lazy_image(image: str, url: str) -> str:
    """matplotlib's ``<image>`` element as an ``<img loading="lazy">`` of ``url`` filling a
    ``<foreignObject>`` with the element's id, box and transform."""
    attrs = dict(ATTR.findall(EMBEDDED.sub("", image)))
    unknown = set(attrs) - set(BOX)
    if unknown:  # a matplotlib that writes more (preserveAspectRatio, style): say so, not drop it
        raise ValueError(
            f"figure image: attributes {sorted(unknown)} not carried to <img>: {image[:200]}"
        )
    box = "".join(f' {k}="{attrs[k]}"' for k in BOX if k in attrs)
    img = f'<img src="{url}" alt="" loading="lazy" style="display:block;width:100%;height:100%;object-fit:contain">'
    return f"<foreignObject{box}>{img}</foreignObject>"

"""MkDocs hook: the interactive explorers, written into their pages in the page's language.

A page places an explorer with one line of HTML, the same in both languages::

    <div class="posenc-explorer" data-explorer="rope-scaling"></div>

(``data-scheme="t5"`` picks the bias explorer's first scheme). This hook replaces the line with
the explorer's labelled controls, its empty plots (their boxes sized by a ``viewBox``, so nothing
moves when they are drawn), a live readout and a table of values, in the page's language, and
the strings its script needs as JSON. The script, ``docs/assets/explorers/<name>.js``, is
imported by assets/posenc.js only when the explorer nears the viewport; without JavaScript the
controls stay hidden (a ``<noscript>`` says why) and the page's static figure is what is left,
as in print. The block is left out of the search index (``data-search-exclude``, removed once the
page is indexed, as hooks/figures.py does for figures); it is a ``<section>`` holding no other
section, because the search plugin ends an exclusion at the first closing tag of the same name.

The scripts draw; posenc computes: the numbers an explorer shows for each setting its controls
offer are written at build time by hooks/explorer_data.py (``on_post_build``, into
``assets/explorers/data/`` of the built site; computed again only when posenc or the explorers'
data code changed), and a script fetches the file a setting needs when it first needs it.

The labels and controls are data, in hooks/explorer_specs.py; this module renders them. Each
label is an (English, Chinese) pair, and ``[[term]]`` in a Chinese label is the glossary's
Chinese form of that English term, read from hooks/terms.yml, the one source of the site's
Chinese terms (an unknown term stops the build). A page with an explorer gets the explorers'
stylesheet (assets/explorers/explorers.css) in its ``<head>``; the other pages do not load it.
"""

from __future__ import annotations

import hashlib
import html
import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

# MkDocs puts this folder on sys.path while it loads the hook
import explorer_data
import yaml
from explorer_specs import EXPLORERS, LABELS
from mkdocs.plugins import event_priority
from mkdocs.utils import get_relative_url

TERMS_FILE = Path(__file__).resolve().parent / "terms.yml"
PLACEHOLDER = re.compile(
    r'<div class="posenc-explorer" data-explorer="(?P<name>[a-z0-9-]+)"'
    r'(?: data-scheme="(?P<scheme>[a-z0-9]+)")?>\s*</div>'
)
MARK = ' data-search-exclude="explorer"'
TERM = re.compile(r"\[\[([^\]]+)\]\]")
STYLESHEET = "assets/explorers/explorers.css"


def _terms() -> dict[str, str]:
    entries = yaml.safe_load(TERMS_FILE.read_text(encoding="utf-8")) or []
    return {str(e["en"]): str(e["zh"]) for e in entries if isinstance(e, dict) and e.get("zh")}


_TERMS: dict[str, str] = {}


def zh_text(text: str) -> str:
    """A Chinese label with each ``[[English term]]`` replaced by the glossary's Chinese term."""
    if not _TERMS:
        _TERMS.update(_terms())

    def term(m: re.Match[str]) -> str:
        if m[1] not in _TERMS:
            raise KeyError(
                f"explorer label names [[{m[1]}]], which is not an en term of {TERMS_FILE}"
            )
        return _TERMS[m[1]]

    return TERM.sub(term, text)


def label(key: str, lang: str) -> str:
    en, zh = LABELS[key]
    return en if lang == "en" else zh_text(zh)


def _esc(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _option_label(option: str, lang: str) -> str:
    return option[1:] if option.startswith("=") else label(option, lang)


def _control(name: str, spec: dict[str, Any], value: Any, lang: str) -> str:
    ident = f"explorer-{name}-{spec['name']}"
    text = _esc(label(spec["label"], lang))
    if spec["kind"] == "select":
        options = "".join(
            f'<option value="{_esc(v)}"{" selected" if v == str(value) else ""}>'
            f"{_esc(_option_label(shown, lang))}</option>"
            for v, shown in spec["options"]
        )
        field = f'<select id="{ident}" name="{spec["name"]}">{options}</select>'
    else:
        kind = "range" if spec["kind"] == "range" else "number"
        extra = ' inputmode="numeric"' if kind == "number" else ""
        field = (
            f'<input id="{ident}" name="{spec["name"]}" type="{kind}" min="{spec["min"]}" '
            f'max="{spec["max"]}" step="{spec["step"]}" value="{value}"{extra}>'
        )
        if kind == "range":
            field += f'<output for="{ident}" aria-hidden="true">{value}</output>'
    return (
        f'<div class="posenc-explorer__field" data-control="{spec["name"]}">'
        f'<label for="{ident}">{text}</label>{field}</div>'
    )


def _strings(value: Any, lang: str) -> Any:
    if isinstance(value, str):
        return zh_text(value) if lang == "zh" else value
    if isinstance(value, list):
        return [_strings(v, lang) for v in value]
    return {k: _strings(v, lang) for k, v in value.items()}


def render(name: str, lang: str, scheme: str | None = None) -> str:
    """The explorer's markup in ``lang`` (``en`` or ``zh``)."""
    spec = EXPLORERS[name]
    values = {c["name"]: c["default"] for c in spec["controls"]}
    if scheme:
        values.update(spec["schemes"][scheme])
    controls = "".join(_control(name, c, values[c["name"]], lang) for c in spec["controls"])
    plots = []
    for plot, key, box in spec["plots"]:
        aria = _esc(label(key, lang))
        if box == "canvas":
            plots.append(
                f'<div class="posenc-explorer__plot posenc-explorer__plot--map">'
                f'<canvas data-plot="{plot}" width="320" height="320" role="img" aria-label="{aria}">'
                "</canvas></div>"
            )
        elif box in ("tokens", "pairs"):
            plots.append(f'<div class="posenc-explorer__{box}" data-plot="{plot}"></div>')
        else:
            plots.append(
                f'<svg class="posenc-explorer__plot" data-plot="{plot}" viewBox="{box}" role="img" '
                f'aria-label="{aria}"></svg>'
            )
    text = json.dumps(_strings(spec["text"][lang], lang), ensure_ascii=False)
    text = text.replace("</", "<\\/")
    title = label(spec["title"], lang)
    lines = spec["readout_lines"]
    return (
        f'<section class="posenc-explorer" id="explorer-{name}" data-explorer="{name}"{MARK} '
        f'role="group" aria-labelledby="explorer-{name}-title">'
        f'<p class="posenc-explorer__title" id="explorer-{name}-title">'
        f"<strong>{_esc(label('explorer', lang))}</strong> · {_esc(title)}</p>"
        f'<div class="posenc-explorer__live">'
        f'<form class="posenc-explorer__controls" autocomplete="off">{controls}</form>'
        f'<div class="posenc-explorer__plots posenc-explorer__plots--{name}">{"".join(plots)}</div>'
        f'<div class="posenc-explorer__readout" aria-live="polite" style="--lines: {lines}"></div>'
        f'<details class="posenc-explorer__values"><summary>{_esc(label("values", lang))}</summary>'
        f'<div class="posenc-explorer__table" tabindex="0"></div></details>'
        f'<p class="posenc-explorer__share">{_esc(label("share", lang))}</p>'
        f'<script type="application/json" class="posenc-explorer__text">{text}</script>'
        "</div>"
        f'<noscript><p class="posenc-explorer__noscript">{_esc(label("noscript", lang))}</p>'
        "<style>.posenc-explorer__live{display:none}</style></noscript>"
        "</section>"
    )


def _lang(page: Any) -> str:
    return "zh" if page.file.src_uri.startswith("zh/") else "en"


@event_priority(60)  # before hooks/figures.py (50) and hooks/katex.py read the page for search
def on_page_content(html_text: str, page: Any, **kwargs: Any) -> str:
    if 'class="posenc-explorer"' not in html_text:
        return html_text
    lang = _lang(page)
    return PLACEHOLDER.sub(lambda m: render(m["name"], lang, m["scheme"]), html_text)


@event_priority(-200)  # after the search plugin (0) has read the page
def on_page_context(context: Any, page: Any, **kwargs: Any) -> Any:
    page.content = page.content.replace(MARK, "")
    return context


def on_post_page(output: str, page: Any, **kwargs: Any) -> str:
    """The explorers' stylesheet, in the ``<head>`` of the pages that hold one (so that each box
    has its size before the page is first painted)."""
    if 'class="posenc-explorer"' not in output:
        return output
    href = get_relative_url(STYLESHEET, page.url)
    return output.replace("</head>", f'<link rel="stylesheet" href="{href}">\n</head>', 1)


def _data_salt() -> str:
    """A digest of what the data files are computed from: posenc's source and this folder's
    explorer code."""
    import posenc

    digest = hashlib.sha256()
    here = Path(__file__).resolve().parent
    sources = sorted(Path(posenc.__file__).resolve().parent.rglob("*.py"))
    for path in [*sources, here / "explorer_data.py", here / "explorer_specs.py"]:
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def on_post_build(config: Any, **kwargs: Any) -> None:
    """The explorers' numbers, computed by posenc (hooks/explorer_data.py), as files of the
    site; the Chinese build shares the English one's assets. They are kept in
    ``.cache/explorers/<digest>/`` (git ignores it; the 3 newest sets) and copied from there
    while posenc and the explorers' data code are unchanged (computing them takes seconds)."""
    if config.theme.get("language", "en") != "en":
        return
    folder = Path(config.site_dir) / explorer_data.FOLDER
    stamp = folder / "salt"
    salt = _data_salt()
    if stamp.is_file() and stamp.read_text(encoding="utf-8") == salt:
        return  # mkdocs serve: written by an earlier build from the same code
    config_file = getattr(config, "config_file_path", None)
    root = Path(config_file).resolve().parent if config_file else Path.cwd()
    cache = root / ".cache" / "explorers"
    kept = cache / salt
    try:
        if not (kept / "salt").is_file():
            # written beside, then renamed: a build running at the same time never reads a
            # half-written set (if it renamed its own first, this one is dropped)
            fresh = cache / f".{salt}.{os.getpid()}"
            explorer_data.write(fresh)
            (fresh / "salt").write_text(salt, encoding="utf-8")
            try:
                fresh.rename(kept)
            except OSError:
                shutil.rmtree(fresh, ignore_errors=True)
            sets = [p for p in cache.iterdir() if not p.name.startswith(".")]
            for old in sorted(sets, key=lambda p: p.stat().st_mtime)[:-3]:  # the newest 3 kept
                shutil.rmtree(old, ignore_errors=True)
    except OSError:  # a read-only checkout: written into the site only
        explorer_data.write(folder)
        stamp.write_text(salt, encoding="utf-8")
        return
    shutil.copytree(kept, folder, dirs_exist_ok=True)

"""The API pages (api.md and its sub-pages api-*.md) in the page's language: mkdocstrings'
labels and the titles of the docstring boxes (See Also, Notes, References) are Chinese on the zh
pages and English on the en pages (hooks/api_locale.py); the zh pages say that the docstrings are
in English. Every public function and class is on one API page in both languages, and no API
page is a huge DOM."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from sitecheck import api_pages

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"

pytestmark = pytest.mark.site

_spec = importlib.util.spec_from_file_location("api_locale", ROOT / "hooks" / "api_locale.py")
assert _spec is not None and _spec.loader is not None
api_locale = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(api_locale)

BOX = (
    '<div class="doc-contents"><details class="see-also" open>\n  <summary>See Also</summary>\n'
    '  <p>x</p></details><details class="note" open><summary>Notes</summary></details>'
    "<p><summary>Notes</summary> outside a box stays</p></div>"
)


def _page(src_uri: str) -> SimpleNamespace:
    return SimpleNamespace(file=SimpleNamespace(src_uri=src_uri))


def test_box_titles_are_translated_on_zh_pages_only() -> None:
    zh = api_locale.on_page_content(BOX, _page("zh/api.md"), None, None)
    assert "<summary>另请参阅</summary>" in zh and "<summary>说明</summary>" in zh
    assert zh.count("Notes") == 1  # the <summary> outside a <details> box is left alone
    assert api_locale.on_page_content(BOX, _page("api.md"), None, None) == BOX
    assert api_locale.on_page_content(BOX, _page("en/api.md"), None, None) == BOX


def test_every_box_heading_used_by_the_docstrings_has_a_translation() -> None:
    headings = set()
    for path in (ROOT / "src" / "posenc").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        headings |= set(re.findall(r"^ {4,}([A-Z][A-Za-z ]+)\n {4,}-{3,}$", text, re.M))
    # griffe's own numpydoc sections, which mkdocstrings' locale translates.
    own = {"Parameters", "Other Parameters", "Returns", "Yields", "Receives", "Raises", "Warns"}
    own |= {"Examples", "Attributes", "Methods", "Functions", "Classes", "Modules", "Deprecated"}
    boxes = {h for h in headings - own if " " not in h or h == "See Also"}
    assert {"See Also", "Notes", "References"} <= boxes
    assert boxes <= set(api_locale.ZH_TITLES), boxes - set(api_locale.ZH_TITLES)


def _built(built_site, lang: str, page: str) -> str:
    folder = built_site.path / ("zh" if lang == "zh" else "") / page.removesuffix(".md")
    return (folder / "index.html").read_text(encoding="utf-8")


def test_built_api_pages_in_their_language(built_site) -> None:
    """Every API page (the overview and its sub-pages) in its own language."""
    box = r'<details class="[^"]*"[^>]*>\s*<summary>([^<]*)</summary>'
    en_titles: set[str] = set()
    zh_titles: set[str] = set()
    for page in api_pages():
        en, zh = _built(built_site, "en", page), _built(built_site, "zh", page)
        en_titles |= set(re.findall(box, en))
        zh_titles |= set(re.findall(box, zh))
        if "doc-contents" in en:  # a page with mkdocstrings output
            assert "参数：" in zh and "Parameters:" in en and "Parameters:" not in zh, page
            assert "文档字符串是英文的" in zh, page  # the zh page says so
    assert {"See Also", "Notes", "References"} <= en_titles
    assert {"另请参阅", "说明", "参考文献"} <= zh_titles
    assert not zh_titles & set(api_locale.ZH_TITLES), zh_titles
    en, zh = _built(built_site, "en", "api.md"), _built(built_site, "zh", "api.md")
    assert "文档字符串（docstring）是英文的" in zh
    assert 'id="stability"' in zh and 'id="stability"' in en
    assert 'id="positions"' in zh and 'id="positions"' in en


# The API reference is split so that no page is one huge DOM (issue 13: Lighthouse on a phone
# spent ~1.5 s in style and layout over the 17,400 elements of the one-page reference).
MAX_ELEMENTS = 4500


def test_no_api_page_is_a_huge_dom(built_site) -> None:
    counts = {
        f"{lang}/{page}": len(re.findall(r"<[a-zA-Z]", _built(built_site, lang, page)))
        for lang in ("en", "zh")
        for page in api_pages()
    }
    assert len(counts) == 2 * len(api_pages()) > 2, counts
    assert min(counts.values()) > 300, counts  # the counting works at all
    assert max(counts.values()) <= MAX_ELEMENTS, counts


def _documented(lang: str) -> list[tuple[str, str]]:
    """The ::: blocks of every API page of ``lang``, page by page, as (page, identifier)."""
    return [
        (page, name)
        for page in api_pages(lang)
        for name in re.findall(r"^::: (\S+)", (DOCS / lang / page).read_text("utf-8"), re.M)
    ]


def test_every_public_callable_is_on_an_api_page_in_both_languages() -> None:
    """Each public function and class of posenc, posenc.torch, posenc.compat and posenc.hf has
    its ::: block on exactly one API page; the Chinese twin of each page has the same blocks."""
    import importlib

    en, zh = _documented("en"), _documented("zh")
    assert en == zh, set(en) ^ set(zh)
    identifiers = [name for _, name in en]
    assert len(identifiers) == len(set(identifiers)), "a name documented twice"
    missing = []
    for modname in ("posenc", "posenc.torch", "posenc.compat", "posenc.hf"):
        module = importlib.import_module(modname)
        for name in module.__all__:
            obj = getattr(module, name)
            if not callable(obj):
                continue  # a constant (posenc.hf.MODELS, ...): documented by its functions
            # posenc.sinusoidal is both a module and its function: documented by full path
            spelled = {f"{modname}.{name}", f"{obj.__module__}.{obj.__qualname__}"}
            if not spelled & set(identifiers):
                missing.append(f"{modname}.{name}")
    assert not missing, f"public names on no API page: {missing}"

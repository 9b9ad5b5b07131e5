"""The API pages in the page's language: mkdocstrings' labels and the titles of the docstring
boxes (See Also, Notes, References) are Chinese on the zh page and English on the en page
(hooks/api_locale.py); the zh page says that the docstrings are in English."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parent.parent

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


def test_built_api_pages_in_their_language(built_site) -> None:
    zh = (built_site.path / "zh" / "api" / "index.html").read_text(encoding="utf-8")
    en = (built_site.path / "api" / "index.html").read_text(encoding="utf-8")
    zh_titles = re.findall(r'<details class="[^"]*"[^>]*>\s*<summary>([^<]*)</summary>', zh)
    en_titles = re.findall(r'<details class="[^"]*"[^>]*>\s*<summary>([^<]*)</summary>', en)
    assert {"See Also", "Notes", "References"} <= set(en_titles)
    assert {"另请参阅", "说明", "参考文献"} <= set(zh_titles)
    assert not set(zh_titles) & set(api_locale.ZH_TITLES), set(zh_titles)
    assert "参数：" in zh and "Parameters:" in en and "Parameters:" not in zh
    assert "文档字符串（docstring）是英文的" in zh
    assert 'id="stability"' in zh and 'id="stability"' in en

"""The site: strict build with no warnings, and every page twinned across languages."""

from __future__ import annotations

import re
import sys

import pytest
import yaml

from sitecheck import DOCS, LANGS, ROOT, pages, parse

pytestmark = pytest.mark.site


def test_every_page_has_its_twin():
    assert pages("en"), "no pages under docs/en"
    assert pages("en") == pages("zh")


@pytest.mark.parametrize("page", pages("en"))
def test_twins_share_outline_anchors_and_code(page):
    en_headings, en_code = parse((DOCS / "en" / page).read_text(encoding="utf-8"))
    zh_headings, zh_code = parse((DOCS / "zh" / page).read_text(encoding="utf-8"))
    missing = [title for level, anchor, title in en_headings + zh_headings if not anchor]
    assert not missing, f"headings without an explicit {{ #anchor }}: {missing}"
    assert [(lvl, a) for lvl, a, _ in en_headings] == [(lvl, a) for lvl, a, _ in zh_headings]
    assert len(en_code) == len(zh_code), "different number of code blocks"
    for n, (a, b) in enumerate(zip(en_code, zh_code)):
        assert a == b, f"code block {n} differs between en and zh"


def test_anchors_are_unique_per_page():
    for lang in LANGS:
        for page in pages(lang):
            anchors = [a for _, a, _ in parse((DOCS / lang / page).read_text(encoding="utf-8"))[0]]
            dupes = {a for a in anchors if anchors.count(a) > 1}
            assert not dupes, f"{lang}/{page}: repeated anchors {dupes}"


def _nav_files(nav):
    for item in nav:
        value = next(iter(item.values())) if isinstance(item, dict) else item
        if isinstance(value, list):
            yield from _nav_files(value)
        else:
            yield value


class _Loader(yaml.SafeLoader):
    pass


_Loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)


def test_every_page_is_in_the_nav():
    config = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=_Loader)
    assert sorted(_nav_files(config["nav"])) == pages("en")


def test_chinese_pages_never_translate_transformer():
    for page in pages("zh"):
        assert "变压器" not in (DOCS / "zh" / page).read_text(encoding="utf-8"), page


def test_strict_build_has_no_warnings(built_site):
    log = built_site.log
    assert built_site.returncode == 0, log[-3000:]
    warnings = [line for line in log.splitlines() if re.match(r"^(WARNING|ERROR)\b", line)]
    assert not warnings, "\n".join(warnings)
    for lang_prefix in ("", "zh/"):
        for page in pages("en"):
            stem = page[:-3]
            html = built_site.path / lang_prefix / ("index.html" if stem == "index" else f"{stem}/index.html")
            assert html.is_file(), html


def test_site_requests_no_third_party_host(built_site):
    """No page references a script, stylesheet, font or image on another host."""
    pattern = re.compile(r"""<(?:script|link|img|iframe|source)\b[^>]*?(?:src|href)=["'](https?:)?//""", re.I)
    for html in built_site.path.rglob("*.html"):
        text = html.read_text(encoding="utf-8")
        for m in pattern.finditer(text):
            tag = text[m.start(): text.index(">", m.start()) + 1]
            # hreflang alternates and the canonical link name our own site_url (127.0.0.1)
            assert "127.0.0.1" in tag or 'rel="canonical"' in tag or "hreflang" in tag, f"{html}: {tag}"

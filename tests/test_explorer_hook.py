"""hooks/explorers.py (with its data, hooks/explorer_specs.py) as functions, without a build: the
placeholder line becomes labelled controls in the page's language, the labels' glossary terms
resolve, both languages get the same controls, the stylesheet is linked only where an explorer
is, and each page places its explorers with the same line in both languages.

The explorers in a browser (numbers equal to posenc, URL state, keyboard, axe, layout) are in
tests/test_browser_explorers.py.
"""

from __future__ import annotations

import json
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path
from types import SimpleNamespace

import pytest

from ci_rule import require
from sitecheck import import_hook

ROOT = Path(__file__).resolve().parent.parent
require("mkdocs")  # the hook imports it: the site's toolchain (not on a package-only leg)
explorers = import_hook("explorers")

NAMES = sorted(explorers.EXPLORERS)


class _Controls(HTMLParser):
    """Ids of labelled elements, the labels' targets, and each control's name and options."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.targets: list[str] = []
        self.controls: list[tuple[str, str, str]] = []
        self.text = ""
        self._script = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"] or "")
        if tag == "label":
            self.targets.append(a.get("for") or "")
        if tag in ("select", "input"):
            self.controls.append((tag, a.get("name") or "", a.get("id") or ""))
        if tag == "option":
            self.controls.append(
                ("option", a.get("value") or "", "selected" if "selected" in a else "")
            )
        self._script = tag == "script"

    def handle_data(self, data):
        if self._script:
            self.text += data


def _page(src_uri: str) -> SimpleNamespace:
    url = src_uri.removesuffix(".md") + "/"
    return SimpleNamespace(file=SimpleNamespace(src_uri=src_uri), url=url)


@pytest.mark.parametrize("name", NAMES)
def test_every_control_is_labelled_and_both_languages_match(name):
    parsed = {}
    for lang in ("en", "zh"):
        p = _Controls()
        p.feed(explorers.render(name, lang))
        assert p.targets and set(p.targets) <= p.ids, (lang, set(p.targets) - p.ids)
        controls = [c for c in p.controls if c[0] in ("select", "input")]
        assert {c[2] for c in controls} == set(p.targets)  # one label per control
        parsed[lang] = (p.controls, json.loads(p.text))
    assert parsed["en"][0] == parsed["zh"][0]  # same controls, options and defaults
    en, zh = parsed["en"][1], parsed["zh"][1]
    assert en.keys() == zh.keys()
    for key in en:
        assert type(en[key]) is type(zh[key]), key
        if isinstance(en[key], str):  # the same placeholders in both languages
            assert sorted(re.findall(r"\{\w+\}", en[key])) == sorted(
                re.findall(r"\{\w+\}", zh[key])
            ), key
        else:
            assert len(en[key]) == len(zh[key]), key


def test_control_names_are_not_properties_of_form_elements():
    for spec in explorers.EXPLORERS.values():
        names = [c["name"] for c in spec["controls"]]
        assert len(set(names)) == len(names)
        assert not set(names) & {"length", "item", "namedItem"}, names


def test_chinese_labels_take_the_glossarys_terms():
    zh = explorers.render("rope-scaling", "zh")
    assert "[[" not in zh and "训练长度" in zh and "底数" in zh
    assert "[[" not in explorers.render("rope-decay", "zh") and "交错配对" in explorers.render(
        "rope-decay", "zh"
    )
    with pytest.raises(KeyError, match="not an en term"):
        explorers.zh_text("[[no such term]]")


def test_the_json_cannot_close_its_script():
    """The strings ride in a <script type="application/json">: the first "</script>" after it
    must be its own end (the JSON up to there parses, with every key)."""
    for name in NAMES:
        for lang in ("en", "zh"):
            body = explorers.render(name, lang).split('class="posenc-explorer__text">', 1)[1]
            text = json.loads(body.split("</script>", 1)[0])
            assert text.keys() == explorers.EXPLORERS[name]["text"][lang].keys()


def test_placeholder_becomes_the_explorer_and_the_stylesheet_follows():
    line = '<p>x</p>\n<div class="posenc-explorer" data-explorer="rope-decay"></div>\n<p>y</p>'
    out = explorers.on_page_content(line, page=_page("zh/rope.md"))
    assert 'id="explorer-rope-decay"' in out and "<p>x</p>" in out and "<p>y</p>" in out
    assert explorers.MARK in out  # kept out of the search index
    page = _page("zh/rope.md")
    page.content = out
    explorers.on_page_context({}, page=page)
    assert explorers.MARK not in page.content
    html = f"<html><head></head><body>{out}</body></html>"
    assert 'href="../../assets/explorers/explorers.css"' in explorers.on_post_page(
        html, page=_page("zh/rope.md")
    )
    assert 'href="../assets/explorers/explorers.css"' in explorers.on_post_page(
        html, page=_page("rope.md")
    )
    plain = "<html><head></head><body><p>no explorer</p></body></html>"
    assert explorers.on_post_page(plain, page=_page("rope.md")) == plain


def test_pages_place_explorers_with_the_same_line_in_both_languages():
    placed = {}
    for en in sorted((ROOT / "docs" / "en").glob("*.md")):
        lines = [
            x for x in en.read_text(encoding="utf-8").splitlines() if 'class="posenc-explorer"' in x
        ]
        zh = (ROOT / "docs" / "zh" / en.name).read_text(encoding="utf-8").splitlines()
        assert lines == [x for x in zh if 'class="posenc-explorer"' in x], en.name
        for x in lines:
            m = explorers.PLACEHOLDER.fullmatch(x)
            assert m and m["name"] in explorers.EXPLORERS, (en.name, x)
            placed[m["name"]] = en.name
    assert placed.get("rope-scaling") == "rope-scaling.md" and placed.get("rope-decay") == "rope.md"


def test_a_notebook_says_where_the_explorer_is():
    """hooks/notebook_prose.py: the explorer's line becomes a note with a link to it on the site."""
    Prose = import_hook("notebook_prose").Prose
    for lang, words in (("en", "interactive explorer"), ("zh", "交互图")):
        prose = Prose("https://x.test/rope/", "https://x.test/", lang)
        for line in (
            "## Decay { #decay-explorer }",
            "",
            '<div class="posenc-explorer" data-explorer="rope-decay"></div>',
        ):
            prose.add(line)
        prose.flush()
        text = "\n".join(prose.cells)
        assert "posenc-explorer" not in text and words in text
        assert "(https://x.test/rope/#decay-explorer)" in text


def test_the_build_writes_the_explorers_numbers_once(tmp_path, monkeypatch):
    """on_post_build writes hooks/explorer_data.py's files into the site (the English build;
    the Chinese one shares its assets), one per setting file the scripts fetch; they are
    computed once and kept in .cache/explorers/ while posenc and the data code are unchanged."""
    data = import_hook("explorer_data")
    assert len(data.names()) == 7 * 3 * 4 * 4 + 4 * 5 * 2 * 3 + 1 + 3
    makers = list(data._makers())
    few = [makers[0], makers[-1]]  # a rope-scaling file and a T5 one: quick to compute
    monkeypatch.setattr(data, "_makers", lambda: iter(few))
    salt = explorers._data_salt()
    assert len(salt) == 64 and salt == explorers._data_salt()
    # the source does not change during the test (a checkout others edit may)
    monkeypatch.setattr(explorers, "_data_salt", lambda: salt)
    site = tmp_path / "site"
    config = SimpleNamespace(
        site_dir=str(site), theme={"language": "zh"}, config_file_path=str(tmp_path / "mkdocs.yml")
    )
    explorers.on_post_build(config)
    assert not (site / data.FOLDER).exists()
    config.theme = {"language": "en"}
    explorers.on_post_build(config)
    folder = site / data.FOLDER
    written = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.json"))
    assert written == sorted(name for name, _ in few)
    assert json.loads((folder / few[0][0]).read_text(encoding="utf-8")) == json.loads(
        json.dumps(few[0][1]())
    )
    # the grid is the controls' own options
    for explorer, names in (
        ("rope-scaling", ("method", "base", "dim", "trained", "factor", "current")),
        ("rope-decay", ("base", "dim", "pairing", "vector", "range", "key", "probe")),
    ):
        spec = {c["name"]: c for c in explorers.EXPLORERS[explorer]["controls"]}
        for name in names:
            assert data.options(explorer, name) == tuple(v for v, _ in spec[name]["options"])
    calls = []
    monkeypatch.setattr(
        data, "write", lambda where: calls.append(where) or where.mkdir(parents=True)
    )
    explorers.on_post_build(config)
    assert calls == []  # unchanged: not written again
    shutil.rmtree(site)
    explorers.on_post_build(config)  # a new build of the same code: copied from the cache
    assert calls == [] and sorted(p.name for p in folder.rglob("*.json")) == sorted(
        Path(name).name for name in data.names()
    )
    (folder / "salt").write_text("another posenc", encoding="utf-8")
    cache = tmp_path / ".cache" / "explorers"
    (kept,) = cache.iterdir()
    shutil.rmtree(kept)
    explorers.on_post_build(config)
    assert len(calls) == 1 and calls[0].parent == cache and calls[0].name.startswith(".")
    assert [p.name for p in cache.iterdir()] == [kept.name]  # renamed into place

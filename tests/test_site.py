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
    for n, (a, b) in enumerate(zip(en_code, zh_code, strict=True)):
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
# site_url, repo_url: !ENV [NAME, default] -> the default (the value of a build without the variable)
_Loader.add_constructor("!ENV", lambda loader, node: loader.construct_sequence(node)[-1])


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
            html = (
                built_site.path
                / lang_prefix
                / ("index.html" if stem == "index" else f"{stem}/index.html")
            )
            assert html.is_file(), html


def test_site_requests_no_third_party_host(built_site):
    """No page references a script, stylesheet, font or image on another host."""
    pattern = re.compile(
        r"""<(?:script|link|img|iframe|source)\b[^>]*?(?:src|href)=["'](https?:)?//""", re.I
    )
    for html in built_site.path.rglob("*.html"):
        text = html.read_text(encoding="utf-8")
        for m in pattern.finditer(text):
            tag = text[m.start() : text.index(">", m.start()) + 1]
            # hreflang alternates and the canonical link name our own site_url (127.0.0.1)
            assert "127.0.0.1" in tag or 'rel="canonical"' in tag or "hreflang" in tag, (
                f"{html}: {tag}"
            )


# --- The site for its readers (issue 9): runnable pages, citation, metadata, deployability ---

import json  # noqa: E402
import os  # noqa: E402
import subprocess  # noqa: E402


def _hook(name: str):
    """A module of hooks/, imported when a test needs it: zh_search imports mkdocs, which the
    non-cpu legs (where this file is skipped) may not have, so nothing is imported at collection."""
    import importlib

    sys.path.insert(0, str(ROOT / "hooks"))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.pop(0)


CODE_BOX_COLUMNS = 80  # what a code box shows at 1280 px (Material, both sidebars open)


def _html(built_site, lang, page):
    stem = page[:-3]
    rel = "index.html" if stem == "index" else f"{stem}/index.html"
    return built_site.path / ("zh/" if lang == "zh" else "") / rel


@pytest.mark.parametrize("lang", LANGS)
def test_code_lines_fit_the_code_box(lang):
    """No code line is longer than a code box shows at 1280 px, so no comment is cut mid-word."""
    long = []
    for page in pages(lang):
        for _, body in parse((DOCS / lang / page).read_text(encoding="utf-8"))[1]:
            long += [
                f"{page}: {line}" for line in body.splitlines() if len(line) > CODE_BOX_COLUMNS
            ]
    assert not long, f"{len(long)} code lines over {CODE_BOX_COLUMNS} columns:\n" + "\n".join(
        long[:20]
    )


def test_pages_with_code_offer_notebook_and_script(built_site):
    """Every page with code links a notebook and a script generated from its own code blocks:
    plain code cells (no prompts, no expected output), the same code in both languages."""
    assert built_site.returncode == 0, built_site.log[-3000:]
    notebooks = _hook("notebooks")
    with_code = 0
    for page in pages("en"):
        cells = {
            lang: [
                notebooks.plain_code(b)
                for b in notebooks.code_blocks((DOCS / lang / page).read_text(encoding="utf-8"))
            ]
            for lang in LANGS
        }
        cells = {lang: [c for c in cs if c.strip()] for lang, cs in cells.items()}
        stem = page[:-3]
        for lang in LANGS:
            folder = _html(built_site, lang, page).parent
            html = _html(built_site, lang, page).read_text(encoding="utf-8")
            if not cells[lang]:
                assert f'href="{stem}.ipynb"' not in html
                continue
            with_code += 1
            assert f'href="{stem}.ipynb" download' in html and f'href="{stem}.py" download' in html
            nb = json.loads((folder / f"{stem}.ipynb").read_text(encoding="utf-8"))
            assert nb["nbformat"] == 4 and nb["cells"][0]["cell_type"] == "markdown"
            code = ["".join(c["source"]) for c in nb["cells"][1:]]
            assert all(c["cell_type"] == "code" and c["outputs"] == [] for c in nb["cells"][1:])
            assert code == cells[lang]
            script = (folder / f"{stem}.py").read_text(encoding="utf-8")
            assert script.split("\n# %%\n", 1)[1] == "\n# %%\n".join(c + "\n" for c in code)
            assert not any(
                line.startswith((">>> ", "... ")) for c in code for line in c.splitlines()
            )
        assert cells["en"] == cells["zh"]
    assert with_code >= 2 * 20


def test_generated_scripts_run_top_to_bottom(built_site):
    """Every generated script runs to the end, each in a fresh namespace, all in one process,
    from the repository root as the page doctests do (the performance page reads bench.json).
    The Chinese scripts hold the same code: the test above holds the cells equal."""
    assert built_site.returncode == 0, built_site.log[-3000:]
    scripts = sorted(p for p in built_site.path.glob("*/*.py")) + sorted(
        built_site.path.glob("*.py")
    )
    assert len(scripts) >= 20
    runner = (
        "import runpy, sys, matplotlib\n"
        "matplotlib.use('Agg')\n"
        "import numpy as np\n"
        "for path in sys.argv[1:]:\n"
        "    np.random.seed(0)\n"
        "    try:\n"
        "        runpy.run_path(path, run_name='__main__')\n"
        "    except BaseException as err:\n"
        "        print('FAILED', path, type(err).__name__, err, file=sys.stderr)\n"
        "        raise\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", runner, *map(str, scripts)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "MPLBACKEND": "Agg"},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]


@pytest.mark.parametrize("lang", LANGS)
def test_every_page_cites_itself_and_states_its_versions(built_site, lang):
    """A "Cite this page" BibTeX entry with the page's canonical URL, and the date and library
    versions from bench.json (written by `make bench`), on every page of both languages."""
    assert built_site.returncode == 0, built_site.log[-3000:]
    record = json.loads((DOCS / "assets" / "bench.json").read_text(encoding="utf-8"))
    stated = [f"{name} {record['machine'][name]}" for name in ("torch", "transformers", "timm")]
    for page in pages(lang):
        html = _html(built_site, lang, page).read_text(encoding="utf-8")
        canonical = re.search(r'<link rel="canonical" href="([^"]+)"', html).group(1)
        cite = re.search(r'<details class="posenc-cite">.*?<code[^>]*>(.*?)</code>', html, re.S)
        assert cite, page
        entry = cite.group(1)
        assert entry.startswith("@misc{posenc-") and f"\\url{{{canonical}}}" in entry, entry
        assert "year" in entry and record["date"][:4] in entry
        checked = re.search(r'<p class="posenc-checked">(.*?)</p>', html, re.S).group(1)
        assert record["date"][:10] in checked and all(s in checked for s in stated), checked
        # the source in parentheses after the sentence: full-width ones after the Chinese full
        # stop, with no space (issue 23: "。 (由 make bench ...)")
        note = re.sub(r"<[^>]+>", "", checked).strip()
        if lang == "zh":
            assert "(" not in note and ")" not in note and "。（由" in note, note
            assert note.endswith("）"), note
        else:
            assert note.endswith(". (recorded by make bench in bench.json)"), note


def test_citation_cff_matches_the_package():
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert cff["cff-version"] == "1.2.0" and cff["title"] and cff["authors"]
    from posenc import __version__

    assert str(cff["version"]) == __version__


@pytest.mark.parametrize("lang", LANGS)
def test_pages_have_descriptions_and_open_graph(built_site, lang):
    """Each page describes itself (its own words, not the site's tagline) for search results and
    link previews, with Open Graph tags naming its canonical URL and language."""
    descriptions = set()
    for page in pages(lang):
        html = _html(built_site, lang, page).read_text(encoding="utf-8")
        desc = re.search(r'<meta name="description" content="([^"]+)"', html).group(1)
        og = dict(re.findall(r'<meta property="og:([a-z:]+)" content="([^"]*)"', html))
        canonical = re.search(r'<link rel="canonical" href="([^"]+)"', html).group(1)
        assert og["url"] == canonical and og["description"] == desc and og["title"], page
        assert og["locale"] == ("zh_CN" if lang == "zh" else "en_US")
        assert "\\(" not in desc and "$" not in desc, desc
        descriptions.add(desc)
    assert len(descriptions) == len(pages(lang))


def test_no_alternate_links_in_the_head_and_hreflang_in_the_sitemap(built_site):
    """Material fetches <alternate>/sitemap.xml for each <link rel=alternate> (two console 404s
    per page with per-page alternates), so the head has none; the sitemap pairs the twins."""
    for lang in LANGS:
        for page in pages(lang):
            html = _html(built_site, lang, page).read_text(encoding="utf-8")
            assert not re.search(r'<link rel="alternate"[^>]*hreflang', html), page
    sitemap = (built_site.path / "sitemap.xml").read_text(encoding="utf-8")
    site_url = _config()["site_url"]
    assert f'hreflang="zh" href="{site_url}zh/rope/"' in sitemap
    assert f'hreflang="en" href="{site_url}rope/"' in sitemap


def test_404_pages_in_their_language_with_links_from_site_url(built_site):
    from urllib.parse import urlsplit

    prefix = urlsplit(_config()["site_url"]).path
    for rel, lang in (("404.html", "en"), ("zh/404.html", "zh")):
        html = (built_site.path / rel).read_text(encoding="utf-8")
        assert f'<html lang="{lang}"' in html, rel
        links = re.findall(r'(?:href|src)="([^"#]+)"', html)
        local = [u for u in links if not u.startswith(("http:", "https:", "data:"))]
        assert local and all(u.startswith(prefix) for u in local), [
            u for u in local if not u.startswith(prefix)
        ]
    assert 'href="/zh/"' in (built_site.path / "zh/404.html").read_text(encoding="utf-8")


def test_site_url_and_source_links_come_from_the_environment(monkeypatch):
    """SITE_URL sets the site's URL (a subpath included); REPO_URL adds edit and view-source
    links to docs/<lang>/<page>.md on the main branch; without REPO_URL there is no link.
    The config is read by MkDocs 1.6's loader (Material's dependency, installed beside
    ProperDocs, whose loader is the same code): ProperDocs' own classes would need its import
    redirection (properdocs.replacement) before anything in this process imports mkdocs."""
    from mkdocs.config import load_config
    from mkdocs.structure.files import File
    from mkdocs.structure.pages import Page

    monkeypatch.delenv("REPO_URL", raising=False)
    monkeypatch.delenv("EDIT_URI", raising=False)
    monkeypatch.delenv("SITE_URL", raising=False)
    config = load_config(str(ROOT / "mkdocs.yml"))
    assert config.site_url == "http://127.0.0.1:8000/" and config.repo_url is None
    monkeypatch.setenv("SITE_URL", "https://example.org/posenc/")
    monkeypatch.setenv("REPO_URL", "https://example.org/team/posenc")
    config = load_config(str(ROOT / "mkdocs.yml"))
    assert config.site_url == "https://example.org/posenc/"
    config = _hook("page_meta").on_config(config)
    f = File("en/rope.md", str(DOCS), "/tmp/site", use_directory_urls=True)
    page = Page("RoPE", f, config)
    assert page.edit_url == "https://example.org/team/posenc/edit/main/docs/en/rope.md"


def test_no_edit_link_without_a_repository(built_site):
    if os.environ.get("REPO_URL"):
        pytest.skip("REPO_URL is set for this build")
    html = _html(built_site, "en", "rope.md").read_text(encoding="utf-8")
    assert 'rel="edit"' not in html


def test_search_index_per_language_with_aliases(built_site):
    """One index per language; the Chinese one carries the glossary's aliases."""
    en = json.loads((built_site.path / "search" / "search_index.json").read_text(encoding="utf-8"))
    zh = json.loads(
        (built_site.path / "zh" / "search" / "search_index.json").read_text(encoding="utf-8")
    )
    assert en["docs"] and zh["docs"]
    assert not any(d["location"].startswith("zh/") for d in en["docs"])
    cjk = re.compile(r"[\u4e00-\u9fff]")
    assert sum(bool(cjk.search(d["title"])) for d in zh["docs"]) > len(zh["docs"]) // 2
    assert {d["location"].split("/")[0] for d in zh["docs"]} == {
        d["location"].split("/")[0] for d in en["docs"]
    }
    aliases = {a for d in zh["docs"] for a in d.get("alias", "").split("\u200b") if a}
    terms = _hook("zh_search").load_terms()
    assert terms, "hooks/terms.yml is missing"
    expected = {a for t in terms for a in t["aliases"]}
    assert {"插值", "长度外推", "旋转式位置编码", "词向量"} <= aliases <= expected


def _config():
    return yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=_Loader)


def test_glossary_identifiers_rank_the_section_that_defines_them(built_site):
    """Issue 23: an identifier the glossary names among a term's forms (rotate_half,
    position_ids) is carried, in both indexes, by the section the glossary links for the term,
    in a field boosted above titles; every such section exists."""
    zh_search = _hook("zh_search")
    for lang, rel in (("en", "search"), ("zh", "zh/search")):
        defines = zh_search.definitions(lang)
        assert defines["rope/#pairings"] == ["rotate_half"]
        assert "position_ids" in defines["practice/"]
        index = json.loads((built_site.path / rel / "search_index.json").read_text("utf-8"))
        fields = index["config"]["fields"]
        assert fields["defines"]["boost"] > fields["title"]["boost"]
        carried = {d["location"]: d["defines"].split() for d in index["docs"] if "defines" in d}
        assert carried == defines, lang

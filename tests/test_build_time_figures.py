"""Figures are drawn once per build (issue 9, build time): matplotlib draws a figure for the English
page, and its Chinese twin is that SVG with the words translated (hooks/site_figures.py, hooks/figures.py).
So the two show the same data and layout, and the Chinese one is Chinese throughout."""

from __future__ import annotations

import html
import re
import types

import pytest
import site_figures as plots
from site_figures_zh import translate

from ci_rule import require, under_ci
from sitecheck import pages

pytestmark = pytest.mark.site  # the site's build code: device-independent, run in the cpu leg

TEXT = re.compile(r"<text\b[^>]*>(.*?)</text>", re.S)
FIGURE = re.compile(r'<div class="posenc-figure"[^>]*>\s*(<svg.*?</svg>)', re.S)


def _shape(svg: str) -> str:
    """The SVG without its words: paths, marks, images and where each text sits."""
    svg = TEXT.sub("<text/>", svg)
    svg = re.sub(r'\s(?:role|aria-label)="[^"]*"', "", svg)
    svg = re.sub(r"\bfig\d+-", "fig-", svg)  # the per-page id prefix
    # matplotlib names a clip path by a hash of its box and transform: a name, not a mark
    svg = re.sub(r"\bfig-p[0-9a-f]{10}\b", "fig-p", svg)
    svg = re.sub(
        r'(href|src)="(?:\.\./)+assets/figures/', r'\1="assets/figures/', svg
    )  # page depth
    return re.sub(r"\s+", " ", svg)


NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def _same_shape(a: str, b: str, tol: float = 0.05) -> bool:
    """The same SVG skeleton, and every coordinate within ``tol`` px: a translated label may
    move the constrained layout by a rounding step (84.9 vs 84.91), never by a mark."""
    if NUMBER.sub("#", a) != NUMBER.sub("#", b):
        return False
    xs, ys = NUMBER.findall(a), NUMBER.findall(b)
    return all(abs(float(x) - float(y)) <= tol for x, y in zip(xs, ys, strict=True))


def _words(svg: str) -> list[str]:
    """Each text's string (a mathtext label: its glyphs, one tspan each, joined)."""
    texts = [re.sub(r">\s+<", "><", t) for t in TEXT.findall(svg)]
    return [html.unescape(re.sub(r"<[^>]+>", "", t)).strip() for t in texts]


def _block() -> str:
    """A code block as the pages write one: mathtext labels, a rotated text, a legend."""
    fig, ax = plots.figure(4.0, 2.5)
    ax.plot([0, 1, 2], [0, 1, 4], label="sinusoidal")
    ax.plot([0, 1, 2], [4, 1, 0], label="$x_i$")
    ax.set_xlabel("relative position $j - i$")
    ax.set_ylabel("wavelength $\\lambda_i$")
    ax.set_title("bidirectional")
    ax.text(1.0, 2.0, "causal", rotation=30, ha="center")
    ax.legend()
    return plots.to_html(fig, alt="time relative to the fastest peer")


def _chosen_words() -> str:
    """A block that picks its words with page_language() (mrope.md, layer-patterns.md do)."""
    zh = plots.page_language() == "zh"
    fig, ax = plots.figure(4.0, 2.5)
    ax.bar([0, 1], [3, 1])
    ax.set_xlabel("配对索引 $i$" if zh else "pair index $i$")
    ax.set_title("分段" if zh else "bands")
    return plots.to_html(fig, alt="两种布局" if zh else "both layouts")


@pytest.fixture
def build(monkeypatch):
    """Run a block on the English page, then on its Chinese twin; count matplotlib's saves."""
    require("matplotlib")
    saves: list[int] = []
    save = plots._save
    monkeypatch.setattr(plots, "_save", lambda fig: saves.append(1) or save(fig))

    def run(block, langs=("en", "zh")):
        plots._set_page(None)  # a new build
        try:
            out = []
            for lang in langs:
                plots._set_page(f"{lang}/figures.md")
                out.append(block())
            return out, saves
        finally:
            plots._set_page(None)

    return run


@pytest.mark.parametrize("block", [_block, _chosen_words])
def test_chinese_figure_is_the_english_svg_with_chinese_words(build, block):
    (en, zh), saves = build(block)
    assert len(saves) == 1  # matplotlib drew the figure once, for both languages
    assert _shape(zh) == _shape(en)  # same data, marks and text positions
    assert _words(zh) != _words(en)
    english = "sinusoidal|relative|position|wavelength|bidirectional|causal|pair|index|bands"
    assert not [w for w in _words(zh) if re.search(english, w)], _words(zh)
    label = re.search(r'aria-label="([^"]*)"', zh)
    assert label and re.search("[\u4e00-\u9fff]", label[1]) and "$" not in label[1], label


def test_every_word_of_the_block_is_translated(build):
    (en, zh), _ = build(_block)
    assert "causal" in _words(en) and "因果" in _words(zh)  # a rotated ax.text, re-anchored
    assert {"相对位置 j - i", "波长 λᵢ", "双向", "正弦"} <= set(_words(zh))
    prose = [w for w in _words(zh) if re.search("[A-Za-z]{2,}", w) and w != "xi"]  # xi: $x_i$
    assert not prose, _words(zh)


def test_translated_math_label_keeps_its_centre(build):
    """A centred mathtext label (matplotlib writes one tspan per glyph) becomes one Chinese text
    anchored at the middle of where the English one was."""
    (en, zh), _ = build(_block)
    text = re.search(r"<text [^>]*>相对位置 j - i</text>", zh)
    assert text and "text-anchor: middle" in text[0], text
    x = float(re.search(r'x="([\d.]+)"', text[0])[1])
    groups = re.findall(r"<g [^>]*>\s*<text>(.*?)</text>", en, re.S)
    spans = [re.findall(r'<tspan x="([\d.]+)"[^>]*>([^<]*)<', g) for g in groups]
    label = [xs for xs in spans if "".join(c for _, c in xs).startswith("relative")]
    assert len(label) == 1, spans
    end = float(label[0][-1][0]) + 5  # the last glyph's left edge plus about its width
    assert 0.45 < x / end < 0.55, (x, end)


def test_chinese_page_without_english_twin_is_drawn_in_chinese(build):
    (zh,), saves = build(_block, langs=("zh",))
    assert len(saves) == 1
    assert {"相对位置 j - i", "双向", "因果"} <= set(_words(zh))


def test_each_figure_of_a_page_keeps_its_own_twin(build):
    def two():
        return _block() + _chosen_words()

    (en, zh), saves = build(two)
    assert len(saves) == 2
    en_figs, zh_figs = FIGURE.findall(en), FIGURE.findall(zh)
    assert len(en_figs) == len(zh_figs) == 2
    assert [_shape(s) for s in en_figs] == [_shape(s) for s in zh_figs]


def test_wide_figure_stays_the_twin_when_only_the_phone_one_is_drawn_in_chinese(build, monkeypatch):
    """A title the phone rendition wraps onto lines cannot have its words swapped there: only
    that rendition is drawn again, with the Chinese words; the wide figure is still the English
    one with its words translated, so the two languages share a plot box whatever fonts are
    installed (a Chinese font measured by matplotlib moved it, issue 40)."""
    widths: list[float] = []
    save = plots._save
    monkeypatch.setattr(
        plots, "_save", lambda fig: widths.append(float(fig.get_size_inches()[0])) or save(fig)
    )
    title = "RoPE on q and k (1, 32, 4096, 128), float32, every allocation in huge pages (madvise)"

    def block():
        fig, axes = plots.figure(6.4, 2.0, nrows=2, squeeze=False)
        for ax in axes[:, 0]:
            ax.barh([0, 1], [0.5, 2.0])
            ax.set_xscale("log")
            ax.set_title(title, fontsize=10)
        axes[-1, 0].set_xlabel("time / fastest peer (log scale)")
        return plots.to_html(fig, alt="time relative to the fastest peer")

    (en, zh), _ = build(block)
    # the English page: the wide figure and its phone rendition; the Chinese: the phone one only
    assert widths == [6.4, plots.NARROW_WIDTH, plots.NARROW_WIDTH]
    assert _shape(FIGURE.findall(zh)[0]) == _shape(FIGURE.findall(en)[0])
    narrow = re.findall(r'<svg class="posenc-narrow".*?</svg>', zh, re.S)
    assert len(narrow) == 1 and "所有内存分配都用大页" in "".join(_words(narrow[0]))
    assert not [w for w in _words(zh) if "huge pages" in w or "fastest" in w]


def test_a_chinese_font_installed_after_matplotlibs_cache_is_found(monkeypatch):
    """matplotlib lists the fonts its cache held when it was built; a Chinese font installed
    later (as .ci/run installs fonts-noto-cjk) is found in the system's font folders all the
    same, so the state of a cache never decides how a Chinese label is measured."""
    require("matplotlib")
    from matplotlib import font_manager

    installed = [p for p in font_manager.findSystemFonts() if "NotoSansCJK" in p]
    if not installed and not under_ci():
        pytest.skip("no Noto Sans CJK installed (apt-get install fonts-noto-cjk)")
    assert installed, "fonts-noto-cjk is installed by .ci/run"
    stale = [f for f in font_manager.fontManager.ttflist if "CJK" not in f.name]
    monkeypatch.setattr(font_manager.fontManager, "ttflist", stale)  # a cache without it
    monkeypatch.setattr(plots, "_cjk_found", [])
    assert plots._cjk_fonts() == ["Noto Sans CJK SC"]
    assert "Noto Sans CJK SC" in {f.name for f in font_manager.fontManager.ttflist}


def test_outside_a_build_figures_are_english_and_not_cached(build):
    require("matplotlib")
    plots._set_page(None)
    out = _block()
    assert "sinusoidal" in _words(out) and not plots._cache
    assert translate("sinusoidal") == "正弦"


@pytest.mark.parametrize("name", pages("en"))
def test_site_figures_same_data_in_both_languages_and_chinese_words(built_site, name):
    """On the built site each Chinese figure is its English twin with the words translated: the
    same paths, marks and positions, aria-label in Chinese, and no English label left."""
    assert built_site.returncode == 0, built_site.log[-3000:]
    page = name.removesuffix(".md")
    page = "" if page == "index" else page + "/"
    en = (built_site.path / page / "index.html").read_text(encoding="utf-8")
    zh = (built_site.path / "zh" / page / "index.html").read_text(encoding="utf-8")
    en_figs, zh_figs = FIGURE.findall(en), FIGURE.findall(zh)
    assert len(en_figs) == len(zh_figs)
    for e, z in zip(en_figs, zh_figs, strict=True):
        assert _same_shape(_shape(z), _shape(e)), name
        # a label the table translates is never left in English (names and math stay)
        left = [w for w in _words(z) if translate(w) != w]
        assert not left, (name, left)
        for label in re.findall(r'aria-label="([^"]*)"', z):
            assert re.search("[\u4e00-\u9fff]", label), (name, label)


def test_annotations_are_translated_too(build):
    def block():
        fig, ax = plots.figure(4.0, 2.5)
        ax.plot([0, 1], [0, 1])
        ax.annotate(
            "causal",
            (0.5, 0.5),
            xytext=(6, 4),
            textcoords="offset points",
            arrowprops={"arrowstyle": "->"},
        )
        ax.annotate("$k=3$", (0.2, 0.8))
        return plots.to_html(fig)

    (en, zh), saves = build(block)
    assert len(saves) == 1 and _shape(zh) == _shape(en)
    assert "因果" in _words(zh) and "causal" not in _words(zh)


def _hook():
    """hooks/figures.py, loaded as a module."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location(
        "figures_hook", Path(__file__).resolve().parent.parent / "hooks" / "figures.py"
    )
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    return hook


def _store(tmp_path, page: str = "page markdown"):
    """hooks/figures.py's store of drawn figures, in a temporary folder."""
    store = _hook().FigureStore(tmp_path / "figures", [])
    store.page = page
    return store


def test_a_stored_figure_is_not_drawn_again_and_is_the_same(build, tmp_path, monkeypatch):
    """A later build takes an unchanged figure from the store: no matplotlib save, same HTML in
    both languages (the Chinese twin is translated from the stored drawing)."""
    monkeypatch.setattr(plots, "_store", [_store(tmp_path)])
    (first, saves) = build(_block)
    assert len(saves) == 1 and len(list((tmp_path / "figures").iterdir())) == 1
    monkeypatch.setattr(plots, "_store", [_store(tmp_path)])  # the next build's store
    (second, saves) = build(_block)
    assert len(saves) == 1  # still the one save of the first build
    assert [re.sub(r"\bfig\d+-", "", h) for h in second] == [
        re.sub(r"\bfig\d+-", "", h) for h in first
    ]


def test_a_changed_page_or_package_draws_the_figure_anew(build, tmp_path, monkeypatch):
    monkeypatch.setattr(plots, "_store", [_store(tmp_path)])
    build(_block)
    monkeypatch.setattr(plots, "_store", [_store(tmp_path, page="edited markdown")])
    (_, saves) = build(_block)
    assert len(saves) == 2  # the page changed: drawn again
    store = _store(tmp_path)
    store.salt = "another package source"
    monkeypatch.setattr(plots, "_store", [store])
    (_, saves) = build(_block)
    assert len(saves) == 3  # the package (or a library) changed: drawn again


def test_figure_images_are_files_of_the_site(built_site):
    """Heat maps and other raster parts of figures are files (assets/figures/), not base64 in
    the page: every page's references resolve to a written file, both languages share it, and
    only small images (under 2 KiB: colour bars) stay inline."""
    assert built_site.returncode == 0, built_site.log[-3000:]
    used: dict[str, set[str]] = {}
    for page in built_site.path.rglob("index.html"):
        text = page.read_text(encoding="utf-8")
        for data in re.findall(r'href="data:image/[a-z]+;base64,([^"]+)"', text):
            assert len(data) * 3 // 4 < 2048, (page, len(data))
        lang = "zh" if page.relative_to(built_site.path).parts[0] == "zh" else "en"
        # a written image is shown by an <img loading="lazy">, never by an SVG <image>
        assert not re.search(r'<image\b[^>]*href="(?:\.\./)*assets/figures/', text), page
        for ref in re.findall(
            r'<img src="((?:\.\./)*assets/figures/[^"]+)" alt="" loading="lazy"', text
        ):
            target = (page.parent / ref).resolve()
            assert target.is_file(), (page, ref)
            used.setdefault(target.name, set()).add(lang)
    assert used, "no figure image written"
    images = built_site.path / "assets" / "figures"
    assert {p.name for p in images.iterdir()} == set(used)  # nothing written that no page uses
    assert any(langs == {"en", "zh"} for langs in used.values())  # one file for both languages


def test_a_figure_image_written_to_a_file_waits_until_it_is_near_the_view(tmp_path):
    """matplotlib's <image> of a heat map becomes a lazy <img> filling a <foreignObject> with its
    id, box and transform; a small one stays inline; an attribute the hook would drop is an
    error, not a silently different picture."""
    import base64

    require("mkdocs")  # the hook imports MkDocs' plugin API (the site's toolchain)
    hook = _hook()
    big = base64.b64encode(b"W" * 4096).decode()
    box = 'id="fig1-image0a" transform="scale(1 -1) translate(0 -161.28)" x="43.2" y="-6.48" width="360" height="161.28"'
    page = types.SimpleNamespace(url="sinusoidal/")
    config = types.SimpleNamespace(site_dir=str(tmp_path))
    small = '<image xlink:href="data:image/png;base64,iVBORw0K" x="1" y="2" width="3" height="4"/>'
    out = hook.on_post_page(
        f'<svg><image xlink:href="data:image/webp;base64,{big}" {box}/>{small}</svg>', page, config
    )
    (written,) = (tmp_path / "assets" / "figures").iterdir()
    assert written.read_bytes() == b"W" * 4096 and written.suffix == ".webp"
    img = f'<img src="../assets/figures/{written.name}" alt="" loading="lazy"'
    assert out.startswith(f"<svg><foreignObject {box}>{img} style=")
    assert out.endswith(f"></foreignObject>{small}</svg>")  # under 2 KiB: inline, as it was
    with pytest.raises(ValueError, match="preserveAspectRatio"):
        hook.lazy_image(f'<image xlink:href="x" {box} preserveAspectRatio="none"/>', "a.webp")

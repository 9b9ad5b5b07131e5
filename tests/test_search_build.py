"""The site's search at build time (hooks/zh_search.py, mkdocs.yml): what the build writes,
without building the site.

- jieba learns the site's words through the search plugin's ``jieba_dict_user`` setting
  (hooks/zh_words.txt), which must say what hooks/terms.yml and ``PHRASES`` say;
- the merged index is split into a full index per language and a stub of its settings, which
  Material's bundle fetches with every page (the worker fetches the full index on a query);
- the worker is named with Material's worker and the page's own full index.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from ci_rule import require
from sitecheck import load_hook

ROOT = Path(__file__).resolve().parent.parent

require("mkdocs")  # hooks/zh_search.py imports mkdocs.plugins
zh_search = load_hook("zh_search")


def _mkdocs_config() -> dict:
    loader = type("Loader", (yaml.SafeLoader,), {})
    loader.add_constructor("!ENV", lambda ld, node: ld.construct_sequence(node)[-1])
    loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda ld, suffix, node: None)
    return yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=loader)


def _search_config() -> dict:
    plugins = [p for p in _mkdocs_config()["plugins"] if isinstance(p, dict) and "search" in p]
    return plugins[0]["search"]


def test_jieba_user_dictionary_is_the_terms_words():
    """mkdocs.yml names hooks/zh_words.txt, and the file is what hooks/zh_search.py writes from
    hooks/terms.yml (run ``python hooks/zh_search.py`` after editing either)."""
    assert _search_config()["jieba_dict_user"] == "hooks/zh_words.txt"
    written = (ROOT / "hooks" / "zh_words.txt").read_text(encoding="utf-8")
    assert written == zh_search.words_file(zh_search.load_terms())
    lines = written.splitlines()
    words = [line.rsplit(" ", 1)[0] for line in lines]
    assert "位置编码" in words and "长上下文" in words, words[:10]
    assert all(re.fullmatch(r".+ \d+", line) for line in lines)  # jieba's "word freq" lines


def test_jieba_keeps_the_sites_words_whole():
    jieba = require("jieba")
    tokenizer = jieba.Tokenizer()
    tokenizer.load_userdict(str(ROOT / "hooks" / "zh_words.txt"))
    assert list(tokenizer.cut("长上下文的旋转位置编码")) == ["长上下文", "的", "旋转位置编码"]


def test_index_is_split_into_full_indexes_and_stubs(tmp_path):
    config = {"lang": ["en"], "separator": "[\\s]+", "fields": {"title": {"boost": 1000.0}}}
    docs = [
        {"location": "rope/", "title": "RoPE", "text": "rotation"},
        {"location": "zh/rope/", "title": "旋转位置编码", "text": "旋转"},
    ]
    (tmp_path / "search").mkdir()
    merged = {"config": config, "docs": docs}
    (tmp_path / "search" / "search_index.json").write_text(json.dumps(merged), encoding="utf-8")
    zh_search.split_index(tmp_path, zh_search.load_terms())

    for folder, location, title in (
        ("search", "rope/", "RoPE"),
        ("zh/search", "rope/", "旋转位置编码"),
    ):
        full = json.loads((tmp_path / folder / "full_index.json").read_text(encoding="utf-8"))
        assert [(d["location"], d["title"]) for d in full["docs"]] == [(location, title)]
        stub = json.loads((tmp_path / folder / "search_index.json").read_text(encoding="utf-8"))
        assert stub == {"config": full["config"], "docs": []}, folder
        assert stub["config"]["separator"] == config["separator"]
        assert full["config"]["fields"]["defines"]["boost"] > 1000


@pytest.mark.parametrize(
    "src_uri,base,index",
    [
        ("rope.md", "..", "../search/full_index.json"),
        ("zh/rope.md", "../..", "../zh/search/full_index.json"),
    ],
)
def test_each_page_names_the_worker_its_index_and_its_base(src_uri, base, index):
    material = "javascripts/workers/search.a7633da7.min.js"
    data = {"base": base, "search": f"{base}/assets/{material}"}
    html = f'<script id="__config" type="application/json">{json.dumps(data)}</script>'
    page = SimpleNamespace(file=SimpleNamespace(src_uri=src_uri))
    out = zh_search.on_post_page(html, page=page, config=None)
    got = json.loads(zh_search.CONFIG.search(out).group(2))
    assert got["search"] == f"{base}/assets/posenc-search.js?worker={material}&index={index}"
    assert got["base"] == (f"{base}/zh/" if src_uri.startswith("zh/") else base)


def test_search_partial_leaves_materials_requests_alone():
    """overrides/partials/search.html patched XMLHttpRequest to hold the index back (issue 42):
    the worker does that now, and no template patches a browser API."""
    for path in (ROOT / "overrides").rglob("*.html"):
        text = path.read_text(encoding="utf-8")
        assert "XMLHttpRequest" not in text and ".prototype" not in text, path

"""The model atlas page (docs/*/atlas.md, drawn by hooks/atlas.py from docs/assets/atlas.json).

- The record agrees with itself: its counts are those of its rows, and it is written in the
  stable form tools/atlas_record.py writes (sorted keys), so a rerun changes only what changed.
- The built page lists every model type of the record, in both languages, with its anchor
  ``mt-<model_type>`` (once) and its status next to it, and a section per convention that links
  the page deriving it.
- The hook fails loudly on a page without its placeholders, and a model type the record has
  never seen before is listed, not dropped.

That the record matches a fresh walk is checked in tests/test_hf_walk.py.
"""

from __future__ import annotations

import html
import json
import re

import pytest

from ci_rule import require
from sitecheck import DOCS, LANGS, ROOT, load_hook

RECORD = DOCS / "assets" / "atlas.json"
STATUSES = ("verified", "mismatch", "unverified")

require("mkdocs")  # the hook imports it: the site's toolchain (not on a package-only leg)
atlas = load_hook("atlas")


@pytest.fixture(scope="module")
def record() -> dict:
    return json.loads(RECORD.read_text(encoding="utf-8"))


def test_record_counts_match_its_rows(record):
    types = record["types"]
    assert types, "docs/assets/atlas.json lists no model type"
    statuses = [t["status"] for t in types.values()]
    assert set(statuses) <= set(STATUSES), set(statuses) - set(STATUSES)
    summary = record["summary"]
    assert {s: summary[s] for s in STATUSES} == {s: statuses.count(s) for s in STATUSES}
    assert summary["walked"] == len(types) <= summary["total_model_types"]
    for name, t in types.items():
        assert set(t) == {"status", "reason", "convention", "layer_kinds", "error", "module",
                          "row", "sub_config", "verified_on"}, name  # fmt: skip
        # a verified type has its error within the walk's bound and the version it was
        # verified on; any other says why
        if t["status"] == "verified":
            assert t["error"] is not None and t["error"] <= 1e-6 and not t["reason"], name
            assert t["verified_on"] == record["transformers"], name
            assert t["row"] in ("registry", "walk"), name
        else:
            assert t["reason"] and t["verified_on"] is None, name
    assert re.fullmatch(r"\d{4}-\d\d-\d\d", record["date"])
    assert record["transformers"] and record["torch"]


def test_record_is_written_in_the_stable_form(record):
    text = RECORD.read_text(encoding="utf-8")
    assert text == json.dumps(record, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    assert not re.search(r"0x[0-9a-fA-F]{6,}", text), "an object address in the record"


def _blocks(page: str) -> dict[str, str]:
    """For each ``id="mt-..."`` of the page, the text of the table row, list item or paragraph
    that holds it (tags removed, entities decoded)."""
    body = page[page.index("<article") : page.index("</article>")]
    found: dict[str, str] = {}
    for m in re.finditer(r"<(tr|li|p)\b[^>]*>(.*?)</\1>", body, re.S):
        for a in re.findall(r'id="(mt-[^"]+)"', m.group(2)):
            assert a not in found, f"anchor {a} twice"
            found[a] = html.unescape(re.sub(r"<[^>]+>", "", m.group(2)))
    return found


@pytest.mark.site
@pytest.mark.parametrize("lang", LANGS)
def test_page_lists_every_model_type_with_anchor_and_status(built_site, record, lang):
    assert built_site.returncode == 0, built_site.log[-3000:]
    rel = "zh/atlas/index.html" if lang == "zh" else "atlas/index.html"
    page = (built_site.path / rel).read_text(encoding="utf-8")
    blocks = _blocks(page)
    expected = {atlas.anchor(mt) for mt in record["types"]}
    assert set(blocks) == expected, (
        f"missing {sorted(expected - set(blocks))[:5]}, extra {sorted(set(blocks) - expected)[:5]}"
    )
    for anchor in blocks:
        assert page.count(f'id="{anchor}"') == 1, anchor
    for mt, entry in record["types"].items():
        text = blocks[atlas.anchor(mt)]
        assert mt in text, (mt, text[:200])
        assert atlas.STATUS[lang][entry["status"]] in text, (mt, entry["status"], text[:200])
        if entry["convention"]:  # a row of its convention's table, with the version
            assert record["transformers"] in text, (mt, text[:200])
    # one section per convention that has rows, linking the page that derives it
    import posenc.hf

    for name in {t["convention"] for t in record["types"].values()} - {""}:
        m = re.search(rf'<h3 id="conv-{re.escape(name)}">.*?<p\b[^>]*>(.*?)</p>', page, re.S)
        assert m, f"no section #conv-{name}"
        conv = posenc.hf.CONVENTIONS.get(name)
        if conv is not None:
            assert f'href="../{conv.page}/"' in m.group(1), (name, m.group(1)[:300])
    summary = re.sub(r"<[^>]+>", "", page[page.index('id="summary"') :])
    s = record["summary"]
    for key in ("verified", "mismatch", "unverified", "walked", "total_model_types"):
        assert str(s[key]) in summary[:2000], key


def test_hook_fails_without_its_placeholders(record):
    with pytest.raises(ValueError, match="atlas:summary"):
        atlas.render("# Model atlas { #atlas }\n", "en", record)


def test_a_new_model_type_is_listed_with_its_reason(record):
    new = dict(record)
    new["types"] = {
        **record["types"],
        "brand_new_lm": {
            "status": "unverified",
            "reason": "model rotary/apply: KeyError('chunked_attention')",
            "convention": "",
            "layer_kinds": [],
            "error": None,
            "module": "transformers.models.brand_new_lm.modeling_brand_new_lm",
        },
    }
    page = "\n".join(f"<!-- atlas:{m} -->" for m in atlas.MARKS)
    for lang in LANGS:
        out = atlas.render(page, lang, new)
        line = next(x for x in out.splitlines() if 'id="mt-brand_new_lm"' in x)
        assert atlas.STATUS[lang]["unverified"] in line and "chunked" in html.unescape(line)


@pytest.mark.parametrize(
    "reason, key",
    [
        ("error 1.63e+00", "error"),
        ("describe failed: ValueError('x')", "describe failed"),
        ("no rotary embedding takes this config", "no rotary embedding takes this config"),
        ("shape (2, 4) vs (2, 8)", "shape"),
        ("something new: detail", "something new"),
    ],
)
def test_reasons_are_grouped_by_their_key(reason, key):
    assert atlas.reason_key(reason) == key


# --- finding one model (issue 23) ----------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGS)
def test_every_model_type_is_a_search_entry_of_its_own(record, lang):
    """Each model type is a search entry of its own, titled by its name and linking to its row
    (#mt-<type>), with its status and, when it has one, its convention and short posenc call."""
    url = "zh/atlas/" if lang == "zh" else "atlas/"
    entries = atlas.search_entries(record, lang, url)
    assert [e["title"] for e in entries] == sorted(record["types"])
    for e in entries:
        entry = record["types"][e["title"]]
        assert e["location"] == f"{url}#mt-{e['title']}"
        assert atlas.STATUS[lang][entry["status"]] in html.unescape(e["text"])
        assert bool(re.search(r"<code>[\w.]+\(…", e["text"])) == bool(entry["convention"]), e
    assert "apply_rope(…)" in next(e["text"] for e in entries if e["title"] == "llama")


@pytest.mark.parametrize("lang", LANGS)
def test_filter_box_follows_the_first_paragraph(record, lang):
    page = (ROOT / "docs" / lang / "atlas.md").read_text(encoding="utf-8")
    out = atlas.render(page, lang, record)
    before, after = out.split('<div class="posenc-filter" data-atlas-filter hidden>', 1)
    assert before.strip().count("\n\n") == 1 and before.lstrip().startswith("# ")  # title, text
    assert after.index("</div>") < after.index("\n## ")
    label = re.search(r'<label for="atlas-filter">([^<]+)</label>', after)[1]
    assert label == atlas.TEXT[lang]["filter"]
    assert "{n}" in atlas.TEXT[lang]["filter_count"] and 'id="atlas-filter"' in after


@pytest.mark.site
def test_the_built_index_searches_identifiers_whole_and_finds_every_row(built_site, record):
    """In the built search indexes (both languages): "_" is no separator, and each model type
    has its entry, linking to its row."""
    assert built_site.returncode == 0, built_site.log[-3000:]
    for rel, url in (("search", "atlas/"), ("zh/search", "atlas/")):
        index = json.loads((built_site.path / rel / "full_index.json").read_text("utf-8"))
        separator = re.compile(index["config"]["separator"])
        assert separator.split("rotate_half position_ids") == ["rotate_half", "position_ids"]
        rows = {e["title"]: e["location"] for e in index["docs"] if "#mt-" in e["location"]}
        assert rows == {mt: f"{url}#mt-{mt}" for mt in record["types"]}

"""The Zensical plan (tools/ZENSICAL.md) and its check (tools/zensical_check.py, `make
zensical-check`): the note covers every hook and every blocker the check can report, the
templates stay MiniJinja-safe, and the check finds nothing on the ProperDocs build and finds
what a build without the hooks and the i18n plugin leaves."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
NOTE = ROOT / "tools" / "ZENSICAL.md"

sys.path.insert(0, str(ROOT / "tools"))
import zensical_check  # noqa: E402

sys.path.pop(0)

pytestmark = pytest.mark.site


class _Loader(yaml.SafeLoader):
    pass


_Loader.add_constructor("!ENV", lambda loader, node: loader.construct_sequence(node)[-1])


def test_the_note_covers_every_hook_and_every_blocker():
    note = NOTE.read_text(encoding="utf-8")
    config = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=_Loader)
    missing = [h for h in config["hooks"] if f"`{h}`" not in note]
    assert not missing, f"tools/ZENSICAL.md says nothing of {missing}"
    ids = set(re.findall(r"`([a-z0-9-]+)`: ", note))
    assert set(zensical_check.BLOCKERS) <= ids, set(zensical_check.BLOCKERS) - ids
    assert "make zensical-check" in note and "extra.alternate" in note


def test_templates_call_no_methods_on_maps():
    """MiniJinja (Zensical's template engine) has no dict methods: no .get/.items/... calls."""
    calls = re.compile(r"\.(get|items|keys|values|update|setdefault|pop)\(")
    for path in sorted((ROOT / "overrides").rglob("*.html")):
        text = path.read_text(encoding="utf-8")
        code = "".join(re.findall(r"\{\{.*?\}\}|\{%.*?%\}", text, re.S))
        assert not calls.search(code), path


def test_the_check_finds_nothing_on_the_properdocs_build(built_site):
    assert built_site.returncode == 0, built_site.log[-2000:]
    assert zensical_check.inspect_site(built_site.path, built_site.log) == []


def test_the_check_finds_what_a_build_without_hooks_leaves(tmp_path):
    (tmp_path / "rope").mkdir()
    (tmp_path / "rope" / "index.html").write_text(
        '<html lang="en"><p><span class="arithmatex">\\(x\\)</span></p></html>', encoding="utf-8"
    )
    (tmp_path / "zh").mkdir()
    (tmp_path / "zh" / "index.html").write_text('<html lang="en"></html>', encoding="utf-8")
    (tmp_path / "atlas").mkdir()
    (tmp_path / "atlas" / "index.html").write_text("<p>atlas</p>", encoding="utf-8")
    found = zensical_check.inspect_site(tmp_path, "map has no method named get: template error")
    assert found == [
        "hooks-math",
        "hooks-notebooks",
        "hooks-figures",
        "hooks-atlas",
        "hooks-meta",
        "i18n",
        "search-zh",
        "templates",
    ]
    assert zensical_check.inspect_site(tmp_path / "nothing") == ["no-build"]

"""What the suite keeps between runs is reused only while what it was made from is unchanged:
the passes of the per-page browser checks (tests/verdicts.py) and the built site
(tests/site_store.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

import site_store
from verdicts import Verdicts

BASE = "http://127.0.0.1:9"


class _Cache(dict):
    def get(self, key, default):  # type: ignore[override]
        return super().get(key, default)

    def set(self, key, value):
        self[key] = value


@pytest.fixture
def site(tmp_path):
    (tmp_path / "site" / "rope").mkdir(parents=True)
    (tmp_path / "site" / "rope" / "index.html").write_text("<p>rope</p>")
    (tmp_path / "site" / "main.css").write_text("p {}")
    (tmp_path / "site" / "other.css").write_text("q {}")
    (tmp_path / "check.py").write_text("CHECK = 1")
    return tmp_path


def _verdicts(site, cache):
    config = SimpleNamespace(cache=cache)
    return Verdicts(config, "phone", site / "site", [site / "check.py"])


URLS = [f"{BASE}/rope/", f"{BASE}/main.css?v=2", "data:image/png;base64,AAAA"]


def test_a_pass_is_reused_until_a_file_the_page_read_changes(site, monkeypatch):
    monkeypatch.delenv("POSENC_RECHECK", raising=False)
    cache = _Cache()
    first = _verdicts(site, cache)
    assert first.reuse("en/rope.md") is None  # nothing stored yet
    first.record("en/rope.md", URLS, BASE, {"math": 3})
    assert _verdicts(site, cache).reuse("en/rope.md") == {"math": 3}
    # a file the page did not request may change
    (site / "site" / "other.css").write_text("q { color: red }")
    assert _verdicts(site, cache).reuse("en/rope.md") == {"math": 3}
    # one it requested may not
    (site / "site" / "main.css").write_text("p { color: red }")
    assert _verdicts(site, cache).reuse("en/rope.md") is None


def test_a_pass_is_stale_when_the_check_changes_or_a_recheck_is_asked(site, monkeypatch):
    monkeypatch.delenv("POSENC_RECHECK", raising=False)
    cache = _Cache()
    _verdicts(site, cache).record("en/rope.md", URLS, BASE)
    assert _verdicts(site, cache).reuse("en/rope.md") == {}
    monkeypatch.setenv("POSENC_RECHECK", "1")
    assert _verdicts(site, cache).reuse("en/rope.md") is None
    monkeypatch.delenv("POSENC_RECHECK")
    (site / "check.py").write_text("CHECK = 2")
    assert _verdicts(site, cache).reuse("en/rope.md") is None
    assert _verdicts(site, cache).reuse("zh/rope.md") is None  # never recorded


def test_nothing_is_stored_for_a_page_that_read_a_missing_file_or_without_a_cache(site):
    cache = _Cache()
    _verdicts(site, cache).record("en/rope.md", [*URLS, f"{BASE}/gone.js"], BASE)
    assert cache == {}
    none = Verdicts(SimpleNamespace(), "phone", site / "site", [site / "check.py"])
    none.record("en/rope.md", URLS, BASE)
    assert none.reuse("en/rope.md") is None


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def test_the_site_key_follows_every_input_but_the_tests(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    (repo / "docs").mkdir(parents=True)
    (repo / "tests").mkdir()
    (repo / "docs" / "index.md").write_text("# posenc")
    (repo / "tests" / "test_x.py").write_text("X = 1")
    _git(repo, "init", "-q")
    monkeypatch.delenv("SITE_URL", raising=False)
    # the tools the key hashes, as one that every machine running the suite has (the GPU leg's
    # machine has no Node.js): what is under test is that the key follows the files
    monkeypatch.setattr(site_store, "_TOOLS", ([sys.executable, "--version"],))
    first = site_store.key(repo)
    assert first is not None and first == site_store.key(repo)
    (repo / "tests" / "test_x.py").write_text("X = 2")
    assert site_store.key(repo) == first  # the build never reads tests/
    (repo / "docs" / "index.md").write_text("# posenc!")
    changed = site_store.key(repo)
    assert changed != first
    (repo / "docs" / "new.md").write_text("# new")  # untracked, not ignored: an input
    assert site_store.key(repo) != changed
    changed = site_store.key(repo)
    monkeypatch.setenv("SITE_URL", "https://example.org/")
    assert site_store.key(repo) != changed
    assert site_store.key(tmp_path / "not-a-repo") is None
    # a tool that cannot be run: its version is unknown, so no stored build may be reused
    monkeypatch.setattr(site_store, "_TOOLS", ([str(tmp_path / "no-such-tool"), "--version"],))
    assert site_store.key(repo) is None


def test_the_store_keeps_one_successful_build(tmp_path, monkeypatch):
    monkeypatch.delenv("POSENC_REBUILD", raising=False)
    store, built = tmp_path / "store", tmp_path / "built"
    (built / "rope").mkdir(parents=True)
    (built / "rope" / "index.html").write_text("<p>rope</p>")
    assert not site_store.fetch(store, "a", tmp_path / "out0")
    site_store.keep(store, "a", built, "INFO built")
    site_store.keep(store, "b", built, "INFO built again")
    assert sorted(p.name for p in store.iterdir()) == ["b"]
    assert not site_store.fetch(store, "a", tmp_path / "out1")
    assert site_store.fetch(store, "b", tmp_path / "out2")
    assert (tmp_path / "out2" / "rope" / "index.html").read_text() == "<p>rope</p>"
    assert site_store.log(store, "b") == "INFO built again"
    monkeypatch.setenv("POSENC_REBUILD", "1")
    assert not site_store.fetch(store, "b", tmp_path / "out3")

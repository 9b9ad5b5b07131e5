"""Passes of the per-page browser checks, kept between runs and reused while nothing they read
has changed (issue 23: ``make test`` within 6 minutes warm).

A page's check in the browser is a function of what it reads: the bytes the site served for
every request the page made (its HTML, stylesheets, scripts, fonts, images), the check's own
code, the browser, axe-core and the fonts installed on the machine. The site's build is
deterministic (two builds of one tree are byte-identical), so when none of these changed, a
second run would load the same bytes into the same browser and compute the same answer.

When a page passes, :meth:`Verdicts.record` stores, in pytest's cache (``.pytest_cache``, as
mypy's is kept under ``.mypy_cache``), the SHA-256 of each file the page requested and a
fingerprint of the rest. :meth:`Verdicts.reuse` returns that record only if every one of those
files still has its hash and the fingerprint is the same; otherwise the page is checked again.
A failure is never stored. A fresh clone (CI) has no cache and checks every page;
``POSENC_RECHECK=1`` or ``pytest --cache-clear`` does the same here. Each test says which it
did (its ``verdict`` property), and the run's summary counts both (conftest.py).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest

from site_store import FONTS, tool_output

_TOOLS = ([os.environ.get("POSENC_CHROMIUM", "/usr/bin/chromium"), "--version"], FONTS)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@functools.cache
def _tools_fingerprint() -> str:
    """The browser's version and the installed fonts (they decide layout), and Playwright's
    version (how the page is driven)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        parts = [version("playwright")]
    except PackageNotFoundError:  # no browser checks run without it; the record logic still can
        parts = [f"playwright unavailable {os.urandom(8).hex()}"]
    for command in _TOOLS:
        out = tool_output(command)
        # unknown: a fingerprint no stored pass has, so none is reused
        parts.append(out.decode() if out is not None else f"unavailable {os.urandom(8).hex()}")
    return _sha("\0".join(parts).encode())


class Verdicts:
    """The stored passes of one check (``name``) over the pages of the site at ``site``.

    ``code`` lists the files whose content decides the check (its test modules, axe-core):
    a change to any of them makes every stored pass stale.
    """

    def __init__(self, config: pytest.Config, name: str, site: Path, code: Iterable[Path]):
        self.cache = getattr(config, "cache", None)  # None under -p no:cacheprovider
        self.name, self.site = name, site
        self.fingerprint = _sha(
            "\0".join([_tools_fingerprint(), *(_sha(Path(f).read_bytes()) for f in code)]).encode()
        )
        self._hashes: dict[str, str | None] = {}

    def _file_sha(self, rel: str) -> str | None:
        if rel not in self._hashes:
            path = self.site / rel
            self._hashes[rel] = _sha(path.read_bytes()) if path.is_file() else None
        return self._hashes[rel]

    def _site_file(self, url: str, base: str) -> str | None:
        """The site file a same-origin URL serves (``dir/`` serves ``dir/index.html``)."""
        if not url.startswith(base):
            return None
        path = unquote(urlsplit(url).path).lstrip("/")
        if path == "" or path.endswith("/"):
            path += "index.html"
        return path

    def _key(self, page: str) -> str:
        return f"posenc/verdicts/{self.name}/{page}"

    def reuse(self, page: str) -> dict[str, Any] | None:
        """The facts stored with this page's pass, or None when it must be checked again."""
        if self.cache is None or os.environ.get("POSENC_RECHECK") == "1":
            return None
        record = self.cache.get(self._key(page), None)
        if not isinstance(record, dict) or record.get("fingerprint") != self.fingerprint:
            return None
        deps = record.get("files") or {}
        if not deps or any(self._file_sha(rel) != sha for rel, sha in deps.items()):
            return None
        return dict(record.get("facts") or {})

    def record(
        self, page: str, urls: Iterable[str], base: str, facts: dict[str, Any] | None = None
    ) -> None:
        """Store a pass: the hash of every site file the page requested, and ``facts`` (what
        the check counted, for the checks that sum over pages)."""
        if self.cache is None:
            return
        files = {}
        for url in urls:
            rel = self._site_file(url, base)
            if rel is not None:
                files[rel] = self._file_sha(rel)
        if not files or None in files.values():
            return  # a request outside the site's files: nothing to key the pass on
        record = {"fingerprint": self.fingerprint, "files": files, "facts": facts or {}}
        json.dumps(record)  # fails here, not in the cache, if a fact is not JSON
        self.cache.set(self._key(page), record)


def mark(request: pytest.FixtureRequest, reused: bool) -> None:
    """Say on the test's report whether its page was checked in the browser or its stored pass
    was reused (counted in the run's summary)."""
    request.node.user_properties.append(("verdict", "reused" if reused else "checked"))

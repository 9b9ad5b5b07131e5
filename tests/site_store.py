"""The built site, kept between runs of the suite and reused while nothing it is built from has
changed (issue 23: ``make test`` within 6 minutes warm; the build is a third of a warm run's wait).

The build is deterministic: two builds of one tree are byte-identical (checked on 2026-11-26,
``diff -r`` of two ``properdocs build`` outputs). Its inputs are the repository's files (every
file git tracks or would track, except tests/, which the build never reads), the Python that
runs it with every installed distribution's version, Node.js and the KaTeX it runs, the fonts
installed (figures are drawn with them), and the environment variables mkdocs.yml and the
hooks read. :func:`key` hashes all of them; a successful build is stored under
``.pytest_cache/d/posenc-site/<key>`` (one build kept), and a run whose key is found copies it
instead of building. A failed build is never stored. Without git (no list of the repository's
files) nothing is reused; a fresh clone (CI) has no store; ``POSENC_REBUILD=1`` or
``pytest --cache-clear`` builds anew.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from importlib.metadata import distributions
from pathlib import Path

ENV = ("SITE_URL", "REPO_URL", "EDIT_URI", "POSENC_FIGURE_CACHE", "POSENC_MATH_RECORD")
# the installed fonts: the figures are drawn with them, and a browser lays pages out with them
FONTS = ["fc-list", "--format", "%{file}|%{family}\n"]
_TOOLS = (["node", "--version"], FONTS)


def _run(command: list[str], cwd: Path | None = None) -> bytes | None:
    try:
        proc = subprocess.run(command, cwd=cwd, capture_output=True, timeout=120)
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout if proc.returncode == 0 else None


def tool_output(command: list[str], cwd: Path | None = None) -> bytes | None:
    """What a tool prints (its version, the fonts installed), lines sorted; None when it fails."""
    out = _run(command, cwd)
    return None if out is None else b"\n".join(sorted(out.splitlines()))


def key(root: Path) -> str | None:
    """SHA-256 of everything the site's build reads, or None when that cannot be listed."""
    listed = _run(["git", "ls-files", "-co", "--exclude-standard", "-z"], root)
    if listed is None:
        return None
    h = hashlib.sha256()
    for name in sorted(n for n in listed.decode().split("\0") if n and not n.startswith("tests/")):
        path = root / name
        h.update(name.encode() + b"\0")
        h.update(hashlib.sha256(path.read_bytes()).digest() if path.is_file() else b"-")
    h.update(sys.version.encode())
    versions = sorted(f"{d.metadata['Name']}=={d.version}" for d in distributions())
    h.update("\n".join(versions).encode())
    katex = root / "node_modules" / "katex" / "package.json"
    h.update(katex.read_bytes() if katex.is_file() else b"-")
    for command in _TOOLS:
        out = tool_output(command, root)
        if out is None:
            return None
        h.update(out)
    for name in ENV:
        h.update(f"{name}={os.environ.get(name)!r}".encode())
    return h.hexdigest()


def fetch(store: Path, digest: str | None, out: Path) -> bool:
    """Copy the stored build for ``digest`` to ``out``; False when there is none."""
    if digest is None or os.environ.get("POSENC_REBUILD") == "1":
        return False
    kept = store / digest
    if not (kept / "site").is_dir() or not (kept / "log").is_file():
        return False
    shutil.copytree(kept / "site", out)
    return True


def log(store: Path, digest: str) -> str:
    """The build log stored with the build for ``digest`` (what :func:`fetch` copied)."""
    return (store / digest / "log").read_text(encoding="utf-8")


def keep(store: Path, digest: str | None, site: Path, log: str) -> None:
    """Store a successful build under ``digest``, replacing any other."""
    if digest is None:
        return
    if store.exists():
        shutil.rmtree(store)
    partial = store / f"{digest}.partial"
    shutil.copytree(site, partial / "site")
    (partial / "log").write_text(log, encoding="utf-8")
    partial.rename(store / digest)

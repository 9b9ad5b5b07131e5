"""Fixtures shared by the unit tests: the device under test and array constructors per backend."""

from __future__ import annotations

import ast
import importlib.util
import os
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import settings

try:
    import torch
except ImportError:  # the package without torch: `make test-oldest` (the oldest Python, NumPy only)
    torch = None


def _needs_what_is_missing(path: Path) -> bool:
    """Whether a test file imports, at its top level, a module that is not installed."""
    names = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    here = Path(__file__).parent
    return any(
        not (here / f"{name}.py").exists() and importlib.util.find_spec(name) is None
        for name in names
    )


# Without torch (`make test-oldest`: the oldest supported Python with the package's own
# dependencies and the test runner only), the test files that import what is not installed
# (torch, the site's toolchain, tomllib before Python 3.11) are not collected: what runs is the
# package's NumPy part. `make test` installs everything from the lock, and tests/test_lock.py
# holds torch installed there, so no file is left out of it.
collect_ignore = (
    []
    if torch is not None
    else [p.name for p in sorted(Path(__file__).parent.glob("*.py")) if _needs_what_is_missing(p)]
)

# No per-example deadline: the suite shares 2 cores with builds and browsers, and a slow example
# is not a wrong one. Speed is measured in `make bench`, never here.
settings.register_profile("posenc", deadline=None)
settings.load_profile("posenc")

BACKENDS = ("numpy", "torch") if torch is not None else ("numpy",)


@pytest.fixture(scope="session")
def device() -> str:
    """The device named by ``--device`` (cpu, cuda or meta)."""
    return os.environ.get("POSENC_TEST_DEVICE", "cpu")


@pytest.fixture(params=BACKENDS)
def backend(request) -> str:
    return request.param


def make(backend: str, values, device: str = "cpu", dtype=None):
    """``values`` as a NumPy array or as a tensor on ``device``."""
    arr = np.asarray(values)
    if dtype is not None:
        arr = arr.astype(dtype)
    if backend == "numpy":
        return arr
    return torch.as_tensor(arr, device=device)


def to_numpy(x) -> np.ndarray:
    if torch is not None and isinstance(x, torch.Tensor):
        return x.detach().cpu().to(torch.float64).numpy()
    return np.asarray(x, dtype=np.float64)


class BuiltSite:
    def __init__(self, path, returncode, log):
        self.path, self.returncode, self.log = path, returncode, log


@pytest.fixture(scope="session")
def built_site(request, tmp_path_factory, worker_id) -> BuiltSite:
    """The whole bilingual site, built once per run with ``properdocs build --strict`` (as
    ``make build`` does).

    Under pytest-xdist (``make test`` runs two workers) the first worker to get here builds it
    into the run's shared temporary folder, under a file lock, and the others reuse that build.
    A successful build is kept in pytest's cache and copied, not rebuilt, while nothing it is
    built from has changed (tests/site_store.py says what that covers).
    """
    import subprocess
    import sys
    from pathlib import Path

    from filelock import FileLock

    import site_store
    from ci_rule import require

    require("properdocs")  # the site's toolchain: a leg without it skips (fails under CI=true)
    root = Path(__file__).resolve().parent.parent
    if worker_id == "master":  # no xdist
        shared = tmp_path_factory.getbasetemp()
    else:
        shared = tmp_path_factory.getbasetemp().parent
    out, log_file, rc_file = shared / "site", shared / "site.log", shared / "site.rc"
    with FileLock(str(shared / "site.lock")):
        cache = getattr(request.config, "cache", None)  # None under -p no:cacheprovider
        store = cache.mkdir("posenc-site") if cache is not None else None
        digest = site_store.key(root) if store is not None else None
        if not rc_file.exists() and store is not None and site_store.fetch(store, digest, out):
            log_file.write_text(site_store.log(store, digest), encoding="utf-8")
            rc_file.write_text("0", encoding="utf-8")
        if not rc_file.exists():
            command = ["build", "--strict", "-f", "mkdocs.yml", "--site-dir", str(out)]
            proc = subprocess.run(
                [sys.executable, "-m", "properdocs", *command],
                cwd=root,
                capture_output=True,
                text=True,
            )
            log_file.write_text(proc.stdout + proc.stderr, encoding="utf-8")
            rc_file.write_text(str(proc.returncode), encoding="utf-8")
            if proc.returncode == 0 and store is not None:
                site_store.keep(store, digest, out, proc.stdout + proc.stderr)
    return BuiltSite(out, int(rc_file.read_text()), log_file.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def server(built_site):
    """The built site over HTTP on 127.0.0.1 for a browser test module (its base URL)."""
    from test_browser import serving

    yield from serving(built_site)


@pytest.fixture(scope="module")
def browser():
    """Debian's Chromium, driven by Playwright, for a browser test module."""
    from test_browser import chromium

    yield from chromium()


@pytest.fixture(scope="session")
def worker_id(request) -> str:
    """pytest-xdist's worker id (gw0, gw1, ...), or "master" when the run is not distributed."""
    workerinput = getattr(request.config, "workerinput", None)
    return workerinput["workerid"] if workerinput else "master"


def pytest_collection_modifyitems(config, items):
    """Without torch (``make test-oldest``), a test that needs the built site is skipped: the
    site's toolchain is not installed there."""
    if torch is not None:
        return
    skip = pytest.mark.skip(reason="needs the built site; make test-oldest installs no toolchain")
    for item in items:
        if "built_site" in getattr(item, "fixturenames", ()):
            item.add_marker(skip)


try:
    from xdist.scheduler import LoadFileScheduling
except ImportError:  # make test-oldest: no pytest-xdist, so no scheduler hook either
    LoadFileScheduling = None

if LoadFileScheduling is not None:

    class FileScheduling(LoadFileScheduling):
        """``--dist loadfile`` (``make test``), with one addition: a parametrized test whose id
        ends in ``@<group>`` (``[rope.md-en@phone-0]``) runs with the other tests of its file that
        name that group, on one worker, and the groups of a file are spread over the workers.

        Every other test goes with its file, whole to one worker: a page's doctests share a
        namespace, and a module-scoped browser starts once. pytest-xdist's own ``--dist
        loadgroup`` would read ``xdist_group`` marks instead, but with pytest 9.2 it silently
        stops grouping (pytest-dev/pytest-xdist#1386: the node id it rewrites is no longer read),
        which would spread a page's doctests over both workers."""

        def _split_scope(self, nodeid: str) -> str:
            group = GROUP_ID.search(nodeid)
            file = nodeid.split("::", 1)[0]
            return f"{file}@{group[1]}" if group else file

    def pytest_xdist_make_scheduler(config, log):
        if config.getvalue("dist") == "loadfile":
            return FileScheduling(config, log)
        return None


GROUP_ID = re.compile(r"@([A-Za-z][\w-]*)\]$")  # letters, digits, _ and -

_VERDICTS = {"checked": 0, "reused": 0}


def pytest_runtest_logreport(report):
    """Count the browser checks run and the stored passes reused (tests/verdicts.py)."""
    if report.when == "call":
        for name, value in report.user_properties:
            if name == "verdict" and value in _VERDICTS:
                _VERDICTS[value] += 1


def pytest_terminal_summary(terminalreporter):
    if any(_VERDICTS.values()):
        terminalreporter.write_line(
            f"per-page browser checks: {_VERDICTS['checked']} run in the browser, "
            f"{_VERDICTS['reused']} passes reused (nothing they read changed; tests/verdicts.py; "
            "POSENC_RECHECK=1 runs them all)"
        )

"""Fixtures shared by the unit tests: the device under test and array constructors per backend."""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import settings

torch = pytest.importorskip("torch")

# No per-example deadline: the suite shares 2 cores with builds and browsers, and a slow example
# is not a wrong one. Speed is measured in `make bench`, never here.
settings.register_profile("posenc", deadline=None)
settings.load_profile("posenc")

BACKENDS = ("numpy", "torch")


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
    if isinstance(x, torch.Tensor):
        return x.detach().cpu().to(torch.float64).cpu().numpy()
    return np.asarray(x, dtype=np.float64)


class BuiltSite:
    def __init__(self, path, returncode, log):
        self.path, self.returncode, self.log = path, returncode, log


@pytest.fixture(scope="session")
def built_site(tmp_path_factory, worker_id) -> BuiltSite:
    """The whole bilingual site, built once per run with ``mkdocs build --strict``.

    Under pytest-xdist (``make test`` runs two workers) the first worker to get here builds it
    into the run's shared temporary folder, under a file lock, and the others reuse that build.
    """
    import subprocess
    import sys
    from pathlib import Path

    from filelock import FileLock

    root = Path(__file__).resolve().parent.parent
    if worker_id == "master":  # no xdist
        shared = tmp_path_factory.getbasetemp()
    else:
        shared = tmp_path_factory.getbasetemp().parent
    out, log_file, rc_file = shared / "site", shared / "site.log", shared / "site.rc"
    with FileLock(str(shared / "site.lock")):
        if not rc_file.exists():
            env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
            proc = subprocess.run(
                [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
                cwd=root,
                env=env,
                capture_output=True,
                text=True,
            )
            log_file.write_text(proc.stdout + proc.stderr, encoding="utf-8")
            rc_file.write_text(str(proc.returncode), encoding="utf-8")
    return BuiltSite(out, int(rc_file.read_text()), log_file.read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def worker_id(request) -> str:
    """pytest-xdist's worker id (gw0, gw1, ...), or "master" when the run is not distributed."""
    workerinput = getattr(request.config, "workerinput", None)
    return workerinput["workerid"] if workerinput else "master"

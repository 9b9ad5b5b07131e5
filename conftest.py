"""Suite-wide options and collection: ``--device``, and Sybil over docs_src/*.md and src/**/*.py.

``--device cpu|cuda|meta`` sets torch's default device for the whole run, so the same doctests,
page code and unit tests run on that device. ``--device all`` runs the suite once per device.
"""

from __future__ import annotations

import doctest
import os
import subprocess
import sys
from pathlib import Path

import pytest
from sybil import Sybil
from sybil.integration.pytest import SybilItem
from sybil.parsers.markdown import PythonCodeBlockParser
from sybil.parsers.rest import DocTestParser
from sybil.sybil import SybilCollection

DEVICES = ("cpu", "cuda", "meta")
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE

# matplotlib's configuration and font cache for the whole run (the site's build, a subprocess,
# inherits it): the project's own, in .cache/, so a user's matplotlibrc or a font cache built
# before a font was installed decides nothing; a fresh clone starts with none, as CI does.
os.environ["MPLCONFIGDIR"] = str(Path(__file__).resolve().parent / ".cache" / "matplotlib")


def pytest_addoption(parser):
    parser.addoption(
        "--device",
        choices=(*DEVICES, "all"),
        default="cpu",
        help="torch default device for the run (all: run the suite once per device)",
    )


def _without_device(args):
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
        elif a == "--device":
            skip = True
        elif not a.startswith("--device="):
            out.append(a)
    return out


def pytest_cmdline_main(config):
    if config.getoption("--device") != "all":
        return None
    args = _without_device(list(config.invocation_params.args))
    worst = 0
    for device in DEVICES:
        print(f"\n===== posenc suite with --device {device} =====", flush=True)
        code = subprocess.call([sys.executable, "-m", "pytest", *args, "--device", device])
        worst = max(worst, code)
    return worst


def _cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def pytest_configure(config):
    device = config.getoption("--device")
    if device == "all":
        return
    os.environ["POSENC_TEST_DEVICE"] = device
    try:
        import torch
    except ImportError:
        return
    if device == "cpu" or (device == "cuda" and _cuda_available()) or device == "meta":
        torch.set_default_device(device)


def pytest_report_header(config):
    device = config.getoption("--device")
    note = ""
    if device == "cuda" and not _cuda_available():
        note = " (no CUDA device here: every test is skipped)"
    return f"posenc test device: {device}{note}"


def pytest_collection_modifyitems(config, items):
    device = config.getoption("--device")
    if device == "cuda" and not _cuda_available():
        skip = pytest.mark.skip(
            reason="--device cuda: no CUDA device (torch.cuda.is_available() is False)"
        )
        for item in items:
            item.add_marker(skip)
        return
    for item in items:
        if device != "cpu" and item.get_closest_marker("site"):
            item.add_marker(
                pytest.mark.skip(reason=f"device-independent; runs in the cpu leg, not {device}")
            )
        if device == "meta" and (isinstance(item, SybilItem) or item.get_closest_marker("values")):
            item.add_marker(
                pytest.mark.skip(
                    reason="meta tensors carry no values; shapes and devices are checked in test_devices"
                )
            )


def _setup(namespace):
    import numpy as np

    np.set_printoptions(precision=8, suppress=False, linewidth=75)


def _torch_installed() -> bool:
    import importlib.util

    return importlib.util.find_spec("torch") is not None


_SRC = Path(__file__).resolve().parent / "src"
# Without torch (``make test-oldest``), the docstrings of the modules that import it are left out.
_NEED_TORCH = (
    []
    if _torch_installed()
    else [
        str(path.relative_to(_SRC))
        for path in _SRC.rglob("*.py")
        if "import torch" in path.read_text(encoding="utf-8")
    ]
)

pytest_collect_file = SybilCollection(
    [
        # the pages' code, written once in docs_src/<page>.md (both languages include it): each
        # file's blocks run in order in one namespace, as a reader of the page runs them
        Sybil(
            parsers=[PythonCodeBlockParser(doctest_optionflags=FLAGS)],
            patterns=["*.md"],
            path="docs_src",
            setup=_setup,
            name="page-code",
        ),
        Sybil(
            parsers=[DocTestParser(optionflags=FLAGS)],
            patterns=["*.py"],
            path="src",
            excludes=_NEED_TORCH,
            setup=_setup,
            name="docstrings",
        ),
    ]
).pytest()

"""Lint and format: ``ruff check`` and ``ruff format --check`` (ruff pinned in
requirements/dev.txt, rules in pyproject's ``[tool.ruff]``) pass over every Python file
of the project. Device-independent: runs in the cpu leg only.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PATHS = ["src", "tests", "bench", "hooks", "tools", "conftest.py"]

pytestmark = pytest.mark.skipif(
    os.environ.get("POSENC_TEST_DEVICE", "cpu") != "cpu",
    reason="device-independent; runs in the cpu leg",
)


def _ruff(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    if importlib.util.find_spec("ruff") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("ruff is not installed (required under CI=true)")
        pytest.skip("ruff is not installed")
    # --no-cache: nothing written into the tree; a full run takes well under a second.
    return subprocess.run(
        [sys.executable, "-m", "ruff", *args, "--no-cache"],
        cwd=ROOT,
        input=stdin,
        capture_output=True,
        text=True,
    )


def test_ruff_check_passes() -> None:
    proc = _ruff("check", "--output-format", "concise", *PATHS)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_ruff_format_check_passes() -> None:
    proc = _ruff("format", "--check", *PATHS)
    assert proc.returncode == 0, "run `ruff format` on:\n" + proc.stdout + proc.stderr


def test_ruff_is_configured_with_the_project_rules() -> None:
    """The rules come from pyproject.toml, and a finding of one of them fails the check."""
    bad = "import sys\nimport os\n\nprint(sys.argv == None, os.sep)\n"
    proc = _ruff(
        "check", "--output-format", "concise", "--stdin-filename", "bad.py", "-", stdin=bad
    )
    assert proc.returncode == 1
    assert "I001" in proc.stdout and "E711" in proc.stdout, proc.stdout
    shown = _ruff("check", "--show-settings", "src/posenc/__init__.py").stdout
    assert "linter.line_length = 100" in shown and "formatter.line_width = 100" in shown

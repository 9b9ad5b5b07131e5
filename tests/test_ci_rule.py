"""The CI rule: a missing optional library skips locally and fails under CI=true (issue 8).

Also that no test file uses a bare ``pytest.importorskip``, which would skip under CI too.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from ci_rule import require

TESTS = Path(__file__).resolve().parent


def test_require_skips_without_the_library_locally(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="posenc_no_such_module is not installed"):
        require("posenc_no_such_module")


@pytest.mark.parametrize("value", ["true"])
def test_require_fails_without_the_library_under_ci(monkeypatch, value):
    monkeypatch.setenv("CI", value)
    with pytest.raises(pytest.fail.Exception, match="required under CI=true"):
        require("posenc_no_such_module")


def test_require_returns_the_module(monkeypatch):
    monkeypatch.setenv("CI", "true")
    assert require("numpy") is np


# The files that import optional libraries. conftest.py skips the whole suite without torch,
# the one library every leg installs.
ALLOWED = {"conftest.py"}


def test_no_bare_importorskip_outside_the_helper():
    offenders = []
    for path in sorted(TESTS.glob("*.py")):
        if path.name in ALLOWED or path.name == "ci_rule.py":
            continue
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("#", 1)[0]
            if re.search(r"\bimportorskip\(", code) and "CI" not in _function_around(path, i):
                offenders.append(f"{path.name}:{i}: {line.strip()}")
    assert not offenders, offenders


def _function_around(path: Path, lineno: int) -> str:
    """The lines of the function holding ``lineno`` (a CI check there makes importorskip the
    local branch of the rule, as in test_frameworks.require)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    start = lineno - 1
    while start > 0 and not lines[start].startswith("def "):
        start -= 1
    end = lineno
    while end < len(lines) and not lines[end].startswith(("def ", "@", "class ")):
        end += 1
    return "\n".join(lines[start:end])

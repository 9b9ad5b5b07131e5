"""The suite's rule for optional libraries: skip without one, except under ``CI=true``, where a
missing library fails the run instead of hiding a gap (``pytest.importorskip`` alone skips in CI
too). ``require`` is the one helper for it; test_ci_rule.py proves it (issue 8)."""

from __future__ import annotations

import importlib
import os

import pytest


def under_ci() -> bool:
    return os.environ.get("CI") == "true"


def require(modname: str):
    """Import ``modname``; skip when it is missing, except under CI=true, where that fails."""
    try:
        return importlib.import_module(modname)
    except ImportError as exc:
        msg = f"{modname} is not installed ({exc})"
        if under_ci():
            pytest.fail(f"{msg} -- required under CI=true", pytrace=False)
        pytest.skip(msg, allow_module_level=True)  # also at a test file's top level

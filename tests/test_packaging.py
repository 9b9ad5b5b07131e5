"""Packaging promises: posenc imports without torch, torch stays optional, the set-up is documented."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parent.parent


def test_import_posenc_never_imports_torch():
    code = (
        "import sys, posenc, posenc.compat\n"
        "posenc.sinusoidal(4, 8); posenc.apply_rope(posenc.sinusoidal(3, 8), 3); posenc.alibi_bias(2, 2, 4)\n"
        "print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_torch_is_an_extra_and_pinned_only_for_development():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert not any(dep.startswith("torch") for dep in meta["dependencies"])
    assert any(dep.startswith("torch") for dep in meta["optional-dependencies"]["torch"])
    assert "torch==2.13.0" in (ROOT / "requirements" / "constraints.txt").read_text(
        encoding="utf-8"
    )


def test_readme_gives_the_two_commands_and_the_license_both_terms():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "make serve" in readme and "make test" in readme
    license_text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert "MIT License" in license_text and "CC BY 4.0" in license_text
    assert "make test" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")

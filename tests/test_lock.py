"""The locked environment (issue 19): what is installed is what the locks in requirements/ say.

requirements/site.txt (what the site's build needs) and requirements/dev.txt (the whole
development environment) pin every package with its hashes; torch comes from
requirements/torch.txt (the CPU wheel's hashes are not PyPI's); package-lock.json pins the npm
side. `make lock` writes them; these tests hold them equal to what `make setup` installed, to
each other and to pyproject.toml's ranges. Device-independent: the cpu leg only.
"""

from __future__ import annotations

import json
import re
from importlib.metadata import distributions, requires, version
from pathlib import Path

import pytest
import tomllib
from packaging.markers import default_environment
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent
REQ = ROOT / "requirements"

pytestmark = pytest.mark.site  # runs once, in the cpu leg


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _lock(name: str) -> dict[str, tuple[str, list[str]]]:
    """{package: (version, hashes)} of a lock written by `uv pip compile --generate-hashes`."""
    text = (REQ / name).read_text(encoding="utf-8")
    pins: dict[str, tuple[str, list[str]]] = {}
    for block in re.split(r"\n(?=[A-Za-z0-9])", text):
        m = re.match(r"([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+?)(?:\s|\\|$)", block)
        if m:
            pins[_norm(m.group(1))] = (
                m.group(2),
                re.findall(r"--hash=sha256:([0-9a-f]{64})", block),
            )
    return pins


def _installed() -> dict[str, str]:
    return {_norm(d.metadata["Name"]): d.version for d in distributions()}


def test_every_locked_package_is_installed_at_its_version():
    installed = _installed()
    wrong = {
        name: (pinned, installed.get(name))
        for name, (pinned, _) in _lock("dev.txt").items()
        if installed.get(name) != pinned
    }
    assert not wrong, f"installed differs from requirements/dev.txt (run make setup): {wrong}"


def test_nothing_is_installed_that_no_lock_names():
    """Besides the locked packages only pip, posenc itself and torch (requirements/torch.txt)."""
    extra = set(_installed()) - set(_lock("dev.txt")) - {"pip", "posenc", "torch"}
    assert not extra, f"installed but in no lock (add to requirements/*.in, make lock): {extra}"


def test_torch_is_the_pinned_release():
    pinned = re.search(r"^torch==(\S+)", (REQ / "torch.txt").read_text(), re.M).group(1)
    assert version("torch").split("+")[0] == pinned  # 2.13.0+cpu is the CPU build of 2.13.0


def test_every_pin_has_hashes_and_torch_stays_out():
    for name in ("site.txt", "dev.txt", "oldest.txt"):
        pins = _lock(name)
        assert len(pins) > 10, name
        assert all(hashes for _, hashes in pins.values()), name
        assert not {"torch", "torchvision", "triton"} & set(pins), name
        assert not [p for p in pins if p.startswith("nvidia-")], name


def test_the_site_lock_is_part_of_the_dev_lock():
    """make serve installs site.txt, make setup dev.txt into the same .venv: same versions."""
    site, dev = _lock("site.txt"), _lock("dev.txt")
    assert set(site) <= set(dev)
    assert {n: v for n, (v, _) in site.items()} == {n: dev[n][0] for n in site}
    assert {"properdocs", "mkdocs-material", "matplotlib", "numpy", "jieba"} <= set(site)
    # the site's build needs neither the test tools nor the frameworks
    assert not {"pytest", "playwright", "transformers", "timm", "mypy"} & set(site)


def _extras() -> dict[str, list[Requirement]]:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    out = {"": [Requirement(r) for r in meta["dependencies"]]}
    out.update({k: [Requirement(r) for r in v] for k, v in meta["optional-dependencies"].items()})
    return out


def test_the_locks_satisfy_pyprojects_ranges_and_the_ranges_stay_loose():
    """Every requirement of the package and its extras is in the dev lock at a version in its
    range; the ranges themselves pin nothing exactly (the lock does that)."""
    dev = _lock("dev.txt")
    env = default_environment()
    for extra, reqs in _extras().items():
        for req in reqs:
            assert not any(s.operator == "==" for s in req.specifier), f"{extra}: {req}"
            if req.marker is not None and not req.marker.evaluate({**env, "extra": extra}):
                continue
            name = _norm(req.name)
            if name == "torch":
                continue
            assert name in dev, f"{req} ({extra or 'the package'}) is not in requirements/dev.txt"
            assert req.specifier.contains(dev[name][0], prereleases=True), (req, dev[name][0])


def test_the_site_toolchain_says_it_needs_python_311():
    """The docs extra carries the marker, since its packages need Python >= 3.11.5."""
    for req in _extras()["docs"]:
        assert str(req.marker) == 'python_version >= "3.11"', req
    assert "--python-version 3.11.5" in (ROOT / "Makefile").read_text(encoding="utf-8")


def test_torch_metadata_for_the_lock_is_the_installed_wheels():
    """requirements/uv.toml gives uv the CPU wheel's requirements (no nvidia-* packages)."""
    config = tomllib.loads((REQ / "uv.toml").read_text(encoding="utf-8"))
    (entry,) = [d for d in config["dependency-metadata"] if d["name"] == "torch"]
    assert entry["version"] == version("torch").split("+")[0]
    wheel = sorted(r for r in requires("torch") if "extra ==" not in r)
    assert sorted(entry["requires-dist"]) == wheel


def test_the_oldest_lock_is_the_package_at_its_floors():
    """make test-oldest runs on pyproject's oldest Python with its oldest NumPy."""
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert meta["requires-python"] == ">=3.10"
    assert "PYTHON_OLDEST ?= python3.10" in (ROOT / "Makefile").read_text(encoding="utf-8")
    (numpy,) = [Requirement(r) for r in meta["dependencies"] if r.startswith("numpy")]
    (floor,) = [s.version for s in numpy.specifier if s.operator == ">="]
    oldest = _lock("oldest.txt")
    assert oldest["numpy"][0].startswith(floor + "."), (floor, oldest["numpy"])
    assert {"pytest", "hypothesis", "sybil"} <= set(oldest)


def test_node_modules_are_package_lock_json():
    lock = json.loads((ROOT / "package-lock.json").read_text(encoding="utf-8"))
    wanted = json.loads((ROOT / "package.json").read_text(encoding="utf-8"))
    for group in ("dependencies", "devDependencies"):
        for name, pinned in wanted.get(group, {}).items():
            assert lock["packages"][f"node_modules/{name}"]["version"] == pinned, name
    wrong = []
    for key, entry in lock["packages"].items():
        if not key.startswith("node_modules/") or entry.get("optional"):
            continue
        manifest = ROOT / key / "package.json"
        assert "integrity" in entry or entry.get("link"), key
        if manifest.exists():
            got = json.loads(manifest.read_text(encoding="utf-8"))["version"]
            if got != entry["version"]:
                wrong.append((key, entry["version"], got))
        else:
            wrong.append((key, entry["version"], None))
    assert not wrong, f"node_modules differs from package-lock.json (run npm ci): {wrong[:10]}"

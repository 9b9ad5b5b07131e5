"""The release path, offline: build the sdist and the wheel (the wheel from the sdist, as
``python -m build`` does), check them with ``twine check --strict``, install the wheel into a
clean virtual environment without torch and smoke-test it there.

Nothing is downloaded: the build runs without isolation (hatchling, build and twine are pinned
dev dependencies), the wheel is installed with ``--no-index --no-deps``, and the clean
environment sees NumPy through a ``.pth`` file naming a folder that holds links to the dev
environment's NumPy and nothing else. About 10-20 s; device-independent, so it runs in the cpu
leg only.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import re
import subprocess
import sys
import tarfile
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _source_version() -> str:
    text = (ROOT / "src" / "posenc" / "_version.py").read_text(encoding="utf-8")
    found = re.search(r'^__version__ = "([^"]+)"$', text, re.M)
    assert found, "src/posenc/_version.py sets no __version__"
    return found.group(1)


VERSION = _source_version()

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        os.environ.get("POSENC_TEST_DEVICE", "cpu") != "cpu",
        reason="device-independent; runs in the cpu leg",
    ),
]

SMOKE = """\
import importlib.util
import sys

import numpy as np

import posenc
import posenc.compat

print("file", posenc.__file__)
print("version", posenc.__version__)
assert importlib.util.find_spec("torch") is None, "torch is visible in the clean environment"
pe = posenc.sinusoidal(np.arange(3), 8)
assert isinstance(pe, np.ndarray) and pe.shape == (3, 8), pe
assert posenc.compat.marian_sinusoidal_weight(4, 8).shape == (4, 8)
assert "torch" not in sys.modules
try:
    import posenc.torch
except ImportError as exc:
    print("hint", type(exc).__name__, str(exc).replace("\\n", " "))
else:
    raise SystemExit("import posenc.torch succeeded without torch")
"""


def _require(module: str) -> None:
    if importlib.util.find_spec(module) is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{module} is not installed (required under CI=true)")
        pytest.skip(f"{module} is not installed (pip install -e '.[test]')")


def _run(*cmd: str | Path, cwd: Path = ROOT, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, f"{cmd}:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


class Release:
    def __init__(self, out: Path) -> None:
        self.out = out
        self.sdist = next(out.glob("*.tar.gz"))
        self.wheel = next(out.glob("*.whl"))


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Release:
    for module in ("build", "hatchling", "twine"):
        _require(module)
    out = tmp_path_factory.mktemp("dist")
    # Without flags, build makes the sdist and then the wheel from the unpacked sdist.
    _run(sys.executable, "-m", "build", "--no-isolation", "--outdir", out, ROOT)
    assert sorted(p.name for p in out.iterdir()) == [
        f"posenc-{VERSION}-py3-none-any.whl",
        f"posenc-{VERSION}.tar.gz",
    ]
    return Release(out)


@pytest.fixture(scope="module")
def clean_venv(release: Release, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv holding the wheel and, through a .pth file, the dev environment's NumPy."""
    root = tmp_path_factory.mktemp("clean")
    venv = root / "venv"
    _run(sys.executable, "-m", "venv", "--without-pip", venv)
    python = venv / "bin" / "python"
    site = Path(
        _run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").strip()
    )

    numpy_only = root / "numpy-only"
    numpy_only.mkdir()
    dist = importlib.metadata.distribution("numpy")
    dev_site = Path(str(dist.locate_file("")))
    linked = [p for p in dev_site.iterdir() if p.name in ("numpy", "numpy.libs")]
    linked += list(dev_site.glob(f"numpy-{dist.version}.dist-info"))
    assert {p.name for p in linked} >= {"numpy", f"numpy-{dist.version}.dist-info"}, linked
    for p in linked:
        (numpy_only / p.name).symlink_to(p, target_is_directory=True)
    (site / "dev_numpy.pth").write_text(f"{numpy_only}\n", encoding="utf-8")

    pip = [sys.executable, "-m", "pip", "--python", str(python)]
    _run(*pip, "install", "--no-index", "--no-deps", "--no-compile", "--quiet", release.wheel)
    _run(*pip, "check")  # posenc's requirements are met by what the environment holds
    return venv


def _clean_env() -> dict[str, str]:
    drop = ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV", "PIP_FIND_LINKS")
    return {k: v for k, v in os.environ.items() if k not in drop}


def test_sdist_and_wheel_pass_twine_check(release: Release) -> None:
    out = _run(sys.executable, "-m", "twine", "check", "--strict", release.sdist, release.wheel)
    assert out.count("PASSED") == 2, out


def test_wheel_holds_the_package_with_py_typed_and_no_tests_or_docs(release: Release) -> None:
    names = zipfile.ZipFile(release.wheel).namelist()
    package = {n for n in names if n.startswith("posenc/")}
    assert {
        "posenc/__init__.py",
        "posenc/__main__.py",
        "posenc/_version.py",
        "posenc/_typing.py",
        "posenc/py.typed",
        "posenc/torch/__init__.py",
    } <= package
    dist_info = f"posenc-{VERSION}.dist-info"
    others = [n for n in names if n not in package and not n.startswith(f"{dist_info}/")]
    assert others == [], others
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    assert not [
        n for n in names if re.search(r"(^|/)(tests?|docs|bench|hooks)/|/test_[^/]*\.py$", n)
    ]
    assert f"{dist_info}/licenses/LICENSE" in names


def test_wheel_holds_no_site_code(release: Release) -> None:
    """The wheel's package is src/posenc file for file, and none of it draws or builds the site:
    the figures (hooks/site_figures.py, until 0.1 posenc.plots) are the site's build code."""
    source = ROOT / "src" / "posenc"
    expected = sorted(
        f"posenc/{p.relative_to(source).as_posix()}"
        for p in source.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    )
    with zipfile.ZipFile(release.wheel) as whl:
        package = sorted(n for n in whl.namelist() if n.startswith("posenc/"))
        assert package == expected
        assert not {"posenc/plots.py", "posenc/_figure_zh.py"} & set(package)
        site = re.compile(r"\b(matplotlib|mkdocs|properdocs|jieba|site_figures)\b")
        drawn = [n for n in package if n.endswith(".py") and site.search(whl.read(n).decode())]
    assert not drawn, drawn


def test_wheel_metadata_matches_pyproject(release: Release) -> None:
    with zipfile.ZipFile(release.wheel) as whl:
        meta = Parser().parsestr(whl.read(f"posenc-{VERSION}.dist-info/METADATA").decode())
        entry_points = whl.read(f"posenc-{VERSION}.dist-info/entry_points.txt").decode()
    assert meta["Name"] == "posenc" and meta["Version"] == VERSION
    assert meta["Requires-Python"] == ">=3.10"
    assert meta["License-Expression"] == "MIT"
    assert set(meta.get_all("Provides-Extra")) >= {"torch", "docs", "test", "compat"}
    requires = meta.get_all("Requires-Dist")
    assert [r for r in requires if "extra ==" not in r] == ["numpy>=1.24"]
    assert any(r.startswith("torch") and "extra == 'torch'" in r for r in requires)
    classifiers = meta.get_all("Classifier")
    assert (
        "Typing :: Typed" in classifiers
        and "License :: OSI Approved :: MIT License" not in classifiers
    )
    assert "posenc = posenc.__main__:main" in entry_points
    assert meta.get_payload().lstrip().startswith("# posenc")  # the README, as Markdown
    assert meta["Description-Content-Type"] == "text/markdown"


def test_sdist_holds_the_package_and_its_metadata_files_only(release: Release) -> None:
    with tarfile.open(release.sdist) as tar:
        names = [n.split("/", 1)[1] for n in tar.getnames() if "/" in n]
    assert {"pyproject.toml", "PKG-INFO", "README.md", "LICENSE", "CHANGELOG.md"} <= set(names)
    assert "src/posenc/py.typed" in names and "src/posenc/_version.py" in names
    top = {n.split("/", 1)[0] for n in names}
    # hatchling always adds the .gitignore it read.
    assert top <= {
        "pyproject.toml",
        "PKG-INFO",
        "README.md",
        "LICENSE",
        "CHANGELOG.md",
        "src",
        ".gitignore",
    }, top


def test_wheel_in_a_clean_venv_without_torch(clean_venv: Path) -> None:
    python = clean_venv / "bin" / "python"
    work = clean_venv.parent
    out = _run(python, "-I", "-c", SMOKE, cwd=work, env=_clean_env())
    fields = dict(line.split(" ", 1) for line in out.splitlines())
    assert fields["version"] == VERSION
    # The installed wheel, not the source tree.
    assert Path(fields["file"]).is_relative_to(clean_venv), fields["file"]
    assert (Path(fields["file"]).parent / "py.typed").is_file()
    kind, message = fields["hint"].split(" ", 1)
    assert kind in ("ImportError", "ModuleNotFoundError")
    assert "posenc[torch]" in message, f"import posenc.torch without torch says: {message}"


def test_version_command_in_the_clean_venv(clean_venv: Path) -> None:
    python = clean_venv / "bin" / "python"
    env, work = _clean_env(), clean_venv.parent
    assert (
        _run(python, "-I", "-m", "posenc", "--version", cwd=work, env=env) == f"posenc {VERSION}\n"
    )
    # The console script from [project.scripts].
    assert (
        _run(clean_venv / "bin" / "posenc", "--version", cwd=work, env=env) == f"posenc {VERSION}\n"
    )
    report = _run(python, "-I", "-m", "posenc", "version", cwd=work, env=env)
    assert f"posenc {VERSION}" in report and "torch not installed" in report


def test_version_is_single_sourced() -> None:
    import posenc

    assert posenc.__version__ == VERSION
    meta = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'dynamic = ["version"]' in meta and not re.search(r"^version\s*=", meta, re.M)
    assert 'path = "src/posenc/_version.py"' in meta
    proc = subprocess.run(
        [sys.executable, "-m", "posenc", "--version"], capture_output=True, text=True, check=True
    )
    assert proc.stdout == f"posenc {VERSION}\n"


def test_changelog_has_this_version_and_an_unreleased_section() -> None:
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert "Keep a Changelog" in text
    releases = re.findall(r"^## \[([^\]]+)\]", text, re.M)
    assert releases[0] == "Unreleased" and VERSION in releases, releases


def test_release_workflow_publishes_tags_through_trusted_publishing() -> None:
    import yaml  # pyyaml: a test dependency (and mkdocs's)

    text = (ROOT / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8")
    flow = yaml.safe_load(text)
    assert flow[True] == {"push": {"tags": ["v*"]}}  # YAML 1.1 reads the key `on` as True
    assert flow["permissions"] == {"contents": "read"}
    build, publish = flow["jobs"]["build"], flow["jobs"]["publish"]
    build_steps = "\n".join(str(s.get("run", "")) for s in build["steps"])
    assert "python -m build" in build_steps and "twine check --strict" in build_steps
    assert 'test "${GITHUB_REF_NAME}" = "v${version}"' in build_steps
    assert publish["needs"] == "build" and publish["environment"]["name"] == "pypi"
    assert publish["permissions"] == {"id-token": "write"}
    assert [s["uses"] for s in publish["steps"]][-1] == "pypa/gh-action-pypi-publish@release/v1"
    # No stored token, no password, no repository URL.
    assert not re.search(r"secrets\.|password|api[-_]token|https?://", text, re.I)


def test_ci_runs_make_test() -> None:
    ci = (ROOT / ".github" / "workflows" / "ci.yml").read_text(encoding="utf-8")
    assert "run: make test" in ci


def test_command_line_parses_its_commands(capsys: pytest.CaptureFixture[str]) -> None:
    from posenc.__main__ import build_parser, main

    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0 and capsys.readouterr().out == f"posenc {VERSION}\n"
    with pytest.raises(SystemExit) as exit_info:
        main([])  # a command is required: argparse's usage error
    assert exit_info.value.code == 2 and "COMMAND" in capsys.readouterr().err
    assert main(["version"]) == 0
    assert capsys.readouterr().out.startswith(f"posenc {VERSION}\npython ")
    assert "version" in build_parser().format_help()


# The public names of posenc 0.1.0: stable (docs/*/api.md, "Stability and deprecations").
STABLE_0_1 = {
    "posenc": {
        "frequencies", "sinusoidal", "shift_matrix", "integer", "normalized", "binary", "periodic",
        "attention", "position_ids", "relative_positions", "rope_frequencies", "apply_rope",
        "rope_permutation", "alibi_slopes", "alibi_bias", "t5_bucket", "sincos_2d",
    },
    "posenc.torch": {
        "SinusoidalPositionalEncoding", "LearnedPositionalEmbedding", "RotaryEmbedding",
        "T5RelativeBias",
    },
    "posenc.compat": {
        "tensor2tensor_timing_signal_1d", "fairseq_sinusoidal_embedding", "fairseq_make_positions",
        "marian_sinusoidal_weight", "mae_2d_sincos_pos_embed",
    },
}  # fmt: skip


def test_stable_names_stay_and_new_names_start_experimental() -> None:
    import importlib

    for modname, stable in STABLE_0_1.items():
        module = importlib.import_module(modname)
        public = set(module.__all__)
        assert stable <= public, f"{modname} lost stable names: {stable - public}"
        unmarked = [
            name
            for name in sorted(public - stable)
            if "experimental" not in (getattr(module, name).__doc__ or "").lower()
        ]
        assert not unmarked, f"new names whose docstring does not say Experimental: {unmarked}"

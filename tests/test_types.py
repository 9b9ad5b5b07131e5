"""Types as users see them: mypy is clean over the package, and the typed usage file
(tests/typing_usage.py) gets NumPy out of NumPy in and a tensor out of a tensor in.
Every public function, method and constructor of posenc, posenc.compat and posenc.torch is
annotated.

mypy (pinned in requirements/dev.txt, configured in pyproject's ``[tool.mypy]``) runs once
per session over the package, the usage file and a negative control, with its cache in
.mypy_cache: about 20-50 s cold (torch's own annotations are large), 1-2 s warm.
Device-independent: runs in the cpu leg only.
"""

from __future__ import annotations

import importlib.util
import inspect
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
USAGE = ROOT / "tests" / "typing_usage.py"

pytestmark = pytest.mark.skipif(
    os.environ.get("POSENC_TEST_DEVICE", "cpu") != "cpu",
    reason="device-independent; runs in the cpu leg",
)

ERROR = re.compile(r"^(?P<path>[^:\n]+):(?P<line>\d+): error: (?P<msg>.*)$", re.M)

# A wrong claim the checker must refuse: proves that assert_type is enforced, not ignored.
NEGATIVE = """\
from typing import Any

import numpy as np
import numpy.typing as npt
import torch
from typing_extensions import assert_type

import posenc

assert_type(posenc.sinusoidal(torch.arange(3), 8), npt.NDArray[np.floating[Any]])
"""


def _require(module: str) -> None:
    if importlib.util.find_spec(module) is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{module} is not installed (required under CI=true)")
        pytest.skip(f"{module} is not installed")


class MypyRun:
    def __init__(self, returncode: int, output: str, seconds: float, negative: Path) -> None:
        self.returncode, self.output, self.seconds, self.negative = (
            returncode,
            output,
            seconds,
            negative,
        )

    def errors(self, path: Path) -> list[str]:
        rel = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
        return [
            m.group(0)
            for m in ERROR.finditer(self.output)
            if Path(m.group("path")) in (rel, path) or m.group("path").startswith(f"{rel}/")
        ]


@pytest.fixture(scope="module")
def mypy_run(tmp_path_factory: pytest.TempPathFactory) -> MypyRun:
    _require("mypy")
    _require("torch")
    negative = tmp_path_factory.mktemp("mypy") / "typing_negative_control.py"
    negative.write_text(NEGATIVE, encoding="utf-8")
    cmd = [sys.executable, "-m", "mypy", "--config-file", "pyproject.toml", "src/posenc"]
    cmd += [str(USAGE.relative_to(ROOT)), str(negative)]
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    output = proc.stdout + proc.stderr
    # 0: clean, 1: type errors. Anything else is mypy failing to run (bad config, crash).
    assert proc.returncode in (0, 1), output
    return MypyRun(proc.returncode, output, seconds, negative)


def test_mypy_is_clean_over_the_package(mypy_run: MypyRun) -> None:
    errors = mypy_run.errors(ROOT / "src" / "posenc")
    assert not errors, f"{len(errors)} mypy errors in src/posenc:\n" + "\n".join(errors)


def test_usage_file_sees_numpy_out_for_numpy_in_and_tensor_out_for_tensor_in(
    mypy_run: MypyRun,
) -> None:
    errors = mypy_run.errors(USAGE)
    assert not errors, f"{len(errors)} mypy errors in {USAGE.name}:\n" + "\n".join(errors)
    # The file covers every public function of posenc and posenc.compat and every module.
    import posenc
    import posenc.compat
    import posenc.torch

    text = USAGE.read_text(encoding="utf-8")
    names = [
        *(f"posenc.{n}(" for n in posenc.__all__),
        *(f"posenc.compat.{n}(" for n in posenc.compat.__all__),
        *(f"posenc.torch.{n}(" for n in posenc.torch.__all__),
    ]
    missing = [n for n in names if n not in text]
    assert not missing, f"{USAGE.name} does not call: {missing}"
    assert text.count("assert_type(") >= 40


def test_checker_refuses_a_wrong_return_type(mypy_run: MypyRun) -> None:
    # Matched by file name: on a warm cache mypy may report the control under the temporary
    # path of the run that first checked the same text.
    name = mypy_run.negative.name
    errors = [
        m.group(0) for m in ERROR.finditer(mypy_run.output) if Path(m.group("path")).name == name
    ]
    assert len(errors) == 1 and "[assert-type]" in errors[0], mypy_run.output


def test_usage_file_runs_and_its_values_have_the_checked_classes() -> None:
    _require("torch")
    spec = importlib.util.spec_from_file_location("typing_usage", USAGE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main()


# ---------------------------------------------------------------------------------------------
# Every public name annotated (raw annotations: torch names exist only under TYPE_CHECKING)


def _public_callables() -> list[tuple[str, Callable[..., object], bool]]:
    """(qualified name, function, is_method) for every public callable."""
    import posenc
    import posenc.compat
    import posenc.torch

    found: list[tuple[str, Callable[..., object], bool]] = []
    for mod in (posenc, posenc.compat, posenc.torch):
        for name in mod.__all__:
            obj = getattr(mod, name)
            qual = f"{mod.__name__}.{name}"
            if not inspect.isclass(obj):
                found.append((qual, obj, False))
                continue
            seen: set[str] = set()
            for klass in obj.__mro__:
                if not klass.__module__.startswith("posenc"):
                    continue
                for attr, value in vars(klass).items():
                    if attr in seen or (
                        attr.startswith("_") and attr not in ("__init__", "__call__")
                    ):
                        continue
                    seen.add(attr)
                    if isinstance(value, staticmethod):
                        found.append((f"{qual}.{attr}", value.__func__, False))
                    elif isinstance(value, classmethod):
                        found.append((f"{qual}.{attr}", value.__func__, True))
                    elif isinstance(value, property):
                        for part in (value.fget, value.fset):
                            if part is not None:
                                found.append((f"{qual}.{attr}", part, True))
                    elif inspect.isfunction(value):
                        found.append((f"{qual}.{attr}", value, True))
    return found


def _missing_annotations(qual: str, fn: Callable[..., object], is_method: bool) -> list[str]:
    sig = inspect.signature(fn)
    params = list(sig.parameters.values())
    if is_method and params:
        params = params[1:]  # self / cls
    missing = [f"{qual}: parameter {p.name!r}" for p in params if p.annotation is p.empty]
    # PEP 484: a constructor whose parameters are annotated may leave out ``-> None``.
    if sig.return_annotation is sig.empty and not qual.endswith(".__init__"):
        missing.append(f"{qual}: return")
    return missing


def test_every_public_function_method_and_constructor_is_annotated() -> None:
    _require("torch")
    callables = _public_callables()
    assert len(callables) >= 30, [q for q, _, _ in callables]
    names = {q for q, _, _ in callables}
    # The walk reaches module constructors and forwards, not only functions.
    assert "posenc.torch.RotaryEmbedding.__init__" in names
    assert "posenc.torch.RotaryEmbedding.forward" in names
    missing = [
        m for qual, fn, is_method in callables for m in _missing_annotations(qual, fn, is_method)
    ]
    assert not missing, f"{len(missing)} missing annotations:\n" + "\n".join(missing)


def test_the_annotation_walk_sees_a_missing_annotation() -> None:
    def typed(x: int, *, y: str = "") -> int:
        return x

    def untyped(x, y: int):
        return x

    assert _missing_annotations("typed", typed, False) == []
    assert _missing_annotations("untyped", untyped, False) == [
        "untyped: parameter 'x'",
        "untyped: return",
    ]


def test_the_package_ships_py_typed() -> None:
    assert (ROOT / "src" / "posenc" / "py.typed").is_file()

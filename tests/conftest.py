"""Fixtures shared by the unit tests: the device under test and array constructors per backend."""

from __future__ import annotations

import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")

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
        return x.detach().cpu().to(torch.float64).numpy()
    return np.asarray(x, dtype=np.float64)

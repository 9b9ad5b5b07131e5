"""Backend lookup, dtype defaults and the argument checks shared by every public function.

Input decides the backend: a NumPy array (or a Python int / list) gives NumPy out, a torch
tensor gives a torch tensor on the same device. torch is never imported here; a tensor is
recognised only when the caller has already imported torch.
"""

from __future__ import annotations

import math
import numbers
import sys

import numpy as np

__all__ = [
    "is_torch",
    "check_dim",
    "check_base",
    "check_choice",
    "check_scalar",
    "as_positions",
    "result_dtype",
    "check_length",
    "like_spec",
]


def is_torch(x) -> bool:
    """True when ``x`` is a torch tensor (without importing torch)."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(x, torch.Tensor)


def _describe(value) -> str:
    if is_torch(value) or isinstance(value, np.ndarray):
        return f"{type(value).__name__} of dtype {value.dtype}"
    return f"{value!r} ({type(value).__name__})"


def check_dim(dim, *, name: str = "dim", even: bool = True) -> int:
    """Return ``dim`` as an int, or raise naming ``name``, what was expected and what came."""
    kind = "positive even integer" if even else "positive integer"
    if isinstance(dim, bool) or not isinstance(dim, numbers.Integral):
        raise TypeError(f"{name} must be a {kind}, got {_describe(dim)}")
    dim = int(dim)
    if dim <= 0 or (even and dim % 2):
        raise ValueError(f"{name} must be a {kind}, got {dim}")
    return dim


def check_scalar(value, *, name: str) -> float:
    """A finite real number (int or float, not bool, not complex) as a float."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a finite real number, got {_describe(value)}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be a finite real number, got {value}")
    return value


def check_base(base, *, name: str = "base") -> float:
    """The base of a geometric frequency ladder: a finite real number > 0 and != 1."""
    value = check_scalar(base, name=name)
    if value <= 0 or value == 1:
        raise ValueError(f"{name} must be a finite number > 0 and != 1, got {value}")
    return value


def check_choice(value, *, name: str, choices: tuple[str, ...]) -> str:
    """One of a fixed set of strings, listing the valid ones when it is not."""
    if not isinstance(value, str) or value not in choices:
        valid = ", ".join(repr(c) for c in choices)
        raise ValueError(f"{name} must be one of {valid}, got {value!r}")
    return value


def as_positions(positions, *, name: str = "positions"):
    """Validate positions; return ``(array, is_torch)``.

    An int ``n`` becomes ``np.arange(n)``; lists and tuples become NumPy arrays; NumPy arrays
    and torch tensors are returned as they are. Real (integer or float) and finite only.
    """
    if isinstance(positions, bool):
        raise TypeError(f"{name} must be an int or an array of real numbers, got {positions!r}")
    if isinstance(positions, numbers.Integral):
        n = int(positions)
        if n < 0:
            raise ValueError(f"{name} as an int is a count of positions and must be >= 0, got {n}")
        return np.arange(n), False
    if is_torch(positions):
        torch = sys.modules["torch"]
        if positions.dtype == torch.bool or positions.is_complex():
            raise TypeError(f"{name} must hold real numbers, got {_describe(positions)}")
        if (
            positions.is_floating_point()
            and positions.device.type != "meta"
            and not bool(torch.isfinite(positions).all())
        ):
            raise ValueError(f"{name} must be finite, got a tensor holding inf or nan")
        return positions, True
    if isinstance(positions, numbers.Number):
        raise TypeError(
            f"{name} must be an int count or an array of positions, got {_describe(positions)}; "
            "wrap a single position in an array"
        )
    try:
        arr = np.asarray(positions)
    except Exception as exc:  # ragged lists and the like
        raise TypeError(f"{name} must be an array of real numbers, got {_describe(positions)}") from exc
    if arr.dtype == np.bool_ or arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} must hold real numbers, got {_describe(arr)}")
    if arr.dtype.kind == "f" and not np.isfinite(arr).all():
        raise ValueError(f"{name} must be finite, got an array holding inf or nan")
    return arr, False


def result_dtype(dtype, *, torch_out: bool):
    """The output dtype: ``dtype`` if given (must be a floating dtype of the output's library),
    else float64 for NumPy and ``torch.get_default_dtype()`` for torch."""
    if torch_out:
        torch = sys.modules["torch"]
        if dtype is None:
            return torch.get_default_dtype()
        if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
            raise TypeError(f"dtype must be a floating torch.dtype for tensor input, got {dtype!r}")
        return dtype
    if dtype is None:
        return np.dtype(np.float64)
    if is_torch_dtype(dtype):
        raise TypeError(
            f"dtype must be a NumPy floating dtype for NumPy/int input, got {dtype!r}; "
            "pass positions as a torch tensor to get a tensor"
        )
    try:
        out = np.dtype(dtype)
    except TypeError as exc:
        raise TypeError(f"dtype must be a NumPy floating dtype, got {dtype!r}") from exc
    if out.kind != "f":
        raise TypeError(f"dtype must be a NumPy floating dtype, got {out}")
    return out


def is_torch_dtype(dtype) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(dtype, torch.dtype)


def check_length(value, *, name):
    """A count that may be 0: a non-negative integer (not bool)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be a non-negative integer, got {_describe(value)}")
    value = int(value)
    if value < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {value}")
    return value


def like_spec(like, dtype):
    """``(torch_out, device, dtype)`` for an output shaped after ``like`` (None: NumPy)."""
    if like is None or isinstance(like, np.ndarray):
        if dtype is None and like is not None and like.dtype.kind == "f":
            dtype = like.dtype
        return False, None, result_dtype(dtype, torch_out=False)
    if is_torch(like):
        if dtype is None and like.is_floating_point():
            dtype = like.dtype
        return True, like.device, result_dtype(dtype, torch_out=True)
    raise TypeError(f"like must be a NumPy array, a torch tensor or None, got {_describe(like)}")

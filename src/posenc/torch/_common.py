"""Checks and helpers shared by the modules of :mod:`posenc.torch` (not public)."""

from __future__ import annotations

import numbers

import torch

from .._array import _describe, check_memory, compiling

__all__ = [
    "FLOAT_DTYPES",
    "MAX_ENTRIES",
    "check_entries",
    "check_input",
    "check_offset",
    "covers",
    "is_compiling",
    "rebuild",
]

# the dtypes a module computes in; float8 and the like have no arithmetic on most devices
FLOAT_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
_RANK = {torch.float16: 1, torch.bfloat16: 1, torch.float32: 2, torch.float64: 3}
_INT64_MAX = 2**63 - 1
# more entries than any device holds (2**48 float32 values are 1 PiB): refused up front, with the
# argument's name, rather than failing inside NumPy or torch with a size or overflow error
MAX_ENTRIES = 2**48


def check_entries(
    rows: int,
    width: int,
    *,
    what: str,
    tables: int = 1,
    itemsize: int = 8,
    device: torch.device | None = None,
    memory: bool = True,
) -> None:
    """Refuse, before allocating, ``tables`` buffers of ``rows x width`` entries past
    :data:`MAX_ENTRIES` or (``memory``) past the memory of ``device`` (the default device when
    None), naming ``what`` and the size. ``itemsize``: bytes per entry as computed (float64 by
    default: the tables are computed in float64 and rounded once)."""
    if rows * width > MAX_ENTRIES:
        raise ValueError(
            f"{what} = {rows} x {width} entries is more than 2**48: no device holds such a table; "
            "pass sizes that fit in memory"
        )
    if not memory or compiling():  # sizes are static under tracing
        return
    if device is None:
        get = getattr(torch, "get_default_device", None)  # torch >= 2.3
        device = get() if get is not None else torch.device("cpu")
    check_memory(
        tables * rows * width * itemsize, what=f"{what} = {rows} x {width} entries", device=device
    )


def is_compiling() -> bool:
    """True while ``torch.compile`` (dynamo) or ``torch.export`` traces the caller."""
    compiler = getattr(torch, "compiler", None)
    if compiler is not None and hasattr(compiler, "is_compiling"):
        return bool(compiler.is_compiling())
    return bool(torch._dynamo.is_compiling())  # torch < 2.3


def check_input(x: object, *, name: str, dim: int) -> torch.Tensor:
    """``x`` as a floating tensor of shape ``(..., seq, dim)``, or a TypeError/ValueError naming it."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(
            f"{name} must be a floating tensor, got {_describe(x)}; expected a torch.Tensor of "
            f"shape (..., seq, {dim})"
            + (
                " (convert a NumPy array with torch.from_numpy)"
                if type(x).__module__ == "numpy"
                else ""
            )
        )
    if x.dtype not in FLOAT_DTYPES:
        raise TypeError(
            f"{name} must be a floating tensor (float16, bfloat16, float32 or float64), got "
            f"Tensor of dtype {x.dtype}"
        )
    if x.dim() < 2 or x.shape[-1] != dim:
        raise ValueError(
            f"{name} must have shape (..., seq, {dim}) (last dim = the module's dim), "
            f"got shape {tuple(x.shape)}"
        )
    return x


def check_offset(offset: object, length: int, *, name: str = "offset") -> int:
    """An integer offset whose positions ``offset .. offset + length - 1`` fit in int64."""
    if isinstance(offset, torch.SymInt):  # a dynamic int under torch.compile: no value to check
        return offset  # type: ignore[return-value]
    if isinstance(offset, bool) or not isinstance(offset, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {_describe(offset)}")
    offset = int(offset)
    if offset < -_INT64_MAX - 1 or offset + max(length - 1, 0) > _INT64_MAX:
        raise ValueError(
            f"{name} must keep the positions {name} .. {name} + seq - 1 within int64 "
            f"(-2**63 .. 2**63 - 1), got {name}={offset} with seq={length}"
        )
    return offset


def covers(have: torch.dtype, want: torch.dtype) -> bool:
    """True when values rounded to ``have`` lose nothing that rounding to ``want`` keeps."""
    return have == want or _RANK.get(have, 0) > _RANK.get(want, 0)


def rebuild(module: torch.nn.Module, name: str, value: torch.Tensor) -> None:
    """Write ``value`` into buffer ``name``: in place where it fits, else by replacing it."""
    old = getattr(module, name)
    if old.shape == value.shape and old.dtype == value.dtype and old.device == value.device:
        with torch.no_grad():
            old.copy_(value)
    else:
        setattr(module, name, value)

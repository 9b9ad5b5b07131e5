"""Backend lookup, dtype defaults and the argument checks shared by every public function.

Input decides the backend: a NumPy array (or a Python int / list) gives NumPy out, a torch
tensor gives a torch tensor on the same device. torch is never imported here; a tensor is
recognised only when the caller has already imported torch.

The positions rule (every function that takes ``positions`` goes through :func:`as_positions`):
only a Python ``int`` (not ``bool``) is a **count** ``n``, meaning positions ``0 .. n-1``.
Everything array-like holds **positions**: lists, NumPy arrays, torch tensors, and also NumPy
scalars (``np.int64(3)``, what ``ids[1]`` returns), 0-d arrays and 0-d tensors, which are one
position each (output shape ``(dim,)``). A Python ``float`` is refused as ambiguous.

Under ``torch.compile`` / ``torch.export`` (:func:`compiling`) the checks that need to read
tensor values (finite positions) are skipped: they would be data-dependent branches.
"""

from __future__ import annotations

import math
import numbers
import os
import sys
from typing import Any

import numpy as np

__all__ = [
    "is_torch",
    "check_dim",
    "check_base",
    "check_choice",
    "check_scalar",
    "static_value",
    "as_positions",
    "result_dtype",
    "check_length",
    "like_spec",
    "is_count",
    "compiling",
    "traced_constant",
    "check_count",
    "check_memory",
    "memory_bytes",
    "MAX_COUNT",
    "MAX_SIZE",
]

# The largest int count of positions: past 2**53 float64 no longer holds every position exactly.
MAX_COUNT = 2**53


def compiling() -> bool:
    """True while torch.compile (dynamo) or torch.export traces the call (torch not imported: False).

    Code under tracing takes branch-free paths and skips checks that read tensor values.
    """
    torch = sys.modules.get("torch")
    if torch is None:
        return False
    compiler = getattr(torch, "compiler", None)
    if compiler is None:  # torch only partly imported
        return False
    return bool(compiler.is_compiling())


def functorch_active() -> bool:
    """True inside a torch.func transform (grad, vmap, jacfwd, functionalize, ...)."""
    fn = _TRANSFORMS_ACTIVE[0]
    if fn is None:
        fn = _TRANSFORMS_ACTIVE[0] = _transforms_active()
    return bool(fn())


_TRANSFORMS_ACTIVE: list[Any] = [None]  # the test below, looked up once (torch imported by then)


def _transforms_active() -> Any:
    """``torch._C._are_functorch_transforms_active`` (private; torch 2.0 and later), else a
    function that always answers True: without the test the fast path would be unsafe to take
    inside a transform, so the functional path runs everywhere (slower, never wrong)."""
    torch = sys.modules["torch"]
    fn = getattr(torch._C, "_are_functorch_transforms_active", None)
    return fn if callable(fn) else (lambda: True)


def traced_constant(fn: Any) -> Any:
    """Decorator: under torch.compile the call runs once, at trace time, and its result is a
    constant of the graph (no NumPy op is traced, so a ``torch.set_default_device`` mode cannot
    break it). For functions of static Python arguments (ints, floats, strings) returning host
    values. This is what ``torch.compiler.assume_constant_result`` does -- it sets this one
    attribute -- done here without importing torch; eager calls are untouched.
    """
    fn._dynamo_marked_constant = True
    return fn


_MEMORY: dict[str, int | None] = {}


def memory_bytes(device: Any = None) -> int | None:
    """Bytes an allocation on ``device`` can never exceed: the machine's memory and swap for the
    CPU (NumPy, or a CPU tensor; from /proc/meminfo, else sysconf), the card's memory for CUDA.
    None where it is not known (the meta device holds no values). Read once per device."""
    kind = "cpu" if device is None else getattr(device, "type", str(device))
    key = str(device) if kind == "cuda" else kind
    if key not in _MEMORY:
        _MEMORY[key] = _read_memory(kind, device)
    return _MEMORY[key]


def _read_memory(kind: str, device: Any) -> int | None:
    if kind == "cuda":
        torch = sys.modules.get("torch")
        try:
            return int(torch.cuda.get_device_properties(device).total_memory)  # type: ignore[union-attr]
        except Exception:  # no CUDA runtime here: unknown
            return None
    if kind != "cpu":
        return None
    try:
        with open("/proc/meminfo") as f:
            fields = dict(line.split(":", 1) for line in f if ":" in line)
        kib = int(fields["MemTotal"].split()[0]) + int(fields.get("SwapTotal", "0 kB").split()[0])
        return kib * 1024
    except (OSError, KeyError, ValueError):
        pass
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, OSError, ValueError):
        return None


def _human(nbytes: int) -> str:
    size = float(nbytes)
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"):
        if size < 1024 or unit == "EiB":
            return f"{nbytes} bytes" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")


def check_memory(nbytes: int, *, what: str, device: Any = None) -> None:
    """Refuse, before allocating, a result of ``nbytes`` that no allocation on ``device`` can
    hold (more than its memory and swap): a ValueError naming ``what`` (the arguments and the
    size they ask for) instead of a MemoryError or an allocator error deep in NumPy or torch."""
    if compiling():  # sizes are static under tracing; reading /proc is not traceable
        return
    limit = memory_bytes(device)
    if limit is not None and nbytes > limit:
        where = (
            "this machine"
            if device is None or getattr(device, "type", "") == "cpu"
            else str(device)
        )
        raise ValueError(
            f"{what} needs {_human(nbytes)} for its result, more than the {_human(limit)} of "
            f"memory on {where}; pass smaller sizes"
        )


def check_count(n: Any, *, name: str = "positions") -> int:
    """An int count of positions: ``0 <= n <= 2**53`` (``n`` already known to be a Python int)."""
    n = int(n)
    if n < 0:
        raise ValueError(f"{name} as an int is a count of positions and must be >= 0, got {n}")
    if n > MAX_COUNT:
        raise ValueError(
            f"{name} as an int is a count of positions and must be <= 2**53 (past it float64 "
            f"does not hold every position exactly), got {n}"
        )
    return n


def is_count(positions: Any) -> bool:
    """True when ``positions`` is a count (a Python ``int``, not ``bool``), False for positions.

    NumPy integer scalars are not ``int`` instances (NumPy 2), so ``ids[1]`` is a position.
    """
    return isinstance(positions, int) and not isinstance(positions, (bool, np.generic))


def is_torch(x: Any) -> bool:
    """True when ``x`` is a torch tensor (without importing torch)."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(x, torch.Tensor)


def _describe(value: Any) -> str:
    if is_torch(value) or isinstance(value, np.ndarray):
        return f"{type(value).__name__} of dtype {value.dtype}"
    return f"{value!r} ({type(value).__name__})"


# The largest size posenc accepts for one axis (dim, bits, n_heads, max_len ...), the same limit
# as positions (2**53): far past any memory, so larger values are refused by name instead of
# failing deep in NumPy or torch (or hanging on ``2**bits``).
MAX_SIZE = 2**53


def check_dim(dim: Any, *, name: str = "dim", even: bool = True, maximum: int | None = None) -> int:
    """Return ``dim`` as an int, or raise naming ``name``, what was expected and what came.

    ``maximum`` (e.g. :data:`MAX_SIZE`) refuses sizes past it by name; callers that check the
    size of a whole table themselves (naming every factor) leave it None.
    """
    kind = "positive even integer" if even else "positive integer"
    if isinstance(dim, bool) or not isinstance(dim, numbers.Integral):
        raise TypeError(f"{name} must be a {kind}, got {_describe(dim)}")
    dim = int(dim)
    if dim <= 0 or (even and dim % 2):
        raise ValueError(f"{name} must be a {kind}, got {dim}")
    if maximum is not None and dim > maximum:
        raise ValueError(
            f"{name} must be a {kind} <= {maximum} (no array can hold more), got {dim}"
        )
    return dim


def static_value(value: Any) -> Any:
    """``value`` itself; under torch.compile, a concrete number even where dynamo traces it as a
    symbolic one.

    A Python number argument of a compiled function is traced as a constant, but once it changes
    between calls dynamo retraces it as a symbolic number, which ``math.isfinite`` and the
    :func:`traced_constant` functions cannot take (a graph break, an error under
    ``fullgraph=True``). A set member is hashed, and dynamo specialises a symbolic number it
    hashes: a guard on the value, and a recompile for a new one (what a static argument gets).
    O(1), and in eager mode only a one-element set. Hashable values only.
    """
    return next(iter({value}))


def check_scalar(value: Any, *, name: str) -> float:
    """A finite real number (int or float, not bool, not complex) as a float.

    Compile-friendly: the value is made static first (see :func:`static_value`)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a finite real number, got {_describe(value)}")
    value = float(static_value(value))
    if not math.isfinite(value):
        raise ValueError(f"{name} must be a finite real number, got {value}")
    return value


def check_base(base: Any, *, name: str = "base") -> float:
    """The base of a geometric frequency ladder: a finite real number > 0 and != 1, and not
    subnormal (below ``sys.float_info.min`` the ladder ``base ** (-2i/d)`` overflows to inf)."""
    value = check_scalar(base, name=name)
    if value <= 0 or value == 1:
        raise ValueError(f"{name} must be a finite number > 0 and != 1, got {value}")
    if value < sys.float_info.min:
        raise ValueError(
            f"{name} must be at least {sys.float_info.min!r} (a normal float): the frequency "
            f"ladder base ** (-2i/dim) overflows to inf for smaller bases, got {value!r}"
        )
    return value


def check_choice(value: Any, *, name: str, choices: tuple[str, ...]) -> str:
    """One of a fixed set of strings, listing the valid ones when it is not."""
    if not isinstance(value, str) or value not in choices:
        valid = ", ".join(repr(c) for c in choices)
        raise ValueError(f"{name} must be one of {valid}, got {value!r}")
    return value


def as_positions(positions: Any, *, name: str = "positions") -> tuple[Any, bool]:
    """Validate positions; return ``(array, is_torch)``.

    The rule: only a Python ``int`` ``n`` is a count and becomes ``np.arange(n)`` (``0 <= n <=
    2**53``). Everything array-like holds positions: lists and tuples become NumPy arrays, NumPy
    arrays and torch tensors are returned as they are, NumPy scalars (``np.int64(3)``) become 0-d
    arrays (one position). Real (integer or float) and finite only; a Python float is refused.
    Under :func:`compiling` the finiteness of a tensor is not checked (it reads values).
    """
    if isinstance(positions, bool):
        raise TypeError(f"{name} must be an int or an array of real numbers, got {positions!r}")
    if is_count(positions):
        n = check_count(positions, name=name)
        try:
            return np.arange(n), False
        except MemoryError:
            raise MemoryError(
                f"{name}={n} asks for {n} positions: not enough memory for that many"
            ) from None
    if is_torch(positions):
        torch = sys.modules["torch"]
        if positions.dtype == torch.bool or positions.is_complex():
            raise TypeError(f"{name} must hold real numbers, got {_describe(positions)}")
        if (
            positions.is_floating_point()
            and positions.device.type != "meta"
            and not compiling()
            and not functorch_active()  # vmap cannot read values
            and not bool(torch.isfinite(_stored(positions, positions.stride())).all())
        ):
            raise ValueError(f"{name} must be finite, got a tensor holding inf or nan")
        return positions, True
    if isinstance(positions, numbers.Number) and not isinstance(positions, np.generic):
        raise TypeError(
            f"{name} must be an int count or an array of positions, got {_describe(positions)}; "
            "wrap a single position in an array"
        )
    try:
        arr = np.asarray(positions)
    except Exception as exc:  # ragged lists and the like
        raise TypeError(
            f"{name} must be an array of real numbers, got {_describe(positions)}"
        ) from exc
    if arr.dtype == np.bool_ or arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} must hold real numbers, got {_describe(arr)}")
    if (
        arr.dtype.kind == "f"
        and not compiling()
        and not np.isfinite(_stored(arr, arr.strides)).all()
    ):
        raise ValueError(f"{name} must be finite, got an array holding inf or nan")
    return arr, False


def _stored(a: Any, strides: Any) -> Any:
    """``a`` without its broadcast axes (stride 0): the values it stores, each once. A
    ``np.broadcast_to`` view of 2**36 positions holds one row; checking it element by element
    would allocate a 64 GiB mask."""
    if all(st != 0 for st in strides):
        return a
    return a[tuple(slice(0, 1) if st == 0 else slice(None) for st in strides)]


def result_dtype(dtype: Any, *, torch_out: bool, torch_hint: str | None = None) -> Any:
    """The output dtype: ``dtype`` if given (must be a floating dtype of the output's library),
    else float64 for NumPy and ``torch.get_default_dtype()`` for torch.

    ``torch_hint`` is how to get a tensor when a torch dtype comes with NumPy output (default:
    pass positions as a tensor).
    """
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
            + (torch_hint or "pass positions as a torch tensor to get a tensor")
        )
    try:
        out = np.dtype(dtype)
    except TypeError as exc:
        raise TypeError(f"dtype must be a NumPy floating dtype, got {dtype!r}") from exc
    if out.kind != "f":
        raise TypeError(f"dtype must be a NumPy floating dtype, got {out}")
    return out


def is_torch_dtype(dtype: Any) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(dtype, torch.dtype)


def check_length(value: Any, *, name: str) -> int:
    """A count that may be 0: a non-negative integer (not bool)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be a non-negative integer, got {_describe(value)}")
    value = int(value)
    if value < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {value}")
    return value


def like_spec(like: Any, dtype: Any) -> tuple[bool, Any, Any]:
    """``(torch_out, device, dtype)`` for an output shaped after ``like`` (None: NumPy)."""
    if like is None or isinstance(like, np.ndarray):
        if dtype is None and like is not None and like.dtype.kind == "f":
            dtype = like.dtype
        hint = "pass like=<a torch tensor> to get a tensor on its device"
        return False, None, result_dtype(dtype, torch_out=False, torch_hint=hint)
    if is_torch(like):
        if dtype is None and like.is_floating_point():
            dtype = like.dtype
        return True, like.device, result_dtype(dtype, torch_out=True)
    raise TypeError(f"like must be a NumPy array, a torch tensor or None, got {_describe(like)}")

"""The shared table of hostile values for ``test_hostile.py``: what every public callable must do.

A callable is a :class:`Spec`: a valid baseline call (``call(**base)``) and, per argument, a list
of :class:`Case` rows ``(label, value, expectation)``. An expectation is the documented answer:

- :class:`Same` -- the call works and equals the baseline call with this argument replaced by a
  reference value (the contiguous tensor, the int64 positions, the Python int, ...), within a
  few units in the last place of the output dtype;
- :class:`Works` -- the call works and its result passes a check (empty input gives an empty
  output, a float64 input is rotated with float64 precision, ...);
- :class:`Refused` -- ``TypeError`` / ``ValueError`` whose message names the argument;
- :class:`Either` -- the issue allows both answers (compute it right, or refuse it).

Families (``positions_cases``, ``size_cases``, ``real_cases``, ...) build the rows shared by every
argument of one kind, so that a new callable needs a baseline and a list of families, not a
hundred hand-written tests.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np
import torch

BIG = 10**30  # fits no integer dtype
TWO63 = 2**63  # one past int64
INT_NP = (np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32, np.uint64)
INT_T = (
    torch.int8,
    torch.int16,
    torch.int32,
    torch.uint8,
    torch.uint16,
    torch.uint32,
    torch.uint64,
)
FLOAT_T = (torch.float16, torch.bfloat16, torch.float32, torch.float64)


# --- expectations -------------------------------------------------------------------------------


@dataclass
class Same:
    """Works and equals the baseline call with the argument set to ``value`` (a thunk if callable).

    ``dtype=False`` compares values only (the reference is computed in another dtype), within
    ``ulps`` units of the *result's* dtype; ``meta=True``: the result is on the meta device and has
    the reference's shapes (no values to compare)."""

    value: Any
    ulps: float = 4.0
    dtype: bool = True
    meta: bool = False


@dataclass
class Works:
    """Works, and ``check(result)`` holds (``check`` returns True or raises)."""

    check: Callable[[Any], bool]
    what: str = ""


@dataclass
class Refused:
    """``exc`` (TypeError, ValueError or both) whose message names one of ``names``; ``also``:
    further words the message must hold (e.g. ``like=`` for a torch dtype given to NumPy)."""

    exc: Any
    names: tuple[str, ...]
    also: tuple[str, ...] = ()


@dataclass
class Either:
    """The issue allows either answer."""

    works: Any
    refused: Refused


@dataclass
class Case:
    arg: str
    label: str
    value: Any  # the value, or a zero-argument callable building it (tensors, fresh dicts)
    expect: Any
    lazy: bool = False
    with_: dict[str, Any] = field(default_factory=dict)  # other arguments changed from the baseline

    def build(self):
        return self.value() if self.lazy else self.value


@dataclass
class Spec:
    name: str
    call: Callable[..., Any]
    base: dict[str, Any]
    cases: list[Case] = field(default_factory=list)
    ref_call: Callable[..., Any] | None = None  # what Same compares with (default: call itself)


def bad_type(*names, also=()):
    return Refused(TypeError, names, also)


def bad_value(*names, also=()):
    return Refused(ValueError, names, also)


def bad(*names, also=()):
    """TypeError or ValueError: the value is both of a wrong kind and out of range (None for a
    choice, a huge number for a size)."""
    return Refused((TypeError, ValueError), names, also)


def lazy(arg, label, thunk, expect, **with_):
    return Case(arg, label, thunk, expect, lazy=True, with_=with_)


# --- checks ------------------------------------------------------------------------------------


def _leaves(out):
    if isinstance(out, (tuple, list)):
        for o in out:
            yield from _leaves(o)
    else:
        yield out


def is_empty(out) -> bool:
    arrays = [o for o in _leaves(out) if isinstance(o, (np.ndarray, torch.Tensor))]
    assert arrays and all(
        a.size == 0 if isinstance(a, np.ndarray) else a.numel() == 0 for a in arrays
    ), out
    return True


def on_meta(out) -> bool:
    tensors = [o for o in _leaves(out) if isinstance(o, torch.Tensor)]
    assert tensors and all(t.device.type == "meta" for t in tensors), out
    return True


def finite(out) -> bool:
    for o in _leaves(out):
        if isinstance(o, torch.Tensor) and o.is_floating_point():
            assert bool(torch.isfinite(o).all()), o
        elif isinstance(o, np.ndarray) and o.dtype.kind == "f":
            assert np.isfinite(o).all(), o
    return True


def to64(a) -> np.ndarray:
    if isinstance(a, torch.Tensor):
        return (
            a.detach().cpu().to(torch.float64).numpy() if a.is_floating_point() else a.cpu().numpy()
        )
    return np.asarray(a)


def _eps(dtype) -> float:
    if isinstance(dtype, torch.dtype):
        return torch.finfo(dtype).eps if dtype.is_floating_point else 0.0
    dtype = np.dtype(dtype)
    return float(np.finfo(dtype).eps) if dtype.kind == "f" else 0.0


def assert_same(got, want, *, ulps=4.0, dtype=True, meta=False, where="result"):
    """``got`` equals ``want``: same structure, library, shape (and dtype), values within ``ulps``."""
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(want), (where, type(got), got)
        for i, (g, w) in enumerate(zip(got, want, strict=False)):
            assert_same(g, w, ulps=ulps, dtype=dtype, meta=meta, where=f"{where}[{i}]")
        return
    if isinstance(want, torch.Tensor):
        assert isinstance(got, torch.Tensor), (where, "expected a tensor, got", type(got))
        assert tuple(got.shape) == tuple(want.shape), (where, tuple(got.shape), tuple(want.shape))
        if dtype:
            assert got.dtype == want.dtype, (where, got.dtype, want.dtype)
        if meta:
            assert got.device.type == "meta", (where, got.device)
            return
        assert got.device == want.device, (where, got.device, want.device)
        got_dtype = got.dtype
    elif isinstance(want, np.ndarray):
        assert isinstance(got, np.ndarray), (where, "expected a NumPy array, got", type(got))
        assert got.shape == want.shape, (where, got.shape, want.shape)
        if dtype:
            assert got.dtype == want.dtype, (where, got.dtype, want.dtype)
        got_dtype = got.dtype
    else:  # Python / NumPy scalars (attention factors, counts)
        assert not isinstance(got, (np.ndarray, torch.Tensor)) or np.ndim(got) == 0, (where, got)
        got_dtype = np.float64 if isinstance(want, float) else np.asarray(want).dtype
    g, w = to64(got).astype(np.float64), to64(want).astype(np.float64)
    finite = np.isfinite(w)
    scale = max(1.0, float(np.max(np.abs(w), initial=0.0, where=finite)))
    tol = ulps * max(_eps(got_dtype), _eps(want.dtype) if hasattr(want, "dtype") else 0.0) * scale
    with np.errstate(invalid="ignore"):
        diff = np.where(finite, np.abs(g - w), 0.0)
    # infinities must match exactly, NaN only NaN
    ok = (diff <= tol) & np.where(finite, np.isfinite(g), (g == w) | (np.isnan(g) & np.isnan(w)))
    assert bool(np.all(ok)), (
        where,
        f"max |got - want| = {float(np.nanmax(diff)) if diff.size else 0.0:.3g} > {tol:.3g}",
    )


# --- families ----------------------------------------------------------------------------------


def _strided(t: torch.Tensor) -> torch.Tensor:
    """A non-contiguous view holding ``t``'s values (every other element of a doubled buffer)."""
    return torch.stack([t, t], dim=-1)[..., 0]


def _strided_np(a: np.ndarray) -> np.ndarray:
    return np.stack([a, a], axis=-1)[..., 0]


def _reversed_np(a: np.ndarray) -> np.ndarray:
    """A negative-stride view holding ``a``'s values."""
    return np.flip(np.flip(a).copy())


def positions_cases(
    arg: str,
    ref: np.ndarray,
    *,
    floats: bool = True,
    count: bool = True,
    scalar: Any = "position",
    empty: Any = "works",
    numpy_ok: bool = True,
    overrides: dict[str, Any] | None = None,
) -> list[Case]:
    """Hostile positions / token ids / masks: every integer dtype means the same positions, float
    dtypes too where floats are valid, views equal copies, NaN/inf/complex/bool/str refused.

    ``ref``: the canonical int64 NumPy value (non-negative, small). ``count``: a Python int ``n``
    means ``arange(n)``. ``scalar``: "position" (a NumPy scalar is one position, as a 0-d array:
    the issue's rule), or an expectation. ``numpy_ok``: NumPy arrays and lists are accepted (False:
    a tensor is required, anything else refused). ``overrides``: label -> expectation (None drops
    the row); keys starting with "+" add cases."""
    over = overrides or {}
    t_ref = torch.as_tensor(ref)
    last = ref.flat[-1]
    nan_exp = bad_value(arg) if floats else bad_type(arg)
    float_exp = (lambda r: Same(r)) if floats else (lambda r: bad_type(arg))
    np_ok = (lambda e: e) if numpy_ok else (lambda e: bad_type(arg))
    rows: list[Case] = []
    add = rows.append
    for dt in INT_NP:
        add(Case(arg, f"np-{np.dtype(dt).name}", ref.astype(dt), np_ok(Same(ref))))
    for dt in INT_T:
        add(lazy(arg, f"torch-{str(dt)[6:]}", lambda dt=dt: t_ref.to(dt), Same(lambda: t_ref)))
    for dt in (np.float16, np.float32, np.float64):
        add(Case(arg, f"np-{np.dtype(dt).name}", ref.astype(dt), np_ok(float_exp(ref))))
    for dt in FLOAT_T:
        add(lazy(arg, f"torch-{str(dt)[6:]}", lambda dt=dt: t_ref.to(dt), float_exp(lambda: t_ref)))
    add(lazy(arg, "torch-strided", lambda: _strided(t_ref), Same(lambda: t_ref)))
    add(
        lazy(
            arg,
            "torch-expanded",
            lambda: t_ref[None].expand(2, *t_ref.shape),
            Same(lambda: t_ref[None].repeat(2, *[1] * t_ref.dim())),
        )
    )
    add(lazy(arg, "torch-meta", lambda: t_ref.to("meta"), Same(lambda: t_ref, meta=True)))
    add(lazy(arg, "torch-nan", lambda: torch.full(t_ref.shape, math.nan), nan_exp))
    add(lazy(arg, "torch-inf", lambda: torch.full(t_ref.shape, -math.inf), nan_exp))
    add(lazy(arg, "torch-complex", lambda: t_ref.to(torch.complex64), bad_type(arg)))
    add(lazy(arg, "torch-bool", lambda: torch.ones(t_ref.shape, dtype=torch.bool), bad_type(arg)))
    add(
        lazy(
            arg,
            "torch-0d",
            lambda: torch.tensor(int(last)),
            Same(lambda: torch.tensor(int(last))) if scalar == "position" else scalar,
        )
    )
    add(Case(arg, "np-strided", _strided_np(ref), np_ok(Same(ref))))
    add(Case(arg, "np-reversed-view", _reversed_np(ref), np_ok(Same(ref))))
    add(Case(arg, "list", ref.tolist(), np_ok(Same(ref))))
    add(Case(arg, "np-nan", np.full(ref.shape, np.nan), nan_exp if numpy_ok else bad_type(arg)))
    add(Case(arg, "np-inf", np.full(ref.shape, np.inf), nan_exp if numpy_ok else bad_type(arg)))
    add(Case(arg, "np-complex", ref.astype(np.complex128), bad_type(arg)))
    add(Case(arg, "np-bool", np.ones(ref.shape, dtype=bool), bad_type(arg)))
    add(Case(arg, "np-str", np.array(["0"] * ref.size).reshape(ref.shape), bad_type(arg)))
    add(Case(arg, "str", "0123", bad_type(arg)))
    add(Case(arg, "None", None, bad_type(arg)))
    add(Case(arg, "object", object(), bad_type(arg)))
    add(Case(arg, "ragged", [[0, 1], [2]], bad_type(arg)))
    add(Case(arg, "np-object", np.array([0, "a"], dtype=object), bad_type(arg)))
    sc = Same(np.array(last)) if scalar == "position" else scalar
    add(Case(arg, "np-int64-scalar", np.int64(last), np_ok(sc)))
    add(Case(arg, "np-0d", np.array(last), np_ok(sc)))
    empty_value = np.zeros(ref.shape[:-1] + (0,), dtype=np.int64)
    add(
        Case(
            arg,
            "np-empty",
            empty_value,
            np_ok(Works(is_empty, "empty") if empty == "works" else empty),
        )
    )
    add(
        lazy(
            arg,
            "torch-empty",
            lambda: torch.as_tensor(empty_value),
            Works(is_empty, "empty") if empty == "works" else empty,
        )
    )
    if count:
        add(Case(arg, "int-count", ref.shape[-1], Same(ref)))
        add(Case(arg, "int-negative", -1, bad_value(arg)))
        add(Case(arg, "int-huge", BIG, bad_value(arg)))
        add(Case(arg, "int-2**63", TWO63, bad_value(arg)))
    else:
        add(Case(arg, "int", int(last), bad_type(arg)))
    add(Case(arg, "bool", True, bad_type(arg)))
    add(Case(arg, "float", 2.5, bad_type(arg)))
    return with_overrides(rows, over)


def with_overrides(rows: list[Case], over: dict[str, Any] | None) -> list[Case]:
    """Replace the expectation of the rows named in ``over`` (None drops a row); keys that start
    with "+" add their Case."""
    over = over or {}
    out = []
    for case in rows:
        if case.label in over:
            if over[case.label] is None:
                continue
            case.expect = over[case.label]
        out.append(case)
    return out + [v for k, v in over.items() if k.startswith("+")]


def size_cases(
    arg: str,
    good: int,
    *,
    zero: Any = None,
    invalid: tuple = (),
    optional: bool = False,
    overrides: dict | None = None,
) -> list[Case]:
    """An integer size or count: NumPy integers work as the int; bool, float, str, complex, 0-d
    tensors, negative and huge values refused. ``zero``: the expectation for 0 (default: refused);
    ``invalid``: more values refused with ValueError (an odd dim, ...)."""
    cases = [
        Case(arg, "np-int64", np.int64(good), Same(good)),
        Case(arg, "np-uint8", np.uint8(good), Same(good)),
        Case(arg, "bool", True, bad_type(arg)),
        Case(arg, "float", float(good), bad_type(arg)),
        Case(arg, "str", str(good), bad_type(arg)),
        Case(arg, "complex", complex(good), bad_type(arg)),
        Case(arg, "np-float", np.float64(good), bad_type(arg)),
        lazy(arg, "torch-0d", lambda: torch.tensor(good), bad_type(arg)),
        Case(arg, "negative", -2, bad_value(arg)),
        Case(arg, "huge", BIG, bad_value(arg)),
        Case(arg, "2**63", TWO63, bad_value(arg)),
        Case(arg, "zero", 0, zero if zero is not None else bad_value(arg)),
    ]
    if not optional:
        cases.append(Case(arg, "None", None, bad_type(arg)))
    cases += [Case(arg, f"invalid-{v!r}", v, bad_value(arg)) for v in invalid]
    return with_overrides(cases, overrides)


def offset_cases(arg: str, good: int = 1) -> list[Case]:
    """An integer offset: NumPy ints work as the int; bool, float, str, None and huge refused."""
    return [
        Case(arg, "np-int64", np.int64(good), Same(good)),
        Case(arg, "bool", True, bad_type(arg)),
        Case(arg, "float", 1.5, bad_type(arg)),
        Case(arg, "str", "1", bad_type(arg)),
        Case(arg, "huge", BIG, bad_value(arg)),
        Case(arg, "-huge", -BIG, bad_value(arg)),
        Case(arg, "2**63", TWO63, bad_value(arg)),
    ]


def real_cases(arg: str, good: float, *, invalid: tuple = (), optional: bool = False) -> list[Case]:
    """A finite real number: NumPy floats and ints work; NaN, inf, complex, bool, str refused."""
    cases = [
        Case(arg, "np-float32", np.float32(good), Same(float(np.float32(good)))),
        Case(arg, "np-float64", np.float64(good), Same(good)),
        Case(arg, "nan", math.nan, bad_value(arg)),
        Case(arg, "inf", math.inf, bad_value(arg)),
        Case(arg, "-inf", -math.inf, bad_value(arg)),
        Case(arg, "complex", complex(good, 1), bad_type(arg)),
        Case(arg, "bool", True, bad_type(arg)),
        Case(arg, "str", str(good), bad_type(arg)),
        Case(arg, "list", [good], bad_type(arg)),
    ]
    if not optional:
        cases.append(Case(arg, "None", None, bad_type(arg)))
    cases += [Case(arg, f"invalid-{v!r}", v, bad_value(arg)) for v in invalid]
    return cases


def choice_cases(arg: str, valid: tuple[str, ...]) -> list[Case]:
    return [
        Case(arg, "unknown", "bogus", bad_value(arg)),
        Case(arg, "upper", valid[0].upper(), bad_value(arg)),
        Case(arg, "None", None, bad(arg)),
        Case(arg, "int", 0, bad(arg)),
        Case(arg, "bytes", valid[0].encode(), bad(arg)),
    ]


def bool_cases(arg: str, good: bool) -> list[Case]:
    """A flag: a NumPy bool may be taken as the bool or refused by name; ints, str, None refused."""
    return [
        Case(arg, "np-bool", np.bool_(good), Either(Same(good), bad_type(arg))),
        Case(arg, "int", int(good), bad_type(arg)),
        Case(arg, "str", "yes", bad_type(arg)),
        Case(arg, "None", None, bad_type(arg)),
    ]


def np_dtype_cases(arg: str = "dtype", *, like_hint: bool = False) -> list[Case]:
    """``dtype`` of a NumPy result: NumPy floating dtypes work, others refused; a torch dtype for
    NumPy output is refused (pointing to ``like=`` where the function has it); long double is
    computed at least in float64, or refused (issue 8, item 9)."""
    hint = ("like",) if like_hint else ()
    return [
        Case(
            arg, "float32", np.float32, Works(lambda o: _dtype_of(o) == np.float32, "float32 out")
        ),
        Case(
            arg,
            "str-float32",
            "float32",
            Works(lambda o: _dtype_of(o) == np.float32, "float32 out"),
        ),
        Case(
            arg, "float16", np.float16, Works(lambda o: _dtype_of(o) == np.float16, "float16 out")
        ),
        Case(
            arg, "longdouble", np.longdouble, Either(Same(None, ulps=8, dtype=False), bad_type(arg))
        ),
        Case(arg, "int32", np.int32, bad_type(arg)),
        Case(arg, "bool", np.bool_, bad_type(arg)),
        Case(arg, "complex", np.complex128, bad_type(arg)),
        Case(arg, "torch-float32", torch.float32, bad_type(arg, also=hint)),
        Case(arg, "object", object, bad_type(arg)),
        Case(arg, "str-bogus", "floaty", bad_type(arg)),
    ]


def _dtype_of(out):
    for o in _leaves(out):
        if isinstance(o, (np.ndarray, torch.Tensor)):
            return o.dtype
    raise AssertionError(f"no array in {out!r}")


def x_cases(
    arg: str,
    ref: Callable[[], torch.Tensor],
    *,
    numpy_ok: bool,
    meta: Any = "works",
    overrides: dict | None = None,
) -> list[Case]:
    """A floating tensor ``x`` of shape (..., seq, dim): views equal copies, float16/bfloat16/
    float64 keep their dtype and are computed at least as precisely as float32 (float64 in
    float64), int/bool/complex/NumPy (for modules)/wrong rank refused. ``meta``: the answer for
    ``x`` on the meta device while the rest (module, other tensors) stays on the CPU: "works"
    (meta out), or an expectation (a refusal naming the device mismatch)."""
    cases = [
        lazy(
            arg,
            "transposed",
            lambda: ref().transpose(-1, -2).contiguous().transpose(-1, -2),
            Same(ref),
        ),
        lazy(
            arg,
            "odd-offset",
            lambda: torch.cat([torch.zeros(*ref().shape[:-1], 1), ref()], -1)[..., 1:],
            Same(ref),
        ),
        lazy(
            arg, "step-2", lambda: torch.stack([ref(), ref()], -1).flatten(-2)[..., ::2], Same(ref)
        ),
        lazy(
            arg,
            "expanded",
            lambda: ref()[:1].expand(*ref().shape),
            Same(lambda: ref()[:1].repeat(ref().shape[0], *[1] * (ref().dim() - 1))),
        ),
        lazy(arg, "float64", lambda: ref().double(), Same(lambda: ref().double())),
        lazy(arg, "float16", lambda: ref().half(), Same(lambda: ref().half(), ulps=2)),
        lazy(arg, "bfloat16", lambda: ref().bfloat16(), Same(lambda: ref().bfloat16(), ulps=2)),
        lazy(
            arg, "meta", lambda: ref().to("meta"), Same(ref, meta=True) if meta == "works" else meta
        ),
        lazy(arg, "empty-seq", lambda: ref()[..., :0, :], Works(is_empty, "empty")),
        lazy(arg, "int64", lambda: ref().long(), bad_type(arg)),
        lazy(arg, "int8", lambda: ref().to(torch.int8), bad_type(arg)),
        lazy(arg, "bool", lambda: ref() > 0, bad_type(arg)),
        lazy(arg, "complex", lambda: ref().to(torch.complex64), bad_type(arg)),
        lazy(arg, "rank-1", lambda: ref().flatten(), bad_value(arg)),
        lazy(arg, "rank-0", lambda: ref().sum(), bad_value(arg)),
        Case(arg, "None", None, bad_type(arg)),
        Case(arg, "str", "x", bad_type(arg)),
        lazy(
            arg,
            "list",
            lambda: ref().tolist(),
            Either(Works(finite), bad_type(arg)) if numpy_ok else bad_type(arg),
        ),
    ]
    if not numpy_ok:
        cases.append(lazy(arg, "numpy", lambda: ref().cpu().numpy(), bad_type(arg)))
    cases.append(lazy(arg, "zero-width", lambda: ref()[..., :0], bad_value(arg)))
    return with_overrides(cases, overrides)


def empty_seq(arg: str, ref: Callable[[], torch.Tensor], **with_: Any) -> dict[str, Case | None]:
    """Overrides for x_cases: ``arg`` with no tokens (seq = 0) works and is empty when the other
    arguments of ``with_`` (the positions) are empty too, replacing x_cases' own empty-seq row."""
    return {
        "empty-seq": None,
        "+empty-seq": lazy(arg, "empty-seq", lambda: ref()[..., :0, :], Works(is_empty), **with_),
    }


def like_cases(arg: str = "like") -> list[Case]:
    return [
        lazy(
            arg,
            "int-tensor",
            lambda: torch.zeros(2, dtype=torch.int64),
            Works(lambda o: _dtype_of(o) == torch.get_default_dtype(), "default dtype"),
        ),
        lazy(
            arg,
            "float16-tensor",
            lambda: torch.zeros(2, dtype=torch.float16),
            Works(lambda o: _dtype_of(o) == torch.float16, "float16"),
        ),
        lazy(
            arg,
            "float64-tensor",
            lambda: torch.zeros(2, dtype=torch.float64),
            Works(lambda o: _dtype_of(o) == torch.float64, "float64"),
        ),
        lazy(arg, "meta-tensor", lambda: torch.zeros(2, device="meta"), Works(on_meta, "meta")),
        Case(
            arg,
            "np-float32",
            np.zeros(2, np.float32),
            Works(lambda o: _dtype_of(o) == np.float32, "float32"),
        ),
        Case(arg, "list", [0.0], bad_type(arg)),
        Case(arg, "str", "torch", bad_type(arg)),
        Case(arg, "int", 0, bad_type(arg)),
    ]


def scaling_cases(arg: str = "scaling") -> list[Case]:
    """HF-style ``rope_scaling`` dicts: the refusals name the offending key."""
    yarn = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 16}
    return [
        Case(arg, "default", {"rope_type": "default"}, Same(None)),
        lazy(arg, "mappingproxy", lambda: MappingProxyType({"rope_type": "default"}), Same(None)),
        lazy(
            arg,
            "ordereddict",
            lambda: OrderedDict(rope_type="linear", factor=2.0),
            Same(lambda: {"rope_type": "linear", "factor": 2.0}),
        ),
        Case(arg, "list", [("rope_type", "linear")], bad_type(arg)),
        Case(arg, "str", "linear", bad_type(arg)),
        lazy(arg, "int-keys", lambda: {1: 2.0, "rope_type": "linear", "factor": 2.0}, bad(arg)),
        lazy(arg, "unknown-type", lambda: {"rope_type": "bogus"}, bad_value("rope_type")),
        lazy(arg, "type-not-str", lambda: {"rope_type": 3}, bad("rope_type")),
        lazy(arg, "missing-factor", lambda: {"rope_type": "linear"}, bad_value("factor")),
        lazy(
            arg,
            "unknown-key",
            lambda: {"rope_type": "linear", "factor": 2.0, "bogus_key": 1},
            bad_value("bogus_key"),
        ),
        lazy(
            arg,
            "factor-nan",
            lambda: {"rope_type": "linear", "factor": math.nan},
            bad_value("factor"),
        ),
        lazy(arg, "factor-str", lambda: {"rope_type": "linear", "factor": "2"}, bad_type("factor")),
        lazy(
            arg, "factor-bool", lambda: {"rope_type": "linear", "factor": True}, bad_type("factor")
        ),
        lazy(
            arg,
            "factor-below-1",
            lambda: {"rope_type": "linear", "factor": 0.5},
            bad_value("factor"),
        ),
        lazy(
            arg,
            "yarn-negative-mscale_all_dim",
            lambda: {**yarn, "mscale": 1.0, "mscale_all_dim": -10.0},
            bad_value("mscale_all_dim"),
        ),
        lazy(
            arg,
            "yarn-zero-mscale",
            lambda: {**yarn, "mscale": -1 / (0.1 * math.log(4.0)), "mscale_all_dim": 1.0},
            bad_value("mscale"),
        ),
        # issue 21, item 1: HF clamps YaRN's correction range one-sidedly; a trained length so
        # long that the bounds cross interpolates every pair (= linear), betas whose pair index
        # overflows float64 give the ramp's limits (linear near 0, none near float64's max)
        lazy(
            arg,
            "yarn-bounds-cross",
            lambda: {**yarn, "original_max_position_embeddings": 10**12, "attention_factor": 1.0},
            Same(lambda: {"rope_type": "linear", "factor": 4.0}),
        ),
        lazy(
            arg,
            "yarn-betas-near-0",
            lambda: {**yarn, "beta_fast": 1e-320, "beta_slow": 1e-320, "attention_factor": 1.0},
            Same(lambda: {"rope_type": "linear", "factor": 4.0}),
        ),
        lazy(
            arg,
            "yarn-betas-near-max",
            lambda: {**yarn, "beta_fast": 1e308, "beta_slow": 1e308, "attention_factor": 1.0},
            Same(lambda: {"rope_type": "default"}),
        ),
        lazy(
            arg,
            "yarn-beta-order",
            lambda: {**yarn, "beta_fast": 1.0, "beta_slow": 32.0},
            bad_value("beta_fast", "beta_slow"),
        ),
        lazy(
            arg,
            "yarn-omp-float",
            lambda: {**yarn, "original_max_position_embeddings": 16.5},
            bad_type("original_max_position_embeddings"),
        ),
        lazy(
            arg,
            "longrope-short-list",
            lambda: {
                "rope_type": "longrope",
                "short_factor": [1.0],
                "long_factor": [1.0],
                "original_max_position_embeddings": 16,
                "factor": 2.0,
            },
            bad_value("short_factor"),
        ),
    ]

"""Hostile-input rows for posenc.rope2d and posenc.torch.RoPEMixed; collected by test_hostile.py."""

from __future__ import annotations

import math

import numpy as np
import torch

import posenc
import seeded
from hostile_values import (
    Case,
    Same,
    Spec,
    Works,
    assert_same,
    bad_type,
    bad_value,
    bool_cases,
    choice_cases,
    empty_seq,
    is_empty,
    lazy,
    on_meta,
    positions_cases,
    real_cases,
    size_cases,
    x_cases,
)
from posenc.torch import RoPEMixed

P = posenc.rope_2d_positions(2, 2, convention="pixtral")  # (4, 2): (row, col)
ANGLES = np.array([0, 1, 2])
CONV = ("qwen2_vl", "pixtral")


def _randn(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return seeded.randn(*shape, generator=g, dtype=torch.float64).float()


def X():
    return _randn(2, 4, 8)  # (heads, seq, dim)


def XB():
    return _randn(2, 2, 4, 8, seed=1)  # (batch, heads, seq, dim) for the module


def F():
    return _randn(2, 4, 2, seed=2)  # (heads, dim/2, (row, col))


def _np(a):
    if isinstance(a, torch.Tensor):
        return a.detach().cpu().numpy()
    return a


def _ref(fn):
    """fn in NumPy float64 for a torch x of any dtype, cast back to x's dtype."""

    def ref(x, positions, **kw):
        if not isinstance(x, torch.Tensor):
            return fn(x, positions, **kw)
        kw = {k: _np(v) for k, v in kw.items()}
        out = fn(x.detach().cpu().double().cpu().numpy(), _np(positions), **kw)
        return torch.as_tensor(np.ascontiguousarray(out)).to(x.dtype)

    return ref


def _x_rows(ref, base_positions, numpy_ok=True, meta="works", **extra):
    return x_cases(
        "x",
        ref,
        numpy_ok=numpy_ok,
        meta=meta,
        overrides={
            **empty_seq(
                "x",
                ref,
                positions=np.zeros((0, 2), dtype=np.int64),
            ),
            "+numpy-tensor-positions": lazy(
                "x",
                "numpy-x-tensor-positions",
                lambda: ref().cpu().numpy(),
                bad_type("positions"),
                positions=torch.as_tensor(base_positions),
            ),
            **extra,
        },
    )


def _positions_rows():
    return positions_cases(
        "positions",
        P,
        count=False,
        overrides={
            "torch-meta": bad_value("positions"),
            "torch-0d": bad_value("positions"),
            "np-int64-scalar": bad_value("positions"),
            "np-0d": bad_value("positions"),
            "np-empty": bad_value("positions"),
            "torch-empty": bad_value("positions"),
            "+fractional": Case("positions", "fractional", P + 0.5, Works(lambda o: True)),
            "+wrong-seq": Case("positions", "wrong-seq", P[:3], bad_value("positions")),
            "+three-coords": Case(
                "positions", "three-coords", np.zeros((4, 3)), bad_value("positions")
            ),
            "+per-head": Case(
                "positions", "per-head", np.stack([P, P + 1]), Same(np.stack([P, P + 1]))
            ),
        },
    )


def _freqs_rows():
    f = F().double().cpu().numpy()
    return [
        Case("freqs", "np-float32", f.astype(np.float32), Same(f.astype(np.float32))),
        lazy("freqs", "torch-float64", lambda: torch.as_tensor(f), Same(lambda: f)),
        lazy(
            "freqs",
            "torch-requires-grad",
            lambda: torch.as_tensor(f).requires_grad_(),
            Same(lambda: f),
        ),
        Case("freqs", "list", f.tolist(), Same(f)),
        Case("freqs", "shared", f[0], Same(lambda: np.stack([f[0], f[0]]))),
        Case("freqs", "ints", np.ones((2, 4, 2), dtype=np.int64), Same(np.ones((2, 4, 2)))),
        Case("freqs", "np-nan", np.full((2, 4, 2), np.nan), bad_value("freqs")),
        lazy("freqs", "torch-inf", lambda: torch.full((2, 4, 2), math.inf), bad_value("freqs")),
        Case("freqs", "complex", f.astype(np.complex128), bad_type("freqs")),
        Case("freqs", "bool", np.ones((2, 4, 2), dtype=bool), bad_type("freqs")),
        Case("freqs", "wrong-pairs", f[:, :3], bad_value("freqs")),
        Case("freqs", "wrong-last", np.zeros((2, 4, 3)), bad_value("freqs")),
        Case("freqs", "wrong-heads", np.zeros((3, 4, 2)), bad_value("freqs")),
        Case("freqs", "1-d", np.zeros(8), bad_value("freqs")),
        lazy("freqs", "torch-meta", lambda: F().to("meta"), bad_value("freqs")),
        Case("freqs", "int", 3, bad_type("freqs")),
        Case("freqs", "float", 0.5, bad_type("freqs")),
        Case("freqs", "None", None, bad_type("freqs")),
        Case("freqs", "str", "freqs", bad_type("freqs")),
        lazy(
            "freqs",
            "tensor-numpy-x",
            lambda: F(),
            bad_type("freqs"),
            x=X().cpu().numpy(),
            positions=P,
        ),
    ]


def _positions_like_rows():
    return [
        lazy(
            "like",
            "int-tensor",
            lambda: torch.zeros(2, dtype=torch.int64),
            Works(lambda o: isinstance(o, torch.Tensor) and o.dtype == torch.int64),
        ),
        lazy("like", "meta-tensor", lambda: torch.zeros(2, device="meta"), Works(on_meta)),
        Case(
            "like",
            "np-float32",
            np.zeros(2, np.float32),
            Works(lambda o: isinstance(o, np.ndarray) and o.dtype == np.int64),
        ),
        Case("like", "list", [0.0], bad_type("like")),
        Case("like", "str", "torch", bad_type("like")),
        Case("like", "int", 0, bad_type("like")),
    ]


SPECS = [
    Spec(
        "posenc.rope_2d_positions",
        posenc.rope_2d_positions,
        {
            "height": 4,
            "width": 6,
            "convention": "qwen2_vl",
            "merge_size": None,
            "frames": 1,
            "like": None,
        },
        [
            *size_cases("height", 4, zero=Works(is_empty), invalid=(3,)),
            *size_cases("width", 6, zero=Works(is_empty), invalid=(5,)),
            *size_cases("frames", 2, zero=Works(is_empty)),
            *size_cases("merge_size", 2, optional=True, invalid=(4, 5)),
            Case(
                "merge_size",
                "with-pixtral",
                2,
                bad_value("merge_size"),
                with_={"convention": "pixtral"},
            ),
            Case(
                "height",
                "odd-pixtral",
                3,
                Works(lambda o: o.shape == (18, 2)),
                with_={"convention": "pixtral"},
            ),
            *choice_cases("convention", CONV),
            *_positions_like_rows(),
            # issue 21: 2**20 x 2**20 (16 TiB, its 2**40 cap) was a MemoryError from NumPy
            Case("height", "past-memory", 2**20, bad_value("height"), with_={"width": 2**20}),
            Case("frames", "past-memory", 2**10, bad_value("frames"), with_={"width": 2**28}),
            # issue 40: on like's device too (built in NumPy, then moved)
            lazy(
                "height",
                "past-memory-like-tensor",
                lambda: 2**20,
                bad_value("height"),
                width=2**20,
                like=torch.zeros(1),
            ),
        ],
    ),
    Spec(
        "posenc.rope_2d_frequencies",
        posenc.rope_2d_frequencies,
        {"dim": 8, "convention": "pixtral", "base": 10000.0},
        [
            *size_cases("dim", 8, invalid=(6, 2)),
            # issue 40: a 2**51 x 2 float64 table (32 PiB) within dim's 2**53 cap: refused
            # before allocating
            Case("dim", "past-memory", 2**52, bad_value("dim")),
            *choice_cases("convention", CONV),
            *real_cases("base", 10000.0, invalid=(0, 1, -5)),
        ],
    ),
    Spec(
        "posenc.rope_mixed_frequencies",
        posenc.rope_mixed_frequencies,
        {"dim": 8, "angles": ANGLES, "theta": 10.0},
        [
            *size_cases("dim", 8, invalid=(6, 2)),
            # issue 40: tables (and magnitudes) of more bytes than memory, within dim's cap
            Case("dim", "past-memory", 2**52, bad_value("dim")),
            lazy(
                "dim", "past-memory-torch", lambda: 2**40, bad_value("dim"), angles=torch.zeros(4)
            ),
            Case(
                "angles",
                "broadcast-past-memory",
                # int64: as_positions's finiteness test of float angles allocates first
                np.broadcast_to(np.zeros(1, dtype=np.int64), (2**36,)),
                bad_value("angles", "dim"),
            ),
            *positions_cases(
                "angles",
                ANGLES,
                count=False,
                overrides={
                    "torch-float64": Same(lambda: torch.as_tensor(ANGLES).double()),
                },
            ),
            *real_cases("theta", 10.0, invalid=(0, 1, -5)),
        ],
    ),
    Spec(
        "posenc.apply_rope_2d",
        posenc.apply_rope_2d,
        {"x": X(), "positions": P, "convention": "pixtral", "base": 10000.0, "pairing": "half"},
        [
            *_x_rows(
                X,
                P,
                **{
                    "+width-6": lazy("x", "width-6", lambda: X()[..., :6], bad_value("x")),
                    "+numpy-float32": lazy(
                        "x",
                        "numpy-float32",
                        lambda: X().cpu().numpy(),
                        Same(lambda: X().cpu().numpy()),
                    ),
                },
            ),
            *_positions_rows(),
            # issue 21: one (row, col) for every token of a torch x, half pairing: a reshape
            # error in the slab path (fixed on main by 623e724, then b1e025d)
            lazy(
                "positions",
                "torch-one-for-all-half",
                lambda: torch.tensor([[1, 0]]),
                Same(lambda: torch.tensor([[1, 0]] * 4)),
            ),
            lazy(
                "positions",
                "torch-one-for-all-half-4d",
                lambda: torch.tensor([[1, 0]]),
                Same(lambda: torch.tensor([[1, 0]] * 4)),
                x=_randn(2, 2, 4, 8),
            ),
            *choice_cases("convention", CONV),
            *real_cases("base", 10000.0, invalid=(0, 1, -5)),
            *choice_cases("pairing", ("half", "interleaved")),
        ],
        ref_call=_ref(posenc.apply_rope_2d),
    ),
    Spec(
        "posenc.apply_rope_mixed",
        posenc.apply_rope_mixed,
        {"x": X(), "positions": P, "freqs": F(), "pairing": "interleaved"},
        [
            *_x_rows(
                X,
                P,
                meta=bad_value("x"),
                **{
                    "+odd-width": lazy("x", "odd-width", lambda: X()[..., :7], bad_value("x")),
                    "+numpy-tensor-freqs": lazy(
                        "x",
                        "numpy-x-tensor-freqs",
                        lambda: X().cpu().numpy(),
                        bad_type("positions", "freqs"),
                    ),
                },
            ),
            *_positions_rows(),
            *_freqs_rows(),
            *choice_cases("pairing", ("interleaved", "half")),
        ],
        ref_call=_ref(posenc.apply_rope_mixed),
    ),
    Spec(
        "posenc.torch.RoPEMixed",
        lambda **kw: RoPEMixed(**kw)(XB(), P),
        {"dim": 8, "num_heads": 2, "theta": 10.0, "rotate": False, "pairing": "interleaved"},
        [
            *size_cases("dim", 8, invalid=(6, 2)),
            *size_cases("num_heads", 2),
            *real_cases("theta", 10.0, invalid=(0, 1, -5)),
            *bool_cases("rotate", False),
            *choice_cases("pairing", ("interleaved", "half")),
        ],
    ),
    Spec(
        "posenc.torch.RoPEMixed.forward",
        lambda **kw: RoPEMixed(8, 2, rotate=False)(**kw),
        {"x": XB(), "positions": P},
        [
            *_x_rows(
                XB,
                P,
                numpy_ok=False,
                meta=bad_value("x"),
                **{
                    "+wrong-heads": lazy("x", "wrong-heads", lambda: XB()[:, :1], bad_value("x")),
                    "+numpy-tensor-positions": lazy(
                        "x",
                        "numpy-x-tensor-positions",
                        lambda: XB().cpu().numpy(),
                        bad_type("x"),
                        positions=torch.as_tensor(P),
                    ),
                },
            ),
            *_positions_rows(),
        ],
    ),
]


def _meta_then_reset():
    fresh = RoPEMixed(8, 2, rotate=False)
    with torch.device("meta"):
        m = RoPEMixed(8, 2, rotate=False)
    m = m.to_empty(device=torch.get_default_device())
    m.reset_parameters()
    assert_same(m(XB(), P), fresh(XB(), P), ulps=0)


def _double():
    m = RoPEMixed(8, 2, rotate=False).double()
    x = XB().double()
    want = posenc.apply_rope_mixed(x.cpu().numpy(), P, m.freqs.detach().cpu().numpy())
    assert_same(m(x, P), torch.as_tensor(want), ulps=8)


MODULE_STATES = {
    "RoPEMixed-meta-to_empty-reset_parameters": _meta_then_reset,
    "RoPEMixed-double": _double,
}

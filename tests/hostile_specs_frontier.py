"""Hostile-input rows for posenc.frontier (Kerple, Sandwich, FIRE, CoPE, ReRoPE); collected by
tests/test_hostile.py."""

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
    bad_value,
    choice_cases,
    lazy,
    np_dtype_cases,
    positions_cases,
    real_cases,
    size_cases,
    x_cases,
)

D4 = np.arange(4)


def _randn(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return seeded.randn(*shape, generator=g, dtype=torch.float64).float()


def Q():
    return _randn(2, 3, 4)


def K():
    return _randn(2, 3, 4, seed=1)


def E():
    return _randn(5, 4, seed=2)


def _as_numpy_cope(q, k):
    """A check: the torch result equals cope_bias of the same values as NumPy arrays, with the
    leading axes of q and k broadcast as NumPy does."""

    def check(out):
        want = posenc.cope_bias(q().double().numpy(), k().double().numpy(), E().double().numpy())
        assert isinstance(out, torch.Tensor) and tuple(out.shape) == want.shape, out.shape
        np.testing.assert_allclose(out.double().numpy(), want, rtol=1e-5, atol=1e-5)
        return True

    return check


def _mp():
    import mpmath

    mpmath.mp.prec = 200
    return mpmath


def _close(got, want):
    got = np.asarray(got.cpu().numpy() if isinstance(got, torch.Tensor) else got, dtype=np.float64)
    assert got.shape == want.shape, (got.shape, want.shape)
    err = np.abs(got - want) / np.maximum(1.0, np.abs(want))
    assert np.all(err <= 4 * 2.0**-52), (got, want)
    return True


def _kerple_mp(r1, r2, kernel):
    """The bias of the call's distances (0, 3 and a huge one) in 200-bit arithmetic."""

    def check(out):
        mp = _mp()
        d = [0.0, 3.0, 1e308 if kernel == "log" else 1e200]
        a, b = mp.mpf(r1), mp.mpf(r2)
        want = [-a * (mp.log1p(b * mp.mpf(x)) if kernel == "log" else mp.mpf(x) ** b) for x in d]
        return _close(out, np.array([float(w) for w in want]))

    return check


def _fire_mp(c, big_l, q=(0, 1, 2, 3)):
    """FIRE's ratio for the call's positions (keys 0 .. 3) in 200-bit arithmetic."""

    def check(out):
        mp = _mp()
        c_, l_ = mp.mpf(c), mp.mpf(big_l)
        want = [
            [
                float(
                    mp.log1p(c_ * (mp.mpf(i) - j)) / mp.log1p(c_ * max(mp.mpf(i), l_))
                    if j <= i
                    else 0
                )
                for j in range(4)
            ]
            for i in q
        ]
        return _close(out, np.array(want))

    return check


def _poisoned(t, value):
    t = t.clone()
    t.view(-1)[1] = value
    return t


def _distance_rows(arg="distance"):
    return positions_cases(arg, D4, count=False, overrides={"int": Same(np.array(3))})


SPECS = [
    Spec(
        "posenc.kerple_bias",
        posenc.kerple_bias,
        {"distance": D4, "r1": 1.0, "r2": 0.5, "kernel": "log", "dtype": None},
        [
            *_distance_rows(),
            *real_cases("r1", 1.0, invalid=(0, -1)),
            *real_cases("r2", 0.5, invalid=(0, -1)),
            Case("r2", "power-past-2", 2.5, bad_value("r2"), with_={"kernel": "power"}),
            # issue 21, item 7: an intermediate product past float64, the answer within it
            Case(
                "r2",
                "product-overflows",
                1e10,
                Works(_kerple_mp(1.0, 1e10, "log")),
                with_={"distance": np.array([0.0, 3.0, 1e308])},
            ),
            Case(
                "r1",
                "power-overflows-alone",
                1e-300,
                Works(_kerple_mp(1e-300, 2.0, "power")),
                with_={"distance": np.array([0.0, 3.0, 1e200]), "r2": 2.0, "kernel": "power"},
            ),
            lazy(
                "distance",
                "torch-product-overflows",
                lambda: torch.tensor([0.0, 3.0, 1e308], dtype=torch.float64),
                Works(_kerple_mp(1.0, 1e10, "log")),
                r2=1e10,
                dtype=torch.float64,
            ),
            *choice_cases("kernel", ("log", "power")),
            *np_dtype_cases(),
        ],
    ),
    Spec(
        "posenc.sandwich_bias",
        posenc.sandwich_bias,
        {"distance": D4, "dim": 8, "base": 10000.0, "dtype": None},
        [
            *_distance_rows(),
            *size_cases("dim", 8, invalid=(7,)),
            *real_cases("base", 10000.0, invalid=(0, -1, 1)),
            *np_dtype_cases(),
        ],
    ),
    Spec(
        "posenc.fire_relative",
        posenc.fire_relative,
        {"q_positions": D4, "k_positions": D4, "c": 1.0, "threshold": 2.0, "dtype": None},
        [
            *positions_cases("q_positions", D4),
            *positions_cases("k_positions", D4),
            *real_cases("c", 1.0, invalid=(0, -1)),
            # issue 21, item 7: c * x past float64 (main: nan), c * max(L, i) below 2**-60
            Case("c", "product-overflows", 1e308, Works(_fire_mp(1e308, 2.0))),
            Case(
                "c",
                "product-vanishes",
                1e-320,
                Works(_fire_mp(1e-320, 2.3)),
                with_={"threshold": 2.3},
            ),
            lazy(
                "q_positions",
                "torch-c-huge",
                lambda: torch.tensor([0.0, 1.0, 3.0, 1e15], dtype=torch.float64),
                Works(_fire_mp(1e300, 2.0, [0.0, 1.0, 3.0, 1e15])),
                c=1e300,
                dtype=torch.float64,
            ),
            *real_cases("threshold", 2.0, invalid=(0, -1)),
            *np_dtype_cases(),
        ],
    ),
    Spec(
        "posenc.cope_bias",
        posenc.cope_bias,
        {"q": Q(), "k": K(), "pos_emb": E(), "scale": None},
        [
            *x_cases("q", Q, numpy_ok=True, meta=bad_value("q")),
            *x_cases(
                "k", K, numpy_ok=True, meta=bad_value("k"), overrides={"empty-seq": bad_value("k")}
            ),
            *x_cases(
                "pos_emb",
                E,
                numpy_ok=True,
                meta=bad_value("pos_emb"),
                overrides={"empty-seq": bad_value("pos_emb")},
            ),
            *real_cases("scale", 0.5, optional=True),
            Case("scale", "None", None, Same(0.5)),
            # issue 21: a NaN or inf tensor gave an out-of-bounds index error
            *(
                lazy(arg, f"torch-{label}", lambda f=f, v=v: _poisoned(f(), v), bad_value(arg))
                for arg, f in (("q", Q), ("k", K), ("pos_emb", E))
                for label, v in (("nan", math.nan), ("inf", math.inf))
            ),
            # issue 40: q (1, 3, 4) with k (2, 3, 4) worked in NumPy and failed in torch's gather;
            # leading axes that do not broadcast failed inside NumPy / torch without naming q, k
            lazy(
                "q", "broadcast-batch", lambda: Q()[:1], Works(_as_numpy_cope(lambda: Q()[:1], K))
            ),
            lazy(
                "k", "broadcast-batch", lambda: K()[:1], Works(_as_numpy_cope(Q, lambda: K()[:1]))
            ),
            lazy(
                "q",
                "broadcast-4d",
                lambda: Q()[:, None],
                Works(_as_numpy_cope(lambda: Q()[:, None], K)),
            ),
            Case(
                "q",
                "np-broadcast-batch",
                np.zeros((1, 3, 4)),
                Works(lambda o: o.shape == (2, 3, 3)),
                with_={"k": np.zeros((2, 3, 4)), "pos_emb": np.ones((5, 4))},
            ),
            lazy("q", "other-batch", lambda: _randn(3, 3, 4), bad_value("q", "k")),
            Case(
                "q",
                "np-other-batch",
                np.zeros((3, 3, 4)),
                bad_value("q", "k"),
                with_={"k": np.zeros((2, 3, 4)), "pos_emb": np.ones((5, 4))},
            ),
            lazy(
                "q",
                "past-memory",
                lambda: torch.zeros(()).expand(2, 10**6, 4),
                bad_value("q", "k"),
                k=torch.zeros(()).expand(2, 10**7, 4),
            ),
            lazy(
                "k",
                "product-nan",
                lambda: torch.tensor([[[1e300, -1e300]]], dtype=torch.float64),
                bad_value("q", "k", "pos_emb"),
                q=torch.tensor([[[1e300, 1e300]]], dtype=torch.float64),
                pos_emb=torch.zeros(2, 2, dtype=torch.float64),
            ),
        ],
    ),
    Spec(
        "posenc.rerope_distance",
        posenc.rerope_distance,
        {"distance": D4, "window": 2.0, "slope": 0.0, "dtype": None},
        [
            *_distance_rows(),
            *real_cases("window", 2.0, invalid=(0, -1)),
            *real_cases("slope", 0.5, invalid=(-0.1, 1.5)),
            *np_dtype_cases(),
        ],
    ),
]

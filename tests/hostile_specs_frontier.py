"""Hostile-input rows for posenc.frontier (Kerple, Sandwich, FIRE, CoPE, ReRoPE); collected by
tests/test_hostile.py."""

from __future__ import annotations

import numpy as np
import torch

import posenc
import seeded
from hostile_values import (
    Case,
    Same,
    Spec,
    bad_value,
    choice_cases,
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

"""Hostile-input rows for posenc.partial (partial and proportional RoPE); collected by
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
    Works,
    bad,
    bad_type,
    bad_value,
    choice_cases,
    empty_seq,
    lazy,
    positions_cases,
    real_cases,
    size_cases,
    x_cases,
)

P4 = np.arange(4)


def X():
    g = torch.Generator().manual_seed(0)
    return seeded.randn(2, 2, 4, 16, generator=g, dtype=torch.float64).float()


def _fraction_cases(arg="fraction"):
    return [
        Case(arg, "np-float32", np.float32(0.5), Same(0.5)),
        Case(arg, "np-float64", np.float64(0.5), Same(0.5)),
        Case(arg, "one", 1, Same(1.0)),
        Case(arg, "nan", float("nan"), bad_value(arg)),
        Case(arg, "inf", float("inf"), bad_value(arg)),
        Case(arg, "zero", 0.0, bad_value(arg)),
        Case(arg, "negative", -0.25, bad_value(arg)),
        Case(arg, "above-one", 1.5, bad_value(arg)),
        Case(arg, "complex", 0.5j, bad_type(arg)),
        Case(arg, "bool", True, bad_type(arg)),
        Case(arg, "str", "0.5", bad_type(arg)),
        Case(arg, "None", None, bad_type(arg)),
        Case(arg, "list", [0.5], bad_type(arg)),
        Case(arg, "odd-width", 0.3125, bad_value(arg)),  # int(16 * 0.3125) = 5
    ]


SPECS = [
    Spec(
        "posenc.partial_rope_frequencies",
        posenc.partial_rope_frequencies,
        {"head_dim": 16, "fraction": 0.5, "rule": "rotary_dim", "base": 10000.0, "pairing": "half"},
        [
            *size_cases("head_dim", 16, invalid=(15,)),
            *_fraction_cases(),
            Case(
                "fraction",
                "proportional-odd-ok",
                0.3125,
                Works(lambda w: int((w > 0).sum()) == 4, "int(0.3125 * 16 // 2) = 2 pairs"),
                with_={"rule": "proportional"},
            ),
            *choice_cases("rule", ("rotary_dim", "proportional")),
            *real_cases("base", 10000.0, invalid=(0, 1, -5)),
            *choice_cases("pairing", ("half", "interleaved")),
        ],
    ),
    Spec(
        "posenc.apply_partial_rope",
        posenc.apply_partial_rope,
        {
            "x": X(),
            "positions": P4,
            "fraction": 0.5,
            "rule": "proportional",
            "base": 10000.0,
            "pairing": "half",
        },
        [
            *x_cases(
                "x",
                X,
                numpy_ok=True,
                overrides={
                    **empty_seq("x", X, positions=0),
                    "+odd-dim": lazy("x", "odd-dim", lambda: X()[..., :15], bad_value("x")),
                    "+numpy": lazy(
                        "x",
                        "numpy-float32",
                        lambda: X().cpu().numpy(),
                        Same(lambda: X().cpu().numpy()),
                    ),
                    "+numpy-tensor-positions": lazy(
                        "x",
                        "numpy-x-tensor-positions",
                        lambda: X().cpu().numpy(),
                        bad_type("positions"),
                        positions=torch.arange(4),
                    ),
                },
            ),
            *positions_cases(
                "positions",
                P4,
                empty=bad_value("positions"),
                overrides={
                    "torch-meta": bad_value("positions"),
                    "+wrong-seq": Case(
                        "positions", "wrong-seq", np.arange(5), bad_value("positions")
                    ),
                },
            ),
            *_fraction_cases(),
            *choice_cases("rule", ("rotary_dim", "proportional")),
            *real_cases("base", 10000.0, invalid=(0, 1, -5)),
            *choice_cases("pairing", ("half", "interleaved")),
        ],
    ),
]

# odd-width only refuses under the rotary_dim rule: the apply spec's baseline is proportional
for _case in SPECS[1].cases:
    if _case.label == "odd-width":
        _case.with_ = {"rule": "rotary_dim"}
del _case
assert bad  # imported for symmetry with the other spec files

"""Hostile-input rows for posenc.mla (MLA's decoupled RoPE); collected by tests/test_hostile.py."""

from __future__ import annotations

import numpy as np
import torch

import posenc
import seeded
from hostile_values import (
    Case,
    Either,
    Same,
    Spec,
    Works,
    bad,
    bad_type,
    bad_value,
    choice_cases,
    is_empty,
    lazy,
    positions_cases,
    real_cases,
    scaling_cases,
    size_cases,
    x_cases,
)

P4 = np.arange(4)
YARN = {
    "rope_type": "yarn",
    "factor": 40.0,
    "mscale": 0.707,
    "mscale_all_dim": 0.707,
    "original_max_position_embeddings": 16,
}


def _randn(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return seeded.randn(*shape, generator=g, dtype=torch.float64).float()


def Q():
    return _randn(2, 3, 4, 12)  # (batch, heads, seq, 8 nope + 4 rope)


def K():
    return _randn(2, 1, 4, 4, seed=1)


def _empty(arg, other, ref_other):
    return lazy(
        arg,
        "empty-seq",
        lambda: (Q if arg == "q" else K)()[..., :0, :],
        Works(is_empty),
        positions=np.arange(0),
        **{other: lambda: ref_other()[..., :0, :]},
    )


def _x_rows(arg, ref, other, ref_other):
    return x_cases(
        arg,
        ref,
        numpy_ok=True,
        meta=bad_value("q", "k_pe"),  # the other one stays on the CPU
        overrides={
            "empty-seq": None,
            "+numpy": lazy(
                arg, "numpy-with-tensor", lambda: ref().cpu().numpy(), bad_type("q", "k_pe")
            ),
        },
    )


SPECS = [
    Spec(
        "posenc.apply_mla_rope",
        lambda **kw: posenc.apply_mla_rope(
            **{k: (v() if k in ("q", "k_pe") and callable(v) else v) for k, v in kw.items()}
        ),
        {
            "q": Q(),
            "k_pe": K(),
            "positions": P4,
            "base": 10000.0,
            "pairing": "deinterleave",
            "scaling": YARN,
        },
        [
            *_x_rows("q", Q, "k_pe", K),
            *_x_rows("k_pe", K, "q", Q),
            _empty("q", "k_pe", K),
            lazy("k_pe", "odd-width", lambda: K()[..., :3], bad_value("k_pe")),
            lazy("k_pe", "wider-than-q", lambda: _randn(2, 1, 4, 14), bad_value("k_pe")),
            lazy("k_pe", "other-seq", lambda: K()[..., :3, :], bad_value("k_pe")),
            lazy(
                "k_pe", "whole-head", lambda: Q()[:, :1], Works(lambda o: o[0].shape == Q().shape)
            ),
            *positions_cases(
                "positions",
                P4,
                empty=bad_value("positions"),
                overrides={
                    "torch-meta": bad_value("positions"),
                    "+per-batch": Case(
                        "positions",
                        "per-batch-2d",
                        np.stack([P4, P4 + 3]),
                        Same(np.stack([P4, P4 + 3])),
                    ),
                    "+wrong-seq": Case(
                        "positions", "wrong-seq", np.arange(5), bad_value("positions")
                    ),
                },
            ),
            *real_cases("base", 10000.0, invalid=(0, 1, -5)),
            *choice_cases("pairing", ("interleaved", "half", "deinterleave")),
            *scaling_cases(),
        ],
    ),
    Spec(
        "posenc.mla_softmax_scale",
        posenc.mla_softmax_scale,
        {"qk_nope_head_dim": 8, "qk_rope_head_dim": 4, "scaling": YARN},
        [
            *size_cases("qk_nope_head_dim", 8, zero=Same(0)),
            *size_cases("qk_rope_head_dim", 4, invalid=(7,)),
            *scaling_cases(),
            Case(
                "scaling",
                "yarn-no-mscale_all_dim",
                {k: v for k, v in YARN.items() if k != "mscale_all_dim"},
                Works(lambda o: abs(o - 12**-0.5) < 1e-15),
            ),
            Case(
                "scaling",
                "rope_theta-str",
                {**YARN, "rope_theta": "1e4"},
                bad("rope_theta"),
            ),
            Case(
                "scaling",
                "mscale_all_dim-negative-alone",
                {k: v for k, v in YARN.items() if k != "mscale"} | {"mscale_all_dim": -10.0},
                bad_value("mscale_all_dim"),
            ),
            Case("scaling", "default", None, Either(Same(None), bad_value("scaling"))),
        ],
    ),
]

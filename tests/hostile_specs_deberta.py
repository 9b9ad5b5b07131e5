"""Hostile-input rows for posenc.deberta_* (issue 11, scheme 8)."""

from __future__ import annotations

import numpy as np
import torch

import posenc
import seeded
from hostile_values import (
    BIG,
    Case,
    Same,
    Spec,
    Works,
    bad_type,
    bad_value,
    finite,
    is_empty,
    lazy,
    on_meta,
    positions_cases,
    size_cases,
)

REL = np.array([0, 3, 5, 9, 100])  # fits every integer dtype; 9 and 100 are log-bucketed


def int_option_cases(arg: str, good: int) -> list[Case]:
    """bucket_size / max_position: ints (<= 0 turns bucketing off), nothing else."""
    return [
        Case(arg, "np-int64", np.int64(good), Same(good)),
        Case(arg, "off", -1, Works(lambda o: np.array_equal(np.asarray(o), REL), "identity")),
        Case(arg, "bool", True, bad_type(arg)),
        Case(arg, "float", float(good), bad_type(arg)),
        Case(arg, "str", str(good), bad_type(arg)),
        Case(arg, "None", None, bad_type(arg)),
        lazy(arg, "torch-0d", lambda: torch.tensor(good), bad_type(arg)),
        Case(arg, "huge", BIG, bad_value(arg)),
    ]


def _randn(*shape, seed=0, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    return seeded.randn(*shape, generator=g, dtype=torch.float64).to(dtype)


def Q():
    return _randn(2, 5, 4)


def K():
    return _randn(2, 5, 4, seed=1)


def PK():
    return _randn(8, 4, seed=2)


def PQ():
    return _randn(8, 4, seed=3)


def REL5():
    return posenc.deberta_relative_positions(5, 5, like=torch.zeros(1))


def float_cases(arg: str, ref, *, optional: bool) -> list[Case]:
    cases = [
        lazy(arg, "float32", lambda: ref().float(), Works(finite, "finite")),
        lazy(
            arg,
            "strided",
            lambda: ref().transpose(-1, -2).contiguous().transpose(-1, -2),
            Same(ref),
        ),
        lazy(arg, "meta", lambda: ref().to("meta"), bad_value(arg)),
        lazy(arg, "int64", lambda: ref().long(), bad_type(arg)),
        lazy(arg, "bool", lambda: ref() > 0, bad_type(arg)),
        lazy(arg, "complex", lambda: ref().to(torch.complex64), bad_type(arg)),
        lazy(arg, "numpy", lambda: ref().cpu().numpy(), bad_type(arg)),
        lazy(arg, "list", lambda: ref().tolist(), bad_type(arg)),
        lazy(arg, "rank-1", lambda: ref().flatten(), bad_value(arg)),
        lazy(arg, "zero-width", lambda: ref()[..., :0], bad_value(arg)),
        Case(arg, "str", "x", bad_type(arg)),
    ]
    if not optional:
        cases.append(Case(arg, "None", None, bad_type(arg)))
    return cases


SPECS = [
    Spec(
        "posenc.deberta_log_bucket",
        posenc.deberta_log_bucket,
        {"relative_position": REL, "bucket_size": 8, "max_position": 64},
        [
            *positions_cases(
                "relative_position",
                REL,
                floats=False,
                count=False,
                overrides={"int": Same(np.array(100))},
            ),
            Case(
                "relative_position",
                "int64-extremes",
                np.array([-(2**63), 2**63 - 1]),
                Works(lambda o: o.tolist()[0] < -7 and o.tolist()[1] > 7, "far buckets"),
            ),
            Case(
                "relative_position",
                "uint64-huge",
                np.array([2**64 - 1], np.uint64),
                bad_value("relative_position"),
            ),
            Case("relative_position", "py-huge", [2**70], bad_value("relative_position")),
            *int_option_cases("bucket_size", 8),
            Case("bucket_size", "one", 1, bad_value("bucket_size")),
            *int_option_cases("max_position", 64),
            Case("max_position", "too-small", 5, bad_value("max_position")),
        ],
    ),
    Spec(
        "posenc.deberta_relative_positions",
        posenc.deberta_relative_positions,
        {"q_len": 3, "k_len": 4, "bucket_size": 4, "max_position": 8, "like": None},
        [
            *size_cases("q_len", 3, zero=Works(is_empty, "empty")),
            *size_cases("k_len", 4, zero=Works(is_empty, "empty")),
            *[c for c in int_option_cases("bucket_size", 4) if c.label != "off"],
            *[c for c in int_option_cases("max_position", 8) if c.label != "off"],
            lazy(
                "like",
                "tensor",
                lambda: torch.zeros(2),
                Works(lambda o: isinstance(o, torch.Tensor) and o.dtype == torch.int64),
            ),
            lazy("like", "meta", lambda: torch.zeros(2, device="meta"), Works(on_meta, "meta")),
            Case("like", "numpy", np.zeros(2), Works(lambda o: isinstance(o, np.ndarray))),
            Case("like", "list", [0.0], bad_type("like")),
            Case("like", "str", "torch", bad_type("like")),
        ],
    ),
    Spec(
        "posenc.deberta_disentangled_bias",
        posenc.deberta_disentangled_bias,
        {
            "query": Q(),
            "key": K(),
            "relative_position": REL5(),
            "pos_key": PK(),
            "pos_query": PQ(),
            "scale_factor": None,
        },
        [
            *float_cases("query", Q, optional=False),
            *float_cases("key", K, optional=False),
            *float_cases("pos_key", PK, optional=True),
            Case("pos_key", "None", None, Works(finite, "p2c only")),
            lazy("pos_key", "odd-rows", lambda: PK()[:7], bad_value("pos_key")),
            lazy("pos_key", "other-dim", lambda: _randn(8, 3), bad_value("pos_key")),
            *float_cases("pos_query", PQ, optional=True),
            Case("pos_query", "None", None, Works(finite, "c2p only")),
            lazy("pos_query", "other-span", lambda: _randn(6, 4), bad_value("pos_query")),
            lazy(
                "relative_position", "float", lambda: REL5().double(), bad_type("relative_position")
            ),
            Case(
                "relative_position",
                "numpy",
                np.zeros((5, 5), np.int64),
                bad_type("relative_position"),
            ),
            lazy(
                "relative_position",
                "wrong-shape",
                lambda: REL5()[:4],
                bad_value("relative_position"),
            ),
            lazy("relative_position", "batched", lambda: REL5()[None], Same(REL5)),
            Case("relative_position", "None", None, bad_type("relative_position")),
            # issue 21: a meta relative_position with a CPU query was 'Cannot copy out of meta'
            lazy(
                "relative_position",
                "meta-with-cpu-query",
                lambda: REL5().to("meta"),
                bad_value("relative_position"),
            ),
            Case("scale_factor", "three", 3, Same(None)),
            Case("scale_factor", "np-int", np.int64(3), Same(None)),
            Case("scale_factor", "zero", 0, bad_value("scale_factor")),
            Case("scale_factor", "float", 3.0, bad_type("scale_factor")),
            Case("scale_factor", "bool", True, bad_type("scale_factor")),
            Case("scale_factor", "huge", BIG, bad_value("scale_factor")),
        ],
    ),
]

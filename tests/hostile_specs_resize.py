"""Hostile-input rows for posenc.resize_position_embeddings (issue 11, scheme 10)."""

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
    bool_cases,
    choice_cases,
    finite,
    lazy,
)


def T():
    g = torch.Generator().manual_seed(0)
    return seeded.randn(1, 1 + 16, 6, generator=g, dtype=torch.float64)


def _shape(*shape):
    return Works(lambda o: tuple(o.shape) == shape, f"shape {shape}")


def grid_cases(arg: str, good: int, *, optional: bool) -> list[Case]:
    cases = [
        Case(arg, "list", [good, good], Same((good, good))),
        Case(arg, "np-ints", (np.int64(good), np.uint8(good)), Same((good, good))),
        Case(arg, "three", (5, 5, 5), bad_value(arg)),
        Case(arg, "zero", (0, 5), bad_value(arg)),
        Case(arg, "negative", (-5, 5), bad_value(arg)),
        Case(arg, "huge", (BIG, 5), bad_value(arg)),
        Case(arg, "float", (5.0, 5), bad_type(arg)),
        Case(arg, "bool", (True, 5), bad_type(arg)),
        Case(arg, "str", "5", bad_type(arg)),
        Case(arg, "ndarray", np.array([5, 5]), bad_type(arg)),
        lazy(arg, "tensor", lambda: torch.tensor([5, 5]), bad_type(arg)),
    ]
    if not optional:
        cases.append(Case(arg, "None", None, bad_type(arg)))
    return cases


def _big_endian_same(out) -> bool:
    want = posenc.resize_position_embeddings(T().cpu().numpy(), (5, 5))
    assert out.dtype == np.dtype(">f8") and np.array_equal(out, want), (out.dtype, out)
    return True


SPECS = [
    Spec(
        "posenc.resize_position_embeddings",
        posenc.resize_position_embeddings,
        {
            "table": T(),
            "new_grid": (5, 5),
            "old_grid": None,
            "num_prefix_tokens": 1,
            "mode": "bicubic",
            "align_corners": False,
            "antialias": False,
        },
        [
            lazy(
                "table",
                "numpy",
                lambda: T().cpu().numpy(),
                Works(
                    lambda o: (
                        isinstance(o, np.ndarray)
                        and np.array_equal(
                            # the NumPy path runs torch's CPU kernel: equal to a CPU table's
                            o,
                            posenc.resize_position_embeddings(T().cpu(), (5, 5)).numpy(),
                        )
                    ),
                    "NumPy out, the same values",
                ),
            ),
            lazy("table", "2-d", lambda: T()[0], _shape(26, 6)),
            lazy("table", "batched", lambda: T().expand(3, -1, -1), _shape(3, 26, 6)),
            lazy(
                "table",
                "strided",
                lambda: T().transpose(1, 2).contiguous().transpose(1, 2),
                Same(T),
            ),
            lazy("table", "float32", lambda: T().float(), Works(finite, "finite")),
            lazy("table", "float16", lambda: T().half(), Works(finite, "finite")),
            lazy("table", "bfloat16", lambda: T().bfloat16(), Works(finite, "finite")),
            lazy("table", "meta", lambda: T().to("meta"), _shape(1, 26, 6)),
            lazy("table", "non-square", lambda: T()[:, :15], bad_value("table", "old_grid")),
            lazy("table", "one-row", lambda: T()[:, :1], bad_value("num_prefix_tokens")),
            lazy("table", "no-features", lambda: T()[..., :0], bad_value("table")),
            lazy("table", "rank-1", lambda: T()[0, 0], bad_value("table")),
            lazy("table", "int", lambda: T().long(), bad_type("table")),
            lazy("table", "bool", lambda: T() > 0, bad_type("table")),
            lazy("table", "complex", lambda: T().to(torch.complex64), bad_type("table")),
            lazy("table", "np-int", lambda: T().long().cpu().numpy(), bad_type("table")),
            lazy("table", "list", lambda: T().tolist(), bad_type("table")),
            Case("table", "None", None, bad_type("table")),
            # issue 21: torch's byte-order error, 'table' not named; now read in native order
            lazy(
                "table",
                "np-big-endian",
                lambda: T().cpu().numpy().astype(">f8"),
                Works(_big_endian_same, "the same values, the table's dtype"),
            ),
            *grid_cases("new_grid", 5, optional=False),
            Case("new_grid", "int", 7, _shape(1, 8, 6)),  # a 1-D table of 16 rows
            # issue 21: an allocator error (32 TiB) before; refused by name with the size
            Case("new_grid", "past-memory", (2**20, 2**20), bad_value("new_grid")),
            lazy(
                "new_grid",
                "past-memory-meta",
                lambda: (2**20, 2**20),
                _shape(1, 2**40 + 1, 6),
                table=T().to("meta"),
            ),
            Case("new_grid", "int-1d", 7, _shape(1, 8, 6), with_={"old_grid": 16}),
            *grid_cases("old_grid", 4, optional=True),
            Case("old_grid", "other-count", (3, 5), bad_value("old_grid")),
            Case("old_grid", "rectangle", (2, 8), _shape(1, 26, 6)),
            Case("num_prefix_tokens", "zero", 0, bad_value("table", "old_grid")),
            Case("num_prefix_tokens", "np-int", np.int64(1), Same(1)),
            Case("num_prefix_tokens", "negative", -1, bad_value("num_prefix_tokens")),
            Case("num_prefix_tokens", "huge", BIG, bad_value("num_prefix_tokens")),
            Case("num_prefix_tokens", "float", 1.0, bad_type("num_prefix_tokens")),
            Case("num_prefix_tokens", "bool", True, bad_type("num_prefix_tokens")),
            Case("num_prefix_tokens", "None", None, bad_type("num_prefix_tokens")),
            *choice_cases("mode", ("bicubic", "bilinear", "nearest", "nearest-exact", "area")),
            Case("mode", "nearest", "nearest", _shape(1, 26, 6)),
            Case(
                "mode",
                "nearest+align",
                "nearest",
                bad_value("align_corners"),
                with_={"align_corners": True},
            ),
            Case(
                "mode", "area+antialias", "area", bad_value("antialias"), with_={"antialias": True}
            ),
            *bool_cases("align_corners", False),
            Case("align_corners", "true", True, Works(finite, "finite")),
            *bool_cases("antialias", False),
            Case("antialias", "true", True, Works(finite, "finite")),
            lazy("antialias", "half", lambda: True, Works(finite, "finite"), table=T().half()),
        ],
    ),
]

"""Hostile-input rows for M-RoPE: apply_mrope and mrope_position_ids (issue 11, scheme 1)."""

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
    bad_type,
    bad_value,
    bool_cases,
    choice_cases,
    empty_seq,
    finite,
    is_empty,
    lazy,
    on_meta,
    positions_cases,
    real_cases,
    size_cases,
    x_cases,
)

IDS = np.array([[0, 1, 1, 2], [0, 1, 2, 3], [0, 2, 1, 3]])  # (3, seq): t, h, w
LAYOUTS = [[("text", 2), ("video", (2, 4, 4), 0.5), ("text", 1)]]


def X():
    g = torch.Generator().manual_seed(0)
    return seeded.randn(2, 2, 4, 8, generator=g, dtype=torch.float64).float()


def _layout(*segs):
    return [[("text", 1), *segs, ("text", 1)]]


def _frame_25_at_5(ids) -> bool:
    assert ids[0, 0, 26] == 5, ids[0, 0]
    return True


def _is_int64(kind):
    def check(out):
        if kind == "torch":
            assert isinstance(out, torch.Tensor) and out.dtype == torch.int64, out
        else:
            assert isinstance(out, np.ndarray) and out.dtype == np.int64, out
        return True

    return check


L = "layouts"

SPECS = [
    Spec(
        "posenc.apply_mrope",
        posenc.apply_mrope,
        {
            "x": X(),
            "position_ids": IDS,
            "mrope_section": [2, 1, 1],
            "base": 10000.0,
            "interleaved": False,
        },
        [
            *x_cases(
                "x",
                X,
                numpy_ok=True,
                overrides={
                    **empty_seq(
                        "x",
                        X,
                        position_ids=np.zeros((3, 0), dtype=np.int64),
                    ),
                    "+odd": lazy("x", "odd-head-dim", lambda: X()[..., :7], bad_value("x")),
                    "+numpy-tensor-ids": lazy(
                        "x",
                        "numpy-x-tensor-ids",
                        lambda: X().cpu().numpy(),
                        bad_type("position_ids"),
                        position_ids=torch.as_tensor(IDS),
                    ),
                },
            ),
            *positions_cases(
                "position_ids",
                IDS,
                count=False,
                scalar=bad_value("position_ids"),
                empty=bad_value("position_ids"),
                overrides={
                    "torch-meta": bad_value("position_ids"),  # x on the CPU
                    "torch-expanded": bad_value("position_ids"),  # (2, 3, 4): no leading 3
                    "+batch": Case(
                        "position_ids",
                        "per-row",
                        np.stack([IDS, IDS], axis=1),
                        Same(IDS),
                    ),
                    "+two-axes": Case(
                        "position_ids", "only-2-axes", IDS[:2], bad_value("position_ids")
                    ),
                    "+1d": Case("position_ids", "1-d", IDS[0], bad_value("position_ids")),
                    "+misfit": Case(
                        "position_ids", "misfit-seq", IDS[:, :3], bad_value("position_ids")
                    ),
                },
            ),
            Case("mrope_section", "tuple", (2, 1, 1), Same([2, 1, 1])),
            Case("mrope_section", "np-array", np.array([2, 1, 1]), Same([2, 1, 1])),
            lazy("mrope_section", "tensor", lambda: torch.tensor([2, 1, 1]), Same([2, 1, 1])),
            Case("mrope_section", "np-ints", [np.int64(2), np.uint8(1), 1], Same([2, 1, 1])),
            Case("mrope_section", "other-split", [0, 2, 2], Works(finite)),
            Case("mrope_section", "two", [2, 2], bad_value("mrope_section")),
            Case("mrope_section", "four", [1, 1, 1, 1], bad_value("mrope_section")),
            Case("mrope_section", "wrong-sum", [2, 1, 2], bad_value("mrope_section")),
            Case("mrope_section", "negative", [3, 2, -1], bad_value("mrope_section")),
            Case("mrope_section", "float", [2.0, 1, 1], bad_type("mrope_section")),
            Case("mrope_section", "bool", [True, 2, 1], bad_type("mrope_section")),
            Case("mrope_section", "str", "211", bad_type("mrope_section")),
            Case("mrope_section", "None", None, bad_type("mrope_section")),
            Case("mrope_section", "int", 4, bad_type("mrope_section")),
            Case(
                "mrope_section",
                "interleave-overflow",
                [0, 2, 2],
                bad_value("mrope_section"),
                with_={"interleaved": True},
            ),
            *real_cases("base", 10000.0, invalid=(0, 1, -5)),
            *bool_cases("interleaved", False),
            Case("interleaved", "true", True, Works(finite)),
        ],
    ),
    Spec(
        "posenc.mrope_position_ids",
        posenc.mrope_position_ids,
        {
            "layouts": LAYOUTS,
            "spatial_merge_size": 2,
            "tokens_per_second": 2.0,
            "resume": "max",
            "like": None,
        },
        [
            Case(L, "tuple", tuple(LAYOUTS), Same(LAYOUTS)),
            Case(L, "list-segments", [[list(s) for s in LAYOUTS[0]]], Same(LAYOUTS)),
            Case(L, "unwrapped", LAYOUTS[0], bad_type(L)),
            Case(L, "None", None, bad_type(L)),
            Case(L, "str", "text", bad_type(L)),
            Case(L, "int", 5, bad_type(L)),
            Case(L, "no-rows", [], Works(is_empty)),
            Case(L, "empty-row", [[]], Works(is_empty)),
            Case(L, "row-str", ["text"], bad_type(L)),
            Case(L, "segment-str", [["text"]], bad_type(L)),
            Case(L, "segment-int", [[3]], bad_type(L)),
            Case(L, "segment-short", [[("text",)]], bad_value(L)),
            Case(L, "unknown-kind", [[("audio", 3)]], bad_value(L)),
            Case(L, "text-0", [[("text", 0)]], bad_value(L)),
            Case(L, "text-negative", [[("text", -1)]], bad_value(L)),
            Case(L, "text-float", [[("text", 2.0)]], bad_type(L)),
            Case(L, "text-bool", [[("text", True)]], bad_type(L)),
            Case(L, "text-str", [[("text", "2")]], bad_type(L)),
            Case(L, "text-np-int", [[("text", np.int64(2))]], Same([[("text", 2)]])),
            Case(L, "text-huge", [[("text", 2**40)]], bad_value(L)),
            Case(L, "text-2**63", [[("text", 2**63)]], bad_value(L)),
            Case(L, "pad-0", [[("pad", 0)]], bad_value(L)),
            # issue 40: 1024 rows of 2**31 tokens (each row within the limit) ask for 48 TiB of
            # ids: refused before the first row is built
            Case(L, "48-TiB", [[("pad", 2**31)]] * 1024, bad_value(L)),
            lazy(
                L,
                "48-TiB-like-tensor",
                lambda: [[("pad", 2**31)]] * 1024,
                bad_value(L),
                like=torch.zeros(1),
            ),
            Case(L, "rows-differ", [[("text", 1)], [("text", 2)]], bad_value(L)),
            Case(L, "rows-padded", [[("text", 1), ("pad", 1)], [("text", 2)]], Works(finite)),
            Case(L, "grid-odd", _layout(("image", (1, 3, 4))), bad_value(L, "spatial_merge_size")),
            Case(L, "grid-short", _layout(("image", (1, 4))), bad_type(L)),
            Case(L, "grid-zero", _layout(("image", (0, 4, 4))), bad_value(L)),
            Case(L, "grid-float", _layout(("image", (1, 4.0, 4))), bad_type(L)),
            Case(L, "grid-None", _layout(("image", None)), bad_type(L)),
            Case(L, "grid-huge", _layout(("image", (1, 2**40, 2**40))), bad_value(L)),
            Case(
                L,
                "grid-np",
                _layout(("image", np.array([1, 4, 4]))),
                Same(_layout(("image", (1, 4, 4)))),
            ),
            lazy(
                L,
                "grid-tensor",
                lambda: _layout(("image", torch.tensor([1, 4, 4]))),
                Same(_layout(("image", (1, 4, 4)))),
            ),
            Case(L, "image-seconds", _layout(("image", (1, 4, 4), 0.5)), bad_value(L)),
            Case(L, "seconds-nan", _layout(("video", (2, 4, 4), math.nan)), bad_value(L)),
            Case(L, "seconds-inf", _layout(("video", (2, 4, 4), math.inf)), bad_value(L)),
            Case(L, "seconds-zero", _layout(("video", (2, 4, 4), 0.0)), bad_value(L)),
            Case(L, "seconds-negative", _layout(("video", (2, 4, 4), -1.0)), bad_value(L)),
            Case(L, "seconds-str", _layout(("video", (2, 4, 4), "0.5")), bad_type(L)),
            Case(L, "seconds-huge", _layout(("video", (2, 4, 4), 1e300)), bad_value(L)),
            Case(L, "video-extra", _layout(("video", (2, 4, 4), 0.5, 1)), bad_value(L)),
            # issue 21, item 5: the time step and k * step in float32, as transformers: at 25 fps
            # with tokens_per_second 2, frame 25 is at start + 4 (float64 gave start + 3)
            Case(
                L,
                "seconds-float32-time",
                [[("text", 1), ("video", (26, 2, 2), float(np.float32(2 / 25))), ("text", 1)]],
                Works(_frame_25_at_5),
                with_={"tokens_per_second": 2},
            ),
            Case(L, "seconds-float32-overflow", _layout(("video", (1, 4, 4), 1e39)), bad_value(L)),
            *size_cases("spatial_merge_size", 2),
            *real_cases("tokens_per_second", 2.0, invalid=(0, -1), optional=True),
            Case("tokens_per_second", "None-with-seconds", None, bad_value("tokens_per_second")),
            Case(
                "tokens_per_second",
                "None-no-seconds",
                None,
                Works(finite),
                with_={"layouts": _layout(("video", (2, 4, 4)))},
            ),
            Case("tokens_per_second", "huge", 1e300, bad_value("tokens_per_second")),
            *choice_cases("resume", ("max", "spatial")),
            Case("resume", "spatial", "spatial", Works(finite)),
            lazy("like", "tensor", lambda: torch.zeros(1), Works(_is_int64("torch"))),
            lazy("like", "meta-tensor", lambda: torch.zeros(1, device="meta"), Works(on_meta)),
            Case("like", "np-array", np.zeros(1), Works(_is_int64("numpy"))),
            Case("like", "list", [0.0], bad_type("like")),
            Case("like", "str", "torch", bad_type("like")),
            Case("like", "int", 0, bad_type("like")),
        ],
    ),
]

"""Hostile-input rows for N-D RoPE (posenc.rope_nd) and the video position ids of
posenc.video_rope (VideoRoPE, TMRoPE); collected by tests/test_hostile.py."""

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
    bad_type,
    bad_value,
    choice_cases,
    empty_seq,
    is_empty,
    lazy,
    on_meta,
    real_cases,
    size_cases,
    x_cases,
)

AXES = [4, 2, 2]
GRID = posenc.rope_grid_positions((1, 2, 2))  # (4, 3)
IDS = np.array([[0.0, 1.0, 1.0, 3.0], [0.0, 1.0, 2.0, 3.0], [0.0, 2.0, 1.0, 3.0]])
LAYOUT = [[("text", 2), ("video", (2, 4, 4)), ("text", 1)]]
OMNI = [[("text", 2), ("audio", 3), ("text", 2), ("video", (2, 2, 2), 0.5), ("text", 1)]]


def _like(dtype_np, dtype_t):
    """``like`` decides library and device; the ids keep their own dtype."""

    def check_t(o):
        assert isinstance(o, torch.Tensor) and o.dtype == dtype_t, o
        return True

    def check_n(o):
        assert isinstance(o, np.ndarray) and o.dtype == dtype_np, o
        return True

    return [
        lazy("like", "int-tensor", lambda: torch.zeros(2, dtype=torch.int64), Works(check_t)),
        lazy("like", "float16-tensor", lambda: torch.zeros(2, dtype=torch.float16), Works(check_t)),
        lazy("like", "meta-tensor", lambda: torch.zeros(2, device="meta"), Works(on_meta)),
        Case("like", "np-float32", np.zeros(2, np.float32), Works(check_n)),
        Case("like", "list", [0.0], bad_type("like")),
        Case("like", "str", "torch", bad_type("like")),
        Case("like", "int", 0, bad_type("like")),
    ]


def X():
    g = torch.Generator().manual_seed(0)
    return seeded.randn(2, 4, 8, generator=g, dtype=torch.float64).float()  # same on every device


def _axes_cases(arg):
    return [
        Case(arg, "tuple", (4, 2, 2), Same(AXES)),
        Case(arg, "np-array", np.array(AXES), Same(AXES)),
        lazy(arg, "tensor", lambda: torch.tensor(AXES), Same(AXES)),
        Case(arg, "odd", [3, 3, 2], bad_value(arg)),
        Case(arg, "zero", [4, 0, 4], bad_value(arg)),
        Case(arg, "negative", [4, -2, 6], bad_value(arg)),
        Case(arg, "floats", [4.0, 2, 2], bad_type(arg)),
        Case(arg, "bools", [True, 2, 2], bad_type(arg)),
        Case(arg, "empty", [], bad_value(arg)),
        Case(arg, "str", "422", bad_type(arg)),
        Case(arg, "int", 8, bad_type(arg)),
        Case(arg, "None", None, bad_type(arg)),
        Case(arg, "too-many", [2] * 17, bad_value(arg)),
        # issue 40: a 2**39-pair table is 4 TiB, refused before allocating
        Case(arg, "4-TiB", [2**40], bad_value(arg)),
    ]


def _coords_cases(arg):
    g = GRID
    return [
        Case(arg, "np-int32", g.astype(np.int32), Same(g)),
        Case(arg, "np-float32", g.astype(np.float32), Same(g)),
        Case(arg, "list", g.tolist(), Same(g)),
        lazy(arg, "torch-int64", lambda: torch.as_tensor(g), Same(g)),
        lazy(arg, "torch-strided", lambda: torch.as_tensor(np.repeat(g, 2, 0))[::2], Same(g)),
        Case(arg, "np-nan", np.full(g.shape, np.nan), bad_value(arg)),
        Case(arg, "np-inf", np.full(g.shape, np.inf), bad_value(arg)),
        Case(arg, "np-bool", np.ones(g.shape, bool), bad_type(arg)),
        Case(arg, "np-complex", g.astype(complex), bad_type(arg)),
        Case(arg, "wrong-axes", g[:, :2], bad_value(arg)),
        Case(arg, "1-d", g[:, 0], bad_value(arg)),
        Case(arg, "wrong-seq", g[:3], bad_value(arg)),
        Case(arg, "int", 4, bad_type(arg)),
        Case(arg, "str", "0", bad_type(arg)),
        Case(arg, "None", None, bad_type(arg)),
    ]


def _sizes_cases(arg):
    return [
        Case(arg, "np-ints", np.array([1, 2, 2]), Same((1, 2, 2))),
        Case(arg, "list", [1, 2, 2], Same((1, 2, 2))),
        Case(arg, "zero", (1, 0, 2), Works(is_empty)),
        Case(arg, "negative", (1, -2, 2), bad_value(arg)),
        Case(arg, "float", (1.0, 2, 2), bad_type(arg)),
        Case(arg, "bool", (True, 2, 2), bad_type(arg)),
        Case(arg, "empty", (), bad_value(arg)),
        Case(arg, "huge", (2**21, 2**21), bad_value(arg)),
        # issue 40: 2**40 cells (within the cell limit) of 2 int64 coordinates: 16 TiB,
        # refused before allocating, for NumPy and for a tensor
        Case(arg, "16-TiB", (2**20, 2**20), bad_value(arg)),
        Case(arg, "16-TiB-tensor", (2**20, 2**20), bad_value(arg), with_={"like": torch.zeros(1)}),
        Case(arg, "int", 4, bad_type(arg)),
        Case(arg, "str", "122", bad_type(arg)),
        Case(arg, "None", None, bad_type(arg)),
    ]


def _layout_cases(arg, base, kind="video"):
    return [
        Case(arg, "tuple", tuple(base), Same(base)),
        Case(arg, "one-layout-not-wrapped", base[0], bad_type(arg)),
        Case(arg, "segment", base[0][0], bad_type(arg)),
        Case(arg, "str", "text", bad_type(arg)),
        Case(arg, "None", None, bad_type(arg)),
        Case(arg, "unknown-kind", [[("audio2", 2)]], bad_value(arg)),
        Case(arg, "zero-length", [[("text", 0)]], bad_value(arg)),
        Case(arg, "float-length", [[("text", 2.0)]], bad_type(arg)),
        Case(arg, "grid-not-divisible", [[("text", 1), ("image", (1, 3, 4)), ("text", 1)]],
             bad_value(arg)),
        Case(arg, "grid-two-sides", [[("text", 1), ("image", (1, 4)), ("text", 1)]],
             bad_type(arg)),
        Case(arg, "ragged-rows", [[("text", 2)], [("text", 3)]], bad_value(arg)),
        Case(arg, "empty", [], Works(is_empty)),
        # issue 40: 1024 rows of 2**31 tokens (each row within the limit) ask for 48 TiB of
        # ids: refused before the first row is built
        Case(arg, "48-TiB", [[("pad", 2**31)]] * 1024, bad_value(arg)),
        lazy(arg, "48-TiB-like-tensor", lambda: [[("pad", 2**31)]] * 1024, bad_value(arg),
             like=torch.zeros(1)),
    ]  # fmt: skip


SPECS = [
    Spec(
        "posenc.rope_axes_frequencies",
        posenc.rope_axes_frequencies,
        {"axes_dim": AXES, "base": 10000.0},
        [*_axes_cases("axes_dim"), *real_cases("base", 100.0, invalid=(0, -1, 1))],
    ),
    Spec(
        "posenc.apply_rope_axes",
        posenc.apply_rope_axes,
        {
            "x": X(),
            "positions": GRID,
            "axes_dim": AXES,
            "base": 10000.0,
            "pairing": "interleaved",
        },  # fmt: skip
        [
            *x_cases(
                "x",
                X,
                numpy_ok=True,
                overrides={
                    **empty_seq(
                        "x",
                        X,
                        positions=np.zeros((0, 3)),
                    ),  # fmt: skip
                    "zero-width": bad_value("x", "axes_dim"),
                },
            ),
            Case("x", "narrower-than-axes", np.ones((4, 6)), bad_value("axes_dim")),
            *_coords_cases("positions"),
            *_axes_cases("axes_dim"),
            *real_cases("base", 100.0, invalid=(0, -1, 1)),
            *choice_cases("pairing", ("interleaved", "half")),
        ],
    ),
    Spec(
        "posenc.rope_grid_positions",
        posenc.rope_grid_positions,
        {"sizes": (1, 2, 2), "like": None},
        [*_sizes_cases("sizes"), *_like(np.int64, torch.int64)],
    ),
    Spec(
        "posenc.videorope_position_ids",
        posenc.videorope_position_ids,
        {"layouts": LAYOUT, "spatial_merge_size": 2, "temporal_stride": 2.0, "like": None},
        [
            *_layout_cases("layouts", LAYOUT),
            *size_cases(
                "spatial_merge_size", 2, overrides={"huge": bad_value("spatial_merge_size")}
            ),
            *real_cases("temporal_stride", 2.0, invalid=(0, -1)),
            # issue 40: ids of inf (1e308) or past 2**31 refused by name
            Case("temporal_stride", "1e308", 1e308, bad_value("temporal_stride")),
            Case("temporal_stride", "2**31", 2.0**31, bad_value("temporal_stride")),
            # issue 40: the message named tokens_per_second, which this function does not take
            Case(
                "layouts",
                "video-seconds",
                [[("text", 1), ("video", (2, 4, 4), 2.0)]],
                bad_value("layouts", also=("seconds_per_grid", "temporal_stride")),
            ),
            *_like(np.float64, torch.float64),
        ],
    ),
    Spec(
        "posenc.apply_videorope",
        posenc.apply_videorope,
        {"x": X(), "position_ids": IDS, "mrope_section": [2, 1, 1], "base": 10000.0},
        [
            *x_cases(
                "x",
                X,
                numpy_ok=True,
                overrides={
                    **empty_seq(
                        "x",
                        X,
                        position_ids=np.zeros((3, 0)),
                    ),  # fmt: skip
                    "zero-width": bad_value("x", "head_dim"),
                },
            ),
            Case("x", "odd-width", np.ones((4, 7)), bad_value("x", "head_dim")),
            Case("position_ids", "list", IDS.tolist(), Same(IDS)),
            lazy("position_ids", "tensor", lambda: torch.as_tensor(IDS), Same(IDS)),
            Case("position_ids", "two-axes", IDS[:2], bad_value("position_ids")),
            Case("position_ids", "nan", np.full(IDS.shape, np.nan), bad_value("position_ids")),
            Case("position_ids", "int", 4, bad_type("position_ids")),
            Case("position_ids", "None", None, bad_type("position_ids")),
            Case("mrope_section", "tuple", (2, 1, 1), Same([2, 1, 1])),
            Case("mrope_section", "wrong-sum", [2, 2, 2], bad_value("mrope_section")),
            Case("mrope_section", "two", [3, 1], bad_value("mrope_section")),
            Case("mrope_section", "floats", [2.0, 1, 1], bad_type("mrope_section")),
            Case("mrope_section", "str", "211", bad_type("mrope_section")),
            Case("mrope_section", "None", None, bad_type("mrope_section")),
            *real_cases("base", 100.0, invalid=(0, -1, 1)),
        ],
    ),
    Spec(
        "posenc.tmrope_position_ids",
        posenc.tmrope_position_ids,
        {
            "layouts": OMNI,
            "spatial_merge_size": 2,
            "position_id_per_seconds": 25,
            "seconds_per_chunk": 2.0,
            "like": None,
        },  # fmt: skip
        [
            *_layout_cases("layouts", OMNI),
            Case(
                "layouts",
                "video+audio-no-audio",
                [[("video+audio", (1, 2, 2), 1.0)]],
                bad_value("layouts"),
            ),
            Case(
                "layouts",
                "video-seconds-zero",
                [[("video", (1, 2, 2), 0.0)]],
                bad_value("seconds_per_grid"),
            ),
            *size_cases(
                "spatial_merge_size", 2, overrides={"huge": bad_value("spatial_merge_size")}
            ),
            # issue 40: time ids past float32 came back as -2**63
            Case(
                "layouts",
                "seconds-float32-overflow",
                [[("text", 1), ("video", (4, 2, 2), 3e37)]],
                bad_value("seconds_per_grid"),
            ),
            Case(
                "layouts",
                "seconds-past-float32-one-frame",
                [[("text", 1), ("video", (1, 2, 2), 1e39)]],
                bad_value("seconds_per_grid"),
            ),
            *real_cases("position_id_per_seconds", 25.0, invalid=(0, -1)),
            Case(
                "position_id_per_seconds",
                "past-float32",
                1e39,
                bad_value("position_id_per_seconds"),
            ),
            *real_cases("seconds_per_chunk", 2.0, invalid=(0, -1, 0.01)),
            # issue 40: int(inf) raised OverflowError; one chunk holds every id
            Case(
                "seconds_per_chunk",
                "chunk-past-float64",
                1e300,
                Same(1e8),
                with_={
                    "position_id_per_seconds": 1e30,
                    "layouts": [[("text", 1), ("video+audio", (1, 2, 2), 1.0, 3), ("text", 1)]],
                },
            ),
            *_like(np.int64, torch.int64),
        ],  # fmt: skip
    ),
]

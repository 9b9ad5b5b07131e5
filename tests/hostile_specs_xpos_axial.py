"""Hostile-input rows for xPos, axial position embeddings and compat.whisper_sinusoids (issue 11)."""

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
    finite,
    is_empty,
    lazy,
    np_dtype_cases,
    on_meta,
    positions_cases,
    real_cases,
    size_cases,
    x_cases,
)
from posenc import compat
from posenc.torch import AxialPositionEmbedding

P4 = np.arange(4)


def _randn(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return seeded.randn(*shape, generator=g, dtype=torch.float64).float()


def Q():
    return _randn(2, 2, 4, 8)


def K():
    return _randn(2, 1, 4, 8, seed=1)


def TABLES():
    return [_randn(4, 3, seed=2), _randn(6, 5, seed=3)]


def _axial(**kw):
    torch.manual_seed(0)
    args = {"axial_pos_shape": (4, 6), "axial_pos_embds_dim": (3, 5), "init_std": 1.0}
    return AxialPositionEmbedding(**{**args, **kw})


def _meta_or_refused(i, names):
    return Either(Works(lambda o: on_meta(o[i]), "meta out"), bad_value(*names))


def _empty(arg):
    return lazy(
        arg,
        "empty-seq",
        lambda: (Q() if arg == "q" else K())[..., :0, :],
        Works(lambda o: all(is_empty(t) for t in o), "empty"),
        positions=0,
        **{"k" if arg == "q" else "q": (K() if arg == "q" else Q())[..., :0, :]},
    )


SPECS = [
    Spec(
        "posenc.apply_xpos",
        posenc.apply_xpos,
        {
            "q": Q(),
            "k": K(),
            "positions": P4,
            "base": 10000.0,
            "scale_base": 512.0,
            "gamma": 0.4,
            "center": None,
            "pairing": "interleaved",
        },
        [
            *x_cases(
                "q",
                Q,
                numpy_ok=True,
                meta=_meta_or_refused(0, ("q", "positions")),
                overrides={"empty-seq": None, "+empty": _empty("q")},
            ),
            *x_cases(
                "k",
                K,
                numpy_ok=True,
                meta=_meta_or_refused(1, ("k", "positions")),
                overrides={"empty-seq": None, "+empty": _empty("k")},
            ),
            *positions_cases(
                "positions",
                P4,
                overrides={
                    "torch-meta": bad_value("positions"),
                    "np-empty": bad_value("positions"),
                    "torch-empty": bad_value("positions"),
                    # issue 21: one position for every token, half pairing (a reshape error)
                    "+np-int64-scalar-half": Case(
                        "positions",
                        "np-int64-scalar-half",
                        np.int64(3),
                        Same(np.full(4, 3)),
                        with_={"pairing": "half"},
                    ),
                },
            ),
            *real_cases("base", 10000.0, invalid=(0, 1, -5)),
            *real_cases("scale_base", 512.0, invalid=(0, -1)),
            *real_cases("gamma", 0.4, invalid=(0, -0.5)),
            *real_cases("center", 2.0, optional=True),
            Case("center", "far-float32", 1e6, bad_value("center")),
            # issue 21, item 6: a scale past float16's range with float16 q and k (main: inf)
            lazy(
                "q",
                "float16-far-from-center",
                lambda: Q().half(),
                bad_value("center"),
                k=K().half(),
                positions=np.array([0, 1, 2, 5000]),
                center=0.0,
            ),
            lazy(
                "k",
                "float16-overflows",
                lambda: torch.full((2, 1, 4, 8), 60000.0, dtype=torch.float16),
                bad_value("k"),
                q=Q().half(),
                positions=np.array([0, 1, 2, 512]),
                center=0.0,
            ),
            *choice_cases("pairing", ("interleaved", "half")),
            lazy("k", "other-dim", lambda: _randn(2, 1, 4, 6), bad_value("k")),
            lazy("k", "numpy-with-torch-q", lambda: K().cpu().numpy(), bad_type("k")),
        ],
    ),
    Spec(
        "posenc.xpos_scale",
        posenc.xpos_scale,
        {
            "positions": P4,
            "dim": 8,
            "scale_base": 512.0,
            "gamma": 0.4,
            "center": 0.0,
            "dtype": None,
        },
        [
            *positions_cases("positions", P4),
            *size_cases("dim", 8, invalid=(7,)),
            *real_cases("scale_base", 512.0, invalid=(0, -1)),
            *real_cases("gamma", 0.4, invalid=(0, -0.5)),
            *real_cases("center", 1.0),
            *np_dtype_cases(),
        ],
    ),
    Spec(
        "posenc.axial_position_embeddings",
        posenc.axial_position_embeddings,
        {
            "weights": [t.cpu().numpy() for t in TABLES()],
            "positions": P4,
            "axial_pos_shape": (4, 6),
        },
        [
            *positions_cases(
                "positions",
                P4,
                floats=False,
                overrides={
                    "torch-meta": bad_type("positions"),
                    "torch-nan": bad("positions"),
                    "torch-inf": bad("positions"),
                    "np-nan": bad("positions"),
                    "np-inf": bad("positions"),
                    "+past": Case("positions", "past", np.array([24]), bad_value("positions")),
                    "+negative": Case("positions", "neg", np.array([-1]), bad_value("positions")),
                    **{
                        f"torch-{str(dt)[6:]}": bad_type("positions")
                        for dt in (
                            torch.int8,
                            torch.int16,
                            torch.int32,
                            torch.int64,
                            torch.uint8,
                            torch.uint16,
                            torch.uint32,
                            torch.uint64,
                        )
                    },
                    "torch-strided": bad_type("positions"),
                    "torch-expanded": bad_type("positions"),
                    "torch-0d": bad_type("positions"),
                    "torch-empty": bad_type("positions"),
                },
            ),
            lazy(
                "weights",
                "torch",
                TABLES,
                Works(lambda o: isinstance(o, torch.Tensor) and o.shape == (4, 8), "a tensor"),
            ),
            Case("weights", "None", None, bad_type("weights")),
            Case("weights", "empty", [], bad_value("weights")),
            Case("weights", "array", np.zeros((4, 3)), bad_type("weights")),
            Case("weights", "int-table", [np.zeros((4, 3), int)], bad_type("weights[0]")),
            Case("weights", "1-d", [np.zeros(4)], bad_value("weights[0]")),
            Case(
                "weights",
                "mixed",
                [np.zeros((4, 3)), np.zeros((6, 5), np.float32)],
                bad_type("weights"),
            ),
            lazy(
                "weights",
                "mixed-lib",
                lambda: [np.zeros((4, 3)), torch.zeros(6, 5)],
                bad_type("weights"),
            ),
            Case("axial_pos_shape", "None", None, Same(None)),
            Case("axial_pos_shape", "wrong", (6, 4), bad_value("axial_pos_shape")),
            Case("axial_pos_shape", "str", "46", bad_type("axial_pos_shape")),
            Case("axial_pos_shape", "float", (4.0, 6), bad_type("axial_pos_shape")),
            Case("axial_pos_shape", "np-int", (np.int64(4), 6), Same((4, 6))),
        ],
    ),
    Spec(
        "posenc.compat.whisper_sinusoids",
        compat.whisper_sinusoids,
        {"length": 5, "channels": 8, "max_timescale": 10000.0, "like": None},
        [
            *size_cases("length", 5, zero=Works(is_empty)),
            *size_cases("channels", 8, invalid=(7, 2)),
            *real_cases("max_timescale", 10000.0, invalid=(0, -1)),
            lazy(
                "like",
                "cpu",
                lambda: torch.zeros(0, dtype=torch.float64),
                Works(lambda o: o.dtype == torch.float32 and o.shape == (5, 8), "float32"),
            ),
            lazy("like", "meta", lambda: torch.zeros(0, device="meta"), Works(on_meta)),
            Case("like", "numpy", np.zeros(1), bad_type("like")),
            Case("like", "str", "torch", bad_type("like")),
        ],
    ),
    Spec(
        "posenc.torch.AxialPositionEmbedding",
        lambda **kw: _axial(**kw)(24),
        {"axial_pos_shape": (4, 6), "axial_pos_embds_dim": (3, 5), "init_std": 1.0},
        [
            *[
                Case("axial_pos_shape", lab, v, e)
                for lab, v, e in (
                    ("None", None, bad_type("axial_pos_shape")),
                    ("empty", (), bad_type("axial_pos_shape")),
                    ("zero", (0, 6), bad_value("axial_pos_shape")),
                    ("float", (4.0, 6), bad_type("axial_pos_shape")),
                    ("three", (2, 2, 6), bad_value("axial_pos_shape")),
                    ("huge", (2**40, 2**40), bad_value("axial_pos_shape")),
                )
            ],
            *[
                Case("axial_pos_embds_dim", lab, v, e)
                for lab, v, e in (
                    ("None", None, bad_type("axial_pos_embds_dim")),
                    ("negative", (3, -5), bad_value("axial_pos_embds_dim")),
                    ("str", "35", bad_type("axial_pos_embds_dim")),
                    ("bool", (True, 5), bad_type("axial_pos_embds_dim")),
                )
            ],
            *real_cases("init_std", 1.0, invalid=(-1,)),
        ],
    ),
    Spec(
        "posenc.torch.AxialPositionEmbedding.forward",
        lambda **kw: _axial()(**kw),
        {"positions": torch.arange(4)},
        [
            *positions_cases(
                "positions",
                P4,
                floats=False,
                numpy_ok=False,
                overrides={
                    "torch-meta": bad_value("positions"),
                    "torch-nan": bad("positions"),
                    "torch-inf": bad("positions"),
                    "int-count": Works(lambda o: o.shape == (4, 8), "4 rows"),
                    "+past": lazy(
                        "positions", "past", lambda: torch.tensor([24]), bad_value("positions")
                    ),
                },
            ),
        ],
    ),
]


def _reset_matches_fresh():
    fresh = _axial()
    with torch.device("meta"):
        meta = AxialPositionEmbedding((4, 6), (3, 5))
    meta = meta.to_empty(device=torch.get_default_device())
    torch.manual_seed(0)
    meta.reset_parameters()
    assert torch.equal(meta(24), fresh(24))


def _double():
    m = _axial().double()
    out = m(24)
    assert out.dtype == torch.float64 and bool(finite(out))


MODULE_STATES = {
    "AxialPositionEmbedding-meta-to_empty-reset_parameters": _reset_matches_fresh,
    "AxialPositionEmbedding-double": _double,
}

"""Hostile-input rows for posenc.kvcache (moving cached keys, StreamingLLM positions, sink
softmax); collected by tests/test_hostile.py."""

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
    bool_cases,
    choice_cases,
    empty_seq,
    is_empty,
    lazy,
    on_meta,
    positions_cases,
    real_cases,
    scaling_cases,
    size_cases,
    x_cases,
)

P4 = np.arange(4)
TO4 = np.arange(4) + 7


def K():
    g = torch.Generator().manual_seed(0)
    return seeded.randn(2, 2, 4, 8, generator=g, dtype=torch.float64).float()


def S():
    g = torch.Generator().manual_seed(1)
    return seeded.randn(2, 3, 4, 5, generator=g, dtype=torch.float64).float()


def _positions_rows(arg, ref):
    other = "to_positions" if arg == "from_positions" else "from_positions"
    return positions_cases(
        arg,
        ref,
        empty=bad_value(arg),
        overrides={
            "torch-meta": bad_value(arg),
            "int-count": Same(np.arange(4)),
            "+per-batch": Case(
                arg,
                "per-batch-2d",
                np.stack([ref, ref + 3]),
                Works(lambda o: o.shape == (2, 2, 4, 8)),
            ),
            "+wrong-seq": Case(arg, "wrong-seq", np.arange(5), bad_value(arg)),
            "+huge-int": Case(arg, "huge-int", np.full(4, 2**60), bad_value(arg)),
            # issue 40: an int past 2**52 against float positions was rounded, not refused
            # (2**60 + 1 and 2.0**60 moved the keys by 0, not by 1)
            "+huge-int-float-other": Case(
                arg,
                "huge-int-float-other",
                np.full(4, 2**60 + 1),
                bad_value(arg),
                with_={other: np.full(4, 2.0**60)},
            ),
            "+torch-huge-int-float-other": lazy(
                arg,
                "torch-huge-int-float-other",
                lambda: torch.full((4,), 2**60 + 1),
                bad_value(arg),
                **{other: torch.full((4,), 2.0**60, dtype=torch.float64)},
            ),
            "+float-fraction": Case(
                arg, "fraction", ref + 0.5, Works(lambda o: bool(torch.isfinite(o).all()))
            ),
        },
    )


def _len_rows(arg, good, **kw):
    return size_cases(arg, good, **kw)


SPECS = [
    Spec(
        "posenc.rerotate_keys",
        posenc.rerotate_keys,
        {
            "k": K(),
            "from_positions": P4,
            "to_positions": TO4,
            "base": 10000.0,
            "pairing": "interleaved",
            "scaling": None,
            "rotary_dim": None,
            "seq_len": None,
        },
        [
            *x_cases(
                "k",
                K,
                numpy_ok=True,
                overrides={
                    **empty_seq(
                        "k",
                        K,
                        from_positions=np.arange(0),
                        to_positions=np.arange(0),
                    ),
                    "+numpy": lazy(
                        "k",
                        "numpy-float32",
                        lambda: K().cpu().numpy(),
                        Same(lambda: K().cpu().numpy()),
                    ),
                    "+numpy-tensor-positions": lazy(
                        "k",
                        "numpy-k-tensor-positions",
                        lambda: K().cpu().numpy(),
                        bad_type("from_positions"),
                        from_positions=torch.arange(4),
                    ),
                },
            ),
            *_positions_rows("from_positions", P4),
            *_positions_rows("to_positions", TO4),
            *real_cases("base", 10000.0, invalid=(0, 1, -5)),
            *choice_cases("pairing", ("interleaved", "half")),
            *scaling_cases(),
            *size_cases("rotary_dim", 4, optional=True, invalid=(3, 10)),
            *size_cases("seq_len", 32, optional=True),
        ],
    ),
    Spec(
        "posenc.streaming_positions",
        posenc.streaming_positions,
        {"length": 10, "sinks": 2, "window": 3, "reindex": True},
        [
            *_len_rows("length", 10, zero=Works(is_empty)),
            # issue 40: 2**52 tokens all kept asked for 64 PiB and ran out of memory
            Case("length", "2**52-all-kept", 2**52, bad_value("length"), with_={"window": 2**52}),
            Case("window", "2**52-all-kept", 2**52, bad_value("window"), with_={"length": 2**52}),
            Case("sinks", "2**52-all-kept", 2**52, bad_value("sinks"), with_={"length": 2**52}),
            *_len_rows("sinks", 2, zero=Works(lambda r: r[0].tolist() == [7, 8, 9])),
            *_len_rows("window", 3, zero=Works(lambda r: r[0].tolist() == [0, 1])),
            *bool_cases("reindex", True),
        ],
    ),
    Spec(
        "posenc.sink_softmax",
        posenc.sink_softmax,
        {"scores": S(), "sinks": np.array([0.5, -1.0, 2.0])},
        [
            *x_cases(
                "scores",
                S,
                numpy_ok=True,
                overrides={
                    "zero-width": Works(is_empty),  # no keys: all the weight on the sink
                    "+rank-2": lazy("scores", "rank-2", lambda: S()[0, 0], bad_value("scores")),
                    "+numpy": lazy(
                        "scores",
                        "numpy-float32",
                        lambda: S().cpu().numpy(),
                        Same(lambda: S().cpu().numpy()),
                    ),
                    "+masked": lazy(
                        "scores",
                        "minus-inf",
                        lambda: S().masked_fill(torch.arange(5) == 0, float("-inf")),
                        Works(
                            lambda o: bool((o[..., 0] == 0).all()) and bool(torch.isfinite(o).all())
                        ),
                    ),
                },
            ),
            Case("sinks", "scalar", 0.0, Works(lambda o: tuple(o.shape) == (2, 3, 4, 5))),
            Case("sinks", "np-0d", np.array(0.5), Works(lambda o: tuple(o.shape) == (2, 3, 4, 5))),
            Case("sinks", "list", [0.5, -1.0, 2.0], Same(np.array([0.5, -1.0, 2.0]))),
            lazy(
                "sinks",
                "torch",
                lambda: torch.tensor([0.5, -1.0, 2.0]),
                Same(np.array([0.5, -1.0, 2.0])),
            ),
            Case("sinks", "np-int", np.array([0, 1, 2]), Same(np.array([0.0, 1.0, 2.0]))),
            Case("sinks", "wrong-heads", np.zeros(2), bad_value("sinks")),
            Case("sinks", "2-d", np.zeros((3, 1)), bad_value("sinks")),
            Case("sinks", "nan", np.array([0.0, float("nan"), 0.0]), bad_value("sinks")),
            Case("sinks", "inf", np.array([0.0, float("inf"), 0.0]), bad_value("sinks")),
            lazy(
                "sinks",
                "torch-nan",
                lambda: torch.tensor([0.0, float("nan"), 0.0]),
                bad_value("sinks"),
            ),
            # issue 40: sinks on the meta device with scores that hold values was 'Cannot copy
            # out of meta tensor'; meta scores with meta sinks give a meta result
            lazy("sinks", "torch-meta", lambda: torch.zeros(3, device="meta"), bad_value("sinks")),
            lazy(
                "sinks",
                "meta-with-meta-scores",
                lambda: torch.zeros(3, device="meta"),
                Works(lambda o: on_meta(o) and tuple(o.shape) == (2, 3, 4, 5)),
                scores=S().to("meta"),
            ),
            Case("sinks", "complex", np.array([0j, 1j, 2j]), bad_type("sinks")),
            Case("sinks", "bool", True, bad_type("sinks")),
            Case("sinks", "np-bool", np.array([True, False, True]), bad_type("sinks")),
            lazy(
                "sinks", "torch-bool", lambda: torch.tensor([True, False, True]), bad_type("sinks")
            ),
            Case("sinks", "str", "0.5", bad_type("sinks")),
            Case("sinks", "None", None, bad_type("sinks")),
            Case("sinks", "ragged", [[0.0], [1.0, 2.0]], bad_type("sinks")),
            lazy(
                "scores",
                "numpy-scores-tensor-sinks",
                lambda: S().cpu().numpy(),
                bad_type("sinks"),
                sinks=torch.zeros(3),
            ),
        ],
    ),
]
assert Either and bad  # shared imports

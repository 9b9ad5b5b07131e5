"""Hostile-input rows for posenc.packing and posenc.speculative (packed ids, cu_seqlens, the
packed mask, context-parallel shards, draft trees); collected by tests/test_hostile.py."""

from __future__ import annotations

import numpy as np
import torch

import posenc
from hostile_values import (
    Case,
    Same,
    Spec,
    Works,
    bad,
    bad_type,
    bad_value,
    choice_cases,
    is_empty,
    lazy,
    on_meta,
    positions_cases,
    size_cases,
)

LENGTHS = np.array([2, 1, 3])
IDS = np.array([0, 1, 0, 0, 1, 2])
PARENTS = np.array([-1, 0, 0, 1])


def _int_rows(arg, ref, *, one_d, empty, meta=None):
    """Integer arrays (no floats): ``one_d`` refuses batch axes, ``empty`` is the answer to an
    empty array, ``meta`` to a meta tensor (default: refused, the values are needed)."""
    over = {"torch-meta": meta or bad_value(arg)}
    if one_d:
        over["torch-expanded"] = bad(arg)
    return positions_cases(
        arg, ref, floats=False, count=False, scalar=bad(arg), empty=empty, overrides=over
    )


def _parents_rows():
    arg = "parents"
    rows = [
        Case(arg, f"np-{np.dtype(dt).name}", PARENTS.astype(dt), Same(PARENTS))
        for dt in (np.int8, np.int16, np.int32)
    ]
    rows += [
        lazy(
            arg,
            f"torch-{str(dt)[6:]}",
            lambda dt=dt: torch.as_tensor(PARENTS).to(dt),
            Same(lambda: torch.as_tensor(PARENTS)),
        )
        for dt in (torch.int8, torch.int16, torch.int32)
    ]
    rows += [
        Case(arg, "list", PARENTS.tolist(), Same(PARENTS)),
        Case(arg, "np-strided", np.repeat(PARENTS, 2)[::2], Same(PARENTS)),
        Case(arg, "np-uint8", PARENTS.astype(np.uint8), bad_value(arg)),  # -1 wraps to 255
        Case(arg, "empty-list", [], Works(is_empty)),
        Case(arg, "np-empty", np.zeros(0, dtype=np.int64), Works(is_empty)),
        Case(arg, "forward-parent", np.array([-1, 2, 0]), bad_value(arg)),
        Case(arg, "self-parent", np.array([-1, 1]), bad_value(arg)),
        Case(arg, "below-minus-one", np.array([-2]), bad_value(arg)),
        Case(arg, "2-d", PARENTS[None], bad_type(arg)),
        Case(arg, "0-d", np.array(-1), bad_type(arg)),
        Case(arg, "np-float", PARENTS.astype(np.float64), bad_type(arg)),
        lazy(arg, "torch-float", lambda: torch.as_tensor(PARENTS).float(), bad_type(arg)),
        lazy(arg, "torch-meta", lambda: torch.as_tensor(PARENTS).to("meta"), bad_value(arg)),
        Case(arg, "np-bool", np.array([True]), bad_type(arg)),
        Case(arg, "str", "-1", bad_type(arg)),
        Case(arg, "None", None, bad_type(arg)),
        Case(arg, "int", -1, bad_type(arg)),
        Case(arg, "ragged", [[-1], [0, 1]], bad_type(arg)),
        Case(arg, "too-many", np.arange(-1, 2**15 + 1), bad_value(arg)),
    ]
    return rows


SPECS = [
    Spec(
        "posenc.packed_position_ids",
        posenc.packed_position_ids,
        {"lengths": LENGTHS},
        [
            *_int_rows("lengths", LENGTHS, one_d=True, empty=Works(is_empty)),
            Case("lengths", "negative", np.array([2, -1]), bad_value("lengths")),
            lazy("lengths", "torch-negative", lambda: torch.tensor([2, -1]), bad_value("lengths")),
            Case("lengths", "too-many", np.array([2**39, 2**39, 1]), bad_value("lengths")),
            Case("lengths", "2-d", LENGTHS[None], bad_type("lengths")),
            # issue 40: the int64 sum wraps (negative here; [2**62] * 4 wraps to 0 and crashed
            # torch: tests/test_packing.py runs that one in a subprocess)
            Case("lengths", "np-sum-wraps", np.array([2**63 - 1, 1]), bad_value("lengths")),
            lazy(
                "lengths",
                "torch-sum-wraps",
                lambda: torch.tensor([2**63 - 1, 1]),
                bad_value("lengths"),
            ),
            lazy(
                "lengths",
                "torch-uint64-past-int64",
                lambda: torch.tensor([2**63 + 5, 3], dtype=torch.uint64),
                bad_value("lengths"),
            ),
            # 2**40 tokens: 8 TiB of int64 ids, refused before allocating
            Case("lengths", "np-8-TiB", np.array([2**40]), bad_value("lengths")),
            lazy("lengths", "torch-8-TiB", lambda: torch.tensor([2**40]), bad_value("lengths")),
        ],
    ),
    Spec(
        "posenc.cu_seqlens",
        posenc.cu_seqlens,
        {"position_ids": IDS},
        [
            *_int_rows("position_ids", IDS, one_d=True, empty=bad_value("position_ids")),
            Case("position_ids", "batch-1", IDS[None], Same(IDS)),
            Case("position_ids", "batch-2", np.stack([IDS, IDS]), bad_value("position_ids")),
            Case(
                "position_ids", "first-not-smallest", np.array([3, 0, 1]), bad_value("position_ids")
            ),
            Case("position_ids", "start-at-2", IDS + 2, Same(IDS)),
            # uint64 ids past int64: NumPy took them, torch's cast wrapped them negative (an
            # error naming an id of -2**63); both refuse them now
            Case(
                "position_ids",
                "np-uint64-past-int64",
                np.array([5, 2**63, 5], dtype=np.uint64),
                bad_value("position_ids", also=("int64",)),
            ),
            lazy(
                "position_ids",
                "torch-uint64-past-int64",
                lambda: torch.tensor([5, 2**63, 5], dtype=torch.uint64),
                bad_value("position_ids", also=("int64",)),
            ),
        ],
    ),
    Spec(
        "posenc.packed_causal_mask",
        posenc.packed_causal_mask,
        {"position_ids": IDS},
        [
            *_int_rows(
                "position_ids", IDS, one_d=False, empty=Works(is_empty), meta=Works(on_meta)
            ),
            Case(
                "position_ids",
                "too-long",
                np.zeros(2**15 + 1, dtype=np.int64),
                bad_value("position_ids"),
            ),
            Case(
                "position_ids",
                "np-uint64-past-int64",
                np.array([0, 2**63], dtype=np.uint64),
                bad_value("position_ids", also=("int64",)),
            ),
            lazy(
                "position_ids",
                "torch-uint64-past-int64",
                lambda: torch.tensor([0, 2**63], dtype=torch.uint64),
                bad_value("position_ids", also=("int64",)),
            ),
            # issue 40: batch axes multiply the mask (16 TiB here), an expanded view holds
            # one row: refused before allocating
            lazy(
                "position_ids",
                "torch-expanded-16-TiB",
                lambda: torch.arange(1024).expand(2**24, 1024),
                bad_value("position_ids"),
            ),
            lazy(
                "position_ids",
                "np-broadcast-16-TiB",
                lambda: np.broadcast_to(np.arange(1024), (2**24, 1024)),
                bad_value("position_ids"),
            ),
        ],
    ),
    Spec(
        "posenc.context_parallel_positions",
        posenc.context_parallel_positions,
        {"seq_len": 16, "world_size": 2, "rank": 1, "layout": "zigzag"},
        [
            *size_cases("seq_len", 16, zero=Works(is_empty)),
            Case("seq_len", "not-a-multiple", 10, bad_value("seq_len")),
            # issue 40: a shard of 2**40 positions is 8 TiB, refused before allocating
            Case(
                "seq_len", "8-TiB", 2**40, bad_value("seq_len"), with_={"world_size": 1, "rank": 0}
            ),
            Case(
                "seq_len",
                "8-TiB-contiguous",
                2**40,
                bad_value("seq_len"),
                with_={"world_size": 1, "rank": 0, "layout": "contiguous"},
            ),
            *size_cases("world_size", 2),
            *size_cases(
                "rank", 1, zero=Works(lambda r: r.tolist() == [0, 1, 2, 3, 12, 13, 14, 15])
            ),
            Case("rank", "world_size", 2, bad_value("rank")),
            *choice_cases("layout", ("zigzag", "contiguous")),
        ],
    ),
    Spec(
        "posenc.draft_tree_position_ids",
        posenc.draft_tree_position_ids,
        {"parents": PARENTS, "offset": 3},
        [
            *_parents_rows(),
            *size_cases("offset", 3, zero=Works(lambda r: r.tolist() == [0, 1, 1, 2])),
        ],
    ),
    Spec(
        "posenc.draft_tree_mask",
        posenc.draft_tree_mask,
        {"parents": PARENTS},
        _parents_rows(),
    ),
]

"""t5_bucket at the int64 / uint64 extremes: exact, or refused by name."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import posenc
import posenc.rope
import posenc.rope_scaling

YARN = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64}


# --- t5_bucket at the int64 / uint64 extremes ---------------------------------------------


def _t5_reference(rel: int, bidirectional: bool, num_buckets: int, max_distance: float) -> int:
    """T5's formula on exact Python ints, with the float32 logarithm of HF."""
    n = num_buckets // 2 if bidirectional else num_buckets
    offset = n if bidirectional and rel > 0 else 0
    r = abs(rel) if bidirectional else max(-rel, 0)
    e = n // 2
    if r < e:
        return offset + r
    log_range = math.log(max_distance / e) or math.log1p((max_distance - e) / e)
    scaled = np.log(np.float32(float(r)) / np.float32(e)) / np.float32(log_range)
    scaled = float(scaled * np.float32(n - e))
    return offset + min(n - 1, e + int(min(scaled, n - e)))


SIGNED = [-(2**63), -(2**63) + 1, -(2**62), -200, -9, -8, -1, 0, 1, 7, 8, 200, 2**40, 2**63 - 1]
UNSIGNED = [0, 1, 8, 200, 2**63 - 1, 2**63, 2**63 + 2**40, 2**64 - 1]
T5_SETTINGS = [
    (True, 32, 128.0),
    (False, 32, 128.0),
    (True, 1000, 1e30),
    (False, 1000, 1e30),
    (True, 1000, math.nextafter(250.0, math.inf)),  # max_distance / e rounds to 1
    (False, 64, math.nextafter(32.0, math.inf)),
]


@pytest.mark.parametrize("bidirectional,num_buckets,max_distance", T5_SETTINGS)
def test_t5_bucket_is_exact_at_int64_and_uint64_extremes(bidirectional, num_buckets, max_distance):
    kw = {"bidirectional": bidirectional, "num_buckets": num_buckets, "max_distance": max_distance}
    for values, np_dtype, t_dtype in (
        (SIGNED, np.int64, torch.int64),
        (UNSIGNED, np.uint64, torch.uint64),
    ):
        want = np.array([_t5_reference(v, **kw) for v in values])
        assert want.min() >= 0 and want.max() < num_buckets
        got_np = posenc.t5_bucket(np.array(values, dtype=np_dtype), **kw)
        got_t = posenc.t5_bucket(
            torch.tensor(np.array(values, dtype=np_dtype).view(np.int64)).view(t_dtype), **kw
        )
        np.testing.assert_array_equal(got_np, want)
        np.testing.assert_array_equal(got_t.cpu().numpy(), want)
        assert got_np.dtype == np.int64 and got_t.dtype == torch.int64


@pytest.mark.parametrize("np_dtype", [np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32])
def test_t5_bucket_small_dtypes_at_their_extremes(np_dtype):
    info = np.iinfo(np_dtype)
    values = [info.min, info.min + 1, 0, 1, info.max - 1, info.max]
    want = posenc.t5_bucket(np.array(values, dtype=np.int64))
    np.testing.assert_array_equal(posenc.t5_bucket(np.array(values, dtype=np_dtype)), want)
    np.testing.assert_array_equal(
        posenc.t5_bucket(torch.as_tensor(np.array(values, dtype=np_dtype))).cpu().numpy(), want
    )


@pytest.mark.parametrize("rel", [2**64, -(2**63) - 1, [1, 10**30], [[-(10**20)]]])
def test_t5_bucket_python_ints_out_of_range_are_a_value_error(rel):
    with pytest.raises(ValueError, match=r"^relative_position must fit in int64"):
        posenc.t5_bucket(rel)


def test_t5_bucket_huge_num_buckets_is_named():
    with pytest.raises(ValueError, match=r"^num_buckets must be an integer <= 2\*\*53, got 10+$"):
        posenc.t5_bucket(5, num_buckets=10**30)

"""posenc.relative_positions: against the oracle; offsets (KV cache) and clipping."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import oracle
import posenc


@settings(max_examples=150, deadline=None)
@given(
    q_len=st.integers(0, 12),
    k_len=st.integers(0, 12),
    offset=st.integers(-20, 20),
    max_distance=st.one_of(st.none(), st.integers(0, 15)),
)
def test_matches_oracle(q_len, k_len, offset, max_distance):
    got = posenc.relative_positions(q_len, k_len, offset=offset, max_distance=max_distance)
    assert isinstance(got, np.ndarray) and got.dtype == np.int64 and got.shape == (q_len, k_len)
    want = np.array(oracle.relative_positions(q_len, k_len, offset, max_distance), dtype=np.int64)
    np.testing.assert_array_equal(got, want.reshape(q_len, k_len))


@given(q_len=st.integers(1, 10), k_len=st.integers(1, 10), offset=st.integers(-5, 5))
def test_toeplitz(q_len, k_len, offset):
    """Constant along each diagonal: only the difference of the positions counts."""
    r = posenc.relative_positions(q_len, k_len, offset=offset)
    np.testing.assert_array_equal(r[1:, 1:], r[:-1, :-1])
    np.testing.assert_array_equal(r[:, 1:] - r[:, :-1], 1)


def test_kv_cache_rows_are_the_last_rows_of_the_full_matrix():
    """Decoding: the 3 new queries of a 10-token context see what rows 7..9 of the full matrix see."""
    full = posenc.relative_positions(10, 10)
    cached = posenc.relative_positions(3, 10, offset=10 - 3)
    np.testing.assert_array_equal(cached, full[7:])
    assert np.all(np.diag(cached[:, 7:]) == 0)  # each new query sits at distance 0 from itself


def test_clipping_bounds_and_number_of_rows():
    r = posenc.relative_positions(20, 20, max_distance=4)
    assert r.min() == -4 and r.max() == 4
    assert len(np.unique(r)) == 2 * 4 + 1
    np.testing.assert_array_equal(
        posenc.relative_positions(3, 3, max_distance=0), np.zeros((3, 3), np.int64)
    )


def test_numpy_integer_arguments():
    a = posenc.relative_positions(
        np.int32(3), np.int64(4), offset=np.int16(1), max_distance=np.uint8(1)
    )
    np.testing.assert_array_equal(a, posenc.relative_positions(3, 4, offset=1, max_distance=1))


def test_int64_extremes():
    r = posenc.relative_positions(2, 2, offset=-(2**63) + 2)
    assert int(r.max()) == 2**63 - 1 and int(r.min()) == 2**63 - 3


@pytest.mark.parametrize(
    "args,kw,exc,match",
    [
        ((-1, 3), {}, ValueError, r"q_len must be a non-negative integer, got -1"),
        ((3, -2), {}, ValueError, r"k_len must be a non-negative integer, got -2"),
        ((3.0, 3), {}, TypeError, r"q_len must be a non-negative integer, got 3\.0 \(float\)"),
        ((3, "4"), {}, TypeError, r"k_len must be a non-negative integer, got '4' \(str\)"),
        ((True, 3), {}, TypeError, r"q_len must be a non-negative integer, got True \(bool\)"),
        ((3, None), {}, TypeError, r"k_len must be a non-negative integer, got None"),
        ((3, 3), {"offset": 1.5}, TypeError, r"offset must be an integer, got 1\.5 \(float\)"),
        ((3, 3), {"offset": None}, TypeError, r"offset must be an integer, got None"),
        ((3, 3), {"offset": False}, TypeError, r"offset must be an integer, got False"),
        (
            (3, 3),
            {"offset": 2**63},
            ValueError,
            r"offset must fit in int64, got 9223372036854775808",
        ),
        (
            (3, 3),
            {"max_distance": -1},
            ValueError,
            r"max_distance must be a non-negative integer, got -1",
        ),
        (
            (3, 3),
            {"max_distance": 2.0},
            TypeError,
            r"max_distance must be a non-negative integer or None, got 2\.0 \(float\)",
        ),
        (
            (3, 3),
            {"max_distance": "8"},
            TypeError,
            r"max_distance must be a non-negative integer or None, got '8'",
        ),
        (
            (3, 3),
            {"max_distance": True},
            TypeError,
            r"max_distance must be a non-negative integer or None, got True",
        ),
        (
            (3, 3),
            {"offset": -(2**63)},
            ValueError,
            r"relative positions run from .* with q_len=3, k_len=3, offset=-9223372036854775808: outside int64",
        ),
        ((3, 3), {"offset": 2**63 - 1}, ValueError, r"outside int64"),
    ],
)
def test_bad_input(args, kw, exc, match):
    with pytest.raises(exc, match=match):
        posenc.relative_positions(*args, **kw)

"""posenc.integer, normalized, binary, periodic: against the oracle, in NumPy and torch."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import oracle
import posenc
from conftest import make, to_numpy

values = pytest.mark.values

int_positions = st.lists(st.integers(-5000, 5000), min_size=1, max_size=12)
float_positions = st.lists(
    st.floats(-1e4, 1e4, allow_nan=False, allow_infinity=False), min_size=1, max_size=12
)
any_positions = st.one_of(int_positions, float_positions)


# --- integer ----------------------------------------------------------------------------------


@values
@settings(max_examples=40, deadline=None)
@given(positions=any_positions, backend=st.sampled_from(["numpy", "torch"]))
def test_integer_matches_oracle(positions, backend, device):
    pos = make(backend, positions, device)
    got = posenc.integer(pos, dtype=np.float64 if backend == "numpy" else torch.float64)
    assert tuple(got.shape) == (len(positions), 1)
    np.testing.assert_array_equal(to_numpy(got), np.array(oracle.integer(positions)))


@values
def test_integer_count_and_default_dtypes(device):
    got = posenc.integer(3)
    assert isinstance(got, np.ndarray) and got.dtype == np.float64
    np.testing.assert_array_equal(got, [[0.0], [1.0], [2.0]])
    t = posenc.integer(torch.arange(3, device=device))
    assert t.dtype == torch.get_default_dtype()
    np.testing.assert_array_equal(to_numpy(t), [[0.0], [1.0], [2.0]])


@values
def test_integer_is_unbounded():
    """The flaw: the code grows with the position (4096 at position 4096)."""
    assert float(posenc.integer(np.array([4096]))[0, 0]) == 4096.0


# --- normalized -------------------------------------------------------------------------------


@values
@settings(max_examples=60, deadline=None)
@given(
    length=st.integers(1, 3000),
    fractions=st.lists(st.floats(0, 1), min_size=1, max_size=10),
    whole=st.booleans(),
    backend=st.sampled_from(["numpy", "torch"]),
)
def test_normalized_matches_oracle(length, fractions, whole, backend, device):
    positions = [f * (length - 1) for f in fractions]
    if whole:
        positions = [float(round(p)) for p in positions]
    pos = make(backend, positions, device)
    got = posenc.normalized(pos, length, dtype=np.float64 if backend == "numpy" else torch.float64)
    assert tuple(got.shape) == (len(positions), 1)
    np.testing.assert_allclose(
        to_numpy(got), np.array(oracle.normalized(positions, length)), rtol=1e-15, atol=0
    )


@values
def test_normalized_ends_and_length_one(backend, device):
    got = to_numpy(posenc.normalized(make(backend, [0, 3, 6], device), 7))
    np.testing.assert_array_equal(got[:, 0], [0.0, 0.5, 1.0])
    np.testing.assert_array_equal(posenc.normalized(1, 1), [[0.0]])
    np.testing.assert_array_equal(
        to_numpy(posenc.normalized(make(backend, [0], device), 1)), [[0.0]]
    )


@values
def test_normalized_depends_on_length():
    """The flaw: position 2 and the step between neighbours change with the length."""
    short, long = posenc.normalized(5, 5), posenc.normalized(9, 9)
    assert float(short[2, 0]) != float(long[2, 0])
    assert float(short[1, 0] - short[0, 0]) == 0.25 and float(long[1, 0] - long[0, 0]) == 0.125


# --- binary -----------------------------------------------------------------------------------


@values
@settings(max_examples=60, deadline=None)
@given(
    data=st.data(),
    bits=st.integers(1, 62),
    backend=st.sampled_from(["numpy", "torch"]),
    as_float=st.booleans(),
)
def test_binary_matches_oracle(data, bits, backend, as_float, device):
    high = 2**bits - 1 if not as_float else min(2**bits - 1, 2**53)
    positions = data.draw(st.lists(st.integers(0, high), min_size=1, max_size=10))
    arr = np.array(positions, dtype=np.float64 if as_float else np.int64)
    got = posenc.binary(make(backend, arr, device), bits)
    assert tuple(got.shape) == (len(positions), bits)
    np.testing.assert_array_equal(to_numpy(got), np.array(oracle.binary(positions, bits)))


def test_binary_most_significant_first_table():
    got = posenc.binary(8, 4).astype(int)
    want = [[int(c) for c in format(p, "04b")] for p in range(8)]
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got[1], [0, 0, 0, 1])


@pytest.mark.parametrize("bits", [63, 64, 65, 130])
def test_binary_wide_codes(bits):
    """More bits than int64 holds: leading zeros, and the low digits still right."""
    got = posenc.binary(np.array([2**62 + 5]), bits)
    assert got.shape == (1, bits)
    np.testing.assert_array_equal(got[0], oracle.binary([2**62 + 5], bits)[0])
    big = np.array([2**63 + 3], dtype=np.uint64)
    np.testing.assert_array_equal(posenc.binary(big, 70)[0], oracle.binary([2**63 + 3], 70)[0])
    huge = 2.0**100 + 2.0**60
    np.testing.assert_array_equal(
        posenc.binary(np.array([huge]), 130)[0], oracle.binary([int(huge)], 130)[0]
    )
    t = posenc.binary(
        torch.tensor([huge], dtype=torch.float64, device="cpu"), 130, dtype=torch.float64
    )
    np.testing.assert_array_equal(t[0].cpu().numpy(), oracle.binary([int(huge)], 130)[0])


@values
def test_binary_neighbours_are_unevenly_far(backend, device):
    """The flaw: 3 -> 4 flips three digits, 4 -> 5 flips one."""
    code = to_numpy(posenc.binary(make(backend, [3, 4, 5], device), 4))
    assert np.abs(code[1] - code[0]).sum() == 3 and np.abs(code[2] - code[1]).sum() == 1


def test_binary_default_dtypes(device):
    assert posenc.binary(4, 3).dtype == np.float64
    assert posenc.binary(4, 3, dtype=np.float32).dtype == np.float32
    assert posenc.binary(torch.arange(4, device=device), 3).dtype == torch.get_default_dtype()


# --- periodic ---------------------------------------------------------------------------------


@values
@settings(max_examples=60, deadline=None)
@given(positions=any_positions, dim=st.integers(1, 40), backend=st.sampled_from(["numpy", "torch"]))
def test_periodic_matches_oracle(positions, dim, backend, device):
    pos = make(backend, positions, device)
    got = posenc.periodic(pos, dim, dtype=np.float64 if backend == "numpy" else torch.float64)
    assert tuple(got.shape) == (len(positions), dim)
    np.testing.assert_allclose(
        to_numpy(got), np.array(oracle.periodic(positions, dim)), rtol=0, atol=1e-12
    )


@values
@pytest.mark.parametrize("dim", [1, 4, 7])
def test_periodic_dim_i_first_reaches_one_at_two_to_the_i(dim):
    n = 2**dim + 1
    pe = posenc.periodic(n, dim)
    for i in range(dim):
        first = int(np.argmax(np.isclose(pe[:, i], 1.0, atol=1e-12)))
        assert first == 2**i
        assert np.all(pe[:first, i] < 1.0 - 1e-9)


@values
def test_periodic_collides_after_the_longest_period(backend, device):
    """The flaw: every dimension repeats after 2**(dim + 1) positions."""
    dim = 5
    pe = to_numpy(posenc.periodic(make(backend, [3, 3 + 2 ** (dim + 1)], device), dim))
    np.testing.assert_allclose(pe[0], pe[1], atol=1e-6)
    assert not np.allclose(
        pe[0], to_numpy(posenc.periodic(make(backend, [3 + 2**dim], device), dim))[0]
    )


@values
def test_periodic_float32_output_from_float64_angles():
    got = posenc.periodic(np.array([2**20 + 1]), 3, dtype=np.float32)
    want = np.array(oracle.periodic([2**20 + 1], 3), dtype=np.float32)
    np.testing.assert_array_equal(got, want)


# --- shapes and devices (run under every --device, meta included) -------------------------------


@pytest.mark.parametrize("fn", ["integer", "normalized", "binary", "periodic"])
@pytest.mark.parametrize("shape", [(), (4,), (2, 3)])
def test_shape_dtype_and_device(fn, shape, device):
    width = {"integer": 1, "normalized": 1, "binary": 5, "periodic": 6}[fn]
    call = {
        "integer": lambda p, **kw: posenc.integer(p, **kw),
        "normalized": lambda p, **kw: posenc.normalized(p, 10, **kw),
        "binary": lambda p, **kw: posenc.binary(p, 5, **kw),
        "periodic": lambda p, **kw: posenc.periodic(p, 6, **kw),
    }[fn]
    pos = torch.zeros(shape, dtype=torch.int64, device=device)
    out = call(pos)
    assert out.device.type == torch.device(device).type
    assert tuple(out.shape) == shape + (width,) and out.dtype == torch.get_default_dtype()
    out = call(pos.to(torch.float32), dtype=torch.bfloat16)
    assert out.device.type == torch.device(device).type and out.dtype == torch.bfloat16
    arr = call(np.zeros(shape, dtype=np.int64))
    assert isinstance(arr, np.ndarray) and arr.shape == shape + (width,) and arr.dtype == np.float64


@pytest.mark.parametrize("fn", ["integer", "binary", "periodic"])
def test_empty_positions(fn):
    call = {
        "integer": posenc.integer,
        "binary": lambda p: posenc.binary(p, 3),
        "periodic": lambda p: posenc.periodic(p, 3),
    }[fn]
    assert call(0).shape[0] == 0
    assert posenc.normalized(np.zeros((0, 2)), 4).shape == (0, 2, 1)


# --- bad input ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "positions,length,exc,match",
    [
        (
            np.array([5]),
            5,
            ValueError,
            r"positions must lie in \[0, length - 1\] = \[0, 4\] for length=5, got position 5",
        ),
        (np.array([-1, 2]), 5, ValueError, r"for length=5, got position -1"),
        (np.array([0.0, 4.5]), 5, ValueError, r"got position 4.5"),
        (torch.tensor([0, 9], device="cpu"), 5, ValueError, r"length=5, got position 9"),
        (np.array([1]), 1, ValueError, r"\[0, 0\] for length=1, got position 1"),
        (4, 0, ValueError, r"length must be a positive integer, got 0"),
        (4, -3, ValueError, r"length must be a positive integer, got -3"),
        (4, 4.0, TypeError, r"length must be a positive integer, got 4\.0 \(float\)"),
        (4, None, TypeError, r"length must be a positive integer, got None"),
        (4, True, TypeError, r"length must be a positive integer, got True"),
        (np.array([np.nan]), 5, ValueError, r"positions must be finite"),
        (np.array([True]), 5, TypeError, r"positions must hold real numbers"),
    ],
)
def test_normalized_bad_input(positions, length, exc, match):
    with pytest.raises(exc, match=match):
        posenc.normalized(positions, length)


@pytest.mark.parametrize(
    "positions,bits,exc,match",
    [
        (
            np.array([16]),
            4,
            ValueError,
            r"positions must be whole numbers in \[0, 2\*\*bits\) = \[0, 16\) for bits=4, got position 16",
        ),
        (np.array([-1]), 4, ValueError, r"for bits=4, got position -1"),
        (
            np.array([1.5]),
            4,
            ValueError,
            r"positions must be whole numbers for a binary code, got position 1.5",
        ),
        (
            torch.tensor([2.25], device="cpu"),
            4,
            ValueError,
            r"whole numbers for a binary code, got position 2.25",
        ),
        (torch.tensor([8], device="cpu"), 3, ValueError, r"\[0, 8\) for bits=3, got position 8"),
        (
            np.array([2**70], dtype=np.float64),
            65,
            ValueError,
            r"in \[0, 2\*\*bits\) for bits=65, got position",
        ),
        (4, 0, ValueError, r"bits must be a positive integer, got 0"),
        (4, -2, ValueError, r"bits must be a positive integer, got -2"),
        (4, 3.0, TypeError, r"bits must be a positive integer, got 3\.0 \(float\)"),
        (4, "4", TypeError, r"bits must be a positive integer, got '4'"),
        (4, False, TypeError, r"bits must be a positive integer, got False"),
        (np.array([np.inf]), 4, ValueError, r"positions must be finite"),
        (np.array([1 + 1j]), 4, TypeError, r"positions must hold real numbers"),
        (2.0, 4, TypeError, r"positions must be an int count or an array of positions"),
    ],
)
def test_binary_bad_input(positions, bits, exc, match):
    with pytest.raises(exc, match=match):
        posenc.binary(positions, bits)


@pytest.mark.parametrize(
    "dim,exc,match",
    [
        (0, ValueError, r"dim must be a positive integer, got 0"),
        (-1, ValueError, r"dim must be a positive integer, got -1"),
        (2.5, TypeError, r"dim must be a positive integer, got 2\.5 \(float\)"),
        (None, TypeError, r"dim must be a positive integer, got None"),
    ],
)
def test_periodic_bad_dim(dim, exc, match):
    with pytest.raises(exc, match=match):
        posenc.periodic(4, dim)


@pytest.mark.parametrize("fn", ["integer", "normalized", "binary", "periodic"])
@pytest.mark.parametrize(
    "positions,dtype,exc,match",
    [
        (
            -2,
            None,
            ValueError,
            r"positions as an int is a count of positions and must be >= 0, got -2",
        ),
        (True, None, TypeError, r"positions must be an int or an array of real numbers, got True"),
        (np.array([0.0, np.nan]), None, ValueError, r"positions must be finite"),
        (np.array(["a"]), None, TypeError, r"positions must hold real numbers"),
        (
            torch.tensor([True], device="cpu"),
            None,
            TypeError,
            r"positions must hold real numbers, got Tensor of dtype torch.bool",
        ),
        (3, np.int64, TypeError, r"dtype must be a NumPy floating dtype, got int64"),
        (
            3,
            torch.float32,
            TypeError,
            r"dtype must be a NumPy floating dtype for NumPy/int input, got torch.float32",
        ),
        (
            torch.arange(3, device="cpu"),
            torch.int32,
            TypeError,
            r"dtype must be a floating torch.dtype for tensor input, got torch.int32",
        ),
    ],
)
def test_bad_positions_and_dtype(fn, positions, dtype, exc, match):
    call = {
        "integer": lambda: posenc.integer(positions, dtype=dtype),
        "normalized": lambda: posenc.normalized(positions, 4, dtype=dtype),
        "binary": lambda: posenc.binary(positions, 4, dtype=dtype),
        "periodic": lambda: posenc.periodic(positions, 4, dtype=dtype),
    }[fn]
    with pytest.raises(exc, match=match):
        call()


def test_meta_skips_value_checks():
    """On meta there are no values to check: shapes come back, nothing is read."""
    pos = torch.empty(3, dtype=torch.float32, device="meta")
    assert posenc.normalized(pos, 2).shape == (3, 1)
    assert posenc.binary(pos, 2).shape == (3, 2)
    assert math.prod(posenc.periodic(pos, 2).shape) == 6

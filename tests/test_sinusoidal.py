"""posenc.sinusoidal, frequencies and shift_matrix: against the oracle, in NumPy and torch."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import posenc
from conftest import make, to_numpy
from oracle import shift_matrix as oracle_shift
from oracle import sinusoidal as oracle

pytestmark = pytest.mark.values

dims = st.integers(1, 24).map(lambda h: 2 * h)
bases = st.sampled_from([10000.0, 500.0, 1e6, 2.5])
layouts = st.sampled_from(["interleaved", "concat"])
int_positions = st.lists(st.integers(-5000, 5000), min_size=1, max_size=12)
float_positions = st.lists(
    st.floats(-1e4, 1e4, allow_nan=False, allow_infinity=False), min_size=1, max_size=12
)


def _tol(positions):
    # the oracle forms p / base**(2i/d); posenc forms p * base**(-2i/d): both round at 1e-16 * |p|
    return 1e-13 + 4e-16 * max(1.0, float(np.max(np.abs(positions))))


@settings(max_examples=60, deadline=None)
@given(positions=st.one_of(int_positions, float_positions), dim=dims, base=bases, layout=layouts)
def test_matches_oracle_numpy(positions, dim, base, layout):
    got = posenc.sinusoidal(np.array(positions), dim, base=base, layout=layout)
    want = np.array(oracle(positions, dim, base, layout))
    assert got.dtype == np.float64 and got.shape == (len(positions), dim)
    np.testing.assert_allclose(got, want, rtol=0, atol=_tol(positions))


@settings(max_examples=40, deadline=None)
@given(positions=st.one_of(int_positions, float_positions), dim=dims, layout=layouts)
def test_matches_oracle_torch(positions, dim, layout, device):
    pos = torch.as_tensor(np.array(positions), device=device)  # int64 or float64
    got = posenc.sinusoidal(pos, dim, layout=layout, dtype=torch.float64)
    assert got.device == pos.device
    want = np.array(oracle(positions, dim, 10000.0, layout))
    np.testing.assert_allclose(to_numpy(got), want, rtol=0, atol=_tol(positions))


@pytest.mark.parametrize("layout", ["interleaved", "concat"])
@pytest.mark.parametrize("n", [1, 2, 3, 17, 100, 1000])
def test_count_matches_oracle(n, layout, backend, device):
    """Contiguous ranges take the rotation path: every length, both layouts, both backends."""
    positions = np.arange(n) + 7
    want = np.array(oracle(positions.tolist(), 10, 10000.0, layout))
    got = posenc.sinusoidal(make(backend, positions, device), 10, layout=layout, dtype=None)
    np.testing.assert_allclose(
        to_numpy(got), want, rtol=0, atol=1e-6 if backend == "torch" else 1e-12
    )
    if backend == "numpy":
        from_count = posenc.sinusoidal(n, 10, layout=layout)
        np.testing.assert_allclose(
            from_count, np.array(oracle(list(range(n)), 10, 10000.0, layout)), atol=1e-12
        )


def test_int_gives_numpy_rows():
    pe = posenc.sinusoidal(5, 6)
    assert isinstance(pe, np.ndarray) and pe.shape == (5, 6) and pe.dtype == np.float64
    np.testing.assert_array_equal(pe[0], [0, 1, 0, 1, 0, 1])
    assert posenc.sinusoidal(0, 6).shape == (0, 6)


@pytest.mark.parametrize("shape", [(), (4,), (3, 5), (2, 3, 4)])
def test_shape_is_positions_shape_plus_dim(shape, backend, device):
    rng = np.random.default_rng(0)
    positions = rng.integers(-100, 100, size=shape)
    got = posenc.sinusoidal(make(backend, positions, device), 8)
    assert tuple(got.shape) == shape + (8,)
    want = np.array(oracle(positions.ravel().tolist(), 8)).reshape(shape + (8,))
    # float64 (NumPy) is exact to the oracle's own rounding; float32 (torch default) to 2.4e-7
    float64_out = backend == "numpy" or got.dtype == torch.float64
    atol = _tol(positions.ravel() if positions.size else [0]) if float64_out else 2.4e-7
    np.testing.assert_allclose(to_numpy(got), want, rtol=0, atol=atol)


def test_rows_in_steps_with_different_starts(backend, device):
    """Per-row position ids (a KV cache, left padding) take the fast path row by row."""
    starts = np.array([[0], [5], [1000], [-3]])
    positions = starts + np.arange(50)[None, :]
    got = posenc.sinusoidal(make(backend, positions, device), 16, dtype=None)
    want = np.array(oracle(positions.ravel().tolist(), 16)).reshape(4, 50, 16)
    np.testing.assert_allclose(to_numpy(got), want, atol=1e-6 if backend == "torch" else 1e-12)


def test_fractional_steps(backend, device):
    positions = np.arange(300) * 0.25 - 10.0  # exact in binary: a ladder with step 1/4
    got = posenc.sinusoidal(make(backend, positions, device), 12)
    want = np.array(oracle(positions.tolist(), 12))
    np.testing.assert_allclose(to_numpy(got), want, atol=1e-6 if backend == "torch" else 1e-12)


def test_default_dtypes(device):
    assert posenc.sinusoidal(np.arange(3), 4).dtype == np.float64
    assert posenc.sinusoidal(np.arange(3, dtype=np.float32), 4).dtype == np.float64
    assert posenc.sinusoidal(3, 4, dtype=np.float32).dtype == np.float32
    t = posenc.sinusoidal(torch.arange(3, device=device), 4)
    assert t.dtype == torch.get_default_dtype()
    for dt in (torch.float16, torch.bfloat16, torch.float64):
        assert posenc.sinusoidal(torch.arange(3, device=device), 4, dtype=dt).dtype == dt


@pytest.mark.parametrize("dtype,tol", [(torch.float16, 1e-3), (torch.bfloat16, 8e-3)])
def test_half_precision_within_own_rounding(dtype, tol, device):
    positions = torch.arange(2**20 - 64, 2**20, device=device)
    got = posenc.sinusoidal(positions, 64, dtype=dtype)
    want = np.array(oracle(positions.cpu().tolist(), 64))
    # one rounding of a value in [-1, 1]: half an ulp at 1 (2**-11 fp16, 2**-8 bf16)
    assert np.abs(to_numpy(got) - want).max() <= tol


# --- precision at long positions (correctness, not speed) ------------------------------------

FLOAT32_BOUND = 3e-7  # the bound; the float32 rounding floor is 3e-8


def _float64_reference(positions, dim):
    w = posenc.frequencies(dim)
    angle = np.asarray(positions, dtype=np.float64)[:, None] * w
    out = np.empty((len(positions), dim))
    out[:, 0::2], out[:, 1::2] = np.sin(angle), np.cos(angle)
    return out


@pytest.mark.parametrize("start", [0, 2**20 - 2048, 2**24 - 2048])
def test_float32_error_bound_at_long_positions(start, backend, device):
    positions = np.arange(start, start + 2048)
    got = posenc.sinusoidal(
        make(backend, positions, device),
        256,
        dtype=np.float32 if backend == "numpy" else torch.float32,
    )
    err = np.abs(to_numpy(got) - _float64_reference(positions, 256)).max()
    assert err <= FLOAT32_BOUND, err


def test_float32_error_bound_for_scattered_positions(backend, device):
    """Positions not in steps take the direct float64 path; the bound holds there too."""
    rng = np.random.default_rng(1)
    positions = rng.integers(0, 2**24, size=500)
    got = posenc.sinusoidal(
        make(backend, positions, device),
        128,
        dtype=np.float32 if backend == "numpy" else torch.float32,
    )
    err = np.abs(to_numpy(got) - _float64_reference(positions, 128)).max()
    assert err <= FLOAT32_BOUND, err


def test_naive_float32_fails_the_bound():
    """The claim on the page: the common float32 code is off by ~1e-2 near 2**20."""
    positions = np.arange(2**20 - 2048, 2**20)
    w = np.exp(np.arange(0, 256, 2, dtype=np.float32) * np.float32(-math.log(10000.0) / 256))
    angle = positions.astype(np.float32)[:, None] * w
    naive = np.empty((len(positions), 256), np.float32)
    naive[:, 0::2], naive[:, 1::2] = np.sin(angle), np.cos(angle)
    err = np.abs(naive - _float64_reference(positions, 256)).max()
    assert err > 1e-2


# --- frequencies and shift_matrix --------------------------------------------------------------


@given(dim=dims, base=bases)
def test_frequencies(dim, base):
    w = posenc.frequencies(dim, base=base)
    assert w.shape == (dim // 2,) and w.dtype == np.float64
    want = [1.0 / base ** (2 * i / dim) for i in range(dim // 2)]
    np.testing.assert_allclose(w, want, rtol=1e-14)


@settings(deadline=None)
@given(
    offset=st.floats(-1e3, 1e3, allow_nan=False),
    p=st.floats(-1e3, 1e3, allow_nan=False),
    dim=dims,
)
def test_shift_matrix_moves_encodings(offset, p, dim):
    t = posenc.shift_matrix(offset, dim)
    np.testing.assert_allclose(t, np.array(oracle_shift(offset, dim)), atol=1e-12)
    moved = posenc.sinusoidal(np.array([p]), dim) @ t.T
    np.testing.assert_allclose(moved, posenc.sinusoidal(np.array([p + offset]), dim), atol=1e-9)
    np.testing.assert_allclose(t @ t.T, np.eye(dim), atol=1e-12)  # a rotation


def test_positions_that_require_grad_are_differentiable():
    positions = torch.tensor([3.0, 4.0, 5.0], dtype=torch.float64, requires_grad=True)
    pe = posenc.sinusoidal(positions, 4, dtype=torch.float64)
    pe[:, 0].sum().backward()  # d/dp sin(p w_0) = cos(p) (w_0 = 1)
    torch.testing.assert_close(positions.grad, torch.cos(positions.detach()))

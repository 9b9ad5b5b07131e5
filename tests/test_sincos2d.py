"""posenc.sincos_2d: against the loop-by-loop 2-D table, in NumPy and torch."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import oracle_frameworks as oracle
import posenc
from conftest import to_numpy

values = pytest.mark.values

sizes = st.integers(0, 9)
dims = st.integers(1, 12).map(lambda k: 4 * k)
axes = st.sampled_from(["hw", "wh"])
layouts = st.sampled_from(["per_axis", "sin_then_cos"])
bases = st.sampled_from([10000.0, 100.0, 2.5])


@values
@settings(max_examples=60, deadline=None)
@given(height=sizes, width=sizes, dim=dims, base=bases, ax=axes, layout=layouts)
def test_matches_oracle_numpy(height, width, dim, base, ax, layout):
    got = posenc.sincos_2d(height, width, dim, base=base, axes=ax, layout=layout)
    want = np.array(oracle.sincos_2d(height, width, dim, base, ax, layout)).reshape(
        height * width, dim
    )
    assert got.shape == (height * width, dim) and got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-13)


@values
@settings(max_examples=30, deadline=None)
@given(height=sizes, width=sizes, dim=dims, ax=axes, layout=layouts)
def test_matches_oracle_torch(height, width, dim, ax, layout, device):
    like = torch.zeros(0, dtype=torch.float64, device=device)
    got = posenc.sincos_2d(height, width, dim, axes=ax, layout=layout, like=like)
    assert got.device == like.device and got.dtype == torch.float64
    want = np.array(oracle.sincos_2d(height, width, dim, 10000.0, ax, layout)).reshape(
        height * width, dim
    )
    np.testing.assert_allclose(to_numpy(got), want, rtol=0, atol=1e-13)


@values
def test_halves_are_1d_sinusoidal_of_row_and_column():
    """Row y*W + x: first half = concat-layout sinusoidal of y (dim/2 wide), second of x."""
    h, w, d = 5, 7, 24
    pe = posenc.sincos_2d(h, w, d)
    y, x = np.divmod(np.arange(h * w), w)
    np.testing.assert_allclose(
        pe[:, : d // 2], posenc.sinusoidal(y, d // 2, layout="concat"), atol=1e-15
    )
    np.testing.assert_allclose(
        pe[:, d // 2 :], posenc.sinusoidal(x, d // 2, layout="concat"), atol=1e-15
    )
    swapped = posenc.sincos_2d(h, w, d, axes="wh")
    np.testing.assert_array_equal(
        swapped, np.concatenate([pe[:, d // 2 :], pe[:, : d // 2]], axis=1)
    )


@values
def test_sin_then_cos_is_a_column_permutation():
    pe = posenc.sincos_2d(3, 4, 16)
    other = posenc.sincos_2d(3, 4, 16, layout="sin_then_cos")
    q = 4
    perm = np.r_[0:q, 2 * q : 3 * q, q : 2 * q, 3 * q : 4 * q]  # sin a, sin b, cos a, cos b
    np.testing.assert_array_equal(other, pe[:, perm])


@values
def test_transposed_grid_swaps_axes():
    """axes="wh" on an H x W grid is axes="hw" on the W x H grid, with the patches transposed."""
    a = posenc.sincos_2d(3, 5, 8, axes="wh").reshape(3, 5, 8)
    b = posenc.sincos_2d(5, 3, 8, axes="hw").reshape(5, 3, 8)
    np.testing.assert_allclose(a, b.transpose(1, 0, 2), atol=1e-15)


@pytest.mark.parametrize("layout", ["per_axis", "sin_then_cos"])
@pytest.mark.parametrize("dtype", [None, torch.float16, torch.float64])
def test_torch_output_on_device(layout, dtype, device):
    like = torch.zeros(1, dtype=torch.int64, device=device)
    out = posenc.sincos_2d(3, 4, 8, layout=layout, like=like, dtype=dtype)
    assert isinstance(out, torch.Tensor) and out.device.type == torch.device(device).type
    assert tuple(out.shape) == (12, 8)
    assert out.dtype == (dtype or torch.get_default_dtype())
    assert (
        posenc.sincos_2d(3, 4, 8, like=torch.zeros(1, dtype=torch.bfloat16, device=device)).dtype
        == torch.bfloat16
    )


def test_numpy_dtypes_and_empty_grids():
    assert posenc.sincos_2d(2, 2, 8).dtype == np.float64
    assert posenc.sincos_2d(2, 2, 8, dtype=np.float32).dtype == np.float32
    assert posenc.sincos_2d(2, 2, 8, like=np.zeros(1, np.float32)).dtype == np.float32
    assert posenc.sincos_2d(0, 5, 8).shape == (0, 8)
    assert posenc.sincos_2d(5, 0, 8).shape == (0, 8)


@pytest.mark.parametrize(
    "args,kwargs,exc,match",
    [
        ((2, 2, 6), {}, ValueError, r"dim must be a positive multiple of 4, got 6"),
        ((2, 2, 0), {}, ValueError, r"dim must be a positive multiple of 4, got 0"),
        ((2, 2, -8), {}, ValueError, r"dim must be a positive multiple of 4, got -8"),
        ((2, 2, 8.0), {}, TypeError, r"dim must be a positive multiple of 4, got 8\.0 \(float\)"),
        ((2, 2, True), {}, TypeError, r"dim must be a positive multiple of 4, got True"),
        ((-1, 2, 8), {}, ValueError, r"height must be a non-negative integer, got -1"),
        ((2, 2.5, 8), {}, TypeError, r"width must be a non-negative integer, got 2\.5 \(float\)"),
        (
            (2, 2, 8),
            {"base": 1},
            ValueError,
            r"base must be a finite number > 0 and != 1, got 1\.0",
        ),
        ((2, 2, 8), {"base": "1e4"}, TypeError, r"base must be a finite real number, got '1e4'"),
        ((2, 2, 8), {"axes": "xy"}, ValueError, r"axes must be one of 'hw', 'wh', got 'xy'"),
        (
            (2, 2, 8),
            {"layout": "concat"},
            ValueError,
            r"layout must be one of 'per_axis', 'sin_then_cos', got 'concat'",
        ),
        (
            (2, 2, 8),
            {"like": [0.0]},
            TypeError,
            r"like must be a NumPy array, a torch tensor or None",
        ),
        ((2, 2, 8), {"dtype": np.int64}, TypeError, r"dtype must be a NumPy floating dtype"),
    ],
)
def test_bad_input(args, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        posenc.sincos_2d(*args, **kwargs)

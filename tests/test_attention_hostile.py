"""attention against hostile input: float16 scores scaled first, +inf and NaN bias refused,
ragged masks named."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import posenc
from conftest import make, to_numpy

pytestmark = pytest.mark.values  # values are read throughout: skipped under --device meta

# --- attention: float16 scores scaled first, +inf bias refused ------------------------------------


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_attention_float16_is_right_where_sdpa_is(backend):
    """q k^T reaches 1e5 (> float16's 65504): NaN before; now the answer of the float16 inputs."""
    rng = np.random.default_rng(0)
    q, k, v = (make(backend, 40.0 + rng.normal(size=(n, 64)), dtype=np.float16) for n in (4, 6, 6))
    q64, k64, v64 = (to_numpy(x) for x in (q, k, v))  # what the float16 inputs hold
    assert (q64 @ k64.T).max() > 65504
    got, w = posenc.attention(q, k, v, return_weights=True)
    assert got.dtype == w.dtype == (np.float16 if backend == "numpy" else torch.float16)
    want, want_w = posenc.attention(q64, k64, v64, return_weights=True)
    np.testing.assert_allclose(to_numpy(got), want, rtol=0, atol=2e-2)  # float16 output rounding
    np.testing.assert_allclose(to_numpy(w), want_w, rtol=0, atol=1e-3)
    if backend == "torch":
        sdpa = torch.nn.functional.scaled_dot_product_attention(q, k, v)
        np.testing.assert_allclose(to_numpy(got), to_numpy(sdpa), rtol=0, atol=2e-2)


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_attention_scales_q_before_the_product(backend):
    """float32: q k^T = 5.8e38 overflows (max 3.4e38); the scaled scores, 7.2e37, do not."""
    f32 = np.float32
    q = make(backend, np.full((2, 64), 3e18), dtype=f32)
    k = make(backend, np.full((3, 64), 3e18) * np.array([[1.0], [0.5], [0.25]]), dtype=f32)
    v = make(backend, np.eye(3), dtype=f32)
    got, w = posenc.attention(q, k, v, return_weights=True)
    assert np.isfinite(to_numpy(w)).all()
    np.testing.assert_array_equal(to_numpy(w), [[1.0, 0.0, 0.0]] * 2)  # key 0 scores far highest
    if backend == "torch":
        sdpa = torch.nn.functional.scaled_dot_product_attention(q, k, v)
        torch.testing.assert_close(got, sdpa)


@pytest.mark.parametrize("backend", ["numpy", "torch"])
@pytest.mark.parametrize("bad", [np.inf, np.nan])
def test_attention_refuses_plus_inf_and_nan_bias(backend, bad):
    q = make(backend, np.zeros((2, 2)))
    bias = make(backend, np.array([[0.0, bad], [0.0, 0.0]]))
    with pytest.raises(ValueError, match=r"bias must not hold \+inf or nan"):
        posenc.attention(q, q, q, bias=bias)


def test_attention_torch_minus_inf_bias_on_every_allowed_key():
    """Row 1 may attend only to key 1, and bias removes key 1: 0/0, refused (torch too)."""
    q = torch.zeros(2, 2)
    bias = torch.tensor([[0.0, -torch.inf], [0.0, -torch.inf]])
    mask = torch.tensor([[True, True], [False, True]])
    with pytest.raises(ValueError, match=r"every score of some query row is -inf"):
        posenc.attention(q, q, q, bias=bias, mask=mask)
    # the same bias with a mask that leaves key 0 to row 1 is fine, and equals the mask alone
    ok = torch.tensor([[True, True], [True, True]])
    out, w = posenc.attention(q, q, torch.eye(2), bias=bias, mask=ok, return_weights=True)
    torch.testing.assert_close(w, torch.tensor([[1.0, 0.0], [1.0, 0.0]]))


def test_attention_ragged_mask_names_mask():
    q = np.zeros((2, 2))
    with pytest.raises(TypeError, match=r"mask must be a boolean array"):
        posenc.attention(q, q, q, mask=[[True, False], [True]])

"""posenc.alibi_slopes and alibi_bias: against the paper's reference code, in NumPy and torch."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import oracle_frameworks as oracle
import posenc
from ci_rule import require
from conftest import to_numpy

values = pytest.mark.values

heads = st.integers(1, 96)


@values
@given(n=heads)
def test_slopes_match_press_reference_code(n):
    got = posenc.alibi_slopes(n)
    assert got.shape == (n,) and got.dtype == np.float64
    np.testing.assert_allclose(got, oracle.alibi_slopes_press(n), rtol=1e-14, atol=0)


@values
@given(n=heads, max_bias=st.sampled_from([8.0, 4.0, 16.0, 1.5]))
def test_slopes_match_mpt_construction(n, max_bias):
    """MPT builds from the next power of two up; the numbers are the paper's."""
    got = posenc.alibi_slopes(n, max_bias=max_bias)
    np.testing.assert_allclose(got, oracle.alibi_slopes_mpt(n, max_bias), rtol=1e-14, atol=0)


@values
@pytest.mark.parametrize("n", [1, 2, 4, 8, 16, 32, 64])
def test_power_of_two_closed_form(n):
    np.testing.assert_array_equal(
        posenc.alibi_slopes(n), [2.0 ** (-8 * i / n) for i in range(1, n + 1)]
    )


@values
def test_non_power_of_two_interleaves_the_next_sequence():
    """12 heads: the 8 slopes of 8 heads, then 2^-0.5, 2^-1.5, 2^-2.5, 2^-3.5 (odd steps of 16)."""
    got = posenc.alibi_slopes(12)
    np.testing.assert_allclose(got[:8], posenc.alibi_slopes(8), rtol=0)
    np.testing.assert_allclose(got[8:], 2.0 ** -np.array([0.5, 1.5, 2.5, 3.5]), rtol=1e-15)
    assert not np.all(np.diff(got) < 0)  # not monotone: the extra slopes sit between the others


@st.composite
def bias_cases(draw):
    q_len = draw(st.integers(0, 9))
    k_len = draw(st.integers(0, 9))
    n_heads = draw(st.integers(1, 12))
    offset = draw(st.one_of(st.none(), st.integers(-4, 12)))
    causal = draw(st.booleans())
    return q_len, k_len, n_heads, offset, causal


@values
@settings(max_examples=60, deadline=None)
@given(case=bias_cases())
def test_bias_matches_oracle_numpy(case):
    q_len, k_len, n_heads, offset, causal = case
    got = posenc.alibi_bias(q_len, k_len, n_heads, causal=causal, offset=offset)
    want = np.array(
        oracle.alibi_bias(q_len, k_len, oracle.alibi_slopes_press(n_heads), causal, offset)
    ).reshape(n_heads, q_len, k_len)
    assert got.dtype == np.float64 and got.shape == (n_heads, q_len, k_len)
    np.testing.assert_allclose(got, want, rtol=1e-14, atol=0)


@values
@settings(max_examples=30, deadline=None)
@given(case=bias_cases())
def test_bias_matches_oracle_torch(case, device):
    q_len, k_len, n_heads, offset, causal = case
    like = torch.zeros(0, dtype=torch.float64, device=device)
    got = posenc.alibi_bias(q_len, k_len, n_heads, causal=causal, offset=offset, like=like)
    assert got.device == like.device and got.dtype == torch.float64
    want = np.array(
        oracle.alibi_bias(q_len, k_len, oracle.alibi_slopes_press(n_heads), causal, offset)
    ).reshape(n_heads, q_len, k_len)
    np.testing.assert_allclose(to_numpy(got), want, rtol=1e-14, atol=0)


@values
def test_default_offset_is_the_kv_cache_alignment():
    """The last query sits on the last key: its row is the full prefix's last row."""
    full = posenc.alibi_bias(7, 7, 4)
    np.testing.assert_array_equal(posenc.alibi_bias(1, 7, 4), full[:, -1:, :])
    np.testing.assert_array_equal(posenc.alibi_bias(3, 7, 4), full[:, -3:, :])
    np.testing.assert_array_equal(posenc.alibi_bias(3, 7, 4, offset=0), full[:, :3, :])


@values
def test_diagonal_is_positive_zero_and_symmetric_mode():
    causal = posenc.alibi_bias(5, 5, 3)
    assert not np.signbit(np.diagonal(causal, axis1=1, axis2=2)).any()
    sym = posenc.alibi_bias(5, 5, 3, causal=False)
    np.testing.assert_array_equal(sym, np.transpose(sym, (0, 2, 1)))
    lower = np.tril(np.ones((5, 5), bool))
    np.testing.assert_array_equal(sym[:, lower], causal[:, lower])
    assert np.isneginf(causal[:, ~lower]).all() and np.isfinite(sym).all()


@values
def test_softmax_of_bias_is_shift_invariant_per_row():
    """Adding a per-row constant (BLOOM's and MPT's form) leaves the attention unchanged."""
    bias = posenc.alibi_bias(6, 6, 4, causal=False)
    shifted = bias + np.arange(6.0)[None, :, None] * 3.0

    def softmax(x):
        e = np.exp(x - x.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)

    np.testing.assert_allclose(softmax(bias), softmax(shifted), rtol=1e-12)


@pytest.mark.parametrize(
    "like,dtype,want",
    [
        (None, None, np.float64),
        (np.zeros(1, np.float32), None, np.float32),
        (np.zeros(1, np.int64), None, np.float64),
        (None, np.float16, np.float16),
        ("tensor-f64", None, torch.float64),
        ("tensor-int", None, "default"),
        ("tensor-f64", torch.bfloat16, torch.bfloat16),
    ],
)
def test_output_library_device_and_dtype(like, dtype, want, device):
    if like == "tensor-f64":
        like = torch.zeros(1, dtype=torch.float64, device=device)
    elif like == "tensor-int":
        like = torch.zeros(1, dtype=torch.int64, device=device)
    out = posenc.alibi_bias(3, 4, 2, like=like, dtype=dtype)
    assert tuple(out.shape) == (2, 3, 4)
    if isinstance(like, torch.Tensor):
        assert isinstance(out, torch.Tensor) and out.device.type == torch.device(device).type
        assert out.dtype == (torch.get_default_dtype() if want == "default" else want)
    else:
        assert isinstance(out, np.ndarray) and out.dtype == want


@pytest.mark.parametrize(
    "kwargs,exc,match",
    [
        ({"n_heads": 0}, ValueError, r"n_heads must be a positive integer, got 0"),
        ({"n_heads": -2}, ValueError, r"n_heads must be a positive integer, got -2"),
        ({"n_heads": 4.0}, TypeError, r"n_heads must be a positive integer, got 4\.0 \(float\)"),
        ({"n_heads": True}, TypeError, r"n_heads must be a positive integer, got True"),
        ({"max_bias": 0}, ValueError, r"max_bias must be a finite real number > 0, got 0\.0"),
        ({"max_bias": -8}, ValueError, r"max_bias must be a finite real number > 0, got -8\.0"),
        ({"max_bias": math.inf}, ValueError, r"max_bias must be a finite real number, got inf"),
        ({"max_bias": "8"}, TypeError, r"max_bias must be a finite real number, got '8'"),
    ],
)
@pytest.mark.parametrize("fn", ["alibi_slopes", "alibi_bias"])
def test_bad_heads_and_max_bias(fn, kwargs, exc, match):
    args = {"n_heads": 4, "max_bias": 8.0, **kwargs}
    with pytest.raises(exc, match=match):
        if fn == "alibi_slopes":
            posenc.alibi_slopes(args["n_heads"], max_bias=args["max_bias"])
        else:
            posenc.alibi_bias(2, 3, args["n_heads"], max_bias=args["max_bias"])


@pytest.mark.parametrize(
    "kwargs,exc,match",
    [
        ({"q_len": -1}, ValueError, r"q_len must be a non-negative integer, got -1"),
        ({"k_len": 2.0}, TypeError, r"k_len must be a non-negative integer, got 2\.0 \(float\)"),
        ({"q_len": None}, TypeError, r"q_len must be a non-negative integer, got None"),
        ({"k_len": False}, TypeError, r"k_len must be a non-negative integer, got False"),
        ({"causal": 1}, TypeError, r"causal must be a bool, got 1 \(int\)"),
        ({"causal": "yes"}, TypeError, r"causal must be a bool, got 'yes'"),
        ({"offset": 1.5}, TypeError, r"offset must be an integer or None, got 1\.5 \(float\)"),
        ({"offset": True}, TypeError, r"offset must be an integer or None, got True"),
        (
            {"like": [1.0]},
            TypeError,
            r"like must be a NumPy array, a torch tensor or None, got \[1\.0\]",
        ),
        ({"like": 3}, TypeError, r"like must be a NumPy array, a torch tensor or None, got 3"),
        ({"dtype": np.int32}, TypeError, r"dtype must be a NumPy floating dtype"),
        (
            {"like": "tensor", "dtype": torch.int64},
            TypeError,
            r"dtype must be a floating torch\.dtype",
        ),
    ],
)
def test_bad_bias_arguments(kwargs, exc, match):
    args = {"q_len": 2, "k_len": 3, **kwargs}
    if args.get("like") == "tensor":
        args["like"] = torch.zeros(1, device="cpu")
    q_len, k_len = args.pop("q_len"), args.pop("k_len")
    with pytest.raises(exc, match=match):
        posenc.alibi_bias(q_len, k_len, 4, **args)


# --- mutation-run survivors (issue 8): the torch branch of the no -0.0 rule ------------------------


@pytest.mark.values
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("offset", [None, 0, 3])
def test_torch_bias_has_no_negative_zero(dtype, causal, offset):
    """``-m * 0`` is -0.0; the diagonal (and every zero) of the torch bias must be +0.0, as in NumPy."""
    bias = posenc.alibi_bias(
        5, 8, 3, causal=causal, offset=offset, like=torch.zeros(1, dtype=dtype, device="cpu")
    )
    assert bias.dtype == dtype
    zeros = bias == 0
    assert zeros.any()
    assert not torch.signbit(bias[zeros]).any()


@values
@pytest.mark.parametrize("heads,keys", [(32, 2048), (71, 2048), (16, 5000)])
def test_bfloat16_rounding_is_falcons_bias(heads, keys):
    # transformers 5.24 models/falcon build_alibi_tensor: bf16(bf16(slope) * bf16(position));
    # the model's per-key bias, less its value at each query, is posenc's bias exactly
    require("transformers")
    from transformers.models.falcon.modeling_falcon import build_alibi_tensor

    mask = torch.ones(1, keys, dtype=torch.long)
    a = build_alibi_tensor(mask, heads, torch.float32).view(heads, keys).double()
    queries = torch.arange(keys - 4, keys)
    model = a[:, None, :] - a[:, queries][:, :, None]  # (heads, queries, keys)
    got = torch.as_tensor(posenc.alibi_bias(4, keys, heads, rounding="bfloat16"))
    seen = torch.isfinite(got)
    assert torch.equal(seen, (queries[:, None] >= torch.arange(keys)).expand_as(seen))  # causal
    assert torch.equal(got[seen], model[seen])
    # without it, posenc's exact bias is off by ~0.6% of the largest bias (the 6e-3)
    exact = torch.as_tensor(posenc.alibi_bias(4, keys, heads))
    rel = float((exact[seen] - model[seen]).abs().max() / model[seen].abs().max())
    assert 3e-3 < rel < 1e-2, rel
    # torch output: the same numbers on the like's dtype
    t = posenc.alibi_bias(4, keys, heads, rounding="bfloat16", like=torch.zeros(1))
    assert t.dtype == torch.float32 and torch.equal(t.double()[seen], got[seen].float().double())


def test_bfloat16_rounding_rounds_positions_past_256_to_even_steps():
    # bfloat16 keeps 8 significant bits: 257 -> 256, 259 -> 260 (ties to even); slope 1/2 exact
    row = posenc.alibi_bias(1, 262, 1, max_bias=1.0, rounding="bfloat16", causal=False)[0, 0]
    a = 0.0 - row  # A(261) - A(j), with A(261) = bf16(0.5 * 260) = 130
    assert a[256] == a[257] == 130 - 128 and a[258] == 130 - 129 and a[259] == 0.0

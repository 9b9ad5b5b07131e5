"""posenc.compat: each drop-in against its framework's recipe written loop by loop.

The frameworks that do install (transformers, timm) are compared directly in test_frameworks.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import oracle_frameworks as oracle
import posenc
from conftest import make
from posenc import compat

values = pytest.mark.values

F32_ROUND = 2.0**-25  # half an ulp of float32 in [0.5, 1): one rounding of a value in [-1, 1]


def test_all_names_are_exported_and_not_star_imported():
    assert set(compat.__all__) == {
        "tensor2tensor_timing_signal_1d",
        "fairseq_sinusoidal_embedding",
        "fairseq_make_positions",
        "marian_sinusoidal_weight",
        "mae_2d_sincos_pos_embed",
        "whisper_sinusoids",
    }
    assert all(callable(getattr(compat, name)) for name in compat.__all__)
    assert not any(hasattr(posenc, name) for name in compat.__all__ if name not in posenc.__all__)
    assert not set(compat.__all__) & set(posenc.__all__)


# --- tensor2tensor -----------------------------------------------------------------------------


@values
@settings(max_examples=50, deadline=None)
@given(
    length=st.integers(0, 30),
    channels=st.integers(1, 40),
    timescales=st.sampled_from([(1.0, 1.0e4), (1.0, 1.0e2), (0.5, 5.0e3), (2.0, 1.0)]),
    start_index=st.integers(-50, 5000),
)
def test_timing_signal_matches_oracle(length, channels, timescales, start_index):
    lo, hi = timescales
    got = compat.tensor2tensor_timing_signal_1d(length, channels, lo, hi, start_index)
    assert got.shape == (1, length, channels) and got.dtype == np.float32
    want = np.array(oracle.tensor2tensor_timing_signal_1d(length, channels, lo, hi, start_index))
    want = want.reshape(1, length, channels)
    tol = F32_ROUND + 1e-14 * (abs(start_index) + length)
    np.testing.assert_allclose(got, want, rtol=0, atol=tol)


@values
def test_timing_signal_odd_channels_and_small_widths():
    sig = compat.tensor2tensor_timing_signal_1d(6, 7)
    assert (sig[0, :, 6] == 0).all() and (sig[0, :, :6] != 0).any()
    # channels 2 and 3: one timescale, min_timescale itself (the denominator max(n - 1, 1) = 1)
    np.testing.assert_allclose(
        compat.tensor2tensor_timing_signal_1d(4, 2, min_timescale=0.5)[0],
        np.stack([np.sin(0.5 * np.arange(4)), np.cos(0.5 * np.arange(4))], axis=1),
        atol=F32_ROUND,
    )
    assert (compat.tensor2tensor_timing_signal_1d(3, 1) == 0).all()


@values
def test_timing_signal_ladder_reaches_max_timescale():
    """The slowest channel has timescale max_timescale exactly: n - 1 steps, not the paper's n."""
    sig = compat.tensor2tensor_timing_signal_1d(1, 8, max_timescale=100.0, start_index=50)
    np.testing.assert_allclose(sig[0, 0, 3], math.sin(50 / 100.0), atol=F32_ROUND)
    paper = posenc.sinusoidal(np.array([50]), 8, base=100.0, layout="concat")
    assert abs(paper[0, 3] - math.sin(50 / 100.0)) > 1e-2


# --- fairseq -----------------------------------------------------------------------------------


@values
@settings(max_examples=50, deadline=None)
@given(
    n=st.integers(0, 60),
    dim=st.integers(4, 40),
    pad=st.one_of(st.none(), st.integers(-1, 3)),
)
def test_fairseq_embedding_matches_oracle(n, dim, pad):
    if pad is not None and not -n <= pad < n:
        pad = None
    got = compat.fairseq_sinusoidal_embedding(n, dim, pad)
    assert got.shape == (n, dim) and got.dtype == np.float32
    want = np.array(oracle.fairseq_sinusoidal_embedding(n, dim, pad)).reshape(n, dim)
    np.testing.assert_allclose(got, want, rtol=0, atol=F32_ROUND + 1e-14 * n)


@values
@pytest.mark.parametrize("dim", [4, 8, 9, 64])
def test_fairseq_equals_tensor2tensor_defaults(dim):
    """Same recipe: fairseq's table is tensor2tensor's default signal (without the padding row)."""
    np.testing.assert_array_equal(
        compat.fairseq_sinusoidal_embedding(50, dim),
        compat.tensor2tensor_timing_signal_1d(50, dim)[0],
    )


@values
@pytest.mark.parametrize("dim", [8, 64, 512])
def test_fairseq_is_concat_sinusoidal_with_a_larger_base(dim):
    """w_k = 10000 ** (-k / (h - 1)) is the paper's ladder with base 10000 ** (h / (h - 1))."""
    h = dim // 2
    exact = posenc.sinusoidal(200, dim, base=10000.0 ** (h / (h - 1)), layout="concat")
    np.testing.assert_allclose(
        compat.fairseq_sinusoidal_embedding(200, dim), exact, rtol=0, atol=F32_ROUND + 1e-13
    )


@values
@pytest.mark.parametrize("lib", ["numpy", "torch"])
@settings(max_examples=40, deadline=None)
@given(
    tokens=st.lists(st.lists(st.integers(0, 4), min_size=3, max_size=3), min_size=1, max_size=4),
    pad=st.integers(0, 4),
)
def test_make_positions_matches_oracle(lib, tokens, pad, device):
    got = compat.fairseq_make_positions(make(lib, tokens, device), pad)
    assert got.dtype in (np.int64, torch.int64)
    got = got.cpu().numpy() if isinstance(got, torch.Tensor) else got
    np.testing.assert_array_equal(got, oracle.fairseq_make_positions(tokens, pad))


@values
def test_make_positions_left_and_right_padding():
    tokens = np.array([[1, 1, 1, 9, 9], [9, 9, 9, 9, 9], [9, 9, 1, 9, 1]])
    np.testing.assert_array_equal(
        compat.fairseq_make_positions(tokens, 1),
        [[1, 1, 1, 2, 3], [2, 3, 4, 5, 6], [2, 3, 1, 4, 1]],
    )


def test_make_positions_library_and_device(backend, device):
    tokens = make(backend, np.array([[1, 2, 3], [3, 2, 1]], dtype=np.int32), device)
    out = compat.fairseq_make_positions(tokens, 1)
    assert tuple(out.shape) == (2, 3)
    if backend == "torch":
        assert out.device.type == torch.device(device).type and out.dtype == torch.int64
    else:
        assert isinstance(out, np.ndarray) and out.dtype == np.int64
    assert tuple(
        compat.fairseq_make_positions(make(backend, np.zeros((2, 3, 4), np.int64), device), 0).shape
    ) == (2, 3, 4)


# --- Marian ------------------------------------------------------------------------------------


@values
@settings(max_examples=40, deadline=None)
@given(n=st.integers(0, 40), dim=st.integers(1, 40))
def test_marian_matches_oracle(n, dim):
    got = compat.marian_sinusoidal_weight(n, dim)
    assert got.shape == (n, dim) and got.dtype == np.float32
    want = np.array(oracle.marian_sinusoidal_weight(n, dim)).reshape(n, dim)
    np.testing.assert_allclose(got, want, rtol=0, atol=F32_ROUND)


@values
@pytest.mark.parametrize("dim", [2, 16, 512])
def test_marian_even_dim_is_concat_sinusoidal(dim):
    np.testing.assert_allclose(
        compat.marian_sinusoidal_weight(300, dim),
        posenc.sinusoidal(300, dim, layout="concat"),
        rtol=0,
        atol=F32_ROUND,
    )


@values
def test_marian_odd_dim_has_one_more_sine():
    w = compat.marian_sinusoidal_weight(10, 5).astype(np.float64)
    p = np.arange(10)[:, None]
    freqs = 10000.0 ** (-np.array([0, 2, 4]) / 5)
    np.testing.assert_allclose(w[:, :3], np.sin(p * freqs), atol=F32_ROUND)
    np.testing.assert_allclose(w[:, 3:], np.cos(p * freqs[:2]), atol=F32_ROUND)


# --- MAE ---------------------------------------------------------------------------------------


@values
@settings(max_examples=30, deadline=None)
@given(dim=st.integers(1, 16).map(lambda k: 4 * k), size=st.integers(0, 8), cls=st.booleans())
def test_mae_matches_oracle(dim, size, cls):
    got = compat.mae_2d_sincos_pos_embed(dim, size, cls_token=cls)
    want = np.array(oracle.mae_2d_sincos_pos_embed(dim, size, cls)).reshape(size * size + cls, dim)
    assert got.shape == want.shape and got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-13)


@values
def test_mae_first_half_encodes_the_column():
    """MAE's "emb_h" half is the column index x: row y * g + x starts with sincos(x)."""
    g, d = 5, 16
    pe = compat.mae_2d_sincos_pos_embed(d, g)
    y, x = np.divmod(np.arange(g * g), g)
    np.testing.assert_allclose(
        pe[:, : d // 2], posenc.sinusoidal(x, d // 2, layout="concat"), atol=1e-14
    )
    np.testing.assert_allclose(
        pe[:, d // 2 :], posenc.sinusoidal(y, d // 2, layout="concat"), atol=1e-14
    )
    np.testing.assert_allclose(pe, posenc.sincos_2d(g, g, d, axes="wh"), atol=1e-14)
    assert np.abs(pe - posenc.sincos_2d(g, g, d)).max() > 0.5  # the "hw" table is a different one
    with_cls = compat.mae_2d_sincos_pos_embed(d, g, cls_token=True)
    assert (with_cls[0] == 0).all()
    np.testing.assert_array_equal(with_cls[1:], pe)


# --- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call,exc,match",
    [
        (
            lambda: compat.tensor2tensor_timing_signal_1d(-1, 8),
            ValueError,
            r"length must be a non-negative integer, got -1",
        ),
        (
            lambda: compat.tensor2tensor_timing_signal_1d(4.0, 8),
            TypeError,
            r"length must be a non-negative integer, got 4\.0",
        ),
        (
            lambda: compat.tensor2tensor_timing_signal_1d(4, 0),
            ValueError,
            r"channels must be a positive integer, got 0",
        ),
        (
            lambda: compat.tensor2tensor_timing_signal_1d(4, "8"),
            TypeError,
            r"channels must be a positive integer, got '8'",
        ),
        (
            lambda: compat.tensor2tensor_timing_signal_1d(4, 8, 0.0),
            ValueError,
            r"min_timescale must be a finite real number > 0, got 0\.0",
        ),
        (
            lambda: compat.tensor2tensor_timing_signal_1d(4, 8, 1.0, -1e4),
            ValueError,
            r"max_timescale must be a finite real number > 0, got -10000\.0",
        ),
        (
            lambda: compat.tensor2tensor_timing_signal_1d(4, 8, 1.0, math.inf),
            ValueError,
            r"max_timescale must be a finite real number, got inf",
        ),
        (
            lambda: compat.tensor2tensor_timing_signal_1d(4, 8, start_index=1.5),
            TypeError,
            r"start_index must be an integer, got 1\.5",
        ),
    ],
)
def test_bad_timing_signal_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


@pytest.mark.parametrize(
    "call,exc,match",
    [
        (
            lambda: compat.fairseq_sinusoidal_embedding(10, 3),
            ValueError,
            r"embedding_dim must be an integer >= 4 .*got 3",
        ),
        (
            lambda: compat.fairseq_sinusoidal_embedding(10, 0),
            ValueError,
            r"embedding_dim must be a positive integer, got 0",
        ),
        (
            lambda: compat.fairseq_sinusoidal_embedding(10, 8.0),
            TypeError,
            r"embedding_dim must be a positive integer, got 8\.0",
        ),
        (
            lambda: compat.fairseq_sinusoidal_embedding(-2, 8),
            ValueError,
            r"num_embeddings must be a non-negative integer, got -2",
        ),
        (
            lambda: compat.fairseq_sinusoidal_embedding(10, 8, 10),
            ValueError,
            r"padding_idx must index a row of the 10-row table \(-10 <= padding_idx < 10\), got 10",
        ),
        (
            lambda: compat.fairseq_sinusoidal_embedding(10, 8, -11),
            ValueError,
            r"padding_idx must index a row .*got -11",
        ),
        (
            lambda: compat.fairseq_sinusoidal_embedding(10, 8, 1.0),
            TypeError,
            r"padding_idx must be an integer, got 1\.0",
        ),
    ],
)
def test_bad_fairseq_embedding_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


@pytest.mark.parametrize(
    "tokens,pad,exc,match",
    [
        (
            np.array([1, 2, 3]),
            1,
            ValueError,
            r"tokens must have shape \(batch, seq, \.\.\.\) .*got shape \(3,\)",
        ),
        (
            np.array([[1.0, 2.0]]),
            1,
            TypeError,
            r"tokens must be an integer array, got ndarray of dtype float64",
        ),
        (
            np.array([[True]]),
            1,
            TypeError,
            r"tokens must be an integer array, got ndarray of dtype bool",
        ),
        (
            torch.tensor([1, 2], device="cpu"),
            1,
            ValueError,
            r"tokens must have shape .*got shape \(2,\)",
        ),
        (
            torch.tensor([[1.0]], device="cpu"),
            1,
            TypeError,
            r"tokens must be an integer array, got Tensor of dtype torch\.float32",
        ),
        (np.array([[1, 2]]), 1.0, TypeError, r"padding_idx must be an integer, got 1\.0"),
        (np.array([[1, 2]]), None, TypeError, r"padding_idx must be an integer, got None"),
    ],
)
def test_bad_make_positions_input(tokens, pad, exc, match):
    with pytest.raises(exc, match=match):
        compat.fairseq_make_positions(tokens, pad)


@pytest.mark.parametrize(
    "call,exc,match",
    [
        (
            lambda: compat.marian_sinusoidal_weight(-1, 8),
            ValueError,
            r"n_pos must be a non-negative integer, got -1",
        ),
        (
            lambda: compat.marian_sinusoidal_weight(4, 0),
            ValueError,
            r"dim must be a positive integer, got 0",
        ),
        (
            lambda: compat.marian_sinusoidal_weight(4, True),
            TypeError,
            r"dim must be a positive integer, got True",
        ),
        (
            lambda: compat.mae_2d_sincos_pos_embed(6, 4),
            ValueError,
            r"embed_dim must be a positive multiple of 4, got 6",
        ),
        (
            lambda: compat.mae_2d_sincos_pos_embed(8.0, 4),
            TypeError,
            r"embed_dim must be a positive multiple of 4, got 8\.0",
        ),
        (
            lambda: compat.mae_2d_sincos_pos_embed(8, -1),
            ValueError,
            r"grid_size must be a non-negative integer, got -1",
        ),
        (
            lambda: compat.mae_2d_sincos_pos_embed(8, (4, 4)),
            TypeError,
            r"grid_size must be a non-negative integer, got \(4, 4\)",
        ),
        (
            lambda: compat.mae_2d_sincos_pos_embed(8, 4, cls_token=1),
            TypeError,
            r"cls_token must be a bool, got 1 \(int\)",
        ),
    ],
)
def test_bad_table_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


# --- mutation-run survivors (issue 8) ------------------------------------------------------------


@pytest.mark.values
@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_make_positions_3d_counts_along_axis_1_by_value(backend):
    """(batch, seq, channels) ids count along seq, per channel: a cumsum along another axis fails."""
    tokens = np.array([[[1, 5], [5, 1], [6, 6]], [[5, 5], [1, 1], [7, 1]]])  # padding id 1
    want = np.array([[[1, 2], [2, 1], [3, 3]], [[2, 2], [1, 1], [3, 1]]])  # worked by hand
    got = compat.fairseq_make_positions(make(backend, tokens), 1)
    got = got.cpu().numpy() if isinstance(got, torch.Tensor) else got
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, want)


@pytest.mark.values
@pytest.mark.slow
@pytest.mark.parametrize("n_pos,dim", [(1024, 512), (1024, 513), (1026, 1024)])
def test_marian_bit_for_bit_at_model_size(n_pos, dim):
    """Marian's table at the sizes models use (opus-mt: 512 positions of width 512; larger and odd
    widths too), not only up to 100 rows: every float32 bit equal to transformers'."""
    from ci_rule import require

    marian = require("transformers.models.marian.modeling_marian")
    theirs = marian.MarianSinusoidalPositionalEmbedding(n_pos, dim).create_weight()
    ours = torch.as_tensor(compat.marian_sinusoidal_weight(n_pos, dim), device="cpu")
    assert theirs.dtype == torch.float32 and ours.dtype == torch.float32
    assert torch.equal(ours, theirs.cpu())

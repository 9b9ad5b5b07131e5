"""Hypothesis properties across NumPy and torch (issue 8, "Keep it from coming back").

- NumPy in and torch in give the same numbers, for every public function that takes both;
- RoPE keeps every vector's norm, and the score of a rotated query and key depends on their
  positions only through the offset ``m - n``;
- a module equals its function for every float dtype of ``x`` and every dtype of positions
  (``RotaryEmbedding`` vs ``apply_rope``, ``SinusoidalPositionalEncoding`` vs ``sinusoidal``).

Examples are few (``max_examples`` below) to keep the suite's time; the strategies reach the
edges (negative and large positions, odd widths, partial rotary) rather than many middles.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import posenc
import seeded
from posenc.torch import RotaryEmbedding, SinusoidalPositionalEncoding

pytestmark = pytest.mark.values

FEW = settings(max_examples=20)
INT_DTYPES = [torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8]
FLOAT_DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.float64]


def _np(t):
    return t.detach().cpu().to(torch.float64).numpy() if t.is_floating_point() else t.cpu().numpy()


positions_1d = st.lists(st.integers(-(2**20), 2**20), min_size=0, max_size=6).map(np.array)
small_positions = st.lists(st.integers(0, 120), min_size=1, max_size=6).map(np.array)
even_dim = st.integers(1, 8).map(lambda n: 2 * n)


def _close(a, b, atol):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    assert a.shape == b.shape, (a.shape, b.shape)
    err = float(np.max(np.abs(a - b), initial=0.0))
    assert err <= atol, err


# --- NumPy and torch give the same numbers ------------------------------------------------------


@FEW
@given(positions=positions_1d, dim=even_dim, layout=st.sampled_from(["interleaved", "concat"]))
def test_sinusoidal_numpy_equals_torch(positions, dim, layout):
    positions = positions.astype(np.int64)
    want = posenc.sinusoidal(positions, dim, layout=layout)
    got = posenc.sinusoidal(torch.as_tensor(positions), dim, layout=layout, dtype=torch.float64)
    _close(_np(got), want, 1e-15)


@FEW
@given(positions=small_positions, dim=st.integers(1, 9))
def test_naive_encodings_numpy_equal_torch(positions, dim):
    t = torch.as_tensor(positions)
    _close(_np(posenc.integer(t, dtype=torch.float64)), posenc.integer(positions), 0)
    n = int(positions.max()) + 1
    _close(
        _np(posenc.normalized(t, n + 1, dtype=torch.float64)),
        posenc.normalized(positions, n + 1),
        1e-16,
    )
    _close(_np(posenc.binary(t, 7, dtype=torch.float64)), posenc.binary(positions, 7), 0)
    _close(
        _np(posenc.periodic(t, dim, dtype=torch.float64)), posenc.periodic(positions, dim), 1e-15
    )


@FEW
@given(
    positions=st.lists(st.integers(-(2**20), 2**20), min_size=3, max_size=3).map(np.array),
    rot=st.sampled_from([None, 4]),
    pairing=st.sampled_from(["interleaved", "half"]),
    seed=st.integers(0, 2**16),
)
def test_apply_rope_numpy_equals_torch(positions, rot, pairing, seed):
    x = np.random.default_rng(seed).standard_normal((2, 3, 8))
    want = posenc.apply_rope(x, positions, pairing=pairing, rotary_dim=rot)
    got = posenc.apply_rope(
        torch.as_tensor(x), torch.as_tensor(positions), pairing=pairing, rotary_dim=rot
    )
    _close(_np(got), want, 1e-14)


@FEW
@given(
    q_len=st.integers(0, 5),
    k_len=st.integers(0, 6),
    heads=st.integers(1, 9),
    causal=st.booleans(),
    offset=st.one_of(st.none(), st.integers(-3, 8)),
)
def test_alibi_bias_numpy_equals_torch(q_len, k_len, heads, causal, offset):
    want = posenc.alibi_bias(q_len, k_len, heads, causal=causal, offset=offset)
    got = posenc.alibi_bias(
        q_len, k_len, heads, causal=causal, offset=offset, like=torch.zeros(1, dtype=torch.float64)
    )
    got = _np(got)
    assert got.shape == want.shape
    assert np.array_equal(np.isneginf(got), np.isneginf(want))
    finite = np.isfinite(want)
    _close(got[finite], want[finite], 1e-15)
    assert not np.signbit(got[got == 0]).any(), "-0.0 in the torch bias"


@FEW
@given(
    rel=st.lists(st.integers(-(2**40), 2**40), min_size=1, max_size=8).map(np.array),
    bidirectional=st.booleans(),
    buckets=st.sampled_from([8, 32]),
    max_distance=st.sampled_from([20, 128]),
)
def test_t5_bucket_numpy_equals_torch(rel, bidirectional, buckets, max_distance):
    kw = {"bidirectional": bidirectional, "num_buckets": buckets, "max_distance": max_distance}
    want = posenc.t5_bucket(rel, **kw)
    got = posenc.t5_bucket(torch.as_tensor(rel), **kw)
    assert np.array_equal(got.cpu().numpy(), want)
    assert ((want >= 0) & (want < buckets)).all()


@FEW
@given(
    mask=st.lists(st.lists(st.booleans(), min_size=4, max_size=4), min_size=1, max_size=3).map(
        np.array
    )
)
def test_position_ids_numpy_equals_torch(mask):
    want = posenc.position_ids(mask, pad_value=1)
    got = posenc.position_ids(torch.as_tensor(mask), pad_value=1)
    assert np.array_equal(got.cpu().numpy(), want)


@FEW
@given(
    h=st.integers(0, 4),
    w=st.integers(0, 4),
    dim=st.sampled_from([4, 8, 12]),
    axes=st.sampled_from(["hw", "wh"]),
    layout=st.sampled_from(["per_axis", "sin_then_cos"]),
)
def test_sincos_2d_numpy_equals_torch(h, w, dim, axes, layout):
    want = posenc.sincos_2d(h, w, dim, axes=axes, layout=layout)
    got = posenc.sincos_2d(
        h, w, dim, axes=axes, layout=layout, like=torch.zeros(1, dtype=torch.float64)
    )
    _close(_np(got), want, 1e-15)


# --- RoPE: norm and relativity ----------------------------------------------------------------


@FEW
@given(
    positions=st.lists(st.integers(-(2**30), 2**30), min_size=4, max_size=4).map(np.array),
    pairing=st.sampled_from(["interleaved", "half"]),
    backend=st.sampled_from(["numpy", "torch"]),
    seed=st.integers(0, 2**16),
)
def test_rope_preserves_every_pair_norm(positions, pairing, backend, seed):
    x = np.random.default_rng(seed).standard_normal((3, 4, 8))
    xin = torch.as_tensor(x) if backend == "torch" else x
    out = posenc.apply_rope(xin, positions, pairing=pairing)
    out = _np(out) if backend == "torch" else out
    half = out.shape[-1] // 2
    if pairing == "half":
        pairs_in, pairs_out = (x[..., :half], x[..., half:]), (out[..., :half], out[..., half:])
    else:
        pairs_in, pairs_out = (x[..., 0::2], x[..., 1::2]), (out[..., 0::2], out[..., 1::2])
    _close(np.hypot(*pairs_out), np.hypot(*pairs_in), 1e-14)  # each 2-D pair keeps its length


@FEW
@given(
    m=st.integers(-(2**16), 2**16),
    n=st.integers(-(2**16), 2**16),
    shift=st.integers(-(2**16), 2**16),
    pairing=st.sampled_from(["interleaved", "half"]),
    backend=st.sampled_from(["numpy", "torch"]),
    seed=st.integers(0, 2**16),
)
def test_rope_score_depends_only_on_the_offset(m, n, shift, pairing, backend, seed):
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal(16), rng.standard_normal(16)

    def score(a, b):
        qa, kb = (q, k) if backend == "numpy" else (torch.as_tensor(q), torch.as_tensor(k))
        rq = posenc.apply_rope(qa[None], np.array([a]), pairing=pairing)
        rk = posenc.apply_rope(kb[None], np.array([b]), pairing=pairing)
        rq, rk = (rq, rk) if backend == "numpy" else (_np(rq), _np(rk))
        return float(rq[0] @ rk[0])

    # float64 angles of size up to 2**17 carry ~3e-12 rad of rounding each
    _close(score(m + shift, n + shift), score(m, n), 1e-9 * np.linalg.norm(q) * np.linalg.norm(k))


# --- modules equal their functions, for every float dtype and position dtype -------------------


@settings(max_examples=30)
@given(
    x_dtype=st.sampled_from(FLOAT_DTYPES),
    pos_dtype=st.sampled_from(INT_DTYPES + [torch.float32, torch.float64]),
    pairing=st.sampled_from(["interleaved", "half"]),
    rot=st.sampled_from([None, 4]),
    start=st.integers(0, 100),
    seed=st.integers(0, 2**16),
)
def test_rotary_module_equals_apply_rope(x_dtype, pos_dtype, pairing, rot, start, seed):
    g = torch.Generator().manual_seed(seed)
    q = seeded.randn(2, 2, 5, 8, generator=g).to(x_dtype)
    k = seeded.randn(2, 1, 5, 8, generator=g).to(x_dtype)
    positions = torch.arange(start, start + 5).to(pos_dtype)  # fits int8 and uint8
    module = RotaryEmbedding(8, pairing=pairing, rotary_dim=rot, max_len=64)
    got_q, got_k = module(q, k, positions=positions)
    for got, x in ((got_q, q), (got_k, k)):
        want = posenc.apply_rope(x, positions.to(torch.int64), pairing=pairing, rotary_dim=rot)
        assert got.dtype == x.dtype
        # the same rounding: the cache holds float32 (float64 for float64 x) values of the exact cos/sin
        eps = torch.finfo(x_dtype).eps
        _close(_np(got), _np(want), 2 * eps * float(x.abs().max().double()))


@settings(max_examples=30)
@given(
    x_dtype=st.sampled_from(FLOAT_DTYPES),
    offset=st.integers(-5, 40),
    seq=st.integers(0, 6),
    layout=st.sampled_from(["interleaved", "concat"]),
    seed=st.integers(0, 2**16),
)
def test_sinusoidal_module_equals_sinusoidal(x_dtype, offset, seq, layout, seed):
    x = seeded.randn(2, seq, 8, generator=torch.Generator().manual_seed(seed)).to(x_dtype)
    module = SinusoidalPositionalEncoding(8, max_len=16, layout=layout)  # offsets run past it
    got = module(x, offset=offset)
    pe = posenc.sinusoidal(np.arange(offset, offset + seq), 8, layout=layout)  # float64
    want = x.double() + torch.as_tensor(pe)
    assert got.dtype == x.dtype
    eps = torch.finfo(x_dtype).eps
    _close(_np(got), want.cpu().numpy(), 2 * eps * max([1.0, *want.abs().flatten().tolist()]))


@settings(max_examples=30)
@given(
    pos_dtype=st.sampled_from(INT_DTYPES + [torch.float16, torch.float32, torch.float64]),
    start=st.integers(0, 100),
    layout=st.sampled_from(["interleaved", "concat"]),
)
def test_sinusoidal_any_position_dtype_equals_int64(pos_dtype, start, layout):
    positions = torch.arange(start, start + 5)
    want = posenc.sinusoidal(positions, 8, layout=layout, dtype=torch.float64)
    got = posenc.sinusoidal(positions.to(pos_dtype), 8, layout=layout, dtype=torch.float64)
    _close(_np(got), _np(want), 0)

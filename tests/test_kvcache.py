"""posenc.kvcache: moving cached RoPE keys, StreamingLLM positions, gpt-oss sink softmax.

Against apply_rope (a moved key is the key rotated at its new position), against recomputing a
re-indexed cache from scratch, and against transformers (tested with 5.23.0): gpt-oss's
``eager_attention_forward`` and the absence of ``SinkCache`` in v5.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import posenc
import seeded
from ci_rule import require

SCALINGS = [
    None,
    {"rope_type": "linear", "factor": 4.0},
    {"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 64},
    {
        "rope_type": "llama3",
        "factor": 8.0,
        "original_max_position_embeddings": 64,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
    },
]


@pytest.mark.parametrize("pairing", ["interleaved", "half"])
@pytest.mark.parametrize("scaling", SCALINGS, ids=lambda s: "none" if s is None else s["rope_type"])
@pytest.mark.parametrize("rotary_dim", [None, 16])
def test_moved_keys_equal_keys_rotated_at_the_new_positions(pairing, scaling, rotary_dim):
    rng = np.random.default_rng(0)
    k = rng.normal(size=(2, 3, 7, 32))
    old = np.stack([np.arange(7) + 500, rng.integers(0, 10**6, 7)])
    new = np.stack([np.arange(7), rng.integers(-(10**5), 10**6, 7)])
    kw = {"pairing": pairing, "scaling": scaling, "rotary_dim": rotary_dim}
    moved = posenc.rerotate_keys(posenc.apply_rope(k, old, **kw), old, new, **kw)
    np.testing.assert_allclose(moved, posenc.apply_rope(k, new, **kw), rtol=0, atol=1e-9)


@pytest.mark.values  # compares numbers: skipped under --device meta
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.float16])
def test_torch_matches_numpy_and_keeps_dtype(dtype):
    rng = np.random.default_rng(1)
    k = rng.normal(size=(3, 9, 64))
    old, new = np.arange(9) * 11, np.arange(9)
    want = posenc.rerotate_keys(k, old, new, pairing="half")
    kt = torch.as_tensor(k).to(dtype)
    got = posenc.rerotate_keys(kt, torch.as_tensor(old), torch.as_tensor(new), pairing="half")
    assert got.dtype == dtype and tuple(got.shape) == k.shape
    exact = posenc.rerotate_keys(
        kt.double(), torch.as_tensor(old), torch.as_tensor(new), pairing="half"
    )
    assert float((got.double() - exact).abs().max()) <= 8 * torch.finfo(dtype).eps + 1e-6
    if dtype == torch.float64:
        np.testing.assert_allclose(got.cpu().numpy(), want, atol=1e-12)


def test_moving_by_zero_changes_nothing_and_moves_compose():
    rng = np.random.default_rng(2)
    k = rng.normal(size=(5, 16))
    p = np.array([3, 1, 4, 1, 5])
    np.testing.assert_allclose(posenc.rerotate_keys(k, p, p), k, atol=1e-15)
    two = posenc.rerotate_keys(posenc.rerotate_keys(k, p, p + 7), p + 7, p - 2)
    np.testing.assert_allclose(two, posenc.rerotate_keys(k, p, p - 2), atol=1e-13)


def test_difference_is_exact_at_huge_positions():
    k = np.random.default_rng(3).normal(size=(4, 32))
    big = np.full(4, 2**50, dtype=np.int64)
    moved = posenc.rerotate_keys(k, big, big + np.arange(4))
    assert np.array_equal(moved, posenc.apply_rope(k, np.arange(4)))
    with pytest.raises(ValueError, match="to_positions"):
        posenc.rerotate_keys(k, np.zeros(4, np.int64), np.full(4, 2**60))


def test_reindexed_streaming_cache_equals_recomputing_from_scratch():
    """Causal decoding of a stream with a StreamingLLM cache (re-indexed), step by step, equals
    attention over the kept tokens processed alone at positions 0..n-1, at every step."""
    rng = np.random.default_rng(4)
    n_tokens, dim, sinks, window = 40, 32, 2, 6
    q_raw, k_raw, v = rng.normal(size=(3, n_tokens, dim))
    cache_k = np.zeros((0, dim))
    cache_pos = np.zeros(0, dtype=np.int64)  # positions the cached keys carry now
    cache_tok = np.zeros(0, dtype=np.int64)  # which tokens they are
    for t in range(n_tokens):
        kept, new_pos = posenc.streaming_positions(t, sinks=sinks, window=window)
        idx = np.searchsorted(cache_tok, kept)
        cache_k = posenc.rerotate_keys(cache_k[idx], cache_pos[idx], new_pos)
        cache_pos, cache_tok = new_pos, kept
        m = kept.size  # the query's position under re-indexing
        key_t = posenc.apply_rope(k_raw[t : t + 1], np.array([m]))
        keys = np.concatenate([cache_k, key_t])
        vals = np.concatenate([v[kept], v[t : t + 1]])
        query = posenc.apply_rope(q_raw[t : t + 1], np.array([m]))
        out = posenc.attention(query, keys, vals)
        toks = np.append(kept, t)
        scratch_k = posenc.apply_rope(k_raw[toks], toks.size)
        scratch = posenc.attention(query, scratch_k, v[toks])
        np.testing.assert_allclose(out, scratch, rtol=0, atol=1e-12)
        cache_k = keys
        cache_pos = np.append(cache_pos, m)
        cache_tok = toks


@pytest.mark.parametrize(
    ("length", "sinks", "window", "kept"),
    [
        (0, 4, 8, []),
        (3, 4, 8, [0, 1, 2]),
        (12, 4, 8, list(range(12))),
        (13, 4, 8, [0, 1, 2, 3] + list(range(5, 13))),
        (10, 0, 3, [7, 8, 9]),
        (10, 3, 0, [0, 1, 2]),
    ],
)
def test_streaming_positions(length, sinks, window, kept):
    got, pos = posenc.streaming_positions(length, sinks=sinks, window=window)
    assert got.tolist() == kept and pos.tolist() == list(range(len(kept)))
    assert got.dtype == np.int64 and pos.dtype == np.int64
    same, orig = posenc.streaming_positions(length, sinks=sinks, window=window, reindex=False)
    assert same.tolist() == kept and orig.tolist() == kept


@pytest.mark.values  # compares numbers: skipped under --device meta
def test_sink_softmax_equals_transformers_gpt_oss_eager_attention():
    require("transformers")
    from transformers.models.gpt_oss import modeling_gpt_oss as gpt_oss

    gen = torch.Generator().manual_seed(5)
    q = seeded.randn(2, 4, 6, 16, generator=gen)
    k = seeded.randn(2, 2, 6, 16, generator=gen)
    v = seeded.randn(2, 2, 6, 16, generator=gen)
    sinks = seeded.randn(4, generator=gen) * 3
    window = 3  # a sliding-window causal mask, as gpt-oss's sliding layers use
    i, j = torch.arange(6)[:, None], torch.arange(6)[None]
    allowed = (j <= i) & (i - j < window)
    mask = torch.zeros(6, 6).masked_fill(~allowed, float("-inf"))[None, None]

    class Module(torch.nn.Module):
        num_key_value_groups = 2

        def __init__(self):
            super().__init__()
            self.sinks = torch.nn.Parameter(sinks.clone())

    module = Module().eval()
    out, weights = gpt_oss.eager_attention_forward(module, q, k, v, mask, scaling=0.25)
    kk = k.repeat_interleave(2, dim=1)
    vv = v.repeat_interleave(2, dim=1)
    scores = q @ kk.transpose(-1, -2) * 0.25 + mask
    mine = posenc.sink_softmax(scores, sinks)
    torch.testing.assert_close(mine, weights, rtol=1e-6, atol=1e-7)
    torch.testing.assert_close((mine @ vv).transpose(1, 2), out, rtol=1e-5, atol=1e-6)
    assert bool((mine.sum(-1) < 1).all())


def test_gpt_oss_defaults_are_what_the_page_says():
    transformers = require("transformers")
    cfg = transformers.GptOssConfig(num_hidden_layers=4)
    assert cfg.sliding_window == 128
    assert cfg.layer_types == ["sliding_attention", "full_attention"] * 2


def test_transformers_5_has_no_sink_cache():
    transformers = require("transformers")
    import transformers.cache_utils as cache_utils

    assert int(transformers.__version__.split(".")[0]) >= 5
    assert not hasattr(cache_utils, "SinkCache") and not hasattr(transformers, "SinkCache")


@pytest.mark.values  # compares numbers: skipped under --device meta
def test_sink_softmax_numpy_torch_and_dtypes():
    rng = np.random.default_rng(6)
    s = rng.normal(size=(2, 3, 4, 5)) * 10
    sk = rng.normal(size=3)
    want = np.exp(s) / (np.exp(sk)[:, None, None] + np.exp(s).sum(-1, keepdims=True))
    np.testing.assert_allclose(posenc.sink_softmax(s, sk), want, rtol=1e-12)
    got = posenc.sink_softmax(torch.as_tensor(s, dtype=torch.bfloat16), torch.as_tensor(sk))
    assert got.dtype == torch.bfloat16
    np.testing.assert_allclose(got.double().cpu().numpy(), want, atol=0.02)
    scalar = posenc.sink_softmax(s, 0.0)
    np.testing.assert_allclose(scalar, np.exp(s) / (1 + np.exp(s).sum(-1, keepdims=True)))
    masked = s.copy()
    masked[..., 0] = -np.inf
    out = posenc.sink_softmax(masked, sk)
    assert np.all(out[..., 0] == 0) and np.isfinite(out).all()


# --- issue 40: right or refused, round 3 --------------------------------------------------------


def _sink_reference(s, sk):
    """The weights in exact arithmetic (mpmath-free: exp of differences in float64 from the row's
    largest logit, the sink included), for rows where no difference overflows float64."""
    s, sk = np.asarray(s, np.float64), np.asarray(sk, np.float64).reshape(-1, 1, 1)
    ref = np.maximum(s.max(-1, keepdims=True), sk)
    with np.errstate(invalid="ignore"):
        e = np.exp(s - ref)
        e = np.where(np.isnan(e), 0.0, e)  # a -inf row: no weight
    den = e.sum(-1, keepdims=True) + np.exp(sk - ref)
    return e / den


@pytest.mark.values
@pytest.mark.parametrize(
    "library,dtype",
    [(lib, dt) for lib in ("numpy", "torch") for dt in ("float32", "float16")]
    + [("torch", "bfloat16")],  # NumPy has no bfloat16
)
def test_sink_softmax_sink_past_the_work_dtype(library, dtype):
    """A finite sink of 1e39 (float64) with float32 scores gave NaN weights: cast to the work
    dtype it became inf, and the softmax took inf - inf. The sink dominates every key: the
    weights are 0. A sink of -1e39 takes no weight: the plain softmax over the keys; a row whose
    keys are all masked then has no weight anywhere (0, not NaN)."""
    rng = np.random.default_rng(40)
    s = (rng.normal(size=(1, 2, 3, 4)) * 5).astype(np.float32)
    s[0, 1, 2, :] = -np.inf  # a fully masked row
    for sink, want in (
        (1e39, np.zeros(s.shape)),
        (-1e39, _sink_reference(s, -1e4)),  # exp(-1e4 - s) underflows: the plain softmax
        (3e38, _sink_reference(s, 3e38)),  # inside float32: 0 too, by the formula
    ):
        sinks = np.array([sink, sink])
        if library == "numpy":
            got = posenc.sink_softmax(s.astype(dtype), sinks)
            got64 = got.astype(np.float64)
            assert got.dtype == np.dtype(dtype)
        else:
            st = torch.as_tensor(s).to(getattr(torch, dtype))
            got = posenc.sink_softmax(st, torch.as_tensor(sinks, dtype=torch.float64))
            assert got.dtype == st.dtype
            got64 = got.double().numpy()
        assert np.isfinite(got64).all(), (sink, got64)
        tol = {"float32": 1e-6, "float16": 2e-3, "bfloat16": 2e-2}[dtype]
        np.testing.assert_allclose(got64, want, atol=tol, rtol=0)
    assert np.all(_sink_reference(s, -1e4)[0, 1, 2] == 0)
    assert np.allclose(_sink_reference(s, -1e4)[0, 0].sum(-1), 1)


@pytest.mark.values
@pytest.mark.parametrize("library", ["numpy", "torch"])
def test_sink_softmax_matches_the_reference_on_random_rows(library):
    """The rewritten softmax (sink handled apart from the keys) against the float64 formula,
    including masked keys, masked rows and sinks far above and below the scores."""
    rng = np.random.default_rng(41)
    s = rng.normal(size=(2, 4, 5, 6)) * 20
    s[rng.random(s.shape) < 0.3] = -np.inf
    sk = np.array([-300.0, 0.0, 40.0, 700.0])
    want = _sink_reference(s, sk)
    for dtype, tol in ((np.float64, 1e-13), (np.float32, 1e-6)):
        x = s.astype(dtype)
        got = posenc.sink_softmax(x if library == "numpy" else torch.as_tensor(x), sk)
        got = got if library == "numpy" else got.numpy()
        np.testing.assert_allclose(got, _sink_reference(x, sk), atol=tol, rtol=tol)
    assert np.isfinite(want).all()


@pytest.mark.values
def test_rerotate_refuses_an_int_past_2_52_against_float_positions():
    """2**60 + 1 (int) against 2.0**60 (float) is a move by -1; it was done as a move by 0 (the
    int rounded to float64). An integer position past +-2**52 is refused by name, whatever the
    other positions are."""
    k = np.random.default_rng(0).normal(size=(1, 1, 8))
    huge, flt = np.array([2**60 + 1]), np.array([2.0**60])
    with pytest.raises(
        ValueError, match=r"from_positions must lie within \+-2\*\*52.*1152921504606846977"
    ):
        posenc.rerotate_keys(k, huge, flt)
    with pytest.raises(ValueError, match=r"to_positions must lie within \+-2\*\*52"):
        posenc.rerotate_keys(k, flt, huge)
    kt = torch.as_tensor(k)
    with pytest.raises(ValueError, match=r"from_positions must lie within \+-2\*\*52"):
        posenc.rerotate_keys(kt, torch.as_tensor(huge), torch.as_tensor(flt))
    with pytest.raises(ValueError, match=r"to_positions must lie within \+-2\*\*52"):
        posenc.rerotate_keys(kt, torch.tensor([0.5]), torch.tensor([-(2**62)]))
    # inside the range a mixed call is exact: 2**52 (int) to 2.0**52 + 4 (float) moves by 4
    moved = posenc.rerotate_keys(k, np.array([2**52]), np.array([2.0**52 + 4]))
    np.testing.assert_allclose(
        moved, posenc.rerotate_keys(k, np.array([0]), np.array([4])), atol=1e-15
    )


def test_streaming_positions_refuses_more_tokens_than_memory_before_allocating():
    """streaming_positions(2**52, sinks=0, window=2**52) asked NumPy for two arrays of 2**52
    int64 (64 PiB) and died with a MemoryError; it is refused by name before allocating."""
    with pytest.raises(
        ValueError, match=r"length=4503599627370496, sinks=0, window=4503599627370496.*PiB"
    ):
        posenc.streaming_positions(2**52, sinks=0, window=2**52)
    kept, pos = posenc.streaming_positions(2**52, sinks=4, window=8)  # 12 tokens: fine
    assert (
        kept.tolist()[:4] == [0, 1, 2, 3]
        and kept[-1] == 2**52 - 1
        and pos.tolist() == list(range(12))
    )


def test_sink_softmax_refuses_scores_past_memory_before_allocating():
    """A broadcast view costs nothing to make; its softmax would: refused by name, not by the
    allocator."""
    huge = np.broadcast_to(np.float32(0), (4, 1, 2**20, 2**20))  # 16 TiB of float32
    with pytest.raises(
        ValueError, match=r"sink_softmax: scores of shape \(4, 1, 1048576, 1048576\).*TiB"
    ):
        posenc.sink_softmax(huge, 0.0)
    with pytest.raises(ValueError, match=r"scores of shape"):
        posenc.sink_softmax(torch.zeros((), device="cpu").expand(4, 1, 2**20, 2**20), 0.0)


def test_sink_softmax_on_meta():
    """Meta scores give a meta result of their shape (sinks on meta, the CPU or NumPy); meta
    sinks with scores that hold values are refused by name (it was 'Cannot copy out of meta
    tensor')."""
    s = torch.zeros(2, 3, 4, 5, device="meta")
    for sk in (torch.zeros(3, device="meta"), torch.zeros(3, device="cpu"), np.zeros(3), 0.5):
        out = posenc.sink_softmax(s, sk)
        assert out.device.type == "meta" and out.shape == s.shape and out.dtype == s.dtype
    with pytest.raises(ValueError, match=r"sinks is on the meta device"):
        posenc.sink_softmax(torch.zeros(2, 3, 4, 5, device="cpu"), torch.zeros(3, device="meta"))

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

"""posenc.apply_xpos / xpos_scale: against rotary-embedding-torch 0.9.1 (use_xpos=True) and a
loop-by-loop oracle of Sun et al. (2022), arXiv:2212.10554."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import posenc
import seeded
from ci_rule import require


def _oracle(q, k, positions, *, base=10000.0, scale_base=512.0, gamma=0.4, center=0.0):
    """The paper, one pair at a time: rotate pair i by n theta_i, scale by zeta_i ** (+-n/B)."""
    d = q.shape[-1]
    qo, ko = np.empty_like(q), np.empty_like(k)
    for t, n in enumerate(positions):
        for i in range(d // 2):
            theta = base ** (-2 * i / d)
            zeta = (2 * i / d + gamma) / (1 + gamma)
            c, s = math.cos(n * theta), math.sin(n * theta)
            for src, dst, sign in ((q, qo, 1), (k, ko, -1)):
                a, b = src[..., t, 2 * i], src[..., t, 2 * i + 1]
                f = zeta ** (sign * (n - center) / scale_base)
                dst[..., t, 2 * i] = (a * c - b * s) * f
                dst[..., t, 2 * i + 1] = (a * s + b * c) * f
    return qo, ko


@pytest.fixture(scope="module")
def qk():
    rng = np.random.default_rng(0)
    return rng.normal(size=(2, 3, 9, 16)), rng.normal(size=(2, 1, 9, 16))


def test_matches_paper_oracle(qk):
    q, k = qk
    pos = np.array([0, 3, 7, 100, 511, 512, 1000, -40, 2.5])
    got = posenc.apply_xpos(q, k, pos, center=0.0)
    want = _oracle(q, k, pos.tolist())
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


def test_scale_formula_and_centre():
    s = posenc.xpos_scale(np.array([-3, 0, 5]), 8, scale_base=4.0, gamma=0.5, center=1.0)
    zeta = (np.arange(0, 8, 2) / 8 + 0.5) / 1.5
    np.testing.assert_allclose(s, zeta ** ((np.array([-3, 0, 5])[:, None] - 1.0) / 4.0))
    t = posenc.xpos_scale(torch.arange(3), 8, dtype=torch.float64)
    assert t.dtype == torch.float64 and t.shape == (3, 4)
    np.testing.assert_allclose(t.cpu().numpy(), posenc.xpos_scale(3, 8), rtol=0, atol=0)


def test_scores_depend_on_distance_only_whatever_the_centre(qk):
    q, k = qk
    q1, k1 = posenc.apply_xpos(q, k, 9)
    q2, k2 = posenc.apply_xpos(q, k, np.arange(9) + 300, center=-50.0)
    np.testing.assert_allclose(
        q1 @ np.swapaxes(k1, -1, -2), q2 @ np.swapaxes(k2, -1, -2), rtol=1e-10, atol=1e-12
    )


def test_numpy_equals_torch(qk):
    q, k = qk
    want = posenc.apply_xpos(q, k, 9, pairing="half")
    got = posenc.apply_xpos(torch.as_tensor(q), torch.as_tensor(k), 9, pairing="half")
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g.cpu().numpy(), w, rtol=1e-13, atol=1e-13)


@pytest.fixture(scope="module")
def library():
    rotary = require("rotary_embedding_torch")
    d = 16
    exact = rotary.RotaryEmbedding(d, use_xpos=True).double()
    # the library forms its frequencies and zeta in float32: give it the float64 values
    exact.freqs.data = torch.as_tensor(posenc.rope_frequencies(d)[0])
    exact.scale.copy_((torch.arange(0, d, 2, dtype=torch.float64) + 0.4 * d) / (1.4 * d))
    return rotary, exact


@pytest.mark.parametrize("seq", [9, 10])
def test_matches_rotary_embedding_torch_float64(library, seq):
    _, emb = library
    g = torch.Generator().manual_seed(seq)
    q = seeded.randn(2, 3, seq, 16, generator=g, dtype=torch.float64)
    k = seeded.randn(2, 3, seq, 16, generator=g, dtype=torch.float64)
    emb.cached_freqs_seq_len = emb.cached_scales_seq_len = 0  # fresh caches per length
    want = emb.rotate_queries_and_keys(q, k)
    got = posenc.apply_xpos(q, k, seq)  # centre seq // 2, as the library
    for g_, w in zip(got, want, strict=True):
        torch.testing.assert_close(g_, w, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(("q_len", "k_len"), [(1, 40), (3, 10)])
def test_cached_keys_path_centres_queries_and_keys_apart(library, q_len, k_len):
    """xpos.md: rotate_queries_with_cached_keys centres the queries at q_len // 2 and the keys
    at k_len // 2, so its scores are not those of the full sequence."""
    _, emb = library
    g = torch.Generator().manual_seed(k_len)
    q = seeded.randn(1, 2, k_len, 16, generator=g, dtype=torch.float64)
    k = seeded.randn(1, 2, k_len, 16, generator=g, dtype=torch.float64)
    emb.cached_freqs_seq_len = emb.cached_scales_seq_len = 0
    cq, ck = emb.rotate_queries_with_cached_keys(q[..., -q_len:, :], k)
    pos = torch.arange(k_len - q_len, k_len)
    want_q = posenc.apply_xpos(q[..., -q_len:, :], q[..., -q_len:, :], pos, center=q_len // 2)[0]
    want_k = posenc.apply_xpos(k, k, k_len, center=k_len // 2)[1]
    torch.testing.assert_close(cq, want_q, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(ck, want_k, rtol=1e-12, atol=1e-12)
    fq, fk = posenc.apply_xpos(q, k, k_len)
    full = fq[..., -q_len:, :] @ fk.transpose(-1, -2)
    assert (cq @ ck.transpose(-1, -2) - full).abs().max() > 1e-3  # not the model's scores


def test_matches_rotary_embedding_torch_float32(library):
    rotary, _ = library
    emb = rotary.RotaryEmbedding(16, use_xpos=True, xpos_scale_base=64)
    g = torch.Generator().manual_seed(1)
    q, k = seeded.randn(2, 2, 40, 16, generator=g), seeded.randn(2, 2, 40, 16, generator=g)
    want = emb.rotate_queries_and_keys(q, k)
    got = posenc.apply_xpos(q, k, 40, scale_base=64)
    for g_, w in zip(got, want, strict=True):  # the library's float32 angles: 4e-6 at 40
        torch.testing.assert_close(g_, w, rtol=1e-5, atol=1e-5)


def test_overflow_is_refused_not_inf():
    q = np.ones((1, 2, 4), dtype=np.float32)
    with pytest.raises(ValueError, match="center"):
        posenc.apply_xpos(q, q, np.array([0, 100_000]), center=0.0)
    out = posenc.apply_xpos(q, q, np.array([99_999, 100_000]), center=99_999)[1]  # centred
    assert np.isfinite(out).all()


@pytest.mark.parametrize("library", ["numpy", "torch"])
def test_float16_scales_outside_float16_are_refused_not_inf(library):
    """Issue 21, item 6: float16 q and k at positions ~5000 from the centre: the key's scale
    (3.5 ** (5000 / 512) = 2.0e5) passes float16's maximum; main returned inf. The query's scale
    leaves float16's normal range first (below 6.1e-5 near 3966), refused as well; inside it the
    float16 result equals the float64 one rounded."""
    g = torch.Generator().manual_seed(3)
    q, k = seeded.randn(2, 3, 16, generator=g).half(), seeded.randn(2, 3, 16, generator=g).half()
    conv = (lambda t: t.cpu().numpy()) if library == "numpy" else (lambda t: t)
    for far in (5000, 4000):
        pos = (
            np.array([0, far // 2, far]) if library == "numpy" else torch.tensor([0, far // 2, far])
        )
        with pytest.raises(ValueError, match="positions lie too far from center.*float16"):
            posenc.apply_xpos(conv(q), conv(k), pos, center=0.0)
    pos = np.array([0, 1950, 3900])
    got = posenc.apply_xpos(
        conv(q), conv(k), pos if library == "numpy" else torch.tensor(pos), center=0.0
    )
    want = posenc.apply_xpos(q.double().cpu().numpy(), k.double().cpu().numpy(), pos, center=0.0)
    for g_, w in zip(got, want, strict=True):
        g64 = np.asarray(g_.cpu().numpy() if library == "torch" else g_, dtype=np.float64)
        assert g_.dtype in (np.float16, torch.float16) and np.isfinite(g64).all()
        np.testing.assert_allclose(g64, w, rtol=2**-10, atol=2**-24)


def test_a_scaled_k_past_its_dtype_is_refused_by_name():
    """A finite float16 k near float16's maximum times a scale above 1 overflows: refused."""
    q = np.ones((1, 2, 4), dtype=np.float16)
    k = np.full((1, 2, 4), 60000.0, dtype=np.float16)
    with pytest.raises(ValueError, match=r"^k times its xPos scale overflows float16"):
        posenc.apply_xpos(q, k, np.array([0, 512]), center=0.0)

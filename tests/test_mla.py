"""MLA's decoupled RoPE (posenc.mla) against transformers 5.23's deepseek_v3 and deepseek_v2.

Tolerances: where HF's own apply functions are fed float64 cos/sin, the results agree to 1e-12;
the whole ``DeepseekV3Attention`` forward to 1e-6 (its eager softmax runs in float32). HF's
rotary embeddings form ``inv_freq`` and the angles in float32 (``position_ids.float() *
inv_freq``), and deepseek_v2's ``apply_rotary_emb`` computes in float32 whatever the input, so
those are compared at ``2e-6 + 2e-7 * max position`` times ``max|x|`` (the bound of
tests/test_rope_compat.py).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import posenc
import seeded
from ci_rule import require

pytestmark = pytest.mark.values

NOPE, ROPE, V, RANK, HEADS, HIDDEN, SEQ = 8, 8, 6, 12, 3, 24, 7
YARN = {
    "rope_type": "yarn",
    "rope_theta": 10000.0,
    "factor": 40.0,
    "mscale": 0.707,
    "mscale_all_dim": 1.0,
    "original_max_position_embeddings": 16,
    "beta_fast": 32,
    "beta_slow": 1,
}
POS = torch.tensor([[0, 1, 2, 3, 4, 5, 6], [9, 10, 11, 12, 13, 14, 15]])


def _config(module: str, interleave: bool = True):
    transformers = require("transformers")
    cls = getattr(transformers, "DeepseekV3Config" if module == "v3" else "DeepseekV2Config")
    kw = {"rope_interleave": interleave} if module == "v3" else {}
    config = cls(
        vocab_size=32,
        hidden_size=HIDDEN,
        intermediate_size=16,
        moe_intermediate_size=8,
        num_hidden_layers=1,
        num_attention_heads=HEADS,
        num_key_value_heads=HEADS,
        q_lora_rank=None,
        kv_lora_rank=RANK,
        qk_nope_head_dim=NOPE,
        qk_rope_head_dim=ROPE,
        v_head_dim=V,
        max_position_embeddings=640,
        rope_parameters=dict(YARN),
        attention_bias=False,
        **kw,
    )
    config._attn_implementation = "eager"
    return config


@pytest.fixture(scope="module")
def v3():
    mod = require("transformers.models.deepseek_v3.modeling_deepseek_v3")
    config = _config("v3")
    torch.manual_seed(0)
    attn = mod.DeepseekV3Attention(config, layer_idx=0).double().eval()
    return mod, config, mod.DeepseekV3RotaryEmbedding(config), attn


@pytest.fixture(scope="module")
def qk():
    g = torch.Generator().manual_seed(1)
    q = seeded.randn(2, HEADS, SEQ, NOPE + ROPE, generator=g, dtype=torch.float64)
    k_pe = seeded.randn(2, 1, SEQ, ROPE, generator=g, dtype=torch.float64)
    return q, k_pe


def _exact_cos_sin(pos=POS):
    """float64 cos/sin in HF's layout ``cat(freqs, freqs)``, times the attention factor."""
    inv, factor = posenc.rope_frequencies(ROPE, scaling=YARN)
    angle = pos.double()[..., None] * torch.as_tensor(inv)
    emb = torch.cat((angle, angle), dim=-1)
    return emb.cos() * factor, emb.sin() * factor


def test_rotary_embedding_frequencies_and_attention_factor(v3):
    _, _, rotary, _ = v3
    inv, factor = posenc.rope_frequencies(ROPE, scaling=YARN)
    np.testing.assert_allclose(rotary.inv_freq.double().cpu().numpy(), inv, rtol=1e-6)
    # g(0.707) / g(1.0) with g(m) = 0.1 m ln(40) + 1
    want = (0.1 * 0.707 * math.log(40) + 1) / (0.1 * math.log(40) + 1)
    assert rotary.attention_scaling == pytest.approx(factor, rel=1e-15)
    assert factor == pytest.approx(want, rel=1e-15) and factor < 0.95


def test_softmax_scale_is_deepseek_attention_scaling(v3):
    _, config, _, attn = v3
    got = posenc.mla_softmax_scale(NOPE, ROPE, scaling=config.rope_parameters)
    assert got == pytest.approx(attn.scaling, rel=1e-15)
    g = 0.1 * 1.0 * math.log(40) + 1
    assert got == pytest.approx((NOPE + ROPE) ** -0.5 * g * g, rel=1e-15)
    assert posenc.mla_softmax_scale(NOPE, ROPE) == (NOPE + ROPE) ** -0.5
    # mscale_all_dim absent or 0: no change (HF's `if mscale_all_dim:`)
    no_all = {k: v for k, v in YARN.items() if k != "mscale_all_dim"}
    assert posenc.mla_softmax_scale(NOPE, ROPE, scaling=no_all) == (NOPE + ROPE) ** -0.5
    assert (
        posenc.mla_softmax_scale(NOPE, ROPE, scaling={**no_all, "mscale_all_dim": 0})
        == (NOPE + ROPE) ** -0.5
    )


@pytest.mark.parametrize(
    "name,pairing",
    [("apply_rotary_pos_emb_interleave", "deinterleave"), ("apply_rotary_pos_emb", "half")],
)
def test_apply_functions_with_exact_cos_sin(v3, qk, name, pairing):
    mod = v3[0]
    q, k_pe = qk
    cos, sin = _exact_cos_sin()
    hq, hk = getattr(mod, name)(q[..., NOPE:], k_pe, cos, sin)
    gq, gk = posenc.apply_mla_rope(q, k_pe, POS, pairing=pairing, scaling=YARN)
    torch.testing.assert_close(gq[..., NOPE:], hq, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(gk, hk, rtol=1e-12, atol=1e-12)
    assert torch.equal(gq[..., :NOPE], q[..., :NOPE])


def test_rotary_embedding_plus_apply_end_to_end(v3, qk):
    mod, _, rotary, _ = v3
    q, k_pe = qk
    cos, sin = rotary(q, POS)
    hq, hk = mod.apply_rotary_pos_emb_interleave(q[..., NOPE:], k_pe, cos, sin)
    gq, gk = posenc.apply_mla_rope(q, k_pe, POS, pairing="deinterleave", scaling=YARN)
    tol = (2e-6 + 2e-7 * 15) * 4 * float(q.abs().max())
    assert float((gq[..., NOPE:] - hq).abs().max()) <= tol
    assert float((gk - hk).abs().max()) <= tol


def test_deinterleave_is_the_interleaved_result_permuted(qk):
    q, k_pe = qk
    perm = torch.as_tensor(posenc.rope_permutation(ROPE))
    iq, ik = posenc.apply_mla_rope(q, k_pe, POS, scaling=YARN)
    dq, dk = posenc.apply_mla_rope(q, k_pe, POS, pairing="deinterleave", scaling=YARN)
    assert torch.equal(dq[..., NOPE:], iq[..., NOPE:][..., perm])
    assert torch.equal(dk, ik[..., perm])
    # so every score is the same
    s_i = iq[..., NOPE:] @ ik.transpose(-1, -2)
    s_d = dq[..., NOPE:] @ dk.transpose(-1, -2)
    torch.testing.assert_close(s_d, s_i, rtol=1e-12, atol=1e-12)


def test_attention_forward_equals_the_absorbed_form(v3):
    """HF's DeepseekV3Attention (float64, exact cos/sin) against MLA with W_UK absorbed into the
    query and attention run on the compressed cache. HF's eager softmax runs in float32
    (``softmax(..., dtype=torch.float32)``), so weights and output agree to 1e-6, not 1e-12."""
    _, config, _, attn = v3
    g = torch.Generator().manual_seed(2)
    hidden = seeded.randn(2, SEQ, HIDDEN, generator=g, dtype=torch.float64)
    cos, sin = _exact_cos_sin()
    with torch.no_grad():
        out, weights = attn(hidden, (cos, sin), attention_mask=None)
        q = attn.q_proj(hidden).view(2, SEQ, HEADS, NOPE + ROPE).transpose(1, 2)
        ckv = attn.kv_a_proj_with_mqa(hidden)
        c, k_pe = ckv[..., :RANK], ckv[..., RANK:].reshape(2, 1, SEQ, ROPE)
        c = attn.kv_a_layernorm(c)  # (batch, seq, rank): the cache
        q, k_pe = posenc.apply_mla_rope(q, k_pe, POS, pairing="deinterleave", scaling=YARN)
        w_b = attn.kv_b_proj.weight.view(HEADS, NOPE + V, RANK)
        w_uk, w_uv = w_b[:, :NOPE], w_b[:, NOPE:]
        q_c = torch.einsum("bhsd,hdr->bhsr", q[..., :NOPE], w_uk)  # absorbed query
        scores = q_c @ c[:, None].transpose(-1, -2) + q[..., NOPE:] @ k_pe.transpose(-1, -2)
        scale = posenc.mla_softmax_scale(NOPE, ROPE, scaling=YARN)
        p = torch.softmax(scores * scale, dim=-1)
        o_c = p @ c[:, None]  # (batch, heads, seq, rank)
        o = torch.einsum("bhsr,hvr->bshv", o_c, w_uv).reshape(2, SEQ, HEADS * V)
        o = attn.o_proj(o)
    torch.testing.assert_close(p, weights, rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(o, out, rtol=1e-6, atol=1e-6)


def test_deepseek_v2_rotary_and_apply():
    mod = require("transformers.models.deepseek_v2.modeling_deepseek_v2")
    config = _config("v2")
    rotary = mod.DeepseekV2RotaryEmbedding(config)
    g = torch.Generator().manual_seed(3)
    q = seeded.randn(2, HEADS, SEQ, NOPE + ROPE, generator=g, dtype=torch.float64)
    k_pe = seeded.randn(2, 1, SEQ, ROPE, generator=g, dtype=torch.float64)
    hq, hk = mod.apply_rotary_emb(q[..., NOPE:], k_pe, rotary(q, POS))
    gq, gk = posenc.apply_mla_rope(q, k_pe, POS, scaling=YARN)  # "interleaved"
    tol = (2e-6 + 2e-7 * 15) * 4 * float(q.abs().max())
    assert float((gq[..., NOPE:] - hq).abs().max()) <= tol
    assert float((gk - hk).abs().max()) <= tol
    attn = mod.DeepseekV2Attention(config, layer_idx=0)
    assert posenc.mla_softmax_scale(NOPE, ROPE, scaling=YARN) == pytest.approx(
        attn.scaling, rel=1e-15
    )


def _oracle(x, positions, base=10000.0):
    """Loop by loop: pair (2i, 2i+1) of row t rotated by positions[t] * base**(-2i/r)."""
    x = np.array(x, dtype=np.float64)
    r = x.shape[-1]
    out = x.copy()
    for idx in np.ndindex(*x.shape[:-1]):
        p = float(positions[idx[-1]])
        for i in range(r // 2):
            a, b = x[idx + (2 * i,)], x[idx + (2 * i + 1,)]
            t = p * base ** (-2 * i / r)
            out[idx + (2 * i,)] = a * math.cos(t) - b * math.sin(t)
            out[idx + (2 * i + 1,)] = a * math.sin(t) + b * math.cos(t)
    return out


def test_numpy_against_loop_oracle_and_torch():
    rng = np.random.default_rng(4)
    q = rng.normal(size=(2, 3, 5, 10))
    k_pe = rng.normal(size=(2, 1, 5, 4))
    pos = np.array([3, 4, 5, 6, 100])
    gq, gk = posenc.apply_mla_rope(q, k_pe, pos, base=500.0)
    np.testing.assert_allclose(gq[..., 6:], _oracle(q[..., 6:], pos, 500.0), rtol=0, atol=1e-12)
    np.testing.assert_allclose(gk, _oracle(k_pe, pos, 500.0), rtol=0, atol=1e-12)
    assert np.array_equal(gq[..., :6], q[..., :6])
    tq, tk = posenc.apply_mla_rope(
        torch.as_tensor(q), torch.as_tensor(k_pe), torch.as_tensor(pos), base=500.0
    )
    np.testing.assert_allclose(tq.cpu().numpy(), gq, rtol=0, atol=1e-12)
    np.testing.assert_allclose(tk.cpu().numpy(), gk, rtol=0, atol=1e-12)
    # pure RoPE head (no nope part) and float32 kept
    q32 = q[..., 6:].astype(np.float32)
    fq, fk = posenc.apply_mla_rope(q32, k_pe.astype(np.float32), pos)
    assert fq.dtype == np.float32 and fk.dtype == np.float32 and fq.shape == q32.shape


def test_relative_scores_and_shared_key():
    """The rope part of the score depends on m - n only; one k_pe serves every head."""
    rng = np.random.default_rng(5)
    q = rng.normal(size=(1, 2, 1, 12))
    k_pe = rng.normal(size=(1, 1, 1, 4))

    def score(m, n):
        qr, _ = posenc.apply_mla_rope(q, k_pe, np.array([m]))
        _, kr = posenc.apply_mla_rope(q, k_pe, np.array([n]))
        return (qr[..., 8:] @ np.swapaxes(kr, -1, -2))[..., 0, 0]  # (1, heads)

    np.testing.assert_allclose(score(7, 3), score(104, 100), rtol=0, atol=1e-12)
    assert not np.allclose(score(7, 3), score(3, 7))


@pytest.mark.parametrize(
    "kwargs,exc,word",
    [
        ({"k_pe": np.zeros((2, 1, 7, 5))}, ValueError, "k_pe"),
        ({"k_pe": np.zeros((2, 1, 7, 18))}, ValueError, "k_pe"),
        ({"k_pe": np.zeros((2, 1, 6, 8))}, ValueError, "k_pe"),
        ({"k_pe": torch.zeros(2, 1, 7, 8)}, TypeError, "k_pe"),
        ({"q": np.zeros((2, 3, 7, 16), dtype=np.int64)}, TypeError, "q"),
        ({"pairing": "complex"}, ValueError, "pairing"),
    ],
)
def test_refusals_name_the_argument(kwargs, exc, word):
    args = {"q": np.zeros((2, 3, 7, 16)), "k_pe": np.zeros((2, 1, 7, 8)), "positions": 7}
    args.update(kwargs)
    with pytest.raises(exc, match=word):
        posenc.apply_mla_rope(**args)

"""The claims of docs/*/precision.md about transformers, checked against its code (5.23.0).

The page reproduces each code path in plain torch; these tests hold the reproductions equal, bit
for bit, to what transformers' ``LlamaRotaryEmbedding`` and ``apply_rotary_pos_emb`` compute, and
measure the errors the page quotes.
"""

from __future__ import annotations

import pytest
import torch

import posenc
import seeded
from ci_rule import require

pytestmark = pytest.mark.values

D = 128


@pytest.fixture(scope="module")
def llama():
    transformers = require("transformers")
    from transformers.models.llama import modeling_llama

    config = transformers.LlamaConfig(
        hidden_size=2 * D,
        num_attention_heads=2,
        num_key_value_heads=2,
        head_dim=D,
        intermediate_size=32,
        num_hidden_layers=1,
        vocab_size=16,
    )
    return transformers, modeling_llama, config


def _inv32():
    return 1.0 / (10000 ** (torch.arange(0, D, 2, dtype=torch.float) / D))


def _cos_error(cos, p):
    w = torch.as_tensor(posenc.rope_frequencies(D)[0])
    exact = torch.cos(p.double()[:, None] * w)
    return float((cos[..., : D // 2].double() - exact).abs().max())


def test_inv_freq_is_the_pages_float32_vector(llama):
    _, modeling, config = llama
    rot = modeling.LlamaRotaryEmbedding(config)
    assert rot.inv_freq.dtype == torch.float32
    assert torch.equal(rot.inv_freq, _inv32())


def test_model_to_bfloat16_rounds_inv_freq_and_cos_at_1000_is_off_by_0_9(llama):
    transformers, _, config = llama
    model = transformers.LlamaForCausalLM(config).to(torch.bfloat16)
    rot = model.model.rotary_emb
    assert rot.inv_freq.dtype == torch.bfloat16
    p = torch.tensor([[1000]])
    cos, _ = rot(torch.zeros(1, 1, D), p)  # x in float32: cos comes back in float32
    page = torch.cos(p[0].float()[:, None] * _inv32().to(torch.bfloat16).float())
    assert torch.equal(cos[0, :, : D // 2], page)  # the page's reproduction, bit for bit
    assert round(_cos_error(cos[0], p[0]), 2) == 0.9


def test_loading_in_bfloat16_keeps_inv_freq_in_float32(llama):
    transformers, _, config = llama
    model = transformers.LlamaForCausalLM._from_config(config, dtype=torch.bfloat16)
    assert model.model.embed_tokens.weight.dtype == torch.bfloat16
    assert model.model.rotary_emb.inv_freq.dtype == torch.float32


def test_angles_are_an_elementwise_product_that_autocast_leaves_alone(llama):
    _, modeling, config = llama
    rot = modeling.LlamaRotaryEmbedding(config)
    p = torch.arange(1000, 1256)[None]
    x = torch.zeros(1, 1, D)
    plain, _ = rot(x, p)
    with torch.autocast(p.device.type, dtype=torch.bfloat16):
        cast, _ = rot(x, p)
    assert cast.dtype == torch.float32 and torch.equal(cast, plain)
    freqs = p[0].float()[:, None] * _inv32()
    assert torch.equal(plain[0], torch.cat((freqs, freqs), -1).cos())
    # the matmul form PR #29285 wrapped, without that wrapper, under autocast: 2.0 off
    with torch.autocast(p.device.type, dtype=torch.bfloat16):
        old = (_inv32()[None, :, None] @ p[:, None, :].float()).transpose(1, 2)
    assert old.dtype == torch.bfloat16
    assert round(_cos_error(old[0].float().cos(), p[0]), 1) == 2.0


def test_bfloat16_rotation_is_the_pages_reproduction_and_39_percent_are_off(llama):
    _, modeling, config = llama
    rot = modeling.LlamaRotaryEmbedding(config)
    g = torch.Generator().manual_seed(0)
    x = seeded.randn(1, 2, 512, D, generator=g).to(torch.bfloat16)
    p = torch.arange(3584, 4096)
    cos, sin = rot(x, p[None])
    assert cos.dtype == torch.bfloat16
    hf, _ = modeling.apply_rotary_pos_emb(x, x, cos, sin)
    freqs = p.float()[:, None] * _inv32()
    emb = torch.cat((freqs, freqs), dim=-1)
    c, s = emb.cos().to(torch.bfloat16), emb.sin().to(torch.bfloat16)
    half = torch.cat((-x[..., D // 2 :], x[..., : D // 2]), dim=-1)
    assert torch.equal(hf, x * c + half * s)
    exact = posenc.apply_rope(x.double(), p, pairing="half").to(torch.bfloat16)
    assert round(float((hf != exact).double().mean()), 2) == 0.39
    assert float((posenc.apply_rope(x, p, pairing="half") != exact).double().mean()) < 1e-4


def test_posenc_rotary_module_stays_exact_under_a_cast():
    from posenc.torch import RotaryEmbedding

    rope = RotaryEmbedding(D, max_len=2048).to(torch.bfloat16)
    assert rope.cos_cached.dtype == torch.float32
    fresh = RotaryEmbedding(D, max_len=2048)
    assert torch.equal(rope.cos_cached, fresh.cos_cached)

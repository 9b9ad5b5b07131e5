"""DeepSeek-V3.2's lightning indexer (issue 20, goal 4): ``Scheme.indexer`` and
``Scheme.rotate_indexer`` against transformers' own ``DeepseekV32Indexer`` (5.24,
models/deepseek_v32/modeling_deepseek_v32.py), whose rotated q and k are captured where its
``apply_rotary_pos_emb`` returns them, with the cos and sin of the model's own rotary embedding
(default RoPE and YaRN), at small and large positions, in float64 and float32. The attention of
the same model is held to ``Scheme.rotate`` too: it rotates the LAST features, interleaved."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

import posenc.hf as hf
import seeded
from ci_rule import require

torch = require("torch")
require("transformers")
from transformers.models.deepseek_v32 import modeling_deepseek_v32 as mod  # noqa: E402
from transformers.models.deepseek_v32.configuration_deepseek_v32 import (  # noqa: E402
    DeepseekV32Config,
)

from hf_corpus import float64_torch  # noqa: E402

SMALL = {
    "model_type": "deepseek_v32",
    "hidden_size": 64,
    "num_attention_heads": 4,
    "num_key_value_heads": 4,
    "num_hidden_layers": 2,
    "q_lora_rank": 32,
    "kv_lora_rank": 16,
    "qk_nope_head_dim": 16,
    "qk_rope_head_dim": 8,
    "v_head_dim": 16,
    "index_head_dim": 24,
    "index_n_heads": 3,
    "index_topk": 4,
    "intermediate_size": 32,
    "moe_intermediate_size": 16,
    "n_routed_experts": 4,
    "num_experts_per_tok": 2,
    "max_position_embeddings": 4096,
}
YARN = {
    **SMALL,
    "rope_scaling": {
        "type": "yarn",
        "factor": 40.0,
        "beta_fast": 32,
        "beta_slow": 1,
        "mscale": 1.0,
        "mscale_all_dim": 1.0,
        "original_max_position_embeddings": 4096,
    },
    "max_position_embeddings": 163840,
}
CONFIGS = {"default": SMALL, "yarn": YARN}


def _config(cfg):
    config = DeepseekV32Config(**{k: v for k, v in cfg.items() if k != "model_type"})
    config._attn_implementation = "eager"
    return config


def _indexer_model(cfg, dtype, ids, monkeypatch):
    """(q, k) entering the indexer's rotation whole, and (q, k) leaving it, as the model has them
    (heads moved to axis 1)."""
    config = _config(cfg)
    indexer = mod.DeepseekV32Indexer(config, 0).to(dtype)
    seen = {}
    original = mod.apply_rotary_pos_emb

    def capture(q, k, cos, sin, unsqueeze_dim=1):
        out = original(q, k, cos, sin, unsqueeze_dim=unsqueeze_dim)
        seen["in"], seen["out"] = (q, k), out
        return out

    monkeypatch.setattr(mod, "apply_rotary_pos_emb", capture)
    g = torch.Generator().manual_seed(0)
    batch, seq = ids.shape
    hidden = seeded.randn(batch, seq, cfg["hidden_size"], generator=g, dtype=dtype)
    q_resid = seeded.randn(batch, seq, cfg["q_lora_rank"], generator=g, dtype=dtype)
    mask = torch.zeros(batch, seq, seq, dtype=dtype)
    with torch.no_grad(), _exact(dtype):
        cos, sin = mod.DeepseekV32RotaryEmbedding(config)(hidden, ids)
        indexer(hidden, q_resid, (cos, sin), mask, ids)
        width = cfg["index_head_dim"]
        q = indexer.wq_b(q_resid).view(batch, seq, -1, width)
        k = indexer.k_norm(indexer.wk(hidden)).unsqueeze(2)
    return (q, k), seen


def _exact(dtype):
    """transformers' float32 casts made float64 for a float64 run (as tests/hf_corpus.py runs
    the corpus), so that 1e-10 measures the formula, not float32 angles."""
    return float64_torch() if dtype == torch.float64 else contextlib.nullcontext()


def _bound(dtype, top):
    """The corpus's bounds, relative to max |x|: 1e-10 + p * 2**-50 in float64 (the model's own
    rounding of p * theta), 1e-6 + p * 2**-22 in float32."""
    return 1e-10 + top * 2.0**-50 if dtype == torch.float64 else 1e-6 + top * 2.0**-22


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("start", [0, 100_000])
@pytest.mark.parametrize("name", list(CONFIGS))
def test_rotate_indexer_is_deepseek_v32_indexer(name, start, dtype, monkeypatch):
    cfg = CONFIGS[name]
    scheme = hf.describe(cfg)
    spec = scheme.indexer
    assert (spec.pairing, spec.slot, spec.head_dim, spec.rotary_dim) == ("half", "head", 24, 8)
    ids = torch.arange(start, start + 6)[None].repeat(2, 1)
    (q, k), seen = _indexer_model(cfg, dtype, ids, monkeypatch)
    rope = cfg["qk_rope_head_dim"]
    # the model's rotation takes the FIRST qk_rope_head_dim features
    torch.testing.assert_close(seen["in"][0], q[..., :rope], rtol=0, atol=0)
    bound = _bound(dtype, start + 5)
    for whole, rotated in ((q, seen["out"][0]), (k, seen["out"][1])):
        got = scheme.rotate_indexer(whole.transpose(1, 2), ids).transpose(1, 2)
        err = float((got[..., :rope].double() - rotated.double()).abs().max())
        assert err <= bound * float(whole.abs().max()), (err, bound)
        torch.testing.assert_close(got[..., rope:], whole[..., rope:], rtol=0, atol=0)
        assert not torch.allclose(got[..., :rope], whole[..., :rope])


@pytest.mark.parametrize("name", list(CONFIGS))
def test_attention_rotates_the_last_features_interleaved(name):
    """DeepseekV32Attention calls apply_rotary_pos_emb_interleave whatever the config says: the
    registry row has no rope_interleave switch for it (before, the walk compared it with the
    indexer's rotate_half function and 'verified' the wrong pairing)."""
    cfg = CONFIGS[name]
    scheme = hf.describe(cfg)
    layer = scheme.layer(0)
    assert (layer.pairing, layer.slot, layer.rotary_dim, layer.head_dim) == (
        "deinterleave",
        "tail",
        8,
        24,
    )
    config = _config(cfg)
    g = torch.Generator().manual_seed(1)
    q = seeded.randn(2, 4, 6, 24, generator=g, dtype=torch.float64)
    ids = torch.arange(100_000, 100_006)[None].repeat(2, 1)
    with float64_torch():
        cos, sin = mod.DeepseekV32RotaryEmbedding(config)(q, ids)
        q_rot, _ = mod.apply_rotary_pos_emb_interleave(q[..., 16:], q[..., 16:], cos, sin)
    want = torch.cat((q[..., :16], q_rot), -1)
    err = float((scheme.rotate(q, ids) - want).abs().max())
    assert err <= _bound(torch.float64, 100_005) * float(q.abs().max()), err
    # the same config object gives the same scheme as its dict
    assert hf.describe(config).indexer.to_dict() == scheme.indexer.to_dict()


def test_indexer_refusals_and_other_models():
    assert hf.describe({**SMALL, "model_type": "deepseek_v3"}).indexer is None
    v3 = hf.describe({**SMALL, "model_type": "deepseek_v3"})
    with pytest.raises(ValueError, match="no DSA indexer"):
        v3.rotate_indexer(np.ones((1, 1, 2, 24)), [0, 1])
    with pytest.raises(ValueError, match=r"config\['index_head_dim'\] must be at least"):
        hf.describe({**SMALL, "index_head_dim": 4})
    with pytest.raises(TypeError, match=r"config\['index_head_dim'\] must be an int"):
        hf.describe({**SMALL, "index_head_dim": 24.0})
    with pytest.raises(ValueError, match="head dim 24"):
        hf.describe(SMALL).rotate_indexer(np.ones((1, 1, 2, 16)), [0, 1])

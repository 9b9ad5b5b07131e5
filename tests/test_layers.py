"""posenc.layers: NoPE/iRoPE (Llama 4) and per-layer RoPE bases against transformers 5.23.

Framework pieces (skipped without transformers, except under CI=true):
- ``Llama4TextConfig.no_rope_layers`` / ``Llama4TextAttention.use_rope``: which layers rotate;
- ``Llama4TextAttention.forward``: the NoPE query scale, read off the queries it hands to the
  attention function (float32; tolerance 2 float32 units);
- ``Gemma3RotaryEmbedding``, ``ModernBertRotaryEmbedding``, ``Cohere2RotaryEmbedding``:
  inv_freq and cos/sin per layer type against ``posenc.rope_frequencies`` of the parameters
  ``layer_rope_parameters`` returns (float32 framework math: rtol 1e-6, cos/sin atol 1e-5 at
  positions < 64).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import posenc
import seeded
from ci_rule import require

pytestmark = pytest.mark.values


def _hf(name: str):
    require("transformers")
    import importlib

    return importlib.import_module(f"transformers.models.{name}")


# --- Llama 4 -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def llama4():
    mod = _hf("llama4.modeling_llama4")
    cfg = mod.Llama4TextConfig(
        vocab_size=32,
        hidden_size=32,
        intermediate_size=32,
        intermediate_size_mlp=32,
        num_hidden_layers=8,
        num_attention_heads=2,
        num_key_value_heads=2,
        head_dim=16,
        floor_scale=4,
        attn_scale=0.25,
    )
    cfg._attn_implementation = "eager"
    return mod, cfg


@pytest.mark.parametrize(("n", "interval"), [(8, 4), (7, 2), (5, 1), (3, 5)])
def test_nope_layers_match_llama4_config(n, interval):
    mod = _hf("llama4.configuration_llama4")
    cfg = mod.Llama4TextConfig(num_hidden_layers=n, no_rope_layer_interval=interval)
    want = tuple(i for i, flag in enumerate(cfg.no_rope_layers) if not flag)
    assert posenc.llama4_nope_layers(n, no_rope_layer_interval=interval) == want
    explicit = [1, 0, 0, 1, 1, 0, 1, 1][:n]
    cfg2 = mod.Llama4TextConfig(num_hidden_layers=n, no_rope_layers=explicit)
    want2 = tuple(i for i, flag in enumerate(cfg2.no_rope_layers) if not flag)
    assert posenc.llama4_nope_layers(n, no_rope_layers=explicit) == want2


def test_use_rope_and_layer_rope_parameters_match_llama4(llama4):
    mod, cfg = llama4
    nope = posenc.llama4_nope_layers(8)
    assert nope == (3, 7)
    for i in range(8):
        attn = mod.Llama4TextAttention(cfg, i)
        lr = posenc.layer_rope_parameters(cfg, i)
        assert bool(attn.use_rope) == lr.rope == (i not in nope)
        assert lr.kind == ("full" if i in nope else "chunked")
        assert lr.window == (None if i in nope else cfg.attention_chunk_size)
        if lr.rope:
            assert lr.base == cfg.rope_parameters["rope_theta"] and lr.scaling is None
            assert lr.pairing == "interleaved"


def test_attn_scale_matches_llama4_forward(llama4, monkeypatch):
    mod, cfg = llama4
    attn = mod.Llama4TextAttention(cfg, 3).eval()  # a NoPE layer
    assert not attn.use_rope
    seen = {}

    def capture(module, query, key, value, attention_mask, **kwargs):
        seen["q"] = query
        return torch.zeros(query.shape[0], query.shape[2], query.shape[1], query.shape[3]), None

    monkeypatch.setattr(mod, "eager_attention_forward", capture)
    seq = 40
    x = seeded.randn(1, seq, 32, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        attn(x, position_embeddings=None, attention_mask=None)
        plain = attn.q_proj(x).view(1, seq, -1, 16).transpose(1, 2)
    got_ratio = (seen["q"] / plain).double()  # (1, heads, seq, head_dim)
    want = posenc.llama4_attn_scale(torch.arange(seq), 4, 0.25, dtype=torch.float64)
    assert want[2] == 1.0 and want[3] > 1.0  # the first step is at p + 1 = floor_scale
    torch.testing.assert_close(
        got_ratio, want.view(1, 1, seq, 1).expand_as(got_ratio), rtol=2.4e-7, atol=0
    )


def test_attn_scale_numpy_equals_torch_and_formula():
    p = np.array([0, 1, 8190, 8191, 16382, 16383, 10**6, 2**40])
    got = posenc.llama4_attn_scale(p)
    want = [1 + 0.1 * np.log1p(np.floor((q + 1) / 8192)) for q in p.tolist()]
    np.testing.assert_allclose(got, want, rtol=1e-15)
    t = posenc.llama4_attn_scale(torch.as_tensor(p), dtype=torch.float64)
    np.testing.assert_array_equal(t.cpu().numpy(), got)
    assert posenc.llama4_attn_scale(torch.arange(3)).dtype == torch.get_default_dtype()


def test_attn_scale_compiles():
    fn = torch.compile(posenc.llama4_attn_scale, fullgraph=True, backend="eager")
    p = torch.arange(20000)
    torch.testing.assert_close(fn(p), posenc.llama4_attn_scale(p))


# --- Gemma 3, ModernBERT, Cohere2: per-layer bases ---------------------------------------------


def _check_rotary(rot, cfg, source, head_dim, *, layer_type_arg=True, interleave=False):
    pos = torch.arange(64)[None]
    x = torch.zeros(1, 1, dtype=torch.float32)
    for i in range(cfg.num_hidden_layers):
        lr = posenc.layer_rope_parameters(source, i)
        kind = cfg.layer_types[i].split("_")[0]
        assert lr.kind == kind, (i, lr.kind, cfg.layer_types[i])
        if not lr.rope:
            continue
        inv, factor = posenc.rope_frequencies(head_dim, base=lr.base, scaling=lr.scaling)
        name = f"{cfg.layer_types[i]}_inv_freq" if layer_type_arg else "inv_freq"
        np.testing.assert_allclose(getattr(rot, name).double().cpu().numpy(), inv, rtol=1e-6)
        args = (x, pos, cfg.layer_types[i]) if layer_type_arg else (x, pos)
        cos, sin = rot(*args)
        ang = np.arange(64)[:, None] * inv
        ang = np.repeat(ang, 2, axis=-1) if interleave else np.concatenate([ang, ang], -1)
        np.testing.assert_allclose(cos[0].double().cpu().numpy(), factor * np.cos(ang), atol=1e-5)
        np.testing.assert_allclose(sin[0].double().cpu().numpy(), factor * np.sin(ang), atol=1e-5)


GEMMA3_KW = {
    "vocab_size": 32,
    "hidden_size": 32,
    "intermediate_size": 32,
    "num_hidden_layers": 7,
    "num_attention_heads": 2,
    "num_key_value_heads": 1,
    "head_dim": 16,
    "sliding_window": 24,
    "sliding_window_pattern": 3,
    "rope_theta": 1_000_000.0,
    "rope_local_base_freq": 5_000.0,
    "rope_scaling": {"rope_type": "linear", "factor": 8.0},
}


@pytest.fixture(scope="module")
def gemma3():
    mod = _hf("gemma3.modeling_gemma3")
    cfg = mod.Gemma3TextConfig(**GEMMA3_KW)
    return cfg, mod.Gemma3RotaryEmbedding(cfg)


def test_gemma3_per_layer_rope(gemma3):
    cfg, rot = gemma3
    raw = {"model_type": "gemma3_text", **GEMMA3_KW}  # an old-style config.json
    for source in (raw, cfg, cfg.to_dict(), {"model_type": "gemma3", "text_config": raw}):
        _check_rotary(rot, cfg, source, 16)
    assert [posenc.layer_rope_parameters(raw, i).kind for i in range(7)] == [
        "sliding", "sliding", "full", "sliding", "sliding", "full", "sliding",
    ]  # fmt: skip
    local, full = (posenc.layer_rope_parameters(raw, i) for i in (0, 2))
    assert (local.base, local.scaling, local.window) == (5_000.0, None, 24)
    assert full.base == 1e6 and dict(full.scaling) == {"rope_type": "linear", "factor": 8.0}
    assert full.window is None


MODERNBERT_KW = {
    "vocab_size": 32,
    "hidden_size": 32,
    "intermediate_size": 32,
    "num_hidden_layers": 7,
    "num_attention_heads": 2,
    "global_attn_every_n_layers": 3,
    "global_rope_theta": 80_000.0,
    "local_rope_theta": 2_000.0,
    "local_attention": 20,
}


def test_modernbert_per_layer_rope():
    mod = _hf("modernbert.modeling_modernbert")
    cfg = mod.ModernBertConfig(**MODERNBERT_KW)
    rot = mod.ModernBertRotaryEmbedding(cfg)
    raw = {"model_type": "modernbert", **MODERNBERT_KW}
    for source in (raw, cfg, cfg.to_dict()):
        _check_rotary(rot, cfg, source, 16)
    kinds = [posenc.layer_rope_parameters(raw, i).kind for i in range(7)]
    assert kinds == ["full", "sliding", "sliding", "full", "sliding", "sliding", "full"]
    lr = posenc.layer_rope_parameters(raw, 1)
    assert (lr.base, lr.window, lr.bidirectional) == (2_000.0, cfg.sliding_window, True)
    assert posenc.layer_rope_parameters(raw, 0).base == 80_000.0


def test_cohere2_rope_on_sliding_layers_only():
    mod = _hf("cohere2.modeling_cohere2")
    kw = {
        "vocab_size": 32,
        "hidden_size": 32,
        "intermediate_size": 32,
        "num_hidden_layers": 8,
        "num_attention_heads": 2,
        "num_key_value_heads": 2,
        "sliding_window": 12,
        "rope_theta": 50_000.0,
        "sliding_window_pattern": 4,
    }
    cfg = mod.Cohere2Config(**kw)
    rot = mod.Cohere2RotaryEmbedding(cfg)
    raw = {"model_type": "cohere2", **kw}
    for source in (raw, cfg, cfg.to_dict()):
        _check_rotary(rot, cfg, source, 16, layer_type_arg=False, interleave=True)
        for i in range(8):
            attn = mod.Cohere2Attention(cfg, i)
            lr = posenc.layer_rope_parameters(source, i)
            # Cohere2Attention rotates only when it has a sliding window
            assert lr.rope == (attn.sliding_window is not None)
            assert lr.window == attn.sliding_window
    assert [posenc.layer_rope_parameters(raw, i).rope for i in range(8)] == [
        True, True, True, False, True, True, True, False,
    ]  # fmt: skip


def test_generic_layer_types_and_nested_parameters():
    cfg = {
        "model_type": "some_new_model",
        "num_hidden_layers": 3,
        "hidden_size": 64,  # the head width: the rotated share is read from the head
        "num_attention_heads": 4,
        "layer_types": ["sliding_attention", "full_attention", "sliding_attention"],
        "sliding_window": 128,
        "rope_parameters": {
            "full_attention": {"rope_type": "yarn", "rope_theta": 1e6, "factor": 4.0},
            "sliding_attention": {"rope_type": "default", "rope_theta": 1e4},
        },
        "max_position_embeddings": 4096,
    }
    full = posenc.layer_rope_parameters(cfg, 1)
    assert full.base == 1e6 and full.scaling["original_max_position_embeddings"] == 4096
    posenc.rope_frequencies(16, base=full.base, scaling=full.scaling)  # accepted as is
    assert posenc.layer_rope_parameters(cfg, 2).window == 128
    with pytest.raises(ValueError, match="layer"):
        posenc.layer_rope_parameters(cfg, 3)
    flat = {"model_type": "llama", "num_hidden_layers": 2, "rope_theta": 5e5}
    assert posenc.layer_rope_parameters(flat, 1) == posenc.layers.LayerRope(
        "full", True, 5e5, None, 1.0, None, False, "half"
    )


def test_gemma2_alternates_with_one_base():
    mod = _hf("gemma2.modeling_gemma2")
    kw = {
        "vocab_size": 32,
        "hidden_size": 32,
        "intermediate_size": 32,
        "num_hidden_layers": 5,
        "num_attention_heads": 2,
        "num_key_value_heads": 1,
        "head_dim": 16,
        "sliding_window": 16,
        "rope_theta": 20_000.0,
    }
    cfg = mod.Gemma2Config(**kw)
    rot = mod.Gemma2RotaryEmbedding(cfg)
    raw = {"model_type": "gemma2", **kw}
    for source in (raw, cfg):
        _check_rotary(rot, cfg, source, 16, layer_type_arg=False)
    assert [posenc.layer_rope_parameters(raw, i).window for i in range(5)] == [
        16, None, 16, None, 16,
    ]  # fmt: skip


def test_smollm3_nope_layers_are_its_models():
    """SmolLM3 leaves out RoPE where no_rope_layers holds 0 (every 4th layer by default)."""
    mod = _hf("smollm3.modeling_smollm3")
    cfg = mod.SmolLM3Config(
        vocab_size=32,
        hidden_size=32,
        intermediate_size=32,
        num_hidden_layers=8,
        num_attention_heads=2,
        num_key_value_heads=1,
    )
    uses = [mod.SmolLM3Attention(cfg, i).use_rope for i in range(8)]
    raw = {"model_type": "smollm3", "num_hidden_layers": 8}
    for source in (raw, cfg):
        got = [posenc.layer_rope_parameters(source, i).rope for i in range(8)]
        assert got == [bool(u) for u in uses] == [True, True, True, False] * 2
    own = {**raw, "no_rope_layers": [1, 0, 1, 1, 1, 1, 0, 1]}
    assert [posenc.layer_rope_parameters(own, i).rope for i in range(8)] == [
        True, False, True, True, True, True, False, True,
    ]  # fmt: skip


def test_default_patterns_the_page_names():
    """layer-patterns.md, 'More patterns': the transformers 5.23 defaults it quotes."""
    from transformers import Gemma2Config, Gemma4TextConfig, GptOssConfig, Qwen3NextConfig

    require("transformers")
    g2 = Gemma2Config()
    assert g2.layer_types[:2] == ["sliding_attention", "full_attention"]
    assert set(g2.rope_parameters) == {"rope_type", "rope_theta"}  # one base for both kinds
    oss = GptOssConfig()
    assert oss.layer_types[:2] == ["sliding_attention", "full_attention"]
    assert oss.sliding_window == 128
    assert oss.rope_parameters == {
        "rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0, "beta_slow": 1.0,
        "truncate": False, "original_max_position_embeddings": 4096, "rope_theta": 150000.0,
    }  # fmt: skip
    layers = [posenc.layer_rope_parameters(oss, i) for i in range(2)]
    assert layers[0].scaling == layers[1].scaling and layers[0].base == layers[1].base
    g4 = Gemma4TextConfig()
    assert g4.layer_types[:6] == ["sliding_attention"] * 5 + ["full_attention"]
    assert g4.rope_parameters == {
        "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
        "full_attention": {
            "rope_type": "proportional", "partial_rotary_factor": 0.25, "rope_theta": 1e6,
        },
    }  # fmt: skip
    q3 = Qwen3NextConfig()
    assert q3.layer_types[:4] == ["linear_attention"] * 3 + ["full_attention"]
    assert q3.head_dim == 256 and q3.rope_parameters["partial_rotary_factor"] == 0.25


def test_dynamic_scaling_reads_max_position_embeddings_as_the_trained_length():
    # issue 21, item 4: transformers' dynamic NTK reads config.max_position_embeddings, not an
    # original_max_position_embeddings (inv_freq[1] 0.31623 at seq_len 32, not 0.25127)
    cfg = {"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 16,
           "num_attention_heads": 4, "rope_theta": 10.0, "max_position_embeddings": 32,
           "rope_scaling": {"rope_type": "dynamic", "factor": 2.0,
                            "original_max_position_embeddings": 16}}  # fmt: skip
    lr = posenc.layer_rope_parameters(cfg, 0)
    assert lr.scaling["original_max_position_embeddings"] == 32
    inv, _ = posenc.rope_frequencies(4, base=lr.base, scaling=lr.scaling, seq_len=32)
    assert inv[1] == pytest.approx(10.0**-0.5, rel=1e-12)  # 0.31623: no stretch at 32
    # the one reading: describe says the same
    assert posenc.hf.describe(cfg).layer(0).scaling == dict(lr.scaling)


def test_layer_rope_parameters_and_describe_read_one_answer():
    # issue 19, goal 4: posenc.layers reads configs through posenc.hf (top-level original,
    # the model's own partial factor, class defaults, aliases)
    import posenc.hf

    cfgs = [
        {"model_type": "phi3", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 2,
         "max_position_embeddings": 64, "original_max_position_embeddings": 8,
         "rope_scaling": {"type": "longrope", "short_factor": [1.0] * 8, "long_factor": [2.0] * 8,
                          "original_max_position_embeddings": 16}},
        {"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4,
         "num_hidden_layers": 2, "partial_rotary_factor": 0.5},
        {"model_type": "gpt_neox", "hidden_size": 64, "num_attention_heads": 4,
         "num_hidden_layers": 2, "rotary_emb_base": 25000},
        {"model_type": "gemma3", "text_config": {"num_hidden_layers": 6}},
    ]  # fmt: skip
    for cfg in cfgs:
        s = posenc.hf.describe(cfg)
        for i in range(s.num_layers):
            lr, layer = posenc.layer_rope_parameters(cfg, i), s.layer(i)
            assert lr.base == layer.base, (cfg["model_type"], i)
            assert (dict(lr.scaling) if lr.scaling else None) == (
                dict(layer.scaling) if layer.scaling else None
            )
            assert int(layer.head_dim * lr.partial_rotary_factor) == layer.rotary_dim


@pytest.mark.parametrize(
    "cfg,layer,words",
    [
        ({"model_type": "bloom", "n_head": 16, "hidden_size": 1024, "n_layer": 2}, 0,
         ["'bloom'", "'alibi'", "not RoPE"]),
        ({"model_type": "t5"}, 0, ["'t5'", "not RoPE"]),
        ({"model_type": "deepseek_v3", "num_hidden_layers": 2}, 0, ["last features", "MLA"]),
        ({"model_type": "qwen3_next", "num_hidden_layers": 4}, 0,
         ["linear_attention", "no positions"]),
    ],
)  # fmt: skip
def test_layers_a_layer_rope_cannot_say_are_refused_by_name(cfg, layer, words):
    # issue 20: the reading describe makes, not a generic RoPE for every config
    with pytest.raises(ValueError) as info:
        posenc.layer_rope_parameters(cfg, layer)
    for word in words:
        assert word in str(info.value), (word, str(info.value))


def test_gpt_j_rotates_its_rotary_dim_share():
    # GPTJConfig's rotary_dim (64 of n_embd 4096 / n_head 16 = 256): 0.25 of the head, as
    # describe reads it (the file spells the attribute_map names)
    import posenc.hf

    cfg = {"model_type": "gptj", "n_embd": 4096, "n_head": 16, "n_layer": 28, "rotary_dim": 64}
    lr = posenc.layer_rope_parameters(cfg, 0)
    assert (lr.partial_rotary_factor, lr.pairing) == (0.25, "interleaved")
    assert posenc.hf.describe(cfg).layer(0).rotary_dim == round(256 * lr.partial_rotary_factor)

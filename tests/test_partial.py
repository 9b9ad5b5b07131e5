"""posenc.partial: partial and proportional (p-RoPE) rotary embeddings.

Checked against a loop oracle written from the two definitions, against apply_rope, and against
transformers (tested with 5.23.0): every row of the table on docs/*/partial-rope.md#models, config
default and rotated queries, is read from the page and compared with that model type's own code.
"""

from __future__ import annotations

import importlib
import math
import re

import numpy as np
import pytest
import torch

import posenc
import seeded
from ci_rule import require
from sitecheck import DOCS

# --- oracle: the definitions, loop by loop ---------------------------------------------------


def _oracle(x, positions, fraction, rule, base, pairing):
    """Rotate each pair of x (seq, d) by its own loop, straight from the page's definition."""
    x = np.asarray(x, dtype=np.float64)
    d = x.shape[-1]
    out = x.copy()
    if rule == "rotary_dim":
        width = int(d * fraction)
        pairs = [(i, base ** (-2 * i / width)) for i in range(width // 2)]
    else:
        width = d
        n = int(fraction * d // 2)
        pairs = [(i, base ** (-2 * i / d) if i < n else 0.0) for i in range(d // 2)]
    for t, p in enumerate(positions):
        for i, w in pairs:
            a_i, b_i = (2 * i, 2 * i + 1) if pairing == "interleaved" else (i, i + width // 2)
            c, s = math.cos(p * w), math.sin(p * w)
            a, b = x[t, a_i], x[t, b_i]
            out[t, a_i], out[t, b_i] = a * c - b * s, a * s + b * c
    return out


@pytest.mark.parametrize("rule", ["rotary_dim", "proportional"])
@pytest.mark.parametrize("pairing", ["half", "interleaved"])
@pytest.mark.parametrize(("d", "fraction"), [(16, 0.25), (32, 0.5), (24, 1.0), (40, 0.4)])
def test_matches_the_loop_oracle(rule, pairing, d, fraction):
    rng = np.random.default_rng(d)
    x = rng.normal(size=(7, d))
    pos = np.array([0, 1, 5, 100, 4097, 65536, 10**6])
    got = posenc.apply_partial_rope(x, pos, fraction=fraction, rule=rule, pairing=pairing)
    np.testing.assert_allclose(got, _oracle(x, pos, fraction, rule, 1e4, pairing), atol=1e-9)


@pytest.mark.parametrize("rule", ["rotary_dim", "proportional"])
def test_frequencies_per_feature_agree_with_the_rotation(rule):
    """A feature of frequency w turns by p*w: rotating by position 1 a one-hot pair shows it."""
    d = 32
    w = posenc.partial_rope_frequencies(d, 0.25, rule=rule)
    y = posenc.apply_partial_rope(np.eye(d)[None], np.array([[1.0] * d]), fraction=0.25, rule=rule)
    # the unit vector e_j turns in its plane by w_j: its own coordinate becomes cos(w_j)
    np.testing.assert_allclose(np.diag(y[0]), np.cos(w), atol=1e-7)


@pytest.mark.parametrize("rule", ["rotary_dim", "proportional"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.float16])
def test_torch_equals_numpy_and_keeps_dtype(rule, dtype):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(2, 3, 5, 16))
    pos = np.array([[0, 1, 2, 3, 4], [70000, 70001, 70002, 70003, 70004]])
    want = posenc.apply_partial_rope(x, pos, fraction=0.5, rule=rule)
    xt = torch.as_tensor(x).to(dtype)
    got = posenc.apply_partial_rope(xt, torch.as_tensor(pos), fraction=0.5, rule=rule)
    assert got.dtype == dtype and tuple(got.shape) == x.shape
    exact = posenc.apply_partial_rope(xt.double(), torch.as_tensor(pos), fraction=0.5, rule=rule)
    # within half a unit of the dtype's rounding (plus float32 work) of the exact rotation
    tol = 2 * torch.finfo(dtype).eps * 4 + 1e-6
    assert float((got.double() - exact).abs().max()) <= tol
    if dtype == torch.float64:
        np.testing.assert_allclose(got.cpu().numpy(), want, atol=1e-12)


def test_unrotated_features_pass_bit_for_bit():
    x = torch.randn(4, 9, 64, dtype=torch.bfloat16)
    y = posenc.apply_partial_rope(x, torch.arange(9) * 1000, fraction=0.25, rule="proportional")
    still = torch.as_tensor(posenc.partial_rope_frequencies(64, 0.25, rule="proportional") == 0)
    assert torch.equal(y[..., still], x[..., still])
    assert not torch.equal(y[..., ~still], x[..., ~still])


def test_full_fraction_is_plain_rope_under_both_rules():
    x = np.random.default_rng(2).normal(size=(6, 32))
    for rule in ("rotary_dim", "proportional"):
        got = posenc.apply_partial_rope(x, 6, fraction=1.0, rule=rule)
        np.testing.assert_allclose(got, posenc.apply_rope(x, 6, pairing="half"), atol=1e-15)


# --- against transformers: the table of the page ----------------------------------------------

ROW = re.compile(r"^\| `(\w+)` \| (\d+) \| ([\d.]+) \| (\w+) \| (\w+) \| (\d+) \|$", re.M)


def _table(lang):
    return ROW.findall((DOCS / lang / "partial-rope.md").read_text(encoding="utf-8"))


def test_the_table_is_the_same_in_both_languages():
    assert _table("en") and _table("en") == _table("zh")


# model type -> (config class, rotary class, modeling module); the rows come from the page
_CLASSES = {
    "gpt_neox": ("GPTNeoXConfig", "GPTNeoXRotaryEmbedding", "gpt_neox"),
    "phi": ("PhiConfig", "PhiRotaryEmbedding", "phi"),
    "stablelm": ("StableLmConfig", "StableLmRotaryEmbedding", "stablelm"),
    "persimmon": ("PersimmonConfig", "PersimmonRotaryEmbedding", "persimmon"),
    "glm": ("GlmConfig", "GlmRotaryEmbedding", "glm"),
    "glm4": ("Glm4Config", "Glm4RotaryEmbedding", "glm4"),
    "qwen3_next": ("Qwen3NextConfig", "Qwen3NextRotaryEmbedding", "qwen3_next"),
    "qwen3_5_text": ("Qwen3_5TextConfig", "Qwen3_5TextRotaryEmbedding", "qwen3_5"),
    "gemma4_text": ("Gemma4TextConfig", "Gemma4TextRotaryEmbedding", "gemma4"),
}


@pytest.mark.parametrize("row", _table("en"), ids=lambda r: r[0])
def test_each_row_against_transformers(row):
    transformers = require("transformers")
    model_type, head_dim, fraction, rule, pairing, base = row
    head_dim, fraction, base = int(head_dim), float(fraction), float(base)
    cfg_name, rot_name, module = _CLASSES[model_type]
    mod = importlib.import_module(f"transformers.models.{module}.modeling_{module}")
    gen = torch.Generator().manual_seed(3)
    q = seeded.randn(2, 2, 6, head_dim, generator=gen, dtype=torch.float64)
    pid = torch.stack([torch.arange(6) * 37, torch.arange(6) + 1000])
    if model_type == "gemma4_text":
        cfg = transformers.Gemma4TextConfig(
            hidden_size=128,
            num_attention_heads=2,
            num_key_value_heads=1,
            head_dim=head_dim // 2,
            global_head_dim=head_dim,
            num_hidden_layers=2,
            layer_types=["sliding_attention", "full_attention"],
            intermediate_size=64,
            vocab_size=64,
        )
        params = cfg.rope_parameters["full_attention"]
        assert params["rope_type"] == "proportional"
        cos, sin = getattr(mod, rot_name)(cfg)(q.float(), pid, "full_attention")
        hf = mod.apply_rotary_pos_emb(q.float(), cos, sin)
    else:
        cfg = getattr(transformers, cfg_name)(
            hidden_size=2 * head_dim, num_attention_heads=2, head_dim=head_dim
        )
        params = cfg.rope_parameters
        assert params.get("rope_type", "default") == "default"
        cos, sin = getattr(mod, rot_name)(cfg)(q.float(), pid)
        width = cos.shape[-1]
        if model_type.startswith("glm"):  # its apply_rotary_pos_emb splits off the rest itself
            hf = mod.apply_rotary_pos_emb(q.float(), q.float(), cos, sin)[0]
        else:  # the attention layer splits, apply_rotary_pos_emb rotates the first part
            rot = mod.apply_rotary_pos_emb(q[..., :width].float(), q[..., :width].float(), cos, sin)
            hf = torch.cat([rot[0], q[..., width:].float()], dim=-1)
    assert params["partial_rotary_factor"] == fraction  # the class default, as the table says
    assert float(params["rope_theta"]) == base
    got = posenc.apply_partial_rope(
        q, pid, fraction=fraction, rule=rule, pairing=pairing, base=base
    )
    # transformers forms p * w in float32: a few 1e-8 rad per unit of position
    tol = (2e-6 + 2e-7 * float(pid.max())) * float(q.abs().max())
    assert float((got - hf.double()).abs().max()) <= tol
    other = "proportional" if rule == "rotary_dim" else "rotary_dim"
    wrong = posenc.apply_partial_rope(
        q, pid, fraction=fraction, rule=other, pairing=pairing, base=base
    )
    assert float((wrong - hf.double()).abs().max()) > 0.1  # the other rule is visibly wrong


def test_proportional_frequencies_equal_transformers_init_function():
    transformers = require("transformers")
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    for head_dim, fraction in [(64, 0.25), (512, 0.25), (96, 0.5), (40, 0.3), (16, 1.0)]:
        cfg = transformers.LlamaConfig(
            hidden_size=2 * head_dim,
            num_attention_heads=2,
            head_dim=head_dim,
            rope_parameters={
                "rope_type": "proportional",
                "rope_theta": 1e6,
                "partial_rotary_factor": fraction,
            },
        )
        inv, _ = ROPE_INIT_FUNCTIONS["proportional"](cfg)
        w = posenc.partial_rope_frequencies(head_dim, fraction, rule="proportional", base=1e6)
        # transformers forms its frequencies in float32 (pow, then 1 / x): on the CPU within
        # 2e-7 of posenc's float64 ones. CUDA's float32 pow is not correctly rounded: the cuda
        # leg (H200, torch 2.11+cu130) measured 3.0e-7 (2.5 float32 ulp); 5 ulp allowed there.
        rtol = 2e-7 if inv.device.type == "cpu" else 5 * float(np.finfo(np.float32).eps)
        np.testing.assert_allclose(
            w[: head_dim // 2], inv.double().cpu().numpy(), rtol=rtol, atol=0
        )


def test_defaults_the_page_quotes():
    """Gemma 4: full-attention layers proportional 0.25, base 1e6, head dim 512; sliding layers
    plain RoPE, base 1e4, head dim 256. Qwen3-Next: a quarter of 256 features. (transformers 5.23)"""
    transformers = require("transformers")
    gemma = transformers.Gemma4TextConfig()
    assert gemma.rope_parameters == {
        "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
        "full_attention": {
            "rope_type": "proportional",
            "partial_rotary_factor": 0.25,
            "rope_theta": 1000000.0,
        },
    }
    assert gemma.per_layer_config["full_attention"].head_dim == 512
    assert gemma.per_layer_config["sliding_attention"].head_dim == 256
    qwen = transformers.Qwen3NextConfig()
    assert qwen.head_dim == 256 and qwen.rope_parameters["partial_rotary_factor"] == 0.25


@pytest.mark.parametrize(
    "params",
    [
        {"rope_type": "linear", "factor": 2.0},
        {"rope_type": "dynamic", "factor": 2.0},
        {"rope_type": "yarn", "factor": 2.0, "original_max_position_embeddings": 64},
        {
            "rope_type": "longrope",
            "short_factor": [1.0] * 8,
            "long_factor": [2.0] * 8,
            "original_max_position_embeddings": 64,
        },
        {
            "rope_type": "llama3",
            "factor": 2.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": 64,
        },
    ],
    ids=lambda p: p["rope_type"],
)
def test_every_other_rope_type_uses_the_rotary_dim_rule(params):
    """The page: transformers' linear, dynamic, yarn, longrope and llama3 types read
    partial_rotary_factor as the rotary_dim rule (a ladder of int(head_dim * factor) // 2). The
    default type is each model's own; the table rows check it for the partial models."""
    transformers = require("transformers")
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    cfg = transformers.LlamaConfig(
        hidden_size=128,
        num_attention_heads=2,
        head_dim=64,
        max_position_embeddings=128,
        rope_parameters={**params, "rope_theta": 1e4, "partial_rotary_factor": 0.25},
    )
    inv, _ = ROPE_INIT_FUNCTIONS[params["rope_type"]](cfg)
    assert inv.shape == (8,)  # int(64 * 0.25) // 2 pairs

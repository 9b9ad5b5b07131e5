"""What docs/*/engines.md and docs/*/hybrid.md say about transformers' code, run on it.

transformers (the pages cite 5.23.0; tested with 5.24.0): which model files pair adjacent features
and which pair halves; GLM's default rotated width; the ``inv_freq`` buffer's dtype after
``model.to(torch.bfloat16)`` and after ``from_pretrained(dtype=torch.bfloat16)``; and Zamba2's
attention, which rotates only when the config sets ``use_mem_rope``. The engines' own code
(llama.cpp, mlx-lm, vLLM) does not install here; the pages cite it by file and line.
"""

from __future__ import annotations

import importlib
import tempfile
import warnings

import pytest
import torch

from ci_rule import require

values = pytest.mark.values

ADJACENT = {  # model module -> its rotate function: pairs (2i, 2i + 1)
    "gptj": "rotate_every_two",
    "cohere": "rotate_half",
    "cohere2": "rotate_half",
    "glm": "rotate_half",
    "glm4": "rotate_half",
}
HALVES = {"llama": "rotate_half", "glm4_moe": "rotate_half", "qwen2": "rotate_half"}


def _rotate(module: str, name: str) -> list[int]:
    require("transformers")
    mod = importlib.import_module(f"transformers.models.{module}.modeling_{module}")
    x = torch.arange(1.0, 9.0).reshape(1, 1, 1, 8)  # features 1..8 of one head
    return getattr(mod, name)(x).flatten().int().tolist()


@values
@pytest.mark.parametrize("module", sorted(ADJACENT))
def test_adjacent_pairers(module):
    """engines.md, Intuition: the rotation partner of feature 2i is 2i + 1."""
    assert _rotate(module, ADJACENT[module]) == [-2, 1, -4, 3, -6, 5, -8, 7]


@values
@pytest.mark.parametrize("module", sorted(HALVES))
def test_halves_pairers(module):
    """engines.md, Intuition: GLM-4.5 (glm4_moe) pairs halves, unlike GLM-4."""
    assert _rotate(module, HALVES[module]) == [-5, -6, -7, -8, 1, 2, 3, 4]


def test_deepseek_v3_interleaves_by_default_and_glm_rotates_half_the_head():
    transformers = require("transformers")
    assert transformers.DeepseekV3Config().rope_interleave is True
    glm = transformers.GlmConfig(head_dim=128, num_attention_heads=32)
    assert glm.rope_parameters["partial_rotary_factor"] == 0.5


def _tiny_llama(transformers):
    cfg = transformers.LlamaConfig(
        hidden_size=32,
        num_attention_heads=2,
        num_key_value_heads=2,
        intermediate_size=32,
        num_hidden_layers=1,
        vocab_size=64,
    )
    return transformers.LlamaForCausalLM(cfg)


def test_to_bfloat16_casts_inv_freq_from_pretrained_keeps_float32():
    """engines.md, engine numerics: model.to(bfloat16) rounds the frequencies; loading with
    dtype=bfloat16 does not."""
    transformers = require("transformers")
    torch.manual_seed(0)
    model = _tiny_llama(transformers)
    exact = model.model.rotary_emb.inv_freq.clone()
    assert exact.dtype == torch.float32
    with tempfile.TemporaryDirectory() as d:
        model.save_pretrained(d)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            loaded = transformers.AutoModelForCausalLM.from_pretrained(d, dtype=torch.bfloat16)
    assert loaded.model.layers[0].self_attn.q_proj.weight.dtype == torch.bfloat16
    assert loaded.model.rotary_emb.inv_freq.dtype == torch.float32
    assert torch.equal(loaded.model.rotary_emb.inv_freq, exact)
    moved = model.to(torch.bfloat16).model.rotary_emb.inv_freq
    assert moved.dtype == torch.bfloat16
    assert not torch.equal(moved.float(), exact)  # the forward's .float() cannot undo it


def _zamba2_logits_move(transformers, **over) -> float:
    small = {
        "hidden_size": 32,
        "num_attention_heads": 2,
        "num_key_value_heads": 2,
        "head_dim": 16,
        "intermediate_size": 32,
        "vocab_size": 64,
        "max_position_embeddings": 128,
        "num_hidden_layers": 2,
        "layers_block_type": ["mamba", "hybrid"],
        "mamba_headdim": 16,
        "n_mamba_heads": 4,
        "mamba_d_state": 4,
    }
    cfg = transformers.AutoConfig.for_model("zamba2", **{**small, **over})
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = transformers.AutoModelForCausalLM.from_config(cfg).eval()
        ids = torch.randint(1, 64, (1, 12))
        gap = torch.cat([torch.arange(6), torch.arange(50, 56)])[None]
        with torch.no_grad():
            a = model(input_ids=ids, position_ids=torch.arange(12)[None]).logits
            b = model(input_ids=ids, position_ids=gap).logits
    return float((a - b).abs().max())


@values
@pytest.mark.slow
def test_zamba2_rotates_only_with_use_mem_rope():
    """hybrid.md: Zamba2's attention is NoPE under transformers' default use_mem_rope=False."""
    transformers = require("transformers")
    assert transformers.Zamba2Config().use_mem_rope is False
    assert _zamba2_logits_move(transformers) == 0.0
    assert _zamba2_logits_move(transformers, use_mem_rope=True) > 1e-5

"""Claims of the partial-rope, precision, video-rope and rope-scaling pages that need a framework.

Each test runs the framework's own code (transformers, tested with 5.23.0 and 5.24.0) on a case
the page states, so that the sentence fails here if the code stops doing what the page says.
"""

from __future__ import annotations

import importlib

import torch

import posenc
import seeded
from ci_rule import require


def test_glm4_moe_rotates_half_of_the_head_with_half_pairing():
    """partial-rope.md#models: GLM-4.5 / GLM-4.6 (`glm4_moe`) default to fraction 0.5, the
    rotary_dim rule and rotate_half pairing, base 10000, unlike `glm` and `glm4` (interleaved)."""
    transformers = require("transformers")
    mod = importlib.import_module("transformers.models.glm4_moe.modeling_glm4_moe")
    head_dim = 32
    cfg = transformers.Glm4MoeConfig(hidden_size=64, num_attention_heads=2, head_dim=head_dim)
    params = cfg.rope_parameters
    assert params.get("rope_type", "default") == "default"
    assert params["partial_rotary_factor"] == 0.5
    assert float(params["rope_theta"]) == 10000.0
    gen = torch.Generator().manual_seed(5)
    q = seeded.randn(2, 2, 6, head_dim, generator=gen, dtype=torch.float64)
    pid = torch.stack([torch.arange(6) * 37, torch.arange(6) + 1000])
    cos, sin = mod.Glm4MoeRotaryEmbedding(cfg)(q.float(), pid)
    assert cos.shape[-1] == head_dim // 2
    hf = mod.apply_rotary_pos_emb(q.float(), q.float(), cos, sin)[0].double()
    got = posenc.apply_partial_rope(q, pid, fraction=0.5, rule="rotary_dim", pairing="half")
    tol = (2e-6 + 2e-7 * float(pid.max())) * float(q.abs().max())
    assert float((got - hf).abs().max()) <= tol
    # the pairing of glm and glm4 would be visibly wrong here
    inter = posenc.apply_partial_rope(q, pid, fraction=0.5, pairing="interleaved")
    assert float((inter - hf).abs().max()) > 0.1
    # and so would a rotation of the whole head (mlx-lm 0.32.2's `glm`, models/glm.py:58)
    whole = posenc.apply_rope(q, pid, pairing="half")
    assert float((whole - hf).abs().max()) > 0.1

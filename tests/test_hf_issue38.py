"""The atlas on the configs of issue 38 (item 2), against transformers' own modules (5.24).

Phi-3.5-MoE's rotary (models/phimoe/modeling_phimoe.py) is held at short-only and long-only
positions (the corpus checks one batch holding both, which reads as long); EXAONE 4's,
Bamba's, RecurrentGemma's, Zamba2's and GraniteMoeHybrid's layer patterns, MiniMax-M2's
rotary_dim and the refusal of a YaRN entry with no factor are checked here on configs built in
Python, as the config classes derive them, besides the corpus files that hold them as shipped.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

import posenc.hf as hf
from ci_rule import require

torch = require("torch")
require("transformers")
from transformers import CONFIG_MAPPING  # noqa: E402
from transformers.models.phimoe.modeling_phimoe import (  # noqa: E402
    PhimoeRotaryEmbedding,
    apply_rotary_pos_emb,
)

CORPUS = Path(__file__).parent / "hf_corpus"


def _hf(d):
    return CONFIG_MAPPING[d["model_type"]].from_dict(copy.deepcopy(d))


def _phimoe(short_mscale=1.5, long_mscale=2.0):
    d = json.loads((CORPUS / "phi" / "microsoft--Phi-3.5-MoE-instruct.json").read_text())
    d["rope_scaling"] = {**d["rope_scaling"], "short_mscale": short_mscale}
    d["rope_scaling"]["long_mscale"] = long_mscale
    return d


@pytest.mark.parametrize("start", [0, 4000, 4096, 5000, 100_000])
def test_phimoe_rotates_as_its_rotary_module_at_short_and_long_positions(start):
    # short_mscale and long_mscale made different, so that the choice by length shows
    d = _phimoe()
    obj = _hf(d)
    rotary = PhimoeRotaryEmbedding(obj)
    ids = torch.arange(start, start + 8)[None]
    gen = torch.Generator().manual_seed(0)
    q = torch.randn(1, 2, 8, 128, generator=gen)
    cos, sin = rotary(q, ids)
    want, _ = apply_rotary_pos_emb(q, q, cos, sin)
    for config in (d, obj):
        got = hf.describe(config).rotate(q, ids, layer=0)
        err = float((got - want).abs().max())
        assert err < 1e-3 + start * 2.0**-20, (start, err)
    layer = hf.describe(d).layer(0)
    assert layer.mscale == (1.5, 2.0)
    assert layer.attention_factor == 1.5


def test_phimoe_without_its_mscales_is_refused_by_name():
    d = _phimoe()
    del d["rope_scaling"]["long_mscale"]
    with pytest.raises(Exception, match="long_mscale field must be a number"):
        _hf(d)  # transformers' config class refuses it too
    with pytest.raises(TypeError, match=r"long_mscale.*must be a number"):
        hf.describe(d)


def _kinds(scheme):
    return [layer.kind for layer in scheme.layers]


def test_exaone4_full_layers_rotate_only_without_a_sliding_window():
    base = {"model_type": "exaone4", "hidden_size": 64, "num_attention_heads": 4,
            "head_dim": 16, "num_hidden_layers": 8}  # fmt: skip
    windowed = {**base, "sliding_window": 128}
    s = hf.describe(windowed)
    assert _kinds(s) == ["rope", "rope", "rope", "nope"] * 2
    assert s.to_dict()["layers"] == hf.describe(_hf(windowed)).to_dict()["layers"]
    plain = {**base, "sliding_window": None, "layer_types": ["full_attention"] * 8}
    assert _kinds(hf.describe(plain)) == ["rope"] * 8
    # null sliding_window and no layer_types: transformers' config code divides by zero
    with pytest.raises(ZeroDivisionError):
        _hf({**base, "sliding_window": None})
    with pytest.raises(ValueError, match=r"sliding_window.*null.*layer_types"):
        hf.describe({**base, "sliding_window": None})


@pytest.mark.parametrize(
    "d, rotating",
    [
        ({"model_type": "bamba", "hidden_size": 64, "num_attention_heads": 4,
          "num_hidden_layers": 8, "attn_layer_indices": [2, 5], "mamba_n_heads": 8}, [2, 5]),
        ({"model_type": "bamba", "hidden_size": 64, "num_attention_heads": 4,
          "num_hidden_layers": 4, "mamba_n_heads": 8}, []),
        ({"model_type": "recurrent_gemma", "hidden_size": 64, "num_attention_heads": 4,
          "num_hidden_layers": 7}, [2, 5]),
        ({"model_type": "recurrent_gemma", "hidden_size": 64, "num_attention_heads": 4,
          "num_hidden_layers": 5, "block_types": ["attention", "recurrent"]}, [0, 2, 4]),
        ({"model_type": "zamba2", "hidden_size": 64, "num_attention_heads": 4,
          "num_hidden_layers": 4, "use_mem_rope": True,
          "layers_block_type": ["mamba", "hybrid", "mamba", "hybrid"]}, [1, 3]),
        ({"model_type": "zamba2", "hidden_size": 64, "num_attention_heads": 4,
          "num_hidden_layers": 4,
          "layers_block_type": ["mamba", "hybrid", "mamba", "hybrid"]}, []),
        ({"model_type": "granitemoehybrid", "hidden_size": 64, "num_attention_heads": 4,
          "num_hidden_layers": 3, "position_embedding_type": "rope",
          "layer_types": ["mamba", "attention", "mamba"]}, [1]),
        ({"model_type": "granitemoehybrid", "hidden_size": 64, "num_attention_heads": 4,
          "num_hidden_layers": 3, "layer_types": ["mamba", "attention", "mamba"]}, []),
        ({"model_type": "granitemoehybrid", "hidden_size": 64, "num_attention_heads": 4,
          "num_hidden_layers": 3, "position_embedding_type": "rope"}, []),
    ],
)  # fmt: skip
def test_hybrid_models_rotate_their_attention_layers_only(d, rotating):
    s = hf.describe(d)
    assert [layer.index for layer in s.layers if layer.kind == "rope"] == rotating
    of_obj = hf.describe(_hf(d)).to_dict()
    assert of_obj["layers"] == s.to_dict()["layers"]


def test_zamba2_attention_works_on_the_doubled_width():
    d = {"model_type": "zamba2", "hidden_size": 64, "num_attention_heads": 4,
         "num_hidden_layers": 2, "use_mem_rope": True, "attention_head_dim": 8,
         "layers_block_type": ["mamba", "hybrid"]}  # fmt: skip
    assert _hf(d).attention_head_dim == 8  # the file's, when it names one
    assert hf.describe(d).layer(1).head_dim == 8
    del d["attention_head_dim"]
    assert _hf(d).attention_head_dim == 32  # else the class derives 2 * 64 // 4
    assert hf.describe(d).layer(1).head_dim == 32


def test_minimax_m2_rotates_its_rotary_dim():
    d = {"model_type": "minimax_m2", "hidden_size": 64, "num_attention_heads": 4,
         "head_dim": 32, "rotary_dim": 16, "num_hidden_layers": 2}  # fmt: skip
    assert hf.describe(d).layer(0).rotary_dim == 16
    assert hf.describe(_hf(d)).layer(0).rotary_dim == 16


def test_a_yarn_entry_without_factor_is_refused_naming_the_key():
    d = {"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4,
         "num_hidden_layers": 2, "rope_scaling": {"type": "yarn"}}  # fmt: skip
    with pytest.raises(KeyError, match="factor"):
        _hf(d)
    with pytest.raises(ValueError, match=r"config\['rope_scaling'\]\['factor'\]"):
        hf.describe(d)


@pytest.mark.parametrize(
    "model_type, nested, want",
    [
        ("llama", 4096, 4096),  # a top-level key LlamaConfig does not declare: never read
        ("llama", None, 32768),  # then max_position_embeddings, not the top-level 8192
        ("phi3", 4096, 8192),  # Phi3Config declares the field: the top level wins
    ],
)
def test_original_length_nested_and_top_level_as_transformers_resolves_them(
    model_type, nested, want
):
    rs = {"rope_type": "longrope", "short_factor": [1.0] * 32, "long_factor": [2.0] * 32}
    if nested is not None:
        rs["original_max_position_embeddings"] = nested
    d = {"model_type": model_type, "hidden_size": 256, "num_attention_heads": 4,
         "num_hidden_layers": 2, "max_position_embeddings": 32768,
         "original_max_position_embeddings": 8192, "rope_scaling": rs}  # fmt: skip
    assert _hf(d).rope_parameters["original_max_position_embeddings"] == want
    for config in (d, _hf(d)):
        scaling = hf.describe(config).layer(0).scaling
        assert scaling["original_max_position_embeddings"] == want

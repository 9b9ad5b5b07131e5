"""posenc.hf.describe on hand-written config.json dicts of real-looking models (issue 12).

Each config is spelled as the model's ``config.json`` on the Hub spells it (4.x keys where the
checkpoint was saved by transformers 4.x, 5.x nested ``rope_parameters`` where it was saved by
5.x). The expected values are worked out here from the config and the formulas (``math``), not
read back from posenc: layer kinds, pairing, rotary width, base per layer, attention factor.
``Scheme.rotate`` must equal the posenc function the scheme names (``apply_rope``,
``apply_mrope``, ``apply_mla_rope``) for NumPy and torch inputs. The comparison against
transformers' own code is the generic walk (tests/hf_walk.py), not this file.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest

import posenc
import posenc.hf as hf
from ci_rule import require
from hf_configs import llama31

try:
    import torch
except ImportError:  # pragma: no cover - torch is a dev dependency
    torch = None

needs_torch = pytest.mark.skipif(
    torch is None and os.environ.get("CI") != "true", reason="torch is not installed"
)

# --- configs, as config.json holds them -----------------------------------------------------


def _host(a) -> np.ndarray:
    """A NumPy copy of an array or of a tensor on any device (the cuda leg's tensors live there)."""
    return a.detach().cpu().numpy() if hasattr(a, "detach") else np.asarray(a)


def qwen2_yarn():
    """Qwen/Qwen2.5-7B-Instruct with the YaRN block its model card says to add (4.x ``type``)."""
    return {
        "architectures": ["Qwen2ForCausalLM"],
        "model_type": "qwen2",
        "hidden_size": 3584,
        "num_attention_heads": 28,
        "num_key_value_heads": 4,
        "num_hidden_layers": 28,
        "max_position_embeddings": 32768,
        "rope_theta": 1000000.0,
        "rope_scaling": {"factor": 4.0, "original_max_position_embeddings": 32768, "type": "yarn"},
        "sliding_window": 131072,
        "use_sliding_window": False,
    }


LONG = [1.0 + 0.125 * i for i in range(48)]
SHORT = [1.0 + 0.01 * i for i in range(48)]


def phi4_mini():
    """microsoft/Phi-4-mini-instruct (model_type phi3): LongRoPE on 3/4 of a 128-wide head."""
    return {
        "architectures": ["Phi3ForCausalLM"],
        "model_type": "phi3",
        "hidden_size": 3072,
        "num_attention_heads": 24,
        "num_key_value_heads": 8,
        "num_hidden_layers": 32,
        "max_position_embeddings": 131072,
        "original_max_position_embeddings": 4096,
        "partial_rotary_factor": 0.75,
        "rope_theta": 10000.0,
        "rope_scaling": {"type": "longrope", "long_factor": LONG, "short_factor": SHORT},
        "sliding_window": 262144,
    }


def gemma3_1b():
    """google/gemma-3-1b-it (4.x keys): local layers on rope_local_base_freq, 5 local : 1 global."""
    return {
        "architectures": ["Gemma3ForCausalLM"],
        "model_type": "gemma3_text",
        "hidden_size": 1152,
        "head_dim": 256,
        "num_attention_heads": 4,
        "num_key_value_heads": 1,
        "num_hidden_layers": 26,
        "max_position_embeddings": 32768,
        "rope_theta": 1000000,
        "rope_local_base_freq": 10000,
        "rope_scaling": None,
        "sliding_window": 512,
        "sliding_window_pattern": 6,
        "query_pre_attn_scalar": 256,
    }


def gemma3_4b_explicit():
    """google/gemma-3-4b-it's text_config (4.x keys, defaults written out): linear x8 globally."""
    text = {
        "model_type": "gemma3_text",
        "hidden_size": 2560,
        "head_dim": 256,
        "num_attention_heads": 8,
        "num_key_value_heads": 4,
        "num_hidden_layers": 34,
        "max_position_embeddings": 131072,
        "rope_theta": 1000000.0,
        "rope_local_base_freq": 10000.0,
        "rope_scaling": {"factor": 8.0, "rope_type": "linear"},
        "sliding_window": 1024,
        "sliding_window_pattern": 6,
    }
    return {"architectures": ["Gemma3ForConditionalGeneration"], "model_type": "gemma3",
            "text_config": text, "vision_config": {"model_type": "siglip_vision_model"}}  # fmt: skip


def gemma3_5x():
    """A Gemma 3 text config saved by transformers 5: layer_types and nested rope_parameters."""
    types = ["full_attention" if (i + 1) % 6 == 0 else "sliding_attention" for i in range(12)]
    return {
        "model_type": "gemma3_text",
        "hidden_size": 1152,
        "head_dim": 256,
        "num_attention_heads": 4,
        "num_key_value_heads": 1,
        "num_hidden_layers": 12,
        "max_position_embeddings": 32768,
        "layer_types": types,
        "sliding_window": 512,
        "rope_parameters": {
            "full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1000000.0},
            "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
        },
    }


def deepseek_v3():
    """deepseek-ai/DeepSeek-V3: MLA, 128 no-position + 64 rotary features per query head."""
    return {
        "architectures": ["DeepseekV3ForCausalLM"],
        "model_type": "deepseek_v3",
        "hidden_size": 7168,
        "num_attention_heads": 128,
        "num_key_value_heads": 128,
        "num_hidden_layers": 61,
        "kv_lora_rank": 512,
        "q_lora_rank": 1536,
        "qk_nope_head_dim": 128,
        "qk_rope_head_dim": 64,
        "v_head_dim": 128,
        "max_position_embeddings": 163840,
        "rope_theta": 10000,
        "rope_scaling": {
            "beta_fast": 32,
            "beta_slow": 1,
            "factor": 40,
            "mscale": 1.0,
            "mscale_all_dim": 1.0,
            "original_max_position_embeddings": 4096,
            "type": "yarn",
        },
        "rope_interleave": True,
    }


def qwen2_vl_5x():
    """Qwen2-VL-2B-Instruct as transformers 5 saves it: positions in text_config."""
    text = {
        "model_type": "qwen2_vl_text",
        "hidden_size": 1536,
        "num_attention_heads": 12,
        "num_key_value_heads": 2,
        "num_hidden_layers": 28,
        "max_position_embeddings": 32768,
        "rope_parameters": {
            "rope_type": "default",
            "rope_theta": 1000000.0,
            "mrope_section": [16, 24, 24],
        },
    }
    return {"model_type": "qwen2_vl", "text_config": text, "vision_config": {"depth": 32}}


def qwen2_vl_hub():
    """Qwen/Qwen2-VL-2B-Instruct's config.json on the Hub (flat, 4.x): transformers moves the
    flat keys into text_config and reads rope_scaling type "mrope" as "default"."""
    return {
        "architectures": ["Qwen2VLForConditionalGeneration"],
        "model_type": "qwen2_vl",
        "hidden_size": 1536,
        "num_attention_heads": 12,
        "num_key_value_heads": 2,
        "num_hidden_layers": 28,
        "max_position_embeddings": 32768,
        "rope_theta": 1000000.0,
        "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]},
        "vision_config": {"depth": 32, "embed_dim": 1280},
    }


NO_ROPE = [int((i + 1) % 4 != 0) for i in range(48)]  # every fourth layer is NoPE


def llama4(no_rope_layers=NO_ROPE):
    """meta-llama/Llama-4-Scout-17B-16E: interleaved pairs, llama3 scaling, NoPE every 4th."""
    text = {
        "model_type": "llama4_text",
        "hidden_size": 5120,
        "head_dim": 128,
        "num_attention_heads": 40,
        "num_key_value_heads": 8,
        "num_hidden_layers": 48,
        "max_position_embeddings": 10485760,
        "attention_chunk_size": 8192,
        "rope_theta": 500000.0,
        "rope_scaling": {
            "factor": 8.0,
            "high_freq_factor": 4.0,
            "low_freq_factor": 1.0,
            "original_max_position_embeddings": 8192,
            "rope_type": "llama3",
        },
    }
    if no_rope_layers is not None:
        text["no_rope_layers"] = no_rope_layers
    return {"model_type": "llama4", "text_config": text, "vision_config": {"hidden_size": 1408}}


CONFIGS = {
    "llama31": llama31,
    "qwen2_yarn": qwen2_yarn,
    "phi4_mini": phi4_mini,
    "gemma3_1b": gemma3_1b,
    "gemma3_4b": gemma3_4b_explicit,
    "gemma3_5x": gemma3_5x,
    "deepseek_v3": deepseek_v3,
    "qwen2_vl_5x": qwen2_vl_5x,
    "llama4": llama4,
}


@pytest.fixture(scope="module")
def schemes():
    return {name: hf.describe(make()) for name, make in CONFIGS.items()}


def _gemma_local(i):
    return (i + 1) % 6 != 0


# --- Scheme fields ----------------------------------------------------------------------------


def test_llama31_llama3_scaling(schemes):
    s = schemes["llama31"]
    assert (s.model_type, s.convention, s.kind, s.known) == ("llama", "llama", "rope", True)
    assert s.num_layers == 32 and s.max_position_embeddings == 131072
    for layer in s.layers:
        assert (layer.kind, layer.pairing, layer.slot) == ("rope", "half", "head")
        assert (layer.head_dim, layer.rotary_dim, layer.base) == (128, 128, 500000.0)
        assert layer.rope_type == "llama3" and layer.attention_factor == 1.0
    assert dict(s.layer(0).scaling) == {
        "rope_type": "llama3",
        "factor": 8.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8192,
    }
    assert s.layer(-1).index == 31


def test_qwen2_yarn_attention_factor(schemes):
    layer = schemes["qwen2_yarn"].layer(0)
    assert (layer.pairing, layer.rotary_dim, layer.base, layer.rope_type) == (
        "half", 128, 1e6, "yarn",
    )  # fmt: skip
    assert layer.attention_factor == pytest.approx(0.1 * math.log(4.0) + 1, rel=1e-15)


def test_phi4_mini_longrope_partial_rotary(schemes):
    s = schemes["phi4_mini"]
    layer = s.layer(0)
    assert s.convention == "partial"
    assert (layer.head_dim, layer.rotary_dim, layer.pairing, layer.slot) == (
        128,
        96,
        "half",
        "head",
    )
    assert layer.rope_type == "longrope"
    # transformers' fallback: factor = max_position_embeddings / original_max_position_embeddings
    factor = 131072 / 4096
    assert layer.scaling["original_max_position_embeddings"] == 4096
    assert layer.scaling["factor"] == factor
    want = math.sqrt(1 + math.log(factor) / math.log(4096))
    assert layer.attention_factor == pytest.approx(want, rel=1e-15)


@pytest.mark.parametrize("name", ["gemma3_1b", "gemma3_4b", "gemma3_5x"])
def test_gemma3_local_and_global_bases(schemes, name):
    s = schemes[name]
    n = {"gemma3_1b": 26, "gemma3_4b": 34, "gemma3_5x": 12}[name]
    window = 1024 if name == "gemma3_4b" else 512
    assert (
        s.num_layers == n
        and s.known
        and s.model_type == name.split("_")[0] + ("_text" if name != "gemma3_4b" else "")
    )
    for i, layer in enumerate(s.layers):
        assert layer.kind == "rope" and layer.pairing == "half" and layer.rotary_dim == 256
        if _gemma_local(i):
            assert (layer.layer_type, layer.base, layer.window) == (
                "sliding_attention", 10000.0, window,
            )  # fmt: skip
            assert layer.rope_type == "default" and layer.scaling is None
        else:
            assert (layer.layer_type, layer.base, layer.window) == ("full_attention", 1e6, None)
            scaled = name != "gemma3_1b"
            assert layer.rope_type == ("linear" if scaled else "default")
            assert (dict(layer.scaling or {}).get("factor")) == (8.0 if scaled else None)
        assert layer.attention_factor == 1.0


def test_deepseek_v3_mla_rope_interleave(schemes):
    s = schemes["deepseek_v3"]
    layer = s.layer(60)
    assert (s.convention, s.num_layers) == ("mla", 61)
    assert (layer.slot, layer.pairing) == ("tail", "deinterleave")
    assert (layer.head_dim, layer.rotary_dim, layer.base, layer.rope_type) == (
        192, 64, 10000.0, "yarn",
    )  # fmt: skip
    # YaRN with mscale and mscale_all_dim: g(mscale) / g(mscale_all_dim), g(m) = 0.1 m ln(s) + 1
    g = lambda m: 0.1 * m * math.log(40) + 1  # noqa: E731
    assert layer.attention_factor == pytest.approx(g(1.0) / g(1.0), rel=1e-15)
    without = deepseek_v3()
    without["rope_interleave"] = False
    assert hf.describe(without).layer(0).pairing == "half"


def test_deepseek_yarn_attention_factor_with_unequal_mscales():
    cfg = deepseek_v3()
    cfg["rope_scaling"] = {**cfg["rope_scaling"], "mscale": 0.707, "mscale_all_dim": 1.0}
    g = lambda m: 0.1 * m * math.log(40) + 1  # noqa: E731
    got = hf.describe(cfg).layer(0).attention_factor
    assert got == pytest.approx(g(0.707) / g(1.0), rel=1e-12) and got < 1


def test_qwen2_vl_mrope_section(schemes):
    s = schemes["qwen2_vl_5x"]
    layer = s.layer(0)
    assert (s.model_type, s.convention, s.kind) == ("qwen2_vl", "mrope", "mrope")
    assert (layer.kind, layer.head_dim, layer.rotary_dim, layer.base) == ("mrope", 128, 128, 1e6)
    assert layer.mrope_section == (16, 24, 24) and not layer.mrope_interleaved


def test_qwen2_vl_flat_hub_config_reads_like_the_nested_one(schemes):
    s = hf.describe(qwen2_vl_hub())
    assert s.layers == schemes["qwen2_vl_5x"].layers and s.convention == "mrope"


def test_llama4_no_rope_layers(schemes):
    s = schemes["llama4"]
    assert (s.model_type, s.convention, s.num_layers) == ("llama4", "interleaved", 48)
    kinds = [layer.kind for layer in s.layers]
    assert kinds == ["rope" if f else "nope" for f in NO_ROPE]
    assert kinds.count("nope") == 12 and kinds[3] == kinds[47] == "nope"
    rot = s.layer(0)
    assert (rot.pairing, rot.rotary_dim, rot.base, rot.rope_type) == (
        "interleaved", 128, 500000.0, "llama3",
    )  # fmt: skip


@pytest.mark.parametrize("flags", [[], None], ids=["empty", "missing"])
def test_llama4_default_no_rope_layers(flags):
    kinds = [layer.kind for layer in hf.describe(llama4(flags)).layers]
    assert kinds == ["rope" if f else "nope" for f in NO_ROPE]


def test_gemma3_hub_text_config_with_defaults_left_out():
    cfg = gemma3_4b_explicit()
    text = cfg["text_config"]
    for key in ("head_dim", "num_attention_heads", "num_key_value_heads", "rope_theta",
                "rope_local_base_freq", "sliding_window_pattern", "max_position_embeddings"):  # fmt: skip
        del text[key]
    s = hf.describe(cfg)
    assert s.layer(0).base == 10000.0 and s.layer(5).base == 1e6 and s.layer(5).rotary_dim == 256


# --- to_dict and explain ---------------------------------------------------------------------


@pytest.mark.parametrize("name", list(CONFIGS))
def test_to_dict_is_json_and_round_trips(schemes, name):
    s = schemes[name]
    d = s.to_dict()
    text = json.dumps(d, allow_nan=False)
    assert json.loads(text) == d
    assert d["model_type"] == s.model_type and d["num_layers"] == s.num_layers == len(d["layers"])
    assert d["transformers"] == hf.TRANSFORMERS_VERSION
    for layer, row in zip(s.layers, d["layers"], strict=True):
        assert row["kind"] == layer.kind and row["base"] == layer.base
        assert row["rotary_dim"] == layer.rotary_dim and row["pairing"] == layer.pairing
        assert row == layer.to_dict()


# config keys each explanation must name (the sources of each layer's parameters)
KEYS = {
    "llama31": ["rope_theta", "hidden_size", "num_attention_heads", "rope_scaling", "rope_type"],
    "qwen2_yarn": ["rope_theta", "hidden_size", "num_attention_heads"],
    "phi4_mini": ["rope_theta", "partial_rotary_factor", "hidden_size"],
    "gemma3_1b": ["rope_theta", "rope_local_base_freq", "head_dim"],
    "gemma3_4b": ["text_config", "rope_theta", "rope_local_base_freq", "rope_scaling", "head_dim"],
    "gemma3_5x": ["rope_parameters", "full_attention", "sliding_attention"],
    "deepseek_v3": ["rope_theta", "qk_nope_head_dim", "qk_rope_head_dim", "rope_interleave"],
    "qwen2_vl_5x": ["text_config", "rope_parameters", "mrope_section", "rope_theta"],
    "llama4": ["text_config", "rope_theta", "rope_scaling", "head_dim"],
}


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("name", list(CONFIGS))
def test_explain_names_each_parameter_and_its_config_key(schemes, name, lang):
    s = schemes[name]
    text = s.explain(lang)
    missing = [k for k in KEYS[name] if k not in text]
    assert not missing, f"{name} ({lang}) does not name {missing}:\n{text}"
    assert text.startswith(s.model_type)
    assert "posenc." in text  # the call
    assert ("Pitfalls:" in text) == (lang == "en") and ("移植要点" in text) == (lang == "zh")
    assert set(s.sources) and all(isinstance(v, str) for v in s.sources.values())
    assert text != s.explain("zh" if lang == "en" else "en")


# which layers are local, global or NoPE comes from a key too
LAYOUT_KEYS = {
    "gemma3_1b": "sliding_window_pattern",
    "gemma3_5x": "layer_types",
    "llama4": "no_rope_layers",
}


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("name", list(LAYOUT_KEYS))
def test_explain_names_the_key_behind_the_layer_layout(schemes, name, lang):
    assert LAYOUT_KEYS[name] in str(dict(schemes[name].sources))  # recorded ...
    assert LAYOUT_KEYS[name] in schemes[name].explain(lang)  # ... and said


@pytest.mark.parametrize("name", ["qwen2_yarn", "phi4_mini", "deepseek_v3"])
def test_explain_names_rope_scaling_type_spelling(schemes, name):
    s = schemes[name]
    assert s.sources["rope_type"] == "config['rope_scaling']['type']"
    assert "config['rope_scaling']" in s.explain("en")


def test_gemma3_local_rope_type_source_is_a_real_key(schemes):
    src = schemes["gemma3_1b"].sources["sliding_attention: rope_type"]
    assert "['rope_local_base_freq']['rope_type']" not in src


def test_explain_refuses_an_unknown_language(schemes):
    with pytest.raises(ValueError, match="lang"):
        schemes["llama31"].explain("fr")


@pytest.mark.parametrize(
    "config,why",
    [
        ({**llama31(), "model_type": "my_llama_fork"}, "has no model type 'my_llama_fork'"),
        ({**llama31(), "model_type": "chatglm", "auto_map": {"AutoConfig": "x.Config"}},
         "trust_remote_code"),
        ({"model_type": "bert", "hidden_size": 768, "num_attention_heads": 12,
          "num_hidden_layers": 12, "position_embedding_type": "absolute"}, "BertConfig"),
        ({"model_type": "vit", "hidden_size": 768, "num_attention_heads": 12}, "ViTConfig"),
        ({"model_type": "clip", "text_config": {"hidden_size": 512}}, "CLIPConfig"),
        ({"model_type": "jamba", "hidden_size": 4096, "num_attention_heads": 32,
          "num_hidden_layers": 32, "attn_layer_period": 8}, "JambaConfig"),
    ],
    ids=["fork", "hub-code", "bert", "vit", "clip", "jamba"],
)  # fmt: skip
def test_a_model_type_without_a_verified_row_is_unknown_never_rope(config, why):
    # issue 20: BERT, ViT, CLIP (learned tables) and Jamba (no positions) were described as
    # "RoPE, rotate_half"; a type posenc.hf has no verified row for is now described as unknown
    s = hf.describe(config)
    assert (s.kind, s.convention, s.known, s.layers) == ("unknown", "unknown", False, ())
    assert why in " ".join(s.notes)
    assert "posenc.hf.MODELS" in " ".join(s.notes)  # what a description would need
    for lang in ("en", "zh"):
        text = s.explain(lang)
        assert "rotate_half" not in text and "RoPE" not in text.split("\n")[0]
    with pytest.raises(ValueError, match="unknown"):
        hf.posenc_call(s)
    with pytest.raises(ValueError, match="layer"):
        s.rotate(np.zeros((1, 1, 2, 8)), np.arange(2))


# --- rotate equals the posenc call -----------------------------------------------------------


def _x(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


IDS = np.array([[0, 1, 2, 3, 4], [40000, 40001, 40002, 9, 10]])  # (batch, seq), per row


def _rope_ref(layer, x, ids):
    seq_len = int(ids.max()) + 1 if layer.rope_type in ("dynamic", "longrope") else None
    return posenc.apply_rope(
        x,
        ids[:, None, :],
        base=layer.base,
        pairing=layer.pairing,
        scaling=layer.scaling,
        rotary_dim=layer.rotary_dim,
        seq_len=seq_len,
    )


ROPE_CASES = [
    ("llama31", 0),
    ("qwen2_yarn", 0),
    ("phi4_mini", 0),
    ("gemma3_4b", 0),
    ("gemma3_4b", 5),
    ("gemma3_5x", 11),
    ("llama4", 0),
]


@pytest.mark.parametrize("name,layer", ROPE_CASES)
def test_rotate_equals_apply_rope_numpy(schemes, name, layer):
    s = schemes[name]
    spec = s.layer(layer)
    x = _x((2, 3, 5, spec.head_dim))
    got = s.rotate(x, IDS, layer=layer)
    assert isinstance(got, np.ndarray) and got.shape == x.shape and got.dtype == np.float64
    np.testing.assert_allclose(got, _rope_ref(spec, x, IDS), rtol=0, atol=1e-12)
    # the attention factor scales the rotated features' norm; the rest pass through
    rot = spec.rotary_dim
    np.testing.assert_array_equal(got[..., rot:], x[..., rot:])
    ratio = np.linalg.norm(got[..., :rot], axis=-1) / np.linalg.norm(x[..., :rot], axis=-1)
    np.testing.assert_allclose(ratio, spec.attention_factor, rtol=1e-12)


def test_rotate_longrope_switches_factors_at_the_trained_length(schemes):
    s = schemes["phi4_mini"]
    x = _x((1, 2, 3, 128))
    short, long = np.array([[0, 1, 2]]), np.array([[0, 1, 5000]])
    spec = s.layer(0)
    for ids in (short, long):
        np.testing.assert_allclose(s.rotate(x, ids), _rope_ref(spec, x, ids), rtol=0, atol=1e-12)
    # the same first two tokens turn differently once max(position_ids) passes 4096
    assert not np.allclose(s.rotate(x, short)[..., :2, :], s.rotate(x, long)[..., :2, :])


@needs_torch
@pytest.mark.parametrize("name,layer", ROPE_CASES)
def test_rotate_equals_apply_rope_torch(schemes, name, layer):
    s = schemes[name]
    spec = s.layer(layer)
    x = torch.as_tensor(_x((2, 3, 5, spec.head_dim)))
    ids = torch.as_tensor(IDS)
    got = s.rotate(x, ids, layer=layer)
    assert isinstance(got, torch.Tensor) and got.dtype == torch.float64
    want = _rope_ref(spec, x, ids)
    torch.testing.assert_close(got, want, rtol=0, atol=1e-12)
    # float32 in, float32 out, close to the float64 answer
    got32 = s.rotate(x.float(), ids, layer=layer)
    assert got32.dtype == torch.float32
    torch.testing.assert_close(got32.double(), want, rtol=0, atol=2e-5 * float(x.abs().max()))


@pytest.mark.parametrize("lib", ["numpy", pytest.param("torch", marks=needs_torch)])
def test_rotate_is_identity_on_a_nope_layer(schemes, lib):
    s = schemes["llama4"]
    x = _x((2, 3, 5, 128))
    ids = IDS
    if lib == "torch":
        x, ids = torch.as_tensor(x), torch.as_tensor(IDS)
    got = s.rotate(x, ids, layer=3)
    assert type(got) is type(x)
    assert (_host(got) == _host(x)).all()
    assert not (_host(s.rotate(x, ids, layer=2)) == _host(x)).all()


@pytest.mark.parametrize("lib", ["numpy", pytest.param("torch", marks=needs_torch)])
def test_rotate_equals_apply_mrope(schemes, lib):
    s = schemes["qwen2_vl_5x"]
    x = _x((2, 2, 4, 128))
    ids3 = np.stack([IDS[:, :4], IDS[:, :4] // 2, IDS[:, :4] % 3])  # (3, batch, seq)
    if lib == "torch":
        x, ids3 = torch.as_tensor(x), torch.as_tensor(ids3)
    got = s.rotate(x, ids3)
    want = posenc.apply_mrope(x, ids3, [16, 24, 24], base=1e6)
    np.testing.assert_allclose(_host(got), _host(want), rtol=0, atol=1e-12)
    # (batch, seq) text ids mean t = h = w
    text = s.rotate(x, ids3[0])
    same = (
        ids3[0][None].expand(3, -1, -1) if lib == "torch" else np.broadcast_to(ids3[0], ids3.shape)
    )
    want = posenc.apply_mrope(x, same, [16, 24, 24], base=1e6)
    np.testing.assert_allclose(_host(text), _host(want), rtol=0, atol=1e-12)


@pytest.mark.parametrize("lib", ["numpy", pytest.param("torch", marks=needs_torch)])
def test_rotate_equals_apply_mla_rope(schemes, lib):
    s = schemes["deepseek_v3"]
    spec = s.layer(0)
    q = _x((2, 3, 5, 192))  # [128 no-position | 64 rotary]
    k = _x((2, 1, 5, 192), seed=1)
    ids = IDS
    if lib == "torch":
        q, k, ids = torch.as_tensor(q), torch.as_tensor(k), torch.as_tensor(IDS)
    kw = {"base": 10000.0, "pairing": "deinterleave", "scaling": spec.scaling}
    q_want, k_pe_want = posenc.apply_mla_rope(q, k[..., 128:], ids[:, None, :], **kw)
    q_got, k_got = s.rotate(q, ids), s.rotate(k, ids)
    np.testing.assert_allclose(_host(q_got), _host(q_want), rtol=0, atol=1e-12)
    np.testing.assert_allclose(_host(k_got[..., 128:]), _host(k_pe_want), atol=1e-12)
    np.testing.assert_array_equal(_host(k_got[..., :128]), _host(k[..., :128]))


def test_rotate_accepts_seq_ids_shared_by_the_batch(schemes):
    s = schemes["llama31"]
    x = _x((2, 2, 5, 128))
    np.testing.assert_array_equal(
        s.rotate(x, np.arange(5)), s.rotate(x, np.tile(np.arange(5), (2, 1)))
    )


# --- bad input -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "config,exc,name",
    [
        (["model_type", "llama"], TypeError, "config"),
        ("config.json", TypeError, "config"),
        (None, TypeError, "config"),
        (object(), TypeError, "config"),
        ({}, ValueError, "model_type"),
        ({"hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 2}, ValueError, "model_type"),
        ({"model_type": 7}, TypeError, "model_type"),
        ({**llama31(), "rope_parameters": [500000.0]}, TypeError, "rope_parameters"),
        ({**llama31(), "rope_scaling": "llama3"}, TypeError, "rope_scaling"),
        ({**llama31(), "layer_types": "full_attention"}, TypeError, "layer_types"),
        ({**llama31(), "layer_types": ["full_attention"] * 3}, ValueError, "layer_types"),
        ({**llama31(), "rope_theta": "500000"}, TypeError, "rope_theta"),
        ({**llama31(), "num_hidden_layers": 32.0}, TypeError, "num_hidden_layers"),
        ({**llama31(), "head_dim": 0}, ValueError, "head_dim"),
        ({**llama31(), "rope_scaling": {"rope_type": "bogus"}}, ValueError, "rope_type"),
        ({"model_type": "gemma3", "text_config": 5}, TypeError, "text_config"),
        ({**qwen2_vl_5x()["text_config"], "model_type": "qwen2_vl_text", "rope_parameters": {"rope_theta": 1e6, "mrope_section": [16, 24, 30]}}, ValueError, "mrope_section"),
        ({**llama4()["text_config"], "no_rope_layers": [1, 0]}, ValueError, "no_rope_layers"),
    ],
    ids=lambda v: type(v).__name__ if not isinstance(v, str) else v,
)  # fmt: skip
def test_describe_refuses_bad_configs_by_name(config, exc, name):
    with pytest.raises(exc) as info:
        hf.describe(config)
    assert name in str(info.value), str(info.value)


SMALL = {"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 2}
VL = {**SMALL, "model_type": "qwen2_vl_text"}


def _self_nested():
    cfg = {"model_type": "gemma3"}
    cfg["text_config"] = cfg
    return cfg


@pytest.mark.parametrize(
    "call,exc,name",
    [
        (lambda: hf.describe({**SMALL, "partial_rotary_factor": "0.5"}), TypeError, "partial_rotary_factor"),
        (lambda: hf.describe({**SMALL, "partial_rotary_factor": True}), TypeError, "partial_rotary_factor"),
        (lambda: hf.describe({**SMALL, "partial_rotary_factor": math.nan}), ValueError, "partial_rotary_factor"),
        (lambda: hf.describe({**SMALL, "num_attention_heads": 3}), ValueError, "num_attention_heads"),
        (lambda: hf.describe({**SMALL, "num_attention_heads": 128}), ValueError, "num_attention_heads"),
        (lambda: hf.describe({**VL, "rope_parameters": {"mrope_section": "233"}}), TypeError, "mrope_section"),
        (lambda: hf.describe({**VL, "rope_parameters": {"mrope_section": [2.5, 2.5, 3]}}), TypeError, "mrope_section"),
        (lambda: hf.describe({**VL, "rope_parameters": {"mrope_section": [-2, 5, 5]}}), ValueError, "mrope_section"),
        (lambda: hf.describe(_self_nested()), ValueError, "text_config"),
        (lambda: hf.posenc_call({"model_type": "llama"}), TypeError, "scheme"),
    ],
    ids=["partial-str", "partial-bool", "partial-nan", "heads-not-dividing", "heads-above-hidden",
         "mrope-str", "mrope-float", "mrope-negative", "self-nested", "posenc_call-dict"],
)  # fmt: skip
def test_describe_refuses_hostile_keys(call, exc, name):
    with pytest.raises(exc) as info:
        call()
    assert name in str(info.value), str(info.value)


def test_what_a_config_leaves_out_takes_its_class_defaults():
    # as transformers builds it: LlamaConfig's 32 layers of 4096 / 32 heads; a Gemma 3 without
    # text_config gets a default Gemma3TextConfig (26 layers, head_dim 256, bases 1e6 / 1e4)
    llama = hf.describe(SimpleNamespace(model_type="llama"))
    assert (llama.num_layers, llama.layer(0).head_dim, llama.layer(0).base) == (32, 128, 1e4)
    assert "LlamaConfig" in llama.sources["layers"]
    gemma = hf.describe(
        {"model_type": "gemma3", "architectures": ["Gemma3ForConditionalGeneration"]}
    )
    assert (gemma.num_layers, gemma.layer(0).head_dim) == (26, 256)
    assert (gemma.layer(5).base, gemma.layer(0).base) == (1e6, 1e4)


def test_text_config_without_model_type_is_read_as_the_text_model():
    text = {k: v for k, v in gemma3_4b_explicit()["text_config"].items() if k != "model_type"}
    s = hf.describe({"model_type": "gemma3", "text_config": text})
    assert s.layer(5).base == 1e6 and s.layer(0).base == 1e4


def test_describe_refuses_contradictory_rope_keys_naming_both():
    cfg = {**llama31(), "rope_parameters": {"rope_type": "yarn", "factor": 4.0,
                                           "rope_theta": 500000.0}}  # fmt: skip
    with pytest.raises(ValueError) as info:
        hf.describe(cfg)
    assert "rope_parameters" in str(info.value) and "rope_scaling" in str(info.value)


def test_describe_reads_a_config_object_like_its_dict(schemes):
    obj = SimpleNamespace(**llama31())
    assert hf.describe(obj).layers == schemes["llama31"].layers


@pytest.fixture(scope="module")
def llama():
    return hf.describe(llama31())


X = _x((2, 3, 5, 128))


@pytest.mark.parametrize(
    "kwargs,exc,name",
    [
        ({"x": X[0]}, ValueError, "x"),
        ({"x": X[..., :64]}, ValueError, "x"),
        ({"x": X.astype(np.int64)}, TypeError, "x"),
        ({"x": "x"}, TypeError, "x"),
        ({"position_ids": IDS[:, :4]}, ValueError, "position_ids"),
        ({"position_ids": np.stack([IDS] * 3)}, ValueError, "position_ids"),
        ({"position_ids": np.zeros((3, 5), dtype=np.int64)}, ValueError, "position_ids"),
        ({"layer": 32}, ValueError, "layer"),
        ({"layer": -33}, ValueError, "layer"),
        ({"layer": "0"}, TypeError, "layer"),
        ({"layer": True}, TypeError, "layer"),
    ],
    ids=str,
)
def test_rotate_refuses_bad_input_by_name(llama, kwargs, exc, name):
    call = {"x": X, "position_ids": IDS, "layer": 0, **kwargs}
    with pytest.raises(exc) as info:
        llama.rotate(call["x"], call["position_ids"], layer=call["layer"])
    assert name in str(info.value), str(info.value)


def test_rotate_takes_fractional_position_ids_as_documented(llama):
    # transformers turns position_ids into float32 angles: fractional ids are rotated as such
    out = llama.rotate(X, IDS + 0.5)
    assert np.allclose(out, llama.rotate(X, IDS), atol=1e-3) is False
    assert np.isfinite(out).all()


@needs_torch
def test_rotate_refuses_numpy_x_with_tensor_ids(llama):
    with pytest.raises(TypeError, match="position_ids"):
        llama.rotate(X, torch.as_tensor(IDS))


def test_rotate_refuses_wrong_mrope_ids_by_name(schemes):
    x = _x((2, 2, 4, 128))
    with pytest.raises(ValueError, match="position_ids"):
        schemes["qwen2_vl_5x"].rotate(x, np.zeros((2, 2, 4), dtype=np.int64))


# --- imports ---------------------------------------------------------------------------------


def test_importing_posenc_hf_imports_neither_torch_nor_transformers():
    code = (
        "import posenc.hf, sys; "
        "assert 'torch' not in sys.modules and 'transformers' not in sys.modules, "
        "sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'transformers'))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


# --- read as transformers reads it (issues 20 and 21) -----------------------------------------


def _hf_inv_freq(cfg_dict, seq_len=None):
    """transformers' own frequencies and attention factor for a config dict (its config class,
    its rope init function)."""
    require("transformers")
    import hf_corpus

    obj = hf_corpus.hf_config(cfg_dict)
    rc, *_ = hf_corpus._rotary_reference(obj)
    rot = rc(config=obj.get_text_config())
    return rot.inv_freq.double().cpu().numpy(), float(rot.attention_scaling)


PHI3_TINY = {"model_type": "phi3", "hidden_size": 64, "num_attention_heads": 4,
             "num_hidden_layers": 2, "max_position_embeddings": 64,
             "original_max_position_embeddings": 8,
             "rope_scaling": {"type": "longrope", "short_factor": [1.0] * 8,
                              "long_factor": [2.0] * 8, "original_max_position_embeddings": 16}}  # fmt: skip


def test_top_level_original_length_beats_the_nested_one():
    # issue 21, item 2: transformers' standardize_rope_params gives the top-level key priority
    # (factor 64 / 8, attention sqrt(1 + ln 8 / ln 8) = sqrt 2); describe used the nested 16
    s = hf.describe(PHI3_TINY)
    layer = s.layer(0)
    assert layer.scaling["original_max_position_embeddings"] == 8
    assert layer.attention_factor == pytest.approx(math.sqrt(2), rel=1e-15)
    inv, factor = _hf_inv_freq(PHI3_TINY)
    assert factor == pytest.approx(layer.attention_factor, rel=1e-12)
    # posenc.layer_rope_parameters reads it the same way (one reading)
    lr = posenc.layer_rope_parameters(PHI3_TINY, 0)
    assert lr.scaling["original_max_position_embeddings"] == 8


def test_a_nested_entry_keeps_its_own_original_length():
    # nested rope_parameters: transformers fills original_max_position_embeddings per entry
    # with setdefault (the top-level key does not override it)
    cfg = {"model_type": "gemma3_text", "num_hidden_layers": 6, "head_dim": 16,
           "hidden_size": 64, "num_attention_heads": 4, "max_position_embeddings": 64,
           "original_max_position_embeddings": 8, "sliding_window": 16,
           "layer_types": ["sliding_attention"] * 5 + ["full_attention"],
           "rope_parameters": {
               "full_attention": {"rope_type": "yarn", "factor": 4.0, "rope_theta": 1e6,
                                  "original_max_position_embeddings": 16},
               "sliding_attention": {"rope_type": "default", "rope_theta": 1e4}}}  # fmt: skip
    assert hf.describe(cfg).layer(5).scaling["original_max_position_embeddings"] == 16


@pytest.mark.parametrize(
    "cfg,rotary_dim",
    [
        # Llama's default RoPE spans the whole head: partial_rotary_factor is not read
        ({"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4,
          "num_hidden_layers": 2, "partial_rotary_factor": 0.5}, 16),
        # GPT-NeoX reads rotary_pct (default 0.25), not partial_rotary_factor
        ({"model_type": "gpt_neox", "hidden_size": 64, "num_attention_heads": 4,
          "num_hidden_layers": 2, "partial_rotary_factor": 0.5}, 4),
        ({"model_type": "gpt_neox", "hidden_size": 64, "num_attention_heads": 4,
          "num_hidden_layers": 2, "rotary_pct": 0.5}, 8),
        # Cohere2 does not read rotary_pct (its config.json has one)
        ({"model_type": "cohere2", "hidden_size": 64, "num_attention_heads": 4,
          "num_hidden_layers": 4, "rotary_pct": 0.5, "sliding_window": 8}, 16),
        # Phi reads partial_rotary_factor
        ({"model_type": "phi", "hidden_size": 64, "num_attention_heads": 4,
          "num_hidden_layers": 2, "partial_rotary_factor": 0.5}, 8),
    ],
    ids=["llama", "neox-partial-key", "neox-rotary_pct", "cohere2-rotary_pct", "phi"],
)  # fmt: skip
def test_the_rotated_width_is_the_model_codes(cfg, rotary_dim):
    # issue 21, item 3 (and issue 20): partial_rotary_factor applied where the model ignores it
    s = hf.describe(cfg)
    assert s.layer(0).rotary_dim == rotary_dim
    inv, _ = _hf_inv_freq(cfg)
    assert len(inv) == rotary_dim // 2


def test_gpt_neox_reads_rotary_emb_base():
    cfg = {"model_type": "gpt_neox", "hidden_size": 64, "num_attention_heads": 4,
           "num_hidden_layers": 2, "rotary_emb_base": 25000, "rope_theta": 10000.0}  # fmt: skip
    s = hf.describe(cfg)
    assert s.layer(0).base == 25000.0 and s.sources["base"] == "config['rotary_emb_base']"
    inv, _ = _hf_inv_freq(cfg)
    np.testing.assert_allclose(s.layer(0).inv_freq()[0], inv, rtol=1e-6)


def test_a_scaled_partial_factor_on_a_model_that_rotates_the_whole_head_is_refused():
    # transformers' yarn frequencies span half the head, Llama's apply rotates all of it: the
    # model fails on this config; posenc refuses it by name rather than describe either half
    cfg = {"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4,
           "num_hidden_layers": 2, "partial_rotary_factor": 0.5,
           "rope_scaling": {"rope_type": "linear", "factor": 2.0}}  # fmt: skip
    with pytest.raises(ValueError, match=r"partial_rotary_factor.*whole head"):
        hf.describe(cfg)


@pytest.mark.parametrize(
    "cfg,key",
    [
        ({"model_type": "falcon", "alibi": "false"}, "alibi"),
        ({**deepseek_v3(), "rope_interleave": "false"}, "rope_interleave"),
        ({**deepseek_v3(), "rope_interleave": 0}, "rope_interleave"),
        ({"model_type": "roformer", "rotary_value": "true"}, "rotary_value"),
    ],
    ids=["alibi-str", "interleave-str", "interleave-int", "rotary_value-str"],
)
def test_boolean_keys_must_be_booleans(cfg, key):
    # issue 21: read by truthiness, "false" meant true; transformers' strict classes refuse it
    with pytest.raises(TypeError, match=rf"\['{key}'\] must be true or false"):
        hf.describe(cfg)


def test_deepseek_v3_without_rope_interleave_takes_the_class_default():
    # issue 20: DeepseekV3Config defaults rope_interleave to True; the dict used to read False
    cfg = {k: v for k, v in deepseek_v3().items() if k != "rope_interleave"}
    s = hf.describe(cfg)
    assert s.layer(0).pairing == "deinterleave"
    assert "DeepseekV3Config" in s.sources["pairing"]
    assert hf.describe({**cfg, "rope_interleave": False}).layer(0).pairing == "half"


def test_aliased_keys_read_as_their_standard_names():
    # issue 20: GPT-J's n_layer / n_embd / n_head / n_positions (attribute_map)
    s = hf.describe({"model_type": "gptj", "n_layer": 3, "n_embd": 64, "n_head": 4,
                     "n_positions": 128, "rotary_dim": 8})  # fmt: skip
    assert (s.num_layers, s.layer(0).head_dim, s.layer(0).rotary_dim) == (3, 16, 8)
    assert s.max_position_embeddings == 128
    assert s.sources["layers"] == "config['n_layer']"


def test_every_value_says_where_it_came_from():
    # a key of the file, the config class's default, or the model's code
    s = hf.describe({"model_type": "llava", "text_config": {"model_type": "llama",
                     "max_position_embeddings": 4096}})  # fmt: skip
    assert "LlamaConfig's default" in s.sources["layers"]
    assert "LlamaConfig's default" in s.sources["base"]
    assert s.num_layers == 32 and s.layer(0).head_dim == 128


def test_explain_says_when_the_installed_transformers_is_not_the_verified_one(monkeypatch):
    # issue 20, goal 5: the record says 5.x; a newer transformers may have moved the code
    import posenc.hf.explain as explain_module

    s = hf.describe(llama31())
    version = hf.registry.verified_on("llama")
    assert version == hf.TRANSFORMERS_VERSION
    monkeypatch.setattr(explain_module, "installed_transformers", lambda: version)
    assert "is installed" not in s.explain("en")
    monkeypatch.setattr(explain_module, "installed_transformers", lambda: "99.0.0")
    assert f"Verified against transformers {version}; transformers 99.0.0 is installed" in (
        s.explain("en")
    )
    assert "transformers 99.0.0" in s.explain("zh") and "atlas-check" in s.explain("zh")


# --- explain: pitfalls and sources chosen by the config (issue 20, goal 6) --------------------


def test_pitfalls_follow_the_config_not_the_convention(schemes):
    from posenc.hf.explain import _pitfalls as pitfalls

    def scale(name):
        return [p for p in pitfalls(schemes[name]) if "attention factor" in p]

    # Llama 3.1 (llama3 scaling): attention factor 1, so no attention-factor pitfall
    assert schemes["llama31"].layer(0).attention_factor == 1.0 and scale("llama31") == []
    # YaRN: the factor and its square, as computed
    (yarn,) = scale("qwen2_yarn")
    f = schemes["qwen2_yarn"].layer(0).attention_factor
    assert f"{f:.6g}" in yarn and f"{f * f:.6g}" in yarn and "yarn" in yarn
    # LongRoPE (Phi-4-mini): the factor, and the switch of the whole sequence to long_factor
    (longrope,) = scale("phi4_mini")
    assert "longrope" in longrope
    switch = [p for p in pitfalls(schemes["phi4_mini"]) if "long_factor" in p]
    assert len(switch) == 1 and "= 4096" in switch[0]
    assert not any("long_factor" in p for p in pitfalls(schemes["llama31"]))
    dynamic = hf.describe({**llama31(), "rope_scaling": {"rope_type": "dynamic", "factor": 2.0}})
    assert any("Dynamic NTK" in p for p in pitfalls(dynamic))
    assert [p for p in pitfalls(dynamic, "zh") if "动态 NTK" in p]
    # the text prints the same list
    text = schemes["phi4_mini"].explain("en")
    assert all(p in text for p in pitfalls(schemes["phi4_mini"]))


def test_attention_factor_says_where_it_came_from(schemes):
    def line(name, lang="en"):
        text = schemes[name].explain(lang)
        return next(x for x in text.splitlines() if x.strip().startswith("attention_factor ="))

    assert line("llama31").endswith("<- 1 (model code)")
    assert "sqrt(1 + ln(factor) / ln(original_max_position_embeddings))" in line("phi4_mini")
    assert "0.1 * ln(factor) + 1 (model code)" in line("qwen2_yarn")
    assert line("qwen2_yarn", "zh").endswith("0.1 * ln(factor) + 1（模型代码）")


def test_zh_source_annotations_are_chinese():
    """--lang zh left "(absent: LlamaConfig's default)" and "(model code)" in English."""
    s = hf.describe({"model_type": "llava", "text_config": {"model_type": "llama"}})
    en, zh = s.explain("en"), s.explain("zh")
    assert "(absent: LlamaConfig's default)" in en
    assert "（文件中没有：LlamaConfig 的默认值）" in zh
    sources = [x.split("<-", 1)[1] for x in zh.splitlines() if "<-" in x]
    assert sources and not [x for x in sources if re.search(r"default|absent|model code", x)]


@pytest.mark.parametrize("mscale_all_dim,multiplier", [(1.0, 1.874), (0.707, 1.590)])
def test_mla_softmax_scale_is_computed_for_the_config(mscale_all_dim, multiplier):
    """issue 20, goal 4: the MLA softmax-scale multiplier printed, not only named (DeepSeek-V3
    x1.874, DeepSeek-V2-Lite's mscale_all_dim 0.707 x1.590), equal to transformers' own."""
    from posenc.hf.explain import _pitfalls as pitfalls

    cfg = deepseek_v3()
    cfg["rope_scaling"] = {**cfg["rope_scaling"], "mscale_all_dim": mscale_all_dim}
    (line,) = [p for p in pitfalls(hf.describe(cfg)) if p.startswith("The softmax scale is")]
    g = 0.1 * mscale_all_dim * math.log(40) + 1
    assert f"{g * g:.4g}" == f"{multiplier:.4g}" and f"× {multiplier:.4g}" in line
    scale = posenc.mla_softmax_scale(128, 64, scaling=cfg["rope_scaling"])
    assert f"{scale:.6g}" in line
    modeling = require("transformers.models.deepseek_v3.modeling_deepseek_v3")
    want = modeling.yarn_apply_mscale({**cfg["rope_scaling"], "rope_type": "yarn"}, 192**-0.5)
    assert math.isclose(scale, want, rel_tol=1e-12)
    # no mscale_all_dim, or no MLA: no such line
    plain = {**cfg, "rope_scaling": {**cfg["rope_scaling"], "mscale_all_dim": 0}}
    assert not [p for p in pitfalls(hf.describe(plain)) if p.startswith("The softmax scale")]
    assert not [p for p in pitfalls(hf.describe(llama31())) if p.startswith("The softmax scale")]

"""posenc.hf: conventions beyond "every head of q and k, after their projections, in bands".

- ``hidden_rope`` (wav2vec2-conformer, wav2vec2-bert with ``position_embeddings_type="rotary"``):
  the hidden states, split into heads, rotate before W_q and W_k; other settings are refused.
- ``partial_qkv`` (CLVP): the first ``max(projection_dim // (2 * heads), 32)`` features of q, k
  and v rotate; ``use_rotary_embedding=False`` leaves every layer without positions.
- RoFormer's ``rotary_value``: values rotate too.
- ``one_head`` (Qwen2.5-Omni's DiT): only the first attention head rotates, deinterleaved.
- ``mrope_2d`` (NeoMME): two position-id axes, row and column taking turns pair by pair.
- ``mrope_hw_t`` (Ernie 4.5 VL): adjacent pairs, h and w in turn, then t.

Expected values are worked out here from the config (the comparison against transformers' own
code is the walk, tests/hf_walk_extra.py probes).
"""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import posenc
import posenc.hf as hf

try:
    import torch
except ImportError:  # pragma: no cover - torch is a dev dependency
    torch = None

needs_torch = pytest.mark.skipif(
    torch is None and os.environ.get("CI") != "true", reason="torch is not installed"
)


def _host(a) -> np.ndarray:
    """A NumPy copy of an array or of a tensor on any device (the cuda leg's tensors live there)."""
    return a.detach().cpu().numpy() if hasattr(a, "detach") else np.asarray(a)


def conformer_rope():
    """facebook/wav2vec2-conformer-rope-large-960h-ft (the keys that matter)."""
    return {
        "model_type": "wav2vec2-conformer",
        "hidden_size": 1024,
        "num_attention_heads": 16,
        "num_hidden_layers": 24,
        "position_embeddings_type": "rotary",
        "rotary_embedding_base": 10000,
        "max_source_positions": 5000,
    }


def w2v_bert():
    """facebook/w2v-bert-2.0 (its default relative_key positions)."""
    return {
        "model_type": "wav2vec2-bert",
        "hidden_size": 1024,
        "num_attention_heads": 16,
        "num_hidden_layers": 24,
        "position_embeddings_type": "relative_key",
        "left_max_position_embeddings": 64,
        "right_max_position_embeddings": 8,
        "rotary_embedding_base": 10000,
    }


def clvp():
    """A CLVP composite (susnato/clvp_dev-like): text and speech encoders, a decoder."""
    enc = {
        "model_type": "clvp_encoder",
        "hidden_size": 768,
        "num_attention_heads": 12,
        "num_hidden_layers": 20,
        "projection_dim": 768,
        "use_rotary_embedding": True,
    }
    return {
        "model_type": "clvp",
        "text_config": enc,
        "speech_config": dict(enc),
        "decoder_config": {"model_type": "clvp_decoder", "hidden_size": 1024},
    }


def test_conformer_rotary_reads_the_hidden_state_rotation():
    s = hf.describe(conformer_rope())
    assert (s.convention, s.kind, s.applies_to, s.known) == ("hidden_rope", "rope", "hidden", True)
    layer = s.layer(23)
    assert (layer.pairing, layer.head_dim, layer.rotary_dim, layer.base) == (
        "half",
        1024 // 16,
        1024 // 16,
        10000.0,
    )
    assert s.sources["base"] == "config['rotary_embedding_base']"
    assert s.sources["selected by"] == "config['position_embeddings_type'] = 'rotary'"
    cfg = {**conformer_rope(), "rotary_embedding_base": 5000}
    assert hf.describe(cfg).layer(0).base == 5000.0


def test_hidden_rotation_is_apply_rope_on_the_hidden_states_as_heads():
    s = hf.describe({**conformer_rope(), "hidden_size": 64, "num_attention_heads": 4})
    rng = np.random.default_rng(0)
    h = rng.standard_normal((2, 7, 64))  # (batch, seq, hidden)
    heads = h.reshape(2, 7, 4, 16).transpose(0, 2, 1, 3)
    got = s.rotate(heads, np.arange(7))
    want = posenc.apply_rope(heads, np.arange(7)[None, None], base=1e4, pairing="half")
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    assert not np.allclose(got, heads)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_explain_names_the_hidden_state_pitfall(lang):
    text = hf.describe(conformer_rope()).explain(lang)
    if lang == "en":
        assert "Rotates: the hidden states split into heads, before W_q and W_k" in text
        assert "q·k is not a function of the offset alone" in text
        assert "rotary_embedding_base, not rope_theta" in text
    else:
        assert "旋转对象：分头后的隐藏状态，在 W_q 与 W_k 之前" in text
        assert "q·k 不只依赖位置偏移" in text
    assert "posenc.apply_rope(h, position_ids, base=10000, pairing='half')  # h " in text
    assert ("# h = hidden" if lang == "en" else "# h 为隐藏状态") in text
    assert "position_embeddings_type" in text and "pos_conv_embed" in text


def test_to_dict_says_what_rotates():
    d = json.loads(json.dumps(hf.describe(conformer_rope()).to_dict()))
    assert d["applies_to"] == "hidden" and d["convention"] == "hidden_rope"
    assert hf.describe(clvp()).to_dict()["applies_to"] == "qkv"
    llama = {"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4,
             "num_hidden_layers": 2}  # fmt: skip
    assert hf.describe(llama).to_dict()["applies_to"] == "qk"


@pytest.mark.parametrize(
    "config,got",
    [
        (w2v_bert(), "'relative_key'"),
        ({**w2v_bert(), "position_embeddings_type": "relative"}, "'relative'"),
        ({**w2v_bert(), "position_embeddings_type": None}, "None"),
        ({**conformer_rope(), "position_embeddings_type": "relative"}, "'relative'"),
        (
            {k: v for k, v in conformer_rope().items() if k != "position_embeddings_type"},
            "'relative'",
        ),  # fmt: skip  (the config class's default)
        ({**conformer_rope(), "position_embeddings_type": 3}, "3"),
    ],
    ids=["w2v-bert-default", "relative", "none", "conformer-relative", "conformer-missing", "int"],
)
def test_other_position_embeddings_types_are_refused_by_name(config, got):
    with pytest.raises(ValueError) as info:
        hf.describe(config)
    msg = str(info.value)
    assert "['position_embeddings_type']" in msg and "must be 'rotary'" in msg
    assert f"got {got}:" in msg


def test_w2v_bert_rotary_option_is_described():
    s = hf.describe({**w2v_bert(), "position_embeddings_type": "rotary"})
    assert (s.convention, s.applies_to, s.layer(0).rotary_dim) == ("hidden_rope", "hidden", 64)
    assert "adapter" in " ".join(s.notes)


def test_clvp_rotates_part_of_q_k_and_v():
    s = hf.describe(clvp())
    assert (s.model_type, s.convention, s.applies_to, s.num_layers) == ("clvp", "partial_qkv",
                                                                         "qkv", 20)  # fmt: skip
    layer = s.layer(0)
    assert (layer.head_dim, layer.rotary_dim, layer.base) == (768 // 12, max(768 // 24, 32), 1e4)
    assert s.sources["rotary_dim"].startswith("max(config['text_config']['projection_dim'] // ")
    wide = clvp()
    wide["text_config"] = {**wide["text_config"], "projection_dim": 1536}
    assert hf.describe(wide).layer(0).rotary_dim == 1536 // 24 == 64
    rng = np.random.default_rng(1)
    v = rng.standard_normal((2, 12, 5, 64))
    ids = np.stack([np.arange(5), np.arange(5) + 3])
    want = posenc.apply_rope(v, ids[:, None], base=1e4, pairing="half", rotary_dim=32)
    np.testing.assert_allclose(s.rotate(v, ids), want, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(s.rotate(v, ids)[..., 32:], v[..., 32:])


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_explain_says_values_rotate_too(lang):
    text = hf.describe(clvp()).explain(lang)
    assert ("Values rotate too" if lang == "en" else "值向量也要旋转") in text
    assert ("queries, keys and values" if lang == "en" else "查询、键与值") in text
    assert "posenc.apply_rope(x, position_ids, base=10000, pairing='half', rotary_dim=32)" in text
    assert ("# x = q, k and v alike" if lang == "en" else "# x 为 q、k、v，一样旋转") in text
    assert "speech_config" in text


def test_clvp_without_rotary_embedding_has_no_positions():
    enc = {**clvp()["text_config"], "use_rotary_embedding": False}
    s = hf.describe(enc)
    assert {layer.kind for layer in s.layers} == {"nope"}
    x = np.ones((1, 2, 3, 64))
    assert s.rotate(x, np.arange(3)) is x
    assert "config['use_rotary_embedding'] = False" in s.explain()


@pytest.mark.parametrize(
    "change,exc,words",
    [
        ({"projection_dim": 4096}, ValueError, ["head_dim = 64", "projection_dim"]),
        ({"projection_dim": "768"}, TypeError, ["config['projection_dim']", "int"]),
        (
            {"num_attention_heads": None, "hidden_size": None, "head_dim": 64},
            ValueError,
            ["'projection_dim' and 'num_attention_heads'"],
        ),  # fmt: skip
    ],
    ids=["too-wide", "not-int", "no-heads"],
)
def test_clvp_bad_widths_are_refused_by_name(change, exc, words):
    enc = {**clvp()["text_config"], **change}
    with pytest.raises(exc) as info:
        hf.describe(enc)
    for w in words:
        assert w in str(info.value)


def test_roformer_rotary_value_says_values_rotate():
    cfg = {"model_type": "roformer", "hidden_size": 64, "num_attention_heads": 4,
           "num_hidden_layers": 2}  # fmt: skip
    assert hf.describe(cfg).applies_to == "qk"
    s = hf.describe({**cfg, "rotary_value": True})
    assert s.applies_to == "qkv" and s.sources["values rotate"] == "config['rotary_value']"
    assert "Rotates: queries, keys and values" in s.explain()
    assert "值向量也按相同角度旋转" in s.explain("zh")


def test_every_convention_says_what_it_rotates():
    from posenc.hf.schema import APPLIES_TO, ROTARY_KINDS

    for conv in hf.CONVENTIONS.values():
        assert conv.applies_to in APPLIES_TO, conv.name
        if conv.kind not in ROTARY_KINDS:
            assert conv.applies_to == "qk", conv.name


def token2wav():
    """Qwen/Qwen2.5-Omni-7B's token2wav_config (the DiT's keys that matter)."""
    dit = {
        "model_type": "qwen2_5_omni_dit",
        "hidden_size": 1024,
        "num_hidden_layers": 22,
        "num_attention_heads": 16,
        "head_dim": 64,
        "rope_parameters": {"rope_theta": 10000.0, "rope_type": "default"},
        "max_position_embeddings": 32768,
    }
    return {"model_type": "qwen2_5_omni_token2wav", "dit_config": dit,
            "bigvgan_config": {"model_type": "qwen2_5_omni_bigvgan"}}  # fmt: skip


def test_dit_rotates_its_first_head_only():
    s = hf.describe(token2wav())
    assert (s.convention, s.num_layers, s.applies_to) == ("one_head", 22, "qk")
    layer = s.layer(21)
    assert (layer.rotated_heads, layer.pairing, layer.rotary_dim) == (1, "deinterleave", 64)
    assert s.to_dict()["layers"][0]["rotated_heads"] == 1
    assert hf.describe({"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4,
                        "num_hidden_layers": 1}).layer(0).rotated_heads is None  # fmt: skip


@pytest.mark.parametrize("lib", ["numpy", pytest.param("torch", marks=needs_torch)])
def test_dit_rotation_is_deinterleaved_rope_on_head_zero(lib):
    s = hf.describe(token2wav())
    rng = np.random.default_rng(2)
    q = rng.standard_normal((2, 16, 5, 64))
    ids = np.stack([np.arange(5), np.arange(5) + 4])
    head0 = np.concatenate((q[:, :1, :, 0::2], q[:, :1, :, 1::2]), -1)  # evens, then odds
    want = q.copy()
    want[:, :1] = posenc.apply_rope(head0, ids[:, None], base=1e4, pairing="half")
    x = q if lib == "numpy" else torch.as_tensor(q)
    got = s.rotate(x, ids)
    got = got if lib == "numpy" else got.cpu().numpy()
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(got[:, 1:], q[:, 1:])


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_explain_says_one_head_rotates(lang):
    text = hf.describe(token2wav()).explain(lang)
    first = "Only the first attention head" if lang == "en" else "只有 q、k 的第一个注意力头旋转"
    assert first in text
    assert (
        "rotated_heads = 1  <- model code" if lang == "en" else "rotated_heads = 1  <- 模型代码"
    ) in text
    assert "posenc.hf.describe(config).rotate(q, position_ids, layer=0)" in text
    assert "dit_config" in text


def neomme():
    """A NeoMME config.json (5.x spelling: rope_parameters keyed by layer type)."""
    return {
        "model_type": "neomme",
        "hidden_size": 1024,
        "num_attention_heads": 16,
        "num_key_value_heads": 4,
        "head_dim": 64,
        "num_hidden_layers": 6,
        "layer_types": ["sliding_attention"] * 5 + ["full_attention"],
        "rope_parameters": {
            "sliding_attention": {
                "rope_type": "default",
                "rope_theta": 10000.0,
                "partial_rotary_factor": 1.0,
            },
            "full_attention": {
                "rope_type": "default",
                "rope_theta": 1000000.0,
                "partial_rotary_factor": 0.25,
            },
        },  # fmt: skip
        "sliding_window": 256,
        "max_position_embeddings": 16384,
    }


def _two_axis_oracle(x, ids, rot, base):
    """Pair j of the first ``rot`` features (rotate_half: (j, j + rot/2)) turns by
    ids[j % 2] * base ** (-2j / rot); the rest pass through."""
    out = x.copy()
    half = rot // 2
    for j in range(half):
        angle = ids[j % 2] * base ** (-2 * j / rot)  # (batch, seq)
        c, s = np.cos(angle)[:, None], np.sin(angle)[:, None]
        a, b = x[..., j], x[..., j + half]
        out[..., j], out[..., j + half] = a * c - b * s, b * c + a * s
    return out


def test_neomme_two_axis_mrope_per_layer_type():
    s = hf.describe(neomme())
    assert (s.convention, s.kind) == ("mrope_2d", "mrope")
    local, full = s.layer(0), s.layer(5)
    assert (local.rotary_dim, local.mrope_section, local.base) == (64, (16, 16), 1e4)
    assert (full.rotary_dim, full.mrope_section, full.base) == (16, (4, 4), 1e6)
    assert local.window == 256 and full.window is None
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 16, 5, 64))
    ids = np.stack([np.stack([np.arange(5), np.arange(5) + 2]), rng.integers(0, 9, (2, 5))])
    for layer in (local, full):
        want = _two_axis_oracle(x, ids, layer.rotary_dim, layer.base)
        np.testing.assert_allclose(s.rotate(x, ids, layer=layer.index), want, atol=1e-12)
    text_ids = np.stack([np.arange(5), np.arange(5) + 2])  # text: both axes the token index
    want = posenc.apply_rope(x, text_ids[:, None], base=1e6, pairing="half", rotary_dim=16)
    np.testing.assert_allclose(s.rotate(x, text_ids, layer=5), want, atol=1e-12)


def test_neomme_refuses_three_axis_ids_by_name():
    s = hf.describe(neomme())
    x = np.zeros((2, 16, 5, 64))
    with pytest.raises(ValueError, match=r"position_ids must have shape \(2, 2, 5\) or \(2, 5\)"):
        s.rotate(x, np.zeros((3, 2, 5), dtype=int))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_explain_names_the_two_axes(lang):
    text = hf.describe(neomme()).explain(lang)
    assert ("pair j turns by the row id when j is even" if lang == "en"
            else "为偶数时按行 id 旋转") in text  # fmt: skip
    assert ("mrope_section = (4, 4)  <- model code (pairs alternate row, column)" if lang == "en"
            else "mrope_section = (4, 4)  <- 模型代码（频率对按行、列交替）") in text  # fmt: skip
    assert "posenc.hf.describe(config).rotate(q, position_ids, layer=5)" in text


def ernie_vl():
    """baidu/ERNIE-4.5-VL-28B-A3B-like (transformers 5.x spelling: text_config)."""
    text = {
        "model_type": "ernie4_5_vl_moe_text",
        "hidden_size": 2560,
        "num_attention_heads": 20,
        "num_key_value_heads": 4,
        "head_dim": 128,
        "num_hidden_layers": 28,
        "rope_parameters": {"rope_type": "default", "rope_theta": 500000.0,
                            "mrope_section": [22, 22, 20]},
        "max_position_embeddings": 131072,
    }  # fmt: skip
    return {"model_type": "ernie4_5_vl_moe", "text_config": text}


def test_ernie_vl_h_and_w_take_turns_then_t():
    s = hf.describe(ernie_vl())
    layer = s.layer(0)
    assert (s.convention, layer.pairing, layer.mrope_layout) == ("mrope_hw_t", "interleaved",
                                                                 "hw_then_t")  # fmt: skip
    assert layer.mrope_section == (22, 22, 20) and layer.base == 5e5
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 3, 5, 128))
    ids = rng.integers(0, 50, (3, 2, 5))  # t, h, w
    inv = 5e5 ** (-np.arange(0, 128, 2) / 128)
    want = x.copy()
    for p in range(64):  # pair (2p, 2p + 1): its own frequency, axis h / w in turn, then t
        axis = (1 + p % 2) if p < 44 else 0
        angle = ids[axis][:, None] * inv[p]
        c, sn = np.cos(angle), np.sin(angle)
        a, b = x[..., 2 * p], x[..., 2 * p + 1]
        want[..., 2 * p], want[..., 2 * p + 1] = a * c - b * sn, b * c + a * sn
    np.testing.assert_allclose(s.rotate(x, ids), want, atol=1e-11)


def test_ernie_vl_default_section_and_unequal_hw_refused():
    cfg = ernie_vl()
    del cfg["text_config"]["rope_parameters"]["mrope_section"]
    s = hf.describe(cfg)
    assert s.layer(0).mrope_section == (22, 22, 20)
    assert s.sources["mrope_section"] == "default [22, 22, 20] (model code)"
    cfg["text_config"]["rope_parameters"]["mrope_section"] = [24, 20, 20]
    with pytest.raises(ValueError, match=r"\['mrope_section'\] must give h and w the same"):
        hf.describe(cfg)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_explain_names_the_ernie_layout(lang):
    text = hf.describe(ernie_vl()).explain(lang)
    assert "mrope_layout = 'hw_then_t'" in text
    assert ("the even ones turn by the h id" if lang == "en" else "偶数对按 h id") in text
    assert "posenc.hf.describe(config).rotate(q, position_ids, layer=0)" in text


def hunyuan_dense():
    """tencent/Hunyuan-7B-Instruct-like: NTK-alpha spelled as rope_scaling type 'dynamic'."""
    return {
        "model_type": "hunyuan_v1_dense",
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "num_hidden_layers": 32,
        "head_dim": 128,
        "max_position_embeddings": 32768,
        "rope_theta": 10000.0,
        "rope_scaling": {"alpha": 1000.0, "beta_fast": 32, "beta_slow": 1, "factor": 1.0,
                         "mscale": 1.0, "mscale_all_dim": 1.0, "type": "dynamic"},
    }  # fmt: skip


def test_hunyuan_ntk_alpha_is_a_static_base():
    s = hf.describe(hunyuan_dense())
    layer = s.layer(0)
    base = 1e4 * 1000.0 ** (128 / 126)
    assert (layer.rope_type, layer.scaling) == ("default", None)
    assert layer.base == pytest.approx(base, rel=1e-15)
    assert "alpha" not in s.ignored_keys
    assert "NTK-alpha" in s.sources["rope_type"] and "['alpha']" in s.sources["base"]
    assert hf.posenc_call(s) == f"posenc.apply_rope(q, position_ids, base={base!r}, pairing='half')"
    plain = hunyuan_dense()
    del plain["rope_scaling"]["alpha"]  # no alpha: transformers' dynamic NTK, as the key says
    assert hf.describe(plain).layer(0).rope_type == "dynamic"


@pytest.mark.parametrize(
    "alpha,exc",
    [("1000", TypeError), (True, TypeError), (-1.0, ValueError), (float("inf"), ValueError)],
)
def test_hunyuan_bad_alpha_is_refused_by_name(alpha, exc):
    cfg = hunyuan_dense()
    cfg["rope_scaling"]["alpha"] = alpha
    with pytest.raises(exc, match=r"\['rope_scaling'\]\['alpha'\] must be a number > 0"):
        hf.describe(cfg)


def hunyuan_ocr():
    """A HunyuanOCR-like config.json: legacy 'xdrope' spellings in its text config."""
    text = {**hunyuan_dense(), "model_type": "hunyuan_vl_text", "hidden_size": 1024,
            "num_attention_heads": 16, "num_hidden_layers": 24}  # fmt: skip
    text["rope_scaling"] = {**text["rope_scaling"], "type": "xdrope",
                            "xdrope_section": [16, 16, 16, 16]}  # fmt: skip
    return {"model_type": "hunyuan_vl", "text_config": text}


def test_hunyuan_vl_xd_rope_reads_the_legacy_spellings():
    s = hf.describe(hunyuan_ocr())
    layer = s.layer(0)
    assert (s.convention, layer.mrope_layout, layer.mrope_section) == ("xdrope", "xd",
                                                                      (16, 16, 16, 16))  # fmt: skip
    assert layer.base == pytest.approx(1e4 * 1000.0 ** (128 / 126), rel=1e-15)
    assert s.sources["mrope_section"].endswith("['xdrope_section']")
    assert "xdrope_section" not in s.ignored_keys
    assert "'xdrope' read as 'dynamic'" in s.sources["rope_type"]
    assert "with 'alpha'" in s.sources["rope_type"]


@pytest.mark.parametrize("lib", ["numpy", pytest.param("torch", marks=needs_torch)])
def test_hunyuan_vl_xd_rope_turns_feature_chunks_by_their_axis(lib):
    s = hf.describe(hunyuan_ocr())
    layer = s.layer(0)
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 3, 5, 128))
    ids = rng.integers(0, 40, (4, 2, 5))
    inv = layer.base ** (-np.arange(0, 128, 2) / 128)
    axis = np.repeat(np.arange(4), 32)  # feature f: chunk f // 32 of cat(freqs, freqs)
    angle = np.stack([ids[axis[f]] * inv[f % 64] for f in range(128)], -1)[:, None]
    turned = np.concatenate((-x[..., 64:], x[..., :64]), -1)
    want = x * np.cos(angle) + turned * np.sin(angle)
    got = s.rotate(x if lib == "numpy" else torch.as_tensor(x), ids)
    np.testing.assert_allclose(_host(got), want, atol=1e-10)
    # on text all axes agree: plain RoPE at the stretched base
    text = np.stack([np.arange(5), np.arange(5) + 3])
    plain = posenc.apply_rope(x, text[:, None], base=layer.base, pairing="half")
    np.testing.assert_allclose(s.rotate(x, text), plain, atol=1e-10)


def test_hunyuan_vl_sections_are_checked_by_name():
    cfg = hunyuan_ocr()
    rs = cfg["text_config"]["rope_scaling"]
    rs["mrope_section"] = [32, 16, 16]
    with pytest.raises(
        ValueError, match=r"\['mrope_section'\] and .*\['xdrope_section'\] disagree"
    ):
        hf.describe(cfg)
    rs["mrope_section"] = rs.pop("xdrope_section")[:3]  # three axes are fine if they sum right
    with pytest.raises(ValueError, match=r"must sum to rotary_dim / 2 = 64, got \[16, 16, 16\]"):
        hf.describe(cfg)
    rs["mrope_section"] = [32, 16, 16]
    assert hf.describe(cfg).layer(0).mrope_section == (32, 16, 16)
    rs["mrope_section"] = "16,16,16,16"
    with pytest.raises(TypeError, match="must be a list of ints, one per axis"):
        hf.describe(cfg)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_explain_says_xd_rope_is_not_a_rotation_of_pairs(lang):
    text = hf.describe(hunyuan_ocr()).explain(lang)
    assert ("it is not a rotation of pairs" if lang == "en" else "它不是对频率对的旋转") in text
    assert "mrope_layout = 'xd'" in text

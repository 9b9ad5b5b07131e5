"""The generic walk over transformers' model types (issue 12), run once per session.

``hf_walk.walk()`` builds every rotary model type's own rotary embedding from a small config,
runs its own apply function on random q and k (per-batch offset ids; 3-D ids for M-RoPE) and
compares with ``posenc.hf.describe(config).rotate`` (float32, within 1e-6 * max|x|);
``hf_walk_fixed.walk_fixed()`` does the same for ALiBi biases, T5 buckets and sinusoidal tables
against ``describe(config).function()`` (buckets exactly). These tests
hold the walk to the committed record docs/assets/atlas.json (which the atlas page is built from),
so a model type transformers adds, or one whose status changes, fails here until
``make atlas`` records it; and a registry row that disagrees with its model's code fails.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ci_rule import require

RECORD = Path(__file__).resolve().parents[1] / "docs" / "assets" / "atlas.json"


@pytest.fixture(scope="module")
def walked():
    """Both walks (rotary, and ALiBi / T5 / sinusoidal), one outcome per model type."""
    require("transformers")
    require("torch")
    import hf_walk_fixed

    return {o.model_type: o for o in hf_walk_fixed.walk_all()}


@pytest.fixture(scope="module")
def record():
    return json.loads(RECORD.read_text(encoding="utf-8"))


def test_the_record_was_made_with_the_pinned_transformers(record):
    transformers = require("transformers")
    import posenc.hf

    assert record["transformers"] == transformers.__version__ == posenc.hf.TRANSFORMERS_VERSION


def test_every_registry_row_matches_its_model_code(walked):
    import posenc.hf

    wrong = {
        mt: o.reason
        for mt, o in walked.items()
        if mt in posenc.hf.MODELS and o.status != "verified"
    }
    assert not wrong, wrong


def test_no_mismatch_is_left_standing(walked):
    # a mismatch is a registry row that disagrees with the model's code; types without a row
    # whose generic description differs are reported as unverified, with the reason
    assert [mt for mt, o in walked.items() if o.status == "mismatch"] == []
    for o in walked.values():
        assert o.status in ("verified", "unverified")
        assert (o.status == "verified") == (o.reason == ""), (o.model_type, o.reason)


def test_the_walk_equals_the_committed_record(walked, record):
    now = {mt: (o.status, o.convention) for mt, o in walked.items()}
    then = {mt: (row["status"], row["convention"]) for mt, row in record["types"].items()}
    new = sorted(set(now) - set(then))
    gone = sorted(set(then) - set(now))
    changed = sorted(mt for mt in set(now) & set(then) if now[mt] != then[mt])
    assert (new, gone, changed) == ([], [], []), (
        "the walk differs from docs/assets/atlas.json; run `make atlas` and review the diff"
    )


def test_the_record_counts_its_rows(record):
    statuses = [row["status"] for row in record["types"].values()]
    summary = record["summary"]
    assert summary["walked"] == len(statuses)
    assert summary["verified"] == statuses.count("verified")
    assert summary["unverified"] == statuses.count("unverified")
    excluded = ("no rotary embedding takes", "vision encoder", "timestep embedding", "no positions")
    bearing = [r for r in record["types"].values() if not r["reason"].startswith(excluded)]
    assert summary["position_bearing"] == len(bearing)
    share = 100 * sum(r["status"] == "verified" for r in bearing) / len(bearing)
    assert summary["verified_percent"] == round(share, 1)


def test_verified_types_cover_every_convention_in_the_registry(walked):
    import posenc.hf

    rotary = ("rope", "mrope")  # the other kinds: tests/test_hf_walk_fixed.py
    used = {
        row.convention
        for row in posenc.hf.MODELS.values()
        if posenc.hf.CONVENTIONS[row.convention].kind in rotary
    }
    verified = {o.convention for o in walked.values() if o.status == "verified"}
    assert used <= verified, used - verified


def test_layer_kinds_are_walked(walked):
    # Gemma 3 and Cohere2 rows: both layer kinds walked (Cohere2's full layers are NoPE)
    assert set(walked["gemma3_text"].layer_kinds) == {
        "sliding_attention:rope",
        "full_attention:rope",
    }
    assert "full_attention:nope" in walked["cohere2"].layer_kinds
    assert walked["cohere2"].status == "verified"


def test_each_fixed_family_is_found_and_verified(walked):
    # the non-rotary scan finds the three families; the flagship of each is verified by its code
    for mt in ("bloom", "mpt", "falcon", "t5", "mt5", "umt5", "longt5", "marian", "whisper",
               "speech_to_text", "xglm", "m2m_100", "musicgen"):  # fmt: skip
        assert walked[mt].status == "verified", (mt, walked[mt].reason)
    assert "alibi" in " ".join(walked["falcon"].layer_kinds)


def test_a_type_the_fixed_scan_finds_without_a_probe_is_reported(walked):
    # T5-like buckets outside a compute_bias: probed through the model's own bias code
    # (hf_walk_extra) where describe covers them, else listed with the reason, not dropped
    for mt in ("layoutlmv2", "layoutlmv3", "mpnet", "cpmant"):
        assert walked[mt].status == "verified", (mt, walked[mt].reason)
    for mt in ("udop", "pp_doclayout_v2"):
        assert walked[mt].status == "unverified" and walked[mt].reason


def test_rotary_models_without_a_rotary_class_are_walked(walked):
    # GPT-J, CodeGen (rotate_every_two) and RoFormer (its sinusoidal table) have no
    # *RotaryEmbedding class, so the rotary walk misses them; the fixed walk probes them
    for mt in ("gptj", "codegen", "roformer"):
        assert walked[mt].status == "verified", (mt, walked[mt].reason)
    assert "rotary_value=True:rope" in walked["roformer"].layer_kinds


def test_composites_whose_positions_sit_in_another_sub_config_are_walked(walked):
    # Qwen2.5-Omni / Qwen3-Omni: thinker_config.text_config (two levels down); encoder-decoders
    # whose encoder is a sub-config; speech models whose only rotary stack is an audio encoder;
    # validators that tie a vision/audio width to the small text model
    for mt in ("qwen2_5_omni", "qwen3_omni_moe", "dia", "t5gemma", "t5gemma2", "lasr_ctc",
               "nemotron3_diarization", "nemo_speechlm", "granite_docling", "muse_spark",
               "cohere_compass", "mistral4", "qwen3_omni_moe_talker_text", "tipsv2"):  # fmt: skip
        assert walked[mt].status == "verified", (mt, walked[mt].reason)
    assert walked["qwen3_omni_moe_talker_text"].convention == "mrope_interleaved"
    assert walked["mistral4"].convention == "mla"


def test_describe_reads_two_levels_down_and_refuses_three():
    import posenc.hf

    text = {"model_type": "qwen2_5_omni_text", "hidden_size": 64, "num_attention_heads": 4,
            "num_hidden_layers": 2, "rope_parameters": {"rope_type": "default",
            "rope_theta": 1e6, "mrope_section": [4, 2, 2]}}  # fmt: skip
    omni = {"model_type": "qwen2_5_omni",
            "thinker_config": {"model_type": "qwen2_5_omni_thinker", "text_config": text}}  # fmt: skip
    s = posenc.hf.describe(omni)
    assert (s.kind, s.layer(0).mrope_section, s.layer(0).base) == ("mrope", (4, 2, 2), 1e6)
    # LLaVA's text_config may be any model type (AutoConfig), LLaVA included
    deeper = {"model_type": "llava", "text_config": {"model_type": "llava", "text_config":
              {"model_type": "llava", "text_config": text}}}  # fmt: skip
    with pytest.raises(ValueError, match="three levels down"):
        posenc.hf.describe(deeper)


def test_hunyuan_vl_xd_rope_is_not_a_rotation_of_pairs():
    # the xdrope convention's first pitfall, checked against the model's own rotary code: with
    # distinct axis ids, the two features of a rotate_half pair get different angles
    require("transformers")
    torch = require("torch")
    import importlib

    from transformers import CONFIG_MAPPING

    mod = importlib.import_module("transformers.models.hunyuan_vl.modeling_hunyuan_vl")
    rp = {"rope_type": "default", "rope_theta": 1e4, "mrope_section": [2, 2, 2, 2]}
    cfg = CONFIG_MAPPING["hunyuan_vl_text"](
        hidden_size=64, num_attention_heads=4, head_dim=16, rope_parameters=rp
    )
    ids = torch.stack([torch.arange(5) * k for k in (1, 2, 3, 4)])[:, None]
    cos, _ = mod.HunYuanVLRotaryEmbedding(cfg)(torch.zeros(1), ids)
    assert float((cos[..., :8] - cos[..., 8:]).abs().max()) > 0.1
    text_ids = torch.arange(5)[None, None].expand(4, 1, -1)
    cos, _ = mod.HunYuanVLRotaryEmbedding(cfg)(torch.zeros(1), text_ids)
    assert float((cos[..., :8] - cos[..., 8:]).abs().max()) == 0.0


def test_rotary_code_the_generic_call_cannot_run_is_probed(walked):
    # wav2vec2's rotary option turns the hidden states before W_q and W_k; CLVP turns the values
    # too; Qwen2.5-Omni's DiT turns its first head only: each probed with the model's own code
    # (hf_walk_extra), what rotates checked as well
    for mt, conv in (("wav2vec2-conformer", "hidden_rope"), ("wav2vec2-bert", "hidden_rope"),
                     ("clvp", "partial_qkv"), ("clvp_encoder", "partial_qkv"),
                     ("qwen2_5_omni_dit", "one_head"),
                     ("qwen2_5_omni_token2wav", "one_head")):  # fmt: skip
        assert (walked[mt].status, walked[mt].convention) == ("verified", conv), walked[mt]
    assert walked["wav2vec2-bert"].layer_kinds == ["position_embeddings_type=rotary:rope"]


@pytest.mark.parametrize("model_type", ["wav2vec2-conformer", "wav2vec2-bert"])
def test_describe_refuses_the_wav2vec2_default_positions(model_type):
    # the config classes' default (relative / relative_key) is position code describe does not
    # cover: refused by name, never described as the rotary option
    require("transformers")
    from transformers import CONFIG_MAPPING

    import posenc.hf

    cfg = CONFIG_MAPPING[model_type]()
    assert cfg.position_embeddings_type != "rotary"
    with pytest.raises(ValueError, match=r"\['position_embeddings_type'\] must be 'rotary'"):
        posenc.hf.describe(cfg)


def test_m_rope_layouts_beyond_bands_and_turns_are_walked(walked):
    # NeoMME: (2, batch, seq) ids whose axes alternate pair by pair, both layer types walked;
    # Ernie 4.5 VL: adjacent pairs, h and w in turn, then t (its own small mrope_section)
    assert walked["neomme"].status == "verified", walked["neomme"].reason
    assert walked["neomme"].convention == "mrope_2d"
    assert set(walked["neomme"].layer_kinds) == {"sliding_attention:mrope", "full_attention:mrope"}
    for mt in ("ernie4_5_vl_moe_text", "ernie4_5_vl_moe"):
        assert (walked[mt].status, walked[mt].convention) == ("verified", "mrope_hw_t"), mt
    # HunYuan-VL: xD-RoPE over four axes; HunYuan: NTK-alpha spelled "dynamic" + alpha (the
    # walk's small configs use that spelling, so a dynamic-NTK reading would fail)
    for mt, conv in (("hunyuan_vl_text", "xdrope"), ("hunyuan_vl", "xdrope"),
                     ("hunyuan_v1_dense", "llama"), ("hunyuan_v1_moe", "llama")):  # fmt: skip
        assert (walked[mt].status, walked[mt].convention) == ("verified", conv), mt

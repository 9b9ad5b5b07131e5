"""The model-type table: one row per transformers ``model_type``.

Model knowledge in :mod:`posenc.hf` lives in data tables, a row per convention or per model type.
This module is the model-type half: :data:`MODELS` maps a ``model_type`` to a
:class:`~posenc.hf.schema.ModelRow`: its convention (a key of
:data:`~posenc.hf.conventions.CONVENTIONS`) plus the few config facts its code decides (a default
layer pattern, the key that marks NoPE layers, a sub-config to descend into). The row types live
in ``schema.py``, the convention table in ``conventions.py``.

Two kinds of rows, one table: the rows written below, found by reading transformers' modeling
code, and the rows the atlas walk found for types whose code follows a convention with nothing
of its own to add (``verified.json``, written by ``tools/atlas_record.py`` from the walk). Every
row is verified: the walk (``tests/test_hf_walk.py``) runs each model's own position code
against ``describe(config)``, and the record says on which transformers version. A model type
with no row is described as unknown, never guessed.
"""

from __future__ import annotations

import json
from dataclasses import replace
from functools import lru_cache
from importlib import resources
from types import MappingProxyType
from typing import Any

from .schema import ModelRow

__all__ = [
    "MODELS",
    "TRANSFORMERS_VERSION",
    "as_jsonable",
    "installed_transformers",
    "row_for",
    "verified_on",
    "walk_reason",
]


@lru_cache(maxsize=1)
def _record() -> dict[str, Any]:
    """verified.json: the walk's outcome per model type (tools/atlas_record.py writes it)."""
    text = resources.files(__package__).joinpath("verified.json").read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


TRANSFORMERS_VERSION: str = _record()["transformers"]

_M = ModelRow
_MODELS: dict[str, ModelRow] = {
    "llama": _M("llama"),
    "mistral": _M("llama"),
    "qwen2": _M("llama"),
    "qwen3": _M("llama"),
    "phi3": _M("partial"),
    "gpt_neox": _M("partial"),
    "gemma3_text": _M("llama", pattern=("sliding_window_pattern", 6, False)),
    "gemma2": _M("llama", pattern=(None, 2, False)),
    "modernbert": _M(
        "llama",
        pattern=("global_attn_every_n_layers", 3, True),
        window_rule=("local_attention", 2),
        bidirectional=True,
        notes_en=(
            "An encoder: a sliding layer's query i sees keys with abs(i - j) <= local_attention "
            "// 2, both sides.",
        ),
        notes_zh=(
            "它是编码器：滑动层的查询 i 关注 abs(i - j) <= local_attention // 2 的键，两侧都算。",
        ),
    ),
    "smollm3": _M("llama", nope="no_rope_layers", nope_interval=4),
    "qwen3_next": _M(
        "partial",
        pattern=("full_attention_interval", 4, False),
        pattern_other="linear_attention",
    ),
    "mllama_text_model": _M(
        "llama", cross_layers=("cross_attention_layers", (3, 8, 13, 18, 23, 28, 33, 38))
    ),
    "mllama": _M("llama", sub_config="text_config"),
    "gemma3": _M("llama", sub_config="text_config"),
    "gemma4_text": _M("llama", layer_head_dim=("full_attention", "global_head_dim", 512)),
    "gemma4": _M("llama", sub_config="text_config"),
    "cohere": _M("interleaved"),
    "cohere2": _M(
        "interleaved", nope="full_attention", pattern=("sliding_window_pattern", 4, False)
    ),
    "qwen2_vl": _M(
        "mrope",
        sub_config="text_config",
        notes_en=(
            "A port must build the (3, batch, seq) position ids as Qwen2VLModel.get_rope_index "
            "does (transformers 5.24, models/qwen2_vl/modeling_qwen2_vl.py): text tokens count "
            "up on all three axes; an image or video of t x h x w patches takes t * (h/m) * "
            "(w/m) tokens, m = config['vision_config']['spatial_merge_size'], whose height and "
            "width ids start at the current position; the text after it resumes max(h, w)/m "
            "further on; rope_deltas (largest id + 1 - length) is kept and added to the cache "
            "position while decoding. mrope_section gives the pairs to t, h and w; the vision "
            "encoder (vision_config) has its own 2-D rotary, not described here.",
        ),
        notes_zh=(
            "移植时须按 Qwen2VLModel.get_rope_index（transformers 5.24，"
            "models/qwen2_vl/modeling_qwen2_vl.py）构造形状为 (3, batch, seq) 的位置编号：文本词元在"
            "三个轴上一起递增；t x h x w 个图块的图像或视频占 t * (h/m) * (w/m) 个词元，"
            "m = config['vision_config']['spatial_merge_size']，其高、宽编号从当前位置起算；其后的"
            "文本从 max(h, w)/m 之后接着编号；rope_deltas（最大编号 + 1 - 长度）会保存下来，"
            "解码时加到缓存位置上。mrope_section 把各频率对分给 t、h、w；视觉编码器"
            "（vision_config）有自己的二维旋转位置编码，此处不描述。",
        ),
    ),
    "qwen2_vl_text": _M("mrope", mrope_default=(16, 24, 24)),
    "nanochat": _M(
        "llama",
        angle_sign=-1,
        notes_en=(
            "Its rotate_half returns (x2, -x1): every pair turns by minus the angle, as if "
            "positions were negated; scores still depend on the offset only.",
        ),
        notes_zh=(
            "它的 rotate_half 返回 (x2, -x1)：每一对都按负角度旋转，相当于把位置取反；"
            "分数仍只依赖偏移。",
        ),
    ),
    "llama4_text": _M(
        "interleaved",
        nope="no_rope_layers",
        nope_interval=4,
        chunk_rotating=True,
        query_temperature=True,
    ),
    "llama4": _M("interleaved", sub_config="text_config"),
}
for _mt in (
    "blt",
    "blt_global_transformer",
    "blt_local_decoder",
    "blt_local_encoder",
    "blt_patcher",
    "cohere2_moe",
    "ernie4_5",
    "ernie4_5_moe",
    "glm",
    "glm4",
    "helium",
    "moonshine",
    "moonshine_streaming",
    "openai_privacy_filter",
    "pe_audio_encoder",
    "pe_audio_video_encoder",
    "pe_video_encoder",
):
    _MODELS[_mt] = _M("interleaved")
for _mt in (
    "axk1",
    "axk2",
    "deepseek_v3",
    "glm4_moe_lite",
    "youtu",
    "minicpm3",
    "hy_v4",
):
    _MODELS[_mt] = _M(
        "mla",
        pairing_key="rope_interleave",
        dim_key="qk_rope_head_dim",
        head_dim_key=("qk_nope_head_dim", "qk_rope_head_dim"),
    )
for _mt in ("qwen2_5_vl", "paddleocr_vl"):
    _MODELS[_mt] = _M("mrope", sub_config="text_config")
for _mt in ("qwen2_5_vl_text", "paddleocr_vl_text"):
    _MODELS[_mt] = _M("mrope", mrope_default=(16, 24, 24))
for _mt in ("glm4v_moe", "glm_image"):
    _MODELS[_mt] = _M("mrope", sub_config="text_config")
    _MODELS[_mt + "_text"] = _M("mrope", mrope_default=(8, 12, 12))
for _mt in ("glm4v", "glm_ocr"):
    _MODELS[_mt] = _M("mrope", sub_config="text_config", pairing="interleaved")
for _mt in ("glm4v_text", "glm_ocr_text"):
    _MODELS[_mt] = _M("mrope", pairing="interleaved", mrope_default=(8, 12, 12))
for _mt, _section in (
    ("qwen3_vl", (24, 20, 20)),
    ("qwen3_vl_moe", (24, 20, 20)),
    ("qwen3_5", (11, 11, 10)),
    ("qwen3_5_moe", (11, 11, 10)),
    ("qwen4_exp", (11, 11, 10)),
    ("cosmos3_edge", (24, 20, 20)),
):
    _MODELS[_mt] = _M("mrope_interleaved", sub_config="text_config")
    _MODELS[_mt + "_text"] = _M("mrope_interleaved", mrope_default=_section)
for _mt in ("qwen3_5_text", "qwen3_5_moe_text"):
    # their config code: with no layer_types, every full_attention_interval-th layer (4) is
    # full attention, the others Gated DeltaNet (linear attention)
    _MODELS[_mt] = replace(
        _MODELS[_mt],
        pattern=("full_attention_interval", 4, False),
        pattern_other="linear_attention",
    )
_MODELS["cohere_compass"] = _M("mrope_interleaved", sub_config="text_config")
_MODELS["cohere_compass_text"] = _M("mrope_interleaved", mrope_default=(24, 20, 20))
_MODELS["qwen3_omni_moe_text"] = _M("mrope_interleaved", mrope_default=(24, 20, 20))
_MODELS["qwen3_omni_moe_talker_text"] = _M("mrope_interleaved", mrope_default=(24, 20, 20))
_MODELS["qwen3_omni_moe_thinker"] = _M("mrope_interleaved", sub_config="text_config")
for _mt in ("qwen2_5_omni_text", "qwen2_5_omni_talker"):
    _MODELS[_mt] = _M("mrope", mrope_default=(16, 24, 24))
_MODELS["qwen2_5_omni_thinker"] = _M("mrope", sub_config="text_config")
# the omni composites keep their text model two levels down: thinker_config.text_config
_MODELS["qwen2_5_omni"] = _M("mrope", sub_config="thinker_config")
_MODELS["qwen3_omni_moe"] = _M("mrope_interleaved", sub_config="thinker_config")
# speech models whose only attention stack is an audio encoder (1-D rotary over frames)
_MODELS["lasr_ctc"] = _M("llama", sub_config="encoder_config")
_MODELS["nemotron3_5_transcribe_audio"] = _M("partial", sub_config="asr_config")
_MODELS["nemotron3_diarization"] = _M("llama", sub_config="audio_config")
_MODELS["nemo_speechlm"] = _M(
    "partial",
    sub_config="audio_config",
    notes_en=(
        "Only its audio encoder (audio_config.asr_config) rotates; its language model "
        "(text_config, nemotron_h) mixes Mamba-2 blocks with attention that takes no positions.",
    ),
    notes_zh=(
        "只有音频编码器（audio_config.asr_config）做旋转；其语言模型（text_config，nemotron_h）"
        "由 Mamba-2 块与不带位置信息的注意力组成。",
    ),
)
# encoder-decoders: the encoder's config is read; the decoder's is a model type of its own
# (dia_decoder, t5_gemma_module), described from config["decoder_config"] / config["decoder"]
for _mt, _enc, _dec in (
    ("dia", "encoder_config", "decoder_config"),
    ("t5gemma", "encoder", "decoder"),
    ("t5gemma2", "encoder", "decoder"),  # its encoder's text_config, one level further down
):
    _MODELS[_mt] = _M(
        "llama",
        sub_config=_enc,
        notes_en=(
            f"Encoder and decoder each rotate with their own config: describe reads {_enc}; "
            f"describe(config['{_dec}']) gives the decoder's.",
        ),
        notes_zh=(
            f"编码器与解码器各用自己的配置旋转：describe 读取 {_enc}；"
            f"describe(config['{_dec}']) 给出解码器的方案。",
        ),
    )
_MODELS["mistral4"] = _M(
    "mla",
    pairing_key="rope_interleave",
    dim_key="qk_rope_head_dim",
    head_dim_key=("qk_nope_head_dim", "qk_rope_head_dim"),
    notes_en=(
        "After the rotation its attention multiplies every query by "
        "1 + llama_4_scaling_beta * log(1 + floor(position / original_max_position_embeddings)) "
        "(rope_parameters; 1 below the original length): a port must scale queries too.",
    ),
    notes_zh=(
        "旋转之后，它的注意力把每个查询乘以 "
        "1 + llama_4_scaling_beta * log(1 + floor(position / original_max_position_embeddings))"
        "（取自 rope_parameters；在原始长度以内为 1）：移植时也须缩放查询。",
    ),
)
_MODELS["ministral3"] = _M(
    "llama",
    notes_en=_MODELS["mistral4"].notes_en,
    notes_zh=_MODELS["mistral4"].notes_zh,
)
_MODELS["deepseek_v2"] = _M(
    "mla",
    pairing="interleaved",
    dim_key="qk_rope_head_dim",
    head_dim_key=("qk_nope_head_dim", "qk_rope_head_dim"),
    notes_en=(
        "DeepSeek-V2's code rotates with a complex product on adjacent pairs (Meta style), "
        "unlike DeepSeek-V3's rotate_half or its interleave-then-rotate_half path.",
    ),
    notes_zh=(
        "DeepSeek-V2 的代码用复数乘法旋转相邻的特征对（Meta 风格），"
        "不同于 DeepSeek-V3 的 rotate_half 或先重排再 rotate_half 的做法。",
    ),
)
_DSA_EN = (
    "Every layer also runs the DSA lightning indexer (DeepseekV32Indexer), which picks the "
    "keys the attention reads: its own q and k heads of index_head_dim features, the FIRST "
    "qk_rope_head_dim of them rotated in rotate_half pairs with the attention's cos and sin, "
    "while the attention rotates the LAST ones in interleaved pairs (Scheme.indexer, "
    "Scheme.rotate_indexer).",
)
_DSA_ZH = (
    "每层还运行 DSA 闪电索引器（DeepseekV32Indexer），由它挑出注意力要读的键：它有自己的 q、k 头，"
    "宽 index_head_dim，其中前 qk_rope_head_dim 个特征用注意力的 cos 与 sin 按 rotate_half 配对旋转，"
    "而注意力旋转的是最后 qk_rope_head_dim 个特征、按交错配对（Scheme.indexer、"
    "Scheme.rotate_indexer）。",
)
for _mt in (
    "bailing_hybrid",
    "deepseek_v32",
    "glm_moe_dsa",
    "longcat_flash",
    "mistral_large4_text",
):
    # their attention always calls apply_rotary_pos_emb_interleave (no config switch); the DSA
    # indexer of DeepSeek-V3.2 rotates the FIRST qk_rope_head_dim features of its own q and k
    # heads in rotate_half pairs (apply_rotary_pos_emb). GLM-MoE-DSA's indexer (interleaved
    # pairs, run only by its "full" indexer layers) is not described yet
    _MODELS[_mt] = _M(
        "mla",
        pairing="deinterleave",
        dim_key="qk_rope_head_dim",
        head_dim_key=("qk_nope_head_dim", "qk_rope_head_dim"),
        nope="no_rope_layers" if _mt == "mistral_large4_text" else None,
        layers_key="num_layers" if _mt == "longcat_flash" else "num_hidden_layers",
        indexer="half" if _mt == "deepseek_v32" else None,
        notes_en=_DSA_EN if _mt == "deepseek_v32" else (),
        notes_zh=_DSA_ZH if _mt == "deepseek_v32" else (),
    )
_MODELS["mistral_large4"] = _M("mla", sub_config="text_config")
for _mt in ("bloom", "mpt"):
    _MODELS[_mt] = _M("alibi")
_MODELS["falcon"] = _M(
    "llama", switch=("alibi", _M("alibi", alibi_scaled=True, alibi_rounding="bfloat16"))
)
for _mt in ("t5", "mt5", "umt5", "longt5", "switch_transformers", "pop2piano"):
    _MODELS[_mt] = _M("t5")
_MODELS["pix2struct_text_model"] = _M("t5", causal=True)
_MODELS["pix2struct"] = _M("t5", sub_config="text_config")
_MODELS["mpnet"] = _M(
    "t5",
    bucket_keys=(None, None),
    notes_en=(
        "MPNetEncoder.compute_position_bias buckets with num_buckets=32 and max_distance=128 "
        "whatever the config says: relative_attention_num_buckets only sizes the bias table "
        "(a value below 32 makes the lookup fail).",
    ),
    notes_zh=(
        "MPNetEncoder.compute_position_bias 始终以 num_buckets=32、max_distance=128 分桶，"
        "与配置无关：relative_attention_num_buckets 只决定偏置表的行数（小于 32 时查表会出错）。",
    ),
)
for _mt, _scaled in (("layoutlmv2", False), ("layoutlmv3", True)):
    _MODELS[_mt] = _M(
        "t5",
        bucket_keys=("rel_pos_bins", "max_rel_pos"),
        bbox_keys=("has_spatial_attention_bias", "rel_2d_pos_bins", "max_rel_2d_pos"),
        requires="has_relative_attention_bias",
        notes_en=(
            "Learned absolute positions are added to the embeddings as well; the bucketed bias "
            "is a bias-free Linear over one-hot buckets, computed once and shared by all layers.",
            "The 2-D bias adds the x buckets of left edges (bbox[..., 0]) and the y buckets of "
            "bottom edges (bbox[..., 3]), both t5_bucket(key - query, bbox_num_buckets, "
            "bbox_max_distance).",
        )
        + (
            ("LayoutLMv3 divides both biases by sqrt(head_dim) before adding them to the scores.",)
            if _scaled
            else ()
        ),
        notes_zh=(
            "嵌入上还加了学习得到的绝对位置；分桶偏置是对独热分桶做的无偏置 Linear，只算一次，"
            "各层共用。",
            "二维偏置把左边缘（bbox[..., 0]）的 x 分桶与下边缘（bbox[..., 3]）的 y 分桶相加，"
            "二者都是 t5_bucket(key - query, bbox_num_buckets, bbox_max_distance)。",
        )
        + (
            ("LayoutLMv3 先把两种偏置除以 sqrt(head_dim)，再加到注意力分数上。",) if _scaled else ()
        ),
    )
_MODELS["cpmant"] = _M(
    "t5",
    bucket_keys=("position_bias_num_buckets", "position_bias_max_distance"),
    notes_en=(
        "A decoder whose buckets are bidirectional (its _position_bucket always is; the causal "
        "mask hides the other half).",
        "Only query/key pairs in the same segment get distance buckets; a pair across segments "
        "(the 32 prompt tokens against the text, padding) gets bucket num_buckets + "
        "query_segment * segment_types + key_segment, whatever the distance.",
    ),
    notes_zh=(
        "它是解码器，但分桶是双向的（_position_bucket 总是双向；另一半由因果掩码遮住）。",
        "只有同一片段内的查询/键对按距离分桶；跨片段的对（32 个提示词元与正文、填充）"
        "落在 num_buckets + query_segment * segment_types + key_segment 桶，与距离无关。",
    ),
)
for _mt in (
    "m2m_100",
    "xglm",
    "speech_to_text",
    "nllb-moe",
    "fsmt",
    "speecht5",
    "trocr",
    "kosmos_2_text_model",
    "kosmos_2_5_text_model",
    "seamless_m4t",
):
    _MODELS[_mt] = _M("sinusoidal", table="fairseq")
_MODELS["seamless_m4t_v2"] = _M(
    "sinusoidal",
    table="fairseq",
    notes_en=(
        "Its text-to-unit decoder has a second fairseq table, over characters, built from the "
        "t2u_* keys (padding_idx = t2u_pad_token_id); this row describes "
        "the text encoder's and decoder's table.",
    ),
    notes_zh=(
        "其文本到单元（text-to-unit）解码器另有一张按字符的 fairseq 正弦表，由 t2u_* 键构造"
        "（padding_idx = t2u_pad_token_id）；本行描述的是文本编码器与"
        "解码器的那张表。",
    ),
)
_MODELS["tipsv2_text_model"] = _M("sinusoidal", table="fairseq", padded=False)
_MODELS["tipsv2"] = _M("sinusoidal", sub_config="text_config")
for _mt in ("musicgen_decoder", "musicgen_melody_decoder"):
    _MODELS[_mt] = _M("sinusoidal", table="cos_first")
for _mt in ("musicgen", "musicgen_melody"):
    _MODELS[_mt] = _M("sinusoidal", sub_config="decoder")
for _mt in ("kosmos-2", "kosmos-2.5"):
    _MODELS[_mt] = _M("sinusoidal", sub_config="text_config")
for _mt in ("marian", "pegasus", "time_series_transformer", "informer", "autoformer"):
    _MODELS[_mt] = _M("sinusoidal", table="marian")
_MODELS["whisper"] = _M(
    "sinusoidal",
    table="whisper",
    table_length="max_source_positions",
    learned_decoder="max_target_positions",
)
for _mt in (
    "pegasus_x",
    "qwen2_5_omni_audio_encoder",
    "qwen3_asr_encoder",
    "qwen3_omni_moe_audio_encoder",
):
    _MODELS[_mt] = _M("sinusoidal", table="whisper")
for _mt in ("gptj", "codegen"):
    # rotate_every_two on the first config.rotary_dim features (the whole head when None)
    _MODELS[_mt] = _M("interleaved", dim_key="rotary_dim")
_MODELS["roformer"] = _M(
    "interleaved",
    value_key="rotary_value",
    notes_en=(
        "No rotary module: a Marian-style [sin | cos] table of width head_dim feeds "
        "apply_rotary_position_embeddings, which pairs (2i, 2i+1) with base 10000.",
        "With rotary_value true it rotates the values too, by the same angles as the keys; "
        "Scheme.rotate on v reproduces that.",
    ),
    notes_zh=(
        "没有旋转模块：一张宽为 head_dim 的 Marian 式 [sin | cos] 正弦表交给 "
        "apply_rotary_position_embeddings，按 (2i, 2i+1) 配对，底数 10000。",
        "rotary_value 为真时连值向量也旋转，角度与键相同；对 v 调用 Scheme.rotate 即可复现。",
    ),
)
# speech encoders whose rotary option turns the hidden states before the q/k projections
for _mt, _other_en, _other_zh in (
    (
        "wav2vec2-conformer",
        "'relative' (Transformer-XL relative sinusoids with pos_bias_u/v, the default) and None",
        "'relative'（Transformer-XL 式相对正弦编码加 pos_bias_u/v，默认值）与 None",
    ),
    (
        "wav2vec2-bert",
        "'relative_key' (a learned embedding of key - query clipped to "
        "[-left_max_position_embeddings, right_max_position_embeddings], the default), "
        "'relative' and None",
        "'relative_key'（对 key - query 截断到 [-left_max_position_embeddings, "
        "right_max_position_embeddings] 后查学习得到的嵌入表，默认值）、'relative' 与 None",
    ),
):
    _MODELS[_mt] = _M(
        "hidden_rope",
        selector=("position_embeddings_type", "rotary"),
        base_key="rotary_embedding_base",
        notes_en=(
            "posenc.hf describes position_embeddings_type='rotary' only; describe refuses "
            f"{_other_en}.",
        )
        + (
            (
                "The encoder builds a convolutional position embedding (pos_conv_embed) that its "
                "forward never calls (transformers 5.23).",
            )
            if _mt == "wav2vec2-conformer"
            else ("Its adapter layers' attention takes no positions.",)
        ),
        notes_zh=(
            "posenc.hf 只描述 position_embeddings_type='rotary'；"
            f"{_other_zh}都会被 describe 拒绝。",
        )
        + (
            (
                "编码器构建了卷积位置嵌入（pos_conv_embed），但其 forward 从不调用它"
                "（transformers 5.23）。",
            )
            if _mt == "wav2vec2-conformer"
            else ("其适配器（adapter）层的注意力不使用位置。",)
        ),
    )
_CLVP_EN = (
    "rotary_dim = max(projection_dim // (2 * num_attention_heads), 32) with base 10000, both "
    "fixed by ClvpRotaryPositionalEmbedding (no rope_theta key).",
    "cos and sin are a table as long as the input, indexed by position_ids: ids must stay "
    "below the sequence length.",
)
_CLVP_ZH = (
    "rotary_dim = max(projection_dim // (2 * num_attention_heads), 32)，底数 10000，"
    "均由 ClvpRotaryPositionalEmbedding 写死（没有 rope_theta 键）。",
    "cos、sin 是一张与输入等长的表，按 position_ids 取行：位置编号须小于序列长度。",
)
_MODELS["clvp_encoder"] = _M(
    "partial_qkv",
    requires="use_rotary_embedding",
    dim_rule=("projection_dim", 32),
    notes_en=_CLVP_EN,
    notes_zh=_CLVP_ZH,
)
_MODELS["clvp"] = _M(
    "partial_qkv",
    sub_config="text_config",
    notes_en=(
        "describe reads the text encoder (text_config); the speech encoder rotates the same "
        "way with its own config (describe(config['speech_config'])), and the decoder "
        "(decoder_config) adds learned absolute positions.",
    ),
    notes_zh=(
        "describe 读取文本编码器（text_config）；语音编码器以自己的配置按同样方式旋转"
        "（describe(config['speech_config'])），解码器（decoder_config）加的是学习得到的绝对位置。",
    ),
)
_NTK_ALPHA_EN = (
    "Its checkpoints spell NTK-alpha as rope_type 'dynamic' with an 'alpha' key: the code then "
    "uses the static base rope_theta * alpha ** (d / (d - 2)) (d the head dim) and no dynamic "
    "scaling; describe reads it so.",
)
_NTK_ALPHA_ZH = (
    "它的权重把 NTK-alpha 写成 rope_type 'dynamic' 加 'alpha' 键：代码据此使用固定底数 "
    "rope_theta * alpha ** (d / (d - 2))（d 为头维度），并不做动态缩放；describe 按此读取。",
)
for _mt in ("hunyuan_v1_dense", "hunyuan_v1_moe"):
    _MODELS[_mt] = _M("llama", ntk_alpha=True, notes_en=_NTK_ALPHA_EN, notes_zh=_NTK_ALPHA_ZH)
_MODELS["hunyuan_vl_text"] = _M(
    "xdrope",
    ntk_alpha=True,
    section_alias="xdrope_section",
    notes_en=_NTK_ALPHA_EN
    + (
        "Its config class reads the legacy spellings rope_type 'xdrope' as 'dynamic' and "
        "xdrope_section as mrope_section; describe does too.",
    ),
    notes_zh=_NTK_ALPHA_ZH
    + (
        "其配置类把旧写法 rope_type 'xdrope' 读作 'dynamic'，把 xdrope_section 读作 "
        "mrope_section；describe 同样如此。",
    ),
)
_MODELS["hunyuan_vl"] = _M("xdrope", sub_config="text_config")
_MODELS["ernie4_5_vl_moe_text"] = _M("mrope_hw_t", mrope_default=(22, 22, 20))
_MODELS["ernie4_5_vl_moe"] = _M("mrope_hw_t", sub_config="text_config")
_MODELS["neomme"] = _M(
    "mrope_2d",
    notes_en=(
        "Its sliding window is a half-width: a sliding layer attends to keys with "
        "abs(i - j) <= sliding_window, both sides (an encoder).",
    ),
    notes_zh=(
        "它的滑动窗口是半宽：滑动层关注 abs(i - j) <= sliding_window 的键，两侧都算（编码器）。",
    ),
)
_MODELS["qwen2_5_omni_dit"] = _M(
    "one_head",
    rotated_heads=1,
    notes_en=(
        "The code says the single rotated head is an accident of training ('will be fixed at "
        "next release'); the checkpoint depends on it.",
        "The DiT numbers its mel frames 0 .. seq-1 itself (no position ids).",
    ),
    notes_zh=(
        "代码注释说只旋转一个头是训练过程留下的问题（“will be fixed at next release”）；"
        "现有权重依赖这一点。",
        "DiT 自行把梅尔帧编号为 0 .. seq-1（不接受位置编号）。",
    ),
)
_MODELS["qwen2_5_omni_token2wav"] = _M(
    "one_head",
    sub_config="dit_config",
    notes_en=(
        "Its only attention stack with positions is the DiT (dit_config); the BigVGAN vocoder "
        "(bigvgan_config) is convolutional.",
    ),
    notes_zh=(
        "其中唯一带位置的注意力栈是 DiT（dit_config）；BigVGAN 声码器（bigvgan_config）是卷积网络。",
    ),
)
# hybrid models: the config class derives which layers attend (only those rotate)
_MODELS["bamba"] = _M("partial", layers_rule=("indices", "attn_layer_indices"))
_MODELS["recurrent_gemma"] = _M(
    "partial",
    layers_rule=("cycle", "block_types", ("recurrent", "recurrent", "attention"), "recurrent",
                 "sliding_attention"),
)  # fmt: skip
_MODELS["zamba2"] = _M(
    "llama",
    layers_rule=("list", ("linear_attention",) + (("linear_attention",) * 5 + ("hybrid",)) * 7
                 + ("linear_attention",) * 4 + ("hybrid",) + ("linear_attention",) * 3
                 + ("hybrid",) + ("linear_attention",) * 2),
    rope_when=("use_mem_rope", True, False),
    head_dim_rule=2,
    notes_en=(
        "Its hybrid layers run one shared attention block on the concatenation of the hidden "
        "state and the original embeddings (2 * hidden_size wide): head_dim is 2 * hidden_size "
        "// num_attention_heads. The Mamba-2 layers take no positions.",
    ),
    notes_zh=(
        "它的混合层在隐藏状态与原始嵌入拼接后的向量（宽 2 * hidden_size）上运行同一个共享注意力块："
        "head_dim 为 2 * hidden_size // num_attention_heads。Mamba-2 层不使用位置。",
    ),
)  # fmt: skip
_MODELS["granitemoehybrid"] = _M(
    "llama",
    layers_rule=("fill", "linear_attention"),
    rope_when=("position_embedding_type", "rope", None),
)
_MODELS["exaone4"] = _M(
    "llama",
    pattern=("sliding_window_pattern", 4, False),
    nope="full_attention",
    nope_when="sliding_window",
    notes_en=(
        "With a sliding_window its full-attention layers do not rotate (only the sliding "
        "ones do); with sliding_window null every layer rotates.",
    ),
    notes_zh=(
        "设置了 sliding_window 时，它的全注意力层不做旋转（只有滑动窗口层旋转）；"
        "sliding_window 为 null 时每一层都旋转。",
    ),
)
_MODELS["minimax_m2"] = _M("llama", partial_from="rotary_dim")
_MODELS["phimoe"] = _M(
    "llama",
    mscale_keys=("short_mscale", "long_mscale"),
    notes_en=(
        "Its rotary module computes the frequencies without the sequence length: the short "
        "factors (LongRoPE) at every length; cos and sin are multiplied by short_mscale up to "
        "original_max_position_embeddings and by long_mscale beyond (max(position_ids) + 1), "
        "in place of the attention factor.",
    ),
    notes_zh=(
        "它的旋转模块计算频率时不看序列长度：任何长度都用短因子（LongRoPE）；cos 与 sin 在 "
        "original_max_position_embeddings 以内乘以 short_mscale，超出后（max(position_ids) + 1）"
        "乘以 long_mscale，取代注意力因子。",
    ),
)
# rows written above; the walk's rows follow
WRITTEN = frozenset(_MODELS)
for _mt, _t in _record()["types"].items():
    if _t["status"] == "verified" and _t.get("row") == "walk" and _mt not in _MODELS:
        _MODELS[_mt] = _M(_t["convention"], sub_config=_t.get("sub_config"))
MODELS: MappingProxyType[str, ModelRow] = MappingProxyType(dict(sorted(_MODELS.items())))


def row_for(model_type: str) -> ModelRow | None:
    """The row of ``model_type``, or None when the registry does not know it."""
    return MODELS.get(model_type)


def verified_on(model_type: str) -> str | None:
    """The transformers version the walk verified ``model_type``'s row on (None: not verified)."""
    found = _record()["types"].get(model_type) or {}
    return found.get("verified_on") if found.get("status") == "verified" else None


def installed_transformers() -> str | None:
    """The installed transformers' version, from its metadata (never imported); None if absent."""
    from importlib import metadata

    try:
        return metadata.version("transformers")
    except metadata.PackageNotFoundError:
        return None


def walk_reason(model_type: str) -> str | None:
    """Why the walk left ``model_type`` unverified (None: verified, or not walked)."""
    found = _record()["types"].get(model_type) or {}
    return found.get("reason") or None


def as_jsonable(value: Any) -> Any:
    """Tuples to lists, recursively (for to_dict)."""
    if isinstance(value, (tuple, list)):
        return [as_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: as_jsonable(v) for k, v in value.items()}
    return value

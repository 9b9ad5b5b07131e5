"""The atlas's knowledge: one row per convention and one row per transformers model type.

Everything :func:`posenc.hf.describe` knows about a model beyond its config lives here, as data:
a :class:`Convention` says how a family of models applies positions (the kind, the pairing of
features, where the rotated features sit, the page that derives it, the pitfalls of a port), and
a :class:`ModelRow` maps a ``model_type`` to its convention plus the few config facts its code
decides (a default layer pattern, the key that marks NoPE layers, a sub-config to descend into).
A model type missing here is still described from its standard keys, as the generic convention,
and flagged as not in the registry.

Rows were found by reading transformers 5.23's modeling code and are checked by the generic walk
in ``tests/test_hf_walk.py``, which runs each model's own rotary code against
``describe(config).rotate``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

__all__ = ["CONVENTIONS", "MODELS", "Convention", "ModelRow", "TRANSFORMERS_VERSION"]

TRANSFORMERS_VERSION = "5.23.0"

# the kinds that rotate queries and keys (Scheme.rotate); the others use Scheme.function
ROTARY_KINDS = ("rope", "mrope")


@dataclass(frozen=True)
class Convention:
    """Experimental. How a family of models applies positions (one row of the atlas).

    Attributes
    ----------
    name : str
        The key, e.g. ``"llama"``.
    kind : str
        ``"rope"``, ``"mrope"`` (rotary with 3-D ids), ``"alibi"``, ``"t5"`` (bucketed
        relative bias), ``"sinusoidal"`` (a fixed table added to the embeddings), ``"learned"``
        (a trained table) or ``"none"``.
    pairing : str
        Rotary only: ``"half"`` (``rotate_half``: pairs ``(i, i + r/2)``), ``"interleaved"``
        (pairs ``(2i, 2i+1)``), or ``"deinterleave"`` (the rotated features are first reordered
        evens-then-odds, then rotated as ``"half"``; the output stays in that order: DeepSeek's
        ``rope_interleave``).
    slot : str
        Rotary only: where the rotated features sit in a head: ``"head"`` (the first
        ``rotary_dim``; the rest pass through) or ``"tail"`` (the last ``rotary_dim``: MLA puts
        the no-position part first).
    page : str
        The site page that derives it (without ``.md``).
    title_en, title_zh : str
        A short name in each language.
    pitfalls_en, pitfalls_zh : tuple of str
        What a port of such a model must get right, one sentence each.
    """

    name: str
    kind: str
    pairing: str = "half"
    slot: str = "head"
    page: str = "rope"
    title_en: str = ""
    title_zh: str = ""
    pitfalls_en: tuple[str, ...] = ()
    pitfalls_zh: tuple[str, ...] = ()


@dataclass(frozen=True)
class ModelRow:
    """Experimental. What a model type's code decides that its config does not say.

    Attributes
    ----------
    convention : str
        A key of :data:`CONVENTIONS`.
    sub_config : str or None
        Read the positions from this sub-config (``"text_config"`` for most multimodal models).
    pairing : str or None
        Overrides the convention's pairing, when a config key chooses (see ``pairing_key``).
    pairing_key : str or None
        A boolean config key that switches to ``"interleaved"`` (or ``"deinterleave"`` for MLA)
        when true, e.g. DeepSeek's ``rope_interleave``.
    dim_key : str or None
        The config key holding the rotated width (``"qk_rope_head_dim"`` for MLA); else the
        head dim times ``partial_rotary_factor``.
    head_dim_key : str or None
        The config key holding the full query/key head width when it is not ``head_dim``
        (MLA: ``"qk_head_dim"``, or the sum of ``qk_nope_head_dim`` and ``qk_rope_head_dim``).
    pattern : tuple or None
        ``(key, default, first_full)``: with no ``layer_types`` in the config, layer ``i`` is
        full attention when ``(i + 1) % pattern == 0`` (``first_full=False``) or
        ``i % pattern == 0`` (``first_full=True``), sliding otherwise.
    nope : str or None
        How NoPE layers are marked: ``"no_rope_layers"`` (a 0/1 list, 1 = rotates),
        ``"full_attention"`` (full-attention layers do not rotate).
    local_base : tuple or None
        ``(key, default)`` of the sliding layers' base when ``rope_parameters`` is not nested
        (4.x configs: ``rope_local_base_freq``).
    default_base : float
        The base when the config names none.
    layer_head_dim : tuple or None
        ``(layer_type, key, default)``: layers of that type have the head dim in ``key``
        (Gemma 4's full layers: ``global_head_dim``, 512), unless ``per_layer_config`` says.
    angle_sign : int
        -1 when the model rotates by minus the angle (its ``rotate_half`` returns
        ``(x2, -x1)``).
    mrope_default : tuple or None
        The ``mrope_section`` the model's code uses when the config names none.
    defaults : tuple of (key, value)
        The config class's defaults for keys a Hub ``config.json`` may leave out.
    switch : tuple or None
        ``(key, row)``: a boolean config key that switches the model to another row (Falcon's
        ``alibi``).
    table : str or None
        Sinusoidal tables: ``"fairseq"``, ``"marian"``, ``"whisper"`` (which posenc.compat
        function builds it) or ``"cos_first"`` (MusicGen).
    padded : bool
        fairseq tables: positions start at ``padding_idx + 1`` (``pad_token_id``); False for
        ports that count from 0 with no padding row (MusicGen).
    causal : bool
        T5 buckets: the only stack is a decoder (``bidirectional=False``; Pix2Struct's text
        model).
    alibi_scaled : bool
        ALiBi divided by ``sqrt(head_dim)`` before it joins the scores (Falcon).
    bucket_keys : tuple of (str or None, str or None)
        T5 buckets: the config keys holding ``num_buckets`` and ``max_distance``. None: the
        model's code fixes the value at T5's default (32 buckets, distance 128) whatever the
        config says (MPNet).
    bbox_keys : tuple of (str, str, str) or None
        T5 buckets: ``(flag, num_buckets key, max_distance key)`` of a second, 2-D bias that
        buckets the differences of box coordinates (LayoutLMv2/v3), reported as
        ``bbox_num_buckets`` and ``bbox_max_distance`` when the boolean ``flag`` is true.
    requires : str or None
        A boolean config key (default true) without which the model has no bias of this
        row's kind; a config that sets it false is refused (LayoutLM's
        ``has_relative_attention_bias``).
    nope_interval : int or None
        With ``nope="no_rope_layers"`` and that key empty or missing: every
        ``no_rope_layer_interval``-th layer (default this) is NoPE (Llama 4's config code).
    notes_en, notes_zh : tuple of str
        Quirks of this model type worth a sentence.
    """

    convention: str
    sub_config: str | None = None
    pairing: str | None = None
    pairing_key: str | None = None
    dim_key: str | None = None
    head_dim_key: tuple[str, ...] | None = None
    pattern: tuple[str, int, bool] | None = None
    nope: str | None = None
    local_base: tuple[str, float] | None = None
    default_base: float = 10000.0
    layer_head_dim: tuple[str, str, int] | None = None
    angle_sign: int = 1
    mrope_default: tuple[int, int, int] | None = None
    nope_interval: int | None = None
    switch: tuple[str, ModelRow] | None = None
    defaults: tuple[tuple[str, Any], ...] = ()
    table: str | None = None
    padded: bool = True
    causal: bool = False
    alibi_scaled: bool = False
    bucket_keys: tuple[str | None, str | None] = (
        "relative_attention_num_buckets",
        "relative_attention_max_distance",
    )
    bbox_keys: tuple[str, str, str] | None = None
    requires: str | None = None
    notes_en: tuple[str, ...] = field(default=())
    notes_zh: tuple[str, ...] = field(default=())


_HALF_EN = (
    "Pairs are (i, i + r/2) (rotate_half), not (2i, 2i+1): a checkpoint converted from Meta's "
    "interleaved layout has its q/k projection rows permuted (posenc.rope_permutation)."
)
_HALF_ZH = (
    "特征按 (i, i + r/2) 配对（rotate_half），而非 (2i, 2i+1)：从 Meta 交错布局转换来的权重，"
    "其 q/k 投影的行已被重排（posenc.rope_permutation）。"
)
_F32_EN = (
    "transformers forms the angles in float32 (inv_freq and position * inv_freq), so past a "
    "few thousand positions its cos/sin differ from exact ones by about position * 2**-24 rad."
)
_F32_ZH = (
    "transformers 以 float32 计算角度（inv_freq 与 position * inv_freq），位置超过几千后，"
    "cos/sin 与精确值相差约 position * 2**-24 弧度。"
)
_SCALE_EN = (
    "YaRN and LongRoPE multiply cos and sin by the attention factor, so q·k grows by its square; "
    "a port that applies it to the softmax scale instead must square it."
)
_SCALE_ZH = (
    "YaRN 与 LongRoPE 把注意力因子乘在 cos 和 sin 上，q·k 因而放大其平方倍；"
    "若移植时改乘在 softmax 缩放上，须用它的平方。"
)

_CONVENTIONS = {
    "llama": Convention(
        "llama",
        "rope",
        pairing="half",
        page="rope",
        title_en="RoPE, rotate_half pairing (HF Llama)",
        title_zh="RoPE，rotate_half 配对（HF Llama）",
        pitfalls_en=(_HALF_EN, _SCALE_EN, _F32_EN),
        pitfalls_zh=(_HALF_ZH, _SCALE_ZH, _F32_ZH),
    ),
    "partial": Convention(
        "partial",
        "rope",
        pairing="half",
        page="rope",
        title_en="Partial RoPE, rotate_half on the first rotary_dim features",
        title_zh="部分 RoPE，对前 rotary_dim 个特征做 rotate_half",
        pitfalls_en=(
            "Only the first rotary_dim = int(head_dim * partial_rotary_factor) features rotate, "
            "with frequencies of width rotary_dim (not head_dim); the rest pass through.",
            _HALF_EN,
        ),
        pitfalls_zh=(
            "只旋转前 rotary_dim = int(head_dim * partial_rotary_factor) 个特征，频率按 "
            "rotary_dim（而非 head_dim）计算，其余特征原样通过。",
            _HALF_ZH,
        ),
    ),
    "interleaved": Convention(
        "interleaved",
        "rope",
        pairing="interleaved",
        page="rope",
        title_en="RoPE, interleaved pairs (2i, 2i+1)",
        title_zh="RoPE，交错配对 (2i, 2i+1)",
        pitfalls_en=(
            "Pairs are adjacent features (2i, 2i+1), as in the RoFormer paper and Meta's code; "
            "a rotate_half kernel gives wrong scores unless the q/k rows are permuted.",
        ),
        pitfalls_zh=(
            "配对的是相邻特征 (2i, 2i+1)，与 RoFormer 论文和 Meta 的代码相同；"
            "用 rotate_half 的内核须先重排 q/k 的行，否则得分错误。",
        ),
    ),
    "mla": Convention(
        "mla",
        "rope",
        pairing="half",
        slot="tail",
        page="mla",
        title_en="MLA: RoPE on the last qk_rope_head_dim features only (DeepSeek)",
        title_zh="MLA：只旋转最后 qk_rope_head_dim 个特征（DeepSeek）",
        pitfalls_en=(
            "A query head is [no-position part | rotary part]: only the last qk_rope_head_dim "
            "features rotate, with frequencies of that width.",
            "With rope_interleave the rotary part is reordered evens-then-odds before "
            "rotate_half, and stays in that order (q and k alike, so scores match interleaved "
            "RoPE).",
            "YaRN's mscale_all_dim changes the softmax scale as well as cos/sin "
            "(posenc.mla_softmax_scale).",
        ),
        pitfalls_zh=(
            "查询头为 [无位置部分 | 旋转部分]：只有最后 qk_rope_head_dim 个特征旋转，"
            "频率按这一宽度计算。",
            "rope_interleave 为真时，旋转部分先按偶数位在前、奇数位在后重排再做 rotate_half，"
            "输出保持重排后的顺序（q、k 相同，得分与交错 RoPE 一致）。",
            "YaRN 的 mscale_all_dim 除了影响 cos/sin，还改变 softmax 缩放"
            "（posenc.mla_softmax_scale）。",
        ),
    ),
    "mrope": Convention(
        "mrope",
        "mrope",
        pairing="half",
        page="mrope",
        title_en="M-RoPE: three position ids (t, h, w) in bands of pairs (Qwen2-VL)",
        title_zh="M-RoPE：三组位置 id (t, h, w) 按频段分配（Qwen2-VL）",
        pitfalls_en=(
            "position_ids are (3, batch, seq); mrope_section splits the head_dim/2 pairs into "
            "temporal, height and width bands (text tokens have t = h = w).",
            _HALF_EN,
        ),
        pitfalls_zh=(
            "position_ids 形状为 (3, batch, seq)；mrope_section 把 head_dim/2 个频率对分成"
            "时间、高度、宽度三段（文本词元的 t = h = w）。",
            _HALF_ZH,
        ),
    ),
    "mrope_interleaved": Convention(
        "mrope_interleaved",
        "mrope",
        pairing="half",
        page="mrope",
        title_en="Interleaved M-RoPE: the axes take turns pair by pair (Qwen3-VL)",
        title_zh="交错 M-RoPE：三个轴逐对轮换（Qwen3-VL）",
        pitfalls_en=(
            "The pairs cycle t, h, w, t, h, w, ... (up to mrope_section's counts), not three "
            "contiguous bands as in Qwen2-VL.",
        ),
        pitfalls_zh=(
            "频率对按 t、h、w、t、h、w……的顺序轮换（直到用完 mrope_section 的数量），"
            "不是 Qwen2-VL 那样的三段连续频段。",
        ),
    ),
    "alibi": Convention(
        "alibi",
        "alibi",
        page="alibi",
        title_en="ALiBi: a linear bias per head on the attention scores",
        title_zh="ALiBi：每个头在注意力得分上加线性偏置",
        pitfalls_en=(
            "Slopes are 2**(-8i/n) for n a power of two; other head counts interleave the "
            "slopes of the next power of two (posenc.alibi_slopes).",
            "The bias depends on the key position (BLOOM adds slope * key index, which equals "
            "the relative form after softmax within each query row).",
        ),
        pitfalls_zh=(
            "头数 n 为 2 的幂时斜率为 2**(-8i/n)；其他头数会穿插取下一个 2 的幂的斜率"
            "（posenc.alibi_slopes）。",
            "偏置随键的位置变化（BLOOM 加的是 slope * 键下标，经每行 softmax 后与相对形式相同）。",
        ),
    ),
    "t5": Convention(
        "t5",
        "t5",
        page="t5-bias",
        title_en="T5: bucketed relative-position bias",
        title_zh="T5：分桶的相对位置偏置",
        pitfalls_en=(
            "The encoder's buckets are bidirectional (half for each sign); the decoder's are "
            "causal (bidirectional=False).",
            "Only the first layer of each stack owns the bias table; the others reuse its bias.",
        ),
        pitfalls_zh=(
            "编码器的分桶是双向的（正负各占一半）；解码器是因果的（bidirectional=False）。",
            "每个栈只有第一层有偏置表，其余各层复用它算出的偏置。",
        ),
    ),
    "sinusoidal": Convention(
        "sinusoidal",
        "sinusoidal",
        page="sinusoidal",
        title_en="A fixed sinusoidal table added to the embeddings",
        title_zh="与嵌入相加的固定正弦表",
        pitfalls_en=(
            "Layouts differ: fairseq and its ports put all sines then all cosines and start "
            "positions at padding_idx + 1; Marian puts sines then cosines from position 0; "
            "Whisper's frequency ladder divides by channels/2 - 1.",
        ),
        pitfalls_zh=(
            "布局各不相同：fairseq 及其移植版先放全部正弦、再放全部余弦，位置从 padding_idx + 1 "
            "开始；Marian 也是先正弦后余弦，但从位置 0 开始；Whisper 的频率阶梯除以 channels/2 - 1。",
        ),
    ),
}
CONVENTIONS: MappingProxyType[str, Convention] = MappingProxyType(_CONVENTIONS)

_M = ModelRow
_MODELS: dict[str, ModelRow] = {
    "llama": _M("llama"),
    "mistral": _M("llama"),
    "qwen2": _M("llama"),
    "qwen3": _M("llama"),
    "phi3": _M("partial"),
    "gpt_neox": _M("partial"),
    "gemma3_text": _M(
        "llama",
        pattern=("sliding_window_pattern", 6, False),
        local_base=("rope_local_base_freq", 1e4),
        default_base=1e6,
        defaults=(
            ("head_dim", 256),
            ("num_attention_heads", 8),
            ("num_key_value_heads", 4),
            ("hidden_size", 2304),
            ("num_hidden_layers", 26),
            ("max_position_embeddings", 131072),
        ),
    ),
    "gemma3": _M("llama", sub_config="text_config"),
    "gemma4_text": _M("llama", layer_head_dim=("full_attention", "global_head_dim", 512)),
    "gemma4": _M("llama", sub_config="text_config"),
    "cohere": _M("interleaved"),
    "cohere2": _M(
        "interleaved", nope="full_attention", pattern=("sliding_window_pattern", 4, False)
    ),
    "qwen2_vl": _M("mrope", sub_config="text_config"),
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
            "得分仍只依赖偏移。",
        ),
    ),
    "llama4_text": _M(
        "interleaved",
        nope="no_rope_layers",
        nope_interval=4,
        default_base=500000.0,
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
    "deepseek_v32",
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
for _mt in ("bailing_hybrid", "glm_moe_dsa", "longcat_flash", "mistral_large4_text"):
    # their attention always calls apply_rotary_pos_emb_interleave (no config switch)
    _MODELS[_mt] = _M(
        "mla",
        pairing="deinterleave",
        dim_key="qk_rope_head_dim",
        head_dim_key=("qk_nope_head_dim", "qk_rope_head_dim"),
        nope="no_rope_layers" if _mt == "mistral_large4_text" else None,
    )
_MODELS["mistral_large4"] = _M("mla", sub_config="text_config")
for _mt in ("bloom", "mpt"):
    _MODELS[_mt] = _M("alibi")
_MODELS["falcon"] = _M("llama", switch=("alibi", _M("alibi", alibi_scaled=True)))
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
        defaults=(
            ("rel_pos_bins", 32),
            ("max_rel_pos", 128),
            ("rel_2d_pos_bins", 64),
            ("max_rel_2d_pos", 256),
            ("has_spatial_attention_bias", True),
        ),
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
            ("LayoutLMv3 先把两种偏置除以 sqrt(head_dim)，再加到注意力得分上。",) if _scaled else ()
        ),
    )
_MODELS["cpmant"] = _M(
    "t5",
    bucket_keys=("position_bias_num_buckets", "position_bias_max_distance"),
    defaults=(("position_bias_num_buckets", 512), ("position_bias_max_distance", 2048)),
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
for _mt in ("musicgen_decoder", "musicgen_melody_decoder"):
    _MODELS[_mt] = _M("sinusoidal", table="cos_first")
for _mt in ("musicgen", "musicgen_melody"):
    _MODELS[_mt] = _M("sinusoidal", sub_config="decoder")
for _mt in ("kosmos-2", "kosmos-2.5"):
    _MODELS[_mt] = _M("sinusoidal", sub_config="text_config")
for _mt in ("marian", "pegasus", "time_series_transformer", "informer", "autoformer"):
    _MODELS[_mt] = _M("sinusoidal", table="marian")
for _mt in (
    "whisper",
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
MODELS: MappingProxyType[str, ModelRow] = MappingProxyType(_MODELS)


def row_for(model_type: str) -> ModelRow | None:
    """The row of ``model_type``, or None when the registry does not know it."""
    return _MODELS.get(model_type)


def as_jsonable(value: Any) -> Any:
    """Tuples to lists, recursively (for to_dict)."""
    if isinstance(value, (tuple, list)):
        return [as_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: as_jsonable(v) for k, v in value.items()}
    return value

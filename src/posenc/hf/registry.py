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
# what a rotary convention turns (Convention.applies_to)
APPLIES_TO = ("qk", "qkv", "hidden")


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
    applies_to : str
        Rotary only: what the rotation turns. ``"qk"`` (queries and keys, after their
        projections: nearly every model), ``"qkv"`` (values too, by the same angles: CLVP) or
        ``"hidden"`` (the hidden states split into heads, before the q and k projections; the
        values take the unrotated states: wav2vec2-conformer's rotary option).
    axes : int
        M-RoPE only: how many position-id axes. 3 (t, h, w: ``mrope_section`` splits the pairs)
        or 2 (row, column taking turns pair by pair, as NeoMME does: pair ``j`` turns by axis
        ``j % 2``).
    layout : str
        M-RoPE only, beyond ``mrope_interleaved``: ``"hw_then_t"`` (Ernie 4.5 VL) gives the
        first ``mrope_section[0] + mrope_section[1]`` pairs to the h and w ids in turn (even
        pairs h, odd pairs w) and the last ``mrope_section[2]`` pairs to t; ``"xd"``
        (HunYuan-VL's xD-RoPE) cuts the features of ``cat(freqs, freqs)`` into chunks of
        ``2 * mrope_section[i]`` and gives chunk ``i`` the angles of axis ``i``, so the two
        features of a ``rotate_half`` pair can turn by angles of two different axes (any number
        of axes); ``""`` otherwise.
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
    applies_to: str = "qk"
    axes: int = 3
    layout: str = ""


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
        A boolean config key (default true) without which the model has no positions of this
        row's kind: a bucketed-bias row refuses a config that sets it false (LayoutLM's
        ``has_relative_attention_bias``); a rotary row then has only NoPE layers (CLVP's
        ``use_rotary_embedding``).
    selector : tuple of (str, str) or None
        ``(key, value)``: the row describes the model only when ``config[key] == value``; any
        other value (the config class's default included, see ``defaults``) selects position
        code posenc.hf does not describe, and is refused with the key named
        (wav2vec2-conformer's ``position_embeddings_type``: ``"rotary"``, default
        ``"relative"``).
    dim_rule : tuple of (str, int) or None
        ``(key, floor)``: the rotated width is ``max(config[key] // (2 * num_attention_heads),
        floor)``, as the model's rotary class computes it (CLVP: ``projection_dim``, 32).
    rotated_heads : int or None
        Only the first ``rotated_heads`` attention heads of q and k rotate; the others carry no
        positions (Qwen2.5-Omni's DiT: 1). None: every head.
    ntk_alpha : bool
        ``rope_type`` ``"dynamic"`` with an ``alpha`` key is NTK-alpha (HunYuan): a static base
        ``rope_theta * alpha ** (d / (d - 2))``, ``d`` the head dim, not dynamic NTK scaling.
    section_alias : str or None
        Another spelling of ``mrope_section`` in ``rope_parameters`` that the config class
        converts (HunYuan-VL's legacy ``xdrope_section``).
    rope_type_aliases : tuple of (str, str)
        Rope types the config class renames: ``(spelled, read as)`` (HunYuan-VL reads
        ``"xdrope"`` as ``"dynamic"``).
    value_key : str or None
        A boolean config key that makes the model rotate the values too (``applies_to``
        ``"qkv"``): RoFormer's ``rotary_value``.
    base_key : str or None
        The config key holding the RoPE base when the config has no ``rope_theta`` or
        ``rope_parameters`` (wav2vec2-conformer: ``rotary_embedding_base``).
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
    selector: tuple[str, str] | None = None
    dim_rule: tuple[str, int] | None = None
    base_key: str | None = None
    value_key: str | None = None
    rotated_heads: int | None = None
    ntk_alpha: bool = False
    section_alias: str | None = None
    rope_type_aliases: tuple[tuple[str, str], ...] = ()
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
    "hidden_rope": Convention(
        "hidden_rope",
        "rope",
        pairing="half",
        page="rope",
        applies_to="hidden",
        title_en="RoPE on the hidden states, before the q/k projections (wav2vec2-conformer)",
        title_zh="在 q/k 投影之前旋转隐藏状态的 RoPE（wav2vec2-conformer）",
        pitfalls_en=(
            "The rotation applies to the hidden states before W_q and W_k: they are split into "
            "heads of hidden_size / num_attention_heads features, rotated, and the same rotated "
            "states feed linear_q and linear_k; the values take the unrotated hidden states.",
            "Because the projections come after the rotation, q·k is not a function of the "
            "offset alone: a port that rotates q and k after their projections computes "
            "another model.",
            "Positions are always 0 .. seq-1 (no position ids) and the base is "
            "rotary_embedding_base, not rope_theta.",
            _HALF_EN,
        ),
        pitfalls_zh=(
            "旋转作用于 W_q、W_k 之前的隐藏状态：先按每头 hidden_size / num_attention_heads "
            "个特征分头并旋转，同一份旋转后的状态再送入 linear_q 与 linear_k；"
            "值向量取未旋转的隐藏状态。",
            "由于投影在旋转之后，q·k 不只依赖位置偏移：在投影之后才旋转 q、k 的移植"
            "算的是另一个模型。",
            "位置总是 0 .. seq-1（不接受位置 id），底数取 rotary_embedding_base 而非 rope_theta。",
            _HALF_ZH,
        ),
    ),
    "partial_qkv": Convention(
        "partial_qkv",
        "rope",
        pairing="half",
        page="rope",
        applies_to="qkv",
        title_en="Partial RoPE on queries, keys and values (CLVP)",
        title_zh="查询、键与值都做部分 RoPE（CLVP）",
        pitfalls_en=(
            "Values rotate too: the first rotary_dim features of q, k and v turn by the same "
            "angles, so the attention output carries positions; a port that rotates only q and "
            "k gives other outputs (apply Scheme.rotate to v as well).",
            "Only the first rotary_dim features rotate, with frequencies of width rotary_dim; "
            "the rest pass through.",
            _HALF_EN,
        ),
        pitfalls_zh=(
            "值向量也要旋转：q、k、v 的前 rotary_dim 个特征按相同角度旋转，注意力输出因而带有"
            "位置信息；只旋转 q、k 的移植会得到不同的输出（对 v 也调用 Scheme.rotate）。",
            "只旋转前 rotary_dim 个特征，频率按 rotary_dim 的宽度计算，其余特征原样通过。",
            _HALF_ZH,
        ),
    ),
    "mrope_2d": Convention(
        "mrope_2d",
        "mrope",
        pairing="half",
        page="mrope",
        axes=2,
        title_en="2-axis M-RoPE: row and column ids take turns pair by pair (NeoMME)",
        title_zh="二轴 M-RoPE：行、列位置 id 逐对轮换（NeoMME）",
        pitfalls_en=(
            "position_ids are (2, batch, seq): (row, column) for document-image patches, the "
            "token index on both axes for text; pair j turns by the row id when j is even and by "
            "the column id when j is odd, not in three bands or three axes.",
            "Each layer type has its own base and partial_rotary_factor (rope_parameters keyed "
            "by layer type), so the pairs that alternate are those of that layer's rotary_dim.",
            _HALF_EN,
        ),
        pitfalls_zh=(
            "position_ids 形状为 (2, batch, seq)：文档图像的图块取（行，列），文本词元两轴都取"
            "词元下标；第 j 个频率对在 j 为偶数时按行 id 旋转、为奇数时按列 id 旋转，"
            "既不是三段频段，也不是三个轴。",
            "每种层类型有自己的底数与 partial_rotary_factor（rope_parameters 按层类型给出），"
            "轮换的是该层 rotary_dim 内的频率对。",
            _HALF_ZH,
        ),
    ),
    "mrope_hw_t": Convention(
        "mrope_hw_t",
        "mrope",
        pairing="interleaved",
        page="mrope",
        layout="hw_then_t",
        title_en="M-RoPE with h and w taking turns, then t, on adjacent pairs (Ernie 4.5 VL)",
        title_zh="h、w 逐对轮换、t 在后的 M-RoPE，相邻配对（Ernie 4.5 VL）",
        pitfalls_en=(
            "Pairs are adjacent features (2i, 2i+1) (rotate_half_text), and pair i keeps its "
            "own frequency base**(-2i/d); of the first mrope_section[0] + mrope_section[1] "
            "pairs the even ones turn by the h id (axis 1) and the odd ones by the w id (axis "
            "2); the last mrope_section[2] pairs turn by the t id (axis 0).",
            "The code gets there by pre-rotating inv_freq (evens, then odds) and interleaving "
            "the h and w halves back in recomposition_frequencies: a port that copies only one "
            "of the two steps scrambles the frequencies. mrope_section[0] must equal "
            "mrope_section[1].",
        ),
        pitfalls_zh=(
            "配对的是相邻特征 (2i, 2i+1)（rotate_half_text），第 i 个频率对保持自己的频率 "
            "base**(-2i/d)；前 mrope_section[0] + mrope_section[1] 个频率对中，偶数对按 h id"
            "（轴 1）旋转，奇数对按 w id（轴 2）旋转；最后 mrope_section[2] 个频率对按 t id（轴 0）"
            "旋转。",
            "代码先把 inv_freq 预先重排（偶数位在前、奇数位在后），再在 "
            "recomposition_frequencies 中把 h、w 两半交错还原：只照搬其中一步的移植会打乱频率。"
            "mrope_section[0] 必须等于 mrope_section[1]。",
        ),
    ),
    "xdrope": Convention(
        "xdrope",
        "mrope",
        pairing="half",
        page="mrope",
        layout="xd",
        title_en="xD-RoPE: feature chunks take the angles of one axis each (HunYuan-VL)",
        title_zh="xD-RoPE：每段特征取一个轴的角度（HunYuan-VL）",
        pitfalls_en=(
            "cos and sin of width head_dim (cat(freqs, freqs)) are cut into chunks of "
            "2 * mrope_section[i] features, chunk i taking the angles of position-id axis i: "
            "the two features of a rotate_half pair (j, j + d/2) can turn by angles of two "
            "different axes, so it is not a rotation of pairs (it changes norms) except on text, "
            "where all axes agree.",
            "position_ids are (len(mrope_section), batch, seq): 4 axes (position, width, "
            "height, image index) or 3 (width, height, image index).",
            _HALF_EN,
        ),
        pitfalls_zh=(
            "宽为 head_dim 的 cos、sin（cat(freqs, freqs)）被切成长 2 * mrope_section[i] 的若干段，"
            "第 i 段取位置 id 第 i 个轴的角度：rotate_half 的一对特征 (j, j + d/2) 可能按两个不同轴"
            "的角度转动，因此它不是对频率对的旋转（会改变范数），只有在各轴相同的文本上才是。",
            "position_ids 形状为 (len(mrope_section), batch, seq)：4 个轴（位置、宽、高、图像序号）"
            "或 3 个轴（宽、高、图像序号）。",
            _HALF_ZH,
        ),
    ),
    "one_head": Convention(
        "one_head",
        "rope",
        pairing="deinterleave",
        page="rope",
        title_en="RoPE on the first attention head only, interleaved pairs (Qwen2.5-Omni DiT)",
        title_zh="只旋转第一个注意力头，交错配对（Qwen2.5-Omni DiT）",
        pitfalls_en=(
            "Only the first attention head of q and k rotates (query[:, :1], key[:, :1]); the "
            "other heads carry no positions: a port that rotates every head computes another "
            "model.",
            "That head's pairs are interleaved (2i, 2i+1): the code reorders its features "
            "evens-then-odds and rotates them with rotate_half, and the output stays in that "
            "order (q and k alike, so scores equal interleaved RoPE).",
        ),
        pitfalls_zh=(
            "只有 q、k 的第一个注意力头旋转（query[:, :1]、key[:, :1]）；其余的头不带位置信息："
            "对每个头都旋转的移植算的是另一个模型。",
            "这个头按交错方式 (2i, 2i+1) 配对：代码先把特征按偶数位在前、奇数位在后重排，"
            "再做 rotate_half，输出保持重排后的顺序（q、k 相同，得分与交错 RoPE 一致）。",
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
for _mt, _default, _other_en, _other_zh in (
    (
        "wav2vec2-conformer",
        "relative",
        "'relative' (Transformer-XL relative sinusoids with pos_bias_u/v, the default) and None",
        "'relative'（Transformer-XL 式相对正弦编码加 pos_bias_u/v，默认值）与 None",
    ),
    (
        "wav2vec2-bert",
        "relative_key",
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
        defaults=(("position_embeddings_type", _default),),
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
    "cos、sin 是一张与输入等长的表，按 position_ids 取行：位置 id 须小于序列长度。",
)
_MODELS["clvp_encoder"] = _M(
    "partial_qkv",
    requires="use_rotary_embedding",
    dim_rule=("projection_dim", 32),
    defaults=(("projection_dim", 768),),
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
    rope_type_aliases=(("xdrope", "dynamic"),),
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
        "DiT 自行把梅尔帧编号为 0 .. seq-1（不接受位置 id）。",
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

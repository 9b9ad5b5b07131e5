"""The convention table: one row per way a family of models applies positions.

Model knowledge in :mod:`posenc.hf` lives in data tables, a row per convention or per model type.
This module is the convention half: :data:`CONVENTIONS` maps a name (``"llama"``, ``"mla"``,
``"mrope_interleaved"``, ``"t5"``, ...) to a :class:`~posenc.hf.schema.Convention`: its kind,
the pairing of features, where the rotated features sit, the page that derives it and the
pitfalls of a port, in English and Chinese. The model-type rows of ``registry.py`` point at these
names; a model type missing there is described as the generic convention.

Rows were found by reading transformers' modeling code (the version is
:data:`~posenc.hf.TRANSFORMERS_VERSION`) and are checked by the generic walk in
``tests/test_hf_walk.py``, which runs each model's own rotary code against
``describe(config).rotate``.
"""

from __future__ import annotations

from types import MappingProxyType

from .schema import Convention

__all__ = ["CONVENTIONS"]

# pitfalls several conventions share
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
            "用 rotate_half 的内核须先重排 q/k 的行，否则分数错误。",
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
            "频率按这一维度计算。",
            "rope_interleave 为真时，旋转部分先按偶数位在前、奇数位在后重排再做 rotate_half，"
            "输出保持重排后的顺序（q、k 相同，分数与交错 RoPE 一致）。",
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
        title_zh="M-RoPE：三组位置编号 (t, h, w) 按频段分配（Qwen2-VL）",
        pitfalls_en=(
            "position_ids are (3, batch, seq); mrope_section splits the head_dim/2 pairs into "
            "temporal, height and width bands (text tokens have t = h = w).",
            _HALF_EN,
        ),
        pitfalls_zh=(
            "position_ids 形状为 (3, batch, seq)；mrope_section 把 head_dim/2 个频率对分成"
            "时间、高、宽三个频段（文本词元的 t = h = w）。",
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
        title_zh="ALiBi：每个头在注意力分数上加线性偏置",
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
            "开始；Marian 也是先正弦后余弦，但从位置 0 开始；Whisper 的频率序列除以 channels/2 - 1。",
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
            "位置总是 0 .. seq-1（不接受位置编号），底数取 rotary_embedding_base 而非 rope_theta。",
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
            "只旋转前 rotary_dim 个特征，频率按 rotary_dim 这一维度计算，其余特征原样通过。",
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
        title_zh="二轴 M-RoPE：行、列位置编号逐对轮换（NeoMME）",
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
        title_zh="h、w 逐对轮换、t 在后的 M-RoPE，交错配对（Ernie 4.5 VL）",
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
            "第 i 段取位置编号第 i 个轴的角度：rotate_half 的一对特征 (j, j + d/2) 可能按两个不同轴"
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
            "再做 rotate_half，输出保持重排后的顺序（q、k 相同，分数与交错 RoPE 一致）。",
        ),
    ),
    "unknown": Convention(
        "unknown",
        "unknown",
        pairing="",
        slot="",
        page="atlas",
        title_en="not described: posenc.hf has no verified row for this model type",
        title_zh="未描述：posenc.hf 没有此模型类型经过验证的条目",
    ),
}
CONVENTIONS: MappingProxyType[str, Convention] = MappingProxyType(_CONVENTIONS)

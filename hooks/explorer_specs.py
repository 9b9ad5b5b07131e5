"""The explorers' data: their labels in both languages and their controls (hooks/explorers.py
renders them).

``LABELS`` maps a key to an (English, Chinese) pair; ``[[term]]`` in a Chinese label is the
glossary's Chinese form of that English term (hooks/terms.yml, the one source of the site's
Chinese terms; an unknown term stops the build). ``EXPLORERS`` gives each explorer its title,
controls (name, label key, options or range, default), plots (name, label key, ``viewBox`` or
kind), the number of readout lines its box reserves on a desktop (a phone reserves 2.2 times
as many; assets/explorers/explorers.css), and the strings its script fills in (``{name}``
placeholders), per language. A control's name is also its key in the page address
(``?<explorer>.<name>=value``) and in ``form.elements``, so it is never ``length``, ``item`` or
``namedItem`` (properties of that collection).
"""

from __future__ import annotations

from typing import Any

# --- labels: (English, Chinese); [[...]] is a term of hooks/terms.yml ---------------------------

LABELS: dict[str, tuple[str, str]] = {
    # shared
    "explorer": ("Explorer", "交互图"),
    "values": ("Table of values", "数值表"),
    "noscript": (
        "This explorer needs JavaScript; the figure above shows its first settings.",
        "这个交互图需要 JavaScript；上面的静态图就是它的初始设置。",
    ),
    "share": (
        "The page address keeps the settings: copy it to share them.",
        "页面地址会记下当前设置，复制地址即可分享。",
    ),
    "base": ("Base b", "[[base]] b"),
    "head_dim": ("Head dimension d", "[[attention head]][[dimension (d_model)]] d"),
    # rope-scaling
    "rs_title": (
        "RoPE frequencies under scaling: pick a method and its settings.",
        "扩展后的[[rotary position embedding (RoPE)]]频率：选择一种方法及其设置。",
    ),
    "method": ("Method", "方法"),
    "m_none": ("none (plain RoPE)", "无（原始[[rotary position embedding (RoPE)]]）"),
    "m_linear": ("linear (position interpolation)", "linear（[[position interpolation]]）"),
    "m_ntk": ("NTK-aware (larger base)", "NTK-aware（增大[[base]]）"),
    "m_dynamic": ("dynamic NTK", "dynamic（动态 NTK）"),
    "m_yarn": ("YaRN", "YaRN"),
    "m_llama3": ("Llama 3", "Llama 3"),
    "m_longrope": ("LongRoPE", "LongRoPE"),
    "trained": ("Trained length L₀", "[[training length]] L₀"),
    "factor": ("Factor s", "缩放因子 s"),
    "length": ("Current length L", "当前长度 L"),
    "len_half": ("L₀/2", "L₀/2"),
    "len_trained": ("L₀", "L₀"),
    "len_double": ("2·L₀", "2·L₀"),
    "len_scaled": ("s·L₀", "s·L₀"),
    "rs_plot_wave": (
        "Wavelength of each pair, plain and scaled, against the trained and current lengths",
        "每一对的[[wavelength]]（原始与缩放后），以及[[training length]]和当前长度",
    ),
    "rs_plot_slow": (
        "By how much each pair is slowed down, θᵢ/θᵢ′",
        "每一对被放慢的倍数 θᵢ/θᵢ′",
    ),
    # rope-decay
    "rd_title": (
        "Long-range decay: the score of q = k against the distance r = m − n, and RoFormer's bound.",
        "远程衰减：q = k 时[[attention score]]随距离 r = m − n 的变化，以及 RoFormer 的上界。",
    ),
    "pairing": ("Pairing", "配对方式"),
    "p_interleaved": ("interleaved (2i, 2i+1)", "[[interleaved pairing]] (2i, 2i+1)"),
    "p_half": ("half (i, i+d/2)", "[[half pairing]] (i, i+d/2)"),
    "vector": ("q = k", "q = k"),
    "v_ones": ("all ones", "全为 1"),
    "v_alternate": ("1, 0, 1, 0, …", "1, 0, 1, 0, …"),
    "v_front": ("first half ones", "前一半为 1"),
    "range": ("Distances up to", "距离上限"),
    "key": ("Key position n", "键的位置 n"),
    "probe": ("Distance r", "距离 r"),
    "rd_plot_score": (
        "The score q·k divided by q·q against the distance r",
        "[[attention score]] q·k 除以 q·q，随距离 r 的变化",
    ),
    "rd_plot_bound": (
        "The size of the score and RoFormer's upper bound against r, log scale",
        "[[attention score]]的绝对值与 RoFormer 上界随 r 的变化（对数坐标）",
    ),
    # bias
    "bias_title": (
        "ALiBi and T5 biases: the bias of every query and key, head by head.",
        "ALiBi 与 T5 的[[bias]]：逐个[[attention head]]查看每个查询与键之间的[[bias]]。",
    ),
    "scheme": ("Scheme", "方案"),
    "s_alibi": ("ALiBi (linear bias)", "ALiBi（[[linear bias (ALiBi)]]）"),
    "s_t5": ("T5 relative buckets", "T5 相对位置[[bucket (bucketing)]]"),
    "direction": ("Direction", "方向"),
    "d_causal": ("causal", "因果"),
    "d_bidirectional": ("bidirectional", "双向"),
    "tokens": ("Tokens", "[[token]]数"),
    "heads": ("Heads (ALiBi)", "[[attention head]]数（ALiBi）"),
    "head": ("Head shown (ALiBi)", "显示的[[attention head]]（ALiBi）"),
    "buckets": ("Buckets (T5)", "[[bucket (bucketing)]]数（T5）"),
    "max_distance": ("max_distance (T5)", "max_distance（T5）"),
    "query_i": ("Query i", "查询 i"),
    "key_j": ("Key j", "键 j"),
    "bias_plot_map": (
        "The bias matrix: one row per query, one column per key",
        "[[bias]]矩阵：每行一个查询，每列一个键",
    ),
    "bias_plot_side": (
        "Each head's slope (ALiBi) or each relative position's bucket (T5)",
        "每个[[attention head]]的斜率（ALiBi）或每个相对位置的[[bucket (bucketing)]]（T5）",
    ),
    # mrope
    "mr_title": (
        "M-RoPE position ids: a prompt of text, an image and a video, token by token.",
        "[[multimodal RoPE (M-RoPE)]]的[[position ids]]：由文本、图像和视频组成的提示，逐个[[token]]查看。",
    ),
    "mr_plot_ids": (
        "The t, h and w ids of every token of the prompt, against the token's index",
        "提示中每个[[token]]的 t、h、w 编号，横轴为[[token]]的序号",
    ),
    "mr_plot_pairs": (
        "The 64 frequency pairs of a 128-wide head, by the axis each follows",
        "宽 128 的[[attention head]]的 64 个频率对，按各自跟随的轴标出",
    ),
    "model": ("Model", "模型"),
    "resume": ("Text resumes at", "文本接续位置"),
    "r_max": ("largest id + 1 (release code)", "最大编号 + 1（官方发布代码）"),
    "r_spatial": (
        "counter + max(h, w)/m (transformers 5.23)",
        "计数器 + max(h, w)/m（transformers 5.23）",
    ),
    "merge": ("Spatial merge m", "空间合并 m"),
    "before": ("Text before", "前置文本"),
    "image_h": ("Image h (patches)", "图像 h（[[patch (image patch)]]）"),
    "image_w": ("Image w (patches)", "图像 w（[[patch (image patch)]]）"),
    "between": ("Text between", "中间文本"),
    "frames": ("Video frames t", "视频帧数 t"),
    "video_h": ("Video h (patches)", "视频 h（[[patch (image patch)]]）"),
    "video_w": ("Video w (patches)", "视频 w（[[patch (image patch)]]）"),
    "seconds": ("Seconds per grid (Qwen2.5-VL)", "每个网格的秒数（Qwen2.5-VL）"),
    "tps": ("tokens_per_second (Qwen2.5-VL)", "tokens_per_second（Qwen2.5-VL）"),
    "stamp": ("Timestamp tokens per frame (Qwen3-VL)", "每帧时间戳[[token]]数（Qwen3-VL）"),
    "after": ("Text after", "末尾文本"),
}


# --- the explorers: controls, plots and the strings their scripts use ---------------------------


def _select(name: str, key: str, options: list[tuple[str, str]], default: str) -> dict[str, Any]:
    """options: (value, label key or a literal shown as it is)."""
    return {"kind": "select", "name": name, "label": key, "options": options, "default": default}


def _number(
    name: str, key: str, low: int, high: int, default: int, step: int = 1
) -> dict[str, Any]:
    return {
        "kind": "number",
        "name": name,
        "label": key,
        "min": low,
        "max": high,
        "step": step,
        "default": default,
    }


def _literal(*values: str) -> list[tuple[str, str]]:
    return [(v, "=" + v) for v in values]


EXPLORERS: dict[str, dict[str, Any]] = {
    "rope-scaling": {
        "title": "rs_title",
        "controls": [
            _select(
                "method",
                "method",
                [
                    (m, f"m_{m}")
                    for m in ("none", "linear", "ntk", "dynamic", "yarn", "llama3", "longrope")
                ],
                "yarn",
            ),
            _select("base", "base", _literal("10000", "500000", "1000000"), "10000"),
            _select("dim", "head_dim", _literal("32", "64", "128", "256"), "128"),
            _select("trained", "trained", _literal("2048", "4096", "8192", "32768"), "4096"),
            _select(
                "factor",
                "factor",
                _literal("1", "2", "3", "4", "6", "8", "12", "16", "24", "32", "48", "64"),
                "8",
            ),
            _select(
                "current",
                "length",
                [
                    ("half", "len_half"),
                    ("trained", "len_trained"),
                    ("double", "len_double"),
                    ("scaled", "len_scaled"),
                ],
                "scaled",
            ),
        ],
        "plots": [("wave", "rs_plot_wave", "0 0 320 230"), ("slow", "rs_plot_slow", "0 0 320 230")],
        "readout_lines": 6,
        "text": {
            "en": {
                "pair": "pair index i",
                "wave": "wavelength (positions)",
                "slow": "θᵢ/θᵢ′",
                "plain": "plain",
                "scaled": "scaled",
                "seen": "full turn within L₀",
                "inside": "interpolates",
                "beyond": "extrapolates",
                "trained": "L₀",
                "current": "L",
                "ramp": "YaRN ramp",
                "attention": "Attention factor a = {a}: cos and sin are multiplied by a, every score by a² = {a2}.",
                "classes": "At L = {L}: {seen} pairs already turned a full circle within L₀ = {L0}; {inside} interpolate (L·θᵢ′ ≤ L₀·θᵢ: their angles stay within those of training); {beyond} extrapolate (angles never seen in training).",
                "none": "Plain RoPE: θᵢ = b^(−2i/d).",
                "linear": "Every pair is slowed down by s = {s}.",
                "ntk": "NTK-aware scaling is a larger base: b′ = b·s^(d/(d−2)) = {b}.",
                "dynamic": "Dynamic NTK at L = {L}: base b′ = {b} (b itself up to L₀).",
                "yarn": "YaRN ramps from pair {lo} to pair {hi}: γᵢ = 1 keeps θᵢ, γᵢ = 0 divides it by s (beta_fast 32, beta_slow 1).",
                "llama3": "Llama 3 (low_freq_factor 1, high_freq_factor 4): {kept} pairs kept, {divided} divided by s, {blended} blended.",
                "longrope_short": "LongRoPE, L ≤ L₀: short factors eᵢ from 1 to {last} (made-up factors, chosen as the text above says).",
                "longrope_long": "LongRoPE, L > L₀: long factors eᵢ from 1 to {last} (made-up factors, chosen as the text above says).",
                "cols": ["i", "θᵢ", "θᵢ′", "λᵢ′", "θᵢ/θᵢ′", "γᵢ", "L₀·θᵢ", "L·θᵢ′", "class"],
            },
            "zh": {
                "pair": "[[pair index]] i",
                "wave": "[[wavelength]]（位置数）",
                "slow": "θᵢ/θᵢ′",
                "plain": "原始",
                "scaled": "缩放后",
                "seen": "L₀ 之内转满一圈",
                "inside": "[[interpolation (of positions, to reach a longer context)]]",
                "beyond": "[[extrapolation]]",
                "trained": "L₀",
                "current": "L",
                "ramp": "YaRN 过渡区",
                "attention": "注意力因子 a = {a}：cos 与 sin 乘以 a，每个[[attention score]]乘以 a² = {a2}。",
                "classes": "L = {L} 时：{seen} 对在 L₀ = {L0} 之内已转满一圈；{inside} 对[[interpolation (of positions, to reach a longer context)]]（L·θᵢ′ ≤ L₀·θᵢ：角度不超出训练时的范围）；{beyond} 对[[extrapolation]]（转到训练时从未见过的角度）。",
                "none": "原始[[rotary position embedding (RoPE)]]：θᵢ = b^(−2i/d)。",
                "linear": "每一对都放慢 s = {s} 倍。",
                "ntk": "NTK-aware 缩放就是增大[[base]]：b′ = b·s^(d/(d−2)) = {b}。",
                "dynamic": "L = {L} 时的动态 NTK：[[base]] b′ = {b}（L₀ 以内仍为 b）。",
                "yarn": "YaRN 从第 {lo} 对到第 {hi} 对线性过渡：γᵢ = 1 保留 θᵢ，γᵢ = 0 把它除以 s（beta_fast 32，beta_slow 1）。",
                "llama3": "Llama 3（low_freq_factor 1，high_freq_factor 4）：保留 {kept} 对，{divided} 对除以 s，{blended} 对混合。",
                "longrope_short": "LongRoPE，L ≤ L₀：短因子 eᵢ 从 1 到 {last}（虚构的因子，取法见上文）。",
                "longrope_long": "LongRoPE，L > L₀：长因子 eᵢ 从 1 到 {last}（虚构的因子，取法见上文）。",
                "cols": ["i", "θᵢ", "θᵢ′", "λᵢ′", "θᵢ/θᵢ′", "γᵢ", "L₀·θᵢ", "L·θᵢ′", "类别"],
            },
        },
    },
    "rope-decay": {
        "title": "rd_title",
        "controls": [
            _select("base", "base", _literal("100", "10000", "500000", "1000000"), "10000"),
            _select("dim", "head_dim", _literal("16", "32", "64", "128", "256"), "128"),
            _select(
                "pairing",
                "pairing",
                [("interleaved", "p_interleaved"), ("half", "p_half")],
                "interleaved",
            ),
            _select(
                "vector",
                "vector",
                [("ones", "v_ones"), ("alternate", "v_alternate"), ("front", "v_front")],
                "ones",
            ),
            _select("range", "range", _literal("128", "1024", "32768"), "128"),
            _select("key", "key", _literal("0", "77", "1000", "123456", "999983"), "0"),
            _select(
                "probe",
                "probe",
                _literal("0", "5", "11", "100", "300", "1000", "20000", "32768"),
                "11",
            ),
        ],
        "plots": [
            ("score", "rd_plot_score", "0 0 320 230"),
            ("bound", "rd_plot_bound", "0 0 320 230"),
        ],
        "readout_lines": 3,
        "text": {
            "en": {
                "r": "distance r = m − n",
                "score": "q·k / q·q",
                "size": "|q·k| and bound",
                "actual": "|q·k|",
                "bound": "bound",
                "probe": "q·q = {qq}. At r = {r}: q·k = {s}; RoFormer's bound on |q·k| = {B}.",
                "relative": "Query at n + r, key at n = {n}: the curve is the one at n = 0 to within {diff} over {count} distances; the score depends on r only.",
                "log": "log scale beyond r = 128",
                "cols": ["i", "θᵢ", "hᵢ = |q⁽ⁱ⁾|²", "|Sᵢ₊₁| at r", "hᵢ·cos(rθᵢ)"],
            },
            "zh": {
                "r": "距离 r = m − n",
                "score": "q·k / q·q",
                "size": "|q·k| 与上界",
                "actual": "|q·k|",
                "bound": "上界",
                "probe": "q·q = {qq}。r = {r} 时：q·k = {s}；RoFormer 对 |q·k| 的上界为 {B}。",
                "relative": "查询在 n + r、键在 n = {n}：这条曲线与 n = 0 时的曲线在 {count} 个距离上相差至多 {diff}；[[attention score]]只取决于 r。",
                "log": "r > 128 部分为对数坐标",
                "cols": ["i", "θᵢ", "hᵢ = |q⁽ⁱ⁾|²", "r 处的 |Sᵢ₊₁|", "hᵢ·cos(rθᵢ)"],
            },
        },
    },
    "bias": {
        "title": "bias_title",
        "controls": [
            _select("scheme", "scheme", [("alibi", "s_alibi"), ("t5", "s_t5")], "alibi"),
            _select(
                "direction",
                "direction",
                [("causal", "d_causal"), ("bidirectional", "d_bidirectional")],
                "causal",
            ),
            _select("tokens", "tokens", _literal("8", "16", "32", "64", "128", "256"), "16"),
            _number("heads", "heads", 1, 64, 8),
            _number("head", "head", 0, 63, 0),
            _number("buckets", "buckets", 4, 64, 32),
            _select(
                "maxdist", "max_distance", _literal("16", "32", "64", "128", "256", "512"), "128"
            ),
            _number("qi", "query_i", 0, 255, 15),
            _number("kj", "key_j", 0, 255, 0),
        ],
        # the T5 page opens it on T5's own defaults
        "schemes": {
            "t5": {
                "scheme": "t5",
                "direction": "bidirectional",
                "tokens": "256",
                "qi": 128,
                "kj": 0,
            }
        },
        "plots": [
            ("map", "bias_plot_map", "0 0 320 230"),
            ("side", "bias_plot_side", "0 0 320 230"),
        ],
        "readout_lines": 4,
        "text": {
            "en": {
                "key": "key j",
                "query": "query i",
                "head": "head h",
                "slope": "log₂ m",
                "rel": "relative position j − i",
                "bucket": "bucket",
                "masked": "masked",
                "alibi": "Head {h} of {n}: slope m = {m} = 2{log2}. Query {i}, key {j}: bias {v}.",
                "alibi_far": "The bias falls by m per token of distance: {far} between the last query and the first key.",
                "t5": "Query {i}, key {j}: relative position {rel}, bucket {b} of {N}.",
                "t5_far": "{exact} exact buckets per direction, then logarithmically wider ones; every distance from {far} on shares bucket {last}.",
                "t5_refused": "max_distance {D} does not exceed the {e} exact buckets of {N} buckets: posenc.t5_bucket refuses this setting (raise max_distance or lower the buckets).",
                "cols_alibi": ["head", "slope m", "log₂ m"],
                "cols_t5": ["bucket", "relative positions"],
            },
            "zh": {
                "key": "键 j",
                "query": "查询 i",
                "head": "[[attention head]] h",
                "slope": "log₂ m",
                "rel": "相对位置 j − i",
                "bucket": "[[bucket (bucketing)]]",
                "masked": "[[mask]]",
                "alibi": "第 {h} 个[[attention head]]（共 {n} 个）：斜率 m = {m} = 2{log2}。查询 {i}、键 {j}：[[bias]] {v}。",
                "alibi_far": "距离每增加一个[[token]]，[[bias]]就减少 m：最后一个查询对第一个键的[[bias]]为 {far}。",
                "t5": "查询 {i}、键 {j}：相对位置 {rel}，第 {b} 个桶（共 {N} 个）。",
                "t5_far": "每个方向先有 {exact} 个精确的桶，之后的桶按对数变宽；距离从 {far} 起都落在第 {last} 个桶。",
                "t5_refused": "max_distance {D} 没有超过 {N} 个桶中精确桶的个数 {e}：posenc.t5_bucket 拒绝这种设置（请增大 max_distance 或减少桶数）。",
                "cols_alibi": ["[[attention head]]", "斜率 m", "log₂ m"],
                "cols_t5": ["桶", "相对位置"],
            },
        },
    },
    "mrope": {
        "title": "mr_title",
        "controls": [
            _select("model", "model", _literal("Qwen2-VL", "Qwen2.5-VL", "Qwen3-VL"), "Qwen2-VL"),
            _select("resume", "resume", [("max", "r_max"), ("spatial", "r_spatial")], "max"),
            _select("merge", "merge", _literal("1", "2"), "2"),
            _number("before", "before", 1, 8, 2),
            _number("imgh", "image_h", 2, 16, 4, 2),
            _number("imgw", "image_w", 2, 16, 6, 2),
            _number("between", "between", 1, 8, 2),
            _number("frames", "frames", 1, 8, 3),
            _number("vidh", "video_h", 2, 8, 4, 2),
            _number("vidw", "video_w", 2, 8, 4, 2),
            _select("seconds", "seconds", _literal("0.5", "1", "2"), "0.5"),
            _select("tps", "tps", _literal("1", "2", "4"), "4"),
            _number("stamp", "stamp", 1, 6, 2),
            _number("after", "after", 1, 8, 2),
        ],
        "plots": [("ids", "mr_plot_ids", "0 0 320 230"), ("pairs", "mr_plot_pairs", "0 0 320 230")],
        "readout_lines": 6,
        "text": {
            "en": {
                "text": "text",
                "image": "image",
                "video": "video",
                "frame": "frame {k}",
                "stamp": "timestamp",
                "count": "{n} tokens: {img} image tokens, {vid} video tokens.",
                "token": "token index",
                "id": "position id",
                "resumed": "Text after the image resumes at {x}: the image's ids reach {M}, so the counter moved by {moved} for {k} image tokens.",
                "resumed_video": "Text after the video resumes at {x}; the video's temporal ids reach {T}.",
                "inside": " That is inside the video's id range.",
                "next": "The next generated token takes {next}.",
                "bands": "bands",
                "interleaved": "interleaved",
                "cols": ["token", "kind", "t", "h", "w"],
            },
            "zh": {
                "text": "文本",
                "image": "图像",
                "video": "视频",
                "frame": "第 {k} 帧",
                "stamp": "时间戳",
                "count": "共 {n} 个[[token]]：图像 {img} 个，视频 {vid} 个。",
                "token": "[[token]]序号",
                "id": "[[position ids]]",
                "resumed": "图像之后的文本从 {x} 接续：图像的编号最大为 {M}，所以计数器为 {k} 个图像[[token]]前进了 {moved}。",
                "resumed_video": "视频之后的文本从 {x} 接续；视频的时间编号最大为 {T}。",
                "inside": "这落在视频的编号范围之内。",
                "next": "下一个生成的[[token]]取 {next}。",
                "bands": "分段",
                "interleaved": "交错",
                "cols": ["[[token]]", "类型", "t", "h", "w"],
            },
        },
    },
}

"""The glossary's Chinese for figure strings that a page's code gives in English only (site_figures).

A figure's code takes its strings from a table per language (``site_figures.words``); where a
block still gives a string in English only (a label, legend, title or alt text), site_figures
looks it up here before the Chinese figure is laid out and drawn, so that figure is drawn with
its Chinese words. Math (``$...$``), numbers and names (posenc, YaRN, float32...) stay as they
are; math in a Chinese string becomes Unicode text (mathtext draws no CJK). Terms follow
docs/zh/glossary.md.
"""

from __future__ import annotations

import re

# whole strings, exactly as the code blocks write them
EXACT = {
    # axis labels
    "cosine similarity": "余弦相似度",
    "density": "密度",
    "measured std": "实测标准差",
    "dimension $d$": "维度 $d$",
    "std of cosine": "余弦的标准差",
    "head $h$ (0-based)": "注意力头 $h$（从 0 起）",
    "key $j$": "键 $j$",
    "query $i$": "查询 $i$",
    "position $p$": "位置 $p$",
    "position $q$": "位置 $q$",
    "cosine": "余弦",
    "integer": "整数",
    "normalized": "归一化",
    "binary": "二进制",
    "binary digit": "二进制位",
    "time / fastest peer (log scale)": "耗时 / 最快同类实现（对数坐标）",
    "pair index $i$": "配对索引 $i$",
    "wavelength $\\lambda_i$": "波长 $\\lambda_i$",
    "wavelength": "波长",
    "plain": "原始",
    "linear": "线性",
    "dynamic": "动态",
    "mean $|S_j|$": "$|S_j|$ 的均值",
    "all-ones score": "全 1 向量的分数",
    "divided by $d/2$": "除以 $d/2$",
    "start position $2^e$, $e$": "起始位置 $2^e$，$e$",
    "max abs error": "最大绝对误差",
    "offset $k$": "偏移 $k$",
    "column $x$": "列 $x$",
    "row $y$": "行 $y$",
    "random init": "随机初始化",
    "sinusoidal": "正弦",
    "bidirectional": "双向",
    "causal": "因果",
    "relative position $j - i$": "相对位置 $j - i$",
    "relative position $i - j$": "相对位置 $i - j$",
    "bucket": "桶",
    # deberta.md, resize.md (issue 11)
    "trained $7 \\times 7$": "训练时 $7 \\times 7$",
    "bicubic $14 \\times 14$": "双三次 $14 \\times 14$",
    "nearest $14 \\times 14$": "最近邻 $14 \\times 14$",
    "position": "位置",
    "dimension": "维度",
    "dimension $i$": "维度 $i$",
    "pair $i$": "频率对 $i$",
    "error": "误差",
    "max error": "最大误差",
    "position $p$ (log scale)": "位置 $p$（对数坐标）",
    "offset $k$ (positions)": "偏移 $k$（位置数）",
    "distance moved": "移动距离",
    "8 heads": "8 个头",
    "12 heads": "12 个头",
    # sinusoidal.md, rope.md, frontier.md (build-time pass of issue 9)
    "wavelength $2\\pi/\\omega_i$": "波长 $2\\pi/\\omega_i$",
    "angles in dtype": "角度用 x 的 dtype",
    "float32 angles": "float32 角度",
    "rounding": "舍入下限",
    "Kerple log": "Kerple（对数）",
    "Kerple power": "Kerple（幂）",
}

# strings built by f-strings in the code blocks: (pattern, replacement)
PATTERNS = [
    (r"^head (\d+), (.*)$", r"头 \1，\2"),
    (r"^patch (.*)$", r"图块 \1"),
    (r"^(\d+) heads$", r"\1 个头"),
    (r"^naive (\w+)$", r"朴素实现 \1"),
    # performance page: the case titles of bench.json
    (r"^sinusoidal table (.*)$", r"正弦位置编码表 \1"),
    (
        r"^RoPE on q and k (.*), every allocation in huge pages \((.*)\)$",
        r"对 q、k 应用旋转位置编码 \1，所有内存分配都用大页（\2）",
    ),
    (r"^RoPE on q and k (.*)$", r"对 q、k 应用旋转位置编码 \1"),
    (r"^module forward, (.*)$", r"模块前向计算，\1"),
]

# alt texts (aria-label of each figure)
ALT = {
    "DeBERTa bucket of each relative position i - j, clipped to the span": "DeBERTa 每个相对位置 i - j 的桶（截断到跨度之内）",
    "One channel of a 7 x 7 position table resized to 14 x 14, bicubic and nearest": "7 × 7 位置表的一个通道缩放到 14 × 14：双三次插值与最近邻插值",
    "cosine similarity of random Gaussian vectors: histograms and standard deviation against dimension": "随机高斯向量的余弦相似度：直方图，以及标准差随维度的变化",
    "log2 of the ALiBi slope of each head, for 8 and 12 heads": "8 个头和 12 个头时，每个头的 ALiBi 斜率的 log2",
    "ALiBi bias matrices of heads 0, 2 and 7 of 8, 16 tokens": "8 个头中第 0、2、7 个头的 ALiBi 偏置矩阵，16 个词元",
    "cosine similarity between rows: random table and sinusoidal table": "各行之间的余弦相似度：随机表与正弦表",
    "integer, normalized and binary codes of positions 0 to 31": "位置 0 到 31 的整数、归一化与二进制编码",
    "time relative to the fastest peer": "相对最快同类实现的耗时",
    "periodic code dimensions 0 to 3 against binary digits of weight 1 to 8": "周期性编码的第 0 到 3 维，与权重为 1 到 8 的二进制位对照",
    "distance from the code of position 3 to the codes of positions 0 to 255, d = 6": "位置 3 的编码到位置 0 到 255 的编码的距离，d = 6",
    "relative positions j - i, unclipped and clipped at 3": "相对位置 j - i：不截断与截断到 3",
    "wavelength of each RoPE pair against the trained length, d = 128": "旋转位置编码每个频率对的波长与训练长度对照，d = 128",
    "how linear, NTK-aware, dynamic, YaRN, Llama 3 and LongRoPE scaling bend the RoPE frequency ladder": "线性、NTK-aware、动态、YaRN、Llama 3 与 LongRoPE 缩放如何改变旋转位置编码的频率序列",
    "a query pair and a key pair rotated to positions (1, 0) and (4, 3)": "一个查询频率对和一个键频率对，分别旋转到位置 (1, 0) 和 (4, 3)",
    "RoFormer decay bound and all-ones score against relative distance, d = 128": "RoFormer 的衰减上界与全 1 向量的分数随相对距离的变化，d = 128",
    "RoPE error in bfloat16 and float16 against start position, three implementations": "三种实现在 bfloat16 与 float16 下的旋转位置编码误差随起始位置的变化",
    "two sin-cos pairs of positions 0 to 7 on the unit circle": "位置 0 到 7 的两个正弦余弦频率对在单位圆上的位置",
    "dot product of codes against offset for d = 64, 128, 512": "d = 64、128、512 时编码点积随偏移的变化",
    "cosine similarity of one patch's 2-D code to all patches of a 14 by 14 grid": "一个图块的二维编码与 14 × 14 网格中所有图块的余弦相似度",
    "cosine of the rotation angle of one pair over a 16 by 16 patch grid: axial row, axial column, mixed": "一个频率对的旋转角余弦在 16 × 16 图块网格上的分布：轴向行、轴向列、混合",
    "heatmap of PE for 256 positions and 128 dimensions": "256 个位置、128 维的 PE 热图",
    "wavelength of each pair, d = 128, log scale": "每个频率对的波长，d = 128，对数坐标",
    "distance moved by each pair over k positions, d = 128": "每个频率对在 k 个位置内移动的距离，d = 128",
    "float32 error against position, log scale": "float32 误差随位置的变化，对数坐标",
    "T5 bucket of each relative position, bidirectional and causal": "每个相对位置的 T5 桶：双向与因果",
    "T5 bias matrices with random weights, 64 tokens, bidirectional and causal": "随机权重的 T5 偏置矩阵，64 个词元，双向与因果",
    "an axial table of 24 positions: 3 row features constant over blocks of 6, 5 column features repeating every 6": "24 个位置的轴向表：3 个行特征在每 6 个位置的块内不变，5 个列特征每 6 个位置重复一次",
    "Kerple, Sandwich, ALiBi and ReRoPE as functions of the distance": "Kerple、Sandwich、ALiBi 与 ReRoPE 随距离变化的曲线",
    "layer patterns of Llama 4, Gemma 3, ModernBERT and Cohere2 with each layer's RoPE base": "Llama 4、Gemma 3、ModernBERT 与 Cohere2 的层模式，以及每层的 RoPE 底数",
    "error of the absorbed score against the key position, with and without RoPE on the compressed key": "吸收后的分数误差随键位置的变化：压缩键上有无旋转位置编码",
    "xPos decay factor against distance, d = 64": "xPos 衰减因子随距离的变化，d = 64",
}


_HAN = "\u3400-\u4dbf\u4e00-\u9fff\u3000-\u303f\uff00-\uffef"
_GREEK = {
    "alpha": "α",
    "beta": "β",
    "gamma": "γ",
    "delta": "δ",
    "theta": "θ",
    "lambda": "λ",
    "omega": "ω",
    "pi": "π",
    "varphi": "φ",
    "phi": "φ",
    "sigma": "σ",
    "mu": "μ",
    "cdot": "·",
    "times": "×",
    "le": "≤",
    "ge": "≥",
    "sqrt": "√",
    "log": "log",
    "ln": "ln",
}
_SUB = str.maketrans("0123456789+-=()aehijklmnoprstuvx", "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ")
_SUP = str.maketrans("0123456789+-=()ein", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ᵉⁱⁿ")


def _script(body: str, table: dict[int, int], mark: str) -> str:
    body = body.strip("{}")
    out = body.translate(table)
    if all(ord(c) in table for c in body):
        return out
    return mark + (body if len(body) == 1 else f"({body})")


def plain_math(text: str) -> str:
    """``$...$`` as Unicode text: mathtext cannot draw CJK, so a Chinese label holds no mathtext."""

    def one(m: re.Match[str]) -> str:
        tex = re.sub(r"\\([A-Za-z]+)", lambda g: _GREEK.get(g[1], g[1]), m[1])
        tex = re.sub(r"\\[,;!: ]", " ", tex)
        tex = re.sub(r"_(\{[^{}]*\}|.)", lambda g: _script(g[1], _SUB, "_"), tex)
        tex = re.sub(r"\^(\{[^{}]*\}|.)", lambda g: _script(g[1], _SUP, "^"), tex)
        return tex.replace("{", "").replace("}", "")

    return re.sub(r"\$([^$]*)\$", one, text)


def translate(text: str) -> str:
    """The Chinese for one figure string; strings with no entry (math, numbers, names) unchanged.

    A translated string holds no ``$...$`` (its math is turned into Unicode text)."""
    if text in EXACT:
        return plain_math(EXACT[text])
    if text in ALT:
        return ALT[text]
    for pattern, repl in PATTERNS:
        if re.match(pattern, text):
            return plain_math(re.sub(pattern, repl, text))
    if "$" in text and re.search(f"[{_HAN}]", text):  # already Chinese (a block that chose it)
        return plain_math(text)
    return text


def untranslated(text: str) -> bool:
    """Whether ``text`` still holds an English word outside math (two or more letters)."""
    prose = re.sub(r"\$[^$]*\$", "", text)
    return translate(text) == text and bool(re.search(r"[A-Za-z]{2,}", prose))

"""MkDocs hook: the model atlas page (docs/en/atlas.md, docs/zh/atlas.md), drawn at build time.

The page's prose and code live in its Markdown; three placeholders in it are replaced here by
what the record of the last verification run (docs/assets/atlas.json, written by
``make atlas`` = tools/atlas_record.py) and the registry of ``posenc.hf`` (its conventions and
model rows, as installed at build time) say:

- ``<!-- atlas:summary -->``: the counts of the run and one row per convention;
- ``<!-- atlas:conventions -->``: a section per convention (its title in the page's language,
  the page that derives it, its posenc call and pitfalls), with one table row per model type;
- ``<!-- atlas:unverified -->``: every model type not verified, grouped by reason.

Every model type gets one anchor, ``mt-<model_type>`` (``#mt-llama``), on its table row or, when
the walk found no convention for it, in the list of reasons. Convention sections are
``#conv-<name>``, reason groups ``#why-<reason>``: the same anchors in both languages.

For a reader looking for one model (issue 23):

- each model type is a search entry of its own (``on_page_context``), titled by its name and
  linking to its anchor, with its convention, posenc call and status as text: a search for
  ``mixtral`` offers the ``mixtral`` row, not the top of the convention section above it
  (assets/posenc.js also brings the row into view when the page itself is opened from a search
  for a model type, ``atlas/?h=mixtral``);
- a filter box after the page's first paragraph (``filter_box``; hidden without JavaScript,
  made to work by assets/posenc.js, no request) keeps only the rows and names that match what is
  typed, under the headings of their sections: ``qwen`` leaves the Qwen rows with their
  convention and call;
- each row of a table of model types is a block, at every width (``on_page_content`` marks
  the tables ``data-atlas``; posenc.css): no column is out of sight, and an identifier never
  breaks inside.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

from mkdocs.plugins import event_priority

import posenc.hf

ROOT = Path(__file__).resolve().parent.parent
RECORD = ROOT / "docs" / "assets" / "atlas.json"
PAGE = "atlas.md"
TEST = "test_hf_walk"  # tests/test_hf_walk.py runs the walk of tests/hf_walk.py
MARKS = ("summary", "conventions", "unverified")

STATUS = {
    "en": {"verified": "✓ verified", "mismatch": "✗ mismatch", "unverified": "– unverified"},
    "zh": {"verified": "✓ 已验证", "mismatch": "✗ 不一致", "unverified": "– 未验证"},
}

TEXT = {
    "en": {
        "summary": (
            "Record of {date}: transformers {transformers}, torch {torch}. transformers "
            "registers {total_model_types} model types; the walks ran the {walked} whose "
            "modeling code holds a rotary embedding, an ALiBi bias, T5-style buckets or a "
            "sinusoidal table: **{verified} verified**, {unverified} unverified and {mismatch} "
            "in mismatch ([not verified](#not-verified)). Of the {position_bearing} that carry "
            "token positions of their own (leaving out sub-configs no rotary embedding is built "
            "from, vision encoders, timestep tables and text models without positions), "
            "**{verified_percent}%** are verified."
        ),
        "overview": "| convention | derived on | model types | verified |",
        "none_row": "no convention read (the walk stopped before `describe`)",
        "conv_head": (
            "Derived on [{page}]({file}). {n} model types, {verified} verified. "
            "posenc call: `{call}`."
        ),
        "conv_empty": "Derived on [{page}]({file}). No model type of the record follows it yet.",
        "pitfalls": "A port must get right:",
        "table": "| model type | {test}, transformers | layers | read from | posenc call |",
        "std": "standard keys",
        "walk_row": "standard keys (a row the walk found)",
        "row": "registry row",
        "sub": "`{key}`",
        "pairing_key": "`{key}` → {pairing}",
        "dim_key": "width `{key}`",
        "pattern": "`{key}` = {default}",
        "nope": "NoPE `{key}`",
        "selector": "only `{key}` = {value}",
        "dim_rule": "width max(`{key}` // (2 · heads), {floor})",
        "base_key": "base `{key}`",
        "value_key": "values rotate: `{key}`",
        "heads": "rotated heads: the first {n}",
        "ntk_alpha": "`alpha`: NTK-alpha base",
        "why": "[why](#{anchor})",
        "in_table": "listed under [{title}](#conv-{conv})",
        "filter": "Find a model type",
        "filter_hint": "qwen, deepseek_v3, gemma…",
        "filter_count": "{n} model types match.",
        "filter_none": "No model type matches.",
    },
    "zh": {
        "summary": (
            "{date} 的记录：transformers {transformers}，torch {torch}。transformers 注册了 "
            "{total_model_types} 种模型类型，其中 {walked} 种的建模代码含有旋转位置编码、"
            "ALiBi 偏置、T5 式分桶或正弦表，遍历逐一运行了它们：**{verified} 种已验证**，"
            "{unverified} 种未验证，{mismatch} 种不一致（[未验证的类型](#not-verified)）。"
            "其中自身带有词元位置的共 {position_bearing} 种（不计不用于构建旋转位置编码的子配置、"
            "视觉编码器、时间步表和不使用位置的文本模型），**{verified_percent}%** 已验证。"
        ),
        "overview": "| 约定 | 推导见 | 模型类型数 | 已验证 |",
        "none_row": "未读出约定（遍历在 `describe` 之前中止）",
        "conv_head": (
            "推导见[{page}]({file})。共 {n} 种模型类型，{verified} 种已验证。"
            "posenc 调用：`{call}`。"
        ),
        "conv_empty": "推导见[{page}]({file})。记录中尚无模型类型采用此约定。",
        "pitfalls": "移植时须注意：",
        "table": "| 模型类型 | {test}，transformers | 层 | 读取方式 | posenc 调用 |",
        "std": "标准键",
        "walk_row": "标准键（遍历得到的条目）",
        "row": "注册表条目",
        "sub": "`{key}`",
        "pairing_key": "`{key}` → {pairing}",
        "dim_key": "旋转维度 `{key}`",
        "pattern": "`{key}` = {default}",
        "nope": "NoPE `{key}`",
        "selector": "仅当 `{key}` = {value}",
        "dim_rule": "旋转维度 max(`{key}` // (2 · 头数), {floor})",
        "base_key": "底数 `{key}`",
        "value_key": "值向量旋转：`{key}`",
        "heads": "旋转的头：前 {n} 个",
        "ntk_alpha": "`alpha`：NTK-alpha 底数",
        "why": "[原因](#{anchor})",
        "in_table": "见[{title}](#conv-{conv})",
        "filter": "查找模型类型",
        "filter_hint": "qwen、deepseek_v3、gemma……",
        "filter_count": "{n} 种模型类型匹配。",
        "filter_none": "没有匹配的模型类型。",
    },
}

# The walk's reasons start with one of these keys (tests/hf_walk.py); the rest is the detail.
REASONS = {
    "error": (
        "posenc differs from the model's code",
        "posenc 与模型代码结果不一致",
        "Both ran on the same q, k and position ids; the largest difference over max |x| is "
        "shown (the bound is 1e-6).",
        "两者使用相同的 q、k 与位置编号；列出的是最大差值除以 max |x|（上限为 1e-6）。",
    ),
    "describe failed": (
        "describe() raised on the small config",
        "describe() 在小配置上报错",
        "`posenc.hf.describe` does not read this config yet.",
        "`posenc.hf.describe` 尚不能读取这种配置。",
    ),
    "rotate failed": (
        "Scheme.rotate raised",
        "Scheme.rotate 报错",
        "`describe` read the config, but the rotation failed.",
        "`describe` 读出了配置，但旋转时出错。",
    ),
    "shape": (
        "the shapes differ",
        "形状不同",
        "posenc returned another shape than the model's code.",
        "posenc 返回的形状与模型代码不同。",
    ),
    "model rotary/apply": (
        "the model's own rotary code fails on the walk's inputs",
        "模型自身的旋转代码在遍历的输入上出错",
        "The model's rotary embedding or apply function raised on the walk's small config or its "
        "random q and k, so there is nothing to compare with.",
        "模型自身的旋转位置编码类或 apply 函数在遍历的小配置或随机 q、k 上报错，没有可供比较的结果。",
    ),
    "small config": (
        "no small config",
        "无法构造小配置",
        "The walk could not build a small config of this type.",
        "遍历无法为此类型构造小配置。",
    ),
    "no apply_rotary_pos_emb in its module": (
        "no apply_rotary_pos_emb",
        "没有 apply_rotary_pos_emb",
        "The module defines a rotary embedding but no function named `apply_rotary_pos_emb`, so "
        "the walk has no apply function of the model's own to compare with.",
        "模块定义了旋转位置编码类，但没有名为 `apply_rotary_pos_emb` 的函数，"
        "遍历找不到模型自己的 apply 函数来比较。",
    ),
    "no rotary embedding takes this config": (
        "no rotary embedding takes this config",
        "没有以此配置构建的旋转位置编码类",
        "The modeling file defines a `*RotaryEmbedding` class, but none is annotated to take "
        "this config type or its text sub-config; the walk does not guess which one applies.",
        "建模文件定义了 `*RotaryEmbedding` 类，但没有一个声明以这种配置或其文本子配置构建；"
        "遍历不去猜测哪一个适用。",
    ),
    "vision encoder": (
        "vision encoders",
        "视觉编码器",
        "These rotate by the row and column of image patches ([2-D RoPE for vision "
        "encoders](rope-2d.md)), not by the token positions that `describe` reads.",
        "它们按图块的行与列旋转（见[视觉编码器的二维旋转位置编码](rope-2d.md)），"
        "而不是按 `describe` 所读的词元位置旋转。",
    ),
    "M-RoPE model without a registry row": (
        "M-RoPE models without a registry row",
        "没有注册表条目的 M-RoPE 模型",
        "The description read from the standard keys equals the model's code on text position "
        "ids (t = h = w); the registry has no row for these types yet, so they are not counted "
        "as verified.",
        "仅凭标准键读出的描述在文本位置编号（t = h = w）上与模型代码一致；"
        "注册表中尚无这些类型的条目，因此不计为已验证。",
    ),
    "the generic description differs from the model's code": (
        "the generic description differs from the model's code",
        "通用描述与模型代码不一致",
        "No registry row, and what the standard keys alone describe differs from what the "
        "model's code does (the largest difference over max |x| is shown).",
        "注册表中没有条目，仅凭标准键得到的描述与模型代码的结果不同（括号中是最大差值除以 max |x|）。",
    ),
    "describe refuses its config": (
        "describe() refuses the config",
        "describe() 拒绝该配置",
        "`posenc.hf.describe` raised on the walk's small config of this type.",
        "`posenc.hf.describe` 在遍历为此类型构造的小配置上报错。",
    ),
    "not described": (
        "schemes posenc.hf does not describe yet",
        "posenc.hf 尚不能描述的方案",
        "The model's code does something `describe` has no words for yet (the detail is shown: "
        "axes split across the two halves of a pair, values that carry RoPE and an output "
        "rotated back...), so the walk does not compare.",
        "模型代码的做法超出了 `describe` 目前能表达的范围（细节见下：一对特征的两半取自"
        "不同的轴、值向量也带 RoPE 且输出再反向旋转等），因此遍历不作比较。",
    ),
    "no positions": (
        "no positions in the text model",
        "文本模型不使用位置",
        "The text model's attention takes no position encoding at all (only another part of the "
        "model rotates); these types are listed, not counted as position-bearing.",
        "文本模型的注意力完全不使用位置编码（只有模型的其他部分做旋转）；"
        "这些类型只列出，不计入带位置的类型。",
    ),
    "timestep embedding of a diffusion head, not token positions": (
        "timestep embeddings, not positions",
        "时间步嵌入，而非位置",
        "A sinusoidal table that encodes a diffusion timestep, not token positions.",
        "这是编码扩散时间步的正弦表，不是词元位置。",
    ),
    "modeling module does not import": (
        "the modeling module does not import",
        "建模模块无法导入",
        "Importing the modeling module raised.",
        "导入建模模块时报错。",
    ),
    "its reading-order encoder's 1-D t5 buckets are off by default": (
        "1-D t5 buckets off by default",
        "默认关闭的一维 T5 分桶",
        "The model has T5-style bucket code, but its default config does not use it.",
        "模型带有 T5 式分桶的代码，但默认配置并不使用它。",
    ),
    "its text model 'clip_text_model' is not verified": (
        "its text model is not verified",
        "其文本模型未验证",
        "A model type built around a text model is verified only when that text model is.",
        "以某个文本模型为核心的模型类型，只有在该文本模型已验证时才算已验证。",
    ),
    "two bucket sets": (
        "two bucket sets",
        "两套分桶",
        "Encoder and decoder bucket relative positions differently; `describe` has one scheme per "
        "model.",
        "编码器与解码器按不同的方式给相对位置分桶，而 `describe` 每个模型只给出一种方案。",
    ),
}

# The walk writes its reasons in English (docs/assets/atlas.json). The Chinese page shows the
# detail of a reason (what follows its group's key) from this table, keyed by the whole reason;
# tests/test_terms.py fails on a reason of the record that has no entry here.
DETAILS_ZH = {
    "vision encoder: 2-D rotary over patch grids": "在图块网格上做二维旋转",
    "not described: K = V, so the values carry RoPE and the attention output is rotated back by "
    "minus the angle at the query position; compressed KV entries (CSA/HCA layers) rotate at "
    "their compressed positions, and rope_parameters are keyed by 'main' / 'compress' rather "
    "than by layer type": (
        "K = V，所以值向量也带着旋转位置编码，注意力的输出再按查询位置的角度反向转回；"
        "压缩后的 KV 条目（CSA/HCA 层）按压缩后的位置旋转；`rope_parameters` 的键是 "
        "`'main'` / `'compress'`，而不是层类型"
    ),
    "not described: its text model (dots3_note_text) has per-layer MLA configs": (
        "其文本模型（`dots3_note_text`）的 MLA 配置逐层不同"
    ),
    "not described: per-layer MLA configs (per_layer_config: the sliding layers have their own "
    "heads, qk_nope/qk_rope head dims and base) that describe does not read per layer; its DSA "
    "indexer also rotates the first qk_rope_head_dim features of its own q and k, while "
    "attention rotates the last": (
        "MLA 配置逐层不同（`per_layer_config`：滑动窗口层有自己的头数、qk_nope/qk_rope "
        "头维度和底数），`describe` 不逐层读取；它的 DSA 索引器还旋转自己的 q、k 的前 "
        "`qk_rope_head_dim` 个特征，而注意力旋转的是最后这些特征"
    ),
    "not described: its text model (inkling2_text) adds a hidden-state-conditioned relative "
    "position bias": "其文本模型（`inkling2_text`）加上一个随隐藏状态变化的相对位置偏置",
    "not described: no rotary; its attention adds a hidden-state-conditioned relative position "
    "bias (rel_logits_proj: a trained bank of bias-versus-distance profiles mixed per token, zero "
    "for negative distances and beyond rel_extent)": (
        "不做旋转；注意力加上一个随隐藏状态变化的相对位置偏置（`rel_logits_proj`："
        "一组训练得到的“偏置随距离变化”的曲线，按词元混合；距离为负或超过 `rel_extent` 时为零）"
    ),
    "no positions: its text model (glm5_next_text) has none (KDA linear attention and NoPE MLA); "
    "only its vision encoder rotates (2-D)": (
        "其文本模型（`glm5_next_text`）不使用位置（KDA 线性注意力与无位置编码的 MLA）；"
        "只有视觉编码器做（二维）旋转"
    ),
    "no positions: its attention layers are KDA linear attention and NoPE MLA "
    "(validate_architecture refuses qk_rope_head_dim > 0 for the DSA layers); no rotary "
    "embedding is built": (
        "注意力层是 KDA 线性注意力和无位置编码的 MLA（`validate_architecture` 不允许 DSA 层的 "
        "`qk_rope_head_dim` 大于 0）；不构建旋转位置编码"
    ),
    "its reading-order encoder's 1-D t5 buckets are off by default (has_relative_attention_bias "
    "False) and ignored whenever its spatial bias is on (default); that bias is a box-relation "
    "embedding of box centres and sizes, not buckets": (
        "阅读顺序编码器的一维 T5 分桶默认关闭（`has_relative_attention_bias` 为 False），"
        "而且只要空间偏置打开（默认打开）就被忽略；那个空间偏置是由框的中心和大小算出的框关系嵌入，"
        "不是分桶"
    ),
    "two bucket sets: the decoder's compute_bias buckets causally with "
    "relative_attention_num_buckets/max_distance, but the encoder ignores its compute_bias and "
    "sums RelativePositionBiasAggregated: a 1-D t5 bucket bias whose parameters come from "
    "relative_bias_args (defaults 32/128, not the relative_attention_* keys) plus horizontal and "
    "vertical biases over bbox centres times 100 (max distance 100); not described": (
        "解码器的 `compute_bias` 按 `relative_attention_num_buckets`/`max_distance` 做因果分桶；"
        "编码器却不用自己的 `compute_bias`，而是把 `RelativePositionBiasAggregated` 的各项相加："
        "一项一维 T5 分桶偏置，参数取自 `relative_bias_args`（默认 32/128，不是 "
        "`relative_attention_*` 这些键），再加上按边框中心乘以 100 算出的水平与垂直偏置"
        "（最大距离 100）；`describe` 不能描述"
    ),
    # tests/hf_walk.py cuts a reason at 200 characters: the record holds the cut text
    'small config: StrictDataclassClassValidationError("Class validation error for validator '
    "'validate_architecture':\\n    ValueError: The audio token range ends at 266440, beyond the "
    "vocabulary (`text_con": (
        "transformers 的配置类在 `validate_architecture` 校验时拒绝了遍历的小配置"
        "（`StrictDataclassClassValidationError`）：音频词元的编号区间止于 266440，超出了词表"
    ),
    "model rotary/apply: RuntimeError('The size of tensor a (56) must match the size of tensor b "
    "(64) at non-singleton dimension 3')": (
        "`RuntimeError`：第 3 维上两个张量的大小不一致（56 与 64），该维不是大小为 1 的维"
    ),
}


def _detail_md(reason: str, detail: str, zh: bool) -> str:
    """The detail of a reason for the page: Chinese prose on a zh page, else the walk's text."""
    if zh and reason in DETAILS_ZH:
        return _zh(DETAILS_ZH[reason])
    return _code(detail)


def load_record(path: Path = RECORD) -> dict[str, Any]:
    """The record of the last verification run (docs/assets/atlas.json)."""
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def anchor(model_type: str) -> str:
    """The page anchor of ``model_type`` (``mt-llama``)."""
    return f"mt-{model_type}"


def reason_key(reason: str) -> str:
    """The group of a walk reason: a key of REASONS it starts with, else the text before its
    first ": " without parentheses that hold numbers (``"differs (error 1.3e+00): ..."``)."""
    if re.match(r"error \S+$", reason):
        return "error"
    for key in REASONS:
        if reason == key or reason.startswith((key + ":", key + " (")):
            return key
    prefix = reason.split(": ", 1)[0]
    return re.sub(r"\s*\([^()]*\d[^()]*\)", "", prefix).strip() or "?"


def reason_anchor(key: str) -> str:
    return "why-" + (re.sub(r"[^a-z0-9]+", "-", key.lower()).strip("-") or "other")


def _detail(reason: str, key: str) -> str:
    """What the reason says beyond its group's key."""
    if key == "error":
        return reason
    if reason.startswith(key + ": ") or reason == key:
        return reason[len(key) + 2 :].strip()
    return reason[len(key) :].strip(" :") if reason.startswith(key) else reason


# Chinese text: no space next to full-width punctuation or between two Chinese characters
# (the pages' own zh source is one line per paragraph; tests/test_zh_lines.py checks both)
_HAN = "\u3400-\u4dbf\u4e00-\u9fff"
_PUNCT = "\u3000-\u303f\uff00-\uffef\u2018\u2019\u201c\u201d\u2014\u2026"
_ZH_GAP = re.compile(rf"(?<=[{_PUNCT}])[ \t]+|[ \t]+(?=[{_PUNCT}])|(?<=[{_HAN}])[ \t]+(?=[{_HAN}])")


def _zh(text: str) -> str:
    return _ZH_GAP.sub("", text)


def _md(text: str) -> str:
    """Plain text for Markdown: no emphasis or table cell ends by accident."""
    return text.replace("\\", "\\\\").replace("*", "\\*").replace("|", "\\|")


def _code(text: str) -> str:
    """``text`` as inline HTML code that Markdown leaves alone (no links, emphasis or code)."""
    out = html.escape(text)
    for ch in "[]*_`\\|$":
        out = out.replace(ch, f"&#{ord(ch)};")
    return f"<code>{out}</code>"


def _page_title(page: str, lang: str) -> str:
    first = (ROOT / "docs" / lang / f"{page}.md").read_text(encoding="utf-8").splitlines()[0]
    return re.sub(r"\s*\{\s*#[^}]*\}\s*$", "", first.lstrip("# ")).strip()


def call_form(conv: posenc.hf.Convention, pairing: str | None = None, short: bool = False) -> str:
    """The posenc call of a convention (its form: the parameters come from each config). Short:
    the function alone, and the pairing where a model row overrides the convention's."""
    if short:
        name = call_form(conv).split("(", 1)[0].removeprefix("posenc.")
        if pairing and pairing != conv.pairing:
            return f"{name}(…, pairing='{pairing}')"
        return f"{name}(…)"
    pairing = pairing or conv.pairing
    if conv.kind == "mrope" and conv.axes == 3 and not conv.layout:
        inter = ", interleaved=True" if "interleaved" in conv.name else ""
        return f"posenc.apply_mrope(q, position_ids, mrope_section, base=rope_theta{inter})"
    if conv.kind == "rope" and conv.slot == "tail":
        return f"posenc.apply_mla_rope(q, k_pe, position_ids, base=rope_theta, pairing='{pairing}')"
    if conv.kind == "rope" and pairing in ("half", "interleaved"):
        rot = ", rotary_dim=rotary_dim" if "partial" in conv.name else ""
        x = {"hidden": "h", "qkv": "x"}.get(conv.applies_to, "q")  # hidden states; q, k, v
        return f"posenc.apply_rope({x}, position_ids, base=rope_theta, pairing='{pairing}'{rot})"
    return {
        "alibi": "posenc.alibi_bias(q_len, k_len, n_heads)",
        "t5": "posenc.t5_bucket(relative_position, num_buckets=…, max_distance=…)",
        "sinusoidal": "posenc.sinusoidal(positions, dim)",
    }.get(conv.kind, "posenc.hf.describe(config).rotate(q, position_ids, layer=l)")


def _layers(kinds: list[str], conv: posenc.hf.Convention | None) -> str:
    """The layer types the walk checked; the kind only where it is not the convention's own."""
    out = []
    for k in kinds:
        layer_type, _, kind = k.partition(":")
        if kind == "nope":
            out.append(f"{layer_type} (NoPE)")
        elif conv is not None and kind != conv.kind:
            out.append(f"{layer_type} ({kind})")
        else:
            out.append(layer_type)
    return "<br>".join(out) or "—"


def _read_from(model_type: str, lang: str) -> str:
    t = TEXT[lang]
    row = posenc.hf.MODELS.get(model_type)
    if row is None:
        return t["std"]
    from posenc.hf.registry import WRITTEN

    items = []
    if row.sub_config:
        items.append(t["sub"].format(key=row.sub_config))
    if row.pairing_key:
        conv = posenc.hf.CONVENTIONS.get(row.convention)
        alt = "deinterleave" if conv is not None and conv.slot == "tail" else "interleaved"
        items.append(t["pairing_key"].format(key=row.pairing_key, pairing=alt))
    if row.dim_key:
        items.append(t["dim_key"].format(key=row.dim_key))
    if row.pattern:
        items.append(t["pattern"].format(key=row.pattern[0], default=row.pattern[1]))
    if row.nope:
        items.append(t["nope"].format(key=row.nope))
    if row.selector:
        items.append(t["selector"].format(key=row.selector[0], value=_code(repr(row.selector[1]))))
    if row.dim_rule:
        items.append(t["dim_rule"].format(key=row.dim_rule[0], floor=row.dim_rule[1]))
    if row.base_key:
        items.append(t["base_key"].format(key=row.base_key))
    if row.value_key:
        items.append(t["value_key"].format(key=row.value_key))
    if row.rotated_heads:
        items.append(t["heads"].format(n=row.rotated_heads))
    if row.ntk_alpha:
        items.append(t["ntk_alpha"])
    return "<br>".join(items) or (t["row"] if model_type in WRITTEN else t["walk_row"])


def _nowrap(code: str) -> str:
    """Inline code that a narrow table column does not break mid-word (the table scrolls)."""
    return f'<code style="white-space: nowrap">{_code(code)[6:-7]}</code>'


def _type_link(model_type: str) -> str:
    a = anchor(model_type)
    return f'<a id="{a}" href="#{a}">{_code(model_type)}</a>'


def _status(entry: dict[str, Any], lang: str, version: str) -> str:
    """The walk's verdict, a link to the reason when it is not verified, and the version."""
    label = STATUS[lang][entry["status"]]
    if entry["status"] != "verified":
        why = TEXT[lang]["why"].format(anchor=reason_anchor(reason_key(entry["reason"])))
        label = f"{label} · {why}"
    # the space: where the row is a block, the break is hidden (posenc.css); the version as text
    return f"{label} <br>{version}"


def _groups(record: dict[str, Any]) -> list[tuple[str, list[str]]]:
    """(convention, model types) for every convention, largest first; "" last."""
    # "unknown" is the convention of no row: types posenc.hf does not describe
    by: dict[str, list[str]] = {name: [] for name in posenc.hf.CONVENTIONS if name != "unknown"}
    for mt, entry in sorted(record["types"].items()):
        by.setdefault(entry["convention"], []).append(mt)
    named = sorted(((c, ts) for c, ts in by.items() if c), key=lambda g: (-len(g[1]), g[0]))
    return named + ([("", by[""])] if by.get("") else [])


def _title(conv_name: str, lang: str) -> str:
    conv = posenc.hf.CONVENTIONS.get(conv_name)
    if conv is None:
        return conv_name
    return (_zh(conv.title_zh) if lang == "zh" else conv.title_en) or conv_name


def summary(record: dict[str, Any], lang: str) -> str:
    t = TEXT[lang]
    lines = [
        t["summary"].format(**record, **record["summary"]),
        "",
        t["overview"],
        "| --- | --- | --: | --: |",
    ]
    types = record["types"]
    for conv_name, mts in _groups(record):
        n_ok = sum(types[m]["status"] == "verified" for m in mts)
        if not conv_name:
            lines.append(f"| [{t['none_row']}](#not-verified) | — | {len(mts)} | {n_ok} |")
            continue
        conv = posenc.hf.CONVENTIONS.get(conv_name)
        page = f"[{_md(_page_title(conv.page, lang))}]({conv.page}.md)" if conv else "—"
        title = _md(_title(conv_name, lang))
        lines.append(f"| [{title}](#conv-{conv_name}) | {page} | {len(mts)} | {n_ok} |")
    return "\n".join(lines) + "\n"


def conventions(record: dict[str, Any], lang: str) -> str:
    t = TEXT[lang]
    types = record["types"]
    out = []
    for conv_name, mts in _groups(record):
        if not conv_name:
            continue
        conv = posenc.hf.CONVENTIONS.get(conv_name)
        out.append(f"### {_md(_title(conv_name, lang))} {{ #conv-{conv_name} }}\n")
        if conv is None:  # the record names a convention the registry no longer has
            out.append(f"`{conv_name}`\n")
        elif not mts:
            out.append(
                t["conv_empty"].format(
                    page=_md(_page_title(conv.page, lang)), file=f"{conv.page}.md"
                )
                + "\n"
            )
            continue
        else:
            n_ok = sum(types[m]["status"] == "verified" for m in mts)
            out.append(
                t["conv_head"].format(
                    page=_md(_page_title(conv.page, lang)),
                    file=f"{conv.page}.md",
                    n=len(mts),
                    verified=n_ok,
                    call=call_form(conv),
                )
                + "\n"
            )
            pits = conv.pitfalls_zh if lang == "zh" else conv.pitfalls_en
            if pits:
                out.append(t["pitfalls"] + "\n")
                out.append(
                    "\n".join(f"- {_md(_zh(p) if lang == 'zh' else p)}" for p in pits) + "\n"
                )
        out.append(t["table"].format(test=_nowrap(TEST)))
        out.append("| --- | --- | --- | --- | --- |")
        for mt in mts:
            e = types[mt]
            row = posenc.hf.MODELS.get(mt)
            call = call_form(conv, row.pairing if row else None, short=True) if conv else "—"
            cells = [
                _type_link(mt),
                _status(e, lang, e.get("verified_on") or record["transformers"]),
                _layers(e["layer_kinds"], conv),
                _read_from(mt, lang),
                _code(call),
            ]
            out.append("| " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out) + "\n"


def unverified(record: dict[str, Any], lang: str) -> str:
    t = TEXT[lang]
    zh = lang == "zh"
    groups: dict[str, list[str]] = {}
    for mt, entry in sorted(record["types"].items()):
        if entry["status"] != "verified":
            groups.setdefault(reason_key(entry["reason"]), []).append(mt)
    colon, left, right = ("：", "（", "）") if zh else (": ", " (", ")")
    out = []
    for key, mts in sorted(groups.items(), key=lambda g: (-len(g[1]), g[0])):
        head_en, head_zh, text_en, text_zh = REASONS.get(key, (key, key, "", ""))
        out.append(
            f"### {_md(head_zh if zh else head_en)}{left}{len(mts)}{right} "
            f"{{ #{reason_anchor(key)} }}\n"
        )
        if text_en:
            out.append((text_zh if zh else text_en) + "\n")
        entries = [record["types"][mt] for mt in mts]
        details = {_detail(e["reason"], key) for e in entries}
        if len(details) == 1 and len({e["status"] for e in entries}) == 1:
            # one paragraph: the status and the detail once, then the names
            label = STATUS[lang][entries[0]["status"]]
            detail = details.pop()
            text = _detail_md(entries[0]["reason"], detail, zh) if detail else ""
            after = ""
            if zh and "（" in text:  # no parentheses inside parentheses: a sentence after the names
                after = f"。{text}。"
            elif text:
                label += f"{left}{text}{right}"
            # each name an item of its own for the filter box (assets/posenc.js); posenc.css
            # draws the " · " between them
            names = [
                f'<span data-mt="{mt}">'
                + (
                    f'<a href="#{anchor(mt)}">{_code(mt)}</a>'
                    if e["convention"]
                    else _type_link(mt)
                )
                + "</span>"
                for mt, e in zip(mts, entries, strict=True)
            ]
            out.append(f"{label}{colon}" + "".join(names) + after + "\n")
            continue
        for mt, e in zip(mts, entries, strict=True):
            label = STATUS[lang][e["status"]]
            detail = _detail(e["reason"], key)
            if e["convention"]:
                where = t["in_table"].format(
                    title=_md(_title(e["convention"], lang)), conv=e["convention"]
                )
                name = f"[`{mt}`](#{anchor(mt)}){left}{where}{right}"
            else:
                name = _type_link(mt)
            code = f"{colon}{_detail_md(e['reason'], detail, zh)}" if detail else ""
            gap = "" if name.endswith("）") else " "  # no space after full-width punctuation
            out.append(f"- {name}{gap}{label}{code}")
        out.append("")
    return "\n".join(out) + "\n"


def filter_box(lang: str) -> str:
    """The filter box: raw HTML, hidden until assets/posenc.js makes it work (no request)."""
    t = TEXT[lang]
    return (
        '<div class="posenc-filter" data-atlas-filter hidden>\n'
        f'<label for="atlas-filter">{t["filter"]}</label>\n'
        f'<input id="atlas-filter" type="search" placeholder="{html.escape(t["filter_hint"])}" '
        'autocomplete="off" autocapitalize="off" spellcheck="false" '
        f'data-count="{html.escape(t["filter_count"])}" data-none="{html.escape(t["filter_none"])}">\n'
        '<p class="posenc-filter__count" role="status"></p>\n'
        "</div>\n"
    )


def _after_first_paragraph(markdown: str, block: str) -> str:
    """``markdown`` with ``block`` after the first paragraph that follows its title."""
    lines = markdown.split("\n")
    title = next((i for i, line in enumerate(lines) if line.startswith("# ")), -1)
    i = title + 1
    while i < len(lines) and not lines[i].strip():  # to the paragraph
        i += 1
    while i < len(lines) and lines[i].strip():  # to its end
        i += 1
    return "\n".join([*lines[:i], "", block.rstrip("\n"), *lines[i:]])


def render(markdown: str, lang: str, record: dict[str, Any] | None = None) -> str:
    """``markdown`` with the placeholders replaced (``lang`` is ``"en"`` or ``"zh"``) and the
    filter box after its first paragraph."""
    record = load_record() if record is None else record
    parts = {"summary": summary, "conventions": conventions, "unverified": unverified}
    for mark in MARKS:
        placeholder = f"<!-- atlas:{mark} -->"
        if placeholder not in markdown:
            raise ValueError(f"{lang}/{PAGE} must hold the placeholder {placeholder}")
        markdown = markdown.replace(placeholder, parts[mark](record, lang))
    return _after_first_paragraph(markdown, filter_box(lang))


def search_entries(record: dict[str, Any], lang: str, url: str) -> list[dict[str, str]]:
    """One search entry per model type, linking to its anchor on the atlas page at ``url``: its
    name as the title; its convention, posenc call and status as the text."""
    entries = []
    for mt, e in sorted(record["types"].items()):
        conv = posenc.hf.CONVENTIONS.get(e["convention"]) if e["convention"] else None
        parts = [f"<code>{html.escape(mt)}</code>"]
        if conv is not None:
            row = posenc.hf.MODELS.get(mt)
            parts.append(html.escape(_title(conv.name, lang)))
            call = call_form(conv, row.pairing if row else None, short=True)
            parts.append(f"<code>{html.escape(call)}</code>")
        parts.append(html.escape(STATUS[lang][e["status"]]))
        entries.append({"location": f"{url}#{anchor(mt)}", "title": mt, "text": " · ".join(parts)})
    return entries


@event_priority(-50)  # after the search plugin (priority 0) has indexed the page's sections
def on_page_context(context: Any, page: Any, config: Any, **kwargs: Any) -> Any:
    src = page.file.src_uri
    if src not in (f"en/{PAGE}", f"zh/{PAGE}"):
        return context
    search = config.plugins.get("material/search") or config.plugins.get("search")
    index = getattr(search, "search_index", None)
    if index is None or not hasattr(index, "entries"):
        return context
    segment = getattr(index, "_segment_chinese", None)  # the plugin's jieba cut, as for sections
    for entry in search_entries(load_record(), src.split("/", 1)[0], page.url):
        if segment is not None:
            entry = {**entry, "text": segment(entry["text"])}
        index.entries.append(entry)
    return context


def on_page_content(html_: str, page: Any, **kwargs: Any) -> str:
    """The atlas' tables of model types marked ``data-atlas``: posenc.css lays each row out as a
    block, at every width (hooks/tables.py, which runs after this hook, labels their cells)."""
    if page.file.src_uri not in (f"en/{PAGE}", f"zh/{PAGE}"):
        return html_
    parts = html_.split("<table>")
    for i in range(1, len(parts)):
        if 'id="mt-' in parts[i].split("</table>", 1)[0]:  # a table of model types
            parts[i] = " data-atlas>" + parts[i]
        else:
            parts[i] = ">" + parts[i]
    return "<table".join(parts)


def on_page_markdown(markdown: str, page: Any, **kwargs: Any) -> str:
    src = page.file.src_uri
    if src not in (f"en/{PAGE}", f"zh/{PAGE}"):
        return markdown
    return render(markdown, src.split("/", 1)[0])

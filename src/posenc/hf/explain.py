"""``Scheme.explain``: the scheme in a few lines of English or Chinese.

The data of ``posenc explain --json`` (``_explain_dict``, schema ``_SCHEMA``) and the pitfalls
(``_pitfalls``) are private: their public forms are the command's ``--json`` output (schema
``posenc.explain/1``, documented on the atlas page) and :meth:`Scheme.explain`, with
:meth:`Scheme.to_dict` for the data in Python. A Python function returning the same JSON would be
a third public form of one thing (issue 20, item 6).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from typing import Any, Protocol

from .._array import check_choice
from .conventions import CONVENTIONS
from .layer import LayerScheme
from .registry import TRANSFORMERS_VERSION, as_jsonable, installed_transformers, verified_on

__all__ = ["explain", "posenc_call"]


class SchemeLike(Protocol):
    """What this module reads of a :class:`posenc.hf.Scheme` (which imports this module: the
    dependency runs one way, scheme -> explain)."""

    @property
    def model_type(self) -> str: ...

    @property
    def convention(self) -> str: ...

    @property
    def kind(self) -> str: ...

    @property
    def known(self) -> bool: ...

    @property
    def layers(self) -> tuple[LayerScheme, ...]: ...

    @property
    def sources(self) -> Mapping[str, str]: ...

    @property
    def notes(self) -> tuple[str, ...]: ...

    @property
    def notes_zh(self) -> tuple[str, ...]: ...

    @property
    def ignored_keys(self) -> tuple[str, ...]: ...

    @property
    def fixed(self) -> Mapping[str, Any]: ...

    @property
    def applies_to(self) -> str: ...

    @property
    def num_layers(self) -> int: ...

    def layer(self, index: int) -> LayerScheme: ...


_TEXT = {
    "en": {
        "head": "{model_type}: {title}",
        "unknown": (
            "Not in the registry: described from its standard keys only, not verified against "
            "transformers {version}. Known model types: python -m posenc explain --list."
        ),
        "layers": "Layers: {n}",
        "group": "Layers {which} ({layer_type}):",
        "nope": "Layers {which} ({layer_type}): no rotation (NoPE)",
        "none": "Layers {which} ({layer_type}): no positions (their attention takes none)",
        "temperature": (
            "attention temperature (queries only): q × (1 + {a:g}·log1p(floor((p + 1) / {s}))), "
            "p the cache position (arange(seq) + tokens already cached); keys unscaled"
        ),
        "call": "posenc call:",
        "pitfalls": "Pitfalls:",
        "notes": "Quirks of {model_type}:",
        "ignored": "Keys of rope_parameters not used by any formula: {keys}",
        "verified": "Verified against transformers {version}.",
        "installed": (
            "Verified against transformers {version}; transformers {installed} is installed: "
            "re-verify with `make atlas-check` (tools/atlas_check.py)."
        ),
        "norotate": "Positions: {kind} (no rotation of q and k).",
        "qkv": "Rotates: queries, keys and values (values rotate too, by the same angles).",
        "indexer": (
            "DSA lightning indexer, in every layer (its own q and k heads, the FIRST rotary_dim "
            "features rotated with the attention's cos and sin):"
        ),
        "hidden": (
            "Rotates: the hidden states split into heads, before W_q and W_k (the same rotated "
            "states feed both projections; values are not rotated)."
        ),
    },
    "zh": {
        "head": "{model_type}：{title}",
        "unknown": (
            "注册表中没有此类型：仅按标准键描述，未与 transformers {version} 核对。"
            "已知的模型类型见 python -m posenc explain --list。"
        ),
        "layers": "层数：{n}",
        "group": "第 {which} 层（{layer_type}）：",
        "nope": "第 {which} 层（{layer_type}）：不旋转（NoPE）",
        "none": "第 {which} 层（{layer_type}）：没有位置信息（这些层的注意力不使用位置）",
        "temperature": (
            "注意力温度（只乘在查询上）：q × (1 + {a:g}·log1p(floor((p + 1) / {s})))，p 为缓存位置"
            "（arange(seq) 加上已缓存的词元数）；键不缩放"
        ),
        "call": "posenc 调用：",
        "pitfalls": "移植要点：",
        "notes": "{model_type} 的特别之处：",
        "ignored": "rope_parameters 中未被任何公式使用的键：{keys}",
        "verified": "已与 transformers {version} 核对。",
        "installed": (
            "已与 transformers {version} 核对；当前安装的是 transformers {installed}："
            "可用 `make atlas-check`（tools/atlas_check.py）重新核对。"
        ),
        "norotate": "位置：{kind}（不旋转 q 与 k）。",
        "qkv": "旋转对象：查询、键与值（值向量也按相同角度旋转）。",
        "indexer": (
            "DSA 闪电索引器，每层都有（自己的 q、k 头，用注意力的 cos 与 sin 旋转其前 rotary_dim "
            "个特征）："
        ),
        "hidden": (
            "旋转对象：分头后的隐藏状态，在 W_q 与 W_k 之前（同一份旋转后的状态送入两个投影；"
            "值向量不旋转）。"
        ),
    },
}

# what a terminal may act on or that hides text, in strings from a config file: control
# characters (C0, DEL, C1), format characters (bidi overrides, zero-width), lone surrogates,
# line and paragraph separators
_UNSAFE = frozenset(("Cc", "Cf", "Cs", "Zl", "Zp"))


def _escaped(ch: str) -> str:
    if ch in "\n\r\t":
        return repr(ch)[1:-1]
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _printable(text: str, keep: str = "") -> str:
    """``text`` with the characters a terminal may act on (:data:`_UNSAFE`) escaped as Python
    writes them (``\\x1b``, ``\\u202e``), but those in ``keep``; a string from a config file
    goes through this before it is printed."""
    if text.isprintable():  # the common case, in C
        return text
    return "".join(
        ch if ch in keep or unicodedata.category(ch) not in _UNSAFE else _escaped(ch) for ch in text
    )


_FIELDS = (
    "pairing",
    "slot",
    "head_dim",
    "rotary_dim",
    "base",
    "rope_type",
    "scaling",
    "attention_factor",
    "window",
    "mrope_section",
    "mrope_interleaved",
    "rotated_heads",
    "mrope_layout",
)


def _ranges(indices: list[int]) -> str:
    out: list[str] = []
    start = prev = indices[0]
    for i in [*indices[1:], None]:
        if i is not None and i == prev + 1:
            prev = i
            continue
        out.append(str(start) if start == prev else f"{start}-{prev}")
        if i is not None:
            start = prev = i
    return ", ".join(out)


def _key(layer: LayerScheme) -> tuple[Any, ...]:
    d = layer.to_dict()
    d.pop("index")
    return tuple(sorted((k, repr(v)) for k, v in d.items()))


def posenc_call(scheme: SchemeLike, layer: int = 0) -> str:
    """Experimental. The posenc function call that reproduces layer ``layer`` (a line of Python).

    A NoPE layer gives a comment; a scheme without rotation names the posenc function that
    reproduces its positions.
    """
    if not hasattr(scheme, "layer") or not hasattr(scheme, "model_type"):
        raise TypeError(f"scheme must be a posenc.hf.Scheme, got {type(scheme).__name__}")
    if getattr(scheme, "kind", None) == "unknown":
        raise ValueError(
            f"model_type {scheme.model_type!r} is unknown to posenc.hf: no posenc call is "
            "described for it (see Scheme.notes)"
        )
    return _call_for(scheme, scheme.layer(layer))


def _call_for(scheme: SchemeLike, spec: LayerScheme) -> str:
    """The posenc call of one layer's parameters (a layer of the scheme, or its indexer)."""
    if spec.layer_type == "indexer":
        if spec.pairing == "half":
            return (
                f"posenc.apply_rope(x, position_ids, base={_num(spec.base)}, pairing='half', "
                f"rotary_dim={spec.rotary_dim}"
                + (f", scaling={dict(spec.scaling)!r}" if spec.scaling else "")
                + ")  # x = the indexer's q or k heads"
            )
        return "posenc.hf.describe(config).rotate_indexer(x, position_ids)"
    if spec.kind == "nope" and spec.query_temperature is not None:
        return (
            f"posenc.hf.describe(config).scale_queries(q, cache_position, layer={spec.index})"
            "  # k unchanged"
        )
    if spec.kind == "nope":
        return "q, k  # unchanged: a NoPE layer"
    if spec.kind not in ("rope", "mrope"):
        return _fixed_call(scheme, spec.kind)
    extra = f", scaling={dict(spec.scaling)!r}" if spec.scaling else ""
    if spec.kind == "mrope" and len(spec.mrope_section or ()) == 3 and not spec.mrope_layout:
        inter = ", interleaved=True" if spec.mrope_interleaved else ""
        return (
            f"posenc.apply_mrope(q, position_ids, {list(spec.mrope_section or ())}, "
            f"base={_num(spec.base)}{inter})"
        )
    if spec.slot == "tail":
        return (
            f"posenc.apply_mla_rope(q, k_pe, position_ids, base={_num(spec.base)}, "
            f"pairing={spec.pairing!r}{extra})"
        )
    if spec.rope_type == "proportional" or spec.rotated_heads is not None or spec.kind == "mrope":
        return f"posenc.hf.describe(config).rotate(q, position_ids, layer={spec.index})"
    rot = "" if spec.rotary_dim == spec.head_dim else f", rotary_dim={spec.rotary_dim}"
    dyn = (
        ", seq_len=int(position_ids.max()) + 1" if spec.rope_type in ("dynamic", "longrope") else ""
    )
    x, note = _OPERAND.get(getattr(scheme, "applies_to", "qk"), ("q", ""))
    return (
        f"posenc.apply_rope({x}, position_ids, base={_num(spec.base)}, pairing={spec.pairing!r}"
        f"{rot}{extra}{dyn}){note}"
    )


# what posenc.apply_rope turns, by Convention.applies_to: the operand and a comment
_OPERAND = {
    "qkv": ("x", "  # x = q, k and v alike"),
    "hidden": ("h", "  # h = hidden states as (batch, heads, seq, head_dim), before W_q, W_k"),
}


def _num(value: Any) -> str:
    """``value`` short (``%g``) where that loses nothing, else in full (NTK-alpha bases)."""
    short = f"{value:g}"
    return short if float(short) == float(value) else repr(float(value))


def _fixed_call(scheme: SchemeLike, kind: str) -> str:
    f = scheme.fixed
    if kind == "alibi":
        call = f"posenc.alibi_bias(q_len, k_len, {f['num_heads']}, max_bias={f['max_bias']:g})"
        scale = float(f.get("scale", 1.0))
        return call if scale == 1.0 else f"{call} * {scale:.6g}"
    if kind == "t5":
        call = (
            f"posenc.t5_bucket(key_pos - query_pos, num_buckets={f['num_buckets']}, "
            f"max_distance={f['max_distance']}, bidirectional={f['bidirectional']})"
        )
        return call + ("  # decoder: bidirectional=False" if "decoder_bidirectional" in f else "")
    if kind == "sinusoidal":
        if f.get("table") == "marian":
            return f"posenc.compat.marian_sinusoidal_weight(n_pos, {f['dim']})"
        if f.get("table") == "cos_first":
            return f"posenc.hf.describe(config).function()(num_embeddings)  # [cos | sin], d={f['dim']}"
        if f.get("table") == "whisper" and "decoder_length" in f:
            return f"posenc.compat.whisper_sinusoids({f['length']}, {f['dim']}){_WHISPER_NOTE}"
        if f.get("table") == "whisper":
            return f"posenc.compat.whisper_sinusoids(length, {f['dim']})"
        return (
            f"posenc.compat.fairseq_sinusoidal_embedding(num_embeddings, {f['dim']}, "
            f"padding_idx={f.get('padding_idx')})"
        )
    return "no positions in attention" if kind == "none" else f"{kind}: no posenc function"


# --- pitfalls chosen by what the config does -----------------------------------------------------
# A row: (name, en, zh). _PITFALL_FACTS[name](scheme) gives the values the text is filled with, or
# None where the config does not do it (the convention's own pitfalls come from CONVENTIONS).
_CONFIG_PITFALLS = (
    (
        "mla_softmax_scale",
        "The softmax scale is {scale:.6g} = {width}**-0.5 × {multiplier:.4g} (YaRN's "
        "mscale_all_dim, squared), not {width}**-0.5: {call}.",
        "softmax 缩放为 {scale:.6g} = {width}**-0.5 × {multiplier:.4g}（YaRN 的 mscale_all_dim "
        "取平方），而不是 {width}**-0.5：{call}。",
    ),
    (
        "attention_factor",
        "This config's {rope_type} scaling multiplies cos and sin by the attention factor "
        "{factor:.6g}, so q·k grows by its square {square:.6g}; a port that applies it to the "
        "softmax scale instead must square it.",
        "此配置的 {rope_type} 缩放把注意力因子 {factor:.6g} 乘在 cos 和 sin 上，q·k 因而放大其平方 "
        "{square:.6g} 倍；若移植时改乘在 softmax 缩放上，须用它的平方。",
    ),
    (
        "longrope",
        "LongRoPE switches the whole sequence to long_factor once max(position_ids) + 1 exceeds "
        "original_max_position_embeddings = {length}: the first tokens turn differently too, so "
        "keys cached while the sequence was shorter no longer match.",
        "一旦 max(position_ids) + 1 超过 original_max_position_embeddings = {length}，LongRoPE "
        "会让整个序列改用 long_factor：前面的词元也随之改变角度，序列较短时缓存的键不再匹配。",
    ),
    (
        "dynamic",
        "Dynamic NTK scaling grows the base once max(position_ids) + 1 exceeds {length}; "
        "transformers' module keeps the grown frequencies for later shorter calls until the "
        "length drops below {length} (posenc's Scheme.rotate is a fresh module on every call).",
        "一旦 max(position_ids) + 1 超过 {length}，动态 NTK 缩放会增大 base；transformers 的模块"
        "在之后较短的调用中沿用增大后的频率，直到长度降到 {length} 以下"
        "（posenc 的 Scheme.rotate 每次调用都相当于一个新模块）。",
    ),
)


def _mla_scale(scheme: SchemeLike) -> dict[str, Any] | None:
    """MLA (rotary features at the tail) with a non-zero mscale_all_dim: the softmax scale
    transformers' ``yarn_apply_mscale`` gives the attention (every tail-slot model of 5.24)."""
    from ..mla import mla_softmax_scale

    for layer in _rotary(scheme):
        scaling = layer.scaling or {}
        if layer.slot != "tail" or not scaling.get("mscale_all_dim"):
            continue
        rope, width = int(layer.rotary_dim or 0), int(layer.head_dim or 0)
        scale = mla_softmax_scale(width - rope, rope, scaling=scaling)
        return {
            "scale": scale,
            "multiplier": scale * width**0.5,
            "call": f"posenc.mla_softmax_scale({width - rope}, {rope}, scaling=...)",
            "width": width,
        }
    return None


def _rotary(scheme: SchemeLike) -> list[LayerScheme]:
    return [layer for layer in scheme.layers if layer.kind in ("rope", "mrope")]


def _scaled_factor(scheme: SchemeLike) -> dict[str, Any] | None:
    for layer in _rotary(scheme):
        factor = layer.attention_factor
        if factor is not None and float(factor) != 1.0:
            f = float(factor)
            return {"rope_type": layer.rope_type, "factor": f, "square": f * f}
    return None


def _length_of(rope_type: str) -> Any:
    def facts(scheme: SchemeLike) -> dict[str, Any] | None:
        for layer in _rotary(scheme):
            if layer.rope_type == rope_type:
                length = (layer.scaling or {}).get("original_max_position_embeddings")
                return {"length": length}
        return None

    return facts


_PITFALL_FACTS = {
    "mla_softmax_scale": _mla_scale,
    "attention_factor": _scaled_factor,
    "longrope": _length_of("longrope"),
    "dynamic": _length_of("dynamic"),
}


def _pitfalls(scheme: SchemeLike, lang: str = "en") -> list[str]:
    """The convention's pitfalls, then those the config's own choices bring (scaling type)."""
    conv = CONVENTIONS[scheme.convention]
    out = list(conv.pitfalls_en if lang == "en" else conv.pitfalls_zh)
    for name, en, zh in _CONFIG_PITFALLS:
        facts = _PITFALL_FACTS[name](scheme)
        if facts is not None:
            out.append((en if lang == "en" else zh).format(**facts))
    return out


# --- where a value came from, in Chinese: the English forms read.py writes --------------------
_SOURCE_ZH = tuple(
    (re.compile(pattern), repl)
    for pattern, repl in (
        # what a config class derives (issue 38: hybrid layer patterns, legacy keys)
        (
            r" absent: every layer Mamba \(config code\)$",
            "（文件中没有）：所有层都是 Mamba（配置代码）",
        ),
        (
            r": attention layers, the others Mamba \(config code\)$",
            "：注意力层，其余为 Mamba（配置代码）",
        ),
        (r", repeated over the layers \(config code\)$", "，按层循环重复（配置代码）"),
        (r"^every layer (\S+) \(config code's default\)$", r"所有层都是 \1（配置代码的默认值）"),
        (r" = (.*), not (.*): every layer \(model code\)$", r" = \1，不是 \2：所有层（模型代码）"),
        (r"^none: (.*) is null \(model code\)$", r"没有：\1 为 null（模型代码）"),
        (r" by length \(model code\)$", "，按长度选取（模型代码）"),
        (r" ?\(config code\)", "（配置代码）"),
        (r"\(absent: false, model code\)", "（文件中没有：视为 false，模型代码）"),
        (r"\(absent: (\S+)'s default\)", r"（文件中没有：\1 的默认值）"),
        (r" ?\(model code's default; no ([^)]*)\)", r"（模型代码的默认值；没有 \1）"),
        (r" ?\(model code's default ([^)]*)\)", r"（模型代码的默认值 \1）"),
        (r"^from the factor \(model code's (\S+) formula\)", r"由 factor 按模型代码的 \1 公式算出"),
        (r" ?\(dynamic NTK reads it, model code\)", "（动态 NTK 读取它，模型代码）"),
        (
            r" ?\(fixed by the model's code, whatever the config says\)",
            "（由模型代码固定，与配置无关）",
        ),
        (r"^one full layer in every (\d+)", r"每 \1 层中一层是全注意力层"),
        (r"^the layers that rotate, (.*) set", r"旋转的层（已设置 \1）"),
        (r" updated with (config\S*)", r"（经 \1 更新）"),
        (r"'(\w+)' read as '(\w+)' \(config class\)", r"'\1' 被读作 '\2'（配置类）"),
        (r"^default \(no rope_type key\)", "default（没有 rope_type 键）"),
        (r"^default (.*) \(model code\)$", r"默认值 \1（模型代码）"),
        (r"\(default (\S+)\)$", r"（默认值 \1）"),
        (r"^full_attention layers \(model code\)", "full_attention 层（模型代码）"),
        (
            r"^model code \(its attention rotates the first heads only\)",
            "模型代码（其注意力只旋转前几个头）",
        ),
        (r"^model code \(pairs alternate row, column\)", "模型代码（频率对按行、列交替）"),
        (r"^model code \(the indexer's own apply function\)", "模型代码（索引器自己的旋转函数）"),
        (r"^model code \((\w+), an nn\.Embedding\)", r"模型代码（\1，一个 nn.Embedding）"),
        (
            r"^head_dim: (\S+) is not read by (\S+)'s default RoPE \(model code\)",
            r"head_dim：\2 的默认 RoPE 不读取 \1（模型代码）",
        ),
        (r" = False: every layer$", " = False：所有层"),
        (
            r" = 'dynamic' with 'alpha': NTK-alpha, static",
            " = 'dynamic' 且有 'alpha'：NTK-alpha，静态",
        ),
        (r" ignored: (\S+) keeps ", r" 被忽略：\1 保留"),
        (r"(\S+)'s default rope_parameters", r"\1 的默认 rope_parameters"),
        (r"(\S+)'s default base", r"\1 的默认 base"),
        (r"(\S+)'s default", r"\1 的默认值"),
        (r"rope_type of the entry it updates", "它所更新条目的 rope_type"),
        (r"^computed from scaling: ", "由 scaling 计算："),
        (r" ?\(model code\)", "（模型代码）"),
        (r"^model code$", "模型代码"),
    )
)

# the labels of the scheme-wide sources, in Chinese
_LABEL_ZH = {
    "selected by": "选择依据",
    "values rotate": "值向量也旋转",
    "layers": "层数",
    "layer pattern": "层的排列",
    "NoPE layers": "NoPE 层",
    "rotates": "旋转条件",
    "chunked layers": "分块注意力层",
    "cross-attention layers": "交叉注意力层",
}

_WHISPER_NOTE = (
    "  # the encoder's table; the decoder adds rows cache_length + i of a learned table of "
    "decoder_length rows"
)
# the comments of the posenc calls, in Chinese
_CALL_ZH = (
    (
        _WHISPER_NOTE,
        "  # 编码器的表；解码器加的是一张可学习的表（decoder_length 行）的第 cache_length + i 行",
    ),
    ("  # unchanged: a NoPE layer", "  # 不变：NoPE 层"),
    ("  # k unchanged", "  # k 不变"),
    ("  # decoder: bidirectional=False", "  # 解码器：bidirectional=False"),
    ("  # x = q, k and v alike", "  # x 为 q、k、v，一样旋转"),
    (
        "  # h = hidden states as (batch, heads, seq, head_dim), before W_q, W_k",
        "  # h 为隐藏状态，形状 (batch, heads, seq, head_dim)，在 W_q、W_k 之前",
    ),
    ("  # x = the indexer's q or k heads", "  # x 为索引器的 q 或 k 头"),
    ("no positions in attention", "注意力中没有位置"),
    (": no posenc function", "：没有对应的 posenc 函数"),
)


def _call_text(call: str, lang: str) -> str:
    if lang == "zh":
        for en, zh in _CALL_ZH:
            call = call.replace(en, zh)
    return call


def _source_text(src: str, lang: str) -> str:
    if lang == "zh":
        for pattern, repl in _SOURCE_ZH:
            src = pattern.sub(repl, src)
    return src


def explain(scheme: SchemeLike, lang: str = "en") -> str:
    """The text of :meth:`Scheme.explain`."""
    lang = check_choice(lang, name="lang", choices=("en", "zh"))
    t = _TEXT[lang]
    conv = CONVENTIONS[scheme.convention]
    title = conv.title_en if lang == "en" else conv.title_zh
    lines = [t["head"].format(model_type=_printable(scheme.model_type), title=title)]
    if scheme.kind == "unknown":  # nothing is described: why, and what a description needs
        notes = scheme.notes if lang == "en" else scheme.notes_zh
        return "\n".join([*lines, *(f"  {n}" for n in notes)])
    if not scheme.known:
        lines.append(t["unknown"].format(version=TRANSFORMERS_VERSION))
    if scheme.applies_to in ("qkv", "hidden"):
        lines.append(t[scheme.applies_to])
    lines.append(t["layers"].format(n=scheme.num_layers))
    for key in ("selected by", "values rotate", "layer_types", "layers", "layer pattern",
                "NoPE layers", "chunked layers", "cross-attention layers"):  # fmt: skip
        if key in scheme.sources:
            label = _LABEL_ZH.get(key, key) if lang == "zh" else key
            lines.append(f"  {label} <- {_source_text(scheme.sources[key], lang)}")
    if conv.kind not in ("rope", "mrope"):
        lines.append(t["norotate"].format(kind=conv.kind))
        for name, value in scheme.fixed.items():
            src = scheme.sources.get(name)
            lines.append(
                f"  {name} = {value!r}" + (f"  <- {_source_text(src, lang)}" if src else "")
            )
        lines.append("  " + t["call"])
        lines.append("    " + _call_text(_fixed_call(scheme, conv.kind), lang))
    groups: dict[tuple[Any, ...], list[int]] = {}
    for layer in scheme.layers:
        groups.setdefault(_key(layer), []).append(layer.index)
    for indices in groups.values():
        layer = scheme.layers[indices[0]]
        which = _ranges(indices)
        if layer.kind == "nope":
            lines.append(t["nope"].format(which=which, layer_type=layer.layer_type))
            lines.extend(_temperature_lines(scheme, layer, lang))
            continue
        if layer.kind == "none" and conv.kind in ("rope", "mrope"):
            lines.append(t["none"].format(which=which, layer_type=layer.layer_type))
            continue
        if layer.kind not in ("rope", "mrope"):
            continue
        lines.append(t["group"].format(which=which, layer_type=layer.layer_type))
        for name in _FIELDS:
            value = getattr(layer, name)
            if value is None or (name == "mrope_interleaved" and layer.kind != "mrope"):
                continue
            if name == "scaling":
                value = dict(value)
            src = _source(scheme, layer, name)
            lines.append(
                f"  {name} = {value!r}" + (f"  <- {_source_text(src, lang)}" if src else "")
            )
            if name == "scaling":
                lines.extend(
                    f"    scaling[{key!r}] = {value[key]!r}  <- {_source_text(src, lang)}"
                    for key, src in _scaling_sources(scheme, layer).items()
                )
        lines.append("  " + t["call"])
        lines.append("    " + _call_text(posenc_call(scheme, layer.index), lang))
    lines.extend(_indexer_lines(scheme, lang))
    pits = _pitfalls(scheme, lang)
    if pits:
        lines.append(t["pitfalls"])
        lines.extend(f"  - {p}" for p in pits)
    notes = scheme.notes if lang == "en" else scheme.notes_zh
    if notes:
        lines.append(t["notes"].format(model_type=_printable(scheme.model_type)))
        lines.extend(f"  - {p}" for p in notes)
    if scheme.ignored_keys:
        keys = ", ".join(_printable(key) for key in scheme.ignored_keys)  # the file's own keys
        lines.append(t["ignored"].format(keys=keys))
    version = verified_on(scheme.model_type) or TRANSFORMERS_VERSION
    installed = installed_transformers()
    if installed is not None and installed != version:  # the record may not hold for it
        lines.append(t["installed"].format(version=version, installed=installed))
    lines.extend(_engines(scheme, lang))
    return "\n".join(lines)


# how transformers derives the attention factor where rope_parameters does not set it
_ATTENTION_FORMULA = {
    "yarn": "0.1 * ln(factor) + 1",
    "yarn-mscale": "g(mscale) / g(mscale_all_dim), g(m) = 0.1 * m * ln(factor) + 1",
    "longrope": "sqrt(1 + ln(factor) / ln(original_max_position_embeddings))",
}


_SCHEMA = "posenc.explain/1"


def _explain_dict(scheme: SchemeLike, lang: str = "en") -> dict[str, Any]:
    """``posenc explain --json``: the explanation as JSON-ready data (schema ``_SCHEMA``).

    Identical layers form one group (``"layers"``: inclusive index ranges), each with its
    fields, the config key of each (``"sources"``) and its posenc call; then the pitfalls and
    notes in ``lang``. :meth:`Scheme.to_dict` keeps every layer in full.
    """
    from .._version import __version__

    lang = check_choice(lang, name="lang", choices=("en", "zh"))
    conv = CONVENTIONS[scheme.convention]
    groups: dict[tuple[Any, ...], list[int]] = {}
    for layer in scheme.layers:
        groups.setdefault(_key(layer), []).append(layer.index)
    out_groups = []
    for indices in groups.values():
        layer = scheme.layers[indices[0]]
        fields = layer.to_dict()
        fields.pop("index")
        sources = {
            name: _source_text(src, lang)
            for name in _FIELDS
            if fields.get(name) is not None and (src := _source(scheme, layer, name))
        }
        for key, src in _scaling_sources(scheme, layer).items():
            sources[f"scaling['{key}']"] = _source_text(src, lang)
        rotary = layer.kind in ("rope", "mrope", "nope")
        out_groups.append(
            {
                "layers": _range_pairs(indices),
                **fields,
                "sources": sources,
                "call": _call_text(posenc_call(scheme, layer.index), lang) if rotary else None,
            }
        )
    rotary_scheme = conv.kind in ("rope", "mrope")
    return {
        "schema": _SCHEMA,
        "posenc": __version__,
        "transformers": verified_on(scheme.model_type) or TRANSFORMERS_VERSION,
        "lang": lang,
        "model_type": scheme.model_type,
        "convention": scheme.convention,
        "title": conv.title_en if lang == "en" else conv.title_zh,
        "kind": scheme.kind,
        "known": scheme.known,
        "applies_to": scheme.applies_to,
        "num_layers": scheme.num_layers,
        "layer_groups": out_groups,
        "fixed": as_jsonable(dict(scheme.fixed)),
        "call": None if rotary_scheme else _call_text(_fixed_call(scheme, conv.kind), lang),
        "sources": {k: _source_text(v, lang) for k, v in scheme.sources.items()},
        "pitfalls": _pitfalls(scheme, lang),
        "notes": list(scheme.notes if lang == "en" else scheme.notes_zh),
        "ignored_keys": list(scheme.ignored_keys),
        "indexer": _indexer_dict(scheme, lang),
    }


def _indexer_dict(scheme: SchemeLike, lang: str) -> dict[str, Any] | None:
    """The DSA indexer's fields, their sources and its call (None: no indexer)."""
    spec = getattr(scheme, "indexer", None)
    if spec is None:
        return None
    fields = spec.to_dict()
    fields.pop("index")
    sources = {
        name: _source_text(src, lang)
        for name in _FIELDS
        if fields.get(name) is not None and (src := _source(scheme, spec, name))
    }
    return {**fields, "sources": sources, "call": _call_text(_call_for(scheme, spec), lang)}


def _range_pairs(indices: list[int]) -> list[list[int]]:
    """Sorted layer indices as inclusive ``[first, last]`` runs."""
    runs: list[list[int]] = []
    for i in indices:
        if runs and runs[-1][1] == i - 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    return runs


def _engines(scheme: SchemeLike, lang: str) -> list[str]:
    """The "in llama.cpp / MLX / vLLM" section: only for model types whose engine mapping was
    verified (posenc.engines.ENGINE_ROWS); none for the others, or for a config those engines'
    mapping does not cover (a scaling llama.cpp's converter does not carry over). A key those
    engines read and refuse (a ``seq_length`` of -5) is refused here too."""
    from ..engines import ENGINE_ROWS, _Unmapped, explain_engines

    if scheme.model_type not in ENGINE_ROWS:
        return []
    try:
        return explain_engines(scheme, lang).splitlines()
    except _Unmapped:
        return []


def _indexer_lines(scheme: SchemeLike, lang: str) -> list[str]:
    """DeepSeek-V3.2's lightning indexer: its fields, their sources and its posenc call."""
    spec = getattr(scheme, "indexer", None)
    if spec is None:
        return []
    t = _TEXT[lang]
    lines = [t["indexer"]]
    for name in ("pairing", "slot", "head_dim", "rotary_dim", "base", "rope_type", "scaling"):
        value = getattr(spec, name)
        if value is None:
            continue
        if name == "scaling":
            value = dict(value)
        src = _source(scheme, spec, name)
        lines.append(f"  {name} = {value!r}" + (f"  <- {_source_text(src, lang)}" if src else ""))
    lines.append("  " + t["call"])
    lines.append("    " + _call_text(_call_for(scheme, spec), lang))
    return lines


def _temperature_lines(scheme: SchemeLike, layer: LayerScheme, lang: str) -> list[str]:
    """Llama 4's query temperature on a NoPE layer: the formula, its keys, the posenc call."""
    temp = layer.query_temperature
    if temp is None:
        return []
    t = _TEXT[lang]
    src = scheme.sources.get("query temperature")
    lines = [
        "  "
        + t["temperature"].format(a=temp["attn_scale"], s=temp["floor_scale"])
        + (f"  <- {_source_text(src, lang)}" if src else "")
    ]
    for name in ("attn_scale", "floor_scale"):
        where = scheme.sources.get(name)
        lines.append(
            f"    {name} = {temp[name]!r}" + (f"  <- {_source_text(where, lang)}" if where else "")
        )
    lines.append("  " + t["call"])
    lines.append("    " + _call_text(posenc_call(scheme, layer.index), lang))
    return lines


# keys of a scaling dict that a config may fill from elsewhere than the dict itself (Phi-3: the
# factor from max_position_embeddings / original_max_position_embeddings, the original length
# from the top-level key)
_SCALING_KEYS = ("factor", "original_max_position_embeddings")


def _scaling_sources(scheme: SchemeLike, layer: LayerScheme) -> dict[str, str]:
    """The keys of ``layer.scaling`` whose value came from elsewhere than the scaling's own dict,
    with where they came from."""
    scaling = layer.scaling or {}
    where = _source(scheme, layer, "scaling") or ""
    prefix = "" if layer.layer_type == "full_attention" else f"{layer.layer_type}: "
    out = {}
    for key in _SCALING_KEYS:
        src = scheme.sources.get(prefix + key) or scheme.sources.get(key)
        if key in scaling and src and src != f"{where}['{key}']":
            out[key] = src
    return out


def _source(scheme: SchemeLike, layer: LayerScheme, name: str) -> str | None:
    prefix = "" if layer.layer_type == "full_attention" else f"{layer.layer_type}: "
    alias = {"base": "base", "rope_type": "rope_type", "scaling": "scaling"}
    if name in alias:
        return scheme.sources.get(prefix + alias[name]) or scheme.sources.get(alias[name])
    if name == "attention_factor":  # derived by the model's code, from the scaling's keys
        scaling = layer.scaling or {}
        where = _source(scheme, layer, "scaling")
        if "attention_factor" in scaling:
            return f"{where}['attention_factor']" if where else None
        rope_type = str(layer.rope_type)
        if rope_type == "yarn" and scaling.get("mscale") and scaling.get("mscale_all_dim"):
            rope_type = "yarn-mscale"
        formula = _ATTENTION_FORMULA.get(rope_type)
        if formula is None:
            return "1 (model code)"
        return "computed from scaling: " + f"{formula} (model code)"
    if name == "rotary_dim":
        return scheme.sources.get("rotary_dim") or scheme.sources.get("partial_rotary_factor")
    return scheme.sources.get(prefix + name) or scheme.sources.get(name)

"""``Scheme.explain``: the scheme in a few lines of English or Chinese."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._array import check_choice
from .conventions import CONVENTIONS
from .registry import TRANSFORMERS_VERSION, installed_transformers, verified_on

if TYPE_CHECKING:
    from .scheme import LayerScheme, Scheme

__all__ = ["explain", "posenc_call"]

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
        "hidden": (
            "旋转对象：分头后的隐藏状态，在 W_q 与 W_k 之前（同一份旋转后的状态送入两个投影；"
            "值向量不旋转）。"
        ),
    },
}

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


def posenc_call(scheme: Scheme, layer: int = 0) -> str:
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
    spec = scheme.layer(layer)
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


def _fixed_call(scheme: Scheme, kind: str) -> str:
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
        if f.get("table") == "whisper":
            return f"posenc.compat.whisper_sinusoids(length, {f['dim']})"
        return (
            f"posenc.compat.fairseq_sinusoidal_embedding(num_embeddings, {f['dim']}, "
            f"padding_idx={f.get('padding_idx')})"
        )
    return "no positions in attention" if kind == "none" else f"{kind}: no posenc function"


def explain(scheme: Scheme, lang: str = "en") -> str:
    """The text of :meth:`Scheme.explain`."""
    lang = check_choice(lang, name="lang", choices=("en", "zh"))
    t = _TEXT[lang]
    conv = CONVENTIONS[scheme.convention]
    title = conv.title_en if lang == "en" else conv.title_zh
    lines = [t["head"].format(model_type=scheme.model_type, title=title)]
    if scheme.kind == "unknown":  # nothing is described: why, and what a description needs
        notes = scheme.notes if lang == "en" else scheme.notes_zh
        return "\n".join([*lines, *(f"  {n}" for n in notes)])
    if not scheme.known:
        lines.append(t["unknown"].format(version=TRANSFORMERS_VERSION))
    if scheme.applies_to in ("qkv", "hidden"):
        lines.append(t[scheme.applies_to])
    lines.append(t["layers"].format(n=scheme.num_layers))
    for key in ("selected by", "values rotate", "layer_types", "layers", "layer pattern",
                "NoPE layers"):  # fmt: skip
        if key in scheme.sources:
            lines.append(f"  {key} <- {scheme.sources[key]}")
    if conv.kind not in ("rope", "mrope"):
        lines.append(t["norotate"].format(kind=conv.kind))
        for name, value in scheme.fixed.items():
            src = scheme.sources.get(name)
            lines.append(f"  {name} = {value!r}" + (f"  <- {src}" if src else ""))
        lines.append("  " + t["call"])
        lines.append("    " + _fixed_call(scheme, conv.kind))
    groups: dict[tuple[Any, ...], list[int]] = {}
    for layer in scheme.layers:
        groups.setdefault(_key(layer), []).append(layer.index)
    for indices in groups.values():
        layer = scheme.layers[indices[0]]
        which = _ranges(indices)
        if layer.kind == "nope":
            lines.append(t["nope"].format(which=which, layer_type=layer.layer_type))
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
            lines.append(f"  {name} = {value!r}" + (f"  <- {src}" if src else ""))
        lines.append("  " + t["call"])
        lines.append("    " + posenc_call(scheme, layer.index))
    pits = conv.pitfalls_en if lang == "en" else conv.pitfalls_zh
    if pits:
        lines.append(t["pitfalls"])
        lines.extend(f"  - {p}" for p in pits)
    notes = scheme.notes if lang == "en" else scheme.notes_zh
    if notes:
        lines.append(t["notes"].format(model_type=scheme.model_type))
        lines.extend(f"  - {p}" for p in notes)
    if scheme.ignored_keys:
        lines.append(t["ignored"].format(keys=", ".join(scheme.ignored_keys)))
    version = verified_on(scheme.model_type) or TRANSFORMERS_VERSION
    installed = installed_transformers()
    if installed is not None and installed != version:  # the record may not hold for it
        lines.append(t["installed"].format(version=version, installed=installed))
    lines.extend(_engines(scheme, lang))
    return "\n".join(lines)


def _engines(scheme: Scheme, lang: str) -> list[str]:
    """The "in llama.cpp / MLX / vLLM" section: only for model types whose engine mapping was
    verified (posenc.engines.ENGINE_ROWS); none for the others, or for a config those engines'
    mapping refuses (a scaling llama.cpp's converter does not carry over)."""
    from ..engines import ENGINE_ROWS, explain_engines

    if scheme.model_type not in ENGINE_ROWS:
        return []
    try:
        return explain_engines(scheme, lang).splitlines()
    except ValueError:
        return []


def _source(scheme: Scheme, layer: LayerScheme, name: str) -> str | None:
    prefix = "" if layer.layer_type == "full_attention" else f"{layer.layer_type}: "
    alias = {"base": "base", "rope_type": "rope_type", "scaling": "scaling"}
    if name in alias:
        return scheme.sources.get(prefix + alias[name]) or scheme.sources.get(alias[name])
    if name == "rotary_dim":
        return scheme.sources.get("rotary_dim") or scheme.sources.get("partial_rotary_factor")
    return scheme.sources.get(name)

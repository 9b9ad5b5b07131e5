"""The generic walk over transformers' model types (shared by tests/test_hf_walk.py and
tools/atlas_record.py): for each model type whose code rotates queries and keys, build its own
rotary embedding from a small config, run its own apply function on random q and k, and compare
with ``posenc.hf.describe(config).rotate``.

Each type ends in one status: ``verified`` (every distinct layer kind equal), ``mismatch`` (a
difference: a bug in the registry or in posenc), or ``unverified`` with a reason (no text
rotary embedding, a config this walk cannot build small, ...). Nothing here is hard-coded per
result: the per-type tables below say how to build a small config or how the model's attention
calls its apply function, as read from transformers' modeling code.
"""

from __future__ import annotations

import importlib
import inspect
import os
import re
import typing
from dataclasses import dataclass, field
from typing import Any

import torch

import hf_walk_extra
import posenc.hf
import seeded

SEQ = 7
BATCH = 2
HEADS = 4
TOL32 = 1e-6

# small widths for every config; a type whose config refuses one is retried without it
SMALL = {
    "hidden_size": 64,
    "num_attention_heads": HEADS,
    "num_key_value_heads": HEADS,
    "head_dim": 16,
    "intermediate_size": 64,
    "num_hidden_layers": 6,
    "vocab_size": 100,
    "max_position_embeddings": 64,
}
# MLA configs: the rotary width is qk_rope_head_dim (and their head_dim follows it)
SMALL_MLA = {
    "qk_nope_head_dim": 8,
    "qk_rope_head_dim": 8,
    "v_head_dim": 8,
    "head_dim": 8,
    "kv_lora_rank": 16,
    "q_lora_rank": 16,
}


@dataclass
class Outcome:
    model_type: str
    status: str  # verified | mismatch | unverified
    reason: str = ""
    convention: str = ""
    layer_kinds: list[str] = field(default_factory=list)
    error: float | None = None
    module: str = ""
    via: str = ""  # verified through this text model type (a composite's text_config)
    row: str = ""  # "registry" (a row written in posenc.hf.registry) or "walk" (found here)
    sub_config: str | None = None  # the walk's row: the sub-config it reads
    inner_rows: dict[str, str] = field(default_factory=dict)  # sub-config types' rows it used


def written(model_type: str) -> bool:
    """Whether posenc.hf's registry has a row written for ``model_type`` (else the walk tries
    a candidate row: the convention the config's standard keys suggest)."""
    from posenc.hf.registry import WRITTEN

    return model_type in WRITTEN


def candidate(cfg: Any, sub: str | None = None) -> Any:
    """The row the walk tries on a type with no written row: plain RoPE (``llama``), partial
    RoPE where the config rotates part of the head, M-RoPE where it names an mrope_section;
    read from ``sub`` when the positions live in a sub-config."""
    from posenc.hf.schema import ModelRow

    if sub is None and getattr(cfg, "text_config", None) is not None:
        try:
            heads = getattr(cfg, "num_attention_heads", None)
        except Exception:
            heads = None
        if heads is None:  # a composite whose heads are in its text_config
            sub = "text_config"
    inner = getattr(cfg, sub) if sub else cfg
    rp = getattr(inner, "rope_parameters", None) or {}
    flat = (
        rp
        if not any(isinstance(v, dict) for v in rp.values())
        else next((v for v in rp.values() if isinstance(v, dict)), {})
    )
    if flat.get("mrope_section") or getattr(inner, "mrope_section", None):
        conv = "mrope_interleaved" if flat.get("mrope_interleaved") else "mrope"
    elif (flat.get("partial_rotary_factor") or 1.0) != 1.0:
        conv = "partial"
    else:
        conv = "llama"
    return ModelRow(conv, sub_config=sub)


def describe_walked(model_type: str, cfg: Any, sub: str | None = None) -> tuple[Any, str]:
    """``describe(cfg)`` for a type with a written row, else ``describe_with`` the candidate
    row; and which it was ("registry" or "walk"). Each sub-config type on the way down with no
    written row gets its candidate row too (``rows_tried(cfg)`` lists them afterwards)."""
    from posenc.hf.read import describe_with

    rows = {} if written(model_type) else {model_type: candidate(cfg, sub)}
    row = posenc.hf.MODELS.get(model_type) if written(model_type) else rows[model_type]
    inner = cfg
    for _ in range(3):
        key = row.sub_config
        if key is None:
            break
        inner = getattr(inner, key, None)
        inner_type = getattr(inner, "model_type", None)
        if not inner_type:
            break
        if not written(inner_type):
            rows[inner_type] = candidate(inner)
        row = rows.get(inner_type) or posenc.hf.MODELS.get(inner_type)
        if row is None:
            break
    _TRIED[id(cfg)] = {k: v for k, v in rows.items() if k != model_type}
    if not rows:
        return posenc.hf.describe(cfg), "registry"
    return describe_with(cfg, rows), "registry" if written(model_type) else "walk"


_TRIED: dict[int, dict[str, Any]] = {}


def rows_tried(cfg: Any) -> dict[str, str]:
    """The sub-config types (model type -> convention) the last describe_walked of ``cfg`` gave
    a candidate row: verified along with the type whose walk used them."""
    return {mt: row.convention for mt, row in _TRIED.pop(id(cfg), {}).items()}


def modeling_modules() -> dict[str, str]:
    """model type -> modeling module name, for every type transformers registers."""
    from transformers.models.auto.configuration_auto import (
        CONFIG_MAPPING_NAMES,
        model_type_to_module_name,
    )

    root = os.path.dirname(importlib.import_module("transformers.models").__file__)
    out = {}
    for mt in CONFIG_MAPPING_NAMES:
        mod = model_type_to_module_name(mt)
        path = os.path.join(root, mod, f"modeling_{mod}.py")
        if os.path.exists(path):
            out[mt] = f"transformers.models.{mod}.modeling_{mod}"
    return out


def _mentions(module: str, text: str) -> bool:
    from importlib.util import find_spec

    with open(find_spec(module).origin) as f:
        return text in f.read()


def _class_mentions(cls: type, text: str) -> bool:
    """Whether the source of ``cls`` or of a base class from the same package mentions ``text``
    (an omni model's M-RoPE text rotary and its plain-RoPE DiT share one module)."""
    return any(
        text in inspect.getsource(c)
        for c in cls.__mro__
        if c.__module__.startswith("transformers.models.")
    )


def _registry_kind(model_type: str) -> str | None:
    from posenc.hf.registry import WRITTEN

    row = posenc.hf.MODELS.get(model_type) if model_type in WRITTEN else None
    return None if row is None else posenc.hf.CONVENTIONS[row.convention].kind


def rotary_source(module: str) -> bool:
    from importlib.util import find_spec

    spec = find_spec(module)
    src = open(spec.origin).read()
    return bool(re.search(r"class \w*Rotary(Positional)?Embedding\(", src))


def _rotary_classes(mod: Any, vision: bool = False) -> list[type]:
    return [
        c
        for n, c in vars(mod).items()
        if inspect.isclass(c)
        and n.endswith("RotaryEmbedding")
        and c.__module__ == mod.__name__
        # a vision encoder's, unless the model's own name holds "Vision" (Granite4VisionText)
        and (vision or "Vision" not in n.replace("VisionText", ""))
    ]


def _config_class(rc: type) -> Any:
    try:
        return typing.get_type_hints(rc.__init__).get("config")
    except Exception:
        return None


_NTK_ALPHA = {"rope_type": "dynamic", "rope_theta": 1e4, "alpha": 1000.0, "factor": 1.0}
# per-type small-config extras, where a model's own defaults do not fit the small widths
EXTRA = {
    "mimo_v2_flash": {"head_dim": 48},  # partial_rotary_factor 0.334: 48 * 0.334 -> 16
    "bamba": {"attn_layer_indices": [1, 4]},
    # its attention rotates only with position_embedding_type "rope" (the class default is
    # "nope": nothing rotates)
    "granitemoehybrid": {
        "layer_types": ["mamba", "attention"] * 3,
        "position_embedding_type": "rope",
    },
    # the shared attention blocks rotate only with use_mem_rope (default False)
    "zamba2": {"use_mem_rope": True},
    # its config sets head_dim = qk_nope_head_dim + qk_rope_head_dim, and its rotary rotates
    # head_dim * partial_rotary_factor (= qk_rope_head_dim) features
    "mistral4": {"head_dim": 16},
    # HunYuan checkpoints spell NTK-alpha as rope_type "dynamic" with an "alpha" (the model's
    # code then stretches the base, statically): the walk uses that spelling
    "hunyuan_v1_dense": {"rope_parameters": _NTK_ALPHA},
    "hunyuan_v1_moe": {"rope_parameters": _NTK_ALPHA},
    # xD-RoPE over four axes, with NTK-alpha as its checkpoints spell it
    "hunyuan_vl_text": {"rope_parameters": {**_NTK_ALPHA, "mrope_section": [2, 2, 2, 2]}},
    # h and w take turns over the first 3 + 3 pairs, t has the last 2 (of 16 / 2)
    "ernie4_5_vl_moe_text": {
        "rope_parameters": {"rope_type": "default", "rope_theta": 5e5, "mrope_section": [3, 3, 2]}
    },
    # its rotary reads rope_parameters per layer type (NoPE where None), with an M-RoPE section
    # per layer type (model default [24, 20, 20]); the config's own default is flat
    "cohere_compass_text": {
        "layer_types": ["sliding_attention", "sliding_attention", "full_attention"] * 2,
        "rope_parameters": {
            "sliding_attention": {
                "rope_type": "default",
                "rope_theta": 5e4,
                "mrope_section": [4, 2, 2],
            },
            "full_attention": {
                "rope_type": "default",
                "rope_theta": 1e4,
                "mrope_section": [4, 2, 2],
            },
        },
    },
}
# composites whose own validators tie a vision/audio width to the text hidden size: the other
# sub-configs, sized to the small text model (SMALL["hidden_size"]), as their messages ask
WIDTH = SMALL["hidden_size"]
COMPOSITE = {
    "granite_docling": {"vision_config": {"out_hidden_size": WIDTH}},
    "muse_spark": {"audio_config": {"out_hidden_size": WIDTH}},
    "inkling2": {"vision_config": {"text_hidden_size": WIDTH}},
    "nemotron3_diarization": {"head_config": {"audio_hidden_size": WIDTH}},
    "t5gemma2": {"decoder": SMALL},  # "Imbalanced encoder-decoder is not supported"
}
# composites whose rotary class is annotated with the composite config but built from its
# audio sub-config (GLM-ASR, Voxtral Realtime: their audio encoders) or applied to audio
# features before the projector (MusicFlamingo's rotary time embedding, apply_rotary_time_emb),
# while the text model is another model type (through AutoConfig): their positions are read
# through that text model (``through_text``)
THROUGH_TEXT = ("glmasr", "voxtral_realtime", "musicflamingo")
# sub-config types whose model builds a rotary class annotated with the composite config from
# their own config, e.g. VoxtralRealtimeTextModel's
# ``self.rotary_emb = VoxtralRealtimeRotaryEmbedding(config=config)``
BUILT_FROM = {
    "voxtral_realtime_text": "VoxtralRealtimeRotaryEmbedding",
    "nemotron3_diarization_audio": "Nemotron3DiarizationRotaryEmbedding",  # its audio encoder
    "glmasr_encoder": "GlmAsrRotaryEmbedding",  # GlmAsrEncoder
    "voxtral_realtime_encoder": "VoxtralRealtimeRotaryEmbedding",  # VoxtralRealtimeEncoder
    "nemotron3_5_transcribe_word_timestamp": "Nemotron3_5TranscribeRotaryEmbedding",
    "t5gemma2_decoder": "T5Gemma2RotaryEmbedding",  # T5Gemma2Decoder
    # Qwen3OmniMoeTalkerModel builds the M-RoPE subclass, not the plain Qwen3OmniMoeRotaryEmbedding
    # (its code predictor's and code2wav's) that the composite annotation points at
    "qwen3_omni_moe_talker_text": "Qwen3OmniMoeTalkerRotaryEmbedding",
}
# MLA models whose attention always calls apply_rotary_pos_emb_interleave while their module's
# apply_rotary_pos_emb serves another part: DeepSeek-V3.2's DSA indexer (rotate_half on the first
# features, held to the model by tests/test_hf_indexer.py); walked with the attention's function
ALWAYS_INTERLEAVED = {"deepseek_v32"}
# rotary code that posenc.hf cannot express (or that the walk's generic call would misread),
# with what the model's code does; reported unverified without walking
NOT_DESCRIBED = {
    "deepseek_v4": "not described: K = V, so the values carry RoPE and the attention output is "
    "rotated back by minus the angle at the query position; compressed KV entries (CSA/HCA "
    "layers) rotate at their compressed positions, and rope_parameters are keyed by 'main' / "
    "'compress' rather than by layer type",
    "dots3_note_text": "not described: per-layer MLA configs (per_layer_config: the sliding "
    "layers have their own heads, qk_nope/qk_rope head dims and base) that describe does not "
    "read per layer; its DSA indexer also rotates the first qk_rope_head_dim features of its "
    "own q and k, while attention rotates the last",
    "dots3_note": "not described: its text model (dots3_note_text) has per-layer MLA configs",
    "inkling2_text": "not described: no rotary; its attention adds a hidden-state-conditioned "
    "relative position bias (rel_logits_proj: a trained bank of bias-versus-distance profiles "
    "mixed per token, zero for negative distances and beyond rel_extent)",
    "inkling2": "not described: its text model (inkling2_text) adds a hidden-state-conditioned "
    "relative position bias",
    "glm5_next_text": "no positions: its attention layers are KDA linear attention and NoPE MLA "
    "(validate_architecture refuses qk_rope_head_dim > 0 for the DSA layers); no rotary "
    "embedding is built",
    "glm5_next": "no positions: its text model (glm5_next_text) has none (KDA linear attention "
    "and NoPE MLA); only its vision encoder rotates (2-D)",
}


# composites whose positions the registry reads from a sub-config that the generic lookup
# misses: the path of sub-config keys to it (the omni models' text model sits two levels down;
# encoder-decoders whose stacks are model types of their own, walked as such)
NESTED = {
    "qwen2_5_omni": ("thinker_config", "text_config"),
    "qwen3_omni_moe": ("thinker_config", "text_config"),
    "dia": ("encoder_config",),
    "t5gemma": ("encoder",),
    "t5gemma2": ("encoder", "text_config"),
    # speech models whose only attention stack is an audio encoder (1-D rotary over frames)
    "lasr_ctc": ("encoder_config",),
    "nemotron3_5_transcribe_audio": ("asr_config",),
    "nemotron3_diarization": ("audio_config",),
    # its language model (nemotron_h: Mamba-2 and attention without positions) has none
    "nemo_speechlm": ("audio_config", "asr_config"),
}


def _nested_class(cfg_cls: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        cfg_cls = cfg_cls.sub_configs[key]
    return cfg_cls


# vision encoders whose rotary class is not named *Vision*: 2-D rotary over image patches, as
# read from their modeling code (posenc.rope2d covers the family; describe reads text models)
VISION_2D = ("efficientloftr", "eomt_dinov3", "mlcd", "mlcd_vision_model", "sam3_vit_model")


# M-RoPE types whose small config names its own mrope_section in EXTRA (Ernie 4.5 VL: h and w
# take turns, so they need equal counts; HunYuan-VL: four axes), kept as given
OWN_SECTION = ("ernie4_5_vl_moe_text", "hunyuan_vl_text")


def _fit_mrope(cfg: Any, force: bool = False) -> Any:
    """An M-RoPE config's mrope_section shrunk to the small head's pairs (also where the model
    code has a default section and the config names none: ``force``)."""
    if getattr(cfg, "model_type", None) in OWN_SECTION:
        return cfg
    rp = getattr(cfg, "rope_parameters", None)
    if isinstance(rp, dict) and not any(isinstance(v, dict) for v in rp.values()):
        if rp.get("mrope_section") is not None or force:
            head = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
            half = int(head * rp.get("partial_rotary_factor", 1.0)) // 2
            rp["mrope_section"] = [half - 2 * (half // 4), half // 4, half // 4]
    return cfg


def _holds(parent: Any, child: Any, depth: int = 0) -> bool:
    """Whether config class ``parent`` holds ``child`` as a non-vision, non-audio sub-config,
    at any depth (Qwen2.5-Omni: config -> thinker_config -> text_config)."""
    subs = getattr(parent, "sub_configs", None) or {}
    for key, sub in subs.items():
        if "vision" in key or "audio" in key or sub is None or depth > 3:
            continue
        if sub is child or _holds(sub, child, depth + 1):
            return True
    return False


def small_config(cls: Any, extra: dict[str, Any] | None = None) -> Any:
    kwargs = {**SMALL, **(extra or {})}
    if "qk_rope_head_dim" in getattr(cls, "__dataclass_fields__", {}) or hasattr(
        cls, "qk_rope_head_dim"
    ):
        kwargs.update({**SMALL_MLA, **(extra or {})})
    if hasattr(cls, "global_head_dim") or "global_head_dim" in str(inspect.getsource(cls))[:20000]:
        kwargs["global_head_dim"] = 32
    return _fit_mrope(construct(cls, kwargs))


def construct(cls: type, kwargs: dict[str, Any]) -> Any:
    """``cls(**kwargs)``, dropping each key a config class refuses by name in its error."""
    kwargs, last = dict(kwargs), None
    for _ in range(len(kwargs) + 1):
        try:
            return cls(**kwargs)
        except Exception as exc:  # drop the key the message names, else give up
            last = exc
            names = [k for k in kwargs if k in str(exc)]
            if not names:
                break
            kwargs.pop(names[0])
    raise RuntimeError(f"cannot build a small {cls.__name__}: {last!r}"[:200])


def _complex_apply(fn: Any, *, bshd: bool) -> Any:
    """``apply_rotary_emb(xq, xk, freqs_cis)`` (Meta style, complex cos + i sin) as
    ``apply(q, k, freqs_cis, None)``; Llama 4 calls it on (batch, seq, heads, dim) tensors."""

    def apply(q: Any, k: Any, cos: Any, sin: Any) -> Any:
        if bshd:
            q_o, k_o = fn(q.transpose(1, 2), k.transpose(1, 2), cos)
            return q_o.transpose(1, 2), k_o.transpose(1, 2)
        return fn(q, k, cos)

    return apply


def run_model(
    rc: type,
    cfg: Any,
    apply_fn: Any,
    layer_type: str | None,
    q: Any,
    k: Any,
    pid: Any,
    mla_fn: Any = None,
):
    try:
        rot = rc(config=cfg)
    except AttributeError:  # annotated with the composite config, built from its text config
        rot = rc(config=cfg.get_text_config())
    params = inspect.signature(rc.forward).parameters
    out = rot(q, pid, layer_type) if "layer_type" in params else rot(q, pid)
    cos, sin = out if isinstance(out, tuple) else (out, None)  # Meta style: one complex tensor
    first = list(inspect.signature(apply_fn).parameters)[1]
    if first == "cos":  # apply(x, cos, sin): one tensor at a time (Gemma 3n, Gemma 4)
        return apply_fn(q, cos, sin), apply_fn(k, cos, sin)
    nope = getattr(cfg, "qk_nope_head_dim", None)
    if nope is not None:  # MLA: [q_pass | q_rot], rope on the tail only
        fn = mla_fn if mla_fn is not None and getattr(cfg, "rope_interleave", False) else apply_fn
        if fn is None:
            fn = mla_fn
        q_r, k_r = fn(q[..., nope:], k[..., nope:], cos, sin)
        return torch.cat((q[..., :nope], q_r), -1), torch.cat((k[..., :nope], k_r), -1)
    width = cos.shape[-1] * (2 if cos.is_complex() else 1)
    if width < q.shape[-1]:
        try:
            return apply_fn(q, k, cos, sin)
        except RuntimeError:  # the attention splits off the rotated features itself (Phi)
            q_r, k_r = apply_fn(q[..., :width], k[..., :width], cos, sin)
            return torch.cat((q_r, q[..., width:]), -1), torch.cat((k_r, k[..., width:]), -1)
    return apply_fn(q, k, cos, sin)


def walk_one(model_type: str, module: str) -> Outcome:
    from transformers import CONFIG_MAPPING

    try:
        mod = importlib.import_module(module)
    except Exception as exc:
        return Outcome(model_type, "unverified", f"modeling module does not import: {exc!r}"[:200])
    if model_type in VISION_2D:
        return Outcome(
            model_type, "unverified", "vision encoder: 2-D rotary over patch grids", module=module
        )
    if model_type in NOT_DESCRIBED:
        return Outcome(model_type, "unverified", NOT_DESCRIBED[model_type], module=module)
    if model_type in hf_walk_extra.ROTARY_PROBES:  # walked by its probe (hf_walk_fixed.walk_all)
        return Outcome(
            model_type,
            "unverified",
            "rotary code the generic call cannot run: walked by a probe of hf_walk_extra",
            module=module,
        )
    cfg_cls = CONFIG_MAPPING[model_type]
    rots = [rc for rc in _rotary_classes(mod) if _config_class(rc) is cfg_cls]
    sub = None
    if not rots:  # a composite config: its text sub-config feeds the rotary embedding
        sub_configs = getattr(cfg_cls, "sub_configs", {}) or {}
        for key, sub_cls in sub_configs.items():
            match = [rc for rc in _rotary_classes(mod) if _config_class(rc) is sub_cls]
            if match and not any(m in key for m in ("vision", "audio", "video")):
                rots, sub = match, key
                break
    if model_type in NESTED:  # the rotary class its text model is built with
        text_cls = _nested_class(cfg_cls, NESTED[model_type])
        rots = [rc for rc in _rotary_classes(mod) if _config_class(rc) is text_cls] or rots
    if model_type in BUILT_FROM:
        rots = [getattr(mod, BUILT_FROM[model_type])]
    held = False
    if not rots:  # a sub-config whose rotary embedding is annotated with a composite config
        rots = [rc for rc in _rotary_classes(mod) if _holds(_config_class(rc), cfg_cls)]
        held = bool(rots)
    if not rots:
        vision = [rc for rc in _rotary_classes(mod, vision=True) if _config_class(rc) is cfg_cls]
        if vision:
            return Outcome(
                model_type,
                "unverified",
                "vision encoder: 2-D rotary over patch grids",
                module=module,
            )
        return Outcome(
            model_type, "unverified", "no rotary embedding takes this config", module=module
        )
    if model_type in THROUGH_TEXT:
        return Outcome(
            model_type, "unverified", "no rotary embedding takes this config", module=module
        )
    rc = rots[0]
    apply_fn = getattr(mod, "apply_rotary_pos_emb", None)
    if apply_fn is None or model_type in ALWAYS_INTERLEAVED:
        # MLA models that always interleave (Bailing, LongCat, GLM-MoE-DSA, DeepSeek-V3.2)
        apply_fn = getattr(mod, "apply_rotary_pos_emb_interleave", None)
    if apply_fn is None and hasattr(mod, "apply_rotary_emb"):
        apply_fn = _complex_apply(mod.apply_rotary_emb, bshd=model_type.startswith("llama4"))
    if apply_fn is None:
        return Outcome(
            model_type, "unverified", "no apply_rotary_pos_emb in its module", module=module
        )
    sub_configs = getattr(cfg_cls, "sub_configs", {}) or {}
    if sub is None and "text_config" in sub_configs:
        sub = "text_config"
    try:
        if model_type in NESTED:
            path = NESTED[model_type]
            text_cls = _nested_class(cfg_cls, path)
            given: dict[str, Any] = small_config(
                text_cls, EXTRA.get(getattr(text_cls, "model_type", ""))
            ).to_dict()
            for key in reversed(path[1:]):
                given = {key: given}
            cfg = cfg_cls(**{path[0]: given}, **COMPOSITE.get(model_type, {}))
            inner = cfg
            for key in path:
                inner = getattr(inner, key)
            inner = _fit_mrope(inner, force=_registry_kind(model_type) == "mrope")
            sub = path[0]
        elif sub is None:
            cfg = _fit_mrope(
                small_config(cfg_cls, EXTRA.get(model_type)),
                force=_registry_kind(model_type) == "mrope",
            )
        else:
            inner = small_config(
                cfg_cls.sub_configs[sub],
                EXTRA.get(getattr(cfg_cls.sub_configs[sub], "model_type", "")),
            )
            cfg = cfg_cls(**{sub: inner.to_dict()}, **COMPOSITE.get(model_type, {}))
            inner = _fit_mrope(getattr(cfg, sub), force=_registry_kind(model_type) == "mrope")
    except Exception as exc:
        return Outcome(model_type, "unverified", f"small config: {exc!r}"[:200], module=module)
    rot_cfg = cfg if sub is None else inner
    try:
        scheme, row = describe_walked(model_type, cfg, sub)
        inner_rows = rows_tried(cfg)
    except Exception as exc:
        status = "mismatch" if written(model_type) else "unverified"
        return Outcome(
            model_type, status, f"describe refuses its config: {exc}"[:300], module=module
        )
    gen = torch.Generator().manual_seed(0)
    pid = torch.stack([torch.arange(SEQ), torch.arange(SEQ) + 5])
    if scheme.kind == "mrope":  # one row of ids per axis: 3 (t, h, w); 2 (NeoMME); 4 (HunYuan-VL)
        axes = max(len(x.mrope_section or ()) for x in scheme.layers)
        pid = torch.stack([pid, pid // 2, pid % 3, (3 * pid) % 7][:axes])
    worst = 0.0
    compared = 0
    kinds = []
    seen = set()
    for layer in scheme.layers:
        key = (layer.layer_type, layer.kind)
        if key in seen:
            continue
        seen.add(key)
        kinds.append(f"{layer.layer_type}:{layer.kind}")
        if layer.kind not in ("rope", "mrope"):
            continue
        compared += 1
        hd = layer.head_dim or 16
        q = seeded.randn(BATCH, HEADS, SEQ, hd, generator=gen)
        k = seeded.randn(BATCH, HEADS, SEQ, hd, generator=gen)
        takes = "layer_type" in inspect.signature(rc.forward).parameters
        lt = layer.layer_type if takes and getattr(rot_cfg, "layer_types", None) else None
        try:
            q_ref, k_ref = run_model(
                rc,
                rot_cfg,
                apply_fn,
                lt,
                q,
                k,
                pid,
                getattr(mod, "apply_rotary_pos_emb_interleave", None),
            )
        except Exception as exc:
            if held and isinstance(exc, AttributeError):
                # a part of a composite (a VQ-GAN, a perceiver) that the rotary embedding of
                # its parent config is not built from
                return Outcome(
                    model_type, "unverified", "no rotary embedding takes this config", module=module
                )
            return Outcome(
                model_type,
                "unverified",
                f"model rotary/apply: {exc!r}"[:200],
                scheme.convention,
                kinds,
                module=module,
            )
        try:
            q_out = scheme.rotate(q, pid, layer=layer.index)
            k_out = scheme.rotate(k, pid, layer=layer.index)
        except Exception as exc:
            return Outcome(
                model_type,
                "mismatch",
                f"rotate failed: {exc!r}"[:300],
                scheme.convention,
                kinds,
                module=module,
            )
        if q_ref.shape != q_out.shape:
            return Outcome(
                model_type,
                "mismatch",
                f"shape {tuple(q_ref.shape)} vs {tuple(q_out.shape)}",
                scheme.convention,
                kinds,
                module=module,
            )
        err = max(
            float((q_ref - q_out).abs().max() / q.abs().max()),
            float((k_ref - k_out).abs().max() / k.abs().max()),
        )
        worst = max(worst, err)
    if scheme.kind == "unknown":
        return Outcome(
            model_type, "unverified", "no row for it or its sub-config's type", module=module
        )
    if compared == 0:
        return Outcome(
            model_type,
            "unverified",
            f"no rotating layer in its config ({', '.join(kinds)})",
            scheme.convention,
            kinds,
            module=module,
        )
    status = "verified" if worst <= TOL32 else "mismatch"
    if status == "mismatch" and not written(model_type):
        return Outcome(
            model_type,
            "unverified",
            f"the generic description differs from the "
            f"model's code (error {worst:.1e}): needs a registry row",
            scheme.convention,
            kinds,
            worst,
            module,
        )
    if status == "verified" and scheme.kind != "mrope" and _class_mentions(rc, "mrope_section"):
        # equal on text ids only: the model's rotary code has an M-RoPE default the registry lacks
        return Outcome(
            model_type,
            "unverified",
            "M-RoPE model without a registry row (equal on text ids only)",
            scheme.convention,
            kinds,
            worst,
            module,
        )
    return Outcome(
        model_type,
        status,
        "" if status == "verified" else f"error {worst:.2e}",
        scheme.convention,
        kinds,
        worst,
        module,
        row=row,
        sub_config=None if row == "registry" else sub,
        inner_rows=inner_rows if status == "verified" else {},
    )


def through_text(o: Outcome, done: dict[str, Outcome]) -> Outcome:
    """A composite type whose own code has no rotary embedding for its config, but whose
    ``text_config`` is another model type: its positions are that model's (the composite builds
    the text model from ``text_config``). Verified when that type is verified and ``describe``
    reads the composite exactly as it reads the text config."""
    from transformers import CONFIG_MAPPING

    if not o.reason.startswith("no rotary embedding takes"):
        return o
    cfg_cls = CONFIG_MAPPING[o.model_type]
    if "text_config" not in (getattr(cfg_cls, "sub_configs", None) or {}):
        return o
    try:
        text = cfg_cls().text_config
        text_type = text.model_type
        small = small_config(type(text))
        cfg = cfg_cls(text_config=small.to_dict(), **COMPOSITE.get(o.model_type, {}))
        part, _ = describe_walked(text_type, cfg.text_config)
        if written(o.model_type):
            whole, row = posenc.hf.describe(cfg), "registry"
        else:
            from posenc.hf.read import describe_with
            from posenc.hf.schema import ModelRow

            rows = {o.model_type: ModelRow(part.convention, sub_config="text_config")}
            if not written(text_type):
                rows[text_type] = candidate(cfg.text_config)
            whole, row = describe_with(cfg, rows), "walk"
    except Exception as exc:
        return Outcome(o.model_type, "unverified", f"composite: {exc}"[:200], module=o.module)
    inner = done.get(text_type)
    if inner is None or inner.status != "verified":
        return Outcome(
            o.model_type,
            "unverified",
            f"its text model {text_type!r} is not verified",
            module=o.module,
        )
    if [x.to_dict() for x in whole.layers] != [x.to_dict() for x in part.layers]:
        return Outcome(
            o.model_type,
            "mismatch",
            f"describe reads it unlike its text model {text_type!r}",
            whole.convention,
            module=o.module,
        )
    return Outcome(
        o.model_type,
        "verified",
        "",
        whole.convention,
        inner.layer_kinds,
        inner.error,
        o.module,
        via=text_type,
        row=row,
        sub_config=None if row == "registry" else "text_config",
    )


def walk() -> list[Outcome]:
    from transformers import CONFIG_MAPPING

    out = []
    modules = modeling_modules()
    for mt, module in sorted(modules.items()):
        if not rotary_source(module):
            continue
        out.append(walk_one(mt, module))
    done = {o.model_type: o for o in out}
    out = [through_text(o, done) for o in out]
    # composites whose own module has no rotary code but whose text_config is a model type
    # walked above (LLaVA's is a Llama, PaliGemma's a Gemma): their positions are that
    # model's; walked through it, and left out when it is not verified
    done = {o.model_type: o for o in out}
    for mt, module in sorted(modules.items()):
        if mt in done:
            continue
        spec = (getattr(CONFIG_MAPPING[mt], "sub_configs_defaults", None) or {}).get("text_config")
        inner = done.get(getattr(spec, "model_type", None) or "")
        if inner is None or inner.status != "verified":
            continue
        o = through_text(Outcome(mt, "unverified", "no rotary embedding takes this config",
                                 module=module), done)  # fmt: skip
        if o.status == "verified":
            out.append(o)
    return sorted(out, key=lambda o: o.model_type)

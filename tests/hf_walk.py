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

import posenc.hf

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


def _registry_kind(model_type: str) -> str | None:
    row = posenc.hf.MODELS.get(model_type)
    return None if row is None else posenc.hf.CONVENTIONS[row.convention].kind


def rotary_source(module: str) -> bool:
    from importlib.util import find_spec

    spec = find_spec(module)
    src = open(spec.origin).read()
    return bool(re.search(r"class \w*RotaryEmbedding\(", src))


def _rotary_classes(mod: Any, vision: bool = False) -> list[type]:
    return [
        c
        for n, c in vars(mod).items()
        if inspect.isclass(c)
        and n.endswith("RotaryEmbedding")
        and c.__module__ == mod.__name__
        and (vision or "Vision" not in n)
    ]


def _config_class(rc: type) -> Any:
    try:
        return typing.get_type_hints(rc.__init__).get("config")
    except Exception:
        return None


# per-type small-config extras, where a model's own defaults do not fit the small widths
EXTRA = {
    "mimo_v2_flash": {"head_dim": 48},  # partial_rotary_factor 0.334: 48 * 0.334 -> 16
    "bamba": {"attn_layer_indices": [1, 4]},
    "granitemoehybrid": {"layer_types": ["mamba", "attention"] * 3},
}


# vision encoders whose rotary class is not named *Vision*: 2-D rotary over image patches, as
# read from their modeling code (posenc.rope2d covers the family; describe reads text models)
VISION_2D = ("efficientloftr", "eomt_dinov3", "mlcd", "mlcd_vision_model", "sam3_vit_model")


def _fit_mrope(cfg: Any, force: bool = False) -> Any:
    """An M-RoPE config's mrope_section shrunk to the small head's pairs (also where the model
    code has a default section and the config names none: ``force``)."""
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
        kwargs.update(SMALL_MLA)
    if hasattr(cls, "global_head_dim") or "global_head_dim" in str(inspect.getsource(cls))[:20000]:
        kwargs["global_head_dim"] = 32
    last = None
    for _ in range(len(kwargs) + 1):
        try:
            return _fit_mrope(cls(**kwargs))
        except Exception as exc:  # drop the key the message names, else give up
            last = exc
            names = [k for k in kwargs if k in str(exc)]
            if not names:
                break
            kwargs.pop(names[0])
    raise RuntimeError(f"cannot build a small {cls.__name__}: {last}")


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
    cfg_cls = CONFIG_MAPPING[model_type]
    rots = [rc for rc in _rotary_classes(mod) if _config_class(rc) is cfg_cls]
    sub = None
    if not rots:  # a composite config: its text sub-config feeds the rotary embedding
        sub_configs = getattr(cfg_cls, "sub_configs", {}) or {}
        for key, sub_cls in sub_configs.items():
            match = [rc for rc in _rotary_classes(mod) if _config_class(rc) is sub_cls]
            if match and "vision" not in key and "audio" not in key:
                rots, sub = match, key
                break
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
    rc = rots[0]
    apply_fn = getattr(mod, "apply_rotary_pos_emb", None)
    if apply_fn is None:  # MLA models that always interleave (Bailing, LongCat, GLM-MoE-DSA)
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
        if sub is None:
            cfg = _fit_mrope(
                small_config(cfg_cls, EXTRA.get(model_type)),
                force=_registry_kind(model_type) == "mrope",
            )
        else:
            inner = small_config(
                cfg_cls.sub_configs[sub],
                EXTRA.get(getattr(cfg_cls.sub_configs[sub], "model_type", "")),
            )
            cfg = cfg_cls(**{sub: inner.to_dict()})
            inner = _fit_mrope(getattr(cfg, sub), force=_registry_kind(model_type) == "mrope")
    except Exception as exc:
        return Outcome(model_type, "unverified", f"small config: {exc!r}"[:200], module=module)
    rot_cfg = cfg if sub is None else inner
    try:
        scheme = posenc.hf.describe(cfg)
    except Exception as exc:
        status = "mismatch" if model_type in posenc.hf.MODELS else "unverified"
        return Outcome(
            model_type, status, f"describe refuses its config: {exc}"[:300], module=module
        )
    gen = torch.Generator().manual_seed(0)
    pid = torch.stack([torch.arange(SEQ), torch.arange(SEQ) + 5])
    if scheme.kind == "mrope":
        pid = torch.stack([pid, pid // 2, pid % 3])
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
        q = torch.randn(BATCH, HEADS, SEQ, hd, generator=gen)
        k = torch.randn(BATCH, HEADS, SEQ, hd, generator=gen)
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
    if status == "mismatch" and model_type not in posenc.hf.MODELS:
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
    if status == "verified" and scheme.kind != "mrope" and _mentions(module, "mrope_section"):
        # equal on text ids only: the model's code has an M-RoPE default the registry lacks
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
        cfg = cfg_cls(text_config=small.to_dict())
        whole, part = posenc.hf.describe(cfg), posenc.hf.describe(cfg.text_config)
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
    )


def walk() -> list[Outcome]:
    out = []
    for mt, module in sorted(modeling_modules().items()):
        if not rotary_source(module):
            continue
        out.append(walk_one(mt, module))
    done = {o.model_type: o for o in out}
    return [through_text(o, done) for o in out]


if __name__ == "__main__":
    import collections
    import time

    t0 = time.time()
    res = walk()
    print(f"{time.time() - t0:.1f} s")
    print(collections.Counter(o.status for o in res))
    for o in res:
        if o.status != "verified":
            print(o.model_type, o.status, o.reason[:160])

"""The non-rotary half of the generic walk (issue 12): ALiBi, T5 buckets, sinusoidal tables.

For each transformers model type whose modeling code builds an ALiBi tensor
(``build_*alibi_tensor``), buckets relative positions (``_relative_position_bucket``) or holds a
1-D sinusoidal table (a ``*Sinusoid*Embedding`` class, Whisper's ``sinusoids``), this walk builds
a small config, computes the model's positions object with the model's own code, and compares it
with the posenc function that ``posenc.hf.describe(config).function()`` returns:

- ALiBi: the model's bias (its ``build_*alibi_tensor``, with padding and as the model scales it)
  against ``function()(q_len, k_len)``, per head, within each query row's visible keys (the
  model adds ``slope * key index``; rows differ by a constant, which softmax cancels).
- T5: the buckets of the attention layer's own ``compute_bias`` (its bias table set to the
  bucket index) for query/key lengths with an offset, encoder and decoder, against
  ``function(bidirectional=...)(key - query)``; integer buckets, exactly.
- sinusoidal: the embedding module's output for padded token ids with a cache offset (or its
  weight rows) against rows of ``function()(n)`` at the positions the scheme's table implies
  (fairseq: ``padding_idx + 1 + k``, padding kept at ``padding_idx``; otherwise ``0 .. n-1``).

Statuses as in ``hf_walk``: ``verified`` (float32 within 1e-6 relative, buckets exactly),
``mismatch`` (a registry row that disagrees with the model's code), ``unverified`` (with the
reason). Types the scan finds that no probe handles are reported as unverified, never dropped.
"""

from __future__ import annotations

import copy
import importlib
import inspect
import math
import re
import typing
from importlib.util import find_spec
from typing import Any

import numpy as np
import torch

import hf_walk
import hf_walk_extra
import posenc
import posenc.hf
import seeded
from hf_walk import Outcome, modeling_modules

TOL32 = 1e-6
BATCH, SEQ, PAST = 2, 7, 3
HEADS = 6  # not a power of two: BLOOM's and MPT's extra slopes are exercised

# small widths; a config that refuses a key is retried without it
SMALL = {
    "d_model": 16,
    "hidden_size": 16,
    "encoder_layers": 1,
    "decoder_layers": 1,
    "num_layers": 1,
    "num_decoder_layers": 1,
    "num_hidden_layers": 1,
    "encoder_attention_heads": 2,
    "decoder_attention_heads": 2,
    "num_attention_heads": 2,
    "num_heads": 2,
    "encoder_ffn_dim": 16,
    "decoder_ffn_dim": 16,
    "d_ff": 16,
    "d_kv": 8,
    "intermediate_size": 16,
    "ffn_dim": 16,
    "vocab_size": 100,
    "max_position_embeddings": 40,
    "max_source_positions": 40,
    "max_target_positions": 40,
    "n_head": 2,
    "n_layer": 1,
    "n_embd": 16,
    "n_layers": 1,
    "n_heads": 2,
    "pad_token_id": 1,
}
# non-default bucket parameters, so the walk checks that describe reads them
T5_KEYS = {"relative_attention_num_buckets": 20, "relative_attention_max_distance": 48}
EXTRA: dict[str, dict[str, Any]] = {
    "time_series_transformer": {"prediction_length": 4, "context_length": 6},
    "informer": {"prediction_length": 4, "context_length": 6},
    "autoformer": {"prediction_length": 4, "context_length": 6},
    "trocr": {"use_learned_position_embeddings": False},  # its sinusoidal variant
    "falcon": {"alibi": True, "new_decoder_architecture": False, "multi_query": False},
    "gptj": {"rotary_dim": 4},  # partial: heads of 8 features
    "codegen": {"rotary_dim": 4},
    # the rotary option, with a base other than the default so that the walk checks the key
    "wav2vec2-conformer": {"position_embeddings_type": "rotary", "rotary_embedding_base": 5000},
    "wav2vec2-bert": {"position_embeddings_type": "rotary", "rotary_embedding_base": 5000},
    # four heads, so that the walk sees the three that do not rotate
    "qwen2_5_omni_dit": {"num_attention_heads": 4, "head_dim": 8, "hidden_size": 32},
    "qwen2_5_omni_token2wav": {
        "dit_config": {"num_attention_heads": 4, "head_dim": 8, "hidden_size": 32}
    },
    # CLVP's rotated width is at least 32: heads of 64 features
    "clvp_encoder": {"hidden_size": 128, "projection_dim": 64},
    "clvp": {
        "text_config": {
            "hidden_size": 128,
            "projection_dim": 64,
            "num_attention_heads": 2,
            "num_hidden_layers": 1,
            "intermediate_size": 16,
        }
    },
}
# composites whose validators tie another sub-config's width to the small text model's
COMPOSITE: dict[str, dict[str, Any]] = {
    "tipsv2": {"vision_config": {"hidden_size": SMALL["hidden_size"]}},
}
# owners built from a converted config, not the type's own (their table is another config's;
# the registry row's notes say so)
OTHER_CONFIG_OWNERS = {
    # SeamlessM4Tv2TextToUnitForConditionalGeneration copies the t2u_* keys over its config
    "SeamlessM4Tv2TextToUnitDecoder",
}
# types the scan finds whose positions belong to another family (reported, not walked)
NOT_THIS_FAMILY = {
    "vibevoice": "timestep embedding of a diffusion head, not token positions",
    "vibevoice_diffusion": "timestep embedding of a diffusion head, not token positions",
}

_ALIBI = re.compile(r"def build_\w*alibi_tensor\(")
_T5 = re.compile(
    r"def _relative_position_bucket\(|\w*relative_position_bucket\w*\(|_position_bucket\("
)
_SIN = re.compile(r"class \w*Sinusoid\w*Embedding\w*\(|def sinusoids\(")
# rotary code without a *RotaryEmbedding class (GPT-J, CodeGen, RoFormer): the rotary walk
# misses these, so this walk probes them (hf_walk_extra.ROTARY_PROBES)
_ROT = re.compile(r"def rotate_every_two\(|def apply_rotary_position_embeddings\(")


# ---------------------------------------------------------------- discovery


def _source(module: str) -> str:
    with open(find_spec(module).origin) as f:
        return f.read()


def scan() -> dict[str, tuple[str, str]]:
    """model type -> (family, module) for every module with an ALiBi, T5 or sinusoidal marker."""
    out = {}
    for mt, module in sorted(modeling_modules().items()):
        src = _source(module)
        if mt in hf_walk_extra.ROTARY_PROBES or (
            _ROT.search(src) and not hf_walk.rotary_source(module)
        ):
            out[mt] = ("rotary_table", module)
            continue
        for family, pat in (("alibi", _ALIBI), ("t5", _T5), ("sinusoidal", _SIN)):
            if pat.search(src):
                out[mt] = (family, module)
                break
    return out


def _hint(cls: type) -> Any:
    try:
        return typing.get_type_hints(cls.__init__).get("config")
    except Exception:
        return None


# a given config in place of the small one (the corpus, tests/hf_corpus.py): (the dict describe
# reads, the config object transformers built from it); None for the walk's own small configs
GIVEN: list[Any] = [None]


def small(cls: type, extra: dict[str, Any] | None = None) -> Any:
    if GIVEN[0] is not None:
        return GIVEN[0][1]
    return hf_walk.construct(cls, {**SMALL, **(extra or {})})


def _config_for(model_type: str, want: type | None) -> tuple[Any, Any]:
    """(config passed to describe, config the model's class takes): the type's own small config,
    or (for a composite) the small composite with a small ``want`` sub-config inside."""
    from transformers import CONFIG_MAPPING

    cls = CONFIG_MAPPING[model_type]
    extra = EXTRA.get(model_type)
    if GIVEN[0] is not None:
        obj = GIVEN[0][1]
        if want is None or want is cls or not isinstance(want, type):
            return obj, obj
        for key, sub in (getattr(cls, "sub_configs", None) or {}).items():
            if sub is want:
                return obj, getattr(obj, key)
    if want is None or want is cls or not isinstance(want, type):
        cfg = small(cls, extra)
        return cfg, cfg
    for key, sub in (getattr(cls, "sub_configs", None) or {}).items():
        if sub is want:
            inner = small(sub, EXTRA.get(getattr(sub, "model_type", "")))
            outer = cls(**{key: inner.to_dict()}, **COMPOSITE.get(model_type, {}))
            return outer, getattr(outer, key)
    raise RuntimeError(f"{cls.__name__} has no sub-config {want.__name__}")


def _is_sub(model_type: str, want: Any, module_dir: str = "") -> bool:
    """``want`` is this type's config, or its text / decoder sub-config (an audio or vision
    sub-config's positions are walked under that sub-config's own model type)."""
    from transformers import CONFIG_MAPPING

    cls = CONFIG_MAPPING[model_type]
    if want is None:  # an unannotated class: the module's own model type
        return model_type.replace("-", "_") == module_dir
    if want is cls:
        return True
    subs = getattr(cls, "sub_configs", None) or {}
    return any(
        sub is want and "audio" not in key and "vision" not in key for key, sub in subs.items()
    )


# ---------------------------------------------------------------- posenc side


def _describe(model_type: str, cfg: Any, kind: str) -> tuple[Any, Outcome | None]:
    known = hf_walk.written(model_type)
    try:
        scheme = posenc.hf.describe(cfg if GIVEN[0] is None else GIVEN[0][0])
    except Exception as exc:
        status = "mismatch" if known else "unverified"
        return None, Outcome(model_type, status, f"describe refuses its config: {exc}"[:300])
    if scheme.kind != kind:
        if scheme.kind == "unknown":
            why = f"posenc.hf has no row: the model's code is {kind!r}; needs a registry row"
            return None, Outcome(model_type, "unverified", why)
        status = "mismatch" if known else "unverified"
        why = (
            f"describe says {scheme.kind!r} ({scheme.convention}), the model's code is "
            f"{kind!r}" + ("" if known else ": needs a registry row")
        )
        return None, Outcome(model_type, status, why, scheme.convention)
    return scheme, None


def _verdict(
    model_type: str,
    scheme: Any,
    err: float,
    what: str,
    module: str,
    kinds: list[str],
    note: str = "",
) -> Outcome:
    ok = err <= TOL32
    if ok and not note:
        return Outcome(model_type, "verified", "", scheme.convention, kinds, err, module)
    if ok:
        return Outcome(model_type, "unverified", note, scheme.convention, kinds, err, module)
    status = "mismatch" if hf_walk.written(model_type) else "unverified"
    reason = f"{what}: error {err:.2e}" + ("" if status == "mismatch" else "; needs a registry row")
    return Outcome(model_type, status, reason, scheme.convention, kinds, err, module)


def _rel(a: torch.Tensor, b: torch.Tensor) -> float:
    scale = float(b.abs().max()) or 1.0
    return float((a - b).abs().max()) / scale


# ---------------------------------------------------------------- ALiBi


def _model_alibi(model_type: str, mod: Any, cfg: Any, mask: torch.Tensor) -> torch.Tensor:
    """(batch, heads, 1, keys): the bias the model adds to the scores (as it scales it)."""
    if model_type == "mpt":
        # MptModel.forward: self.build_mpt_alibi_tensor(self.num_heads, self.config.max_seq_len)
        # (the config's alibi_bias_max is not passed), then the last key_length columns
        full = mod.build_mpt_alibi_tensor(cfg.n_heads, cfg.max_seq_len)  # (heads, 1, max_seq_len)
        return full[None, :, :, -mask.shape[1] :].expand(mask.shape[0], -1, -1, -1)
    heads = cfg.num_attention_heads
    alibi = mod.build_alibi_tensor(mask, heads, torch.float32)  # (batch * heads, 1, keys)
    alibi = alibi.view(mask.shape[0], heads, 1, mask.shape[1])
    if model_type == "falcon":  # FalconModel.forward: alibi / sqrt(head_dim) goes into the mask
        alibi = alibi / math.sqrt(cfg.hidden_size // heads)
    return alibi


def walk_alibi(model_type: str, module: str) -> Outcome:
    mod = importlib.import_module(module)
    from transformers import CONFIG_MAPPING

    extra = {
        **EXTRA.get(model_type, {}),
        "num_attention_heads": HEADS,
        "n_heads": HEADS,
        "n_head": HEADS,
        "hidden_size": 8 * HEADS,
        "d_model": 8 * HEADS,
        "n_embd": 8 * HEADS,
    }
    cfg = small(CONFIG_MAPPING[model_type], extra)
    if model_type == "mpt" and GIVEN[0] is None:
        cfg.max_seq_len = 32
    scheme, bad = _describe(model_type, cfg, "alibi")
    if bad is not None:
        bad.module = module
        return bad
    heads = int(scheme.fixed["num_heads"])  # HEADS, or a corpus file's own count
    pad = 2
    mask = torch.ones(BATCH, SEQ + PAST, dtype=torch.long)
    mask[1, :pad] = 0  # left padding in row 1
    try:
        bias = _model_alibi(model_type, mod, cfg, mask)
    except Exception as exc:
        return Outcome(
            model_type,
            "unverified",
            f"model alibi: {exc!r}"[:200],
            scheme.convention,
            module=module,
        )
    fn = scheme.function()
    worst = 0.0
    keys = SEQ + PAST
    for b in range(BATCH):
        first = pad if b == 1 and model_type != "mpt" else 0  # MPT's bias ignores padding
        k_len = keys - first
        want = torch.as_tensor(fn(SEQ, k_len), dtype=torch.float64)  # (heads, q, k): queries last
        got = bias[b, :, 0, first:].double()  # (heads, k)
        for i in range(SEQ):
            q_pos = k_len - SEQ + i  # the query's key index
            row = got[:, : q_pos + 1] - got[:, q_pos : q_pos + 1]  # relative to the query itself
            worst = max(worst, _rel(row, want[:, i, : q_pos + 1]))
    return _verdict(model_type, scheme, worst, "ALiBi bias", module, [f"alibi:{heads} heads"])


# ---------------------------------------------------------------- T5 buckets


def _bias_classes(mod: Any) -> list[type]:
    return [
        c
        for c in vars(mod).values()
        if inspect.isclass(c) and c.__module__ == mod.__name__ and "compute_bias" in vars(c)
    ]


def _buckets(attn: Any, *args: Any, **kwargs: Any) -> torch.Tensor:
    n = attn.relative_attention_bias.weight.shape[0]
    with torch.no_grad():
        attn.relative_attention_bias.weight.copy_(
            torch.arange(n, dtype=torch.float32)[:, None].expand_as(
                attn.relative_attention_bias.weight
            )
        )
        values = attn.compute_bias(*args, **kwargs)
    return values.reshape(-1, *values.shape[-2:])[0].round().long()  # head 0: (q, k)


def walk_t5(model_type: str, module: str) -> Outcome | None:
    if model_type in hf_walk_extra.NOT_DESCRIBED:
        return Outcome(model_type, "unverified", hf_walk_extra.NOT_DESCRIBED[model_type])
    mod = importlib.import_module(module)
    classes = _bias_classes(mod)
    if not classes and model_type in hf_walk_extra.BUCKET_PROBES:
        return walk_buckets(model_type, module, mod)
    if not classes:
        return Outcome(
            model_type,
            "unverified",
            "T5-like buckets outside a compute_bias (its own bucket function): no probe",
            module=module,
        )
    owners = [c for c in classes if _is_sub(model_type, _hint(c), module.split(".")[-2])]
    if not owners:
        return None  # this type's config feeds no bucketed bias (a sibling type's does)
    try:
        outer, inner = _config_for(model_type, _hint(owners[0]))
        for key, value in T5_KEYS.items() if GIVEN[0] is None else ():
            setattr(inner, key, value)
    except Exception as exc:
        return Outcome(model_type, "unverified", f"small config: {exc}"[:200], module=module)
    scheme, bad = _describe(model_type, outer, "t5")
    if bad is not None:
        bad.module = module
        return bad
    worst_bad = 0
    kinds = []
    cases = [(SEQ, SEQ + 5, 5), (3, 160, 157), (60, 60, 0)]
    for cls in owners:
        for decoder in (False, True):
            cfg = copy.deepcopy(inner)
            cfg.is_decoder = decoder
            params = inspect.signature(cls.__init__).parameters
            try:
                attn = (
                    cls(cfg, has_relative_attention_bias=True)
                    if ("has_relative_attention_bias" in params)
                    else cls(cfg)
                )
            except Exception as exc:
                return Outcome(
                    model_type,
                    "unverified",
                    f"model attention: {exc!r}"[:200],
                    scheme.convention,
                    module=module,
                )
            if not hasattr(attn, "relative_attention_bias"):
                continue
            cparams = list(inspect.signature(attn.compute_bias).parameters)
            fn = scheme.function(bidirectional=not _causal(attn, decoder))
            for q_len, k_len, past in cases:
                if cparams[0] == "block_length":  # LongT5 local / transient-global blocks
                    got = _buckets(attn, q_len)
                    mem = torch.arange(3 * q_len)
                    rel = mem[None, :] - mem[q_len:-q_len][:, None]
                else:
                    got = _buckets(attn, q_len, k_len, past_seen_tokens=past)
                    rel = torch.arange(k_len)[None, :] - (torch.arange(q_len)[:, None] + past)
                want = torch.as_tensor(fn(rel.cpu().numpy()))
                worst_bad = max(worst_bad, int((got != want).sum()))
            kinds.append(f"{cls.__name__}:{'decoder' if decoder else 'encoder'}")
    if not kinds:
        return Outcome(
            model_type,
            "unverified",
            "no relative_attention_bias built",
            scheme.convention,
            module=module,
        )
    note = ""
    if model_type == "udop":
        note = (
            "decoder and encoder attention buckets equal t5_bucket; the encoder also adds "
            "RelativePositionBiasAggregated (1-D + horizontal/vertical bbox buckets), which "
            "describe does not cover"
        )
    return _verdict(
        model_type,
        scheme,
        float(worst_bad),
        "T5 buckets (entries differing)",
        module,
        sorted(set(kinds)),
        note,
    )


def walk_buckets(model_type: str, module: str, mod: Any) -> Outcome:
    """T5-like buckets computed outside a compute_bias: the model's own bias code (a probe of
    hf_walk_extra) against ``function()`` (1-D) and ``t5_bucket`` with the scheme's
    ``bbox_num_buckets`` / ``bbox_max_distance`` (LayoutLM's 2-D bias), exactly."""
    from transformers import CONFIG_MAPPING

    extra = {**EXTRA.get(model_type, {}), **hf_walk_extra.BUCKET_KEYS.get(model_type, {})}
    try:
        cfg = small(CONFIG_MAPPING[model_type], extra)
    except Exception as exc:
        return Outcome(model_type, "unverified", f"small config: {exc}"[:200], module=module)
    scheme, bad = _describe(model_type, cfg, "t5")
    if bad is not None:
        bad.module = module
        return bad
    worst_bad, kinds = 0, []
    for part, got, rel, name in hf_walk_extra.BUCKET_PROBES[model_type](mod, cfg):
        if part == "1d":
            fn = scheme.function()
        elif "bbox_num_buckets" not in scheme.fixed:
            return _verdict(model_type, scheme, math.inf, f"{name}: no bbox buckets", module, [])
        else:
            fn = scheme.function(
                num_buckets=scheme.fixed["bbox_num_buckets"],
                max_distance=scheme.fixed["bbox_max_distance"],
            )
        try:
            want = torch.as_tensor(np.asarray(fn(rel.cpu().numpy())))
        except ValueError as exc:  # parameters t5_bucket refuses: a wrong row
            return _verdict(model_type, scheme, math.inf, f"{name}: {exc}", module, [])
        worst_bad = max(worst_bad, int((got != want).sum()))
        kinds.append(f"{name}:{part}")
    return _verdict(
        model_type,
        scheme,
        float(worst_bad),
        "buckets (entries differing)",
        module,
        sorted(set(kinds)),
    )


def _causal(attn: Any, decoder: bool) -> bool:
    """Whether this attention buckets causally (its compute_bias passes bidirectional=False)."""
    src = inspect.getsource(type(attn).compute_bias)
    if "bidirectional=False" in src:
        return True
    if "bidirectional=(not self.is_decoder)" in src or "not self.is_decoder" in inspect.getsource(
        type(attn)._relative_position_bucket
    ):
        return bool(attn.is_decoder)
    return decoder


# ---------------------------------------------------------------- sinusoidal tables


def _sin_classes(mod: Any) -> list[type]:
    return [
        c
        for n, c in vars(mod).items()
        if inspect.isclass(c)
        and c.__module__ == mod.__name__
        and "Sinusoid" in n
        and issubclass(c, torch.nn.Module)
    ]


def _owners(mod: Any, emb: list[type], model_type: str) -> list[type]:
    """Classes of the module whose __init__ builds one of ``emb`` and takes this type's config."""
    names = [c.__name__ for c in emb]
    out = []
    for c in vars(mod).values():
        if (
            not (
                inspect.isclass(c)
                and c.__module__ == mod.__name__
                and issubclass(c, torch.nn.Module)
            )
            or c in emb
        ):
            continue
        try:
            src = inspect.getsource(c.__init__)
        except (OSError, TypeError):
            continue
        whisper = "sinusoids" in names and "nn.Embedding(self.max_source_positions" in src
        if (any(f"{n}(" in src for n in names) or whisper) and _is_sub(
            model_type, _hint(c), mod.__name__.split(".")[-2]
        ):
            out.append(c)
    return out


def _tokens(pad: int | None, vocab: int = 100) -> torch.Tensor:
    gen = torch.Generator().manual_seed(0)
    tok = seeded.randint(4, vocab, (BATCH, SEQ), generator=gen)
    if pad is not None:
        tok[tok == pad] = pad + 1 if pad + 1 < vocab else pad - 1
        tok[1, :2] = pad  # left padding in row 1
    return tok


def _model_rows(emb: Any, tok: torch.Tensor) -> tuple[torch.Tensor, bool]:
    """(batch, seq, dim) rows the module gives for ``tok`` after PAST cached tokens; and whether
    it saw the token ids (so fairseq padding applies)."""
    if isinstance(emb, torch.nn.Embedding) and type(emb) is torch.nn.Embedding:  # Whisper's
        return emb.weight[:SEQ][None].expand(BATCH, -1, -1), False
    params = list(inspect.signature(emb.forward).parameters)
    first = params[0]
    # the cache offset: past_key_values_length up to transformers 5.23, cache_length from 5.24
    names = [n for n in ("past_key_values_length", "cache_length") if n in params]
    past = {names[0]: PAST} if names else {}

    def batched(out: torch.Tensor) -> torch.Tensor:
        return out if out.dim() == 3 else out.reshape(-1, SEQ, out.shape[-1]).expand(BATCH, -1, -1)

    with torch.no_grad():
        if first in ("input_ids", "input"):
            try:
                return batched(emb(tok, **past)), True
            except ValueError:  # MusicGen: ids of shape (batch, codebooks, seq)
                return batched(emb(tok[:, None, :], **past)), False
        if first == "input_ids_shape":
            return batched(emb(tok.shape, **past)), False
        if first == "inputs_embeds":
            dim = getattr(emb, "embed_dim", None) or emb.embedding_dim
            return batched(emb(torch.zeros(BATCH, SEQ, dim), **past)), False
        if first == "position_ids":  # XGLMModel, Tipsv2TextEmbeddings pass arange(past, past + seq)
            pid = torch.arange(PAST, PAST + SEQ)[None].expand(BATCH, -1)
            return batched(emb(pid, **past)), False
        if first == "seqlen":  # SinusoidsPositionEmbedding (Qwen audio encoders)
            return batched(emb(PAST + SEQ)[PAST:]), False
    raise TypeError(f"unknown forward signature {params}")


def _posenc_rows(scheme: Any, tok: torch.Tensor, saw_ids: bool, whisper_like: bool) -> torch.Tensor:
    fixed = scheme.fixed
    fn = scheme.function()
    pad = fixed.get("padding_idx") if fixed.get("table") == "fairseq" else None
    if pad is not None:
        keep = tok != pad
        pos = torch.as_tensor(posenc.compat.fairseq_make_positions(tok, pad))
        pos = torch.where(keep, pos + PAST, pad)
        if not saw_ids:  # the module gets no ids, so a port gets no padding either
            pos = torch.arange(pad + 1 + PAST, pad + 1 + PAST + SEQ)[None].expand(BATCH, -1)
    else:
        pos = torch.arange(PAST, PAST + SEQ)[None].expand(BATCH, -1)
    if whisper_like:  # Whisper's encoder: rows 0 .. seq-1, no cache
        pos = torch.arange(SEQ)[None].expand(BATCH, -1)
    table = torch.as_tensor(np.asarray(fn(int(pos.max()) + 1)), dtype=torch.float32)
    return table[pos]


def walk_sinusoidal(model_type: str, module: str) -> Outcome | None:
    if model_type in NOT_THIS_FAMILY:
        return Outcome(model_type, "unverified", NOT_THIS_FAMILY[model_type], module=module)
    mod = importlib.import_module(module)
    emb = _sin_classes(mod)
    if "def sinusoids(" in _source(module):
        emb.append(type("sinusoids", (), {}))  # marker: Whisper fills an nn.Embedding
    owners = _owners(mod, emb, model_type)
    if not owners:
        return None  # this type's config feeds no sinusoidal table (a sibling type's does)
    worst = 0.0
    kinds = []
    scheme = None
    for owner in owners:
        if owner.__name__ in OTHER_CONFIG_OWNERS:
            continue
        try:
            outer, inner = _config_for(model_type, _hint(owner))
            model = owner(inner)
            if not hasattr(model, "post_init"):  # weights filled by the model's _init_weights
                from transformers import AutoModel

                whole = AutoModel.from_config(outer)
                if any("Sinusoid" in type(m).__name__ for m in whole.modules()):
                    model = whole
        except Exception as exc:
            return Outcome(
                model_type, "unverified", f"small config / model: {exc!r}"[:200], module=module
            )
        found = [(n, m) for n, m in model.named_modules() if "Sinusoid" in type(m).__name__]
        if (
            not found
            and hasattr(model, "embed_positions")
            and "sinusoids" in [c.__name__ for c in emb]
        ):
            found = [("embed_positions", model.embed_positions)]
        if not found:
            continue
        if scheme is None:
            scheme, bad = _describe(model_type, outer, "sinusoidal")
            if bad is not None:
                bad.module = module
                return bad
        for name, m in found:
            tok = _tokens(
                getattr(m, "padding_idx", None)
                if getattr(m, "padding_idx", None) is not None
                else getattr(inner, "pad_token_id", None)
            )
            try:
                got, saw = _model_rows(m, tok)
            except Exception as exc:
                return Outcome(
                    model_type,
                    "unverified",
                    f"model table {name}: {exc!r}"[:200],
                    scheme.convention,
                    module=module,
                )
            try:
                want = _posenc_rows(scheme, tok, saw, type(m) is torch.nn.Embedding)
            except Exception as exc:
                return Outcome(
                    model_type,
                    "mismatch" if hf_walk.written(model_type) else "unverified",
                    f"posenc table: {exc!r}"[:200],
                    scheme.convention,
                    module=module,
                )
            if got.shape != want.shape:
                return _verdict(
                    model_type,
                    scheme,
                    math.inf,
                    f"shape {tuple(got.shape)} vs {tuple(want.shape)} ({name})",
                    module,
                    kinds,
                )
            pad = scheme.fixed.get("padding_idx")
            if saw and pad is not None:  # padded tokens: masked in attention (FSMT moves them)
                keep = tok != pad
                got, want = got[keep], want[keep]
            worst = max(worst, _rel(got.float(), want))
            kinds.append(f"{owner.__name__}.{name}:{type(m).__name__}")
    if scheme is None:
        return Outcome(
            model_type,
            "unverified",
            "its default config builds no sinusoidal table (learned or another kind)",
            module=module,
        )
    return _verdict(model_type, scheme, worst, "table rows", module, kinds)


# ---------------------------------------------------------------- rotary without a class


def walk_rotary_table(model_type: str, module: str) -> Outcome:
    """GPT-J, CodeGen, RoFormer (and the rotary code the generic call cannot run: wav2vec2's
    rotated hidden states, CLVP's rotated values): the model's own table and apply function (a
    probe of hf_walk_extra) against ``describe(config).rotate`` (float32, within
    1e-6 * max|x|), and what describe says the model rotates (``Scheme.applies_to``) against
    what the probe's model code turned (q, k; values too; hidden states)."""
    from transformers import CONFIG_MAPPING

    probe = hf_walk_extra.ROTARY_PROBES.get(model_type)
    if probe is None:
        return Outcome(
            model_type, "unverified", "rotary code without a *RotaryEmbedding class: no probe"
        )
    mod = importlib.import_module(module)
    try:
        cfg = small(CONFIG_MAPPING[model_type], EXTRA.get(model_type))
        cases = probe(mod, cfg)
    except Exception as exc:
        return Outcome(model_type, "unverified", f"model rotary: {exc!r}"[:200], module=module)
    worst, kinds, scheme = 0.0, [], None
    for c, label, ins, refs, pid, *hidden in cases:
        scheme, bad = _describe(model_type, c, "rope")
        if bad is not None:
            bad.module = module
            return bad
        # what the model's code turned: hidden states (a probe says so), else q, k (and v)
        applies = hidden[0] if hidden else "qkv" if len(ins) == 3 else "qk"
        if scheme.applies_to != applies:
            return _verdict(
                model_type,
                scheme,
                math.inf,
                f"describe says it rotates {scheme.applies_to!r}, the model's code {applies!r} "
                f"({label})",
                module,
                kinds,
            )
        for x, ref in zip(ins, refs, strict=True):
            try:
                got = scheme.rotate(x, pid)
            except Exception as exc:
                return _verdict(model_type, scheme, math.inf, f"rotate: {exc!r}", module, kinds)
            worst = max(worst, _rel(got, ref) * float(ref.abs().max()) / float(x.abs().max()))
        kinds.append(f"{label}:rope")
    return _verdict(model_type, scheme, worst, "rotated q/k", module, kinds)


# ---------------------------------------------------------------- the walk


def walk_fixed() -> list[Outcome]:
    out = []
    for mt, (family, module) in scan().items():
        try:
            importlib.import_module(module)
        except Exception as exc:
            out.append(
                Outcome(
                    mt,
                    "unverified",
                    f"modeling module does not import: {exc!r}"[:200],
                    module=module,
                )
            )
            continue
        walker = {
            "alibi": walk_alibi,
            "t5": walk_t5,
            "sinusoidal": walk_sinusoidal,
            "rotary_table": walk_rotary_table,
        }[family]
        try:
            o = walker(mt, module)
        except Exception as exc:  # a probe that breaks is reported, never silently dropped
            o = Outcome(mt, "unverified", f"walk failed: {exc!r}"[:200], module=module)
        if o is not None:
            o.module = o.module or module
            out.append(o)
    return out


def walk_all() -> list[Outcome]:
    """Both walks, one outcome per model type: the rotary walk's, with the non-rotary walk's
    added for the types it alone reaches; a type both reach (Falcon: RoPE, or ALiBi with
    ``alibi=True``) is verified only when both are."""
    rotary = {o.model_type: o for o in hf_walk.walk()}
    for o in walk_fixed():
        if not o.layer_kinds and o.convention:
            o.layer_kinds = [o.convention]
        mine = rotary.get(o.model_type)
        if o.model_type in hf_walk_extra.ROTARY_PROBES:  # the probe's outcome is the type's
            rotary[o.model_type] = o
            continue
        if mine is None or mine.status != "verified":
            if mine is None or o.status == "verified":
                rotary[o.model_type] = o
            continue
        if o.status != "verified":
            rotary[o.model_type] = o  # the rotary side holds; the other does not
        else:
            mine.layer_kinds = [*mine.layer_kinds, *o.layer_kinds]
    # sub-config types a verified composite's walk read with a row of their own (Dia's encoder,
    # mllama's text model): verified through that composite, where their own walk is not
    for o in list(rotary.values()):
        if o.status != "verified":
            continue
        for inner, convention in o.inner_rows.items():
            mine = rotary.get(inner)
            if mine is None or mine.status != "verified":
                rotary[inner] = Outcome(
                    inner, "verified", "", convention, o.layer_kinds, o.error,
                    mine.module if mine is not None else o.module, via=o.model_type, row="walk",
                )  # fmt: skip
    return [rotary[mt] for mt in sorted(rotary)]

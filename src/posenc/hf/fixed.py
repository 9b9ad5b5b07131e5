"""Schemes without rotation (ALiBi, T5 buckets, sinusoidal tables): their parameters."""

from __future__ import annotations

import math
from typing import Any

from .keys import MAX_LAYERS, Config, first
from .layer import LayerScheme
from .schema import Convention, ModelRow
from .scheme import Scheme

__all__ = ["read_fixed"]


def read_fixed(
    cfg: Config, model_type: str, row: ModelRow, conv: Convention, known: bool
) -> Scheme:
    """ALiBi, T5 buckets and sinusoidal tables: the parameters of the posenc function."""
    sources: dict[str, str] = {}
    n = first(
        cfg,
        ("num_hidden_layers", "num_layers", "n_layer", "n_layers", "encoder_layers"),
        sources,
        "layers",
    )
    fixed: dict[str, Any] = {}
    if conv.kind == "alibi":
        heads = first(cfg, ("num_attention_heads", "n_head", "n_heads"), sources, "num_heads")
        if heads is None:
            raise ValueError(f"{cfg.where} must hold num_attention_heads (or n_head, n_heads)")
        # transformers 5.23 builds every ALiBi bias with max_bias 8 (MptModel passes no
        # attn_config['alibi_bias_max'] to build_mpt_alibi_tensor)
        fixed = {"num_heads": heads, "max_bias": 8.0, "scale": 1.0}
        if row.alibi_rounding is not None:  # Falcon: build_alibi_tensor works in bfloat16
            fixed["rounding"] = row.alibi_rounding
            sources["rounding"] = f"{row.alibi_rounding} (model code)"
        if row.alibi_scaled:  # Falcon: alibi / sqrt(head_dim) goes into the mask
            hidden = cfg.int("hidden_size")
            if hidden is None or hidden % heads:
                raise ValueError(
                    f"{cfg.name('hidden_size')} must be a multiple of the head count {heads}, "
                    f"got {hidden}"
                )
            fixed["scale"] = 1.0 / math.sqrt(hidden // heads)
            sources["scale"] = f"1 / sqrt({cfg.name('hidden_size')} // heads) (model code)"
    elif conv.kind == "t5":
        if row.requires is not None and not cfg.bool(row.requires, True):
            raise ValueError(
                f"{cfg.name(row.requires)} is False: this {model_type} model adds no bucketed "
                "relative-position bias, which is all posenc.hf describes for it"
            )
        buckets, distance = row.bucket_keys
        fixed = {
            "num_buckets": _bucket_key(cfg, buckets, 32, "num_buckets", sources),
            "max_distance": _bucket_key(cfg, distance, 128, "max_distance", sources),
            "bidirectional": not row.causal,
        }
        if cfg.bool("is_encoder_decoder", False):  # the decoder stack buckets causally
            fixed["decoder_bidirectional"] = False
        if row.bbox_keys is not None and cfg.bool(row.bbox_keys[0], True):
            # a 2-D bias over box coordinates (LayoutLM), with its own bucket parameters
            _, bbox_buckets, bbox_distance = row.bbox_keys
            fixed["bbox_num_buckets"] = _bucket_key(
                cfg, bbox_buckets, 64, "bbox_num_buckets", sources
            )
            fixed["bbox_max_distance"] = _bucket_key(
                cfg, bbox_distance, 256, "bbox_max_distance", sources
            )
    elif conv.kind == "sinusoidal":
        dim = first(cfg, ("d_model", "hidden_size", "n_embd"), sources, "dim")
        if dim is None:
            raise ValueError(f"{cfg.where} must hold d_model (or hidden_size)")
        table = row.table or "fairseq"
        fixed = {"table": table, "dim": dim}
        if table == "fairseq":
            # positions start at padding_idx + 1; rows without a padding row count from 0
            pad = cfg.int("pad_token_id", minimum=0) if row.padded else None
            fixed["padding_idx"] = pad
            if row.padded:
                sources["padding_idx"] = cfg.name("pad_token_id")
        if row.table_length is not None:  # Whisper's encoder: a table of this many rows
            fixed["length"] = _length(cfg, row.table_length, sources, "length")
        if row.learned_decoder is not None:  # Whisper's decoder: a learned table
            fixed["decoder_table"] = "learned"
            sources["decoder_table"] = "model code (WhisperPositionalEmbedding, an nn.Embedding)"
            fixed["decoder_length"] = _length(cfg, row.learned_decoder, sources, "decoder_length")
    if n is not None and n > MAX_LAYERS:
        raise ValueError(f"{sources['layers']} must be <= {MAX_LAYERS}, got {n}")
    layers = tuple(LayerScheme(i, "full_attention", conv.kind) for i in range(n or 0))
    return Scheme(
        model_type,
        conv.name,
        conv.kind,
        known,
        layers,
        cfg.int("max_position_embeddings"),
        sources,
        row.notes_en,
        row.notes_zh,
        fixed=fixed,
    )


def _length(cfg: Config, key: str, sources: dict[str, str], what: str) -> int:
    """A table's number of rows from ``key`` (the class's default where the file has none)."""
    value = cfg.int(key)
    if value is None:
        raise ValueError(f"{cfg.name(key)} must be an int >= 1, got none")
    sources[what] = cfg.name(key)
    return int(value)


def _bucket_key(
    cfg: Config, key: str | None, default: int, what: str, sources: dict[str, str]
) -> int:
    """A T5 bucket parameter: the config's ``key`` (else the row's or this ``default``), or
    ``default`` alone when the model's code fixes it (``key`` None); its source goes to
    ``sources[what]``."""
    if key is None:
        sources[what] = f"{default} (fixed by the model's code, whatever the config says)"
        return default
    value = cfg.get(key)
    if value is None:
        sources[what] = f"{default} (model code's default; no {cfg.where}['{key}'])"
        return default
    sources[what] = cfg.name(key)
    return int(cfg.int(key))

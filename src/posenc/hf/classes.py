"""What transformers' config classes do with a ``config.json``, as data (``classes.json``).

A Hub ``config.json`` is sparse: it holds the keys its author saved, and transformers fills the
rest from the config class of its ``model_type`` (its dataclass defaults), reads its
``attribute_map`` aliases (GPT-J's ``n_layer`` is ``num_hidden_layers``), builds its sub-configs
(a LLaVA ``text_config`` without a ``model_type`` is a ``LlamaConfig``) and turns its RoPE keys
into ``rope_parameters``. ``classes.json`` holds those facts per model type, generated from
transformers by ``tools/hf_classes.py`` (committed, reviewed, regenerated for each release);
this module loads it. transformers itself is never imported.

Per model type (``CLASSES[model_type]``):

- ``defaults``: the class's default of each key of :data:`READ_KEYS` that it declares;
- ``bools``: those keys the class types ``bool`` (a string such as ``"false"`` is refused, as
  transformers' strict dataclasses refuse it);
- ``aliases``: its ``attribute_map`` (standard name -> the name the class stores);
- ``subs``: its sub-configs: the default ``model_type``, whether a ``model_type`` in the file
  picks the class (``auto``), and the defaults it passes when the file has no sub-config;
- ``rope`` (classes with ``rope_parameters``): the default ``rope_parameters``, its entries
  (``""`` flat, else the layer types it is nested by), the top-level keys feeding each entry's
  ``rope_theta`` and ``partial_rotary_factor`` (highest precedence first) and their defaults,
  the entries a legacy ``rope_scaling`` is merged into, and the rope type spellings it renames;
- ``reads_partial``: whether the model's default RoPE frequencies read
  ``partial_rotary_factor`` (from its modeling code).
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any

__all__ = ["READ_KEYS", "class_facts", "classes_version", "layer_type_names"]

# every config key posenc.hf reads (tools/hf_classes.py records the classes' defaults of these)
READ_KEYS: tuple[str, ...] = (
    "alibi",
    "attention_chunk_size",
    "d_model",
    "global_attn_every_n_layers",
    "global_head_dim",
    "global_rope_theta",
    "has_relative_attention_bias",
    "has_spatial_attention_bias",
    "head_dim",
    "hidden_size",
    "is_encoder_decoder",
    "layer_types",
    "local_attention",
    "local_rope_theta",
    "max_position_embeddings",
    "max_rel_2d_pos",
    "max_rel_pos",
    "mrope_section",
    "n_embd",
    "n_head",
    "n_heads",
    "n_layer",
    "n_layers",
    "no_rope_layer_interval",
    "no_rope_layers",
    "num_attention_heads",
    "num_hidden_layers",
    "num_layers",
    "original_max_position_embeddings",
    "pad_token_id",
    "partial_rotary_factor",
    "position_bias_max_distance",
    "position_bias_num_buckets",
    "position_embeddings_type",
    "projection_dim",
    "qk_head_dim",
    "qk_nope_head_dim",
    "qk_rope_head_dim",
    "rel_2d_pos_bins",
    "rel_pos_bins",
    "relative_attention_max_distance",
    "relative_attention_num_buckets",
    "rope_interleave",
    "rope_local_base_freq",
    "rope_parameters",
    "rope_theta",
    "rotary_dim",
    "rotary_emb_base",
    "rotary_embedding_base",
    "rotary_pct",
    "rotary_value",
    "sliding_window",
    "sliding_window_pattern",
    "use_bidirectional_attention",
    "use_rotary_embedding",
    "encoder_layers",
    "full_attention_interval",
    "cross_attention_layers",
    "attn_scale",
    "attn_temperature_tuning",
    "floor_scale",
    "index_head_dim",
    "index_n_heads",
    "max_source_positions",
    "max_target_positions",
    "attn_layer_indices",
    "block_types",
    "use_mem_rope",
    "position_embedding_type",
    "attention_window_size",
)


@lru_cache(maxsize=1)
def _load() -> dict[str, Any]:
    text = resources.files(__package__).joinpath("classes.json").read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def class_facts(model_type: str) -> dict[str, Any] | None:
    """The facts of ``model_type``'s config class, or None when transformers has no such type."""
    found: dict[str, Any] | None = _load()["classes"].get(model_type)
    return found


def classes_version() -> str:
    """The transformers version classes.json was generated from."""
    version: str = _load()["transformers"]
    return version


def layer_type_names() -> tuple[tuple[str, ...], dict[str, str]]:
    """The layer kinds transformers' configs accept, and the legacy names it renames
    (``"attention"`` -> ``"full_attention"``, ``"mamba"`` -> ``"linear_attention"``)."""
    data = _load()
    return tuple(data["layer_types"]), dict(data["layer_type_remap"])

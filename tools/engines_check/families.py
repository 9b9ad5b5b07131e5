"""The architecture families of the engines matrix: one tiny config each.

Every config is built by transformers' own config class of its model type
(``AutoConfig.for_model``), so ``config.json`` holds what a checkpoint of that type holds; it is
small (2-4 layers, hidden 64, head dim 16, vocabulary 320) and its trained length is short
(``max_position_embeddings`` 64-128, the original length of a scaling 32-64), so that a run of
``tokens`` positions (2-4 times the trained length) goes past it and every scaling is active.

``spelling`` says which ``config.json`` the checkpoint carries: ``"transformers5"`` is what
transformers 5 writes (``to_dict()``: the rope keys only under ``rope_parameters``);
``"legacy"`` is the transformers-4 spelling of the same config (``rope_theta`` and
``rope_scaling`` at the top level: ``tools/engines_record.legacy``), what most checkpoints on
the Hub hold.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

SMALL: dict[str, Any] = {
    "hidden_size": 64,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 16,
    "num_hidden_layers": 2,
    "intermediate_size": 128,
    "vocab_size": 320,
    # the tokenizer's special tokens (checkpoints.py): 256 byte tokens and 59 merges come first
    "bos_token_id": 315,
    "eos_token_id": 316,
    "pad_token_id": None,
}
# Keys some config classes name otherwise (attribute_map): given under the class's own names.
ALIASES: dict[str, dict[str, str]] = {
    "bloom": {"hidden_size": "n_embed", "num_hidden_layers": "n_layer", "num_attention_heads": "n_head"},
    "mpt": {"hidden_size": "d_model", "num_hidden_layers": "n_layers", "num_attention_heads": "n_heads"},
}  # fmt: skip
# Keys a model type's config class has no use for (dropped so config.json stays plain).
DROP: dict[str, tuple[str, ...]] = {
    "bloom": ("num_key_value_heads", "head_dim", "intermediate_size"),
    "mpt": ("num_key_value_heads", "head_dim", "intermediate_size"),
    "falcon": ("intermediate_size", "head_dim", "num_key_value_heads"),
    "gpt_neox": ("num_key_value_heads", "head_dim"),
    "stablelm": ("head_dim",),
    "cohere": ("head_dim",),
}


@dataclass(frozen=True)
class Family:
    """One row of the matrix: a model type, its architecture and what the config sets."""

    name: str
    model_type: str
    architecture: str  # config.json's "architectures", as the Hub's checkpoints spell it
    over: dict[str, Any]
    trained: int  # the trained length: positions from here on are "beyond"
    tokens: int  # the run's length
    spelling: str = "transformers5"
    what: str = ""  # the position scheme, in a few words
    extra: dict[str, Any] = field(default_factory=dict)  # set after to_dict (legacy keys)
    # a multimodal config: the sizes and ``over`` go to text_config, this to vision_config
    vision: dict[str, Any] | None = None
    auto: str = "AutoModelForCausalLM"  # transformers' auto class that loads it
    n_ctx: int | None = None  # the engine's context size, when not the run's length


def _rp(**kw: Any) -> dict[str, Any]:
    return {"rope_type": "default", **kw}


FAMILIES: list[Family] = [
    Family("llama3", "llama", "LlamaForCausalLM", {
        "max_position_embeddings": 256,
        "rope_parameters": _rp(rope_type="llama3", rope_theta=10000.0, factor=4.0,
                               low_freq_factor=1.0, high_freq_factor=4.0,
                               original_max_position_embeddings=64)},
        trained=64, tokens=320, what="llama3 scaling (factor 4, original length 64)"),
    Family("llama3-legacy", "llama", "LlamaForCausalLM", {
        "max_position_embeddings": 256,
        "rope_parameters": _rp(rope_type="llama3", rope_theta=10000.0, factor=4.0,
                               low_freq_factor=1.0, high_freq_factor=4.0,
                               original_max_position_embeddings=64)},
        trained=64, tokens=320, spelling="legacy",
        what="llama3 scaling, transformers-4 spelling (rope_scaling)"),
    # dynamic NTK: transformers raises the base for the whole run once it is longer than
    # max_position_embeddings (64 here)
    Family("llama-dynamic", "llama", "LlamaForCausalLM", {
        "max_position_embeddings": 64,
        "rope_parameters": _rp(rope_type="dynamic", rope_theta=10000.0, factor=2.0)},
        trained=64, tokens=256, spelling="legacy", what="dynamic NTK scaling (factor 2)"),
    Family("qwen2-yarn", "qwen2", "Qwen2ForCausalLM", {
        "max_position_embeddings": 256,
        "rope_parameters": _rp(rope_type="yarn", rope_theta=10000.0, factor=4.0,
                               original_max_position_embeddings=64)},
        trained=64, tokens=320, spelling="legacy", what="YaRN (factor 4, original length 64)"),
    Family("qwen3", "qwen3", "Qwen3ForCausalLM", {
        "max_position_embeddings": 128, "rope_parameters": _rp(rope_theta=500000.0)},
        trained=128, tokens=384, what="plain RoPE, base 5e5, q/k norm; transformers-5 spelling"),
    Family("phi3-longrope", "phi3", "Phi3ForCausalLM", {
        "max_position_embeddings": 256, "original_max_position_embeddings": 64,
        "rope_parameters": _rp(rope_type="longrope", rope_theta=10000.0,
                               short_factor=[1.0, 1.1, 1.2, 1.5, 2.0, 3.0, 5.0, 8.0],
                               long_factor=[1.0, 1.5, 2.0, 4.0, 8.0, 16.0, 24.0, 32.0],
                               original_max_position_embeddings=64)},
        trained=64, tokens=320, spelling="legacy",
        what="LongRoPE (short factors up to 64 tokens, long past it)"),
    # query_pre_attn_scalar = head_dim, as in Gemma 2 2B/9B and Gemma 3 (256 = 256 there):
    # llama.cpp scales queries by 1/sqrt(head_dim) whatever the key says, except for the 27B
    # sizes (src/models/gemma2.cpp, gemma3.cpp: load_hparams); the class default 256 would differ
    Family("gemma2", "gemma2", "Gemma2ForCausalLM", {
        "max_position_embeddings": 128, "sliding_window": 32, "num_hidden_layers": 2,
        "query_pre_attn_scalar": 16,
        "rope_parameters": _rp(rope_theta=10000.0)},
        trained=128, tokens=384, what="sliding window 32 on alternate layers, soft-capping"),
    Family("gemma3", "gemma3_text", "Gemma3ForCausalLM", {
        "max_position_embeddings": 128, "sliding_window": 32, "num_hidden_layers": 6,
        "query_pre_attn_scalar": 16,
        # Gemma 3's pattern: five sliding layers, then a global one. llama.cpp's converter
        # does not write layer_types; its loader assumes this pattern (src/models/gemma3.cpp:
        # load_swa_pattern(ml, 6)), so another pattern would be misread
        "layer_types": ["sliding_attention"] * 5 + ["full_attention"],
        "rope_parameters": {
            "sliding_attention": _rp(rope_theta=10000.0),
            "full_attention": _rp(rope_type="linear", rope_theta=1000000.0, factor=2.0)}},
        trained=128, tokens=384,
        what="sliding window 32, local base 1e4, global base 1e6 with linear scaling 2"),
    Family("gpt_neox", "gpt_neox", "GPTNeoXForCausalLM", {
        "max_position_embeddings": 128,
        "rope_parameters": _rp(rope_theta=10000.0, partial_rotary_factor=0.25)},
        trained=128, tokens=384, spelling="legacy", what="partial rotary (4 of 16 dims), neox pairing"),
    Family("stablelm", "stablelm", "StableLmForCausalLM", {
        "max_position_embeddings": 128,
        "rope_parameters": _rp(rope_theta=10000.0, partial_rotary_factor=0.25)},
        trained=128, tokens=384, spelling="legacy", what="partial rotary (4 of 16 dims)"),
    Family("falcon", "falcon", "FalconForCausalLM", {
        "max_position_embeddings": 128, "new_decoder_architecture": True, "num_kv_heads": 2,
        "rope_parameters": _rp(rope_theta=10000.0)},
        trained=128, tokens=384, spelling="legacy", what="RoPE, new decoder architecture"),
    Family("falcon-alibi", "falcon", "FalconForCausalLM", {
        "max_position_embeddings": 128, "alibi": True, "multi_query": False,
        "parallel_attn": False, "bias": True},
        trained=128, tokens=384, spelling="legacy", what="ALiBi (falcon-rw)"),
    # MPT checkpoints on the Hub name their remote-code class MPTForCausalLM (what llama.cpp's
    # converter registers); transformers loads them by model_type as MptForCausalLM
    Family("mpt", "mpt", "MPTForCausalLM", {
        "max_seq_len": 384, "expansion_ratio": 2,
        "attn_config": {"alibi": True, "alibi_bias_max": 8}},
        # transformers' MPT sizes its ALiBi bias by max_seq_len and refuses longer inputs
        trained=128, tokens=384, what="ALiBi (max_seq_len 384; 128 taken as the trained length)"),
    Family("bloom", "bloom", "BloomForCausalLM", {"max_position_embeddings": 128},
        trained=128, tokens=384, what="ALiBi"),
    # q_lora_rank set (DeepSeek-V2's shape): llama.cpp takes a model without one (V2-Lite's)
    # for Lite only at 26 or 27 layers (src/models/deepseek2.cpp, load_hparams)
    Family("deepseek_v2", "deepseek_v2", "DeepseekV2ForCausalLM", {
        "max_position_embeddings": 256, "num_key_value_heads": 4, "kv_lora_rank": 32, "q_lora_rank": 32,
        "qk_rope_head_dim": 8, "qk_nope_head_dim": 16, "v_head_dim": 16, "head_dim": 8,
        "n_routed_experts": 4, "num_experts_per_tok": 2, "n_shared_experts": 1,
        "moe_intermediate_size": 32, "first_k_dense_replace": 1, "n_group": 1, "topk_group": 1,
        "rope_parameters": _rp(rope_type="yarn", rope_theta=10000.0, factor=4.0,
                               original_max_position_embeddings=64, mscale=0.707,
                               mscale_all_dim=0.707, beta_fast=32, beta_slow=1)},
        trained=64, tokens=320, spelling="legacy", what="MLA (rope on 8 dims) + YaRN factor 4"),
    Family("gpt_oss", "gpt_oss", "GptOssForCausalLM", {
        "max_position_embeddings": 256, "num_local_experts": 4, "num_experts_per_tok": 2,
        "sliding_window": 32, "layer_types": ["sliding_attention", "full_attention"],
        "rope_parameters": _rp(rope_type="yarn", rope_theta=10000.0, factor=4.0,
                               original_max_position_embeddings=64, beta_fast=32.0,
                               beta_slow=1.0, truncate=False)},
        trained=64, tokens=320, spelling="legacy",
        what="YaRN factor 4, attention sinks, sliding window 32 on alternate layers"),
    Family("cohere", "cohere", "CohereForCausalLM", {
        "max_position_embeddings": 128, "rope_parameters": _rp(rope_theta=10000.0)},
        trained=128, tokens=384, spelling="legacy", what="interleaved pairing (GPT-J style)"),
    Family("glm4", "glm4", "Glm4ForCausalLM", {
        "max_position_embeddings": 128,
        "rope_parameters": _rp(rope_theta=10000.0, partial_rotary_factor=0.5)},
        trained=128, tokens=384, spelling="legacy", what="interleaved pairing on half the head"),
    # Llama 4 as Meta's checkpoints set it: NoPE on every 4th layer, chunked attention and the
    # attention temperature from 8192 tokens on (so inside this run: NoPE + llama3 scaling)
    Family("llama4", "llama4_text", "Llama4ForCausalLM", {
        "num_hidden_layers": 4, "max_position_embeddings": 256, "num_local_experts": 2,
        "num_experts_per_tok": 1, "intermediate_size_mlp": 128, "interleave_moe_layer_step": 1,
        "no_rope_layers": [1, 1, 1, 0], "attn_temperature_tuning": True, "floor_scale": 8192,
        "attn_scale": 0.1, "attention_chunk_size": 8192,
        "rope_parameters": _rp(rope_type="llama3", rope_theta=10000.0, factor=4.0,
                               low_freq_factor=1.0, high_freq_factor=4.0,
                               original_max_position_embeddings=64)},
        trained=64, tokens=320, spelling="legacy",
        what="NoPE on every 4th layer, llama3 scaling (temperature and chunks from 8192 on)"),
    # the same with the temperature and the chunks inside the run: floor_scale 16, chunks of 64
    Family("llama4-short", "llama4_text", "Llama4ForCausalLM", {
        "num_hidden_layers": 4, "max_position_embeddings": 256, "num_local_experts": 2,
        "num_experts_per_tok": 1, "intermediate_size_mlp": 128, "interleave_moe_layer_step": 1,
        "no_rope_layers": [1, 1, 1, 0], "attn_temperature_tuning": True, "floor_scale": 16,
        "attn_scale": 0.1, "attention_chunk_size": 64,
        "rope_parameters": _rp(rope_type="llama3", rope_theta=10000.0, factor=4.0,
                               low_freq_factor=1.0, high_freq_factor=4.0,
                               original_max_position_embeddings=64)},
        trained=64, tokens=320, spelling="legacy",
        what="as llama4, attention temperature from 16 tokens on, chunks of 64"),
    # M-RoPE on text alone: transformers gives all three sections the same positions
    Family("qwen2_vl", "qwen2_vl", "Qwen2VLForConditionalGeneration", {
        "max_position_embeddings": 128,
        "rope_parameters": _rp(rope_theta=10000.0, mrope_section=[2, 3, 3])},
        trained=128, tokens=384, auto="AutoModelForImageTextToText",
        vision={"depth": 1, "embed_dim": 32, "num_heads": 2, "hidden_size": 64, "mlp_ratio": 2},
        what="M-RoPE (sections 2/3/3 of 8 frequencies), text tokens only"),
    # LongRoPE's short factors: a run inside the original length, in a context as large as the
    # model's (what a server sets): transformers picks the factors by the run's length
    Family("phi3-longrope-short", "phi3", "Phi3ForCausalLM", {
        "max_position_embeddings": 256, "original_max_position_embeddings": 64,
        "rope_parameters": _rp(rope_type="longrope", rope_theta=10000.0,
                               short_factor=[1.0, 1.1, 1.2, 1.5, 2.0, 3.0, 5.0, 8.0],
                               long_factor=[1.0, 1.5, 2.0, 4.0, 8.0, 16.0, 24.0, 32.0],
                               original_max_position_embeddings=64)},
        trained=64, tokens=48, n_ctx=256, spelling="legacy",
        what="LongRoPE, 48 tokens in a context of 256 (transformers: short factors)"),
]  # fmt: skip


def _legacy(cfg: dict[str, Any]) -> dict[str, Any]:
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        from engines_record import legacy
    finally:
        sys.path.remove(str(ROOT / "tools"))
    return legacy(cfg)


def config(family: Family) -> dict[str, Any]:
    """The ``config.json`` of ``family``'s checkpoint, as its spelling writes it."""
    from transformers import AutoConfig

    small = {k: v for k, v in SMALL.items() if k not in DROP.get(family.model_type, ())}
    for std, own in ALIASES.get(family.model_type, {}).items():
        if std in small:
            small[own] = small.pop(std)
    if family.vision is None:
        made = AutoConfig.for_model(family.model_type, **{**small, **family.over})
    else:
        made = AutoConfig.for_model(
            family.model_type, text_config={**small, **family.over}, vision_config=family.vision
        )
    cfg = made.to_dict()
    cfg["architectures"] = [family.architecture]
    for key in ("transformers_version", "dtype", "torch_dtype", "_name_or_path"):
        cfg.pop(key, None)
    cfg = json.loads(json.dumps(cfg))  # plain JSON types
    if family.spelling == "legacy":
        cfg = _legacy(cfg)
    cfg.update(family.extra)
    return cfg


def by_name(names: list[str] | None = None) -> list[Family]:
    """The families named (all when ``names`` is None), in the matrix's order."""
    if not names:
        return list(FAMILIES)
    known = {f.name: f for f in FAMILIES}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(f"families must be among {sorted(known)}, got {unknown}")
    return [known[n] for n in names]

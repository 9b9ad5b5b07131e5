"""The ten flagship families of tests/test_hf_e2e.py: a tiny config each, and where each model's
rotary code sits, as read from transformers 5.23's ``modeling_<name>.py`` (the rotary embedding
class, the module-level function its attention calls on q and k, the attention class).

Each config is small (2 layers, hidden 64, head 16, vocab 96) but keeps what the family does with
positions: Llama 3 scaling, M-RoPE sections, Gemma 3's sliding layers with their own base and
linearly scaled full layers, partial rotary with LongRoPE, GPT-NeoX's rotary_pct, DeepSeek-V3's
MLA with YaRN and rope_interleave, Llama 4's NoPE and chunked layers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

VOCAB = 96

# every config starts from these (a family drops the keys its config does not take)
SMALL: dict[str, Any] = {
    "vocab_size": VOCAB,
    "hidden_size": 64,
    "intermediate_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 16,
    "max_position_embeddings": 64,
    "initializer_range": 0.1,
    "attn_implementation": "eager",
}


@dataclass(frozen=True)
class Family:
    """How one family is built and where its rotary code sits (read from modeling_<name>.py)."""

    name: str
    package: str  # transformers.models.<package>.modeling_<package>
    model: str  # the *ForCausalLM / *ForConditionalGeneration class
    config: Callable[[Any], Any]  # transformers -> a small config object
    rotary: str  # the rotary embedding class whose forward is swapped
    apply: str  # the module-level function the attention calls on q and k
    attention: str  # the attention class (its layer_idx names the layer)
    style: str = "cos_sin"  # cos_sin: apply(q, k, cos, sin); mla: the rotary part only;
    # complex: apply(xq, xk, freqs_cis) on (batch, seq, heads, dim) (Llama 4)
    mrope: bool = False
    cache_matches_full: bool = True  # the original model's cached steps equal its one-pass run


def _cfg(cls: Any, drop: tuple[str, ...] = (), **extra: Any) -> Any:
    kwargs = {**SMALL, **extra}
    return cls(**{k: v for k, v in kwargs.items() if k not in drop})


FAMILIES = [
    Family(
        "llama",
        "llama",
        "LlamaForCausalLM",
        lambda t: _cfg(
            t.LlamaConfig,
            rope_parameters={
                "rope_type": "llama3",
                "rope_theta": 500000.0,
                "factor": 8.0,
                "low_freq_factor": 1.0,
                "high_freq_factor": 4.0,
                "original_max_position_embeddings": 16,
            },
        ),
        "LlamaRotaryEmbedding",
        "apply_rotary_pos_emb",
        "LlamaAttention",
    ),
    Family(
        "qwen2",
        "qwen2",
        "Qwen2ForCausalLM",
        lambda t: _cfg(t.Qwen2Config, rope_parameters={"rope_type": "default", "rope_theta": 1e6}),
        "Qwen2RotaryEmbedding",
        "apply_rotary_pos_emb",
        "Qwen2Attention",
    ),
    Family(
        "qwen2_vl",
        "qwen2_vl",
        "Qwen2VLForConditionalGeneration",
        lambda t: t.Qwen2VLConfig(
            text_config={
                **SMALL,
                "rope_parameters": {
                    "rope_type": "default",
                    "rope_theta": 1e6,
                    "mrope_section": [2, 3, 3],
                },
            },
            vision_config={
                "depth": 1,
                "embed_dim": 16,
                "hidden_size": 64,
                "num_heads": 2,
                "mlp_ratio": 1,
                "patch_size": 2,
                "spatial_merge_size": 1,
            },
            attn_implementation="eager",
        ),
        "Qwen2VLRotaryEmbedding",
        "apply_rotary_pos_emb",
        "Qwen2VLAttention",
        mrope=True,
    ),
    Family(
        "qwen3",
        "qwen3",
        "Qwen3ForCausalLM",
        lambda t: _cfg(t.Qwen3Config, rope_parameters={"rope_type": "default", "rope_theta": 1e6}),
        "Qwen3RotaryEmbedding",
        "apply_rotary_pos_emb",
        "Qwen3Attention",
    ),
    Family(
        "gemma3_text",
        "gemma3",
        "Gemma3ForCausalLM",
        lambda t: _cfg(
            t.Gemma3TextConfig,
            layer_types=["sliding_attention", "full_attention"],
            sliding_window=4,
            query_pre_attn_scalar=16,
            rope_parameters={
                "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
                "full_attention": {"rope_type": "linear", "rope_theta": 1e6, "factor": 8.0},
            },
        ),
        "Gemma3RotaryEmbedding",
        "apply_rotary_pos_emb",
        "Gemma3Attention",
    ),
    Family(
        "mistral",
        "mistral",
        "MistralForCausalLM",
        lambda t: _cfg(t.MistralConfig, sliding_window=4),
        "MistralRotaryEmbedding",
        "apply_rotary_pos_emb",
        "MistralAttention",
    ),
    Family(
        "phi3",
        "phi3",
        "Phi3ForCausalLM",
        lambda t: _cfg(
            t.Phi3Config,
            drop=("head_dim",),
            num_key_value_heads=4,
            pad_token_id=0,
            original_max_position_embeddings=16,
            rope_parameters={
                "rope_type": "longrope",
                "rope_theta": 10000.0,
                "partial_rotary_factor": 0.5,
                "short_factor": [1.0, 1.1, 1.3, 1.6],
                "long_factor": [1.0, 1.5, 2.5, 4.0],
                "original_max_position_embeddings": 16,
            },
        ),
        "Phi3RotaryEmbedding",
        "apply_rotary_pos_emb",
        "Phi3Attention",
        # LongRoPE picks short or long factors per call from max(position_ids) + 1 against
        # original_max_position_embeddings = 16: the full run (ids up to 16) uses the long ones,
        # the prefill (ids up to 13) the short ones, so transformers' own cached logits differ
        # from its one-pass logits; posenc must reproduce both
        cache_matches_full=False,
    ),
    Family(
        "gpt_neox",
        "gpt_neox",
        "GPTNeoXForCausalLM",
        lambda t: _cfg(t.GPTNeoXConfig, drop=("head_dim", "num_key_value_heads"), rotary_pct=0.25),
        "GPTNeoXRotaryEmbedding",
        "apply_rotary_pos_emb",
        "GPTNeoXAttention",
    ),
    Family(
        "deepseek_v3",
        "deepseek_v3",
        "DeepseekV3ForCausalLM",
        lambda t: _cfg(
            t.DeepseekV3Config,
            drop=("head_dim",),
            num_key_value_heads=4,
            q_lora_rank=16,
            kv_lora_rank=16,
            qk_nope_head_dim=8,
            qk_rope_head_dim=8,
            v_head_dim=8,
            n_routed_experts=4,
            num_experts_per_tok=2,
            n_group=1,
            topk_group=1,
            n_shared_experts=1,
            first_k_dense_replace=1,
            moe_intermediate_size=16,
            rope_interleave=True,
            rope_parameters={
                "rope_type": "yarn",
                "rope_theta": 10000.0,
                "factor": 4.0,
                "original_max_position_embeddings": 16,
                "beta_fast": 32.0,
                "beta_slow": 1.0,
                "mscale": 1.0,
                "mscale_all_dim": 1.0,
            },
        ),
        "DeepseekV3RotaryEmbedding",
        "apply_rotary_pos_emb_interleave",
        "DeepseekV3Attention",
        style="mla",
    ),
    Family(
        "llama4_text",
        "llama4",
        "Llama4ForCausalLM",
        lambda t: _cfg(
            t.Llama4TextConfig,
            no_rope_layers=[1, 0],
            attention_chunk_size=4,
            intermediate_size_mlp=64,
            num_local_experts=2,
            num_experts_per_tok=1,
        ),
        "Llama4TextRotaryEmbedding",
        "apply_rotary_emb",
        "Llama4TextAttention",
        style="complex",
    ),
]

"""Configs as a model's ``config.json`` holds them, shared by the atlas tests (issue 12)."""

from __future__ import annotations

from typing import Any


def llama31() -> dict[str, Any]:
    """meta-llama/Llama-3.1-8B (transformers 4.43 spelling)."""
    return {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_size": 4096,
        "intermediate_size": 14336,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "num_hidden_layers": 32,
        "max_position_embeddings": 131072,
        "rope_theta": 500000.0,
        "rope_scaling": {
            "factor": 8.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": 8192,
            "rope_type": "llama3",
        },
        "torch_dtype": "bfloat16",
    }

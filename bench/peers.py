"""The peers posenc is measured against, each written or loaded as people use it.

Each sinusoidal peer is a function ``(positions_or_length, dim) -> float32 table`` plus a float64
reference of the same formula, so its error is measured against what it means to compute.
"""

from __future__ import annotations

import importlib
import importlib.util
import math
import os
import sys
import types

import numpy as np
import torch

# --- sinusoidal tables ---------------------------------------------------------------------


def naive_torch(n: int, dim: int, start: int = 0) -> torch.Tensor:
    """The common tutorial code (float32 angles), interleaved."""
    pe = torch.zeros(n, dim)
    position = torch.arange(start, start + n, dtype=torch.float).unsqueeze(1)
    div_term = torch.exp(torch.arange(0, dim, 2).float() * (-math.log(10000.0) / dim))
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    return pe


def naive_numpy(n: int, dim: int, start: int = 0) -> np.ndarray:
    """The same in NumPy float32."""
    position = np.arange(start, start + n, dtype=np.float32)[:, None]
    div_term = np.exp(np.arange(0, dim, 2, dtype=np.float32) * np.float32(-math.log(10000.0) / dim))
    pe = np.empty((n, dim), np.float32)
    pe[:, 0::2] = np.sin(position * div_term)
    pe[:, 1::2] = np.cos(position * div_term)
    return pe


def reference_interleaved(positions: np.ndarray, dim: int) -> np.ndarray:
    """Float64 sin/cos of the paper's formula, interleaved."""
    w = 10000.0 ** (-np.arange(0, dim, 2, dtype=np.float64) / dim)
    angle = np.asarray(positions, dtype=np.float64)[:, None] * w
    out = np.empty((len(angle), dim))
    out[:, 0::2], out[:, 1::2] = np.sin(angle), np.cos(angle)
    return out


def positional_encodings_1d():
    """positional-encodings' PositionalEncoding1D (cache cleared, as for a new length)."""
    from positional_encodings.torch_encodings import PositionalEncoding1D

    def run(n: int, dim: int) -> torch.Tensor:
        module = PositionalEncoding1D(dim)
        return module(torch.zeros(1, n, dim))[0]

    return run


_TIMM = []


def timm_sincos():
    """timm.layers.pos_embed_sincos without ``import timm`` (which needs torchvision)."""
    if _TIMM:
        return _TIMM[0]
    spec = importlib.util.find_spec("timm")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("timm is not installed")
    root = next(iter(spec.submodule_search_locations))
    saved = {k: v for k, v in sys.modules.items() if k == "timm" or k.startswith("timm.")}
    try:
        for name, path in (("timm", root), ("timm.layers", os.path.join(root, "layers"))):
            shell = types.ModuleType(name)
            shell.__path__ = [path]
            sys.modules[name] = shell
        module = importlib.import_module("timm.layers.pos_embed_sincos")
    finally:  # leave sys.modules as it was: later imports of timm see the real package
        for k in [k for k in sys.modules if k == "timm" or k.startswith("timm.")]:
            del sys.modules[k]
        sys.modules.update(saved)
    _TIMM.append(module)
    return module


def timm_table():
    """timm's build_sincos2d_pos_embed on an (n, 1) grid: an (n, dim) table, float32 angles."""
    build = timm_sincos().build_sincos2d_pos_embed

    def run(n: int, dim: int) -> torch.Tensor:
        return build([n, 1], dim=dim)

    return run


def timm_reference(positions: np.ndarray, dim: int) -> np.ndarray:
    """Float64 version of timm's (n, 1)-grid layout: [sin y, sin x, cos y, cos x] blocks."""
    k = dim // 4
    bands = 1.0 / 10000.0 ** (np.arange(k, dtype=np.float64) / k)
    y = np.asarray(positions, dtype=np.float64)[:, None] * bands
    x = np.zeros_like(y)
    return np.concatenate([np.sin(y), np.sin(x), np.cos(y), np.cos(x)], axis=1)


def marian_table():
    """HF Marian's create_weight: exact (float64 NumPy), built in Python loops."""
    from transformers.models.marian.modeling_marian import MarianSinusoidalPositionalEmbedding

    def run(n: int, dim: int) -> torch.Tensor:
        return MarianSinusoidalPositionalEmbedding(n, dim).create_weight()

    return run


def marian_reference(positions: np.ndarray, dim: int) -> np.ndarray:
    w = 10000.0 ** (-np.arange(0, dim, 2, dtype=np.float64) / dim)
    angle = np.asarray(positions, dtype=np.float64)[:, None] * w
    return np.concatenate([np.sin(angle), np.cos(angle)], axis=1)


# --- RoPE ----------------------------------------------------------------------------------


def meta_rope(q: torch.Tensor, k: torch.Tensor, theta: float = 10000.0, start: int = 0):
    """Meta Llama: precompute_freqs_cis (float32 angles) + complex multiply, on (b, h, s, d)."""
    b, h, s, d = q.shape
    freqs = 1.0 / (theta ** (torch.arange(0, d, 2, device=q.device)[: d // 2].float() / d))
    t = torch.arange(start, start + s, device=q.device, dtype=torch.float32)
    freqs_cis = torch.polar(torch.ones(s, d // 2, device=q.device), torch.outer(t, freqs))
    qc = torch.view_as_complex(q.float().reshape(b, h, s, d // 2, 2))
    kc = torch.view_as_complex(k.float().reshape(b, h, s, d // 2, 2))
    return (
        torch.view_as_real(qc * freqs_cis).flatten(3).type_as(q),
        torch.view_as_real(kc * freqs_cis).flatten(3).type_as(k),
    )


def hf_rope():
    """HF Llama: LlamaRotaryEmbedding (cos/sin) + apply_rotary_pos_emb (rotate_half)."""
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb

    cache = {}

    def run(q: torch.Tensor, k: torch.Tensor, start: int = 0):
        b, h, s, d = q.shape
        key = (d, q.device)
        if key not in cache:
            config = LlamaConfig(
                hidden_size=d * h,
                num_attention_heads=h,
                num_key_value_heads=h,
                head_dim=d,
                max_position_embeddings=2**21,
                rope_parameters={"rope_theta": 10000.0, "rope_type": "default"},
            )
            cache[key] = LlamaRotaryEmbedding(config).to(q.device)
        ids = torch.arange(start, start + s, device=q.device)[None]
        cos, sin = cache[key](q, ids)
        return apply_rotary_pos_emb(q, k, cos, sin)

    return run


def rotary_embedding_torch():
    """lucidrains' rotary-embedding-torch (interleaved pairs)."""
    from rotary_embedding_torch import RotaryEmbedding

    cache = {}

    def run(q: torch.Tensor, k: torch.Tensor, start: int = 0):
        d = q.shape[-1]
        if d not in cache:
            cache[d] = RotaryEmbedding(dim=d, cache_if_possible=False)
        rot = cache[d].to(q.device)
        return rot.rotate_queries_or_keys(q, offset=start), rot.rotate_queries_or_keys(
            k, offset=start
        )

    return run


def rope_reference(
    x: np.ndarray, positions: np.ndarray, pairing: str, theta: float = 10000.0
) -> np.ndarray:
    """Float64 RoPE of float64 inputs."""
    d = x.shape[-1]
    w = theta ** (-np.arange(0, d, 2, dtype=np.float64) / d)
    angle = np.asarray(positions, dtype=np.float64)[:, None] * w
    cos, sin = np.cos(angle), np.sin(angle)
    x = np.asarray(x, dtype=np.float64)
    if pairing == "interleaved":
        a, b = x[..., 0::2], x[..., 1::2]
        return np.stack((a * cos - b * sin, a * sin + b * cos), axis=-1).reshape(x.shape)
    a, b = x[..., : d // 2], x[..., d // 2 :]
    return np.concatenate((a * cos - b * sin, a * sin + b * cos), axis=-1)

"""The same checkpoint in other engines: llama.cpp (GGUF), MLX (mlx-lm) and vLLM.

A transformers checkpoint carries its RoPE in two places: the config (base, scaling, rotary
width) and the q/k projection weights, whose row order fixes which features form a pair. An
engine that pairs differently from transformers must permute those rows when it loads the
weights, or the model runs with scrambled positions. This module holds, per model type, what
each engine does (a data table, :data:`ENGINE_ROWS`: the pairing its kernel uses and whether its
loader permutes q/k) and three functions that turn a config into the engine's settings:

* :func:`gguf_rope`: the GGUF metadata llama.cpp's converter writes (``{arch}.rope.freq_base``,
  ``{arch}.rope.dimension_count``, ``{arch}.rope.scaling.*``), the ``rope_freqs`` tensor of
  Llama-3 scaling, the kernel's rope type (NORM: adjacent pairs, NEOX: halves) and whether the
  converter permutes q/k;
* :func:`mlx_rope`: the rotary module mlx-lm builds (``nn.RoPE(dims, traditional, base, scale)``
  or one of its scaled variants);
* :func:`vllm_rope`: the arguments of vLLM's ``get_rope`` (``head_size``, ``max_position``,
  ``is_neox_style``, ``rope_parameters``).

The config is read by :func:`posenc.hf.describe` (its full-attention layer). Every row and every
mapping is checked against the engines' own code (llama.cpp's converter as vendored in
llama-cpp-python 0.3.36, gguf 0.19.0, MLX 0.32.4 with mlx-lm 0.32.2, vLLM 0.33.0), recorded in
``docs/assets/engines.json`` by ``tools/engines_record.py`` and held to it by the test suite.

What was *run* is another record: ``docs/assets/engines_runs.json`` (``make engines-check``,
``tools/engines_check``), tiny checkpoints of each architecture family run whole in llama.cpp
and MLX, their logits compared with transformers'. :func:`explain_engines` states what that
record observed for the config's model type and labels the rest "read from the engine's
source, not run".
"""

from __future__ import annotations

import functools
import json
import math
import numbers
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._array import _describe
from .rope_scaling import MAX_LENGTH, rope_frequencies

__all__ = ["engine_conventions", "gguf_rope", "mlx_rope", "vllm_rope", "explain_engines"]


@dataclass(frozen=True)
class EngineRow:
    """What llama.cpp, mlx-lm and vLLM do with one transformers model type.

    ``gguf_arch``: the GGUF architecture name. ``gguf_rope``: the llama.cpp kernel's rope type,
    ``"norm"`` (adjacent pairs ``(2i, 2i+1)``) or ``"neox"`` (``(i, i + n_rot/2)``).
    ``gguf_permute``: the converter permutes q/k rows from transformers' halves to adjacent
    pairs. ``mlx_traditional``: mlx-lm's ``nn.RoPE(traditional=...)`` (True: adjacent pairs).
    ``vllm_neox``: ``is_neox_style`` in vLLM's model file (None: vLLM runs the model through its
    transformers backend, transformers' own attention). ``vllm_permute``: vLLM's loader
    permutes q/k rows (halves <-> adjacent pairs).
    """

    gguf_arch: str
    gguf_rope: str
    gguf_permute: bool
    mlx_traditional: bool
    vllm_neox: bool | None
    vllm_permute: bool = False


class _Unmapped(ValueError):
    """A config the engines' verified mapping does not cover (a model type without a row, a
    scaling the converter does not carry over): :meth:`posenc.hf.Scheme.explain` leaves its
    engine section out, where a bad key is refused."""


# One row per transformers model type (the ``model_type`` of config.json). Read from the engines'
# code; tools/engines_record.py checks every field against that code and records it.
ENGINE_ROWS: Mapping[str, EngineRow] = {
    "llama": EngineRow("llama", "norm", True, False, True),
    "mistral": EngineRow("llama", "norm", True, False, True),
    "mixtral": EngineRow("llama", "norm", True, False, True),
    "qwen2": EngineRow("qwen2", "neox", False, False, True),
    "qwen3": EngineRow("qwen3", "neox", False, False, True),
    "gemma": EngineRow("gemma", "neox", False, False, True),
    "gemma2": EngineRow("gemma2", "neox", False, False, True),
    "phi3": EngineRow("phi3", "neox", False, False, True),
    "gpt_neox": EngineRow("gptneox", "neox", False, False, None),
    "stablelm": EngineRow("stablelm", "neox", False, False, True),
    "olmo2": EngineRow("olmo2", "neox", False, False, None),
    "starcoder2": EngineRow("starcoder2", "neox", False, False, None),
    "cohere": EngineRow("command-r", "norm", False, True, False),
    "cohere2": EngineRow("cohere2", "norm", False, True, False),
    "glm4": EngineRow("glm4", "norm", False, True, False),
}

# vLLM's model files fall back to this when the config has no max_position_embeddings
# (llama.py: ``getattr(config, "max_position_embeddings", 8192)``).
VLLM_DEFAULT_MAX_POSITION = 8192


def _scheme(config: Any) -> tuple[Any, Any, EngineRow]:
    """``(scheme, full-attention layer, row)`` of a config (or of a :class:`posenc.hf.Scheme`
    already read from one), or a refusal naming the model type."""
    from .hf import Scheme, describe  # posenc.hf imports nothing heavy; local to avoid a cycle

    scheme = config if isinstance(config, Scheme) else describe(config)
    row = ENGINE_ROWS.get(scheme.model_type)
    if row is None:
        raise _Unmapped(
            f"config['model_type'] = {scheme.model_type!r} has no verified engine mapping; "
            f"known model types: {sorted(ENGINE_ROWS)}"
        )
    rope_layers = [layer for layer in scheme.layers if layer.kind == "rope"]
    if not rope_layers:
        raise _Unmapped(f"config of model type {scheme.model_type!r} has no RoPE layer")
    full = [layer for layer in rope_layers if layer.layer_type == "full_attention"]
    return scheme, (full or rope_layers)[0], row


def engine_conventions(model_type: str) -> EngineRow:
    """The engines' conventions for one transformers model type (a row of :data:`ENGINE_ROWS`).

    Experimental.

    Parameters
    ----------
    model_type : str
        ``config.json``'s ``model_type`` (``"llama"``, ``"qwen2"``, ``"cohere"``, ...).

    Returns
    -------
    EngineRow

    Raises
    ------
    TypeError
        ``model_type`` not a string.
    ValueError
        A model type without a verified row.

    Examples
    --------
    >>> import posenc
    >>> row = posenc.engine_conventions("llama")
    >>> row.gguf_arch, row.gguf_rope, row.gguf_permute, row.mlx_traditional, row.vllm_neox
    ('llama', 'norm', True, False, True)
    """
    if not isinstance(model_type, str):
        raise TypeError(f"model_type must be a str, got {_describe(model_type)}")
    row = ENGINE_ROWS.get(model_type)
    if row is None:
        raise ValueError(
            f"model_type {model_type!r} has no verified engine mapping; known: "
            f"{sorted(ENGINE_ROWS)}"
        )
    return row


def _scaling(layer: Any) -> dict[str, Any]:
    return dict(layer.scaling) if layer.scaling else {}


def gguf_rope(config: Any) -> dict[str, Any]:
    """The RoPE part of the GGUF file llama.cpp's converter writes for a transformers config.

    Experimental. Mirrors ``convert_hf_to_gguf.py`` (llama.cpp as vendored in
    llama-cpp-python 0.3.36; key names as in the ``gguf`` package 0.19.0): ``rope.freq_base``
    is the base, ``rope.dimension_count`` the rotated width, a linear or YaRN scaling becomes
    ``rope.scaling.*`` keys, LongRoPE (Phi-3) ``rope.scaling.original_context_length`` and
    ``rope.scaling.attn_factor`` with its factor lists as two tensors, Llama-3 scaling no key
    but a ``rope_freqs`` tensor of per-pair divisors, and dynamic NTK nothing at all.

    Parameters
    ----------
    config : dict or transformers config object
        What :func:`posenc.hf.describe` reads.

    Returns
    -------
    dict
        ``"arch"`` (GGUF architecture), ``"rope_type"`` (``"norm"`` or ``"neox"``: the pairing
        of llama.cpp's kernel), ``"permute_qk"`` (the converter permutes the q/k rows),
        ``"metadata"`` (key -> value, keys spelled ``"{arch}.rope..."`` as GGUF stores them; a
        key the converter leaves out holds the value llama.cpp's loader then takes),
        ``"tensors"`` (name -> list of floats: ``rope_freqs`` for Llama-3 scaling,
        ``rope_factors_long`` / ``rope_factors_short`` for LongRoPE).

    Raises
    ------
    TypeError, ValueError
        As :func:`posenc.hf.describe`; a model type without a verified row; a scaling the
        converter does not carry over (``dynamic`` is accepted and written as nothing); for
        Llama-3 scaling without a nested original length, a top-level
        ``original_max_position_embeddings`` that is not a positive integer.

    Notes
    -----
    For Llama-3 scaling the converter reads the original length from the scaling dict, as
    transformers does; the config's top-level ``original_max_position_embeddings`` fills it
    only where the dict has none, and 8192 where neither has it (llama.cpp vendored in
    llama-cpp-python 0.3.36: conversion/llama.py, conversion/base.py).

    Examples
    --------
    >>> import posenc
    >>> cfg = {"model_type": "qwen2", "hidden_size": 896, "num_attention_heads": 14,
    ...        "num_hidden_layers": 24, "rope_theta": 1000000.0,
    ...        "max_position_embeddings": 32768}
    >>> g = posenc.gguf_rope(cfg)
    >>> g["arch"], g["rope_type"], g["permute_qk"]
    ('qwen2', 'neox', False)
    >>> g["metadata"]
    {'qwen2.context_length': 32768, 'qwen2.rope.freq_base': 1000000.0, 'qwen2.rope.dimension_count': 64}
    """
    scheme, layer, row = _scheme(config)
    arch = row.gguf_arch
    meta: dict[str, Any] = {}
    if scheme.max_position_embeddings is not None:
        meta[f"{arch}.context_length"] = int(scheme.max_position_embeddings)
    meta[f"{arch}.rope.freq_base"] = float(layer.base)
    meta[f"{arch}.rope.dimension_count"] = int(layer.rotary_dim)
    kind = layer.rope_type or "default"
    sc = _scaling(layer)
    tensors: dict[str, list[float]] = {}
    if kind == "linear":
        meta[f"{arch}.rope.scaling.type"] = "linear"
        meta[f"{arch}.rope.scaling.factor"] = float(sc["factor"])
    elif kind == "yarn":
        meta[f"{arch}.rope.scaling.type"] = "yarn"
        meta[f"{arch}.rope.scaling.factor"] = float(sc["factor"])
        meta[f"{arch}.rope.scaling.original_context_length"] = int(
            sc["original_max_position_embeddings"]
        )
        for key, name in (
            ("extrapolation_factor", "yarn_ext_factor"),
            ("attention_factor", "yarn_attn_factor"),
            ("beta_fast", "yarn_beta_fast"),
            ("beta_slow", "yarn_beta_slow"),
        ):
            if key in sc:
                meta[f"{arch}.rope.scaling.{name}"] = float(sc[key])
    elif kind == "longrope":  # Phi-3's converter: the factor lists become tensors
        orig = int(sc["original_max_position_embeddings"])
        meta[f"{arch}.rope.scaling.original_context_length"] = orig
        meta[f"{arch}.rope.scaling.attn_factor"] = float(layer.attention_factor)
        tensors["rope_factors_long"] = [float(v) for v in sc["long_factor"]]
        tensors["rope_factors_short"] = [float(v) for v in sc["short_factor"]]
    elif kind == "llama3":
        # the converter (conversion/llama.py, generate_extra_tensors) reads the original length
        # from the scaling dict; the config's top-level key fills it only where the dict has
        # none (conversion/base.py), and 8192 where neither has it
        # the top-level key is checked even where the dict's wins (the converter reads both)
        top = _length(scheme, "original_max_position_embeddings", "llama.cpp's converter")
        old_len = sc.get("original_max_position_embeddings")
        if old_len is None:
            old_len = top
        llama3 = {**sc, "original_max_position_embeddings": 8192 if old_len is None else old_len}
        plain, _ = rope_frequencies(int(layer.rotary_dim), base=float(layer.base))
        scaled, _ = rope_frequencies(int(layer.rotary_dim), base=float(layer.base), scaling=llama3)
        tensors["rope_freqs"] = (plain / scaled).tolist()
    elif kind not in ("default", "dynamic"):
        raise _Unmapped(
            f"rope_type {kind!r} has no verified GGUF mapping (known: default, linear, yarn, "
            "longrope, llama3, dynamic)"
        )
    return {
        "arch": arch,
        "rope_type": row.gguf_rope,
        "permute_qk": row.gguf_permute,
        "metadata": meta,
        "tensors": tensors,
    }


MLX_MODULES = {
    "default": "nn.RoPE",
    "linear": "nn.RoPE",
    "llama3": "Llama3RoPE",
    "yarn": "YarnRoPE",
    "longrope": "SuScaledRoPE",
    "dynamic": "DynamicNTKScalingRoPE",
}


# mlx-lm 0.32.2 reads transformers 5's rope_parameters for qwen3 only (models/qwen3.py:33-38);
# every other module's ModelArgs takes rope_theta / rope_scaling at the top level of config.json
# and BaseModelArgs.from_dict drops the keys it does not name. Where a config holds its base
# only under rope_parameters, mlx-lm uses its ModelArgs default (None: rope_theta is a required
# argument, the config does not load) and no scaling. Run on tiny checkpoints (Qwen2 with base
# 1e7 under rope_parameters: logits differ from position 1; the same at the top level: same).
MLX_IGNORED_ROPE_PARAMETERS_BASE: dict[str, float | None] = {
    "cohere": 8000000.0,
    "cohere2": 50000.0,
    "gemma": 10000.0,
    "gemma2": 10000.0,
    "glm4": None,
    "gpt_neox": None,  # rotary_emb_base and rotary_pct are required
    "llama": 10000.0,
    "mistral": 10000.0,  # mlx-lm maps mistral to its llama module
    "mixtral": 1000000.0,
    "olmo2": 10000.0,
    "phi3": 10000.0,
    "qwen2": 1000000.0,
    "stablelm": None,
    "starcoder2": 100000.0,
}


def _nested_only(scheme: Any) -> bool:
    """The config gives its RoPE base only under ``rope_parameters`` (transformers 5's form)."""
    bases = [v for k, v in scheme.sources.items() if k == "base" or k.endswith(": base")]
    return bool(bases) and all(str(v).startswith("config['rope_parameters']") for v in bases)


def mlx_rope(config: Any) -> dict[str, Any]:
    """The rotary module mlx-lm builds for a transformers config (``initialize_rope``).

    Experimental. ``nn.RoPE(dims, traditional=..., base=..., scale=...)`` for no scaling and for
    linear scaling (``scale = 1 / factor``), and mlx-lm's ``Llama3RoPE``, ``YarnRoPE``,
    ``SuScaledRoPE`` (LongRoPE) and ``DynamicNTKScalingRoPE`` for the others, fed the config's
    scaling dict. ``traditional=True`` pairs adjacent features (mlx-lm's Cohere, GLM-4 files);
    ``False`` pairs halves, as transformers does, so the weights load as they are.

    mlx-lm 0.32.2 reads transformers 5's ``rope_parameters`` for Qwen3 only: for the other
    model types a config that holds its base only there (as transformers 5 writes it) gets
    mlx-lm's default base and no scaling (``"ignored"`` says so), or does not load where the
    base is a required argument (GLM-4, GPT-NeoX, StableLM: ``"module"`` None, ``"error"``).

    Parameters
    ----------
    config : dict or transformers config object

    Returns
    -------
    dict
        ``"module"``, ``"dims"`` (the rotated width), ``"traditional"``, ``"base"``, ``"scale"``
        (``nn.RoPE`` only, else None), ``"scaling"`` (the dict the scaled modules read, or
        None), ``"ignored"`` (``"rope_parameters"`` where mlx-lm does not read it, else None),
        ``"error"`` (why mlx-lm cannot load the config, else None).

    Raises
    ------
    TypeError, ValueError
        As :func:`posenc.hf.describe`; a model type without a verified row; a scaling mlx-lm
        has no module for.

    Examples
    --------
    >>> import posenc
    >>> cfg = {"model_type": "cohere", "hidden_size": 8192, "num_attention_heads": 64,
    ...        "num_hidden_layers": 40, "rope_theta": 8000000.0}
    >>> m = posenc.mlx_rope(cfg)
    >>> m["module"], m["dims"], m["traditional"], m["base"], m["scale"]
    ('nn.RoPE', 128, True, 8000000.0, 1.0)
    """
    scheme, layer, row = _scheme(config)
    kind = layer.rope_type or "default"
    out = {"dims": int(layer.rotary_dim), "traditional": row.mlx_traditional}
    if _nested_only(scheme) and scheme.model_type in MLX_IGNORED_ROPE_PARAMETERS_BASE:
        base = MLX_IGNORED_ROPE_PARAMETERS_BASE[scheme.model_type]
        if base is None:
            error = (
                f"mlx-lm's {scheme.model_type} ModelArgs needs the base at the top level of "
                "config.json; this config has it only under rope_parameters"
            )
            return {"module": None, **out, "base": None, "scale": None, "scaling": None,
                    "ignored": "rope_parameters", "error": error}  # fmt: skip
        return {"module": "nn.RoPE", **out, "base": base, "scale": 1.0, "scaling": None,
                "ignored": "rope_parameters", "error": None}  # fmt: skip
    if kind not in MLX_MODULES:
        raise _Unmapped(f"rope_type {kind!r} has no mlx-lm module (known: {sorted(MLX_MODULES)})")
    sc = _scaling(layer)
    plain = kind in ("default", "linear")
    return {
        "module": MLX_MODULES[kind],
        **out,
        "base": float(layer.base),
        "scale": (1.0 / float(sc["factor"]) if kind == "linear" else 1.0) if plain else None,
        "scaling": None if plain else sc,
        "ignored": None,
        "error": None,
    }


def vllm_rope(config: Any) -> dict[str, Any]:
    """The arguments vLLM's model files pass to ``get_rope`` for a transformers config.

    Experimental. ``get_rope(head_size, max_position, is_neox_style, rope_parameters)`` (vLLM
    0.33): ``rope_parameters`` is transformers 5's dict (``rope_theta``, ``rope_type`` and the
    scaling keys; ``partial_rotary_factor`` where only part of the head rotates);
    ``is_neox_style`` is fixed per model file (True: halves, as transformers pairs them; False:
    adjacent pairs, for the models whose transformers code pairs that way); ``max_position`` is
    ``max_position_embeddings`` (8192 when the config has none).

    Parameters
    ----------
    config : dict or transformers config object

    Returns
    -------
    dict
        ``"backend"`` (``"native"``, or ``"transformers"`` where vLLM runs transformers' own
        modeling code: GPT-NeoX, OLMo-2, StarCoder2; then ``is_neox_style`` is None),
        ``"head_size"``, ``"rotary_dim"``, ``"max_position"``, ``"is_neox_style"``,
        ``"rope_parameters"``, ``"permute_qk"`` (vLLM's loader permutes q/k rows),
        ``"max_model_len"`` (the length vLLM serves by default: the smallest of the config's
        length keys, :data:`VLLM_LENGTH_KEYS`, or ``model_max_length`` where set, with the
        config class's defaults as vLLM reads them through transformers; times the factor of
        a linear or dynamic scaling; for LongRoPE the original length).

    Raises
    ------
    TypeError, ValueError
        As :func:`posenc.hf.describe`; a model type without a verified row; a length key
        (``seq_length``, ``model_max_length``, ...) that is not a positive integer (a bool, a
        string, inf, NaN, -5, 2048.5), named; a scaling factor that takes ``max_model_len``
        past ``2**53``.

    Examples
    --------
    >>> import posenc
    >>> cfg = {"model_type": "stablelm", "hidden_size": 2560, "num_attention_heads": 32,
    ...        "num_hidden_layers": 32, "partial_rotary_factor": 0.25,
    ...        "rope_theta": 10000.0, "max_position_embeddings": 4096}
    >>> v = posenc.vllm_rope(cfg)
    >>> v["head_size"], v["rotary_dim"], v["is_neox_style"], v["max_model_len"]
    (80, 20, True, 4096)
    >>> v["rope_parameters"]
    {'rope_theta': 10000.0, 'rope_type': 'default', 'partial_rotary_factor': 0.25}
    """
    scheme, layer, row = _scheme(config)
    kind = layer.rope_type or "default"
    params: dict[str, Any] = {"rope_theta": float(layer.base), "rope_type": kind}
    max_len = _vllm_max_model_len(scheme, layer, kind)
    for key, value in _scaling(layer).items():
        if key not in ("rope_type", "type"):
            params[key] = value
    head, rot = int(layer.head_dim), int(layer.rotary_dim)
    if rot != head:
        params["partial_rotary_factor"] = rot / head
    max_pos = scheme.max_position_embeddings
    return {
        "backend": "native" if row.vllm_neox is not None else "transformers",
        "head_size": head,
        "rotary_dim": rot,
        "max_position": int(max_pos) if max_pos is not None else VLLM_DEFAULT_MAX_POSITION,
        "is_neox_style": row.vllm_neox,
        "rope_parameters": params,
        "permute_qk": row.vllm_permute,
        "max_model_len": max_len,
    }


# vLLM 0.33 (transformers_utils/model_arch_config_convertor.py): the smallest of these keys is
# the model's length; model_max_length, where present, overrides it.
VLLM_LENGTH_KEYS = (
    "max_position_embeddings",
    "n_positions",
    "max_seq_len",
    "seq_length",
    "model_max_length",
    "max_target_positions",
    "max_sequence_length",
    "max_seq_length",
    "seq_len",
)
# ... and these scalings leave it alone (config/model.py, _get_and_verify_max_len); the others
# multiply it by their factor.
VLLM_UNSCALED = ("su", "longrope", "llama3", "yarn", "deepseek_yarn", "deepseek_llama_scaling")


def _length(scheme: Any, key: str, reader: str) -> int | None:
    """The config's length key ``key`` (from :attr:`posenc.hf.Scheme.length_keys`) as ``reader``
    reads it: None where the config (and its class) has none, else a positive integer (a whole
    float is read as its int), refused by name otherwise."""
    value = scheme.length_keys.get(key)
    if value is None:
        return None
    what = f"config['{key}'] must be a positive integer ({reader} reads it as a length)"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{what}, got {_describe(value)}")
    try:
        number = float(value)
    except OverflowError:  # an int past float64 (10**400)
        raise ValueError(f"{what}, got an integer past float64's range") from None
    if not (math.isfinite(number) and number == int(number) and 1 <= number <= MAX_LENGTH):
        raise ValueError(f"{what} of at most 2**53, got {value!r}")
    return int(number)


def _vllm_max_model_len(scheme: Any, layer: Any, kind: str) -> int:
    """``max_model_len`` as vLLM 0.33 derives it when the user passes none, from the length
    keys the scheme kept (its config class's defaults included, as vLLM reads the config
    through transformers)."""
    found = [n for n in (_length(scheme, k, "vLLM") for k in VLLM_LENGTH_KEYS) if n is not None]
    length = min(found) if found else 2048  # vLLM's fallback, with a warning
    override = _length(scheme, "model_max_length", "vLLM")
    if override is not None:
        length = override
    sc = _scaling(layer)
    if kind == "longrope":  # default: the original length (short factors everywhere)
        orig = _length(scheme, "original_max_position_embeddings", "vLLM")
        if orig is None:  # a config that keeps it in the scaling dict only
            orig = sc.get("original_max_position_embeddings")
        return int(orig if orig is not None else length)
    if kind in VLLM_UNSCALED or "gemma3" in scheme.model_type:
        return length
    factor = float(sc.get("factor", 1.0))
    scaled = length * factor
    if not scaled <= MAX_LENGTH:  # inf for 1e308
        where = scheme.sources.get("scaling") or "the scaling"
        raise ValueError(
            f"{where}['factor'] = {factor:g} times the length {length} gives vLLM a "
            f"max_model_len of {scaled:g}, past 2**53 (float64's exact integers)"
        )
    return int(scaled)


# The run matrix: shipped next to this module when the wheel carries it, else the source tree's.
RUNS_FILES = (
    Path(__file__).with_name("engines_runs.json"),
    Path(__file__).resolve().parents[2] / "docs" / "assets" / "engines_runs.json",
)
RUN_ENGINES = {"llama.cpp": "llama.cpp", "mlx": "MLX"}  # record key -> the name shown


@functools.lru_cache(maxsize=1)
def _load_runs() -> dict[str, Any] | None:
    """The run matrix (``engines_runs.json``), or None where neither file exists."""
    for path in RUNS_FILES:
        if path.is_file():
            data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
            return data
    return None


def _cause_ref(cause: Mapping[str, Any] | None) -> str:
    if not cause:
        return ""
    return f"{cause['file']}:{cause['line']}" if cause.get("line") else str(cause["file"])


def _cell_text(cell: Mapping[str, Any], tokens: int, t: Mapping[str, str]) -> str:
    """One cell of the record in words: same / differs from N (cause) / cannot load."""
    text = str(cell["cell"])
    if text == "same":
        return t["same"].format(last=tokens - 1)
    if text.startswith("differs from position"):
        if t is _TEXT["en"]:
            return text
        where = _cause_ref(cell.get("cause"))
        return t["differs"].format(n=cell["first"], where=f"（{where}）" if where else "")
    if t is _TEXT["en"]:
        return text
    # the engine's own message is English: the Chinese text names the line where there is one
    where = _cause_ref(cell.get("cause"))
    return t["cannot"] + (f"（{where}）" if where else "")


def _run_lines(model_type: str, t: Mapping[str, str]) -> list[str]:
    """What the run matrix observed for ``model_type``: one wrapped item per family and engine."""
    runs = _load_runs()
    if runs is None:
        return []
    rows = [f for f in runs.get("families", []) if f.get("model_type") == model_type]
    items = []
    for engine, shown in RUN_ENGINES.items():
        for fam in rows:
            cell = fam.get("engines", {}).get(engine)
            if cell is None:
                continue
            text = t["item"].format(
                engine=shown, family=fam["name"], cell=_cell_text(cell, int(fam["tokens"]), t)
            )
            items += _wrap(text, "    ")
    if not items:
        return []
    tol = runs["tolerance"]["relative"]
    return [*_wrap(t["ran"].format(model_type=model_type, tol=tol), "  "), *items]


def _wrap(text: str, indent: str) -> list[str]:
    """``text`` in lines of at most 80 columns, continued four columns further in."""
    return textwrap.wrap(
        text, width=80, initial_indent=indent, subsequent_indent=indent + "    ",
        break_on_hyphens=False,
    )  # fmt: skip


_TABLE: dict[str, dict[str, Any]] = {
    "en": {
        "head": ["family", "model type", "positions", "what it sets", "llama.cpp", "MLX (mlx-lm)"],
        "same": "same (max \\|diff\\| {diff:.1g})",
        "differs": "**differs from position {n}**: {text} (`{where}`)",
        "differs_bare": "**differs from position {n}**: cause not traced",
        "cannot": "cannot load: `{message}`",
        "not_run": "not run",
        "foot": "Tolerance: {tol:g} x the largest |transformers logit| of the run, float32; "
        "recorded {date} ({wall:g} s for the whole run). Versions: {versions}.",
    },
    "zh": {
        "head": ["检查点", "模型类型", "位置", "llama.cpp", "MLX（mlx-lm）"],
        "same": "相同（最大 \\|差\\| {diff:.1g}）",
        "differs": "**从位置 {n} 起不同**（`{where}`）",
        "differs_bare": "**从位置 {n} 起不同**（原因未查明）",
        "cannot": "无法加载：`{message}`",
        "cannot_at": "无法加载（`{where}`）",
        "not_run": "未运行",
        "foot": "容差：该次运行中 transformers 最大 |logit| 的 {tol:g} 倍，float32；"
        "记录于 {date}（整次运行 {wall:g} 秒）。版本：{versions}。",
    },
}


def _runs_cell(cell: Mapping[str, Any] | None, t: Mapping[str, Any]) -> str:
    if cell is None:
        return t["not_run"]
    text = str(cell["cell"])
    if text == "same":
        bands = [v for v in (cell.get("bands") or {}).values() if v is not None]
        return t["same"].format(diff=max(bands, default=0.0))
    if cell.get("first") is not None:
        cause = cell.get("cause")
        if not cause:
            return t["differs_bare"].format(n=cell["first"])
        return t["differs"].format(n=cell["first"], text=cause["text"], where=_cause_ref(cause))
    message = text.removeprefix("cannot load: ").replace("`", "'").replace("|", "/")
    if t is _TABLE["zh"]:  # the message and its cause are English: the line, or the message
        where = _cause_ref(cell.get("cause"))
        return t["cannot_at"].format(where=where) if where else t["cannot"].format(message=message)
    return t["cannot"].format(message=message)


def _runs_markdown(lang: str = "en") -> str:
    """The run matrix (engines_runs.json) as a Markdown table and a line of versions, for the
    engines page: one row per family, a cell per engine (what the record says, nothing else)."""
    from ._array import check_choice

    t = _TABLE[check_choice(lang, name="lang", choices=("en", "zh"))]
    runs = _load_runs()
    if runs is None:
        raise FileNotFoundError(f"no run record among {[str(p) for p in RUNS_FILES]}")
    out = ["| " + " | ".join(t["head"]) + " |", "|" + " --- |" * len(t["head"])]
    for fam in runs["families"]:
        cells = [
            f"`{fam['name']}`",
            f"`{fam['model_type']}`",
            f"0..{fam['tokens'] - 1} ({fam['trained']})",
            # the record describes each family in English: the zh page names it only
            *([str(fam["what"]).replace("|", "/")] if lang == "en" else []),
            *(_runs_cell(fam["engines"].get(e), t) for e in RUN_ENGINES),
        ]
        out.append("| " + " | ".join(cells) + " |")
    versions = ", ".join(f"{k} {v}" for k, v in runs["versions"].items())
    foot = t["foot"].format(
        tol=runs["tolerance"]["relative"],
        date=runs["recorded"],
        wall=runs.get("wall_s", 0),
        versions=versions,
    )
    return "\n".join(out) + "\n\n" + foot


_TEXT = {
    "en": {
        "ran": "run (tiny {model_type} checkpoints, float32; logits against transformers',"
        " tolerance {tol:g} x the largest |logit|):",
        "item": "{engine}, {family}: {cell}",
        "same": "same logits as transformers at positions 0..{last}",
        "differs": "differs from position {n}{where}",
        "cannot": "cannot load",
        "read": "  read from the engine's source, not run:",
        "title": "In llama.cpp / MLX / vLLM:",
        "gguf": "  llama.cpp: GGUF arch {arch!r}, rope type {kind}",
        "perm": "    the converter permutes the q/k rows per head (halves -> adjacent pairs)",
        "noperm": "    q/k rows are kept as they are",
        "tensors": "    tensors: {names}",
        "mlx": "  MLX (mlx-lm): {module}(dims={dims}, traditional={trad}, base={base}{scale})",
        "mlx_cannot": "  MLX (mlx-lm): cannot load this config.json",
        "mlx_ignored": "mlx-lm 0.32.2 does not read rope_parameters for this model type (it"
        " reads rope_theta and rope_scaling at the top level of config.json): the base and"
        " the scaling given there are lost",
        "vllm": "  vLLM: get_rope(head_size={head}, max_position={maxpos}, is_neox_style={neox})",
        "vllm_tf": "  vLLM: runs transformers' own modeling code (its transformers backend)",
        "mml": "    max_model_len = {mml} (vLLM's default)",
        "values": "{n} values",
    },
    "zh": {
        "ran": "实际运行（{model_type} 小型检查点，float32，与 transformers 比较 logits，"
        "容差为最大 |logit| 的 {tol:g} 倍）：",
        "item": "{engine}，{family}：{cell}",
        "same": "在位置 0..{last} 上与 transformers 的 logits 相同",
        "differs": "从位置 {n} 起与 transformers 的 logits 不同{where}",
        "cannot": "无法加载",
        "read": "  以下读自引擎的源码，未实际运行：",
        "title": "在 llama.cpp / MLX / vLLM 中：",
        "gguf": "  llama.cpp：GGUF 架构 {arch!r}，旋转类型 {kind}",
        "perm": "    转换脚本逐头重排 q/k 的行（对半配对 -> 交错配对）",
        "noperm": "    q/k 的行保持原样",
        "tensors": "    张量：{names}",
        "mlx": "  MLX（mlx-lm）：{module}(dims={dims}, traditional={trad}, base={base}{scale})",
        "mlx_cannot": "  MLX（mlx-lm）：无法加载这个 config.json",
        "mlx_ignored": "mlx-lm 0.32.2 对这种模型类型不读取 rope_parameters（它只读取 config.json"
        " 顶层的 rope_theta 和 rope_scaling）：其中给出的底数和缩放都会丢失",
        "vllm": "  vLLM：get_rope(head_size={head}, max_position={maxpos}, is_neox_style={neox})",
        "vllm_tf": "  vLLM：直接运行 transformers 自己的建模代码（transformers 后端）",
        "mml": "    max_model_len = {mml}（vLLM 的默认值）",
        "values": "{n} 个值",
    },
}


def _value(value: Any, t: Mapping[str, str]) -> str:
    """A value of a line: floats in short form, a list longer than four by its ends."""
    if isinstance(value, float):
        return repr(value) if len(repr(value)) <= 12 else f"{value:.6g}"
    if isinstance(value, list) and len(value) > 4:
        ends = f"[{_value(value[0], t)}, ..., {_value(value[-1], t)}]"
        return f"{ends} ({t['values'].format(n=len(value))})"
    return repr(value)


def explain_engines(config: Any, lang: str = "en") -> str:
    """A short text: what llama.cpp, MLX and vLLM do with this checkpoint's positions.

    Experimental. A title line; then what the run matrix (``engines_runs.json``,
    ``make engines-check``) observed on tiny checkpoints of the config's model type, one item
    per family and engine: "same logits as transformers at positions 0..N", "differs from
    position N" with the engine's file:line, or "cannot load" with its message; then, under
    "read from the engine's source, not run", each engine with its settings on indented lines,
    from :func:`gguf_rope`, :func:`mlx_rope` and :func:`vllm_rope`. In English or Chinese. It
    is also the last section of :meth:`posenc.hf.Scheme.explain` for the model types of
    :data:`ENGINE_ROWS`.

    Parameters
    ----------
    config : dict, transformers config object or posenc.hf.Scheme
    lang : {"en", "zh"}, default "en"

    Returns
    -------
    str
        The title line; the run items (none where the record has none for this model type, or
        where no record is found); the label; llama.cpp's rope type, q/k rows, GGUF keys and
        tensors; mlx-lm's rotary module (and what it does not read); vLLM's ``get_rope`` call,
        its ``rope_parameters`` and the default ``max_model_len``.

    Raises
    ------
    TypeError, ValueError
        As :func:`gguf_rope`; ``lang`` not ``"en"`` or ``"zh"``.

    Examples
    --------
    Mistral 7B v0.3 (no Mistral checkpoint in the run matrix: every line is read from source):

    >>> import posenc
    >>> cfg = {"model_type": "mistral", "hidden_size": 4096, "num_attention_heads": 32,
    ...        "num_key_value_heads": 8, "num_hidden_layers": 32, "rope_theta": 1000000.0,
    ...        "max_position_embeddings": 32768}
    >>> print(posenc.explain_engines(cfg))
    In llama.cpp / MLX / vLLM:
      read from the engine's source, not run:
      llama.cpp: GGUF arch 'llama', rope type NORM
        the converter permutes the q/k rows per head (halves -> adjacent pairs)
        llama.context_length = 32768
        llama.rope.freq_base = 1000000.0
        llama.rope.dimension_count = 128
      MLX (mlx-lm): nn.RoPE(dims=128, traditional=False, base=1000000.0)
      vLLM: get_rope(head_size=128, max_position=32768, is_neox_style=True)
        rope_parameters['rope_theta'] = 1000000.0
        rope_parameters['rope_type'] = 'default'
        max_model_len = 32768 (vLLM's default)
    """
    from ._array import check_choice

    t = _TEXT[check_choice(lang, name="lang", choices=("en", "zh"))]
    g, m, v = gguf_rope(config), mlx_rope(config), vllm_rope(config)
    ran = _run_lines(str(_scheme(config)[0].model_type), t)
    lines = [
        t["title"],
        *ran,
        t["read"],
        t["gguf"].format(arch=g["arch"], kind=g["rope_type"].upper()),
        t["perm"] if g["permute_qk"] else t["noperm"],
    ]
    lines += [f"    {key} = {_value(val, t)}" for key, val in g["metadata"].items()]
    if g["tensors"]:
        lines.append(t["tensors"].format(names=", ".join(g["tensors"])))
    scale = f", scale={_value(m['scale'], t)}" if m["scale"] not in (None, 1.0) else ""
    if m["error"] is not None:
        lines.append(t["mlx_cannot"])
    else:
        lines.append(
            t["mlx"].format(
                module=m["module"],
                dims=m["dims"],
                trad=m["traditional"],
                base=_value(m["base"], t),
                scale=scale,
            )
        )
    if m["ignored"] is not None:
        lines += _wrap(t["mlx_ignored"], "    ")
    if v["backend"] == "transformers":
        lines.append(t["vllm_tf"])
    else:
        lines.append(
            t["vllm"].format(head=v["head_size"], maxpos=v["max_position"], neox=v["is_neox_style"])
        )
        lines += [
            f"    rope_parameters[{key!r}] = {_value(val, t)}"
            for key, val in v["rope_parameters"].items()
        ]
    lines.append(t["mml"].format(mml=v["max_model_len"]))
    return "\n".join(lines)

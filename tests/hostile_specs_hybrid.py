"""Hostile-input rows for posenc.hybrid (Forgetting Transformer, stick-breaking, PaTH, the hybrid
table) and posenc.engines (llama.cpp / MLX / vLLM mappings); collected by tests/test_hostile.py."""

from __future__ import annotations

import math

import numpy as np
import torch

import posenc
import posenc.hf
from hostile_values import (
    Case,
    Either,
    Same,
    Spec,
    Works,
    bad,
    bad_type,
    bad_value,
    is_empty,
    lazy,
)

G = np.log([0.5, 0.9, 0.25, 0.7])  # log forget gates
Z = np.arange(16.0).reshape(4, 4) / 8 - 1
R = np.random.default_rng(0)
Q, K, W = R.normal(size=(3, 4, 3))
B = np.array([0.5, 1.0, 1.5, 2.0])
QWEN = {"model_type": "qwen2", "hidden_size": 64, "num_attention_heads": 4,
        "num_hidden_layers": 2, "rope_theta": 1e6, "max_position_embeddings": 4096}  # fmt: skip


def _array_cases(arg, ref, *, min_ndim):
    """A real array: views and other real dtypes work; NaN, bool, complex, str, scalars, a
    too-small rank refused by name."""
    low = ref.reshape(-1)[: ref.shape[-1]] if min_ndim == 2 else np.array(1.0)
    return [
        Case(arg, "np-float32", ref.astype(np.float32), Same(ref.astype(np.float32))),
        Case(arg, "list", ref.tolist(), Same(ref)),
        lazy(arg, "tensor-float64", lambda: torch.as_tensor(ref), Same(lambda: torch.as_tensor(ref))),
        lazy(arg, "tensor-float32", lambda: torch.as_tensor(ref).float(),
             Works(lambda o: isinstance(o, torch.Tensor) and o.dtype == torch.float32)),
        lazy(arg, "tensor-meta", lambda: torch.as_tensor(ref).to("meta"),
             Either(Works(lambda o: o.device.type == "meta"), bad_value(arg))),
        Case(arg, "np-reversed-view", ref[..., ::-1][..., ::-1], Same(ref)),
        Case(arg, "np-nan", np.full(ref.shape, np.nan), bad_value(arg)),
        Case(arg, "np-inf", np.full(ref.shape, -np.inf), bad_value(arg)),
        lazy(arg, "tensor-nan", lambda: torch.full(ref.shape, math.nan), bad_value(arg)),
        Case(arg, "np-bool", np.ones(ref.shape, bool), bad_type(arg)),
        Case(arg, "np-complex", ref.astype(complex), bad_type(arg)),
        lazy(arg, "tensor-bool", lambda: torch.ones(ref.shape, dtype=torch.bool), bad_type(arg)),
        Case(arg, "np-str", np.full(ref.shape, "a"), bad_type(arg)),
        Case(arg, "ragged", [[0.0, 1.0], [2.0]], bad_type(arg)),
        Case(arg, "too-few-axes", low, bad(arg)),
        Case(arg, "str", "0.5", bad_type(arg)),
        Case(arg, "float", 0.5, bad_type(arg)),
        Case(arg, "None", None, bad_type(arg)),
    ]  # fmt: skip


def _same_as_numpy(out):
    want = posenc.path_scores(Q, K, W, B)
    assert isinstance(out, torch.Tensor) and out.dtype == torch.float64
    np.testing.assert_allclose(out.cpu().numpy(), want, rtol=1e-13, atol=1e-13)
    return True


def _config_cases(arg="config"):
    return [
        Case(arg, "str", "config.json", bad_type(arg)),
        Case(arg, "None", None, bad_type(arg)),
        Case(arg, "list", [QWEN], bad_type(arg)),
        Case(arg, "no-model-type", {k: v for k, v in QWEN.items() if k != "model_type"},
             bad_value("model_type")),
        Case(arg, "unknown-model-type", {**QWEN, "model_type": "bert"}, bad_value("model_type")),
        Case(arg, "no-rope", {"model_type": "bert", "hidden_size": 64, "num_attention_heads": 4,
                              "num_hidden_layers": 2}, bad_value("model_type")),
        Case(arg, "theta-str", {**QWEN, "rope_theta": "1e6"}, bad_type("rope_theta")),
        Case(arg, "theta-nan", {**QWEN, "rope_theta": math.nan}, bad_value("rope_theta")),
    ]  # fmt: skip


SPECS = [
    Spec(
        "posenc.forgetting_bias",
        posenc.forgetting_bias,
        {"log_forget": G},
        [
            *_array_cases("log_forget", G, min_ndim=1),
            Case("log_forget", "empty", np.zeros(0), Works(is_empty)),
            # issue 40: 10**6 gates asked for a 7.3 TiB bias and died in the allocator; refused
            # by name before allocating (broadcast views: the rows themselves cost nothing)
            Case(
                "log_forget",
                "past-memory",
                np.broadcast_to(-0.1, (10**7,)),
                bad_value("log_forget"),
            ),
            lazy(
                "log_forget",
                "tensor-past-memory",
                lambda: torch.zeros(()).expand(10**7),
                bad_value("log_forget"),
            ),
        ],  # fmt: skip
    ),
    Spec(
        "posenc.stick_breaking_weights",
        posenc.stick_breaking_weights,
        {"logits": Z, "attend_current": False},
        [
            *_array_cases("logits", Z, min_ndim=2),
            Case("logits", "not-square", Z[:3], bad_value("logits")),
            Case("logits", "empty", np.zeros((0, 0)), Works(is_empty)),
            Case(
                "logits", "past-memory", np.broadcast_to(0.0, (10**7, 10**7)), bad_value("logits")
            ),
            lazy(
                "logits",
                "tensor-past-memory",
                lambda: torch.zeros(()).expand(10**7, 10**7),
                bad_value("logits"),
            ),
            Case("attend_current", "np-bool", np.bool_(True), Same(True)),
            Case("attend_current", "int", 1, bad_type("attend_current")),
            Case("attend_current", "str", "yes", bad_type("attend_current")),
            Case("attend_current", "None", None, bad_type("attend_current")),
        ],  # fmt: skip
    ),
    Spec(
        "posenc.path_scores",
        posenc.path_scores,
        {"q": Q, "k": K, "w": W, "beta": B},
        [
            *[c for c in _array_cases("q", Q, min_ndim=2) if not c.label.startswith("tensor")],
            *[c for c in _array_cases("k", K, min_ndim=2) if not c.label.startswith("tensor")],
            lazy(
                "q",
                "all-tensors",
                lambda: torch.as_tensor(Q),
                Works(_same_as_numpy),
                k=torch.as_tensor(K),
                w=torch.as_tensor(W),
                beta=torch.as_tensor(B),
            ),
            lazy("q", "tensor-with-arrays", lambda: torch.as_tensor(Q), bad_type("torch")),
            Case("k", "other-shape", K[:3], bad_value("k")),
            # issue 40: q of shape (400000, 1) grew its scores row by row until memory ran out
            Case(
                "q",
                "past-memory",
                np.broadcast_to(0.0, (4 * 10**6, 1)),
                bad_value("q"),
                with_={
                    "k": np.broadcast_to(0.0, (4 * 10**6, 1)),
                    "w": np.broadcast_to(0.0, (4 * 10**6, 1)),
                    "beta": np.broadcast_to(0.0, (4 * 10**6,)),
                },
            ),
            lazy(
                "q",
                "tensor-past-memory",
                lambda: torch.zeros(()).expand(4 * 10**6, 1),
                bad_value("q"),
                k=torch.zeros(()).expand(4 * 10**6, 1),
                w=torch.zeros(()).expand(4 * 10**6, 1),
                beta=torch.zeros(()).expand(4 * 10**6),
            ),
            Case("w", "other-width", W[:, :2], bad_value("w")),
            Case("w", "np-nan", np.full(W.shape, np.nan), bad_value("w")),
            Case("w", "str", "w", bad_type("w")),
            Case("beta", "other-length", B[:3], bad_value("beta")),
            Case("beta", "np-inf", np.full(4, np.inf), bad_value("beta")),
            Case("beta", "np-complex", B.astype(complex), bad_type("beta")),
            Case("beta", "float", 2.0, bad_type("beta")),
            lazy("beta", "tensor-with-arrays", lambda: torch.as_tensor(B), bad_type("torch")),
        ],
    ),
    Spec(
        "posenc.hybrid_attention",
        posenc.hybrid_attention,
        {"model_type": "jamba"},
        [
            Case("model_type", "rope-row", "qwen3_next", Works(lambda r: r.attention == "rope")),
            Case("model_type", "unknown", "llama", bad_value("model_type")),
            Case("model_type", "upper", "JAMBA", bad_value("model_type")),
            Case("model_type", "bytes", b"jamba", bad_type("model_type")),
            Case("model_type", "None", None, bad_type("model_type")),
            Case("model_type", "int", 0, bad_type("model_type")),
        ],  # fmt: skip
    ),
    Spec(
        "posenc.engine_conventions",
        posenc.engine_conventions,
        {"model_type": "llama"},
        [
            Case("model_type", "neox-row", "qwen2", Works(lambda r: r.gguf_rope == "neox")),
            Case("model_type", "unknown", "bert", bad_value("model_type")),
            Case("model_type", "upper", "LLAMA", bad_value("model_type")),
            Case("model_type", "bytes", b"llama", bad_type("model_type")),
            Case("model_type", "None", None, bad_type("model_type")),
        ],
    ),
    Spec("posenc.gguf_rope", posenc.gguf_rope, {"config": QWEN}, _config_cases()),
    Spec("posenc.mlx_rope", posenc.mlx_rope, {"config": QWEN}, _config_cases()),
    Spec("posenc.vllm_rope", posenc.vllm_rope, {"config": QWEN}, _config_cases()),
    Spec(
        "posenc.explain_engines",
        posenc.explain_engines,
        {"config": QWEN, "lang": "en"},
        [
            *_config_cases(),
            Case(
                "config",
                "scheme",
                posenc.hf.describe(QWEN),
                Works(lambda t: t == posenc.explain_engines(QWEN)),
            ),
            Case("lang", "zh", "zh", Works(lambda t: "旋转类型" in t)),
            Case("lang", "unknown", "fr", bad_value("lang")),
            Case("lang", "upper", "EN", bad_value("lang")),
            Case("lang", "None", None, bad("lang")),
            Case("lang", "int", 0, bad("lang")),
        ],
    ),
]

"""Hostile-input rows for posenc.layers (picked up by test_hostile.py)."""

from __future__ import annotations

import numpy as np

import posenc
from hostile_values import (
    Case,
    Either,
    Same,
    Spec,
    Works,
    bad,
    bad_type,
    bad_value,
    np_dtype_cases,
    positions_cases,
    real_cases,
    size_cases,
)

P4 = np.arange(4)
GEMMA = {
    "model_type": "gemma3_text",
    "num_hidden_layers": 6,
    "sliding_window_pattern": 3,
    "sliding_window": 64,
    "rope_theta": 1e6,
    "rope_local_base_freq": 1e4,
}


def _with(**over):
    return {**GEMMA, **over}


def _is(kind, base):
    return lambda r: r.kind == kind and r.base == base


SPECS = [
    Spec(
        "posenc.llama4_nope_layers",
        posenc.llama4_nope_layers,
        {"num_hidden_layers": 8, "no_rope_layers": None, "no_rope_layer_interval": 4},
        [
            *size_cases("num_hidden_layers", 8),
            Case("num_hidden_layers", "2**21", 2**21, bad_value("num_hidden_layers")),
            *size_cases("no_rope_layer_interval", 4),
            Case("no_rope_layers", "empty-list", [], Same(None)),
            Case("no_rope_layers", "explicit", [1, 1, 1, 0] * 2, Same(None)),
            Case("no_rope_layers", "bools", [True, True, True, False] * 2, Same(None)),
            Case("no_rope_layers", "longer", [1, 1, 1, 0] * 3, Same(None)),
            Case("no_rope_layers", "short", [1, 0], bad_value("no_rope_layers")),
            Case("no_rope_layers", "two", [1, 2] * 4, bad_value("no_rope_layers")),
            Case("no_rope_layers", "floats", [1.0] * 8, bad_type("no_rope_layers")),
            Case("no_rope_layers", "str", "11101110", bad_type("no_rope_layers")),
            Case("no_rope_layers", "int", 1, bad_type("no_rope_layers")),
            Case(
                "no_rope_layers",
                "np-array",
                np.array([1, 1, 1, 0] * 2),
                Either(Same(None), bad_type("no_rope_layers")),
            ),
        ],
    ),
    Spec(
        "posenc.llama4_attn_scale",
        posenc.llama4_attn_scale,
        {"positions": P4, "floor_scale": 2, "attn_scale": 0.1, "dtype": None},
        [
            *positions_cases("positions", P4),
            Case("positions", "negative", np.array([0, -1]), bad_value("positions")),
            *size_cases("floor_scale", 2),
            *real_cases("attn_scale", 0.1, invalid=(-0.5,)),
            Case("attn_scale", "zero", 0.0, Works(lambda r: bool(np.all(r == 1.0)), "all 1")),
            *np_dtype_cases(),
        ],
    ),
    Spec(
        "posenc.layer_rope_parameters",
        posenc.layer_rope_parameters,
        {"config": GEMMA, "layer": 2},
        [
            Case("layer", "np-int64", np.int64(2), Works(_is("full", 1e6), "full layer")),
            Case("layer", "zero", 0, Works(_is("sliding", 1e4), "layer 0 is sliding")),
            Case("layer", "last", 5, Works(_is("full", 1e6), "layer 5 is full")),
            Case("layer", "past-end", 6, bad_value("layer")),
            Case("layer", "negative", -1, bad_value("layer")),
            Case("layer", "huge", 10**30, bad_value("layer")),
            Case("layer", "bool", True, bad_type("layer")),
            Case("layer", "float", 2.0, bad_type("layer")),
            Case("layer", "str", "2", bad_type("layer")),
            Case("layer", "None", None, bad_type("layer")),
            Case("config", "None", None, bad_type("config")),
            Case("config", "str", "gemma3_text", bad_type("config")),
            Case("config", "list", [GEMMA], bad_type("config")),
            Case("config", "model_type-int", _with(model_type=3), bad_type("config")),
            Case("config", "layers-float", _with(num_hidden_layers=6.0), bad_type("config")),
            Case("config", "layers-zero", _with(num_hidden_layers=0), bad_value("config")),
            Case("config", "layers-huge", _with(num_hidden_layers=2**40), bad_value("config")),
            Case("config", "pattern-zero", _with(sliding_window_pattern=0), bad_value("config")),
            Case(
                "config",
                "window-str",
                _with(sliding_window="64"),
                bad_type("config"),
                with_={"layer": 0},
            ),
            Case("config", "theta-nan", _with(rope_theta=float("nan")), bad("config")),
            Case("config", "theta-one", _with(rope_theta=1.0), bad_value("config")),
            Case("config", "theta-str", _with(rope_theta="1e6"), bad("config")),
            Case(
                "config",
                "layer-types-short",
                _with(layer_types=["full_attention"]),
                bad_value("config"),
            ),
            Case(
                "config",
                "layer-type-unknown",
                _with(layer_types=["linear_attention"] * 6),
                bad_value("config"),
            ),
            Case("config", "layer-types-str", _with(layer_types="full"), bad_type("config")),
            Case("config", "rope-parameters-list", _with(rope_parameters=[1]), bad_type("config")),
            Case(
                "config",
                "rope-parameters-flat",
                _with(rope_parameters={"rope_type": "default", "rope_theta": 1e4}),
                bad_value("config"),
            ),
            Case("config", "rope-scaling-str", _with(rope_scaling="linear"), bad_type("config")),
            Case(
                "config",
                "bidirectional",
                _with(use_bidirectional_attention=True),
                bad_value("config"),
            ),
            Case(  # LlamaConfig's default: 32 layers
                "config",
                "no-layers",
                {"model_type": "llama", "rope_theta": 1e4},
                Works(_is("full", 1e4), "class defaults"),
            ),
            Case(
                "config",
                "no-layers-unknown",
                {"model_type": "x", "rope_theta": 1e4},
                bad_value("config"),
            ),
            Case(
                "config",
                "sliding-without-window",
                {"model_type": "x", "layer_types": ["sliding_attention"] * 3},
                bad_value("config"),
            ),
            # as transformers builds it: Gemma3Config makes a default Gemma3TextConfig (26
            # layers, every sixth full); read through posenc.hf, as describe reads it
            Case(
                "config",
                "multimodal-without-text",
                {"model_type": "gemma3"},
                Works(_is("sliding", 1e4), "class defaults"),
            ),
            # issue 21: garbage refused by name, as posenc.hf.describe refuses it
            Case(
                "config",
                "window-nan",
                _with(sliding_window=float("nan")),
                bad("config"),
                with_={"layer": 0},
            ),
            Case(
                "config",
                "window-negative",
                _with(sliding_window=-5),
                bad_value("config"),
                with_={"layer": 0},
            ),
            Case("config", "theta-10**400", _with(rope_theta=10**400), bad_value("config")),
            Case(
                "config",
                "layer-type-bogus",
                _with(layer_types=["full_attention", "bogus_attention"] * 3),
                bad_value("config"),
            ),
            Case(
                "config",
                "no-rope-layers-two",
                {
                    "model_type": "llama4_text",
                    "num_hidden_layers": 4,
                    "no_rope_layers": [2, 0, 1, 1],
                },
                bad_value("config"),
            ),
            Case(
                "config",
                "no-rope-layers-str",
                {
                    "model_type": "llama4_text",
                    "num_hidden_layers": 4,
                    "no_rope_layers": ["1", "0", "", "1"],
                },
                bad_type("config"),
            ),
            Case(
                "config",
                "partial-two",
                {"model_type": "x", "num_hidden_layers": 3, "partial_rotary_factor": 2.0},
                bad_value("config"),
                with_={"layer": 0},
            ),
        ],
    ),
]

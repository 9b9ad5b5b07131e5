"""Hostile-input rows for posenc.hf (issue 12): describe and Scheme.rotate; collected by
tests/test_hostile.py.

Rows that posenc.hf gets wrong today are not here (the table has no expected failures): they are
strict xfail tests in tests/test_hf_describe.py (``test_describe_refuses_hostile_keys``).
"""

from __future__ import annotations

import math
from types import MappingProxyType, SimpleNamespace

import numpy as np
import torch

import posenc.hf
import seeded
from hostile_values import (
    Case,
    Either,
    Same,
    Spec,
    Works,
    bad_type,
    bad_value,
    choice_cases,
    empty_seq,
    lazy,
    on_meta,
    positions_cases,
    size_cases,
    x_cases,
)

P4 = np.arange(4)
BASE = {"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 2}
YARN = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 16}
CFG = {**BASE, "rope_theta": 500000.0, "rope_scaling": YARN, "max_position_embeddings": 64}
SCHEME = posenc.hf.describe(CFG)
T5 = posenc.hf.describe({"model_type": "t5", "num_layers": 2, "d_model": 64})


def _cfg(**changes):
    """CFG with keys changed (a value of ... deletes the key)."""
    out = {**CFG, **changes}
    return {k: v for k, v in out.items() if v is not ...}


def _json_ready(scheme):
    import json

    json.dumps(scheme.to_dict(), allow_nan=False)
    return True


def _equals_cfg(scheme):
    assert scheme == SCHEME, scheme
    return True


def X():
    g = torch.Generator().manual_seed(0)
    return seeded.randn(2, 2, 4, 16, generator=g, dtype=torch.float64).float()


def _rotate(x, position_ids, layer, scheme=SCHEME):
    return scheme.rotate(x, position_ids, layer=layer)


# dynamic NTK over a trained length of 16 (issue 21, items 10 and 21): the frequencies follow
# max(position_ids) + 1, which every id dtype, sign, device and size must give right or refuse
DYNAMIC = posenc.hf.describe(
    {**BASE, "max_position_embeddings": 16, "rope_scaling": {"rope_type": "dynamic", "factor": 2.0}}
)
LONG_IDS = np.array([20, 21, 22, 30])


def _dyn(label, value, expect):
    return lazy("position_ids", f"dynamic-{label}", value, expect, scheme=DYNAMIC)


def _trained_rotation(out):
    """Negative ids: the trained frequencies (what P4 - 8 turns by with seq_len None)."""
    spec = DYNAMIC.layer(0)
    want = posenc.apply_rope(
        X(), torch.as_tensor(P4 - 8), base=spec.base, pairing=spec.pairing, scaling=spec.scaling
    )
    torch.testing.assert_close(out, want, rtol=0, atol=1e-6)
    return True


def _same_as_int64(out):
    torch.testing.assert_close(out, DYNAMIC.rotate(X(), torch.as_tensor(LONG_IDS)), rtol=0, atol=0)
    return True


def _is_layer(index):
    def check(out):
        assert out == SCHEME.layers[index], out
        return True

    return check


def _is_call(out):
    assert out == posenc.hf.posenc_call(SCHEME, 0), out
    return True


# Llama 4's query temperature (issue 20, goal 4): layer 3 is NoPE, its queries scaled from p = 3
LLAMA4 = posenc.hf.describe(
    {
        "model_type": "llama4_text",
        "hidden_size": 64,
        "num_attention_heads": 4,
        "head_dim": 16,
        "num_hidden_layers": 4,
        "floor_scale": 4,
        "attn_scale": 0.5,
    }
)


def _scale(q, positions, layer):
    return LLAMA4.scale_queries(q, positions, layer=layer)


def _scaled(out):
    """Rows of X() times 1 + 0.5 * log1p(floor((p + 1) / 4)) at p = 0..3: the last row scaled."""
    want = X().clone()
    want[:, :, 3] *= 1 + 0.5 * math.log(2)
    torch.testing.assert_close(out, want, rtol=1e-6, atol=0)
    return True


# DeepSeek-V3.2's DSA indexer (issue 20, goal 4): 16-wide heads, the first 8 features rotate
V32 = posenc.hf.describe(
    {
        "model_type": "deepseek_v32",
        "hidden_size": 64,
        "num_attention_heads": 4,
        "num_hidden_layers": 2,
        "qk_nope_head_dim": 8,
        "qk_rope_head_dim": 8,
        "index_head_dim": 16,
    }
)


def _rotate_indexer(x, position_ids):
    return V32.rotate_indexer(x, position_ids)


def _indexer_rotation(out):
    """The first 8 features turned as posenc.apply_rope turns them, the last 8 untouched."""
    want = posenc.apply_rope(X(), torch.as_tensor(P4), base=10000.0, pairing="half", rotary_dim=8)
    torch.testing.assert_close(out, want, rtol=1e-6, atol=1e-6)
    assert torch.equal(out[..., 8:], X()[..., 8:])
    return True


def _key(label, key, value, expect):
    return Case("config", label, _cfg(**{key: value}), expect)


SPECS = [
    Spec(
        "posenc.hf.describe",
        posenc.hf.describe,
        {"config": CFG},
        [
            Case("config", "dict", CFG, Works(_equals_cfg)),
            lazy("config", "mappingproxy", lambda: MappingProxyType(CFG), Works(_equals_cfg)),
            lazy("config", "object", lambda: SimpleNamespace(**CFG), Works(_equals_cfg)),
            Case("config", "list", list(CFG.items()), bad_type("config")),
            Case("config", "str", "config.json", bad_type("config")),
            Case("config", "bytes", b"{}", bad_type("config")),
            Case("config", "None", None, bad_type("config")),
            Case("config", "int", 3, bad_type("config")),
            Case("config", "bare-object", object(), bad_type("config")),
            Case("config", "empty", {}, bad_value("model_type")),
            Case("config", "no-model_type", _cfg(model_type=...), bad_value("model_type")),
            # what a config leaves out takes its class's defaults, as in transformers
            lazy(
                "config",
                "object-no-layers",
                lambda: SimpleNamespace(model_type="llama"),
                Works(lambda s: s.num_layers == 32, "LlamaConfig's 32 layers"),
            ),
            _key("model_type-int", "model_type", 3, bad_type("model_type")),
            _key("rope_parameters-list", "rope_parameters", [1.0], bad_type("rope_parameters")),
            _key("rope_scaling-str", "rope_scaling", "yarn", bad_type("rope_scaling")),
            _key(
                "rope-keys-disagree",
                "rope_parameters",
                {"rope_type": "linear", "factor": 2.0},
                bad_value("rope_parameters", "rope_scaling"),
            ),
            _key(
                "rope_type-unknown", "rope_scaling", {"rope_type": "bogus"}, bad_value("rope_type")
            ),
            _key(
                "factor-str",
                "rope_scaling",
                {**YARN, "factor": "4"},
                bad_type("factor"),
            ),
            _key("factor-nan", "rope_scaling", {**YARN, "factor": math.nan}, bad_value("factor")),
            _key("layer_types-str", "layer_types", "full_attention", bad_type("layer_types")),
            _key("layer_types-ints", "layer_types", [0, 1], bad_type("layer_types")),
            _key(
                "layer_types-length",
                "layer_types",
                ["full_attention"] * 3,
                bad_value("layer_types"),
            ),
            _key("rope_theta-str", "rope_theta", "5e5", bad_type("rope_theta")),
            _key("rope_theta-bool", "rope_theta", True, bad_type("rope_theta")),
            _key("rope_theta-nan", "rope_theta", math.nan, bad_value("rope_theta")),
            _key("rope_theta-inf", "rope_theta", math.inf, bad_value("rope_theta")),
            _key("rope_theta-negative", "rope_theta", -1.0, bad_value("rope_theta")),
            _key("rope_theta-list", "rope_theta", [5e5], bad_type("rope_theta")),
            _key("layers-float", "num_hidden_layers", 2.0, bad_type("num_hidden_layers")),
            _key("layers-zero", "num_hidden_layers", 0, bad_value("num_hidden_layers")),
            _key("layers-bool", "num_hidden_layers", True, bad_type("num_hidden_layers")),
            _key("heads-str", "num_attention_heads", "4", bad_type("num_attention_heads")),
            _key("heads-zero", "num_attention_heads", 0, bad_value("num_attention_heads")),
            _key("hidden-float", "hidden_size", 64.0, bad_type("hidden_size")),
            _key("head_dim-odd", "head_dim", 15, bad_value("head_dim")),
            _key("head_dim-negative", "head_dim", -16, bad_value("head_dim")),
            # rotary_dim is read where the model's code reads it (GPT-J, CodeGen)
            Case(
                "config",
                "gptj-rotary_dim-str",
                {**_cfg(model_type="gptj"), "rotary_dim": "8"},
                bad_type("rotary_dim"),
            ),
            Case(
                "config",
                "gptj-rotary_dim-odd",
                {**_cfg(model_type="gptj"), "rotary_dim": 7},
                bad_value("rotated width"),
            ),
            _key(
                "partial-above-1",
                "partial_rotary_factor",
                1.5,
                bad_value("partial_rotary_factor"),
            ),
            _key("partial-zero", "partial_rotary_factor", 0.0, bad_value("partial_rotary_factor")),
            _key(
                "max_pos-str", "max_position_embeddings", "64", bad_type("max_position_embeddings")
            ),
            # as transformers builds it: Gemma3Config makes a default Gemma3TextConfig
            Case(
                "config",
                "text_config-missing",
                {"model_type": "gemma3"},
                Works(lambda s: s.num_layers == 26 and s.layer(5).base == 1e6, "class defaults"),
            ),
            Case(
                "config",
                "text_config-int",
                {"model_type": "gemma3", "text_config": 5},
                bad_type("text_config"),
            ),
            Case(
                "config",
                "mrope_section-sum",
                {
                    **BASE,
                    "model_type": "qwen2_vl_text",
                    "rope_parameters": {"rope_theta": 1e4, "mrope_section": [2, 2, 2]},
                },
                bad_value("mrope_section"),
            ),  # fmt: skip
            Case(
                "config",
                "no_rope_layers-length",
                {**BASE, "model_type": "llama4_text", "no_rope_layers": [1]},
                bad_value("no_rope_layers"),
            ),
            # never a guess (issue 20): a type with no verified row is unknown, with no layers
            Case(
                "config",
                "unknown-model_type",
                _cfg(model_type="not_a_model"),
                Works(lambda s: (s.kind, s.known, s.layers) == ("unknown", False, ()), "unknown"),
            ),
            Case(
                "config",
                "bert",
                {**BASE, "model_type": "bert"},
                Works(lambda s: s.kind == "unknown" and "BertConfig" in s.notes[0], "unknown"),
            ),
            # issue 21: right or refused by name
            _key("rope_theta-10**400", "rope_theta", 10**400, bad_value("rope_theta")),
            _key(
                "rope_type-list",
                "rope_scaling",
                {**YARN, "rope_type": ["yarn"]},
                bad_type("rope_type"),
            ),
            _key("layers-10**9", "num_hidden_layers", 10**9, bad_value("num_hidden_layers")),
            _key(
                "layer_types-bogus",
                "layer_types",
                ["full_attention", "bogus_attention"],
                bad_value("layer_types"),
            ),
            Case(
                "config",
                "layer_types-huge",
                _cfg(num_hidden_layers=..., layer_types=["full_attention"] * (2**20 + 1)),
                bad_value("layer_types"),
            ),
            Case(
                "config",
                "per_layer_config-str",
                _cfg(per_layer_config={"0": {"head_dim": "x"}}),
                bad_type("per_layer_config"),
            ),
            Case(
                "config",
                "sliding_window-str",
                _cfg(layer_types=["sliding_attention"] * 2, sliding_window="abc"),
                bad_type("sliding_window"),
            ),
            Case(
                "config",
                "sliding_window-negative",
                _cfg(layer_types=["sliding_attention"] * 2, sliding_window=-5),
                bad_value("sliding_window"),
            ),
            Case(
                "config",
                "sliding_window-nan",
                _cfg(layer_types=["sliding_attention"] * 2, sliding_window=math.nan),
                bad_type("sliding_window"),
            ),
            Case(
                "config",
                "no_rope_layers-two",
                {**BASE, "model_type": "llama4_text", "no_rope_layers": [2, 0]},
                bad_value("no_rope_layers"),
            ),
            Case(
                "config",
                "no_rope_layers-str",
                {**BASE, "model_type": "llama4_text", "no_rope_layers": ["1", ""]},
                bad_type("no_rope_layers"),
            ),
            Case(
                "config",
                "alibi-str",
                {**BASE, "model_type": "falcon", "alibi": "false"},
                bad_type("alibi"),
            ),
            Case(
                "config",
                "rope_interleave-str",
                {
                    **BASE,
                    "model_type": "deepseek_v3",
                    "qk_nope_head_dim": 8,
                    "qk_rope_head_dim": 8,
                    "rope_interleave": "false",
                },
                bad_type("rope_interleave"),
            ),  # fmt: skip
            # issue 40: numbers past float64 or past any head ended in OverflowError or a
            # 32 PiB allocation (MemoryError); refused by name
            _key("hidden-10**400", "hidden_size", 10**400, bad_value("head_dim", "hidden_size")),
            _key("head_dim-2**53+2", "head_dim", 2**53 + 2, bad_value("head_dim")),
            _key(
                "max_pos-10**400",
                "max_position_embeddings",
                10**400,
                bad_value("max_position_embeddings"),
            ),
            _key("head_dim-2**17", "head_dim", 2**17, bad_value("head_dim")),
            _key(
                "partial-10**400",
                "partial_rotary_factor",
                10**400,
                bad_value("partial_rotary_factor"),
            ),
            Case(
                "config",
                "gptj-rotary_dim-2**20",
                {**_cfg(model_type="gptj", head_dim=2**20), "rotary_dim": 2**20},
                bad_value("head_dim"),
            ),
            Case(
                "config",
                "attn_scale-10**400",
                {
                    **BASE,
                    "model_type": "llama4_text",
                    "num_hidden_layers": 4,
                    "attn_scale": 10**400,
                },
                bad_value("attn_scale"),
            ),
            Case(
                "config",
                "index_head_dim-2**40",
                {
                    **BASE,
                    "model_type": "deepseek_v32",
                    "qk_nope_head_dim": 8,
                    "qk_rope_head_dim": 8,
                    "index_head_dim": 2**40,
                },
                bad_value("index_head_dim"),
            ),  # fmt: skip
            Case(
                "config",
                "np-int64",
                {
                    **BASE,
                    "num_hidden_layers": np.int64(2),
                    "max_position_embeddings": np.int64(64),
                    "rope_scaling": {**YARN, "original_max_position_embeddings": np.int64(16)},
                },
                Works(_json_ready, "to_dict is JSON"),
            ),  # fmt: skip
        ],
    ),
    Spec(
        "posenc.hf.Scheme.rotate",
        _rotate,
        {"x": X(), "position_ids": P4, "layer": 0},
        [
            *x_cases(
                "x",
                X,
                numpy_ok=True,
                overrides={
                    **empty_seq(
                        "x",
                        X,
                        position_ids=np.arange(0),
                    ),
                    "meta": Either(Same(X, meta=True), bad_value("x", "position_ids")),
                    "+rank-3": lazy("x", "rank-3", lambda: X()[0], bad_value("x")),
                    "+other-head_dim": lazy(
                        "x", "other-head_dim", lambda: X()[..., :8], bad_value("x")
                    ),
                    "+numpy": lazy(
                        "x",
                        "numpy",
                        lambda: X().cpu().numpy(),
                        Works(lambda o: isinstance(o, np.ndarray) and o.shape == (2, 2, 4, 16)),
                    ),
                },
            ),
            *positions_cases(
                "position_ids",
                P4,
                empty=bad_value("position_ids"),
                overrides={
                    "np-int64-scalar": bad_value("position_ids"),
                    "np-0d": bad_value("position_ids"),
                    "torch-0d": bad_value("position_ids"),
                    "torch-meta": bad_value("position_ids"),
                    "+per-batch": Case(
                        "position_ids",
                        "per-batch",
                        np.stack([P4, P4 + 3]),
                        Works(lambda o: o.shape == (2, 2, 4, 16)),
                    ),
                    "+wrong-seq": Case(
                        "position_ids", "wrong-seq", np.arange(5), bad_value("position_ids")
                    ),
                    "+wrong-batch": Case(
                        "position_ids",
                        "wrong-batch",
                        np.stack([P4] * 3),
                        bad_value("position_ids"),
                    ),
                    "+3-d": Case(
                        "position_ids",
                        "3-d",
                        np.stack([P4] * 3)[:, None],
                        bad_value("position_ids"),
                    ),
                    "+torch-with-numpy-x": lazy(
                        "position_ids",
                        "torch-with-numpy-x",
                        lambda: torch.arange(4),
                        bad_type("position_ids"),
                        x=X().cpu().numpy(),
                    ),
                },
            ),
            _dyn("negative", lambda: torch.as_tensor(P4 - 8), Works(_trained_rotation)),
            _dyn("np-negative", lambda: P4 - 8, Works(lambda o: _trained_rotation(o))),
            _dyn(
                "uint64", lambda: torch.as_tensor(LONG_IDS).to(torch.uint64), Works(_same_as_int64)
            ),
            _dyn("np-uint64", lambda: LONG_IDS.astype(np.uint64), Works(_same_as_int64)),
            lazy(
                "x",
                "dynamic-meta",
                lambda: X().to("meta"),
                Works(on_meta),
                scheme=DYNAMIC,
                position_ids=torch.from_numpy(LONG_IDS).to("meta"),
            ),
            _dyn("2**53", lambda: torch.tensor([0, 1, 2, 2**53]), bad_value("position_ids")),
            _dyn(
                "np-uint64-2**63",
                lambda: np.array([0, 1, 2, 2**63], dtype=np.uint64),
                bad_value("position_ids"),
            ),
            _dyn(
                "float-2**60",
                lambda: torch.tensor([0.0, 1.0, 2.0, 2.0**60]),
                bad_value("position_ids"),
            ),
            *size_cases(
                "layer",
                0,
                zero=Same(0),
                overrides={
                    "negative": Same(0),
                    "+past-end": Case("layer", "past-end", 2, bad_value("layer")),
                },
            ),
        ],
    ),
    Spec(
        "posenc.hf.Scheme.scale_queries",
        _scale,
        {"q": X(), "positions": P4, "layer": 3},
        [
            Case("q", "scaled", X(), Works(_scaled)),
            *x_cases(
                "q",
                X,
                numpy_ok=True,
                overrides={
                    **empty_seq("q", X, positions=np.arange(0)),
                    "meta": Either(Same(X, meta=True), bad_value("q", "positions")),
                    "+rank-3": lazy("q", "rank-3", lambda: X()[0], bad_value("q")),
                    # a NoPE layer has no head width to hold q to: the scale takes any width
                    "+other-head_dim": lazy(
                        "q",
                        "other-head_dim",
                        lambda: X()[..., :8],
                        Works(lambda o: o.shape[-1] == 8),
                    ),
                },
            ),
            *positions_cases(
                "positions",
                P4,
                empty=bad_value("positions"),
                overrides={
                    "np-int64-scalar": bad_value("positions"),
                    "np-0d": bad_value("positions"),
                    "torch-0d": bad_value("positions"),
                    "torch-meta": bad_value("positions"),
                    "+wrong-seq": Case(
                        "positions", "wrong-seq", np.arange(5), bad_value("positions")
                    ),
                    "+torch-with-numpy-q": lazy(
                        "positions",
                        "torch-with-numpy-q",
                        lambda: torch.arange(4),
                        bad_type("positions"),
                        q=X().cpu().numpy(),
                    ),
                    # issue 40: cache positions are arange(seq) + tokens cached, never negative;
                    # at -8193 the scale was log1p(-1) = -inf (NaN queries): refused by name
                    "+negative": Case("positions", "negative", P4 - 8193, bad_value("positions")),
                    "+torch-negative": lazy(
                        "positions",
                        "torch-negative",
                        lambda: torch.as_tensor(P4 - 8193),
                        bad_value("positions"),
                    ),
                    "+np-float-negative": Case(
                        "positions", "np-float-negative", P4 - 0.5, bad_value("positions")
                    ),
                    "+torch-int8-minus-1": lazy(
                        "positions",
                        "torch-int8-minus-1",
                        lambda: torch.tensor([0, 1, 2, -1], dtype=torch.int8),
                        bad_value("positions"),
                    ),
                    "+np-uint64-huge": Case(
                        "positions",
                        "np-uint64-huge",
                        np.array([0, 1, 2, 2**64 - 1], dtype=np.uint64),
                        Works(lambda o: bool(torch.isfinite(o).all())),
                    ),
                },
            ),
            *size_cases(
                "layer",
                3,
                zero=Same(0),
                overrides={
                    "negative": Same(0),  # layer -2: layer 2 rotates, its queries unscaled
                    "+rotating": Case("layer", "rotating", 0, Works(lambda o: torch.equal(o, X()))),
                    "+past-end": Case("layer", "past-end", 4, bad_value("layer")),
                },
            ),
        ],
    ),
    Spec(
        "posenc.hf.Scheme.rotate_indexer",
        _rotate_indexer,
        {"x": X(), "position_ids": P4},
        [
            Case("x", "rotation", X(), Works(_indexer_rotation)),
            *x_cases(
                "x",
                X,
                numpy_ok=True,
                overrides={
                    **empty_seq("x", X, position_ids=np.arange(0)),
                    "meta": Either(Same(X, meta=True), bad_value("x", "position_ids")),
                    "+rank-3": lazy("x", "rank-3", lambda: X()[0], bad_value("x")),
                    "+other-head_dim": lazy(
                        "x", "other-head_dim", lambda: X()[..., :8], bad_value("x")
                    ),
                },
            ),
            *positions_cases(
                "position_ids",
                P4,
                empty=bad_value("position_ids"),
                overrides={
                    "np-int64-scalar": bad_value("position_ids"),
                    "np-0d": bad_value("position_ids"),
                    "torch-0d": bad_value("position_ids"),
                    "torch-meta": bad_value("position_ids"),
                    "+wrong-seq": Case(
                        "position_ids", "wrong-seq", np.arange(5), bad_value("position_ids")
                    ),
                    "+torch-with-numpy-x": lazy(
                        "position_ids",
                        "torch-with-numpy-x",
                        lambda: torch.arange(4),
                        bad_type("position_ids"),
                        x=X().cpu().numpy(),
                    ),
                },
            ),
        ],
    ),
    Spec(
        "posenc.hf.Scheme.layer",
        lambda index: SCHEME.layer(index),
        {"index": 1},
        size_cases(
            "index",
            1,
            zero=Works(_is_layer(0)),
            overrides={
                "np-int64": Works(_is_layer(1)),
                "np-uint8": Works(_is_layer(1)),
                "negative": Works(_is_layer(0)),
                "huge": bad_value("layer"),
                "2**63": bad_value("layer"),
                "bool": bad_type("layer"),
                "float": bad_type("layer"),
                "str": bad_type("layer"),
                "complex": bad_type("layer"),
                "np-float": bad_type("layer"),
                "torch-0d": bad_type("layer"),
                "None": bad_type("layer"),
            },
        ),
    ),
    Spec(
        "posenc.hf.Scheme.explain",
        lambda lang: SCHEME.explain(lang),
        {"lang": "en"},
        [
            Case("lang", "zh", "zh", Works(lambda t: "移植要点" in t)),
            *choice_cases("lang", ("en", "zh")),
        ],
    ),
    Spec(
        "posenc.hf.Scheme.to_dict",
        lambda: SCHEME.to_dict(),
        {},
        [],  # no arguments: tests/test_hf_describe.py checks that it round-trips through JSON
    ),
    Spec("posenc.hf.LayerScheme.to_dict", lambda: SCHEME.layer(0).to_dict(), {}, []),
    Spec(
        "posenc.hf.Scheme.function",
        lambda bidirectional: T5.function(bidirectional=bidirectional)(np.arange(-3, 4)),
        {"bidirectional": True},
        [
            # keyword overrides only (**overrides): the T5 encoder and decoder buckets
            Case("bidirectional", "True", True, Works(lambda o: o.tolist()[3] == 0)),
            Case("bidirectional", "False", False, Works(lambda o: (o[4:] == 0).all())),
        ],
    ),
    Spec(
        "posenc.hf.LayerScheme.inv_freq",
        lambda seq_len: SCHEME.layer(0).inv_freq(seq_len),
        {"seq_len": None},
        [
            Case("seq_len", "None", None, Works(lambda o: o[0].shape == (8,) and o[1] > 1)),
            Case("seq_len", "int", 8, Same(None)),  # yarn does not read seq_len
        ],
    ),
    Spec(
        "posenc.hf.posenc_call",
        posenc.hf.posenc_call,
        {"scheme": SCHEME, "layer": 0},
        [
            Case("scheme", "scheme", SCHEME, Works(lambda t: t.startswith("posenc.apply_rope("))),
            *size_cases(
                "layer",
                0,
                zero=Works(_is_call),
                overrides={
                    "np-int64": Works(_is_call),
                    "np-uint8": Works(_is_call),
                    "negative": Works(_is_call),
                },
            ),
        ],
    ),
]

"""posenc's RoPE against the frameworks people port from.

Each test imports its library through ``require``: skipped when the library is missing, except
under ``CI=true``, where a missing library fails the run instead of hiding a gap.

The frameworks round ``inv_freq`` and the angle ``position * inv_freq`` to float32, so they
drift from the exact rotation by a few ``1e-8 * position * max|x|`` (measured: at most
4.7e-8 per unit of position, Meta's formula with theta 5e5). The tolerance below allows
``2e-7 * position`` plus a few float32 roundings; a convention mismatch (pairing, scaling,
attention factor, partial rotary) is an error of order ``max|x|``.
"""

from __future__ import annotations

import contextlib
import importlib
import math
import os

import numpy as np
import pytest
import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st

import posenc
import seeded

pytestmark = pytest.mark.values


def require(modname: str):
    """``pytest.importorskip(modname)``, except under CI=true, where ImportError fails the test."""
    if os.environ.get("CI") == "true":
        return importlib.import_module(modname)
    return pytest.importorskip(modname)


def test_require_skips_locally_and_fails_under_ci(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception):
        require("posenc_no_such_module")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(ImportError):
        require("posenc_no_such_module")
    assert require("numpy") is np


def _tol(positions, x):
    if isinstance(positions, torch.Tensor):  # on the cuda leg positions live on the GPU
        positions = positions.cpu()
    return (2e-6 + 2e-7 * float(np.abs(np.asarray(positions)).max())) * float(x.abs().max())


def _assert_close(got, want, positions, x):
    err = float((got.double() - want.double()).abs().max())
    assert err <= _tol(positions, x), (err, _tol(positions, x))


# --- HF transformers: rope_frequencies vs ROPE_INIT_FUNCTIONS --------------------------------


def _llama_config(head_dim, base, rope_parameters, max_position_embeddings=4096, n_heads=4):
    transformers = require("transformers")
    params = {"rope_theta": base, **(rope_parameters or {"rope_type": "default"})}
    return transformers.LlamaConfig(
        hidden_size=head_dim * n_heads,
        num_attention_heads=n_heads,
        num_key_value_heads=n_heads,
        head_dim=head_dim,
        max_position_embeddings=max_position_embeddings,
        rope_parameters=params,
    )


def _longrope_params(head_dim, **extra):
    rng = np.random.default_rng(head_dim)
    return {
        "rope_type": "longrope",
        "original_max_position_embeddings": 1024,
        "short_factor": (1 + rng.random(head_dim // 2)).round(4).tolist(),
        "long_factor": (1 + 8 * rng.random(head_dim // 2)).round(4).tolist(),
        **extra,
    }


# (rope_parameters, max_position_embeddings): ours takes the dict as it is, with one mapping:
# HF's dynamic reads the trained length from config.max_position_embeddings.
CONFIGS = [
    ({"rope_type": "linear", "factor": 2.0}, 4096),
    ({"rope_type": "linear", "factor": 8}, 4096),
    ({"rope_type": "dynamic", "factor": 2.0}, 1024),
    ({"rope_type": "dynamic", "factor": 6.5}, 256),
    ({"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 1024}, 4096),
    (
        {
            "rope_type": "yarn",
            "factor": 40.0,
            "original_max_position_embeddings": 4096,
            "beta_fast": 32.0,
            "beta_slow": 1.0,
            "mscale": 1.0,
            "mscale_all_dim": 1.0,
        },
        163840,
    ),  # DeepSeek-V3 style
    (
        {
            "rope_type": "yarn",
            "factor": 16.0,
            "original_max_position_embeddings": 2048,
            "beta_fast": 64.0,
            "beta_slow": 2.0,
            "mscale": 0.707,
            "mscale_all_dim": 1.0,
            "truncate": False,
        },
        32768,
    ),
    (
        {
            "rope_type": "yarn",
            "factor": 2.0,
            "original_max_position_embeddings": 512,
            "attention_factor": 1.25,
        },
        1024,
    ),
    (
        {
            "rope_type": "llama3",
            "factor": 8.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": 8192,
        },
        131072,
    ),
    (
        {
            "rope_type": "llama3",
            "factor": 32.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 8.0,
            "original_max_position_embeddings": 128,
        },
        4096,
    ),
    ("longrope", 4096),
    ("longrope-attention", 4096),
]


def _params(entry, head_dim):
    if entry == "longrope":
        return _longrope_params(head_dim, factor=4.0)
    if entry == "longrope-attention":
        return _longrope_params(head_dim, attention_factor=1.3)
    return dict(entry)


def _ours(params, max_position_embeddings):
    ours = dict(params)
    if ours["rope_type"] == "dynamic":
        ours["original_max_position_embeddings"] = max_position_embeddings
    return ours


def _id(entry):
    return entry if isinstance(entry, str) else entry["rope_type"]


@pytest.mark.parametrize(
    "entry,max_pos", CONFIGS, ids=[f"{_id(e)}-{i}" for i, (e, _) in enumerate(CONFIGS)]
)
@pytest.mark.parametrize("head_dim", [16, 64, 128])
@pytest.mark.parametrize("base", [10000.0, 500000.0])
def test_frequencies_equal_rope_init_functions(entry, max_pos, head_dim, base):
    require("transformers")
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    params = _params(entry, head_dim)
    config = _llama_config(head_dim, base, dict(params), max_position_embeddings=max_pos)
    rope_type = params["rope_type"]
    seq_lens = [None]
    if rope_type == "dynamic":
        seq_lens += [max_pos // 2, max_pos, max_pos + 1, 3 * max_pos + 17]
    if rope_type == "longrope":
        seq_lens += [1024, 1025]
    for seq_len in seq_lens:
        hf_inv, hf_factor = ROPE_INIT_FUNCTIONS[rope_type](config, "cpu", seq_len=seq_len)
        inv, factor = posenc.rope_frequencies(
            head_dim, base=base, scaling=_ours(params, max_pos), seq_len=seq_len
        )
        np.testing.assert_allclose(inv, hf_inv.double().cpu().numpy(), rtol=2e-6, atol=0)
        assert math.isclose(factor, hf_factor, rel_tol=1e-12)


def _yarn_hf(dim, base, params, exact=False):
    """transformers' YaRN frequencies; ``exact``: its float32 casts made float64 (hf_corpus), so
    that a comparison measures the formula, not float32 rounding (which a narrow ramp, betas
    close together, amplifies past 1e-5)."""
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    from hf_corpus import float64_torch

    config = _llama_config(
        dim,
        base,
        dict(params),
        max_position_embeddings=2 * params["original_max_position_embeddings"],
    )
    with float64_torch() if exact else contextlib.nullcontext():
        inv, factor = ROPE_INIT_FUNCTIONS["yarn"](config, "cpu")
    return inv.double().cpu().numpy(), factor


def test_yarn_clamps_its_correction_range_one_sided_as_transformers():
    """Issue 21, item 1: a trained length so long that even beta_fast's pair lies past the last
    one: transformers (and the paper's code) clamp low from below and high from above only, so the
    bounds cross and every pair is interpolated (0.25x); clamping both to [0, dim - 1] gave the
    unscaled frequencies."""
    require("transformers")
    yarn = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 100000}
    inv, factor = posenc.rope_frequencies(16, base=10.0, scaling=yarn)
    hf_inv, hf_factor = _yarn_hf(16, 10.0, yarn)
    np.testing.assert_allclose(inv, hf_inv, rtol=2e-6, atol=0)
    np.testing.assert_allclose(inv / posenc.rope_frequencies(16, base=10.0)[0], 0.25, rtol=1e-15)
    assert math.isclose(factor, hf_factor, rel_tol=1e-12)


@settings(max_examples=120, deadline=None)
@example(  # a narrow ramp: transformers' float32 rounding was 4.5e-5 off here
    half=50, base=1751485.0, factor=2.0, trained=120473, betas=(45.75, 46.0), truncate=False
)
@given(
    half=st.integers(1, 64),
    base=st.floats(1.5, 1e7),
    factor=st.floats(1.0, 64.0),
    trained=st.integers(1, 10**9),
    betas=st.tuples(st.floats(0.01, 200.0), st.floats(0.01, 200.0)),
    truncate=st.booleans(),
)
def test_yarn_equals_rope_init_functions_on_random_configs(
    half, base, factor, trained, betas, truncate
):
    """Issue 21, item 1: on main 85 of 500 such examples differed from transformers."""
    require("transformers")
    beta_slow, beta_fast = sorted(betas)
    params = {
        "rope_type": "yarn",
        "factor": factor,
        "original_max_position_embeddings": trained,
        "beta_fast": beta_fast,
        "beta_slow": beta_slow,
        "truncate": truncate,
    }
    hf_inv, hf_factor = _yarn_hf(2 * half, base, params, exact=True)
    inv, ours_factor = posenc.rope_frequencies(2 * half, base=base, scaling=params)
    np.testing.assert_allclose(inv, hf_inv, rtol=1e-12, atol=0)
    assert math.isclose(ours_factor, hf_factor, rel_tol=1e-12)


@pytest.mark.parametrize(
    "beta_fast,beta_slow,want",
    [(1e-320, 1e-320, 0.25), (1e308, 1e308, 1.0)],
    ids=["betas-near-0", "betas-near-max"],
)
def test_yarn_extreme_betas_give_the_limit_of_the_ramp(beta_fast, beta_slow, want):
    """A beta whose pair index overflows float64 (transformers' floor/ceil raise there): the
    limit of the ramp, every pair interpolated (betas near 0) or none (betas near float64 max)."""
    yarn = {
        "rope_type": "yarn",
        "factor": 4.0,
        "original_max_position_embeddings": 4096,
        "beta_fast": beta_fast,
        "beta_slow": beta_slow,
    }
    inv, _ = posenc.rope_frequencies(16, scaling=yarn)
    np.testing.assert_allclose(inv / posenc.rope_frequencies(16)[0], want, rtol=1e-15)


def test_llama_cast_to_bfloat16_rounds_inv_freq():
    """rope.md: LlamaModel(cfg).to(bfloat16) rounds the inv_freq buffer and the forward uses it
    (the page's emulation, bit for bit); _from_config(dtype=bfloat16) keeps it float32."""
    transformers = require("transformers")
    config = transformers.LlamaConfig(
        hidden_size=256,
        num_attention_heads=2,
        num_key_value_heads=2,
        intermediate_size=64,
        num_hidden_layers=1,
        vocab_size=32,
        head_dim=128,
        rope_parameters={"rope_type": "default", "rope_theta": 5e5},
    )
    cast = transformers.LlamaModel(config).to(torch.bfloat16)
    loaded = transformers.LlamaModel._from_config(config, dtype=torch.bfloat16)
    assert cast.rotary_emb.inv_freq.dtype == torch.bfloat16
    assert loaded.rotary_emb.inv_freq.dtype == torch.float32
    inv32 = torch.as_tensor(posenc.rope_frequencies(128, base=5e5)[0]).float()
    x = torch.zeros(1, 1, 256, dtype=torch.bfloat16)
    for p, gap in ((1000, 1.50), (8000, 1.88)):
        pid = torch.tensor([[p]])
        cos_cast = cast.rotary_emb(x, pid)[0].float()[0, 0, :64]
        cos_loaded = loaded.rotary_emb(x, pid)[0].float()[0, 0, :64]
        low = (p * inv32.to(torch.bfloat16).float()).cos().to(torch.bfloat16).float()
        assert torch.equal(cos_cast, low)
        exact = (p * inv32).cos()
        assert round(float((cos_cast - exact).abs().max()), 2) == gap
        assert float((cos_loaded - exact).abs().max()) < 0.01  # only the bfloat16 rounding


def test_default_frequencies_equal_llama_rotary_embedding():
    transformers = require("transformers")
    for head_dim, base in ((16, 10000.0), (128, 500000.0), (64, 1e6)):
        config = _llama_config(head_dim, base, None)
        hf_inv, hf_factor = (
            transformers.models.llama.modeling_llama.LlamaRotaryEmbedding.compute_default_rope_parameters(
                config
            )
        )
        inv, factor = posenc.rope_frequencies(head_dim, base=base)
        np.testing.assert_allclose(inv, hf_inv.double().cpu().numpy(), rtol=2e-6, atol=0)
        assert factor == hf_factor == 1.0


def test_hf_parameters_dict_is_accepted_as_it_is():
    """config.rope_parameters (with its rope_theta) goes straight into ``scaling``."""
    config = _llama_config(
        32,
        500000.0,
        {
            "rope_type": "llama3",
            "factor": 8.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": 8192,
        },
    )
    inv, _ = posenc.rope_frequencies(32, base=500000.0, scaling=config.rope_parameters)
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    np.testing.assert_allclose(
        inv, ROPE_INIT_FUNCTIONS["llama3"](config, "cpu")[0].double().cpu().numpy(), rtol=2e-6
    )


# --- HF Llama: LlamaRotaryEmbedding + apply_rotary_pos_emb (pairing="half") -----------------


@pytest.mark.parametrize(
    "entry,max_pos",
    [(None, 4096), *CONFIGS],
    ids=["default"] + [f"{_id(e)}-{i}" for i, (e, _) in enumerate(CONFIGS)],
)
def test_llama_rotary_equals_apply_rope(entry, max_pos):
    require("transformers")
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb

    head_dim, base = 32, 10000.0
    params = None if entry is None else _params(entry, head_dim)
    config = _llama_config(
        head_dim, base, None if params is None else dict(params), max_position_embeddings=max_pos
    )
    hf_rope = LlamaRotaryEmbedding(config)
    gen = torch.Generator().manual_seed(0)
    q = seeded.randn(2, 4, 7, head_dim, generator=gen)
    k = seeded.randn(2, 4, 7, head_dim, generator=gen)
    position_ids = torch.stack([torch.arange(7), torch.tensor([0, 3, 10, 50, 100, 150, 201])])
    rope_type = "default" if params is None else params["rope_type"]
    if rope_type in (
        "dynamic",
        "longrope",
    ):  # past the trained length: HF's dynamic update kicks in
        trained = max_pos if rope_type == "dynamic" else params["original_max_position_embeddings"]
        position_ids = position_ids + trained
    cos, sin = hf_rope(q, position_ids)
    hf_q, hf_k = apply_rotary_pos_emb(q, k, cos, sin)
    seq_len = int(position_ids.max()) + 1  # what HF's dynamic_rope_update reads
    scaling = None if params is None else _ours(params, max_pos)
    got_q = posenc.apply_rope(
        q, position_ids, pairing="half", base=base, scaling=scaling, seq_len=seq_len
    )
    got_k = posenc.apply_rope(
        k, position_ids, pairing="half", base=base, scaling=scaling, seq_len=seq_len
    )
    _assert_close(got_q, hf_q, position_ids, q)
    _assert_close(got_k, hf_k, position_ids, k)
    # and the other pairing is not what HF does (the check above can fail)
    wrong = posenc.apply_rope(q, position_ids, base=base, scaling=scaling, seq_len=seq_len)
    assert float((wrong - hf_q).abs().max()) > 100 * _tol(position_ids, q)


def test_hf_float32_angles_drift_and_ours_do_not():
    """At position 2**20 HF's float32 angles are off by ~1e-2; posenc stays at float32 rounding."""
    require("transformers")
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb

    config = _llama_config(128, 10000.0, None, max_position_embeddings=2**21)
    position_ids = torch.arange(2**20 - 255, 2**20 + 1)[None]
    q = seeded.randn(1, 1, 256, 128, generator=torch.Generator().manual_seed(1))
    cos, sin = LlamaRotaryEmbedding(config)(q, position_ids)
    hf_q, _ = apply_rotary_pos_emb(q, q, cos, sin)
    exact = posenc.apply_rope(q.double(), position_ids, pairing="half")
    ours = posenc.apply_rope(q, position_ids, pairing="half")
    scale = float(q.abs().max())
    assert float((ours.double() - exact).abs().max()) <= 1e-6 * scale
    assert float((hf_q.double() - exact).abs().max()) > 1e-3 * scale


# --- GPT-NeoX (half pairing, partial rotary) and GPT-J (interleaved, partial rotary) --------


@pytest.mark.parametrize("rotary_pct", [0.25, 0.5, 1.0])
def test_gpt_neox_partial_rotary(rotary_pct):
    transformers = require("transformers")
    from transformers.models.gpt_neox import modeling_gpt_neox as neox

    n_heads, head_dim = 4, 32
    config = transformers.GPTNeoXConfig(
        hidden_size=n_heads * head_dim,
        num_attention_heads=n_heads,
        rotary_pct=rotary_pct,
        rotary_emb_base=10000,
        max_position_embeddings=512,
    )
    rotary_dim = int(head_dim * rotary_pct)
    gen = torch.Generator().manual_seed(2)
    q = seeded.randn(2, n_heads, 9, head_dim, generator=gen)
    k = seeded.randn(2, n_heads, 9, head_dim, generator=gen)
    position_ids = torch.stack([torch.arange(9), torch.arange(9) + 300])
    cos, sin = neox.GPTNeoXRotaryEmbedding(config)(q, position_ids)
    hf_q, hf_k = neox.apply_rotary_pos_emb(q, k, cos, sin)
    got_q = posenc.apply_rope(q, position_ids, pairing="half", rotary_dim=rotary_dim)
    got_k = posenc.apply_rope(k, position_ids, pairing="half", rotary_dim=rotary_dim)
    _assert_close(got_q, hf_q, position_ids, q)
    _assert_close(got_k, hf_k, position_ids, k)
    torch.testing.assert_close(got_q[..., rotary_dim:], q[..., rotary_dim:], atol=0, rtol=0)


@pytest.mark.parametrize("rotary_dim", [8, 16, 32])
def test_gpt_j_partial_rotary(rotary_dim):
    require("transformers")
    from transformers.models.gptj import modeling_gptj as gptj

    head_dim = 32
    gen = torch.Generator().manual_seed(3)
    q = seeded.randn(2, 9, 4, head_dim, generator=gen)  # GPT-J rotates in (batch, seq, heads, dim)
    position_ids = torch.stack([torch.arange(9), torch.arange(9) * 7 + 40])
    # GPTJAttention.forward: gather sin/cos rows by position id, rotate the first rotary_dim features
    table = gptj.create_sinusoidal_positions(512, rotary_dim)
    sincos = table[position_ids]  # (batch, seq, rotary_dim)
    sin, cos = torch.split(sincos, rotary_dim // 2, dim=-1)
    hf_rot = gptj.apply_rotary_pos_emb(q[..., :rotary_dim], sin, cos)
    hf_q = torch.cat([hf_rot, q[..., rotary_dim:]], dim=-1)
    got = posenc.apply_rope(q, position_ids[:, :, None], rotary_dim=rotary_dim)  # (batch, seq, 1)
    _assert_close(got, hf_q, position_ids, q)


# --- rotary-embedding-torch (interleaved) ----------------------------------------------------


@pytest.mark.parametrize("rotary_dim", [16, 32])
@pytest.mark.parametrize("offset", [0, 37])
def test_rotary_embedding_torch(rotary_dim, offset):
    ret = require("rotary_embedding_torch")
    rot = ret.RotaryEmbedding(dim=rotary_dim, cache_if_possible=False)
    q = seeded.randn(2, 4, 10, 32, generator=torch.Generator().manual_seed(4))
    theirs = rot.rotate_queries_or_keys(q, offset=offset)
    positions = torch.arange(offset, offset + 10)
    ours = posenc.apply_rope(q, positions, rotary_dim=None if rotary_dim == 32 else rotary_dim)
    _assert_close(ours, theirs, positions, q)


def test_rotary_embedding_torch_interpolation_is_linear_scaling():
    ret = require("rotary_embedding_torch")
    rot = ret.RotaryEmbedding(dim=32, interpolate_factor=4.0, cache_if_possible=False)
    q = seeded.randn(1, 2, 50, 32, generator=torch.Generator().manual_seed(5))
    theirs = rot.rotate_queries_or_keys(q)
    ours = posenc.apply_rope(q, 50, scaling={"rope_type": "linear", "factor": 4.0})
    _assert_close(ours, theirs, np.arange(50), q)


# --- Meta Llama: complex multiply (precompute_freqs_cis + apply_rotary_emb) -------------------


def _meta_precompute_freqs_cis(dim, end, theta=10000.0):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    t = torch.arange(end, dtype=torch.float32)
    freqs = torch.outer(t, freqs)
    return torch.polar(torch.ones_like(freqs), freqs)  # exp(i m theta_j), complex64


def _meta_apply_rotary_emb(xq, xk, freqs_cis):
    """x of shape (batch, seq, heads, head_dim); consecutive features form one complex number."""
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    freqs_cis = freqs_cis[None, :, None, :]  # (1, seq, 1, head_dim / 2)
    xq_out = torch.view_as_real(xq_ * freqs_cis).flatten(3)
    xk_out = torch.view_as_real(xk_ * freqs_cis).flatten(3)
    return xq_out.type_as(xq), xk_out.type_as(xk)


@pytest.mark.parametrize("start_pos", [0, 100])
@pytest.mark.parametrize("theta", [10000.0, 500000.0])
def test_meta_llama_complex_formulation(start_pos, theta):
    head_dim, seq = 64, 12
    gen = torch.Generator().manual_seed(6)
    xq = seeded.randn(2, seq, 4, head_dim, generator=gen)
    xk = seeded.randn(2, seq, 2, head_dim, generator=gen)
    freqs_cis = _meta_precompute_freqs_cis(head_dim, 512, theta)[start_pos : start_pos + seq]
    meta_q, meta_k = _meta_apply_rotary_emb(xq, xk, freqs_cis)
    positions = torch.arange(start_pos, start_pos + seq)[None, :, None]  # (1, seq, 1)
    _assert_close(posenc.apply_rope(xq, positions, base=theta), meta_q, positions, xq)
    _assert_close(posenc.apply_rope(xk, positions, base=theta), meta_k, positions, xk)
    # the same checkpoint in HF layout: permute the features, rotate with pairing="half"
    perm = torch.as_tensor(posenc.rope_permutation(head_dim))
    hf_q = posenc.apply_rope(xq[..., perm], positions, base=theta, pairing="half")
    _assert_close(hf_q, meta_q[..., perm], positions, xq)

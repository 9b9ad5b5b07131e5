"""Hybrid and data-dependent position: posenc.forgetting_bias, stick_breaking_weights and
path_scores against loop-by-loop oracles of their papers' formulas; hybrid_attention against
small transformers 5.23 models run with two sets of position ids."""

from __future__ import annotations

import math
import time
import warnings

import numpy as np
import pytest
import torch

import posenc
from ci_rule import require

values = pytest.mark.values
rng = np.random.default_rng(0)


# --- loop oracles (the formulas as the papers write them) --------------------------------------


def fox_oracle(log_f):
    n = len(log_f)
    d = [[-math.inf] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1):
            d[i][j] = sum(log_f[j + 1 : i + 1])
    return d


def stick_oracle(z, attend_current=False):
    n = len(z)
    a = [[0.0] * n for _ in range(n)]
    for i in range(n):
        stick = 1.0
        for j in range(i if attend_current else i - 1, -1, -1):
            s = 1 / (1 + math.exp(-z[i][j]))
            a[i][j] = s * stick
            stick *= 1 - s
    return a


def path_oracle(q, k, w, beta):
    """Build every product of matrices explicitly."""
    n, d = q.shape
    out = np.full((n, n), -np.inf)
    for i in range(n):
        for j in range(i + 1):
            m = np.eye(d)
            for t in range(j + 1, i + 1):  # H_i ... H_{j+1}: the later ones on the left
                m = (np.eye(d) - beta[t] * np.outer(w[t], w[t])) @ m
            out[i, j] = q[i] @ m @ k[j]
    return out


# --- the Forgetting Transformer ---------------------------------------------------------------


@values
@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_forgetting_bias_oracle(backend):
    g = np.log(1 / (1 + np.exp(-rng.normal(size=9))))  # logsigmoid
    x = torch.from_numpy(g) if backend == "torch" else g
    got = np.asarray(posenc.forgetting_bias(x))
    np.testing.assert_allclose(got, fox_oracle(g.tolist()), rtol=1e-13, atol=1e-13)


@values
def test_forgetting_bias_constant_gate_is_alibi():
    """log f = -m everywhere: D = -m (i - j) below the diagonal, ALiBi's bias for slope m."""
    m = 0.0625
    d = posenc.forgetting_bias(np.full(7, -m))
    i, j = np.tril_indices(7)
    np.testing.assert_allclose(d[i, j], -m * (i - j), rtol=0, atol=1e-15)
    assert np.isneginf(d[np.triu_indices(7, 1)]).all()


@values
def test_forgetting_is_mamba2_decay():
    """A Mamba-2 (SSD) layer with scalar decays a_t run as a recurrence, h_t = a_t h_{t-1} +
    B_t x_t, y_t = C_t . h_t, equals linear attention with the mask exp(forgetting_bias(log a))."""
    n, d = 12, 4
    a = 1 / (1 + np.exp(-rng.normal(size=n)))
    b, c = rng.normal(size=(2, n, d))
    x = rng.normal(size=n)
    h, rec = np.zeros(d), []
    for t in range(n):
        h = a[t] * h + b[t] * x[t]
        rec.append(c[t] @ h)
    mask = np.exp(posenc.forgetting_bias(np.log(a)))
    np.testing.assert_allclose((c @ b.T * mask) @ x, rec, rtol=1e-12, atol=1e-12)


@values
def test_forgetting_bias_long_and_dtypes():
    """float32 in, float32 out (computed in float64): at 3000 tokens the corner is exact to
    float32 rounding; an integer tensor gives the default dtype."""
    g = -np.full(3000, 0.01)
    d = posenc.forgetting_bias(torch.from_numpy(g).float())
    assert d.dtype == torch.float32 and d.shape == (3000, 3000)
    want = np.float32(np.cumsum(np.float32(g).astype(np.float64))[-1] - np.float32(g)[0])
    assert float(d[2999, 0]) == float(want)
    assert posenc.forgetting_bias(torch.zeros(3, dtype=torch.int64)).dtype == torch.float32


# --- stick-breaking ----------------------------------------------------------------------------


@values
@pytest.mark.parametrize("attend_current", [False, True])
@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_stick_breaking_oracle(attend_current, backend):
    z = rng.normal(scale=2.0, size=(8, 8))
    x = torch.from_numpy(z) if backend == "torch" else z
    got = np.asarray(posenc.stick_breaking_weights(x, attend_current=attend_current))
    want = stick_oracle(z.tolist(), attend_current)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
    assert (got.sum(-1) <= 1 + 1e-12).all()


@values
def test_figure_caption_numbers():
    """hybrid.md's figure caption: with gates of 0.97 and one of 0.2 at token 20, key 19 weighs
    5 times less than key 20 (neighbours elsewhere 0.97); two keys of logit 4 at 5 and 30 among
    keys of logit -5: the nearer takes 93% of the stick, the farther 1.4% (the figure's set-up)."""
    n = 40
    logf = np.log(0.97) * np.ones(n)
    logf[20] = np.log(0.2)
    fox = np.exp(posenc.forgetting_bias(logf)[-1])
    assert math.isclose(fox[20] / fox[19], 5.0, rel_tol=1e-12)
    assert math.isclose(fox[30] / fox[29], 1 / 0.97, rel_tol=1e-12)
    z = np.full((n, n), -5.0)
    z[-1, [5, 30]] = 4.0
    sb = posenc.stick_breaking_weights(z)[-1]
    assert round(100 * sb[30]) == 93 and round(100 * sb[5], 1) == 1.4


def test_stick_breaking_recency():
    """Two keys with the same high logit: the nearer one takes almost everything (softmax would
    split evenly); position is in the order of the product, not in any encoding."""
    z = np.full((6, 6), -8.0)
    z[5, 1] = z[5, 3] = 8.0
    a = posenc.stick_breaking_weights(z)[5]
    assert a[3] > 0.99 and a[1] < 1e-3
    far = np.full((1000, 1000), -30.0)
    far[-1, 0] = 30.0  # one strong key 999 tokens back, everything between near zero
    w = posenc.stick_breaking_weights(far)[-1, 0]
    assert abs(w - math.exp(-math.log1p(math.exp(-30)) - 998 * math.log1p(math.exp(-30)))) < 1e-12


# --- PaTH --------------------------------------------------------------------------------------


@values
@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_path_oracle(backend):
    n, d = 7, 5
    q, k, w = rng.normal(size=(3, n, d))
    w /= np.linalg.norm(w, axis=-1, keepdims=True)
    beta = 2 / (1 + np.exp(-rng.normal(size=n)))
    args = [torch.from_numpy(a) for a in (q, k, w, beta)] if backend == "torch" else [q, k, w, beta]
    got = np.asarray(posenc.path_scores(*args))
    np.testing.assert_allclose(got, path_oracle(q, k, w, beta), rtol=1e-12, atol=1e-12)


@values
def test_path_special_cases():
    """beta = 0: plain q . k (NoPE). Two reflections per step compose a rotation: PaTH with the
    same pair of reflections at every token is RoPE on that plane (angle twice theirs)."""
    n, d = 6, 4
    q, k, w = rng.normal(size=(3, n, d))
    s0 = posenc.path_scores(q, k, w, np.zeros(n))
    i, j = np.tril_indices(n)
    np.testing.assert_allclose(s0[i, j], (q @ k.T)[i, j], rtol=1e-13)
    # tokens alternate reflections with normals (cos a, sin a) and e0: every two tokens the
    # product is a rotation by 2a in the (0, 1) plane, so on even tokens PaTH is RoPE with
    # one frequency, a per token (turning the other way: positions -a t)
    a = 0.3
    u0, u1 = np.array([1.0, 0, 0, 0]), np.array([math.cos(a), math.sin(a), 0, 0])
    ww = np.stack([u0 if t % 2 else u1 for t in range(2 * n)])
    q2, k2 = rng.normal(size=(2, 2 * n, d))
    q2[:, 2:] = k2[:, 2:] = 0  # only the rotated plane
    s = posenc.path_scores(q2, k2, ww, np.full(2 * n, 2.0))
    pos = -a * np.arange(2 * n)
    rope = posenc.apply_rope(q2[:, :2], pos) @ posenc.apply_rope(k2[:, :2], pos).T
    even = np.arange(0, 2 * n, 2)
    ii, jj = np.meshgrid(even, even, indexing="ij")
    low = jj <= ii
    np.testing.assert_allclose(s[ii[low], jj[low]], rope[ii[low], jj[low]], rtol=0, atol=1e-13)


# --- hybrids in transformers -------------------------------------------------------------------

SMALL = {
    "hidden_size": 32,
    "num_attention_heads": 2,
    "num_key_value_heads": 2,
    "head_dim": 16,
    "intermediate_size": 32,
    "vocab_size": 64,
    "max_position_embeddings": 128,
    "num_hidden_layers": 2,
}
BUILD = {  # a two-layer model of each type: one recurrent layer, one attention layer
    "jamba": {"attn_layer_period": 2, "attn_layer_offset": 1, "expert_layer_period": 100,
                  "expert_layer_offset": 99, "mamba_d_state": 4, "mamba_expand": 2},
    "nemotron_h": {"hybrid_override_pattern": "M*", "mamba_num_heads": 2, "mamba_head_dim": 16,
                       "n_groups": 1, "ssm_state_size": 4},
    "granitemoehybrid": {"layer_types": ["mamba", "attention"], "mamba_n_heads": 2,
                             "mamba_d_head": 32, "mamba_n_groups": 1, "mamba_d_state": 4,
                             "num_local_experts": 2, "num_experts_per_tok": 1},
    "kimi_linear": {"pad_token_id": 0, "bos_token_id": None, "eos_token_id": None,
                        "layer_types": ["linear_attention", "full_attention"], "num_experts": 2,
                        "num_experts_per_token": 1, "moe_intermediate_size": 16, "kv_lora_rank": 8,
                        "qk_rope_head_dim": 8, "qk_nope_head_dim": 8, "v_head_dim": 8,
                        "linear_attn_config": {"head_dim": 8, "num_heads": 2}},
    "qwen3_next": {"layer_types": ["linear_attention", "full_attention"],
                       "linear_num_value_heads": 2, "linear_num_key_heads": 2, "linear_key_head_dim": 8,
                       "linear_value_head_dim": 8, "num_experts": 2, "num_experts_per_tok": 1,
                       "moe_intermediate_size": 16, "shared_expert_intermediate_size": 16},
    "falcon_h1": {"mamba_d_ssm": 32, "mamba_n_heads": 2, "mamba_d_head": 16, "mamba_n_groups": 1,
                      "mamba_d_state": 4},
    "bamba": {"attn_layer_indices": [1], "mamba_n_heads": 2, "mamba_d_head": 32, "mamba_n_groups": 1,
                  "mamba_d_state": 4},
    "zamba2": {"layers_block_type": ["mamba", "hybrid"], "mamba_headdim": 16, "n_mamba_heads": 4,
                   "mamba_d_state": 4, "use_mem_rope": True},
    "lfm2": {"layer_types": ["conv", "full_attention"]},
}  # fmt: skip


@pytest.fixture(scope="module")
def transformers():
    return require("transformers")


@values
@pytest.mark.slow
@pytest.mark.parametrize("model_type", sorted(BUILD))
def test_hybrid_rows_against_transformers(transformers, model_type):
    """Run a small model of the type on the same tokens with position ids 0..11 and with a gap
    (0..5, 50..55). Only the attention layers read position ids: the logits must stay equal
    exactly where posenc says the attention has no rotation, and move where it says "rope"."""
    row = posenc.hybrid_attention(model_type)
    cfg = transformers.AutoConfig.for_model(model_type, **{**SMALL, **BUILD[model_type]})
    torch.manual_seed(0)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = transformers.AutoModelForCausalLM.from_config(cfg).eval()
        ids = torch.randint(1, 64, (1, 12))
        p1 = torch.arange(12)[None]
        p2 = torch.cat([torch.arange(6), torch.arange(50, 56)])[None]
        with torch.no_grad():
            a = model(input_ids=ids, position_ids=p1).logits
            b = model(input_ids=ids, position_ids=p2).logits
    moved = float((a - b).abs().max())
    if row.attention == "none":
        assert moved == 0.0, moved
    else:
        assert moved > 1e-5, moved
        assert float((a[:, :6] - b[:, :6]).abs().max()) < 1e-5  # before the gap: the same
    assert time.perf_counter() - start < 60


# --- bad input ----------------------------------------------------------------------------------


def test_refusals_name_the_argument():
    with pytest.raises(TypeError, match="log_forget"):
        posenc.forgetting_bias("0.5")
    with pytest.raises(ValueError, match="log_forget"):
        posenc.forgetting_bias(np.array([0.0, np.nan]))
    with pytest.raises(ValueError, match="logits"):
        posenc.stick_breaking_weights(np.zeros((3, 4)))
    with pytest.raises(TypeError, match="attend_current"):
        posenc.stick_breaking_weights(np.zeros((3, 3)), attend_current=1)
    with pytest.raises(ValueError, match="beta"):
        posenc.path_scores(np.zeros((3, 2)), np.zeros((3, 2)), np.zeros((3, 2)), np.zeros(4))
    with pytest.raises(TypeError, match="torch"):
        posenc.path_scores(torch.zeros(3, 2), np.zeros((3, 2)), np.zeros((3, 2)), np.zeros(3))
    with pytest.raises(ValueError, match="model_type"):
        posenc.hybrid_attention("llama")

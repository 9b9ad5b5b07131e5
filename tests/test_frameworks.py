"""posenc against the frameworks themselves: transformers (BLOOM, MPT, T5, Marian, M2M100, XGLM)
and timm. Tested with transformers 5.23.0 and timm 1.0.31.

Each library is loaded through ``require``: a missing one skips its tests locally and fails them
under CI (``CI=true``), where the compat extra is installed.
"""

from __future__ import annotations

import importlib
import importlib.util
import os

import numpy as np
import pytest
import torch

import oracle_frameworks as oracle
import posenc
from posenc import compat
from posenc.torch import T5RelativeBias

pytestmark = pytest.mark.values

F32_ROUND = 2.0**-25


def require(modname):
    """Import ``modname``; skip when it is missing, except under CI where that is a failure."""
    if os.environ.get("CI") == "true":
        return importlib.import_module(modname)
    return pytest.importorskip(modname)


def _numpy(t):
    return t.detach().cpu().to(torch.float64).numpy()


@pytest.fixture(scope="module")
def timm_sincos():
    """timm.layers.pos_embed_sincos without ``import timm`` (which needs torchvision); the loader
    is the benchmark's (bench/peers.py), which leaves sys.modules as it found it."""
    from bench.peers import timm_sincos as load

    try:
        return load()
    except ImportError:
        if os.environ.get("CI") == "true":
            pytest.fail("timm is not installed (required under CI)")
        pytest.skip("timm is not installed")


HEADS = [1, 2, 3, 5, 6, 8, 12, 16, 20, 32, 40, 64, 71, 112]


# --- ALiBi: BLOOM and MPT ------------------------------------------------------------------------


@pytest.mark.parametrize("n_heads", HEADS)
def test_bloom_alibi_is_posenc_plus_a_row_constant(n_heads):
    bloom = require("transformers.models.bloom.modeling_bloom")
    length = 9
    mask = torch.ones(2, length, dtype=torch.int64)
    got = _numpy(bloom.build_alibi_tensor(mask, n_heads, torch.float32)).reshape(
        2, n_heads, 1, length
    )
    slopes = posenc.alibi_slopes(n_heads)
    np.testing.assert_allclose(got[0, :, 0, 1], slopes, rtol=1e-6)  # BLOOM's bias is m_h * j
    ours = posenc.alibi_bias(length, length, n_heads)  # (H, q, k)
    rows = np.arange(length)[None, :, None] * slopes[:, None, None]  # m_h * i
    lower = np.tril(np.ones((length, length), bool))
    shifted = np.broadcast_to(got[0], ours.shape)
    np.testing.assert_allclose(
        (shifted - rows)[:, lower], ours[:, lower], rtol=0, atol=1e-6 * length
    )


def test_bloom_and_posenc_give_the_same_attention():
    bloom = require("transformers.models.bloom.modeling_bloom")
    n_heads, length = 12, 10
    alibi = bloom.build_alibi_tensor(
        torch.ones(1, length, dtype=torch.int64), n_heads, torch.float64
    )
    causal = torch.full((length, length), -torch.inf, dtype=torch.float64).triu(1)
    gen = torch.Generator(device="cpu").manual_seed(0)
    scores = torch.randn(n_heads, length, length, dtype=torch.float64, generator=gen, device="cpu")
    theirs = torch.softmax(scores.to(alibi.device) + alibi + causal.to(alibi.device), dim=-1)
    bias = torch.as_tensor(posenc.alibi_bias(length, length, n_heads), device="cpu")
    ours = torch.softmax(scores + bias, dim=-1)
    np.testing.assert_allclose(_numpy(theirs), _numpy(ours), rtol=0, atol=1e-6)


def test_bloom_left_padding_counts_from_the_first_real_token():
    bloom = require("transformers.models.bloom.modeling_bloom")
    n_heads = 4
    mask = torch.tensor([[0, 0, 1, 1, 1, 1]])
    got = _numpy(bloom.build_alibi_tensor(mask, n_heads, torch.float32))[:, 0, :]  # (H, 6)
    ours = posenc.alibi_bias(1, 4, n_heads)[:, 0, :]  # the 4 real tokens, last one querying
    slopes = posenc.alibi_slopes(n_heads)
    np.testing.assert_allclose(got[:, 2:] - 3 * slopes[:, None], ours, atol=1e-6)
    assert (got[:, :2] == 0).all()


@pytest.mark.parametrize("alibi_bias_max", [8, 4, 16])
@pytest.mark.parametrize("n_heads", HEADS)
def test_mpt_alibi_is_the_last_query_row(n_heads, alibi_bias_max):
    """MPT's tensor is m_h * (j - (L - 1)): posenc's bias of one query after L - 1 keys."""
    mpt = require("transformers.models.mpt.modeling_mpt")
    length = 11
    got = _numpy(
        mpt.build_mpt_alibi_tensor(n_heads, length, alibi_bias_max, device="cpu")
    )  # (H, 1, L)
    ours = posenc.alibi_bias(1, length, n_heads, max_bias=alibi_bias_max)
    np.testing.assert_allclose(got, ours, rtol=2e-6, atol=0)


# --- T5 ------------------------------------------------------------------------------------------

T5_CONFIGS = [
    (32, 128),
    (32, 64),
    (64, 256),
    (16, 32),
    (8, 16),
    (128, 4096),
    (18, 128),
    (9, 128),
    (62, 5000),
    (33, 100),
]


@pytest.mark.parametrize("bidirectional", [True, False])
@pytest.mark.parametrize("num_buckets,max_distance", T5_CONFIGS)
def test_t5_bucket_equals_transformers(num_buckets, max_distance, bidirectional, device):
    t5 = require("transformers.models.t5.modeling_t5")
    rel = torch.arange(-6000, 6001, device=device)
    theirs = t5.T5Attention._relative_position_bucket(rel, bidirectional, num_buckets, max_distance)
    kwargs = {
        "bidirectional": bidirectional,
        "num_buckets": num_buckets,
        "max_distance": max_distance,
    }
    assert torch.equal(posenc.t5_bucket(rel, **kwargs), theirs)
    np.testing.assert_array_equal(
        posenc.t5_bucket(rel.cpu().numpy(), **kwargs), theirs.cpu().numpy()
    )


@pytest.mark.parametrize("is_decoder", [False, True])
@pytest.mark.parametrize(
    "q_len,k_len,offset", [(5, 5, 0), (3, 7, 0), (1, 9, 8), (4, 12, 8), (150, 150, 0)]
)
def test_t5_relative_bias_equals_compute_bias(is_decoder, q_len, k_len, offset):
    t5 = require("transformers.models.t5.modeling_t5")
    config = t5.T5Config(
        num_heads=6,
        relative_attention_num_buckets=32,
        relative_attention_max_distance=128,
        is_decoder=is_decoder,
    )
    theirs = t5.T5Attention(config, has_relative_attention_bias=True, layer_idx=0)
    weight = theirs.relative_attention_bias.weight
    torch.nn.init.normal_(weight, generator=torch.Generator(device=weight.device).manual_seed(1))
    ours = T5RelativeBias(6, bidirectional=not is_decoder).to(weight.device)
    ours.load_state_dict({"relative_attention_bias.weight": weight.detach()})
    want = theirs.compute_bias(q_len, k_len, past_seen_tokens=offset)
    got = ours(q_len, k_len, offset=offset)
    assert got.shape == want.shape == (1, 6, q_len, k_len)
    assert torch.equal(got, want)


# --- 1-D sinusoidal tables: Marian, M2M100 / XGLM (fairseq's port) --------------------------------


@pytest.mark.parametrize(
    "n_pos,dim", [(1, 1), (10, 1), (30, 2), (30, 7), (64, 16), (64, 512), (100, 513)]
)
def test_marian_weight_equals_transformers_bit_for_bit(n_pos, dim):
    marian = require("transformers.models.marian.modeling_marian")
    module = marian.MarianSinusoidalPositionalEmbedding(n_pos, dim)
    theirs = module.create_weight()
    assert theirs.dtype == torch.float32
    assert torch.equal(torch.from_numpy(compat.marian_sinusoidal_weight(n_pos, dim)), theirs.cpu())


@pytest.mark.parametrize(
    "modname,cls",
    [
        ("transformers.models.m2m_100.modeling_m2m_100", "M2M100SinusoidalPositionalEmbedding"),
        ("transformers.models.xglm.modeling_xglm", "XGLMSinusoidalPositionalEmbedding"),
    ],
)
@pytest.mark.parametrize(
    "n,dim,pad", [(12, 4, None), (66, 16, 1), (130, 9, 1), (1026, 512, 1), (40, 10, -1)]
)
def test_fairseq_embedding_agrees_with_transformers_port(modname, cls, n, dim, pad):
    module = require(modname)
    theirs = _numpy(getattr(module, cls).get_embedding(n, dim, pad))
    ours = compat.fairseq_sinusoidal_embedding(n, dim, pad)
    exact = np.array(oracle.fairseq_sinusoidal_embedding(n, dim, pad)).reshape(n, dim)
    # posenc rounds the exact value once; transformers forms p * w in float32 (~1e-7 * p off)
    assert np.abs(ours - exact).max() <= F32_ROUND
    np.testing.assert_allclose(theirs, ours, rtol=0, atol=1.5e-7 * n + 2 * F32_ROUND)
    if n > 500:
        assert np.abs(theirs - exact).max() > 10 * np.abs(ours - exact).max()


def test_make_positions_equals_transformers_position_ids():
    m2m = require("transformers.models.m2m_100.modeling_m2m_100")
    tokens = torch.tensor([[1, 1, 5, 6, 7, 8], [5, 6, 1, 7, 8, 1], [5, 6, 7, 8, 9, 10]])
    for pad in (1, 5, 0):
        theirs = m2m.M2M100SinusoidalPositionalEmbedding.create_position_ids_from_input_ids(
            tokens, pad
        )
        assert torch.equal(compat.fairseq_make_positions(tokens, pad), theirs)


# --- 2-D: timm and MAE ---------------------------------------------------------------------------

GRIDS = [(1, 1, 4), (3, 5, 16), (7, 2, 8), (14, 14, 768), (16, 9, 64)]


@pytest.mark.parametrize("height,width,dim", GRIDS)
def test_sincos_2d_equals_timm(timm_sincos, height, width, dim):
    build = timm_sincos.build_sincos2d_pos_embed
    tol = 1e-7 * max(height, width) + 2 * F32_ROUND  # timm forms coordinate * band in float32
    cases = [
        ({}, {"layout": "sin_then_cos"}),
        ({"interleave_sin_cos": True}, {}),
        ({"temperature": 100.0, "interleave_sin_cos": True}, {"base": 100.0}),
    ]
    for timm_kwargs, posenc_kwargs in cases:
        theirs = _numpy(build([height, width], dim, **timm_kwargs))
        ours = posenc.sincos_2d(height, width, dim, **posenc_kwargs)
        np.testing.assert_allclose(theirs, ours, rtol=0, atol=tol)
    # reverse_coord stacks (W, H): the transposed grid, listed column by column
    theirs = _numpy(build([height, width], dim, reverse_coord=True, interleave_sin_cos=True))
    np.testing.assert_allclose(theirs, posenc.sincos_2d(width, height, dim), rtol=0, atol=tol)


@pytest.mark.parametrize("grid_size,dim", [(4, 16), (14, 64)])
def test_mae_is_timm_with_its_halves_swapped(timm_sincos, grid_size, dim):
    build = timm_sincos.build_sincos2d_pos_embed
    mae = compat.mae_2d_sincos_pos_embed(dim, grid_size)
    theirs = _numpy(build([grid_size, grid_size], dim, interleave_sin_cos=True))
    half = dim // 2
    swapped = np.concatenate([theirs[:, half:], theirs[:, :half]], axis=1)
    np.testing.assert_allclose(mae, swapped, rtol=0, atol=1e-7 * grid_size + 2 * F32_ROUND)
    reverse = _numpy(
        build([grid_size, grid_size], dim, reverse_coord=True, interleave_sin_cos=True)
    )
    assert np.abs(mae - reverse).max() > 0.5  # reverse_coord is not MAE's order


# --- DistilBERT / XLM sinusoidal option, OPT learned positions (transformers) -----------------


@pytest.mark.parametrize("n_pos,dim", [(64, 32), (512, 768), (33, 10)])
def test_distilbert_sinusoidal_embeddings_equal_posenc(n_pos, dim):
    """DistilBERT's (and XLM's) create_sinusoidal_embeddings is the paper's table, interleaved."""
    require("transformers")
    from transformers.models.distilbert.modeling_distilbert import create_sinusoidal_embeddings

    out = torch.empty(n_pos, dim)
    create_sinusoidal_embeddings(n_pos, dim, out)
    # theirs is the float64 table rounded once to float32: within half a float32 ulp of posenc's
    # float64 table; posenc's own float32 table is within its 4u bound (2.4e-7) of both
    np.testing.assert_allclose(
        out.cpu().numpy(), posenc.sinusoidal(n_pos, dim), rtol=0, atol=2.0**-25
    )
    np.testing.assert_allclose(
        out.cpu().numpy(), posenc.sinusoidal(n_pos, dim, dtype=np.float32), rtol=0, atol=3e-7
    )


def test_xlm_sinusoidal_embeddings_equal_posenc():
    require("transformers")
    from transformers.models.xlm.modeling_xlm import create_sinusoidal_embeddings

    out = torch.empty(128, 64)
    create_sinusoidal_embeddings(128, 64, out)
    np.testing.assert_allclose(out.cpu().numpy(), posenc.sinusoidal(128, 64), rtol=0, atol=2.0**-25)


def test_opt_learned_positions_equal_learned_embedding_with_padding_idx_1():
    """OPT: a table of max_len + 2 rows, real tokens counted over the mask, row = position + 2."""
    require("transformers")
    from transformers.models.opt.modeling_opt import OPTLearnedPositionalEmbedding

    from posenc.torch import LearnedPositionalEmbedding

    torch.manual_seed(0)
    theirs = OPTLearnedPositionalEmbedding(32, 8)
    ours = LearnedPositionalEmbedding(32, 8, padding_idx=1)
    assert ours.weight.shape == theirs.weight.shape == (34, 8)
    ours.load_state_dict({"weight": theirs.weight.detach().clone()})
    mask = torch.tensor([[0, 0, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1]])  # left padding in row 0
    want = theirs(mask)
    got = ours.embed(posenc.position_ids(mask, pad_value=0))
    real = mask.bool()
    torch.testing.assert_close(got[real], want[real])

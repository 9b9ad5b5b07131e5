"""posenc.deberta_*: against transformers' deberta_v2 (build_relative_position,
make_log_bucket_position, DisentangledSelfAttention) with copied weights, and a loop oracle."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import posenc
from ci_rule import require

pytestmark = pytest.mark.values

# (bucket_size, max_position): DeBERTa v3's (256, 512) and small ones that reach the log part
CONFIGS = [(256, 512), (512, 1024), (8, 16), (8, 512), (16, 64), (4, 8), (33, 100), (2, 5)]
CONFIGS += [(b, m) for b in (6, 10, 64, 128) for m in (b, 3 * b, 1000)]


@pytest.fixture(scope="module")
def hf():
    require("transformers")
    from transformers.models.deberta_v2 import modeling_deberta_v2

    return modeling_deberta_v2


def oracle_bucket(rel: int, bucket_size: int, max_position: int) -> int:
    """The formula of make_log_bucket_position, one integer at a time, in float32."""
    mid = bucket_size // 2
    if abs(rel) <= mid:
        return rel
    f32 = np.float32
    x = np.log(f32(abs(rel)) / f32(mid)) / np.log(f32((max_position - 1) / mid)) * f32(mid - 1)
    return int(math.copysign(math.ceil(float(x)) + mid, rel))


@pytest.mark.parametrize(("bucket_size", "max_position"), CONFIGS)
def test_log_bucket_equals_transformers(hf, bucket_size, max_position):
    rel = torch.arange(-5000, 5001)
    want = hf.make_log_bucket_position(rel, bucket_size, max_position).to(torch.long)
    got_t = posenc.deberta_log_bucket(rel, bucket_size, max_position)
    assert got_t.dtype == torch.int64
    assert torch.equal(got_t, want)  # exact
    # transformers' buckets come from float32 arithmetic and a ceil on the tensor's device: on
    # CUDA abs_pos / mid is a product with 1 / mid and log is the device's own, so a few values
    # land on the other side of an integer and the buckets differ from the CPU's at some |rel|
    # (the cuda leg saw it at 6-6, 6-18 and 10-10). posenc's torch path does the
    # same arithmetic on the same device (equal above, on every device); its NumPy path is
    # transformers on the CPU, bit for bit.
    with torch.device("cpu"):
        want_cpu = hf.make_log_bucket_position(rel.cpu(), bucket_size, max_position).to(torch.long)
    got_np = posenc.deberta_log_bucket(rel.cpu().numpy(), bucket_size, max_position)
    assert got_np.dtype == np.int64
    assert np.array_equal(got_np, want_cpu.numpy())


def test_log_bucket_matches_loop_oracle():
    rel = [-3000, -511, -300, -129, -128, -5, 0, 1, 127, 128, 129, 200, 511, 512, 4000]
    got = posenc.deberta_log_bucket(np.array(rel), 256, 512)
    assert got.tolist() == [oracle_bucket(r, 256, 512) for r in rel]
    # the ends of the ladder: max_position - 1 lands on bucket_size - 1, mid keeps its value
    assert got[rel.index(511)] == 255 and got[rel.index(-511)] == -255
    assert got[rel.index(128)] == 128


def test_log_bucket_is_odd_and_monotone():
    rel = np.arange(-100000, 100001)
    b = posenc.deberta_log_bucket(rel, 256, 512)
    assert np.array_equal(b, -b[::-1])
    assert (np.diff(b) >= 0).all()


@pytest.mark.parametrize(("bucket_size", "max_position"), [(-1, -1), (8, 16), (256, 512), (8, -1)])
@pytest.mark.parametrize(("q_len", "k_len"), [(1, 1), (7, 9), (40, 40), (30, 3)])
def test_relative_positions_equal_transformers(hf, q_len, k_len, bucket_size, max_position):
    q, k = torch.zeros(1, q_len, 4), torch.zeros(1, k_len, 4)
    want = hf.build_relative_position(q, k, bucket_size, max_position)[0]
    got = posenc.deberta_relative_positions(
        q_len, k_len, bucket_size=bucket_size, max_position=max_position, like=q
    )
    assert got.dtype == torch.int64 and torch.equal(got, want)
    got_np = posenc.deberta_relative_positions(
        q_len, k_len, bucket_size=bucket_size, max_position=max_position
    )
    assert np.array_equal(got_np, want.cpu().numpy())


# --- one DisentangledSelfAttention layer, float64, with its own weights -------------------------

LAYERS = [
    # share_att_key, pos_att_type, position_buckets, max_relative_positions
    (True, ["p2c", "c2p"], 8, 16),
    (False, ["c2p", "p2c"], 8, 16),
    (False, ["c2p"], -1, 6),
    (True, ["p2c"], -1, 6),
]


@pytest.fixture(scope="module")
def layers(hf):
    from transformers import DebertaV2Config

    built = []
    for share, kinds, buckets, max_rel in LAYERS:
        config = DebertaV2Config(
            hidden_size=16,
            num_attention_heads=2,
            intermediate_size=8,
            relative_attention=True,
            share_att_key=share,
            pos_att_type=kinds,
            position_buckets=buckets,
            max_relative_positions=max_rel,
            hidden_dropout_prob=0.0,
            attention_probs_dropout_prob=0.0,
        )
        torch.manual_seed(len(built))
        layer = hf.DisentangledSelfAttention(config).double().eval()
        span = buckets if buckets > 0 else max_rel
        rel_emb = torch.randn(1, 2 * span, 16, dtype=torch.float64)
        built.append((layer, config, rel_emb, span))
    return built


def _heads(x, h=2):  # (1, n, 16) -> (h, n, 8), as transpose_for_scores with batch 1
    return x.view(x.shape[0], x.shape[1], h, -1).permute(0, 2, 1, 3).reshape(-1, x.shape[1], 8)


@pytest.mark.parametrize("which", range(len(LAYERS)))
def test_disentangled_bias_equals_transformers(hf, layers, which):
    layer, config, rel_emb, span = layers[which]
    torch.manual_seed(10 + which)
    n = 20  # longer than the span: clamping and (with buckets) the log part are exercised
    hidden = torch.randn(1, n, 16, dtype=torch.float64)
    rel = posenc.deberta_relative_positions(
        n,
        n,
        bucket_size=layer.position_buckets,
        max_position=layer.max_relative_positions,
        like=hidden,
    )
    q = _heads(layer.query_proj(hidden))
    k = _heads(layer.key_proj(hidden))
    kinds = config.pos_att_type
    scale_factor = 1 + len(kinds)
    with torch.no_grad():
        want = layer.disentangled_attention_bias(q, k, None, rel_emb[0], scale_factor)
        key_proj = layer.key_proj if config.share_att_key else getattr(layer, "pos_key_proj", None)
        query_proj = (
            layer.query_proj if config.share_att_key else getattr(layer, "pos_query_proj", None)
        )
        pos_key = _heads(key_proj(rel_emb)) if "c2p" in kinds else None
        pos_query = _heads(query_proj(rel_emb)) if "p2c" in kinds else None
        got = posenc.deberta_disentangled_bias(q, k, rel, pos_key=pos_key, pos_query=pos_query)
        assert got.dtype == torch.float64
        torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-12)
        # NumPy gives the same numbers
        got_np = posenc.deberta_disentangled_bias(
            q.cpu().numpy(),
            k.cpu().numpy(),
            rel.cpu().numpy(),
            pos_key=None if pos_key is None else pos_key.cpu().numpy(),
            pos_query=None if pos_query is None else pos_query.cpu().numpy(),
        )
        np.testing.assert_allclose(got_np, want.cpu().numpy(), rtol=1e-12, atol=1e-12)
        # the whole layer: softmax(q k^T / sqrt(d * factor) + bias) is its attention
        mask = torch.ones(1, 1, n, n, dtype=torch.bool)
        _, probs = layer(hidden, mask, output_attentions=True, rel_embeddings=rel_emb[0])
        scale = float(np.sqrt(np.float32(8 * scale_factor)))
        scores = q @ k.transpose(-1, -2) / scale + got
        torch.testing.assert_close(
            torch.softmax(scores, -1), probs.reshape(2, n, n), rtol=1e-12, atol=1e-12
        )


def test_disentangled_bias_matches_loop_oracle():
    rng = np.random.default_rng(3)
    q, k = rng.normal(size=(2, 6, 4))
    pk, pq = rng.normal(size=(2, 6, 4))  # span 3
    rel = posenc.deberta_relative_positions(6, 6)
    got = posenc.deberta_disentangled_bias(q, k, rel, pos_key=pk, pos_query=pq)
    want = np.zeros((6, 6))
    scale = math.sqrt(4 * 3)
    for i in range(6):
        for j in range(6):
            c2p = q[i] @ pk[min(max(i - j + 3, 0), 5)]
            p2c = k[j] @ pq[min(max(-(j - i) + 3, 0), 5)]
            want[i, j] = (c2p + p2c) / scale
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9)  # sqrt taken in float32


def test_p2c_refuses_unequal_lengths():
    q, k = np.zeros((3, 4)), np.zeros((5, 4))
    rel = posenc.deberta_relative_positions(3, 5)
    assert posenc.deberta_disentangled_bias(q, k, rel, pos_key=np.zeros((4, 4))).shape == (3, 5)
    with pytest.raises(ValueError, match="pos_query"):
        posenc.deberta_disentangled_bias(q, k, rel, pos_query=np.zeros((4, 4)))


def test_meta_relative_position_with_a_cpu_query_is_refused_by_name():
    """Issue 21: NotImplementedError 'Cannot copy out of meta tensor' before; a meta query with
    CPU relative positions still gives a meta result (shapes only)."""
    q, pk = torch.randn(1, 4, 8), torch.randn(8, 8)
    rel = torch.as_tensor(posenc.deberta_relative_positions(4, 4))
    with pytest.raises(ValueError, match="^relative_position is on the meta device"):
        posenc.deberta_disentangled_bias(q, q, rel.to("meta"), pos_key=pk)
    qm, pkm = q.to("meta"), pk.to("meta")
    out = posenc.deberta_disentangled_bias(qm, qm, rel, pos_key=pkm)
    assert out.device.type == "meta" and out.shape == (1, 4, 4)


def test_compiles():
    def f(q, k, pk, pq):
        rel = posenc.deberta_relative_positions(5, 5, bucket_size=4, max_position=8, like=q)
        return posenc.deberta_disentangled_bias(q, k, rel, pos_key=pk, pos_query=pq)

    q, k = torch.randn(2, 2, 5, 4)
    pk, pq = torch.randn(2, 8, 4)
    compiled = torch.compile(f, fullgraph=True, backend="eager")
    torch.testing.assert_close(compiled(q, k, pk, pq), f(q, k, pk, pq))

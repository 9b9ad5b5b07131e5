"""posenc.axial_position_embeddings and posenc.torch.AxialPositionEmbedding: against
transformers' Reformer ``AxialPositionEmbeddings`` (copied weights) and a loop oracle."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import posenc
from ci_rule import require
from posenc.torch import AxialPositionEmbedding

SHAPE, DIMS = (4, 6), (3, 5)


@pytest.fixture(scope="module")
def pair():
    require("transformers")
    from transformers import ReformerConfig
    from transformers.models.reformer.modeling_reformer import AxialPositionEmbeddings

    cfg = ReformerConfig(
        axial_pos_shape=SHAPE,
        axial_pos_embds_dim=DIMS,
        hidden_size=8,
        hidden_dropout_prob=0.0,
        attn_layers=["local"],
        local_attn_chunk_length=4,
    )
    hf = AxialPositionEmbeddings(cfg).double().eval()
    torch.manual_seed(0)
    ours = AxialPositionEmbedding(SHAPE, DIMS).double()
    with torch.no_grad():
        for w_hf, w in zip(hf.weights, ours.weights, strict=True):
            w_hf.copy_(w.reshape(w_hf.shape))  # transformers: (n1, 1, d1), (1, n2, d2)
    return hf, ours


def test_weight_shapes_of_the_state_dict(pair):
    """The page: the factors are (n1, 1, d1) and (1, n2, d2), not 4-D."""
    hf, _ = pair
    shapes = {k: tuple(v.shape) for k, v in hf.state_dict().items()}
    assert shapes == {"weights.0": (4, 1, 3), "weights.1": (1, 6, 5)}


def test_training_dropout_drops_whole_columns_of_positions():
    """The page: dropout2d after transpose(2, 1) zeroes every feature of every position whose
    column p mod n2 was drawn, per sequence of the batch (not a feature channel)."""
    require("transformers")
    from transformers import ReformerConfig
    from transformers.models.reformer.modeling_reformer import AxialPositionEmbeddings

    cfg = ReformerConfig(
        axial_pos_shape=SHAPE,
        axial_pos_embds_dim=DIMS,
        hidden_size=8,
        hidden_dropout_prob=0.5,
        attn_layers=["local"],
        local_attn_chunk_length=4,
    )
    hf = AxialPositionEmbeddings(cfg).train()
    torch.manual_seed(0)
    out = hf(torch.arange(24).expand(16, 24)).detach()  # weights are ones: kept -> 2.0
    gone = (out == 0).all(dim=-1)  # (batch, position)
    assert set(out.unique().tolist()) == {0.0, 2.0}
    assert ((out == 0).any(dim=-1) == gone).all()  # a position loses all features or none
    cols = gone.reshape(16, 4, 6)
    assert (cols == cols[:, :1]).all()  # the same columns j in every row i
    per_seq = cols[:, 0]
    assert 0 < per_seq.sum() < per_seq.numel() and len({tuple(r) for r in per_seq.tolist()}) > 1


def test_detr_learned_positions_are_an_axial_table_with_halves_swapped():
    """The page's row-column section: DETR's table is [col | row], posenc's axial [row | col]."""
    mod = require("transformers.models.detr.modeling_detr")
    torch.manual_seed(0)
    emb = mod.DetrLearnedPositionEmbedding(embedding_dim=4)
    h, w = 3, 5
    where = emb.row_embeddings.weight.device  # the default device: cuda on the cuda leg
    pos = emb(torch.Size([1, 8, h, w]), where, torch.float32).detach()  # (1, 8, h, w)
    got = pos[0].permute(1, 2, 0).reshape(h * w, 8)
    rows, cols = emb.row_embeddings.weight[:h].detach(), emb.column_embeddings.weight[:w].detach()
    ax = posenc.axial_position_embeddings([rows, cols], h * w)
    torch.testing.assert_close(got, torch.cat([ax[:, 4:], ax[:, :4]], dim=-1), rtol=0, atol=0)


def test_eval_matches_transformers(pair):
    hf, ours = pair
    ids = torch.tensor([[0, 5, 6, 23, 11], [7, 7, 1, 2, 18]])  # (batch, seq)
    want = hf(ids)
    torch.testing.assert_close(ours(ids), want, rtol=0, atol=0)
    torch.testing.assert_close(
        posenc.axial_position_embeddings([w.detach() for w in ours.weights], ids, SHAPE),
        want,
        rtol=0,
        atol=0,
    )


def test_training_full_length_matches_transformers(pair):
    hf, ours = pair
    hf.train()
    try:
        ids = torch.arange(24).expand(2, 24)
        torch.testing.assert_close(ours(ids), hf(ids), rtol=0, atol=0)
        torch.testing.assert_close(ours(24), hf(ids)[0], rtol=0, atol=0)
        with pytest.raises(ValueError):  # transformers refuses seq != n1 * n2 in training
            hf(torch.arange(20).expand(2, 20))
    finally:
        hf.eval()


def test_loop_oracle_three_axes_and_numpy_equals_torch():
    rng = np.random.default_rng(1)
    shape, dims = (2, 3, 4), (1, 2, 3)
    tables = [rng.normal(size=(n, d)) for n, d in zip(shape, dims, strict=True)]
    got = posenc.axial_position_embeddings(tables, 24)
    for p in range(24):
        i, rest = divmod(p, 12)
        j, m = divmod(rest, 4)
        np.testing.assert_array_equal(
            got[p], np.concatenate([tables[0][i], tables[1][j], tables[2][m]])
        )
    t = posenc.axial_position_embeddings([torch.as_tensor(x) for x in tables], 24)
    np.testing.assert_array_equal(t.cpu().numpy(), got)


def test_parameter_count_and_rank():
    m = AxialPositionEmbedding((64, 64), (32, 96))
    assert sum(p.numel() for p in m.parameters()) == 64 * 32 + 64 * 96  # vs 4096 * 128
    table = m(4096).detach()
    assert table.shape == (4096, 128)
    # the first d1 features take only n1 distinct rows
    assert torch.unique(table[:, :32], dim=0).shape[0] == 64


def test_out_of_range_and_meta_reset():
    m = AxialPositionEmbedding(SHAPE, DIMS)
    with pytest.raises(ValueError, match="positions"):
        m(torch.tensor([24]))
    with pytest.raises(ValueError, match="axial_pos_shape"):
        posenc.axial_position_embeddings(list(m.weights), 3, (6, 4))
    torch.manual_seed(3)
    fresh = AxialPositionEmbedding(SHAPE, DIMS)
    with torch.device("meta"):
        meta = AxialPositionEmbedding(SHAPE, DIMS)
    meta = meta.to_empty(device=torch.get_default_device())  # where fresh was drawn
    torch.manual_seed(3)
    meta.reset_parameters()
    torch.testing.assert_close(meta(24), fresh(24), rtol=0, atol=0)

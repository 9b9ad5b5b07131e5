"""posenc.torch.LearnedPositionalEmbedding: table layout, lookups, initialisation, clear errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import oracle
import posenc
from posenc.torch import LearnedPositionalEmbedding
from posenc.torch.learned import PositionOutOfRangeError

values = pytest.mark.values


@values
@settings(max_examples=50, deadline=None)
@given(
    data=st.data(),
    max_len=st.integers(1, 40),
    dim=st.integers(1, 9),
    padding_idx=st.one_of(st.none(), st.integers(0, 3)),
)
def test_forward_matches_oracle(data, max_len, dim, padding_idx, device):
    seq = data.draw(st.integers(0, max_len))
    offset = data.draw(st.integers(0, max_len - seq))
    torch.manual_seed(data.draw(st.integers(0, 1000)))
    module = LearnedPositionalEmbedding(max_len, dim, padding_idx=padding_idx).to(
        device=device, dtype=torch.float64
    )
    x = torch.randn(seq, dim, dtype=torch.float64, device=device)
    got = module(x, offset=offset)
    table = module.weight.detach().cpu().tolist()
    want = oracle.learned_add(
        x.cpu().tolist(), table, list(range(offset, offset + seq)), module.first_row
    )
    assert got.device == x.device
    np.testing.assert_array_equal(
        got.detach().cpu().numpy().reshape(seq, dim), np.array(want).reshape(seq, dim)
    )


@values
@settings(max_examples=40, deadline=None)
@given(
    data=st.data(), max_len=st.integers(1, 30), padding_idx=st.one_of(st.none(), st.integers(0, 3))
)
def test_embed_matches_oracle(data, max_len, padding_idx, device):
    module = LearnedPositionalEmbedding(max_len, 4, padding_idx=padding_idx).to(device)
    positions = data.draw(st.lists(st.integers(0, max_len - 1), min_size=1, max_size=10))
    got = module.embed(torch.tensor(positions, device=device))
    table = module.weight.detach().cpu().double().tolist()
    zeros = [[0.0] * 4 for _ in positions]
    want = oracle.learned_add(zeros, table, positions, module.first_row)
    np.testing.assert_array_equal(got.detach().cpu().double().cpu().numpy(), np.array(want))


def test_table_layout_without_and_with_padding_idx():
    plain = LearnedPositionalEmbedding(512, 8)
    assert plain.weight.shape == (512, 8) and plain.first_row == 0 and plain.num_embeddings == 512
    opt = LearnedPositionalEmbedding(512, 8, padding_idx=1)  # OPT / BART: 512 + 2 rows
    assert opt.weight.shape == (514, 8) and opt.first_row == 2 and opt.num_embeddings == 514
    fairseq = LearnedPositionalEmbedding(100, 8, padding_idx=0)
    assert fairseq.weight.shape == (101, 8) and fairseq.first_row == 1
    assert list(opt.state_dict()) == ["weight"]
    assert [name for name, _ in opt.named_parameters()] == ["weight"]


@values
def test_position_zero_reads_row_padding_idx_plus_one():
    module = LearnedPositionalEmbedding(10, 3, padding_idx=1)
    with torch.no_grad():
        module.weight.copy_(torch.arange(12, dtype=torch.float32)[:, None].expand(12, 3))
    out = module(torch.zeros(1, 4, 3))
    np.testing.assert_array_equal(out[0, :, 0].detach().cpu().numpy(), [2.0, 3.0, 4.0, 5.0])
    np.testing.assert_array_equal(
        module.embed(torch.tensor([9]))[0].detach().cpu().numpy(), [11.0] * 3
    )


@values
def test_loads_an_opt_shaped_checkpoint():
    """OPT-125m's decoder.embed_positions.weight has 2048 + 2 rows; it loads as it is."""
    checkpoint = {"weight": torch.randn(2050, 16)}
    module = LearnedPositionalEmbedding(2048, 16, padding_idx=1)
    module.load_state_dict(checkpoint)
    torch.testing.assert_close(
        module.embed(torch.tensor([0, 2047])),
        checkpoint["weight"][[2, 2049]].to(module.weight.device),
    )


@values
@pytest.mark.parametrize("init_std", [0.02, 0.5])
def test_initialisation(init_std):
    torch.manual_seed(0)
    module = LearnedPositionalEmbedding(2048, 64, padding_idx=1, init_std=init_std)
    w = module.weight.detach().cpu().double()
    real = w[module.first_row :]
    assert abs(float(real.std()) / init_std - 1) < 0.01  # 131072 draws: std within 1%
    assert abs(float(real.mean())) < 0.01 * init_std
    assert torch.count_nonzero(w[1]) == 0  # the padding row starts at zero (fairseq)
    assert torch.count_nonzero(w[0]) == 64
    zero = LearnedPositionalEmbedding(4, 3, init_std=0.0)
    assert torch.count_nonzero(zero.weight) == 0


@values
def test_gradient_reaches_exactly_the_rows_used():
    module = LearnedPositionalEmbedding(10, 4, padding_idx=1)
    module(torch.zeros(2, 3, 4), offset=4).sum().backward()
    touched = module.weight.grad.abs().sum(-1).nonzero().flatten().tolist()
    assert touched == [6, 7, 8]  # positions 4, 5, 6 at rows 4 + 2 ...
    np.testing.assert_array_equal(module.weight.grad[6].cpu().numpy(), [2.0] * 4)  # 2 batch rows


@values
def test_left_padded_batch_with_position_ids():
    module = LearnedPositionalEmbedding(8, 4)
    mask = torch.tensor([[0, 0, 1, 1], [1, 1, 1, 1]])
    ids = posenc.position_ids(mask, pad_value=1)
    out = module(torch.zeros(2, 4, 4), positions=ids)
    torch.testing.assert_close(out[0, 2:], module.weight[0:2].detach())
    torch.testing.assert_close(out[1], module.weight[0:4].detach())
    torch.testing.assert_close(out[0, 2:], out[1, :2])  # the same tokens, the same rows


@values
def test_follows_half_and_to():
    module = LearnedPositionalEmbedding(8, 4).half()
    assert module.weight.dtype == torch.float16
    x = torch.zeros(1, 3, 4, dtype=torch.float16)
    assert module(x).dtype == torch.float16
    module = module.to(torch.float64)
    assert module(torch.zeros(1, 3, 4, dtype=torch.float64)).dtype == torch.float64
    # a float32 input stays float32 even with a float64 table
    assert module(torch.zeros(1, 3, 4)).dtype == torch.float32


# --- devices (run under every --device, meta included) ------------------------------------------


@pytest.mark.parametrize("padding_idx", [None, 1])
def test_table_and_outputs_on_device(padding_idx, device):
    module = LearnedPositionalEmbedding(16, 8, padding_idx=padding_idx)
    assert module.weight.device.type == torch.device(device).type
    x = torch.zeros(2, 5, 8, device=device)
    out = module(x, offset=11)  # the last rows: 11 .. 15
    assert out.shape == x.shape and out.device.type == torch.device(device).type
    emb = module.embed(torch.zeros(3, 2, dtype=torch.int64, device=device))
    assert emb.shape == (3, 2, 8) and emb.device.type == torch.device(device).type
    assert module(x, positions=torch.zeros(2, 5, dtype=torch.int64, device=device)).shape == x.shape
    assert module(torch.zeros(2, 0, 8, device=device), offset=16).shape == (2, 0, 8)


def test_meta_skips_the_range_check_of_embed():
    module = LearnedPositionalEmbedding(4, 2).to("meta")
    assert module.embed(torch.empty(3, dtype=torch.int64, device="meta")).shape == (3, 2)


# --- bad input ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "seq,offset,match",
    [
        (
            17,
            0,
            r"position 16 \(offset=0, seq=17\) is past the table: max_len=16 gives rows for positions 0 \.\. 15 only",
        ),
        (5, 12, r"position 16 \(offset=12, seq=5\) is past the table.*larger max_len"),
        (
            1,
            16,
            r"position 16 \(offset=16, seq=1\) is past the table.*SinusoidalPositionalEncoding",
        ),
        (
            3,
            -1,
            r"position -1 \(offset=-1, seq=3\) is negative: .*positions 0 \.\. 15 \(max_len=16\)",
        ),
    ],
)
@pytest.mark.parametrize("padding_idx", [None, 1])
def test_forward_past_the_table(seq, offset, match, padding_idx):
    module = LearnedPositionalEmbedding(16, 8, padding_idx=padding_idx)
    x = torch.zeros(2, seq, 8)
    with pytest.raises(PositionOutOfRangeError, match=match) as info:
        module(x, offset=offset)
    assert isinstance(info.value, IndexError) and isinstance(info.value, ValueError)


@pytest.mark.parametrize(
    "positions,exc,match",
    [
        (
            torch.tensor([0, 16], device="cpu"),
            PositionOutOfRangeError,
            r"position 16 is past the table: max_len=16",
        ),
        (
            torch.tensor([[3, -2]], device="cpu"),
            PositionOutOfRangeError,
            r"position -2 is negative",
        ),
        (
            torch.tensor([0.0, 1.0], device="cpu"),
            TypeError,
            r"positions must be an integer tensor, got dtype torch.float32",
        ),
        (
            torch.tensor([True], device="cpu"),
            TypeError,
            r"positions must be an integer tensor, got dtype torch.bool",
        ),
        ([0, 1], TypeError, r"positions must be an integer torch.Tensor, got list"),
        (np.array([0, 1]), TypeError, r"positions must be an integer torch.Tensor, got ndarray"),
    ],
)
def test_embed_bad_positions(positions, exc, match):
    with torch.device("cpu"):  # a table with values, under every --device (meta has none)
        module = LearnedPositionalEmbedding(16, 8, padding_idx=1)
    with pytest.raises(exc, match=match):
        module.embed(positions)
    if (
        isinstance(positions, torch.Tensor)
        and not positions.is_floating_point()
        and positions.dtype != torch.bool
    ):
        with pytest.raises(exc, match=match):  # the same check through forward(positions=...)
            module(torch.zeros(positions.shape + (8,), device="cpu"), positions=positions)


@pytest.mark.parametrize("shape", [(2, 5, 6), (2, 5, 10), (8,)])
def test_rejects_wrong_width(shape):
    module = LearnedPositionalEmbedding(16, 8)
    with pytest.raises(
        ValueError,
        match=r"x must have shape \(\.\.\., seq, 8\) \(last dim = the module's dim\), got shape",
    ):
        module(torch.zeros(shape))


@pytest.mark.parametrize("offset", [1.5, "2", None, True])
def test_bad_offset(offset):
    with pytest.raises(TypeError, match="offset must be an integer"):
        LearnedPositionalEmbedding(16, 8)(torch.zeros(1, 3, 8), offset=offset)


@pytest.mark.parametrize(
    "kw,match",
    [
        (
            {"offset": 2, "positions": torch.zeros(1, 3, dtype=torch.int64, device="cpu")},
            r"pass offset or positions, not both \(got offset=2\)",
        ),
        (
            {"positions": torch.zeros(1, 4, dtype=torch.int64, device="cpu")},
            r"positions must have a shape broadcastable to x.shape\[:-1\] = \(1, 3\), got shape \(1, 4\)",
        ),
        (
            {"positions": torch.zeros(2, 1, 3, dtype=torch.int64, device="cpu")},
            r"broadcastable to x.shape\[:-1\] = \(1, 3\), got shape \(2, 1, 3\)",
        ),
    ],
)
def test_bad_positions_in_forward(kw, match):
    with torch.device("cpu"), pytest.raises(ValueError, match=match):  # x and kw are on the CPU
        LearnedPositionalEmbedding(16, 8)(torch.zeros(1, 3, 8, device="cpu"), **kw)


@pytest.mark.parametrize(
    "args,kw,exc,match",
    [
        ((0, 8), {}, ValueError, r"max_len must be a positive integer, got 0"),
        ((-5, 8), {}, ValueError, r"max_len must be a positive integer, got -5"),
        ((2.5, 8), {}, TypeError, r"max_len must be a positive integer, got 2\.5 \(float\)"),
        ((16, 0), {}, ValueError, r"dim must be a positive integer, got 0"),
        ((16, "8"), {}, TypeError, r"dim must be a positive integer, got '8'"),
        ((16, True), {}, TypeError, r"dim must be a positive integer, got True"),
        (
            (16, 8),
            {"padding_idx": -1},
            ValueError,
            r"padding_idx must be None or a non-negative integer, got -1",
        ),
        (
            (16, 8),
            {"padding_idx": 1.0},
            TypeError,
            r"padding_idx must be None or a non-negative integer, got 1\.0",
        ),
        (
            (16, 8),
            {"padding_idx": False},
            TypeError,
            r"padding_idx must be None or a non-negative integer, got False",
        ),
        (
            (16, 8),
            {"init_std": -0.1},
            ValueError,
            r"init_std must be a finite number >= 0, got -0\.1",
        ),
        (
            (16, 8),
            {"init_std": float("nan")},
            ValueError,
            r"init_std must be a finite real number, got nan",
        ),
        (
            (16, 8),
            {"init_std": "0.02"},
            TypeError,
            r"init_std must be a finite real number, got '0.02'",
        ),
    ],
)
def test_bad_constructor_arguments(args, kw, exc, match):
    with pytest.raises(exc, match=match):
        LearnedPositionalEmbedding(*args, **kw)

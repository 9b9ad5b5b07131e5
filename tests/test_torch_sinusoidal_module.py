"""posenc.torch.SinusoidalPositionalEncoding: a thin shell over posenc.sinusoidal."""

from __future__ import annotations

import pytest
import torch

import posenc
from posenc.torch import SinusoidalPositionalEncoding

pytestmark = pytest.mark.values


def test_adds_the_table(device):
    module = SinusoidalPositionalEncoding(16, max_len=32)
    x = torch.randn(2, 10, 16, dtype=torch.float64).to(torch.get_default_dtype())
    out = module(x)
    want = x + posenc.sinusoidal(torch.arange(10), 16)
    torch.testing.assert_close(out, want)
    assert out.device == x.device


def test_offset_and_past_max_len_agree_with_the_function():
    module = SinusoidalPositionalEncoding(8, max_len=16)
    x = torch.zeros(1, 6, 8)
    for offset in (0, 3, 10, 14, 100, -4):  # 14 and 100 run past max_len, -4 is before 0
        want = posenc.sinusoidal(torch.arange(offset, offset + 6), 8)
        torch.testing.assert_close(module(x, offset=offset)[0], want, atol=3e-7, rtol=0)


def test_table_is_a_non_persistent_buffer():
    module = SinusoidalPositionalEncoding(8, max_len=16)
    assert "table" in dict(module.named_buffers())
    assert module.state_dict() == {}
    assert not any(p.requires_grad for p in module.parameters())


def test_follows_half_and_to():
    module = SinusoidalPositionalEncoding(8, max_len=16).half()
    assert module.table.dtype == torch.float16
    x = torch.zeros(1, 4, 8, dtype=torch.float16)
    assert module(x).dtype == torch.float16
    module = module.to(torch.float64)
    assert module(x.double()).dtype == torch.float64


@pytest.mark.parametrize("layout", ["interleaved", "concat"])
def test_layout_is_passed_through(layout):
    module = SinusoidalPositionalEncoding(8, max_len=4, layout=layout, base=500.0)
    torch.testing.assert_close(
        module.table, posenc.sinusoidal(torch.arange(4), 8, layout=layout, base=500.0)
    )


def test_dropout_only_in_training():
    module = SinusoidalPositionalEncoding(8, max_len=16, dropout=0.5).eval()
    x = torch.zeros(1, 4, 8)
    torch.testing.assert_close(module(x)[0], module.table[:4])
    module.train()
    torch.manual_seed(0)
    assert (module(x) == 0).any()

"""Device propagation: outputs land on the input's device with the right shape and dtype.

This module runs under every ``--device`` (meta included, where no values exist): it catches
tensors created on the CPU by accident.
"""

from __future__ import annotations

import pytest
import torch

import posenc
from posenc.torch import SinusoidalPositionalEncoding


@pytest.mark.parametrize("layout", ["interleaved", "concat"])
@pytest.mark.parametrize("positions", [(7,), (3, 5)])
def test_sinusoidal_stays_on_device(device, positions, layout):
    pos = torch.zeros(positions, dtype=torch.int64, device=device)
    out = posenc.sinusoidal(pos, 8, layout=layout)
    assert out.device.type == torch.device(device).type
    assert tuple(out.shape) == positions + (8,)
    assert out.dtype == torch.get_default_dtype()
    out = posenc.sinusoidal(pos.to(torch.float32), 8, dtype=torch.bfloat16)
    assert out.device.type == torch.device(device).type and out.dtype == torch.bfloat16


def test_module_buffer_and_output_on_device(device):
    module = SinusoidalPositionalEncoding(8, max_len=16)
    assert module.table.device.type == torch.device(device).type
    x = torch.zeros(2, 20, 8, device=device)  # 20 > max_len: computed on the fly
    out = module(x, offset=3)
    assert out.device.type == torch.device(device).type and out.shape == x.shape

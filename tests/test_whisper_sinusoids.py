"""posenc.compat.whisper_sinusoids: bit for bit against WhisperEncoder's embed_positions."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from ci_rule import require
from posenc import compat


@pytest.fixture(scope="module")
def whisper():
    require("transformers")
    from transformers import WhisperConfig
    from transformers.models.whisper import modeling_whisper

    cfg = WhisperConfig(
        d_model=16,
        encoder_layers=1,
        encoder_attention_heads=2,
        encoder_ffn_dim=8,
        num_mel_bins=4,
        max_source_positions=40,
    )
    torch.manual_seed(0)
    return modeling_whisper, modeling_whisper.WhisperEncoder(cfg)


def test_encoder_table_bit_for_bit(whisper):
    _, enc = whisper
    table = enc.embed_positions.weight.detach()
    assert table.shape == (40, 16)
    got = compat.whisper_sinusoids(40, 16, like=table)
    assert got.dtype == torch.float32 and torch.equal(got, table)


@pytest.mark.parametrize("length,channels", [(1500, 384), (1500, 1280), (448, 6)])
def test_sinusoids_bit_for_bit_at_model_sizes(whisper, length, channels):
    mod, _ = whisper
    want = mod.sinusoids(length, channels)
    assert torch.equal(compat.whisper_sinusoids(length, channels, like=torch.zeros(0)), want)
    exact = compat.whisper_sinusoids(length, channels)  # NumPy: angles in float64
    # the original's float32 angles: off by up to ~position * 2**-24 * ... (1e-4 at 1500)
    assert np.abs(exact - want.cpu().numpy()).max() < 2e-4


def test_numpy_is_the_exact_ladder_and_equals_tensor2tensor():
    got = compat.whisper_sinusoids(50, 12, max_timescale=500.0)
    inv = np.exp(-np.arange(6) * np.log(500.0) / 5)
    ang = np.arange(50)[:, None] * inv
    want = np.concatenate([np.sin(ang), np.cos(ang)], axis=1).astype(np.float32)
    np.testing.assert_array_equal(got, want)
    t2t = compat.tensor2tensor_timing_signal_1d(50, 12, max_timescale=500.0)[0]
    np.testing.assert_array_equal(got, t2t)


def test_refusals():
    with pytest.raises(ValueError, match="channels"):
        compat.whisper_sinusoids(4, 2)
    with pytest.raises(ValueError, match="channels"):
        compat.whisper_sinusoids(4, 7)
    with pytest.raises(TypeError, match="like"):
        compat.whisper_sinusoids(4, 8, like=np.zeros(1))

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


@pytest.mark.parametrize("name", ["openai--whisper-tiny", "openai--whisper-large-v3"])
def test_describe_gives_both_tables_as_transformers_builds_them(name):
    """describe(config.json) of a shipped Whisper file (issue 20, item 5): the encoder's fixed
    table of max_source_positions rows, the decoder's learned one of max_target_positions rows,
    as WhisperModel (transformers 5.24) builds them from the same file (on the meta device)."""
    import json
    from pathlib import Path

    import posenc.hf

    require("transformers")
    from transformers import WhisperConfig, WhisperModel
    from transformers.models.whisper.modeling_whisper import WhisperPositionalEmbedding

    path = Path(__file__).parent / "hf_corpus" / "sinusoidal" / f"{name}.json"
    config = json.loads(path.read_text(encoding="utf-8"))
    scheme = posenc.hf.describe(config)
    f = scheme.fixed
    with torch.device("meta"):
        model = WhisperModel(WhisperConfig.from_dict(config))
    enc, dec = model.encoder.embed_positions, model.decoder.embed_positions
    assert (f["length"], f["dim"]) == (enc.num_embeddings, enc.embedding_dim)
    assert not enc.weight.requires_grad  # fixed: the sinusoids, frozen
    assert isinstance(dec, WhisperPositionalEmbedding) and dec.weight.requires_grad
    assert (f["decoder_table"], f["decoder_length"]) == ("learned", dec.num_embeddings)
    assert dec.embedding_dim == f["dim"]
    assert scheme.sources["length"] == "config['max_source_positions']"
    assert scheme.sources["decoder_length"] == "config['max_target_positions']"
    text = scheme.explain()
    assert f"posenc.compat.whisper_sinusoids({f['length']}, {f['dim']})" in text
    assert f"decoder_length = {f['decoder_length']}  <- config['max_target_positions']" in text
    # the table that call builds is the encoder's (tests above: bit for bit)
    assert posenc.hf.describe(config).function()(4).shape == (4, f["dim"])

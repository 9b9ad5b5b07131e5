"""Llama 4's query temperature on NoPE layers (issue 20, goal 4): ``Scheme.scale_queries``
against transformers' own ``Llama4TextAttention`` (5.24, models/llama4/modeling_llama4.py), whose
queries are captured where they enter the attention function, at small and large cache
positions, in float64 and float32."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

import posenc.hf as hf
from ci_rule import require

torch = require("torch")
require("transformers")
from transformers.models.llama4 import modeling_llama4  # noqa: E402
from transformers.models.llama4.configuration_llama4 import Llama4TextConfig  # noqa: E402

CORPUS = Path(__file__).parent / "hf_corpus" / "llama4"
SMALL = {
    "model_type": "llama4_text",
    "hidden_size": 64,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 16,
    "num_hidden_layers": 4,
    "intermediate_size": 32,
    "intermediate_size_mlp": 32,
    "attn_scale": 0.25,
    "floor_scale": 4,
}


class _Cache:
    """The two calls Llama4TextAttention makes of a cache: ``past`` tokens already seen."""

    def __init__(self, past: int) -> None:
        self.past = past

    def get_seq_length(self, layer_idx: int = 0) -> int:
        return self.past

    def update(self, key, value, layer_idx, kwargs=None):
        return key, value


def _model_queries(cfg: dict, layer: int, hidden, past: int, monkeypatch):
    """The query states transformers' attention of ``layer`` hands its attention function."""
    config = Llama4TextConfig(**{k: v for k, v in cfg.items() if k != "model_type"})
    config._attn_implementation = "eager"
    attn = modeling_llama4.Llama4TextAttention(config, layer).to(hidden.dtype)
    seen = {}

    def capture(module, query, key, value, attention_mask, **kwargs):
        seen["q"] = query
        return torch.zeros_like(query).transpose(1, 2), None

    monkeypatch.setattr(modeling_llama4, "eager_attention_forward", capture)
    batch, seq = hidden.shape[:2]
    cos = torch.ones(batch, seq, cfg["head_dim"] // 2, dtype=torch.complex64)
    with torch.no_grad():
        attn(hidden, cos, None, cache=_Cache(past) if past else None)
        raw = attn.q_proj(hidden).view(batch, seq, -1, cfg["head_dim"]).transpose(1, 2)
    return raw, seen["q"]


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("past", [0, 5, 100_000, 3_000_000])
def test_scale_queries_is_llama4_attention(past, dtype, monkeypatch):
    torch.manual_seed(0)
    cfg = {**SMALL, "floor_scale": 4 if past < 1000 else 8192}
    scheme = hf.describe(cfg)
    nope = [i for i in range(4) if scheme.layer(i).kind == "nope"]
    assert nope == [3]
    hidden = torch.randn(2, 6, 64, dtype=dtype)
    raw, want = _model_queries(cfg, 3, hidden, past, monkeypatch)
    positions = torch.arange(6) + past
    got = scheme.scale_queries(raw, positions, layer=3)
    tol = 1e-12 if dtype == torch.float64 else 1e-6
    torch.testing.assert_close(got, want, rtol=tol, atol=tol)
    assert not torch.equal(got, raw)  # the temperature did something here
    np_got = scheme.scale_queries(
        raw.cpu().numpy(), positions.cpu().numpy()[None].repeat(2, 0), layer=3
    )
    np.testing.assert_allclose(np_got, want.cpu().numpy(), rtol=1e-6 if past else tol)
    # a rotating layer's queries are left alone by scale_queries
    assert scheme.scale_queries(raw, positions, layer=0) is raw


def test_temperature_values_and_the_shipped_files():
    for path in sorted(CORPUS.glob("*.json")):
        scheme = hf.describe(json.loads(path.read_text(encoding="utf-8")))
        temps = {i: scheme.layer(i).query_temperature for i in range(scheme.num_layers)}
        assert {i for i, t in temps.items() if t} == {
            i for i in range(scheme.num_layers) if scheme.layer(i).kind == "nope"
        }
        assert temps[3] == {"attn_scale": 0.1, "floor_scale": 8192}
        q = np.ones((1, 1, 4, 128))
        out = scheme.scale_queries(q, np.array([0, 8190, 8191, 100_000]), layer=3)[0, 0, :, 0]
        # 1 below floor_scale - 1; 1 + 0.1 ln 2 at p = 8191; 1 + 0.1 ln 13 at p = 10**5
        np.testing.assert_allclose(
            out, [1.0, 1.0, 1 + 0.1 * math.log(2), 1 + 0.1 * math.log(13)], rtol=1e-7
        )
        text = scheme.explain()
        assert "1 + 0.1·log1p(floor((p + 1) / 8192))" in text
        assert "window = 8192  <- config['text_config']['attention_chunk_size']" in text


def test_temperature_off_and_bad_keys():
    off = hf.describe({**SMALL, "attn_temperature_tuning": False})
    assert off.layer(3).query_temperature is None
    q = np.ones((1, 1, 2, 16))
    assert off.scale_queries(q, [0, 1], layer=3) is q
    assert "attn_temperature_tuning" in off.sources["query temperature"]
    with pytest.raises(TypeError, match=r"config\['attn_temperature_tuning'\]"):
        hf.describe({**SMALL, "attn_temperature_tuning": "false"})
    with pytest.raises(TypeError, match=r"config\['attn_scale'\] must be a number"):
        hf.describe({**SMALL, "attn_scale": "0.1"})
    with pytest.raises(ValueError, match=r"config\['floor_scale'\] must be >= 1"):
        hf.describe({**SMALL, "floor_scale": 0})
    with pytest.raises(ValueError, match=r"positions must have shape"):
        hf.describe(SMALL).scale_queries(np.ones((1, 1, 2, 16)), [0, 1, 2], layer=3)


def test_negative_cache_positions_are_refused():
    """issue 40, item 5: transformers forms cache positions as arange(seq) + past_seen_tokens,
    never negative; at -8193 posenc returned -inf queries (log1p(floor(-8192 / 8192)) =
    log1p(-1)). Refused by name, eagerly in NumPy and torch, and in a compiled graph."""
    scheme = hf.describe({**SMALL, "floor_scale": 8192, "attn_scale": 0.1})
    q = np.ones((1, 1, 2, 16), dtype=np.float32)
    for positions in (np.array([-8193, -8192]), torch.tensor([-8193, -8192]),
                      np.array([-1.0, 0.0]), torch.tensor([0, -1], dtype=torch.int16)):  # fmt: skip
        with pytest.raises(ValueError, match=r"positions must be cache positions >= 0.*-"):
            scheme.scale_queries(q if isinstance(positions, np.ndarray) else torch.ones(1, 1, 2, 16),
                                 positions, layer=3)  # fmt: skip

    def fn(q, positions):
        return scheme.scale_queries(q, positions, layer=3)

    compiled = torch.compile(fn, fullgraph=True, backend="eager")
    tq = torch.ones(1, 1, 2, 16)
    torch.testing.assert_close(compiled(tq, torch.tensor([8191, 100_000])),
                               fn(tq, torch.tensor([8191, 100_000])))  # fmt: skip
    with pytest.raises(RuntimeError, match="positions must be cache positions >= 0"):
        compiled(tq, torch.tensor([-8193, 0]))


def test_scale_queries_under_vmap_equals_a_loop():
    """Inside torch.func.vmap no value is read (the negative-position check is skipped, as
    under torch.compile): each query set scaled as alone."""
    scheme = hf.describe(SMALL)
    q = torch.randn(3, 1, 2, 2, 16, generator=torch.Generator().manual_seed(0))
    positions = torch.tensor([[0, 3], [4, 7], [100, 101]])
    got = torch.func.vmap(lambda a, p: scheme.scale_queries(a, p, layer=3))(q, positions)
    want = torch.stack([scheme.scale_queries(q[i], positions[i], layer=3) for i in range(3)])
    torch.testing.assert_close(got, want, rtol=0, atol=0)
    assert not torch.equal(got[2], q[2])  # scaled: positions past floor_scale

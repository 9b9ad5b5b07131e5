"""``Scheme.rotate`` with dynamic and LongRoPE scaling: the current length ``max(position_ids) + 1``
read as transformers reads it (issue 21, items 10 and 21).

transformers' ``dynamic_rope_update`` keeps the trained frequencies while ``max(position_ids) + 1``
is at most the trained length, and grows them (dynamic NTK) or switches to ``long_factor``
(LongRoPE) past it. posenc passed ``int(ids.max()) + 1`` on as ``seq_len``: negative ids gave
``seq_len`` 0 and an error about an argument ``rotate`` does not have, uint64 tensors have no
``max`` in torch, meta tensors no values, ids past 2**53 a ``seq_len`` message, and the Python
int stopped torch.compile and torch.export (tests/test_compile.py holds those).
"""

from __future__ import annotations

import numpy as np
import pytest

import posenc
import posenc.hf as hf
from ci_rule import require

torch = require("torch")

BASE = {"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 2}
DYNAMIC = {
    **BASE,
    "max_position_embeddings": 16,
    "rope_scaling": {"rope_type": "dynamic", "factor": 2.0},
}
LONGROPE = {
    **BASE,
    "model_type": "phi3",
    "max_position_embeddings": 64,
    "original_max_position_embeddings": 16,
    "rope_scaling": {
        "rope_type": "longrope",
        "short_factor": [1.0 + i / 10 for i in range(8)],
        "long_factor": [2.0 + i for i in range(8)],
    },
}
CONFIGS = {"dynamic": DYNAMIC, "longrope": LONGROPE}
IDS = {
    "negative": [[-4, -3, -2, -1]],
    "short": [[0, 1, 2, 3]],
    "at-trained": [[12, 13, 14, 15]],  # max + 1 == 16: still the trained frequencies
    "long": [[20, 21, 22, 30]],
    "fractional": [[0.5, 1.5, 16.25, 20.5]],  # max + 1 = 21.5, as torch.max(ids) + 1 gives
    "per-batch": [[0, 1, 2, 3], [-9, 40, 2, 3]],  # one length for the whole batch
}


def _x(batch=1, dtype=np.float64):
    return np.random.default_rng(0).standard_normal((batch, 2, 4, 16)).astype(dtype)


def _trained(scheme, x, ids):
    """The rotation with the trained frequencies (seq_len None)."""
    spec = scheme.layer(0)
    return posenc.apply_rope(
        x, np.asarray(ids)[:, None, :], base=spec.base, pairing=spec.pairing, scaling=spec.scaling
    )


@pytest.fixture(scope="module")
def schemes():
    return {name: hf.describe(cfg) for name, cfg in CONFIGS.items()}


@pytest.fixture(scope="module")
def transformers_rotary():
    """transformers' own rotary module for each config (a fresh one per call: it keeps state)."""
    transformers = require("transformers")
    from transformers.models.llama import modeling_llama
    from transformers.models.phi3 import modeling_phi3

    def make(name):
        if name == "dynamic":
            cfg = transformers.LlamaConfig(
                **{k: v for k, v in DYNAMIC.items() if k != "model_type"}
            )
            return modeling_llama.LlamaRotaryEmbedding(cfg), modeling_llama.apply_rotary_pos_emb
        cfg = transformers.Phi3Config(**{k: v for k, v in LONGROPE.items() if k != "model_type"})
        return modeling_phi3.Phi3RotaryEmbedding(cfg), modeling_phi3.apply_rotary_pos_emb

    return make


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("rope_type", list(CONFIGS))
@pytest.mark.parametrize("label", list(IDS))
def test_rotate_equals_transformers_at_every_length(schemes, transformers_rotary, rope_type, label):
    scheme = schemes[rope_type]
    ids = IDS[label]
    x = _x(len(ids))
    rotary, apply = transformers_rotary(rope_type)
    q = torch.as_tensor(x)  # on the device under test (the cuda leg too)
    cos, sin = rotary.to(q.device)(q.float(), torch.tensor(ids))
    want, _ = apply(q.float(), q.float(), cos, sin)
    for got in (scheme.rotate(x, np.array(ids)), scheme.rotate(q, torch.tensor(ids)).cpu().numpy()):
        np.testing.assert_allclose(got, want.double().cpu().numpy(), rtol=0, atol=2e-5)


@pytest.mark.parametrize("rope_type", list(CONFIGS))
def test_negative_and_short_ids_keep_the_trained_frequencies(schemes, rope_type):
    scheme = schemes[rope_type]
    x = _x()
    for label in ("negative", "short", "at-trained"):
        ids = np.array(IDS[label])
        want = _trained(scheme, x, ids)
        np.testing.assert_allclose(scheme.rotate(x, ids), want, rtol=0, atol=1e-13)
        got = scheme.rotate(torch.as_tensor(x), torch.as_tensor(ids))
        np.testing.assert_allclose(got.cpu().numpy(), want, rtol=0, atol=1e-13)
    # past the trained length the frequencies change (else the test above proves nothing)
    long = np.array(IDS["long"])
    assert not np.allclose(scheme.rotate(x, long), _trained(scheme, x, long), atol=1e-6)


@pytest.mark.parametrize("rope_type", list(CONFIGS))
def test_every_integer_dtype_gives_the_int64_rotation(schemes, rope_type):
    scheme = schemes[rope_type]
    x = torch.as_tensor(_x())
    ids = torch.tensor(IDS["long"])
    want = scheme.rotate(x, ids)
    for dtype in (torch.uint8, torch.int16, torch.int32, torch.uint32, torch.uint64):
        torch.testing.assert_close(scheme.rotate(x, ids.to(dtype)), want, rtol=0, atol=0)
    want_np = scheme.rotate(x.cpu().numpy(), np.array(IDS["long"]))
    for dtype in (np.uint64, np.int32, np.uint16):
        got = scheme.rotate(x.cpu().numpy(), np.array(IDS["long"], dtype=dtype))
        np.testing.assert_array_equal(got, want_np)


@pytest.mark.parametrize("rope_type", list(CONFIGS))
def test_meta_tensors_give_a_meta_result(schemes, rope_type):
    x = torch.from_numpy(_x()).float().to("meta")
    out = schemes[rope_type].rotate(x, torch.tensor(IDS["long"]).to("meta"))
    assert out.device.type == "meta" and out.shape == x.shape and out.dtype == torch.float32


@pytest.mark.parametrize("rope_type", list(CONFIGS))
@pytest.mark.parametrize(
    "ids",
    [
        np.array([[0, 1, 2, 2**53]]),
        np.array([[0, 1, 2, 2**63]], dtype=np.uint64),
        np.array([[0.0, 1.0, 2.0, 2.0**60]]),
        torch.tensor([[0, 1, 2, 2**53]]),
        torch.tensor([[0, 1, 2, 2**63]], dtype=torch.uint64),
    ],
    ids=["np-2**53", "np-uint64-2**63", "np-float-2**60", "torch-2**53", "torch-uint64-2**63"],
)
def test_ids_past_2_53_are_refused_by_name(schemes, rope_type, ids):
    x = _x() if isinstance(ids, np.ndarray) else torch.as_tensor(_x())
    with pytest.raises(ValueError, match=r"position_ids must be < 2\*\*53") as info:
        schemes[rope_type].rotate(x, ids)
    assert "seq_len" not in str(info.value)
    # one below is rotated (at the grown length), finite
    below = (np.array([[0, 1, 2, 2**53 - 1]]) if isinstance(ids, np.ndarray)
             else torch.tensor([[0, 1, 2, 2**53 - 1]]))  # fmt: skip
    out = schemes[rope_type].rotate(x, below)
    assert np.isfinite(out.cpu().numpy() if torch.is_tensor(out) else out).all()


def test_an_overflowing_dynamic_base_names_position_ids():
    cfg = {**DYNAMIC, "rope_scaling": {"rope_type": "dynamic", "factor": 1e300}}
    with pytest.raises(ValueError, match=r"max\(position_ids\) \+ 1 = 41 .* overflow"):
        hf.describe(cfg).rotate(_x(), np.array([[0, 1, 2, 40]]))

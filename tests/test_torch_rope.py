"""posenc.torch.RotaryEmbedding: a cos/sin cache in front of posenc.apply_rope.

Tests marked ``values`` compare numbers; the others check shapes, dtypes and devices and also
run under ``--device meta``.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import oracle_rope as oracle
import posenc
import posenc.torch.rope as module_rope
import seeded
from posenc.torch import RotaryEmbedding

values = pytest.mark.values


def _qk(shape_q=(2, 4, 6, 16), shape_k=(2, 2, 6, 16), dtype=None):
    gen = torch.Generator(device="cpu").manual_seed(0)
    q = seeded.randn(shape_q, generator=gen, dtype=torch.float64)
    k = seeded.randn(shape_k, generator=gen, dtype=torch.float64)
    dtype = dtype or torch.get_default_dtype()
    return q.to(device=torch.get_default_device(), dtype=dtype), k.to(
        device=torch.get_default_device(), dtype=dtype
    )


@values
@pytest.mark.parametrize("pairing", ["interleaved", "half"])
@pytest.mark.parametrize("rotary_dim", [None, 8])
def test_cached_path_equals_apply_rope(pairing, rotary_dim):
    rope = RotaryEmbedding(16, pairing=pairing, rotary_dim=rotary_dim, max_len=64, base=500.0)
    q, k = _qk()
    for offset in (0, 5, 58):
        q_rot, k_rot = rope(q, k, offset=offset)
        pos = torch.arange(offset, offset + 6)
        kw = {"pairing": pairing, "rotary_dim": rotary_dim, "base": 500.0}
        torch.testing.assert_close(q_rot, posenc.apply_rope(q, pos, **kw), atol=1e-6, rtol=0)
        torch.testing.assert_close(k_rot, posenc.apply_rope(k, pos, **kw), atol=1e-6, rtol=0)


@values
def test_cache_is_exact_and_matches_oracle():
    rope = RotaryEmbedding(8, max_len=2**12, base=10.0)
    thetas = [10.0 ** (-2 * i / 8) for i in range(4)]
    want_cos = np.array([[np.cos(m * t) for t in thetas] for m in (0, 1, 4095)])
    got = rope.cos_cached[[0, 1, 4095]].double().cpu().numpy()
    np.testing.assert_allclose(
        got, want_cos, atol=6e-8, rtol=0
    )  # float32 rounding of the exact value
    v = np.random.default_rng(0).normal(size=(3, 8))
    x = torch.tensor(v, dtype=torch.float32)
    q_rot, _ = rope(x, x, positions=torch.tensor([0, 1, 4095]))
    want = oracle.rope(v.astype(np.float32).astype(float).tolist(), [0, 1, 4095], base=10.0)
    np.testing.assert_allclose(q_rot.double().cpu().numpy(), np.array(want), atol=1e-6, rtol=0)


@values
def test_no_recomputation_when_positions_fit(monkeypatch):
    rope = RotaryEmbedding(16, max_len=32)
    q, k = _qk()

    def refuse(*args, **kwargs):
        raise AssertionError("recomputed cos/sin although the positions fit the cache")

    monkeypatch.setattr(module_rope, "_cos_sin", refuse)
    rope(q, k, offset=3)
    rope(q, k, positions=torch.tensor([[0, 1, 2, 3, 4, 5], [31, 30, 2, 9, 0, 1]]))  # per-batch ids
    with pytest.raises(AssertionError, match="recomputed"):
        rope(q, k, offset=30)  # runs past max_len


@values
@pytest.mark.parametrize(
    "positions",
    [
        np.arange(6) + 100,  # past max_len
        np.array([-3, -2, -1, 0, 1, 2]),  # negative
        np.array([0.5, 1.5, 2.25, 3, 4, 1e6]),  # fractional and far
        np.array([[0, 1, 2, 3, 4, 5], [40, 41, 42, 43, 44, 45]]),  # per-batch, half inside
    ],
)
def test_positions_outside_the_cache_are_exact(positions):
    rope = RotaryEmbedding(16, max_len=32, pairing="half")
    q, k = _qk()
    q_rot, k_rot = rope(q, k, positions=torch.as_tensor(positions))
    torch.testing.assert_close(
        q_rot, posenc.apply_rope(q, torch.as_tensor(positions), pairing="half"), atol=1e-6, rtol=0
    )
    torch.testing.assert_close(
        k_rot, posenc.apply_rope(k, torch.as_tensor(positions), pairing="half"), atol=1e-6, rtol=0
    )


@values
def test_float64_input_never_uses_the_float32_cache():
    rope = RotaryEmbedding(16, max_len=64)
    q, k = _qk(dtype=torch.float64)
    q_rot, _ = rope(q, k, offset=7)
    want = posenc.apply_rope(q, torch.arange(7, 13))
    torch.testing.assert_close(q_rot, want, atol=1e-14, rtol=0)


@values
def test_scaling_and_attention_factor_pass_through():
    scaling = {"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 16}
    rope = RotaryEmbedding(16, max_len=128, scaling=scaling, pairing="half")
    q, k = _qk()
    pos = torch.arange(20, 26)
    q_rot, _ = rope(q, k, offset=20)
    torch.testing.assert_close(
        q_rot, posenc.apply_rope(q, pos, scaling=scaling, pairing="half"), atol=2e-6, rtol=0
    )
    assert rope.attention_factor == posenc.rope_frequencies(16, scaling=scaling)[1] > 1


@values
def test_relative_property_holds_in_a_kv_cache():
    """Keys rotated when written (offset 0..), a query rotated at a later step: scores = by offset."""
    rope = RotaryEmbedding(16, max_len=64)
    q, k = _qk((1, 1, 6, 16), (1, 1, 6, 16), dtype=torch.float64)
    _, k_cache = rope(k, k)  # positions 0..5
    q_last, _ = rope(q[:, :, -1:], q[:, :, -1:], offset=5)
    scores = (q_last @ k_cache.transpose(-1, -2))[0, 0, 0]
    # the same scores with every position shifted by 1000
    _, k_far = rope(k, k, offset=1000)
    q_far, _ = rope(q[:, :, -1:], q[:, :, -1:], offset=1005)
    torch.testing.assert_close(
        (q_far @ k_far.transpose(-1, -2))[0, 0, 0], scores, atol=1e-10, rtol=0
    )


@values
def test_dynamic_ntk_kv_cache_pitfall():
    """Keys cached with one dynamic-NTK length and queries rotated with a longer one disagree."""
    dyn = {"rope_type": "dynamic", "factor": 4.0, "original_max_position_embeddings": 16}
    short = RotaryEmbedding(16, max_len=64, scaling=dyn, seq_len=16)
    longer = RotaryEmbedding(16, max_len=64, scaling=dyn, seq_len=48)
    q, k = _qk((1, 1, 1, 16), (1, 1, 1, 16), dtype=torch.float64)

    def score(q_rope, k_rope, m, n):
        return float((q_rope(q, q, offset=m)[0] * k_rope(k, k, offset=n)[1]).sum())

    consistent = [score(longer, longer, m, m - 3) for m in (3, 20, 40)]
    mixed = [score(longer, short, m, m - 3) for m in (3, 20, 40)]
    assert max(consistent) - min(consistent) < 1e-9
    assert max(mixed) - min(mixed) > 1e-3


def test_buffers_are_non_persistent():
    rope = RotaryEmbedding(8, max_len=16)
    assert {"cos_cached", "sin_cached"} <= set(dict(rope.named_buffers()))
    assert rope.state_dict() == {}
    assert list(rope.parameters()) == []
    assert tuple(rope.cos_cached.shape) == (16, 4)
    assert "pairing='interleaved'" in repr(rope)


def test_follows_half_and_to(device):
    rope = RotaryEmbedding(8, max_len=16, rotary_dim=4).half()
    # the cache stays float32 (recomputed exactly), so half-precision rotations stay correctly rounded
    assert (
        rope.cos_cached.dtype == torch.float32
        and rope.cos_cached.device.type == torch.device(device).type
    )
    q = torch.zeros(1, 3, 8, dtype=torch.float16)
    q_rot, k_rot = rope(q, q)
    assert q_rot.dtype == torch.float16 and q_rot.shape == q.shape
    rope = rope.to(torch.float64)
    assert rope(q.double(), q.double())[0].dtype == torch.float64
    rope = rope.to(torch.bfloat16)
    q_rot, _ = rope(q.to(torch.bfloat16), q.to(torch.bfloat16), offset=100)  # past max_len
    assert q_rot.dtype == torch.bfloat16


@values
def test_half_module_within_own_rounding():
    rope = RotaryEmbedding(64, max_len=2**17 + 1).to(torch.bfloat16)
    q = seeded.randn(
        1, 256, 64, dtype=torch.float64, generator=torch.Generator().manual_seed(0)
    ).to(torch.bfloat16)
    pos = torch.arange(2**17 - 255, 2**17 + 1)
    got, _ = rope(q, q, positions=pos)
    want = posenc.apply_rope(q.double(), pos)
    # the cache stays float32 after .to(bfloat16): the same result as the function, one rounding
    ulp = 2.0 ** np.floor(np.log2(float(want.abs().max()))) * torch.finfo(torch.bfloat16).eps
    assert float((got.double() - want).abs().max()) <= ulp


def test_outputs_on_device(device):
    """Shapes, dtypes and devices (also under --device meta)."""
    rope = RotaryEmbedding(16, max_len=8, rotary_dim=8, pairing="half")
    assert rope.cos_cached.device.type == torch.device(device).type
    q = torch.zeros(2, 4, 5, 16, device=device)
    k = torch.zeros(2, 1, 5, 16, device=device)
    for kw in (
        {},
        {"offset": 6},
        {"positions": torch.arange(5, device=device)},
        {"positions": torch.zeros(2, 5, device=device, dtype=torch.int64) + 3},
        {"positions": torch.full((2, 5), 2.5, device=device)},
    ):
        q_rot, k_rot = rope(q, k, **kw)
        assert q_rot.device.type == torch.device(device).type and q_rot.shape == q.shape
        assert k_rot.shape == k.shape and k_rot.dtype == k.dtype
    out = posenc.apply_rope(q.to(torch.bfloat16), 5, scaling={"rope_type": "linear", "factor": 2.0})
    assert (
        out.device.type == torch.device(device).type
        and out.dtype == torch.bfloat16
        and out.shape == q.shape
    )
    out = posenc.apply_rope(q, torch.zeros(2, 5, device=device), rotary_dim=4)
    assert out.device.type == torch.device(device).type and out.shape == q.shape


# --- bad input -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args,kwargs,exc,match",
    [
        ((7,), {}, ValueError, r"dim must be a positive even integer, got 7"),
        ((8.0,), {}, TypeError, r"dim must be a positive even integer, got 8\.0"),
        ((7,), {"rotary_dim": 4}, None, None),  # odd head dim is fine with an even rotary_dim
        ((8,), {"rotary_dim": 10}, ValueError, r"rotary_dim must be <= dim \(8\), got 10"),
        ((8,), {"rotary_dim": 5}, ValueError, r"rotary_dim must be a positive even integer, got 5"),
        (
            (8,),
            {"pairing": "neox"},
            ValueError,
            r"pairing must be one of 'interleaved', 'half', got 'neox'",
        ),
        ((8,), {"max_len": 0}, ValueError, r"max_len must be a positive integer, got 0"),
        ((8,), {"max_len": 2.5}, TypeError, r"max_len must be a positive integer"),
        ((8,), {"base": -1.0}, ValueError, r"base must be a finite number > 0 and != 1"),
        (
            (8,),
            {"scaling": {"rope_type": "yarn"}},
            ValueError,
            r"is missing 'factor', 'original_max_position_embeddings'",
        ),
        (
            (8,),
            {"scaling": {"rope_type": "su"}},
            ValueError,
            r"scaling\['rope_type'\] must be one of 'default'",
        ),
        ((8,), {"seq_len": 0}, ValueError, r"seq_len must be an integer >= 1, got 0"),
    ],
)
def test_module_bad_arguments(args, kwargs, exc, match):
    if exc is None:
        assert RotaryEmbedding(*args, **kwargs).rotary_dim == kwargs["rotary_dim"]
        return
    with pytest.raises(exc, match=match):
        RotaryEmbedding(*args, **kwargs)


Q = torch.zeros(1, 3, 8, device="cpu")


@pytest.mark.parametrize(
    "q,k,kwargs,exc,match",
    [
        (
            torch.zeros(1, 3, 6, device="cpu"),
            Q,
            {},
            ValueError,
            r"q must have shape \(\.\.\., seq, 8\).*got shape \(1, 3, 6\)",
        ),
        (Q, torch.zeros(8, device="cpu"), {}, ValueError, r"k must have shape \(\.\.\., seq, 8\)"),
        (
            Q,
            torch.zeros(1, 4, 8, device="cpu"),
            {},
            ValueError,
            r"q and k must have the same seq length .* got 3 and 4",
        ),
        (Q.long(), Q, {}, TypeError, r"q must be a floating tensor"),
        (np.zeros((1, 3, 8)), Q, {}, TypeError, r"q must be a floating tensor, got ndarray"),
        (Q, Q, {"offset": 1.5}, TypeError, r"offset must be an integer, got 1\.5"),
        (Q, Q, {"offset": "2"}, TypeError, r"offset must be an integer"),
        (
            Q,
            Q,
            {"positions": torch.arange(3, device="cpu"), "offset": 2},
            ValueError,
            r"pass positions or offset, not both",
        ),
        (
            Q,
            Q,
            {"positions": torch.arange(4, device="cpu")},
            ValueError,
            r"positions of shape \(4,\) do not fit",
        ),
        (
            Q,
            Q,
            {"positions": torch.tensor([0.0, float("nan"), 1.0], device="cpu")},
            ValueError,
            r"positions must be finite",
        ),
        (Q, Q, {"positions": 4}, ValueError, r"must equal x's seq axis \(3\), got 4"),
    ],
)
def test_module_bad_forward(q, k, kwargs, exc, match):
    with torch.device("cpu"):  # on the CPU whatever --device says: these errors need no device
        rope = RotaryEmbedding(8, max_len=16)
    with pytest.raises(exc, match=match):
        rope(q, k, **kwargs)


# --- one position for every token, on the torch half-pairing path (issue 21) -------------------


def _one_position_calls():
    """(name, torch call, NumPy call) for each way a single position reaches the torch rotation."""
    x = np.random.default_rng(1).normal(size=(2, 3, 16, 8))
    t = torch.tensor(x)
    grid = np.array([[0, 0]])  # one (row, col) for every patch: the origin
    far = np.array([[7, 5]])
    return [
        (
            "apply_rope np.int64",
            lambda: posenc.apply_rope(t, np.int64(5), pairing="half"),
            lambda: posenc.apply_rope(x, np.full(16, 5), pairing="half"),
        ),
        (
            "apply_rope 0-d tensor",
            lambda: posenc.apply_rope(t.float(), torch.tensor(5), pairing="half"),
            lambda: posenc.apply_rope(x, np.full(16, 5), pairing="half"),
        ),
        (
            "RotaryEmbedding",
            lambda: RotaryEmbedding(8, pairing="half")(t, t, torch.tensor(3))[1],
            lambda: posenc.apply_rope(x, np.full(16, 3), pairing="half"),
        ),
        (
            "apply_xpos",
            lambda: posenc.apply_xpos(t, t, np.int64(5), pairing="half")[0],
            lambda: posenc.apply_xpos(x, x, np.full(16, 5), pairing="half")[0],
        ),
        (
            "apply_rope_2d",
            lambda: posenc.apply_rope_2d(t, torch.as_tensor(far)),
            lambda: posenc.apply_rope_2d(x, np.repeat(far, 16, axis=0)),
        ),
        (
            "apply_rope_2d at the origin",
            lambda: posenc.apply_rope_2d(t, torch.as_tensor(grid)),
            lambda: x,
        ),
    ]


@values
@pytest.mark.parametrize("case", range(6), ids=[c[0] for c in _one_position_calls()])
def test_one_position_for_every_token_on_the_half_path(case):
    _, torch_call, numpy_call = _one_position_calls()[case]
    got = torch_call()
    want = numpy_call()
    assert tuple(got.shape) == want.shape
    np.testing.assert_allclose(got.double().cpu().numpy(), want, atol=1e-6, rtol=0)


@values  # on the default device (under --device meta nothing is allocated, so nothing refused)
def test_a_cache_past_the_devices_memory_is_refused_by_name_before_allocating():
    # 2**40 positions x 4 pairs: 32 TiB of float32 cache, more than any machine's memory
    with pytest.raises(ValueError, match=r"max_len=1099511627776 .* 32\.0 TiB"):
        RotaryEmbedding(8, max_len=2**40)
    with torch.device("meta"):  # no values: nothing to allocate, nothing refused
        assert RotaryEmbedding(8, max_len=2**40).cos_cached.shape == (2**40, 4)

"""apply_rope keeps the last CPU call's cos/sin tables for a next call at equal integer positions
(q, then k): never for other positions, frequencies or dtypes, never across an in-place change."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import posenc
from posenc import _rope_torch
from posenc.rope import rope_frequencies

values = pytest.mark.values


@pytest.fixture(autouse=True)
def _nothing_kept():
    _rope_torch.forget_tables()
    yield
    _rope_torch.forget_tables()


def _tables(pos, *, dim=8, base=10000.0, work=torch.float32, pairing="half"):
    inv_freq, factor = rope_frequencies(dim, base=base)
    return _rope_torch.rope_tables(pos, inv_freq, factor, work, pairing)


@pytest.mark.parametrize("pairing", ["half", "interleaved"])
def test_equal_positions_take_the_kept_tables(pairing):
    first = _tables(torch.arange(5, 12), pairing=pairing)
    again = _tables(torch.arange(5, 12), pairing=pairing)  # another tensor, the same values
    assert all(a is b for a, b in zip(first, again, strict=True))


@pytest.mark.parametrize(
    "change",
    [
        {"pos": torch.arange(6, 13)},
        {"pos": torch.arange(5, 12).to(torch.int32)},
        {"pos": torch.arange(5, 12)[None]},
        {"base": 500.0},
        {"dim": 10},
        {"work": torch.float64},
        {"pairing": "interleaved"},
    ],
    ids=lambda c: next(iter(c)) + ("=" + str(c["pos"].dtype) if "pos" in c else ""),
)
def test_anything_else_builds_new_tables(change):
    kw = {k: v for k, v in change.items() if k != "pos"}
    pos = change.get("pos", torch.arange(5, 12))
    first = _tables(torch.arange(5, 12))
    other = _tables(pos, **kw)
    assert other[0] is not first[0]
    _rope_torch.forget_tables()
    fresh = _tables(pos, **kw)  # built with nothing kept
    assert all(torch.equal(a, b) for a, b in zip(other, fresh, strict=True))


def test_float_positions_and_large_tables_are_not_kept():
    pos = torch.arange(5, 12, dtype=torch.float32)
    assert _tables(pos)[0] is not _tables(pos)[0]
    rows = _rope_torch.KEEP_BYTES // (4 * 8) + 1  # half tables: 2 x rows x 8 x 4 bytes, over
    big = torch.arange(rows)
    assert _tables(big)[0] is not _tables(big)[0]
    assert _rope_torch._kept[0] is None


@values
@pytest.mark.parametrize("pairing", ["half", "interleaved"])
def test_positions_changed_in_place_are_read_anew(pairing):
    """The positions are compared by value: a write through NumPy (which torch's version counter
    does not see) still gives the rotation at the new positions."""
    x = torch.randn(2, 3, 6, 8, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    pos = torch.arange(6)
    posenc.apply_rope(x, pos, pairing=pairing)
    pos.numpy()[2] = 4000
    got = posenc.apply_rope(x, pos, pairing=pairing)
    want = posenc.apply_rope(x.numpy(), pos.numpy(), pairing=pairing)
    np.testing.assert_allclose(got.numpy(), want, atol=1e-12, rtol=0)
    assert not np.allclose(got.numpy(), posenc.apply_rope(x.numpy(), np.arange(6), pairing=pairing))


@values
def test_q_and_k_at_one_position_set_equal_separate_calls():
    g = torch.Generator().manual_seed(1)
    q, k = torch.randn(1, 4, 9, 16, generator=g), torch.randn(1, 4, 9, 16, generator=g)
    pos = torch.arange(100, 109)
    rq, rk = (posenc.apply_rope(t, pos, pairing="half") for t in (q, k))  # k takes q's tables
    _rope_torch.forget_tables()
    assert torch.equal(rk, posenc.apply_rope(k, pos, pairing="half"))  # built anew: the same
    assert torch.equal(rq, posenc.apply_rope(q, pos.clone(), pairing="half"))


@values
def test_tables_kept_in_inference_mode_serve_a_normal_call():
    q = torch.randn(1, 2, 5, 8, generator=torch.Generator().manual_seed(2))
    pos = torch.arange(5)
    with torch.inference_mode():
        inside = posenc.apply_rope(q, pos, pairing="half")
    assert _rope_torch._kept[0] is not None  # kept from inside inference mode
    outside = posenc.apply_rope(q, pos, pairing="half")
    assert torch.equal(inside, outside) and not outside.is_inference()

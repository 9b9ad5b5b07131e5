"""posenc.attention: against the loop-by-loop oracle and torch's own SDPA, in NumPy and torch."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import oracle
import posenc
import seeded
from conftest import make, to_numpy

values = pytest.mark.values


def _random_case(seed, lq, lk, d, dv, batch, with_bias, with_mask):
    rng = np.random.default_rng(seed)
    q = rng.normal(size=batch + (lq, d)) * 2
    k = rng.normal(size=batch + (lk, d)) * 2
    v = rng.normal(size=batch + (lk, dv))
    bias = rng.normal(size=(lq, lk)) if with_bias else None
    mask = None
    if with_mask:
        mask = rng.random(size=batch + (lq, lk)) < 0.6
        mask[..., rng.integers(0, lk)] = True  # every row keeps a key
        mask[..., 0, :] = rng.random(lk) < 0.5  # ...and one row may keep only the forced one
        mask[..., 0, rng.integers(0, lk)] = True
    return q, k, v, bias, mask


def _oracle_batched(q, k, v, bias, mask):
    batch = q.shape[:-2]
    out = np.empty(batch + (q.shape[-2], v.shape[-1]))
    w = np.empty(batch + (q.shape[-2], k.shape[-2]))
    for idx in np.ndindex(*batch):
        o, a = oracle.attention(
            q[idx].tolist(),
            k[idx].tolist(),
            v[idx].tolist(),
            None if bias is None else bias.tolist(),
            None if mask is None else mask[idx].tolist(),
        )
        out[idx], w[idx] = o, a
    return out, w


@values
@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    lq=st.integers(1, 6),
    lk=st.integers(1, 7),
    d=st.integers(1, 9),
    dv=st.integers(1, 5),
    batch=st.sampled_from([(), (2,), (2, 3)]),
    with_bias=st.booleans(),
    with_mask=st.booleans(),
    backend=st.sampled_from(["numpy", "torch"]),
)
def test_matches_oracle(seed, lq, lk, d, dv, batch, with_bias, with_mask, backend, device):
    q, k, v, bias, mask = _random_case(seed, lq, lk, d, dv, batch, with_bias, with_mask)
    args = [make(backend, x, device) for x in (q, k, v)]
    kw = {}
    if bias is not None:
        kw["bias"] = make(backend, bias, device)
    if mask is not None:
        kw["mask"] = make(backend, mask, device)
    out, w = posenc.attention(*args, return_weights=True, **kw)
    want_out, want_w = _oracle_batched(q, k, v, bias, mask)
    assert tuple(out.shape) == batch + (lq, dv) and tuple(w.shape) == batch + (lq, lk)
    np.testing.assert_allclose(to_numpy(w), want_w, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(to_numpy(out), want_out, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(to_numpy(w).sum(-1), 1.0, rtol=1e-13)
    if mask is not None:
        assert np.all(to_numpy(w)[~mask] == 0.0)


@values
@pytest.mark.parametrize("kind", ["plain", "mask", "bias", "scale"])
def test_agrees_with_torch_sdpa(kind, device):
    g = torch.Generator(device="cpu").manual_seed(0)
    q, k, v = (seeded.randn(2, 3, n, 8, generator=g, dtype=torch.float64) for n in (5, 7, 7))
    q, k, v = q.to(device), k.to(device), v.to(device)
    kw, sdpa_kw = {}, {}
    if kind == "mask":
        mask = torch.ones(5, 7, dtype=torch.bool, device=device).tril(diagonal=2)
        kw["mask"] = sdpa_kw["attn_mask"] = mask
    elif kind == "bias":
        bias = seeded.randn(3, 5, 7, generator=g, dtype=torch.float64).to(device)
        kw["bias"] = sdpa_kw["attn_mask"] = bias
    elif kind == "scale":
        kw["scale"] = sdpa_kw["scale"] = 0.3
    want = torch.nn.functional.scaled_dot_product_attention(q, k, v, **sdpa_kw)
    torch.testing.assert_close(posenc.attention(q, k, v, **kw), want, rtol=1e-12, atol=1e-12)


@values
def test_stable_for_large_scores(backend, device):
    """Subtracting the row max: scores of 1e4 give the right weights, not inf / inf."""
    q = make(backend, [[100.0, 0.0]], device)
    k = make(backend, [[100.0, 0.0], [99.9, 0.0]], device)  # scores 7071.07 and 7064.0
    v = make(backend, [[1.0], [0.0]], device)
    _, w = posenc.attention(q, k, v, return_weights=True)
    gap = (100.0 * 100.0 - 100.0 * 99.9) / np.sqrt(2.0)
    want = 1.0 / (1.0 + np.exp(-gap))
    assert np.all(np.isfinite(to_numpy(w)))
    np.testing.assert_allclose(to_numpy(w)[0, 0], want, rtol=1e-12)


@values
def test_permuting_keys_with_values_changes_nothing(backend, device):
    """Without positions, attention cannot see the order of the keys."""
    rng = np.random.default_rng(3)
    q, k, v = rng.normal(size=(4, 6)), rng.normal(size=(5, 6)), rng.normal(size=(5, 3))
    perm = rng.permutation(5)
    a = posenc.attention(
        make(backend, q, device), make(backend, k, device), make(backend, v, device)
    )
    b = posenc.attention(
        make(backend, q, device), make(backend, k[perm], device), make(backend, v[perm], device)
    )
    np.testing.assert_allclose(to_numpy(a), to_numpy(b), rtol=1e-12, atol=1e-14)


@values
def test_bias_constant_per_row_changes_nothing(backend, device):
    rng = np.random.default_rng(4)
    q, k, v = rng.normal(size=(3, 4)), rng.normal(size=(6, 4)), rng.normal(size=(6, 2))
    shift = np.array([[5.0], [-2.0], [100.0]]) * np.ones((3, 6))
    a = posenc.attention(*(make(backend, x, device) for x in (q, k, v)))
    b = posenc.attention(
        *(make(backend, x, device) for x in (q, k, v)), bias=make(backend, shift, device)
    )
    np.testing.assert_allclose(to_numpy(a), to_numpy(b), rtol=1e-12, atol=1e-13)


@values
def test_minus_inf_bias_acts_as_mask(backend, device):
    rng = np.random.default_rng(5)
    q, k, v = rng.normal(size=(4, 4)), rng.normal(size=(4, 4)), rng.normal(size=(4, 2))
    causal = np.tril(np.ones((4, 4), dtype=bool))
    bias = np.where(causal, 0.0, -np.inf)
    args = [make(backend, x, device) for x in (q, k, v)]
    a = posenc.attention(*args, mask=make(backend, causal, device))
    b = posenc.attention(*args, bias=make(backend, bias, device))
    np.testing.assert_array_equal(to_numpy(a), to_numpy(b))


def test_dtypes():
    q = np.ones((2, 3), dtype=np.float32)
    assert posenc.attention(q, q, q).dtype == np.float32
    assert posenc.attention(q, q.astype(np.float64), q).dtype == np.float64
    assert (
        posenc.attention(
            np.ones((2, 3), dtype=np.int64), q.astype(np.int64), q.astype(np.int64)
        ).dtype
        == np.float64
    )
    t = torch.ones(2, 3, dtype=torch.int64, device="cpu")
    assert posenc.attention(t, t, t).dtype == torch.get_default_dtype()
    assert posenc.attention(t.half(), t.half(), t.float()).dtype == torch.float32


# --- shapes and devices (run under every --device, meta included) -------------------------------


@pytest.mark.parametrize(
    "qs,ks,vs,extra,out_shape",
    [
        ((5, 4), (7, 4), (7, 3), None, (5, 3)),
        ((2, 3, 5, 4), (2, 3, 7, 4), (2, 3, 7, 6), None, (2, 3, 5, 6)),
        ((2, 3, 5, 4), (1, 3, 7, 4), (3, 7, 6), None, (2, 3, 5, 6)),  # batch dims broadcast
        ((5, 4), (7, 4), (7, 3), (8, 5, 7), (8, 5, 3)),  # a per-head bias adds a batch dim
        ((2, 5, 4), (2, 7, 4), (2, 7, 3), (1, 7), (2, 5, 3)),
        ((0, 5, 4), (0, 7, 4), (0, 7, 3), None, (0, 5, 3)),
        ((2, 0, 4), (2, 7, 4), (2, 7, 3), None, (2, 0, 3)),
        ((0, 5, 4), (0, 0, 4), (0, 0, 3), None, (0, 5, 3)),  # no keys, but no rows either
        ((0, 4), (0, 4), (0, 3), None, (0, 3)),
    ],
)
def test_shapes_and_device(qs, ks, vs, extra, out_shape, device):
    q, k, v = (torch.zeros(s, device=device) for s in (qs, ks, vs))
    bias = None if extra is None else torch.zeros(extra, device=device)
    out, w = posenc.attention(q, k, v, bias=bias, return_weights=True)
    assert tuple(out.shape) == out_shape and out.device.type == torch.device(device).type
    assert tuple(w.shape) == out_shape[:-1] + (ks[-2],)
    mask = torch.ones(qs[-2], ks[-2], dtype=torch.bool, device=device)
    out = posenc.attention(q, k, v, bias=bias, mask=mask)
    assert tuple(out.shape) == out_shape and out.device.type == torch.device(device).type
    np_out = posenc.attention(
        np.zeros(qs), np.zeros(ks), np.zeros(vs), bias=None if extra is None else np.zeros(extra)
    )
    assert np_out.shape == out_shape


def test_meta_skips_the_row_checks():
    q = torch.empty(2, 4, device="meta")
    mask = torch.zeros(2, 2, dtype=torch.bool, device="meta")  # no values on meta: not read
    assert posenc.attention(q, q, q, mask=mask).shape == (2, 4)


# --- bad input ----------------------------------------------------------------------------------


def _np(*shape):
    return np.zeros(shape)


@pytest.mark.parametrize(
    "q,k,v,kw,exc,match",
    [
        (
            _np(5, 4),
            _np(7, 3),
            _np(7, 2),
            {},
            ValueError,
            r"q and k must have the same last dimension d, got q shape \(5, 4\) and k shape \(7, 3\)",
        ),
        (
            _np(5, 4),
            _np(7, 4),
            _np(6, 2),
            {},
            ValueError,
            r"k and v must have the same number of keys Lk \(dimension -2\), got k shape \(7, 4\) and v shape \(6, 2\)",
        ),
        (
            _np(4),
            _np(7, 4),
            _np(7, 2),
            {},
            ValueError,
            r"q must have shape \(\.\.\., Lq, d\) with at least 2 dimensions, got shape \(4,\)",
        ),
        (_np(5, 4), _np(4), _np(7, 2), {}, ValueError, r"k must have shape \(\.\.\., Lk, d\)"),
        (_np(5, 4), _np(7, 4), _np(7), {}, ValueError, r"v must have shape \(\.\.\., Lk, dv\)"),
        (
            _np(2, 5, 4),
            _np(3, 7, 4),
            _np(3, 7, 2),
            {},
            ValueError,
            r"batch dimensions of q, k and v must broadcast together, got q shape \(2, 5, 4\), k shape \(3, 7, 4\)",
        ),
        (_np(5, 0), _np(7, 0), _np(7, 2), {}, ValueError, r"feature dimension d >= 1"),
        (_np(5, 4), _np(0, 4), _np(0, 2), {}, ValueError, r"no keys \(Lk = 0, k shape \(0, 4\)\)"),
        (
            _np(5, 4),
            _np(7, 4),
            _np(7, 2),
            {"bias": _np(5, 6)},
            ValueError,
            r"bias must be broadcastable to \(\.\.\., Lq, Lk\) = \(\.\.\., 5, 7\), got bias shape \(5, 6\)",
        ),
        (
            _np(5, 4),
            _np(7, 4),
            _np(7, 2),
            {"bias": _np(5, 7, 1)},
            ValueError,
            r"bias must be broadcastable to .*got bias shape \(5, 7, 1\)",
        ),
        (
            _np(5, 4),
            _np(7, 4),
            _np(7, 2),
            {"mask": np.ones((3, 7), bool)},
            ValueError,
            r"mask must be broadcastable to .*got mask shape \(3, 7\)",
        ),
        (
            _np(5, 4),
            _np(7, 4),
            _np(7, 2),
            {"mask": np.ones((5, 7))},
            TypeError,
            r"mask must be a boolean array \(True = may attend\), got dtype float64",
        ),
        (
            _np(5, 4),
            _np(7, 4),
            _np(7, 2),
            {"mask": np.ones((5, 7), dtype=int)},
            TypeError,
            r"for a 0/1 mask pass mask == 1",
        ),
        (
            _np(2, 2),
            _np(2, 2),
            _np(2, 2),
            {"mask": np.array([[True, False], [False, False]])},
            ValueError,
            r"mask leaves query row \(1,\) .* with no key to attend to",
        ),
        (
            _np(3, 2, 2),
            _np(2, 2),
            _np(2, 2),
            {"mask": np.array([[True, True], [False, False]])},
            ValueError,
            r"mask leaves query row \(0, 1\)",
        ),
        (
            _np(2, 2),
            _np(2, 2),
            _np(2, 2),
            {"bias": np.array([[0.0, -np.inf], [-np.inf, -np.inf]])},
            ValueError,
            r"every score of some query row is -inf",
        ),
        (
            _np(2, 2),
            _np(2, 2),
            _np(2, 2),
            {
                "bias": np.array([[0.0, -np.inf], [0.0, -np.inf]]),
                "mask": np.array([[True, True], [False, True]]),
            },
            ValueError,
            r"every score of some query row is -inf",
        ),
        (
            np.ones((2, 2), bool),
            _np(2, 2),
            _np(2, 2),
            {},
            TypeError,
            r"q must hold real numbers, got ndarray of dtype bool",
        ),
        (
            _np(2, 2),
            np.ones((2, 2), complex),
            _np(2, 2),
            {},
            TypeError,
            r"k must hold real numbers, got ndarray of dtype complex128",
        ),
        (
            _np(2, 2),
            _np(2, 2),
            np.array([["a", "b"], ["c", "d"]]),
            {},
            TypeError,
            r"v must hold real numbers",
        ),
        (
            _np(2, 2),
            _np(2, 2),
            _np(2, 2),
            {"bias": np.ones((2, 2), bool)},
            TypeError,
            r"bias must hold real numbers",
        ),
        (
            _np(2, 2),
            _np(2, 2),
            _np(2, 2),
            {"scale": "0.5"},
            TypeError,
            r"scale must be a finite real number, got '0.5'",
        ),
        (
            _np(2, 2),
            _np(2, 2),
            _np(2, 2),
            {"scale": float("nan")},
            ValueError,
            r"scale must be a finite real number, got nan",
        ),
        (
            _np(2, 2),
            _np(2, 2),
            _np(2, 2),
            {"return_weights": 1},
            TypeError,
            r"return_weights must be True or False, got 1",
        ),
    ],
)
def test_bad_input_numpy(q, k, v, kw, exc, match):
    with pytest.raises(exc, match=match):
        posenc.attention(q, k, v, **kw)


def _t(*shape):
    return torch.zeros(shape, device="cpu")


@pytest.mark.parametrize(
    "q,k,v,kw,exc,match",
    [
        (
            _t(2, 2),
            _np(2, 2),
            _t(2, 2),
            {},
            TypeError,
            r"q, k, v, bias and mask must all come from one library: q, v are torch tensors but k is not \(k: ndarray\)",
        ),
        (_np(2, 2), _t(2, 2), _np(2, 2), {}, TypeError, r"k is a torch tensor but q, v are not"),
        (
            _t(2, 2),
            _t(2, 2),
            _t(2, 2),
            {"mask": np.ones((2, 2), bool)},
            TypeError,
            r"but mask is not \(mask: ndarray\)",
        ),
        (
            _t(2, 2),
            _t(2, 2),
            _t(2, 2),
            {"bias": 0.5},
            TypeError,
            r"but bias is not \(bias: float\)",
        ),
        (
            _t(2, 2),
            _t(2, 2),
            _t(2, 2),
            {"mask": torch.ones(2, 2, device="cpu")},
            TypeError,
            r"mask must be a boolean tensor \(True = may attend\), got dtype torch.float32",
        ),
        (
            _t(2, 2),
            _t(2, 2),
            _t(2, 2),
            {"mask": torch.tensor([[True, True], [False, False]], device="cpu")},
            ValueError,
            r"mask leaves query row \(1,\)",
        ),
        (
            _t(2, 2),
            _t(2, 2),
            _t(2, 2),
            {"bias": torch.tensor([[-float("inf")] * 2] * 2, device="cpu")},
            ValueError,
            r"every score of some query row is -inf",
        ),
        (
            _t(2, 2),
            _t(2, 2).to("meta"),
            _t(2, 2),
            {},
            ValueError,
            r"q, k, v, bias and mask must be on one device, got q on cpu, k on meta, v on cpu",
        ),
        (
            _t(5, 4),
            _t(7, 3),
            _t(7, 2),
            {},
            ValueError,
            r"q and k must have the same last dimension d",
        ),
        (
            torch.ones(2, 2, dtype=torch.bool, device="cpu"),
            _t(2, 2),
            _t(2, 2),
            {},
            TypeError,
            r"q must hold real numbers, got Tensor of dtype torch.bool",
        ),
    ],
)
def test_bad_input_torch(q, k, v, kw, exc, match):
    with pytest.raises(exc, match=match):
        posenc.attention(q, k, v, **kw)

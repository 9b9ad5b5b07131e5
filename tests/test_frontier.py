"""posenc.frontier (Kerple, Sandwich, FIRE, CoPE, ReRoPE) against loop-by-loop oracles of the
papers' formulas, and NumPy == torch. No framework ships these schemes, so the oracles below
are the reference: slow, obvious, one scalar at a time."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import posenc
import seeded
from ci_rule import require

RNG = np.random.default_rng(0)
D = np.array([0, 1, 2, 3, 7, 50, 511, 4096, -3])  # distances i - j (a negative one too)


# --- oracles: the formulas read literally ---------------------------------------------------


def kerple_oracle(d, r1, r2, kernel):
    out = []
    for x in d:
        if kernel == "log":
            out.append(-r1 * math.log(1 + r2 * abs(x)))
        else:
            out.append(-r1 * abs(x) ** r2)
    return np.array(out)


def sandwich_oracle(d, dim, base):
    """The dot product of two sinusoidal codes p_m . p_n, m - n = d (m = d + 5, n = 5)."""
    out = []
    for x in d:
        m, n = x + 5, 5
        pm, pn = [], []
        for k in range(dim // 2):
            w = base ** (-2 * k / dim)
            pm += [math.sin(m * w), math.cos(m * w)]
            pn += [math.sin(n * w), math.cos(n * w)]
        out.append(sum(a * b for a, b in zip(pm, pn, strict=True)))
    return np.array(out)


def fire_oracle(qpos, kpos, c, big_l):
    psi = lambda x: math.log(c * x + 1)  # noqa: E731
    out = np.zeros((len(qpos), len(kpos)))
    for a, i in enumerate(qpos):
        for b, j in enumerate(kpos):
            out[a, b] = psi(i - j) / psi(max(big_l, i)) if j <= i else 0.0
    return out


def cope_oracle(q, k, e, scale):
    """Golovneva et al. (2024), eqs. of section 3: g_ij = sigmoid(q_i . k_j), p_ij = sum of
    g_it for t = j .. i, e[p] interpolated between floor and ceil, z_ij = q_i . e[p_ij]."""
    q_len, k_len, npos = len(q), len(k), len(e)
    off = k_len - q_len
    z = np.full((q_len, k_len), -np.inf)
    for a in range(q_len):
        i = a + off
        for j in range(i + 1):
            p = 0.0
            for t in range(j, i + 1):
                p += 1.0 / (1.0 + math.exp(-scale * float(q[a] @ k[t])))
            p = min(p, npos - 1)
            lo, hi = math.floor(p), math.ceil(p)
            e_p = (p - lo) * e[hi] + (1 - (p - lo)) * e[lo]
            z[a, j] = float(q[a] @ e_p)
    return z


def cope_reference_code(q, k, e, scale):
    """The authors' listing (facebookresearch/RAM, projects/cope): reverse cumsum of masked
    gates, clamp, gather at floor and ceil of q @ pos_emb."""
    q_len, k_len = q.shape[-2], k.shape[-2]
    mask = torch.ones(q_len, k_len).tril(k_len - q_len)
    gates = torch.sigmoid(q @ k.transpose(-1, -2) * scale) * mask
    pos = gates.flip(-1).cumsum(dim=-1).flip(-1).clamp(max=e.shape[0] - 1)
    logits_int = q @ e.T
    ceil, floor = pos.ceil().long(), pos.floor().long()
    w = pos - floor
    z = logits_int.gather(-1, ceil) * w + logits_int.gather(-1, floor) * (1 - w)
    return torch.where(mask.bool(), z, -math.inf)


def rerope_oracle(d, w, slope):
    return np.array([x if x < w else w + slope * (x - w) for x in d], dtype=float)


# --- tests ---------------------------------------------------------------------------------


@pytest.mark.parametrize("kernel,r1,r2", [("log", 1.3, 0.7), ("power", 0.4, 1.5), ("power", 2, 2)])
def test_kerple_matches_oracle_and_torch(kernel, r1, r2):
    want = kerple_oracle(D, r1, r2, kernel)
    got = posenc.kerple_bias(D, r1=r1, r2=r2, kernel=kernel)
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=0)
    t = posenc.kerple_bias(torch.as_tensor(D), r1=r1, r2=r2, kernel=kernel, dtype=torch.float64)
    np.testing.assert_allclose(t.cpu().numpy(), want, rtol=1e-13, atol=0)
    assert got[0] == 0 and np.all(np.diff(got[:-1]) < 0)  # 0 at distance 0, then decreasing


def test_kerple_refuses_power_past_two():
    with pytest.raises(ValueError, match="r2"):
        posenc.kerple_bias(D, r1=1.0, r2=2.5, kernel="power")


@pytest.mark.parametrize("dim,base", [(8, 10000.0), (6, 100.0), (64, 10000.0)])
def test_sandwich_is_the_dot_product_of_sinusoidal_codes(dim, base):
    want = sandwich_oracle(D, dim, base)
    got = posenc.sandwich_bias(D, dim, base=base)
    np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-11)
    # and of posenc's own sinusoidal table, for every pair of positions
    p = posenc.sinusoidal(12, dim, base=base)
    dist = np.arange(12)[:, None] - np.arange(12)[None, :]
    np.testing.assert_allclose(posenc.sandwich_bias(dist, dim, base=base), p @ p.T, atol=1e-12)
    t = posenc.sandwich_bias(torch.as_tensor(D), dim, base=base, dtype=torch.float64)
    np.testing.assert_allclose(t.cpu().numpy(), got, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("c,big_l", [(1.0, 2.0), (0.3, 9.0), (5.0, 0.5)])
def test_fire_matches_oracle_and_torch(c, big_l):
    qpos = np.array([0, 1, 2, 5, 9, 30])
    kpos = np.arange(31)
    want = fire_oracle(qpos, kpos, c, big_l)
    got = posenc.fire_relative(qpos, kpos, c=c, threshold=big_l)
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)
    t = posenc.fire_relative(torch.as_tensor(qpos), kpos, c=c, threshold=big_l, dtype=torch.float64)
    np.testing.assert_allclose(t.cpu().numpy(), want, rtol=1e-13, atol=1e-15)
    past_l = qpos >= big_l
    assert np.all(got[past_l, 0] == 1.0)  # the first key is at relative position 1 once i >= L


# Issue 21, item 7: parameters where an intermediate product leaves float64 while the answer
# does not. The reference is the formula in 200-bit arithmetic (mpmath, a dependency of torch's
# sympy); main returned -inf for the first Kerple row and nan/0 for the FIRE ones.
KERPLE_EXTREME = [
    # (distance, r1, r2, kernel): r2 * |d| overflows, the log of it does not
    (1e308, 1.0, 1e10, "log"),
    (1.7e308, 2.5, 1.7e308, "log"),
    (3.0, 1e-300, 1e308, "log"),
    # |d| ** r2 overflows, r1 * |d| ** r2 does not
    (1e200, 1e-300, 2.0, "power"),
    (1.7e308, 1e-308, 1.5, "power"),
    # r2 * |d| or |d| ** r2 falls below float64's normal range (a subnormal keeps few bits, or
    # 0), r1 times it does not
    (1e-20, 1e308, 1e-300, "log"),
    (1e-3, 1e300, 1e-320, "log"),
    (1e-200, 1e300, 2.0, "power"),
]
FIRE_EXTREME = [
    # (i, j, c, L): c * x overflows (i = 3: nan on main, i = 1: 0), or i - j does
    (3.0, 0.0, 1e308, 2.0),
    (1.0, 0.0, 1e308, 2.0),
    (1e15, 7.0, 1e300, 1e6),
    (1.7e308, -1.7e308, 1.0, 2.0),
    # c * max(L, i) vanishes: the ratio is x / max(L, i) (0 / 0 on main where it underflowed)
    (3.0, 1.0, 5e-324, 2.0),
    (0.0, 0.0, 5e-324, 1e-3),
    (7.3, 0.5, 1e-320, 0.1),
]


def _mp_kerple(d, r1, r2, kernel):
    mp = require("mpmath")
    mp.mp.prec = 200
    x, a, b = mp.mpf(abs(d)), mp.mpf(r1), mp.mpf(r2)
    return float(-a * (mp.log1p(b * x) if kernel == "log" else x**b))


def _mp_fire(i, j, c, big_l):
    mp = require("mpmath")
    mp.mp.prec = 200
    i_, j_, c_ = mp.mpf(i), mp.mpf(j), mp.mpf(c)
    return float(mp.log1p(c_ * max(i_ - j_, 0)) / mp.log1p(c_ * max(i_, mp.mpf(big_l))))


@pytest.mark.parametrize("d,r1,r2,kernel", KERPLE_EXTREME)
def test_kerple_extreme_parameters_are_right(d, r1, r2, kernel):
    want = _mp_kerple(d, r1, r2, kernel)
    assert math.isfinite(want)
    got = posenc.kerple_bias(np.array([d]), r1=r1, r2=r2, kernel=kernel)[0]
    t = posenc.kerple_bias(
        torch.tensor([d], dtype=torch.float64), r1=r1, r2=r2, kernel=kernel, dtype=torch.float64
    )
    for value in (float(got), float(t[0])):
        assert math.isclose(value, want, rel_tol=4 * 2**-52), (value, want)


def test_kerple_beyond_float64_is_minus_inf():
    """A bias below -1.8e308 rounds to -inf, as float64 rounds every overflow (its softmax weight,
    exp(bias), is 0 either way); that is the correctly rounded answer, not an intermediate one."""
    got = posenc.kerple_bias(np.array([0.0, 1e308]), r1=10.0, r2=2.0, kernel="power")
    assert got[0] == 0 and got[1] == -math.inf


@pytest.mark.parametrize("i,j,c,big_l", FIRE_EXTREME)
def test_fire_extreme_parameters_are_right(i, j, c, big_l):
    want = _mp_fire(i, j, c, big_l)
    got = posenc.fire_relative(np.array([i]), np.array([j]), c=c, threshold=big_l)[0, 0]
    t = posenc.fire_relative(
        torch.tensor([i], dtype=torch.float64), [j], c=c, threshold=big_l, dtype=torch.float64
    )
    for value in (float(got), float(t[0, 0])):
        assert abs(value - want) <= 4 * 2**-52 * max(1.0, abs(want)), (value, want)


def _log_uniform(lo, hi):
    return st.floats(math.log10(lo), math.log10(hi)).map(lambda e: 10.0**e)


@settings(max_examples=80, deadline=None)
@given(
    r1=_log_uniform(1e-300, 1e300),
    r2=_log_uniform(1e-300, 1e300),
    d=st.one_of(st.just(0.0), _log_uniform(1e-300, 1e300)),
    kernel=st.sampled_from(["log", "power"]),
)
def test_kerple_is_right_across_float64(r1, r2, d, kernel):
    """Within 4 units of float64 (relative, or absolute below its normal range) of the 200-bit
    formula wherever the answer is finite; -inf exactly where it is below float64's range."""
    r2 = min(r2, 2.0) if kernel == "power" else r2
    want = _mp_kerple(d, r1, r2, kernel)
    got = float(posenc.kerple_bias(np.array([d]), r1=r1, r2=r2, kernel=kernel)[0])
    if math.isinf(want):
        assert got == want
    else:
        assert abs(got - want) <= 4 * 2**-52 * max(abs(want), 2**-1022 * 2**52), (got, want)


@settings(max_examples=80, deadline=None)
@given(
    c=_log_uniform(1e-320, 1e308),
    big_l=_log_uniform(1e-300, 1e300),
    i=st.one_of(st.just(0.0), _log_uniform(1e-10, 1e300)),
    frac=st.floats(0.0, 1.0),
)
def test_fire_is_right_across_float64(c, big_l, i, frac):
    """Keys at or before the query (j = frac * i): within 4 units of float64 of the 200-bit ratio."""
    j = frac * i
    want = _mp_fire(i, j, c, big_l)
    got = float(posenc.fire_relative(np.array([i]), np.array([j]), c=c, threshold=big_l)[0, 0])
    assert abs(got - want) <= 4 * 2**-52 * max(1.0, abs(want)), (got, want)


def _with(t, value):
    t = t.clone()
    t.view(-1)[1] = value
    return t


@pytest.mark.parametrize("name", ["q", "k", "pos_emb"])
@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
@pytest.mark.parametrize("library", ["numpy", "torch"])
def test_cope_refuses_non_finite_inputs_by_name(name, value, library):
    """Issue 21: a NaN or inf torch q gave an out-of-bounds index error (NumPy: 'q must be
    finite'); both libraries now say so for each argument."""
    g = torch.Generator().manual_seed(0)
    args = {"q": seeded.randn(2, 3, 4, generator=g), "k": seeded.randn(2, 3, 4, generator=g)}
    args["pos_emb"] = seeded.randn(5, 4, generator=g)
    args[name] = _with(args[name], value)
    if library == "numpy":
        args = {n: t.cpu().numpy() for n, t in args.items()}
    with pytest.raises(ValueError, match=rf"^{name} must be finite"):
        posenc.cope_bias(**args)


@pytest.mark.parametrize("library", ["numpy", "torch"])
def test_cope_refuses_products_that_overflow_into_nan(library):
    """Finite inputs whose dot product is inf - inf: refused by name, not an index error or nan."""
    conv = (lambda t: t.cpu().numpy()) if library == "numpy" else (lambda t: t)
    big = torch.tensor([[1e300, 1e300]], dtype=torch.float64)
    k = torch.tensor([[1e300, -1e300]], dtype=torch.float64)
    e = torch.tensor([[1e300, 1e300], [1e300, -1e300]], dtype=torch.float64)
    with pytest.raises(ValueError, match=r"q \. k overflows"):
        posenc.cope_bias(conv(big), conv(k), conv(torch.zeros(2, 2, dtype=torch.float64)))
    with pytest.raises(ValueError, match=r"q \. pos_emb overflows"):
        posenc.cope_bias(conv(big), conv(torch.zeros(1, 2, dtype=torch.float64)), conv(e))
    # one product past float64 but no nan: +inf is float64's rounding of it, kept
    got = posenc.cope_bias(conv(big), conv(torch.zeros(1, 2, dtype=torch.float64)), conv(e[:1]))
    assert float(got[0, 0]) == math.inf


@pytest.fixture(scope="module")
def qke():
    q = RNG.standard_normal((2, 5, 8))
    k = RNG.standard_normal((2, 7, 8))  # two cached keys before the five queries
    e = RNG.standard_normal((4, 8))  # npos = 4: positions past 3 are clamped
    return q, k, e


@pytest.mark.parametrize("scale", [None, 1.0, 3.0])
def test_cope_matches_oracle_reference_code_and_torch(qke, scale):
    q, k, e = qke
    s = 1 / math.sqrt(8) if scale is None else scale
    got = posenc.cope_bias(q, k, e, scale=scale)
    for b in range(2):
        np.testing.assert_allclose(got[b], cope_oracle(q[b], k[b], e, s), rtol=1e-12, atol=1e-12)
    qt, kt, et = (torch.as_tensor(x) for x in (q, k, e))
    ref = cope_reference_code(qt, kt, et, s)
    np.testing.assert_allclose(ref.cpu().numpy(), got, rtol=1e-12, atol=1e-12)
    t = posenc.cope_bias(qt, kt, et, scale=scale)
    assert t.dtype == torch.float64
    np.testing.assert_allclose(t.cpu().numpy(), got, rtol=1e-12, atol=1e-12)


def test_cope_counts_only_the_gated_tokens():
    """Gates of 0 or 1 (huge scale): p_ij counts the keys from j to i that match the query."""
    q = np.array([[1.0, 0.0]])
    k = np.array([[1.0, 0.0], [-1.0, 0.0], [1.0, 0.0], [-1.0, 0.0], [1.0, 0.0]])
    e = np.stack([np.arange(6.0), np.zeros(6)], axis=1)  # q . e[p] = p
    z = posenc.cope_bias(q, k, e, scale=1e3)
    np.testing.assert_allclose(z[0], [3.0, 2.0, 2.0, 1.0, 1.0], atol=1e-12)


@pytest.mark.parametrize("w,slope", [(3, 0.0), (3, 0.25), (16, 1.0), (2.5, 0.5)])
def test_rerope_distance_matches_oracle_and_torch(w, slope):
    want = rerope_oracle(D, w, slope)
    got = posenc.rerope_distance(D, window=w, slope=slope)
    np.testing.assert_array_equal(got, want)
    t = posenc.rerope_distance(torch.as_tensor(D), window=w, slope=slope, dtype=torch.float64)
    np.testing.assert_array_equal(t.cpu().numpy(), want)


def test_rerope_scores_two_passes_equal_rotation_by_the_mapped_distance():
    """Su's implementation: scores of RoPE-rotated q, k inside the window; outside it, q rotated
    by w + slope * (i - w) against k rotated by slope * j. Equal to q_i . R(f(i - j)) k_j."""
    n, dim, w, slope = 12, 8, 4, 0.25
    q, k = RNG.standard_normal((n, dim)), RNG.standard_normal((n, dim))
    pos = np.arange(n)
    inside = posenc.apply_rope(q, pos) @ posenc.apply_rope(k, pos).T
    outside = posenc.apply_rope(q, w + slope * (pos - w)) @ posenc.apply_rope(k, slope * pos).T
    d = pos[:, None] - pos[None, :]
    two_pass = np.where(d < w, inside, outside)
    f = posenc.rerope_distance(d, window=w, slope=slope)
    loop = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            loop[i, j] = posenc.apply_rope(q[i : i + 1], np.array([f[i, j]]))[0] @ k[j]
    causal = d >= 0
    np.testing.assert_allclose(two_pass[causal], loop[causal], rtol=1e-12, atol=1e-12)

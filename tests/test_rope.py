"""posenc.apply_rope, rope_frequencies, rope_permutation: against the loop-by-loop oracle."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import oracle_rope as oracle
import posenc
import seeded
from conftest import make, to_numpy

values = pytest.mark.values

half_dims = st.integers(1, 12)
bases = st.sampled_from([10000.0, 500.0, 1e6, 2.5])
pairings = st.sampled_from(["interleaved", "half"])
int_positions = st.integers(-5000, 5000)
float_positions = st.floats(-1e4, 1e4, allow_nan=False, allow_infinity=False)


@st.composite
def rope_cases(draw):
    """x of shape (seq, dim), positions (seq,), a rotary_dim <= dim (or None)."""
    seq = draw(st.integers(1, 6))
    dim = 2 * draw(half_dims)
    rotary = draw(st.one_of(st.none(), st.integers(1, dim // 2).map(lambda h: 2 * h)))
    extra = draw(st.integers(0, 3)) if rotary is not None else 0  # odd widths pass through too
    pos = draw(st.lists(st.one_of(int_positions, float_positions), min_size=seq, max_size=seq))
    seed = draw(st.integers(0, 2**32 - 1))
    x = np.random.default_rng(seed).normal(size=(seq, dim + extra)) * 3
    return x, pos, rotary


def _tol(positions, x):
    # the oracle forms m / base**(2i/r), posenc m * base**(-2i/r): both round at 1e-16 * |m|
    big = max(1.0, float(np.max(np.abs(positions))))
    return (1e-13 + 8e-16 * big) * max(1.0, float(np.max(np.abs(x))))


def _oracle_array(x, positions, **kw):
    rows = x.reshape(-1, x.shape[-1]).tolist()
    pos = np.broadcast_to(np.asarray(positions, dtype=float), x.shape[:-1]).ravel().tolist()
    return np.array(oracle.rope(rows, pos, **kw)).reshape(x.shape)


@values
@settings(max_examples=60, deadline=None)
@given(case=rope_cases(), base=bases, pairing=pairings)
def test_matches_oracle_numpy(case, base, pairing):
    x, pos, rotary = case
    got = posenc.apply_rope(x, np.array(pos), base=base, pairing=pairing, rotary_dim=rotary)
    assert got.dtype == np.float64 and got.shape == x.shape
    want = _oracle_array(x, pos, base=base, pairing=pairing, rotary_dim=rotary)
    np.testing.assert_allclose(got, want, rtol=0, atol=_tol(pos, x))


@values
@settings(max_examples=40, deadline=None)
@given(case=rope_cases(), pairing=pairings)
def test_matches_oracle_torch(case, pairing, device):
    x, pos, rotary = case
    xt = torch.as_tensor(x, device=device)
    got = posenc.apply_rope(
        xt, torch.as_tensor(np.array(pos), device=device), pairing=pairing, rotary_dim=rotary
    )
    assert got.device == xt.device and got.dtype == torch.float64
    want = _oracle_array(x, pos, pairing=pairing, rotary_dim=rotary)
    np.testing.assert_allclose(to_numpy(got), want, rtol=0, atol=_tol(pos, x))


@values
@pytest.mark.parametrize("pairing", ["interleaved", "half"])
def test_per_batch_positions(pairing, backend, device):
    """x (batch, heads, seq, dim) with HF-style position ids (batch, seq): each batch row its own."""
    rng = np.random.default_rng(3)
    x = rng.normal(size=(3, 2, 5, 8))
    ids = np.array([[0, 1, 2, 3, 4], [10, 11, 12, 13, 14], [-2, 0.5, 7, 100, 3]])
    want = _oracle_array(x, ids[:, None, :], pairing=pairing)
    for pos in (ids, ids[:, None, :], np.broadcast_to(ids[:, None, :], (3, 2, 5)).copy()):
        got = posenc.apply_rope(
            make(backend, x, device), make(backend, pos, device), pairing=pairing
        )
        np.testing.assert_allclose(to_numpy(got), want, atol=1e-12)
    # one position per (batch, seq, head) element of a (batch, seq, heads, dim) layout
    got = posenc.apply_rope(
        make(backend, x.transpose(0, 2, 1, 3), device),
        make(backend, ids[:, :, None], device),
        pairing=pairing,
    )
    np.testing.assert_allclose(to_numpy(got), want.transpose(0, 2, 1, 3), atol=1e-12)


@values
def test_int_count_and_zero_d_positions():
    x = np.random.default_rng(4).normal(size=(2, 4, 6))
    np.testing.assert_allclose(posenc.apply_rope(x, 4), posenc.apply_rope(x, np.arange(4)), atol=0)
    got = posenc.apply_rope(x, np.array(7.5))  # one position for every token
    np.testing.assert_allclose(got, _oracle_array(x, 7.5), atol=1e-12)


@values
def test_position_zero_is_identity_and_norms_are_kept():
    x = np.random.default_rng(5).normal(size=(4, 10))
    np.testing.assert_array_equal(posenc.apply_rope(x, np.zeros(4)), x)
    y = posenc.apply_rope(x, np.array([3, 1e5, -7.25, 2**40]), pairing="half")
    np.testing.assert_allclose(np.linalg.norm(y, axis=-1), np.linalg.norm(x, axis=-1), rtol=1e-14)
    assert np.abs(y - x).max() > 0.1


# --- the relative property ---------------------------------------------------------------------


@values
@settings(max_examples=40, deadline=None)
@given(
    m=st.integers(-3000, 3000),
    n=st.integers(-3000, 3000),
    shift=st.integers(-(10**6), 10**6),
    pairing=pairings,
    seed=st.integers(0, 2**32 - 1),
    scaling=st.sampled_from(
        [
            None,
            {"rope_type": "linear", "factor": 4.0},
            {"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 512},
        ]
    ),
)
def test_score_depends_only_on_offset(m, n, shift, pairing, seed, scaling):
    """<rope(q, m), rope(k, n)> == <rope(q, m + s), rope(k, n + s)> == <rope(q, m - n), k>."""
    rng = np.random.default_rng(seed)
    q, k = rng.normal(size=(2, 1, 16))

    def score(a, b):
        qa = posenc.apply_rope(q, np.array([a]), pairing=pairing, scaling=scaling)
        kb = posenc.apply_rope(k, np.array([b]), pairing=pairing, scaling=scaling)
        return float(np.sum(qa * kb))

    tol = 1e-12 * (1 + abs(shift) + abs(m) + abs(n)) * float(np.abs(q).sum() * np.abs(k).sum())
    assert abs(score(m, n) - score(m + shift, n + shift)) <= tol
    assert abs(score(m, n) - score(m - n, 0)) <= tol
    # and against the oracle, with the oracle's own dot product
    qo = oracle.rope(
        q.tolist(),
        [m],
        pairing=pairing,
        thetas=oracle.frequencies(16, scaling=scaling)[0],
        scale=oracle.frequencies(16, scaling=scaling)[1],
    )
    ko = oracle.rope(
        k.tolist(),
        [n],
        pairing=pairing,
        thetas=oracle.frequencies(16, scaling=scaling)[0],
        scale=oracle.frequencies(16, scaling=scaling)[1],
    )
    assert abs(oracle.dot(qo[0], ko[0]) - score(m, n)) <= tol


@values
def test_score_does_change_with_the_offset():
    """The property above is not vacuous: different offsets give different scores."""
    rng = np.random.default_rng(6)
    q, k = rng.normal(size=(2, 1, 16))
    scores = [float(np.sum(posenc.apply_rope(q, np.array([d])) * k)) for d in range(8)]
    assert min(abs(a - b) for i, a in enumerate(scores) for b in scores[i + 1 :]) > 1e-3


# --- frequencies and scalings -----------------------------------------------------------------

SCALINGS = [
    None,
    {"rope_type": "default"},
    {"rope_type": "linear", "factor": 2.0},
    {"type": "linear", "factor": 8},
    {"rope_type": "dynamic", "factor": 2.0, "original_max_position_embeddings": 1024},
    {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096},
    {
        "rope_type": "yarn",
        "factor": 40,
        "original_max_position_embeddings": 4096,
        "beta_fast": 32,
        "beta_slow": 1,
        "mscale": 1.0,
        "mscale_all_dim": 0.707,
    },
    {
        "rope_type": "yarn",
        "factor": 16.0,
        "original_max_position_embeddings": 2048,
        "truncate": False,
        "attention_factor": 1.5,
    },
    {
        "rope_type": "llama3",
        "factor": 8.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8192,
    },
    {
        "rope_type": "llama3",
        "factor": 32.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 8.0,
        "original_max_position_embeddings": 256,
    },
]


def _longrope(dim, **extra):
    rng = np.random.default_rng(dim)
    return {
        "rope_type": "longrope",
        "original_max_position_embeddings": 4096,
        "short_factor": (1 + rng.random(dim // 2)).tolist(),
        "long_factor": (1 + 4 * rng.random(dim // 2)).tolist(),
        **extra,
    }


@values
@pytest.mark.parametrize(
    "scaling", SCALINGS, ids=lambda s: "none" if s is None else s.get("rope_type", s.get("type"))
)
@pytest.mark.parametrize("dim", [2, 16, 128])
@pytest.mark.parametrize("base", [10000.0, 500000.0])
@pytest.mark.parametrize("seq_len", [None, 100, 20000])
def test_frequencies_match_oracle(scaling, dim, base, seq_len):
    inv_freq, factor = posenc.rope_frequencies(dim, base=base, scaling=scaling, seq_len=seq_len)
    thetas, want_factor = oracle.frequencies(dim, base, scaling, seq_len)
    assert inv_freq.dtype == np.float64 and inv_freq.shape == (dim // 2,)
    np.testing.assert_allclose(inv_freq, thetas, rtol=1e-13)
    assert isinstance(factor, float) and math.isclose(factor, want_factor, rel_tol=1e-14)


@values
@pytest.mark.parametrize("extra", [{"factor": 16.0}, {"attention_factor": 1.25}, {"factor": 1.0}])
@pytest.mark.parametrize("seq_len", [None, 4096, 4097])
def test_longrope_frequencies_match_oracle(extra, seq_len):
    scaling = _longrope(24, **extra)
    inv_freq, factor = posenc.rope_frequencies(24, scaling=scaling, seq_len=seq_len)
    thetas, want_factor = oracle.frequencies(24, 10000.0, scaling, seq_len)
    np.testing.assert_allclose(inv_freq, thetas, rtol=1e-13)
    assert math.isclose(factor, want_factor, rel_tol=1e-14)
    ext = scaling["long_factor" if seq_len == 4097 else "short_factor"]
    np.testing.assert_allclose(inv_freq * np.array(ext), posenc.rope_frequencies(24)[0], rtol=1e-13)


@values
def test_scalings_do_what_they_say():
    plain, _ = posenc.rope_frequencies(64)
    lin, _ = posenc.rope_frequencies(64, scaling={"rope_type": "linear", "factor": 4.0})
    np.testing.assert_allclose(lin, plain / 4, rtol=1e-15)
    dyn = {"rope_type": "dynamic", "factor": 4.0, "original_max_position_embeddings": 2048}
    np.testing.assert_array_equal(posenc.rope_frequencies(64, scaling=dyn, seq_len=2048)[0], plain)
    grown, _ = posenc.rope_frequencies(64, scaling=dyn, seq_len=8192)
    assert grown[0] == 1.0 and (grown[1:] < plain[1:]).all()
    yarn, f = posenc.rope_frequencies(
        64, scaling={"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 2048}
    )
    assert (
        yarn[0] == plain[0] and math.isclose(yarn[-1], plain[-1] / 4) and f == 0.1 * math.log(4) + 1
    )
    l3, _ = posenc.rope_frequencies(128, base=500000.0, scaling=SCALINGS[8])
    p3, _ = posenc.rope_frequencies(128, base=500000.0)
    assert l3[0] == p3[0] and math.isclose(l3[-1], p3[-1] / 8)


@values
@settings(max_examples=25, deadline=None)
@given(case=rope_cases(), scaling=st.sampled_from(SCALINGS[2:]), pairing=pairings)
def test_scaled_apply_matches_oracle(case, scaling, pairing):
    x, pos, rotary = case
    r = x.shape[-1] if rotary is None else rotary
    got = posenc.apply_rope(x, np.array(pos), scaling=scaling, pairing=pairing, rotary_dim=rotary)
    thetas, factor = oracle.frequencies(r, 10000.0, scaling)
    want = _oracle_array(x, pos, pairing=pairing, rotary_dim=rotary, thetas=thetas, scale=factor)
    np.testing.assert_allclose(got, want, rtol=0, atol=factor * _tol(pos, x))


@values
def test_attention_factor_scales_the_rotated_part_only():
    x = np.random.default_rng(7).normal(size=(5, 12))
    scaling = {
        "rope_type": "yarn",
        "factor": 4.0,
        "original_max_position_embeddings": 64,
        "attention_factor": 2.0,
    }
    got = posenc.apply_rope(x, 5, scaling=scaling, rotary_dim=8)
    np.testing.assert_allclose(
        np.linalg.norm(got[:, :8], axis=-1), 2 * np.linalg.norm(x[:, :8], axis=-1)
    )
    np.testing.assert_array_equal(got[:, 8:], x[:, 8:])


# --- dtypes, devices -------------------------------------------------------------------------


@values
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_numpy_dtype_kept(dtype):
    x = np.random.default_rng(8).normal(size=(3, 4, 8)).astype(dtype)
    got = posenc.apply_rope(x, 4)
    assert got.dtype == dtype and got.shape == x.shape
    want = posenc.apply_rope(x.astype(np.float64), 4)
    np.testing.assert_allclose(got, want, atol=float(np.finfo(dtype).eps) * 8)
    assert posenc.apply_rope([[1.0, 0.0]], 1).dtype == np.float64  # lists are arrays


@values
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
def test_torch_dtype_and_device_kept(dtype, device):
    x = torch.randn(2, 3, 6, 8, device=device).to(dtype)
    got = posenc.apply_rope(x, np.arange(6) + 100)  # NumPy positions go to x's device
    assert got.dtype == dtype and got.device == x.device and got.shape == x.shape
    want = posenc.apply_rope(x.double(), torch.arange(100, 106, device=device))
    torch.testing.assert_close(
        got.double(), want, atol=2 * torch.finfo(dtype).eps * float(x.double().abs().max()), rtol=0
    )


@values
def test_gradients_flow():
    x = torch.randn(3, 8, dtype=torch.float64, requires_grad=True)
    posenc.apply_rope(
        x, torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
    ).square().sum().backward()
    # a rotation keeps norms, so d|Rx|^2/dx = 2x
    torch.testing.assert_close(x.grad, 2 * x.detach())


# --- precision at long positions (correctness, not speed) -----------------------------------


def _rope64(x, positions, dim, pairing="interleaved"):
    """Plain float64 RoPE of x's exact values (positions along axis -2)."""
    w = 1.0 / 10000.0 ** (np.arange(0, dim, 2) / dim)
    angle = np.asarray(positions, dtype=np.float64)[:, None] * w
    c, s = np.cos(angle), np.sin(angle)
    x = np.asarray(x, dtype=np.float64)
    out = np.empty_like(x)
    if pairing == "interleaved":
        a, b = x[..., 0::2], x[..., 1::2]
        out[..., 0::2], out[..., 1::2] = a * c - b * s, a * s + b * c
    else:
        h = dim // 2
        a, b = x[..., :h], x[..., h:]
        out[..., :h], out[..., h:] = a * c - b * s, a * s + b * c
    return out


FLOAT32_BOUND = 1e-6  # times max|x|; measured ~7.6e-8 (a few float32 roundings)
LONG = np.arange(2**20 - 1023, 2**20 + 1)


@values
@pytest.mark.parametrize("pairing", ["interleaved", "half"])
def test_float32_error_bound_at_long_positions(pairing, backend, device):
    x = np.random.default_rng(9).normal(size=(2, len(LONG), 128)).astype(np.float32) * 5
    got = posenc.apply_rope(make(backend, x, device), make(backend, LONG, device), pairing=pairing)
    err = np.abs(to_numpy(got) - _rope64(x, LONG, 128, pairing)).max()
    assert err <= FLOAT32_BOUND * np.abs(x).max(), err


@values
def test_float32_positions_are_not_rounded_further(device):
    """float32 positions are used as given; int64 positions past 2**24 are exact."""
    pos = torch.tensor([2**24 + 1, 2**25 + 3, 3 * 2**30 + 7], device=device)
    x = torch.randn(3, 64, device=device)
    err = posenc.apply_rope(x, pos).double().cpu().numpy() - _rope64(
        x.cpu().numpy(), pos.cpu().numpy(), 64
    )
    assert np.abs(err).max() <= FLOAT32_BOUND * float(x.abs().max())


def _naive_float32(x, positions, dim):
    """The common code: float32 angles position * inv_freq."""
    w = (1.0 / (10000.0 ** (np.arange(0, dim, 2, dtype=np.float32) / np.float32(dim)))).astype(
        np.float32
    )
    angle = positions.astype(np.float32)[:, None] * w
    c, s = np.cos(angle), np.sin(angle)
    out = np.empty_like(x)
    a, b = x[..., 0::2], x[..., 1::2]
    out[..., 0::2], out[..., 1::2] = a * c - b * s, a * s + b * c
    return out


@values
def test_naive_float32_fails_the_bound():
    """The claim: the usual float32-angle RoPE is off by ~1e-2 * max|x| near 2**20."""
    x = np.random.default_rng(9).normal(size=(len(LONG), 128)).astype(np.float32)
    err = np.abs(_naive_float32(x, LONG, 128) - _rope64(x, LONG, 128)).max() / np.abs(x).max()
    assert err > 1e-2 > 1000 * FLOAT32_BOUND, err


def _ulp(values, dtype):
    """Spacing of ``dtype`` at each |value| (the normal range's spacing below it)."""
    info = torch.finfo(dtype)
    mag = np.maximum(np.abs(values), info.tiny)
    return np.exp2(np.floor(np.log2(mag))) * info.eps


@values
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("pairing", ["interleaved", "half"])
def test_half_precision_within_own_rounding_at_2_17(dtype, pairing, device):
    pos = np.arange(2**17 - 255, 2**17 + 1)
    x = torch.randn(len(pos), 64, dtype=torch.float64, device=device).to(dtype)
    got = posenc.apply_rope(x, torch.as_tensor(pos, device=device), pairing=pairing)
    want = _rope64(x.double().cpu().numpy(), pos, 64, pairing)
    err = np.abs(to_numpy(got) - want)
    # each element: half a unit of its own rounding, plus float32 noise of the rotation
    assert (err <= 0.5 * _ulp(want, dtype) + 1e-6 * np.abs(want).max()).all(), err.max()
    # and overall at most one unit at the output's magnitude
    assert err.max() <= _ulp(np.abs(want).max(), dtype)


# --- the torch rotation across layouts and position shapes ----------------------------------


def _layout(kind, shape, dtype):
    """x of ``shape`` (batch, heads, seq, dim) laid out in memory as ``kind`` says."""
    b, h, s, d = shape
    g = torch.Generator().manual_seed(3)
    if kind == "contiguous":
        return seeded.randn(shape, generator=g, dtype=dtype)
    if kind == "(b, s, h, d) transposed":
        return seeded.randn(b, s, h, d, generator=g, dtype=dtype).transpose(1, 2)
    if kind == "heads expanded":
        return seeded.randn(b, 1, s, d, generator=g, dtype=dtype).expand(shape)
    if kind == "features transposed":  # seq stride 1 < dim / 2: no paired views
        return seeded.randn(b, h, d, s, generator=g, dtype=dtype).transpose(-1, -2)
    if kind == "odd offset":
        return seeded.randn(b * h * s * d + 1, generator=g, dtype=dtype)[1:].view(shape)
    raise ValueError(kind)


LAYOUTS = [
    "contiguous",
    "(b, s, h, d) transposed",
    "heads expanded",
    "features transposed",
    "odd offset",
]
POSITION_SHAPES = {
    "(seq,) in steps": lambda b, h, s: np.arange(s) + 7,
    "(seq,) any": lambda b, h, s: np.array([3, 0, 11, 5, 9, 2, 1][:s]),
    "per batch (b, seq)": lambda b, h, s: np.arange(b * s).reshape(b, s) * 2,
    "per head (b, h, seq)": lambda b, h, s: np.arange(b * h * s).reshape(b, h, s) % 5,
    "one for all (0-d)": lambda b, h, s: np.array(4),
}


@values
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("seq", [1, 7])
@pytest.mark.parametrize("positions", list(POSITION_SHAPES))
@pytest.mark.parametrize("kind", LAYOUTS)
@pytest.mark.parametrize("pairing,rotary_dim", [("half", None), ("interleaved", None), ("half", 6)])
def test_torch_rotation_any_layout_matches_numpy(kind, positions, seq, dtype, pairing, rotary_dim):
    """Every path of the torch rotation (one complex multiply, the paired views of the half
    pairing and their fallbacks, slabs through a float32 scratch) against the NumPy formula."""
    x = _layout(kind, (2, 3, seq, 10), dtype)
    pos = POSITION_SHAPES[positions](2, 3, seq)
    kw = {
        "pairing": pairing,
        "rotary_dim": rotary_dim if rotary_dim else (8 if pairing == "interleaved" else None),
    }
    if kw["rotary_dim"] is None:
        x = x[..., :8]  # an even width to rotate whole
    got = posenc.apply_rope(x, torch.as_tensor(pos), **kw)
    want = posenc.apply_rope(x.double().cpu().numpy(), pos, **kw)
    assert got.dtype == x.dtype and got.shape == x.shape
    bound = {torch.float32: 1e-6, torch.bfloat16: 2.0**-8}[dtype]
    np.testing.assert_allclose(got.double().cpu().numpy(), want, atol=bound * 4, rtol=0)


# --- rope_permutation ------------------------------------------------------------------------


@values
@settings(max_examples=30, deadline=None)
@given(
    half=st.integers(1, 16),
    d_model=st.integers(1, 12),
    seq=st.integers(1, 6),
    seed=st.integers(0, 2**32 - 1),
)
def test_permutation_gives_equal_scores(half, d_model, seq, seed):
    dim = 2 * half
    rng = np.random.default_rng(seed)
    wq, wk = rng.normal(size=(2, dim, d_model))
    tokens = rng.normal(size=(seq, d_model))
    pos = rng.integers(0, 5000, size=seq)
    perm = posenc.rope_permutation(dim)

    def scores(wq, wk, pairing):
        q = posenc.apply_rope(tokens @ wq.T, pos, pairing=pairing)
        k = posenc.apply_rope(tokens @ wk.T, pos, pairing=pairing)
        return q @ k.T

    want = scores(wq, wk, "interleaved")
    np.testing.assert_allclose(
        scores(wq[perm], wk[perm], "half"), want, atol=1e-9 * (1 + np.abs(want).max())
    )
    inv = posenc.rope_permutation(dim, inverse=True)
    np.testing.assert_array_equal(perm[inv], np.arange(dim))
    np.testing.assert_allclose(
        scores(wq[perm][inv], wk[perm][inv], "interleaved"),
        want,
        atol=1e-9 * (1 + np.abs(want).max()),
    )
    # the rotation itself commutes with the permutation
    x = tokens @ wq.T
    np.testing.assert_allclose(
        posenc.apply_rope(x[:, perm], pos, pairing="half"),
        posenc.apply_rope(x, pos)[:, perm],
        atol=1e-12 * (1 + np.abs(x).max()),
    )


@values
def test_permutation_matters():
    """Without the permutation the pairings disagree (the test above could fail)."""
    rng = np.random.default_rng(10)
    x = rng.normal(size=(4, 8))
    pos = np.arange(4)
    assert np.abs(posenc.apply_rope(x, pos, pairing="half") - posenc.apply_rope(x, pos)).max() > 0.1


def test_permutation_matches_hf_conversion_permute():
    """HF convert_llama_weights_to_hf.permute, for a whole (n_heads * dim, d_model) projection."""
    n_heads, dim, d_model = 3, 8, 5
    w = np.arange(n_heads * dim * d_model, dtype=float).reshape(n_heads * dim, d_model)
    hf = (
        w.reshape(n_heads, dim // 2, 2, d_model)
        .transpose(0, 2, 1, 3)
        .reshape(n_heads * dim, d_model)
    )
    ours = w.reshape(n_heads, dim, d_model)[:, posenc.rope_permutation(dim)].reshape(
        n_heads * dim, d_model
    )
    np.testing.assert_array_equal(ours, hf)
    assert posenc.rope_permutation(2).tolist() == [0, 1]
    assert posenc.rope_permutation(6).dtype == np.int64


# --- bad input -------------------------------------------------------------------------------

X = np.zeros((2, 3, 8))


@pytest.mark.parametrize(
    "call,exc,match",
    [
        (
            lambda: posenc.rope_frequencies(7),
            ValueError,
            r"dim must be a positive even integer, got 7",
        ),
        (
            lambda: posenc.rope_frequencies(8.0),
            TypeError,
            r"dim must be a positive even integer, got 8\.0",
        ),
        (
            lambda: posenc.rope_frequencies(8, base=1),
            ValueError,
            r"base must be a finite number > 0 and != 1",
        ),
        (
            lambda: posenc.rope_frequencies(128, base=1e-320),
            ValueError,
            r"base must be at least 2\.2250738585072014e-308 \(a normal float\).*got 1e-320",
        ),
        (
            lambda: posenc.rope_frequencies(8, base="1e4"),
            TypeError,
            r"base must be a finite real number",
        ),
        (
            lambda: posenc.rope_frequencies(8, scaling="linear"),
            TypeError,
            r"scaling must be None or a dict",
        ),
        (
            lambda: posenc.rope_frequencies(8, scaling={"factor": 2.0}),
            ValueError,
            r"scaling must name its 'rope_type'",
        ),
        (
            lambda: posenc.rope_frequencies(8, scaling={"rope_type": "ntk"}),
            ValueError,
            r"scaling\['rope_type'\] must be one of 'default', 'linear', 'dynamic', 'yarn', 'llama3', 'longrope', got 'ntk'",
        ),
        (
            lambda: posenc.rope_frequencies(
                8, scaling={"rope_type": "linear", "type": "yarn", "factor": 2}
            ),
            ValueError,
            "must agree",
        ),
        (
            lambda: posenc.rope_frequencies(8, scaling={"rope_type": "linear"}),
            ValueError,
            r"rope_type='linear' is missing 'factor'",
        ),
        (
            lambda: posenc.rope_frequencies(8, scaling={"rope_type": "linear", "factor": None}),
            ValueError,
            r"is missing 'factor'",
        ),
        (
            lambda: posenc.rope_frequencies(8, scaling={"rope_type": "linear", "factor": 0.5}),
            ValueError,
            r"scaling\['factor'\] must be >= 1, got 0\.5",
        ),
        (
            lambda: posenc.rope_frequencies(8, scaling={"rope_type": "linear", "factor": "2"}),
            TypeError,
            r"scaling\['factor'\] must be a finite real number, got '2'",
        ),
        (
            lambda: posenc.rope_frequencies(
                8, scaling={"rope_type": "linear", "factor": float("inf")}
            ),
            ValueError,
            r"scaling\['factor'\] must be a finite real number, got inf",
        ),
        (
            lambda: posenc.rope_frequencies(
                8, scaling={"rope_type": "linear", "factor": 2, "factr": 3}
            ),
            ValueError,
            r"unknown keys 'factr' \(allowed: 'rope_type', 'rope_theta', 'factor'\)",
        ),
        (
            lambda: posenc.rope_frequencies(
                8, scaling={"rope_type": "default", "rope_theta": 500.0}
            ),
            ValueError,
            r"scaling\['rope_theta'\] = 500\.0 disagrees with base = 10000\.0",
        ),
        (
            lambda: posenc.rope_frequencies(
                8, scaling={"rope_type": "default", "partial_rotary_factor": 0.5}
            ),
            ValueError,
            r"partial_rotary_factor'\] is not read here: pass the rotated width as rotary_dim",
        ),
        (
            lambda: posenc.rope_frequencies(8, scaling={"rope_type": "dynamic", "factor": 2.0}),
            ValueError,
            r"is missing 'original_max_position_embeddings'",
        ),
        (
            lambda: posenc.rope_frequencies(
                8,
                scaling={
                    "rope_type": "dynamic",
                    "factor": 2.0,
                    "original_max_position_embeddings": 10.5,
                },
            ),
            TypeError,
            r"scaling\['original_max_position_embeddings'\] must be an integer >= 1, got 10\.5",
        ),
        (
            lambda: posenc.rope_frequencies(
                8,
                scaling={
                    "rope_type": "dynamic",
                    "factor": 2.0,
                    "original_max_position_embeddings": 0,
                },
            ),
            ValueError,
            r"must be an integer >= 1, got 0",
        ),
        (
            lambda: posenc.rope_frequencies(8, seq_len=0),
            ValueError,
            r"seq_len must be an integer >= 1, got 0",
        ),
        (
            lambda: posenc.rope_frequencies(8, seq_len=2.5),
            TypeError,
            r"seq_len must be an integer >= 1, got 2\.5",
        ),
        (
            lambda: posenc.rope_frequencies(
                8,
                scaling={
                    "rope_type": "yarn",
                    "factor": 4.0,
                    "original_max_position_embeddings": 64,
                    "beta_fast": 1,
                    "beta_slow": 32,
                },
            ),
            ValueError,
            r"beta_fast'\] must be >= scaling\['beta_slow'\].*beta_fast=1 and beta_slow=32",
        ),
        (
            lambda: posenc.rope_frequencies(
                8,
                scaling={
                    "rope_type": "yarn",
                    "factor": 4.0,
                    "original_max_position_embeddings": 64,
                    "beta_fast": -3,
                },
            ),
            ValueError,
            r"scaling\['beta_fast'\] must be > 0, got -3",
        ),
        (
            lambda: posenc.rope_frequencies(
                8,
                scaling={
                    "rope_type": "yarn",
                    "factor": 4.0,
                    "original_max_position_embeddings": 64,
                    "truncate": 1,
                },
            ),
            TypeError,
            r"scaling\['truncate'\] must be a bool, got 1",
        ),
        (
            lambda: posenc.rope_frequencies(
                8,
                scaling={
                    "rope_type": "yarn",
                    "factor": 4.0,
                    "original_max_position_embeddings": 64,
                    "attention_factor": 0,
                },
            ),
            ValueError,
            r"scaling\['attention_factor'\] must be > 0, got 0",
        ),
        (
            lambda: posenc.rope_frequencies(
                8,
                scaling={
                    "rope_type": "llama3",
                    "factor": 8.0,
                    "low_freq_factor": 4.0,
                    "high_freq_factor": 1.0,
                    "original_max_position_embeddings": 8192,
                },
            ),
            ValueError,
            r"high_freq_factor'\] must be >= scaling\['low_freq_factor'\], got high_freq_factor=1",
        ),
        (
            lambda: posenc.rope_frequencies(
                8,
                scaling={
                    "rope_type": "llama3",
                    "factor": 8.0,
                    "low_freq_factor": 1.0,
                    "original_max_position_embeddings": 8192,
                },
            ),
            ValueError,
            r"is missing 'high_freq_factor'",
        ),
        (
            lambda: posenc.rope_frequencies(8, scaling=_longrope(6, factor=2.0)),
            ValueError,
            r"scaling\['short_factor'\] must hold dim // 2 = 4 numbers, got shape \(3,\)",
        ),
        (
            lambda: posenc.rope_frequencies(
                8, scaling={**_longrope(8, factor=2.0), "long_factor": [1, 2, -1, 1]}
            ),
            ValueError,
            r"scaling\['long_factor'\] must hold finite numbers > 0",
        ),
        (
            lambda: posenc.rope_frequencies(
                8, scaling={**_longrope(8, factor=2.0), "long_factor": "1234"}
            ),
            TypeError,
            r"scaling\['long_factor'\] must be a list of dim // 2 = 4 positive numbers",
        ),
        (
            lambda: posenc.rope_frequencies(8, scaling=_longrope(8)),
            ValueError,
            r"needs 'factor' or 'attention_factor'",
        ),
        (
            lambda: posenc.rope_frequencies(
                8, scaling={**_longrope(8, factor=2.0), "original_max_position_embeddings": 1}
            ),
            ValueError,
            r"original_max_position_embeddings'\] must be an integer >= 2, got 1",
        ),
    ],
)
def test_bad_rope_frequencies(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


@pytest.mark.parametrize(
    "x,positions,kwargs,exc,match",
    [
        (
            np.zeros((3, 8), dtype=np.int64),
            3,
            {},
            TypeError,
            r"x must be a floating array .* got dtype int64",
        ),
        (
            np.zeros(8),
            1,
            {},
            ValueError,
            r"x must have shape \(\.\.\., seq, dim\), got shape \(8,\)",
        ),
        (3.0, 1, {}, TypeError, r"x must be a floating array"),
        (
            torch.zeros(3, 8, dtype=torch.int32, device="cpu"),
            3,
            {},
            TypeError,
            r"x must be a floating tensor, got Tensor of dtype torch\.int32",
        ),
        (
            np.zeros((3, 7)),
            3,
            {},
            ValueError,
            r"x's last axis must be even to rotate all of it, got 7; pass rotary_dim",
        ),
        (
            X,
            3,
            {"rotary_dim": 10},
            ValueError,
            r"rotary_dim must be <= x's last axis \(8\), got 10",
        ),
        (X, 3, {"rotary_dim": 3}, ValueError, r"rotary_dim must be a positive even integer, got 3"),
        (X, 3, {"rotary_dim": 4.0}, TypeError, r"rotary_dim must be a positive even integer"),
        (
            X,
            3,
            {"pairing": "rotate_half"},
            ValueError,
            r"pairing must be one of 'interleaved', 'half', got 'rotate_half'",
        ),
        (X, 3, {"base": 0}, ValueError, r"base must be a finite number > 0 and != 1"),
        (
            X,
            3,
            {"scaling": {"rope_type": "linear", "factor": 0.5}},
            ValueError,
            r"scaling\['factor'\] must be >= 1",
        ),
        (
            X,
            4,
            {},
            ValueError,
            r"positions as an int is a count and must equal x's seq axis \(3\), got 4",
        ),
        (
            X,
            -1,
            {},
            ValueError,
            r"positions as an int is a count of positions and must be >= 0, got -1",
        ),
        (
            X,
            2.5,
            {},
            TypeError,
            r"positions must be an int count or an array of positions, got 2\.5",
        ),
        (X, np.array([0.0, np.nan, 1.0]), {}, ValueError, r"positions must be finite"),
        (X, np.array([True, False, True]), {}, TypeError, r"positions must hold real numbers"),
        (
            X,
            np.arange(4),
            {},
            ValueError,
            r"positions of shape \(4,\) do not fit x of shape \(2, 3, 8\)",
        ),
        (X, np.zeros((3, 3)), {}, ValueError, r"positions of shape \(3, 3\) do not fit x"),
        (
            X,
            np.zeros((1, 2, 3)),
            {},
            ValueError,
            r"positions of shape \(1, 2, 3\) have more axes than x\.shape\[:-1\]",
        ),
        (
            np.zeros((2, 3, 4, 8)),
            np.zeros((3, 1)),
            {},
            ValueError,
            r"have a size-1 last axis, but that axis runs along x's seq axis",
        ),
        (
            X,
            torch.arange(3, device="cpu"),
            {},
            TypeError,
            r"positions is a torch tensor but x is a NumPy array",
        ),
        (
            torch.zeros(2, 3, 8, device="cpu"),
            torch.arange(3, device="meta"),
            {},
            ValueError,
            r"positions is on meta but x is on cpu",
        ),
        (X, 3, {"seq_len": -5}, ValueError, r"seq_len must be an integer >= 1, got -5"),
    ],
)
def test_bad_apply_rope(x, positions, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        posenc.apply_rope(x, positions, **kwargs)


@pytest.mark.parametrize(
    "args,kwargs,exc,match",
    [
        ((7,), {}, ValueError, r"dim must be a positive even integer, got 7"),
        ((0,), {}, ValueError, r"dim must be a positive even integer, got 0"),
        (("8",), {}, TypeError, r"dim must be a positive even integer, got '8'"),
        ((True,), {}, TypeError, r"dim must be a positive even integer, got True"),
        ((8,), {"inverse": "yes"}, TypeError, r"inverse must be a bool, got 'yes'"),
    ],
)
def test_bad_rope_permutation(args, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        posenc.rope_permutation(*args, **kwargs)


@pytest.mark.values
@pytest.mark.parametrize("pairing", ["interleaved", "half"])
@pytest.mark.parametrize("rotary_dim", [None, 8])
def test_gradient_flows_through_apply_rope(pairing, rotary_dim):
    """Training rotates q and k that require grad: the fast path must not cut the graph."""
    gen = torch.Generator().manual_seed(3)
    x = seeded.randn(2, 5, 16, generator=gen, dtype=torch.float64, requires_grad=True)
    weights = seeded.randn(2, 5, 16, generator=gen, dtype=torch.float64)
    out = posenc.apply_rope(x, 5, pairing=pairing, rotary_dim=rotary_dim)
    (out * weights).sum().backward()
    with torch.no_grad():
        fast = posenc.apply_rope(x.detach(), 5, pairing=pairing, rotary_dim=rotary_dim)
    torch.testing.assert_close(out.detach(), fast)
    # rotation is orthogonal per pair: the gradient is the inverse rotation of the weights
    back = posenc.apply_rope(
        weights, torch.arange(5) * -1.0, pairing=pairing, rotary_dim=rotary_dim
    )
    torch.testing.assert_close(x.grad, back)


def _thp_mode():
    try:
        text = open("/sys/kernel/mm/transparent_hugepage/enabled").read()
    except OSError:
        return None
    return text.split("[")[1].split("]")[0]


@pytest.mark.skipif(_thp_mode() not in ("madvise", "always"), reason="no transparent huge pages")
def test_a_large_cpu_output_is_advised_for_huge_pages():
    """The output of a large CPU rotation is advised for transparent huge pages (one fault per
    2 MiB): /proc/self/smaps marks its mapping eligible (whether the kernel found a free huge
    page is up to it). A CPU behaviour: the tensors are made on the CPU on every --device leg
    (under --device cuda the default device would put them on the card, with no smaps entry)."""
    x = torch.randn(1, 4, 2048, 128, device="cpu")  # 4 MiB
    out = posenc.apply_rope(x, torch.arange(2048, device="cpu"), pairing="half")
    assert out.device.type == "cpu"
    start = -(-out.data_ptr() // 2**21) * 2**21  # the first whole 2 MiB page of it
    fields, inside = {}, False
    with open("/proc/self/smaps") as f:
        for line in f:
            head = line.split()[0]
            if "-" in head and all(c in "0123456789abcdef-" for c in head):
                if inside:
                    break
                lo, hi = (int(v, 16) for v in head.split("-"))
                inside = lo <= start < hi
            elif inside:
                fields[line.split(":")[0]] = line.split()[1]
    if "THPeligible" not in fields:
        pytest.skip("kernel without THPeligible in smaps")
    assert fields["THPeligible"] == "1", fields


def test_llama3_with_equal_band_factors_is_llama4_scouts_and_runs():
    # issue 20: Llama 4 Scout ships low_freq_factor == high_freq_factor == 1; transformers warns
    # and runs it (no middle band: each pair is divided by factor or kept), posenc refused it
    scaling = {"rope_type": "llama3", "factor": 16.0, "low_freq_factor": 1.0,
               "high_freq_factor": 1.0, "original_max_position_embeddings": 8192}  # fmt: skip
    inv, attention = posenc.rope_frequencies(128, base=500000.0, scaling=scaling)
    plain = 500000.0 ** (-np.arange(0, 128, 2) / 128)
    long = 2 * np.pi / plain > 8192
    np.testing.assert_allclose(inv, np.where(long, plain / 16.0, plain), rtol=1e-15)
    assert attention == 1.0 and 0 < long.sum() < 64


@pytest.mark.parametrize("pairing", ["interleaved", "half"])
def test_one_position_for_every_token_in_a_batch_of_tensors(pairing):
    """A 0-d tensor position with a (batch, heads, seq, dim) tensor: the half-pairing slab path
    once reshaped a seq axis of 1 to seq (found by the hostile rows of posenc.partial)."""
    x = torch.randn(2, 3, 5, 16)
    got = posenc.apply_rope(x, torch.tensor(7), pairing=pairing)
    want = posenc.apply_rope(x, torch.full((5,), 7), pairing=pairing)
    torch.testing.assert_close(got, want, rtol=0, atol=0)

"""apply_rope against hostile input: empty, zero-width, strided and non-floating x, positions
that are NumPy scalars, torch.compile and export, the chunked torch path at real sizes, and the
float32 bound at the edge of its range."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import posenc
import posenc.rope
import posenc.rope_scaling
from posenc import _rope_torch

YARN = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64}


SIGNED = [-(2**63), -(2**63) + 1, -(2**62), -200, -9, -8, -1, 0, 1, 7, 8, 200, 2**40, 2**63 - 1]
UNSIGNED = [0, 1, 8, 200, 2**63 - 1, 2**63, 2**63 + 2**40, 2**64 - 1]


# --- apply_rope: empty inputs like NumPy, zero-width and non-floating x named as x ---------


@pytest.mark.parametrize("shape", [(2, 3, 0, 8), (0, 3, 4, 8), (2, 0, 4, 8), (0, 8)])
@pytest.mark.parametrize("pairing", ["interleaved", "half"])
@pytest.mark.parametrize("rotary_dim", [None, 4])
@pytest.mark.parametrize("grad", [False, True])
def test_empty_inputs_give_empty_outputs(shape, pairing, rotary_dim, grad):
    seq = shape[-2]
    kw = {"pairing": pairing, "rotary_dim": rotary_dim}
    want = posenc.apply_rope(np.zeros(shape, np.float32), seq, **kw)
    assert want.shape == shape and want.dtype == np.float32
    for dtype in (torch.float32, torch.float16):
        x = torch.zeros(shape, dtype=dtype, requires_grad=grad and dtype == torch.float32)
        got = posenc.apply_rope(x, seq, **kw)
        assert got.shape == shape and got.dtype == dtype
        got_t = posenc.apply_rope(x, torch.arange(seq) + 5, **kw)
        assert got_t.shape == shape


@pytest.mark.parametrize(
    "x", [np.zeros((2, 3, 4, 0)), torch.zeros(2, 4, 0), torch.zeros(4, 0, dtype=torch.float16)]
)
def test_zero_width_x_is_named_as_x(x):
    with pytest.raises(
        ValueError,
        match=r"^x must have a non-empty feature axis .*got shape \((2, 3, 4|2, 4|4), 0\)",
    ):
        posenc.apply_rope(x, 4 if x.shape[-2] == 4 else 2)


@pytest.mark.parametrize(
    "x",
    [
        np.zeros((3, 8), np.int32),
        np.zeros((3, 8), np.uint8),
        np.zeros((3, 8), bool),
        np.zeros((3, 8), np.complex64),
        torch.zeros(3, 8, dtype=torch.int64),
        torch.zeros(3, 8, dtype=torch.bool),
        torch.zeros(3, 8, dtype=torch.complex64),
        torch.zeros(3, 8, dtype=torch.uint8),
        [[1.0, 2.0], [3.0]],
        "abc",
        None,
    ],
    ids=lambda v: getattr(v, "dtype", type(v).__name__).__str__(),
)
def test_non_floating_x_is_a_type_error_naming_x(x):
    with pytest.raises(TypeError, match=r"^x must be a floating"):
        posenc.apply_rope(x, 3)


@pytest.mark.parametrize("pairing", ["interleaved", "half"])
def test_strided_and_odd_offset_x_rotate_like_contiguous(pairing):
    big = torch.randn(2, 3, 5, 20)
    for x in (big[..., 1:9], big[..., ::2][..., :8], big[..., 3:11], big.transpose(0, 1)[..., :8]):
        got = posenc.apply_rope(x, 5, pairing=pairing)
        want = posenc.apply_rope(x.contiguous(), 5, pairing=pairing)
        torch.testing.assert_close(got, want, rtol=0, atol=1e-6)
        np.testing.assert_allclose(
            got.cpu().numpy(),
            posenc.apply_rope(x.cpu().numpy(), 5, pairing=pairing),
            rtol=0,
            atol=1e-6,
        )


def test_reversed_numpy_positions_with_tensor_x():
    x = torch.randn(2, 5, 8, dtype=torch.float64)
    pos = np.arange(5)[::-1]  # a view with a negative stride, which torch.as_tensor refuses
    want = posenc.apply_rope(x, torch.tensor(pos.copy()))
    torch.testing.assert_close(posenc.apply_rope(x, pos), want, rtol=0, atol=0)
    np.testing.assert_allclose(
        posenc.apply_rope(x.cpu().numpy(), pos), want.cpu().numpy(), rtol=0, atol=1e-15
    )


def test_numpy_scalar_positions_are_one_position_not_a_count():
    x = np.random.default_rng(1).normal(size=(2, 4, 8))
    ids = np.array([3, 7])
    one = posenc.apply_rope(x, np.array(7))  # a 0-d array: position 7 for every token
    np.testing.assert_array_equal(posenc.apply_rope(x, ids[1]), one)
    np.testing.assert_array_equal(posenc.apply_rope(x, np.int64(7)), one)
    torch.testing.assert_close(
        posenc.apply_rope(torch.as_tensor(x), torch.tensor(7)), torch.as_tensor(one)
    )
    # while a Python int is the count 0 .. n-1
    np.testing.assert_array_equal(posenc.apply_rope(x, 4), posenc.apply_rope(x, np.arange(4)))
    with pytest.raises(
        ValueError,
        match=r"positions as an int is a count and must equal x's seq axis \(4\), got 2\*\*50|got 1125899906842624",
    ):
        posenc.apply_rope(x, 2**50)  # refused before allocating the count


# --- torch.compile(fullgraph=True): no graph break, equal to eager ---------------------------


def _compiled(fn):
    return torch.compile(fn, fullgraph=True, backend="eager")


ROPE_CALLS = {
    "int": (lambda q, p: posenc.apply_rope(q, q.shape[-2]), None),
    "tensor": (lambda q, p: posenc.apply_rope(q, p), torch.arange(16)),
    "offset": (lambda q, p: posenc.apply_rope(q, p + 2**20, pairing="half"), torch.arange(16)),
    "per-batch ids": (
        lambda q, p: posenc.apply_rope(q, p, pairing="half", rotary_dim=4),
        torch.randint(0, 9000, (2, 16)),
    ),
    "fractional": (lambda q, p: posenc.apply_rope(q, p * 0.25), torch.arange(16)),
    "yarn": (lambda q, p: posenc.apply_rope(q, p, scaling=YARN), torch.arange(100, 116)),
}


@pytest.mark.parametrize("case", list(ROPE_CALLS))
def test_apply_rope_compiles_fullgraph_and_equals_eager(case):
    fn, pos = ROPE_CALLS[case]
    q = torch.randn(2, 4, 16, 8)
    got = _compiled(fn)(q, pos)
    want = fn(q, pos)
    assert got.shape == want.shape and got.dtype == want.dtype
    torch.testing.assert_close(got, want, rtol=0, atol=1e-6 * float(q.abs().max()))


def test_apply_rope_exports_and_equals_eager():
    class Rotate(torch.nn.Module):
        def forward(self, q, positions):
            return posenc.apply_rope(q, positions, pairing="half")

    program = torch.export.export(Rotate(), (torch.randn(2, 4, 16, 8), torch.arange(16)))
    q, pos = torch.randn(2, 4, 16, 8), torch.arange(16) + 2**20  # other values, same shapes
    want = posenc.apply_rope(q, pos, pairing="half")
    torch.testing.assert_close(
        program.module()(q, pos), want, rtol=0, atol=1e-6 * float(q.abs().max())
    )


def test_apply_rope_compiled_once_follows_changing_lengths():
    # automatic dynamic shapes: the second length recompiles with a symbolic seq axis
    fn = lambda q, p: posenc.apply_rope(q, p + 3, pairing="half")  # noqa: E731
    compiled = _compiled(fn)
    for seq in (16, 24, 40):
        q, pos = torch.randn(1, 2, seq, 8), torch.arange(seq)
        torch.testing.assert_close(
            compiled(q, pos), fn(q, pos), rtol=0, atol=1e-6 * float(q.abs().max())
        )


def test_alibi_and_t5_compile_fullgraph_and_equal_eager():
    scores = torch.randn(2, 4, 16, 16)
    add_bias = lambda s: s + posenc.alibi_bias(16, 16, 4, like=s)  # noqa: E731
    torch.testing.assert_close(_compiled(add_bias)(scores), add_bias(scores), rtol=0, atol=0)
    causal = lambda s: posenc.alibi_bias(4, 16, 4, causal=False, offset=12, like=s)  # noqa: E731
    torch.testing.assert_close(_compiled(causal)(scores), causal(scores), rtol=0, atol=0)
    rel = torch.tensor(SIGNED)
    for bidirectional in (True, False):
        fn = lambda r, b=bidirectional: posenc.t5_bucket(r, bidirectional=b)  # noqa: E731
        torch.testing.assert_close(_compiled(fn)(rel), fn(rel), rtol=0, atol=0)
    u = torch.tensor(np.array(UNSIGNED, dtype=np.uint64).view(np.int64)).view(torch.uint64)
    fn = lambda r: posenc.t5_bucket(r, num_buckets=1000, max_distance=1e30)  # noqa: E731
    torch.testing.assert_close(_compiled(fn)(u), fn(u), rtol=0, atol=0)


# --- the chunked torch RoPE path at real sizes ----------------------------------------------


def _rope_reference(x: torch.Tensor, pos: torch.Tensor, pairing: str, rot: int) -> torch.Tensor:
    """Straight RoPE in float32: cos/sin of float64 angles p * w, then the formula on x.float()."""
    inv, _ = posenc.rope_frequencies(rot)
    angle = pos.double()[:, None] * torch.as_tensor(inv)  # (seq, rot/2)
    c, s = angle.cos().float(), angle.sin().float()
    xf = x.float()
    out = xf.clone()
    if pairing == "interleaved":
        a, b = xf[..., 0:rot:2], xf[..., 1:rot:2]
        out[..., 0:rot:2], out[..., 1:rot:2] = a * c - b * s, a * s + b * c
    else:
        a, b = xf[..., : rot // 2], xf[..., rot // 2 : rot]
        out[..., : rot // 2], out[..., rot // 2 : rot] = a * c - b * s, a * s + b * c
    return out


def _odd_offset(shape, dtype):  # contiguous, but at an odd storage offset: no complex view
    flat = torch.randn(math.prod(shape) + 1, dtype=dtype)
    return flat[1:].view(shape)


CHUNK_CASES = [
    # (shape, dtype, pairing, layout, rotary_dim, slabs >= (0: no slabs)); 1 MiB slabs of float32
    ((1, 32, 4096, 128), torch.float32, "half", "contiguous", None, 0),
    ((2, 8, 1024, 128), torch.float32, "interleaved", "odd offset", None, 0),
    ((2, 8, 1024, 128), torch.float16, "interleaved", "odd offset", None, 4),
    ((16, 4, 256, 128), torch.float16, "half", "contiguous", None, 4),
    ((16, 4, 256, 128), torch.float16, "half", "odd offset", None, 4),
    ((16, 4, 256, 128), torch.float16, "half", "contiguous", 64, 2),
    ((16, 4, 256, 128), torch.float16, "half", "(batch, seq, heads, dim) transposed", None, 1),
    ((16, 4, 256, 128), torch.float32, "half", "(batch, seq, heads, dim) transposed", None, 0),
    ((16, 4, 256, 128), torch.float32, "interleaved", "every other feature", None, 0),
]


@pytest.mark.parametrize(
    "shape,dtype,pairing,layout,rotary_dim,min_chunks",
    CHUNK_CASES,
    ids=[f"{c[0]}-{c[1]}-{c[2]}-{c[3]}-{c[4]}" for c in CHUNK_CASES],
)
def test_chunked_torch_rope_matches_reference(
    shape, dtype, pairing, layout, rotary_dim, min_chunks, monkeypatch
):
    torch.manual_seed(0)
    if layout == "odd offset":
        x = _odd_offset(shape, dtype)
    elif layout.endswith("transposed"):
        b, h, s, d = shape
        x = torch.randn(b, s, h, d, dtype=dtype).transpose(1, 2)
    elif layout == "every other feature":
        x = torch.randn(*shape[:-1], 2 * shape[-1], dtype=dtype)[..., ::2]
    else:
        x = torch.randn(shape, dtype=dtype)
    seen = []
    monkeypatch.setattr(_rope_torch, "CHUNK_BYTES", 2**20)  # several slabs at these sizes
    slabs = _rope_torch.slabs
    monkeypatch.setattr(_rope_torch, "slabs", lambda *a: seen.append(slabs(*a)) or seen[-1])
    pos = torch.arange(shape[-2]) + 1000  # an offset, as after a KV cache
    got = posenc.apply_rope(x, pos, pairing=pairing, rotary_dim=rotary_dim)
    rot = rotary_dim or shape[-1]
    if min_chunks == 0:  # float32: whole-tensor ops (a complex multiply, or two for half)
        assert seen == []
    else:  # the slab path, in slabs of at most CHUNK_BYTES of the work dtype (float32)
        assert len(seen) == 1
        assert len(seen[0]) >= max(min_chunks, 4 * x[..., :rot].numel() // _rope_torch.CHUNK_BYTES)
        assert all(xs.numel() * 4 <= _rope_torch.CHUNK_BYTES for xs, _, _ in seen[0])
    want = _rope_reference(x, pos, pairing, rot)
    # float16: its own rounding (half a unit, 2**-11 relative, of values up to sqrt(2) max|x|)
    bound = 1e-6 if dtype == torch.float32 else 1.5 * 2.0**-11
    assert float((got.float() - want).abs().max()) <= bound * float(x.abs().max())
    assert torch.equal(got[..., rot:], x[..., rot:])  # the pass-through features, bit for bit


# --- the float32 RoPE bound at the edge of its range (|p| <= 2**31) ------------------------


def _exact_angle(pos: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``p * w = hi + lo`` exactly (Dekker's product; ``|p| < 2**53`` integers, float64 ``w``)."""
    p = pos.astype(np.float64)[:, None]
    hi = p * w

    def parts(v):  # v = h + l with h holding the top 26 bits
        t = 134217729.0 * v  # 2**27 + 1
        h = t - (t - v)
        return h, v - h

    ph, pl = parts(p)
    wh, wl = parts(w)
    lo = ((ph * wh - hi) + ph * wl + pl * wh) + pl * wl
    return hi, lo


def _exact_rope(x: np.ndarray, pos: np.ndarray, pairing: str) -> np.ndarray:
    """RoPE by the exact angle p * w (p integer, w the float64 ladder): the product is split into
    hi + lo (Dekker), then cos(hi + lo) and sin(hi + lo) by the addition formulas, in float64."""
    dim = x.shape[-1]
    hi, lo = _exact_angle(pos, posenc.rope_frequencies(dim)[0])
    c = np.cos(hi) * np.cos(lo) - np.sin(hi) * np.sin(lo)
    s = np.sin(hi) * np.cos(lo) + np.cos(hi) * np.sin(lo)
    xd = x.astype(np.float64)
    out = np.empty_like(xd)
    if pairing == "interleaved":
        a, b = xd[..., 0::2], xd[..., 1::2]
        out[..., 0::2], out[..., 1::2] = a * c - b * s, a * s + b * c
    else:
        a, b = xd[..., : dim // 2], xd[..., dim // 2 :]
        out[..., : dim // 2], out[..., dim // 2 :] = a * c - b * s, a * s + b * c
    return out


def test_exact_reference_is_exact():
    from fractions import Fraction

    pos = np.array([2**31 - 1, 2**31, -(2**31) + 5, 3, 2**40 + 7])
    w, _ = posenc.rope_frequencies(64)
    hi, lo = _exact_angle(pos, w)
    for i, p in enumerate(pos.tolist()):
        for j, wj in enumerate(w.tolist()):  # hi + lo is p * w with no rounding at all
            assert Fraction(hi[i, j]) + Fraction(lo[i, j]) == p * Fraction(wj)
    assert np.abs(lo).max() > 0  # the float64 product was rounded, and lo carries the rest


EDGE = np.array([2**31 - 3, 2**31 - 2, 2**31 - 1, 2**31])
PERM = [2, 0, 3, 1]


@pytest.mark.parametrize("pairing", ["interleaved", "half"])
@pytest.mark.parametrize("sign", [1, -1])
def test_float32_rope_bound_holds_at_the_edge_of_its_range(pairing, sign):
    pos = sign * EDGE
    x = np.random.default_rng(3).uniform(-1, 1, size=(32, len(pos), 64)).astype(np.float32)
    want = _exact_rope(x, pos, pairing)
    scale = float(np.abs(x).max())
    for got in (
        posenc.apply_rope(x, pos, pairing=pairing),
        posenc.apply_rope(torch.as_tensor(x), torch.as_tensor(pos), pairing=pairing).cpu().numpy(),
        posenc.apply_rope(x[:, PERM], pos[PERM], pairing=pairing)[
            :, np.argsort(PERM)
        ],  # not in steps
    ):
        assert float(np.abs(got - want).max()) <= 1e-6 * scale


def test_float32_rope_bound_is_lost_past_its_range_as_documented():
    # at 2**40 the float64 angle is rounded by up to 2**-13 rad: the documented 5.8e-5 * max|x|
    pos = np.arange(2**40, 2**40 + 16)
    x = np.random.default_rng(4).uniform(-1, 1, size=(32, len(pos), 64)).astype(np.float32)
    err = float(np.abs(posenc.apply_rope(x, pos) - _exact_rope(x, pos, "interleaved")).max())
    assert 1e-6 < err < 2e-4

"""Issue 8, function side (RoPE, RoPE scaling, T5 buckets, ALiBi, compat): right or refused.

Each test is the regression test of one fix: the rope split (rope.py / rope_scaling.py), YaRN
attention factors <= 0, scaling keys, empty and zero-width RoPE inputs, T5 buckets at the int64 /
uint64 extremes, huge ints, torch.compile without graph breaks, the chunked torch RoPE path at
real sizes, and the float32 RoPE bound at the edge of its stated range.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import posenc
import posenc.rope
import posenc.rope_scaling
from posenc import _rope_torch, compat

YARN = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64}


# --- 1. the split: rope_frequencies lives in rope_scaling, importable from every old path ------


def test_rope_frequencies_is_one_function_under_every_path():
    from posenc.rope import rope_frequencies as from_rope

    assert posenc.rope_frequencies is posenc.rope_scaling.rope_frequencies is from_rope
    assert posenc.__all__.count("rope_frequencies") == 1
    assert {"rope_frequencies", "apply_rope", "rope_permutation"} <= set(posenc.__all__)
    # the rotation still reads the frequencies of the scaling it is given
    x = np.random.default_rng(0).normal(size=(5, 8))
    inv, f = posenc.rope_frequencies(8, scaling=YARN)
    angle = np.arange(5)[:, None] * inv
    want = np.empty_like(x)
    want[:, 0::2] = f * (x[:, 0::2] * np.cos(angle) - x[:, 1::2] * np.sin(angle))
    want[:, 1::2] = f * (x[:, 0::2] * np.sin(angle) + x[:, 1::2] * np.cos(angle))
    np.testing.assert_allclose(posenc.apply_rope(x, 5, scaling=YARN), want, rtol=0, atol=1e-14)


# --- 2. YaRN: a derived attention factor <= 0 (or a division by zero) is refused by key -------


def _g(factor, m):  # HF's get_mscale
    return 0.1 * m * math.log(factor) + 1.0


@pytest.mark.parametrize(
    "extra,key",
    [
        ({"mscale": 1.0, "mscale_all_dim": -10.0}, "mscale_all_dim"),  # g = 0 exactly: 1 / 0
        ({"mscale": 1.0, "mscale_all_dim": -20.0}, "mscale_all_dim"),  # g < 0: sign flip
        ({"mscale": -20.0, "mscale_all_dim": 1.0}, "mscale"),
        ({"mscale": -20.0, "mscale_all_dim": -20.0}, "mscale"),  # ratio > 0, each term < 0
        ({"mscale": 1.7e308, "mscale_all_dim": 1.0, "factor": 1e6}, "mscale"),  # g = inf
    ],
)
def test_yarn_attention_factor_must_be_positive(extra, key):
    scaling = {**YARN, "factor": math.e, **extra}
    factor = "1e\\+06" if scaling["factor"] == 1e6 else "2\\.71828"
    with pytest.raises(
        ValueError, match=rf"scaling\['{key}'\] = .* scaling\['factor'\] = {factor}.*> 0"
    ):
        posenc.rope_frequencies(8, scaling=scaling)
    with pytest.raises(ValueError, match=rf"scaling\['{key}'\]"):
        posenc.apply_rope(torch.ones(3, 8), 3, scaling=scaling)


def test_yarn_mscale_ratio_that_overflows_is_refused():
    # g(mscale) ~ 1.4e306 over g(mscale_all_dim) ~ 1e-15: the ratio is inf
    tiny = -1 / (0.1 * math.log(4.0)) * (1 - 1e-15)
    scaling = {**YARN, "mscale": 1e307, "mscale_all_dim": tiny}
    with pytest.raises(
        ValueError, match=r"scaling\['mscale'\] .* scaling\['mscale_all_dim'\] .*overflows"
    ):
        posenc.rope_frequencies(8, scaling=scaling)


@pytest.mark.parametrize(
    "mscale,mscale_all", [(1.0, -1.0), (0.707, 0.707), (2.0, 1.0), (1.0, -7.0)]
)
def test_yarn_positive_mscale_combinations_keep_hf_value(mscale, mscale_all):
    _, f = posenc.rope_frequencies(
        8, scaling={**YARN, "mscale": mscale, "mscale_all_dim": mscale_all}
    )
    assert f == pytest.approx(_g(4.0, mscale) / _g(4.0, mscale_all), rel=1e-15)
    assert f > 0


@pytest.mark.parametrize(
    "betas", [{"beta_fast": 1e308}, {"beta_slow": 1e-300}, {"beta_fast": 1e308, "truncate": False}]
)
def test_yarn_extreme_betas_give_finite_frequencies(betas):
    plain, _ = posenc.rope_frequencies(16)
    inv, f = posenc.rope_frequencies(16, scaling={**YARN, **betas})
    assert np.isfinite(inv).all() and f > 0
    # every pair lies between interpolation (w / factor) and extrapolation (w)
    assert np.all(inv <= plain * (1 + 1e-15)) and np.all(inv >= plain / 4.0 * (1 - 1e-15))


# --- 3. scaling keys: strings only, every bad value named by its key ---------------------------


@pytest.mark.parametrize(
    "scaling", [{"rope_type": "linear", "factor": 2.0, 1: 3}, {("a",): 1}, {None: 2.0}]
)
def test_scaling_with_non_string_keys_is_a_type_error_naming_scaling(scaling):
    with pytest.raises(TypeError, match=r"^scaling must have string keys .*got "):
        posenc.rope_frequencies(8, scaling=scaling)


@pytest.mark.parametrize("key", ["rope_type", "type"])
@pytest.mark.parametrize("value", [3, ["yarn"], np.array(["linear", "yarn"])])
def test_rope_type_that_is_not_a_string_is_named(key, value):
    with pytest.raises(TypeError, match=rf"^scaling\['{key}'\] must be a string"):
        posenc.rope_frequencies(8, scaling={key: value, "factor": 2.0})


_VALID = {
    "linear": {"factor": 2.0},
    "dynamic": {"factor": 2.0, "original_max_position_embeddings": 64},
    "yarn": {
        **YARN,
        "beta_fast": 32.0,
        "beta_slow": 1.0,
        "mscale": 1.0,
        "mscale_all_dim": 1.0,
        "truncate": True,
    },
    "llama3": {
        "factor": 8.0,
        "original_max_position_embeddings": 64,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
    },
    "longrope": {
        "short_factor": [1.0] * 4,
        "long_factor": [2.0] * 4,
        "original_max_position_embeddings": 64,
        "factor": 2.0,
        "attention_factor": 1.1,
    },
}
_KEY_CASES = [(t, k) for t, params in _VALID.items() for k in params if k != "rope_type"]


@pytest.mark.parametrize("rope_type,key", _KEY_CASES)
@pytest.mark.parametrize("bad", ["x", float("nan"), -1e400, 10**400, [1.0, 2.0]])
def test_every_bad_scaling_value_names_its_key(rope_type, key, bad):
    scaling = {**_VALID[rope_type], "rope_type": rope_type, key: bad}
    with pytest.raises((TypeError, ValueError), match=rf"scaling\['{key}'\]"):
        posenc.rope_frequencies(8, scaling=scaling, seq_len=100)


def test_the_valid_scalings_of_the_table_are_accepted():  # so the test above is not vacuous
    for rope_type, params in _VALID.items():
        inv, f = posenc.rope_frequencies(8, scaling={**params, "rope_type": rope_type}, seq_len=100)
        assert inv.shape == (4,) and np.isfinite(inv).all() and f > 0


def test_factor_list_error_says_what_came():
    bad = {**_VALID["longrope"], "rope_type": "longrope", "long_factor": [1.0, 2.0, -3.0, 1.0]}
    with pytest.raises(
        ValueError,
        match=r"scaling\['long_factor'\] must hold finite numbers > 0, got -3(\.0)? at index 2",
    ):
        posenc.rope_frequencies(8, scaling=bad, seq_len=100)


# --- 4. apply_rope: empty inputs like NumPy, zero-width and non-floating x named as x ---------


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


# --- 5. t5_bucket at the int64 / uint64 extremes ---------------------------------------------


def _t5_reference(rel: int, bidirectional: bool, num_buckets: int, max_distance: float) -> int:
    """T5's formula on exact Python ints, with the float32 logarithm of HF."""
    n = num_buckets // 2 if bidirectional else num_buckets
    offset = n if bidirectional and rel > 0 else 0
    r = abs(rel) if bidirectional else max(-rel, 0)
    e = n // 2
    if r < e:
        return offset + r
    log_range = math.log(max_distance / e) or math.log1p((max_distance - e) / e)
    scaled = np.log(np.float32(float(r)) / np.float32(e)) / np.float32(log_range)
    scaled = float(scaled * np.float32(n - e))
    return offset + min(n - 1, e + int(min(scaled, n - e)))


SIGNED = [-(2**63), -(2**63) + 1, -(2**62), -200, -9, -8, -1, 0, 1, 7, 8, 200, 2**40, 2**63 - 1]
UNSIGNED = [0, 1, 8, 200, 2**63 - 1, 2**63, 2**63 + 2**40, 2**64 - 1]
T5_SETTINGS = [
    (True, 32, 128.0),
    (False, 32, 128.0),
    (True, 1000, 1e30),
    (False, 1000, 1e30),
    (True, 1000, math.nextafter(250.0, math.inf)),  # max_distance / e rounds to 1
    (False, 64, math.nextafter(32.0, math.inf)),
]


@pytest.mark.parametrize("bidirectional,num_buckets,max_distance", T5_SETTINGS)
def test_t5_bucket_is_exact_at_int64_and_uint64_extremes(bidirectional, num_buckets, max_distance):
    kw = {"bidirectional": bidirectional, "num_buckets": num_buckets, "max_distance": max_distance}
    for values, np_dtype, t_dtype in (
        (SIGNED, np.int64, torch.int64),
        (UNSIGNED, np.uint64, torch.uint64),
    ):
        want = np.array([_t5_reference(v, **kw) for v in values])
        assert want.min() >= 0 and want.max() < num_buckets
        got_np = posenc.t5_bucket(np.array(values, dtype=np_dtype), **kw)
        got_t = posenc.t5_bucket(
            torch.tensor(np.array(values, dtype=np_dtype).view(np.int64)).view(t_dtype), **kw
        )
        np.testing.assert_array_equal(got_np, want)
        np.testing.assert_array_equal(got_t.cpu().numpy(), want)
        assert got_np.dtype == np.int64 and got_t.dtype == torch.int64


@pytest.mark.parametrize("np_dtype", [np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32])
def test_t5_bucket_small_dtypes_at_their_extremes(np_dtype):
    info = np.iinfo(np_dtype)
    values = [info.min, info.min + 1, 0, 1, info.max - 1, info.max]
    want = posenc.t5_bucket(np.array(values, dtype=np.int64))
    np.testing.assert_array_equal(posenc.t5_bucket(np.array(values, dtype=np_dtype)), want)
    np.testing.assert_array_equal(
        posenc.t5_bucket(torch.as_tensor(np.array(values, dtype=np_dtype))).cpu().numpy(), want
    )


@pytest.mark.parametrize("rel", [2**64, -(2**63) - 1, [1, 10**30], [[-(10**20)]]])
def test_t5_bucket_python_ints_out_of_range_are_a_value_error(rel):
    with pytest.raises(ValueError, match=r"^relative_position must fit in int64"):
        posenc.t5_bucket(rel)


def test_t5_bucket_huge_num_buckets_is_named():
    with pytest.raises(ValueError, match=r"^num_buckets must be an integer <= 2\*\*53, got 10+$"):
        posenc.t5_bucket(5, num_buckets=10**30)


# --- 6. huge ints: a ValueError naming the argument, never a raw OverflowError ------------------


@pytest.mark.parametrize(
    "call,match",
    [
        (
            lambda: posenc.alibi_bias(2, 2, 2, offset=10**30),
            r"^offset must keep the query positions",
        ),
        (
            lambda: posenc.alibi_bias(2, 2, 2, offset=-(10**30), like=torch.zeros(1)),
            r"^offset must keep",
        ),
        (lambda: posenc.alibi_bias(3, 2, 2, offset=2**53 - 1), r"^offset must keep .*q_len=3"),
        (
            lambda: posenc.alibi_bias(10**30, 2, 2),
            r"^q_len must be a non-negative integer <= 2\*\*53",
        ),
        (lambda: posenc.alibi_bias(2, 2**70, 2, like=torch.zeros(1)), r"^k_len must be"),
        (
            lambda: posenc.alibi_bias(2**40, 2**40, 2),
            r"^alibi_bias would have n_heads \* q_len \* k_len",
        ),
        (lambda: posenc.alibi_slopes(2**70), r"^n_heads must be a positive integer <= 2\*\*53"),
        (
            lambda: compat.fairseq_make_positions(np.ones((2, 3), np.int64), 2**70),
            r"^padding_idx must keep",
        ),
        (
            lambda: compat.fairseq_make_positions(torch.ones(2, 3, dtype=torch.long), 2**70),
            r"^padding_idx",
        ),
        (
            lambda: compat.fairseq_make_positions(torch.ones(2, 3, dtype=torch.long), 2**63 - 3),
            r"^padding_idx",
        ),
        (
            lambda: compat.fairseq_make_positions(np.ones((2, 3), np.int64), -(2**63) - 1),
            r"^padding_idx",
        ),
        (
            lambda: compat.tensor2tensor_timing_signal_1d(3, 4, start_index=10**400),
            r"^start_index must keep",
        ),
        (
            lambda: compat.tensor2tensor_timing_signal_1d(10**30, 4),
            r"^length must be at most 2\*\*53",
        ),
        (lambda: compat.tensor2tensor_timing_signal_1d(2**40, 2**40), r"^length \* channels = "),
        (
            lambda: compat.fairseq_sinusoidal_embedding(10**30, 4),
            r"^num_embeddings must be at most",
        ),
        (lambda: compat.fairseq_sinusoidal_embedding(4, 2**70), r"^embedding_dim must be at most"),
        (lambda: compat.marian_sinusoidal_weight(10**30, 4), r"^n_pos must be at most"),
        (lambda: compat.marian_sinusoidal_weight(2**31, 2**31), r"^n_pos \* dim = "),
        (lambda: compat.mae_2d_sincos_pos_embed(8, 10**30), r"^grid_size must be at most"),
        (lambda: compat.mae_2d_sincos_pos_embed(2**70, 2), r"^embed_dim must be at most"),
        (lambda: compat.mae_2d_sincos_pos_embed(8, 2**30), r"^grid_size \*\* 2 \* embed_dim = "),
        (
            lambda: posenc.rope_frequencies(2**70),
            r"^dim must be a positive even integer <= 2\*\*53",
        ),
        (
            lambda: posenc.rope_permutation(2**70),
            r"^dim must be a positive even integer <= 2\*\*53",
        ),
        (
            lambda: posenc.rope_frequencies(8, seq_len=10**400),
            r"^seq_len must be an integer <= 2\*\*53",
        ),
        (
            lambda: posenc.rope_frequencies(
                8, scaling={**YARN, "original_max_position_embeddings": 10**400}
            ),
            r"^scaling\['original_max_position_embeddings'\] must be an integer <= 2\*\*53",
        ),
        (
            lambda: posenc.rope_frequencies(8, scaling={"rope_type": "linear", "factor": 10**400}),
            r"^scaling\['factor'\] must be a finite real number",
        ),
        (
            lambda: posenc.rope_frequencies(
                4,
                scaling={
                    "rope_type": "dynamic",
                    "factor": 1e300,
                    "original_max_position_embeddings": 1,
                },
                seq_len=2**53,
            ),
            r"^seq_len = 9007199254740992 with scaling\['factor'\] = 1e\+300 .* overflow",
        ),
    ],
)
def test_huge_ints_are_a_value_error_naming_the_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_the_largest_allowed_values_still_compute_right():
    # ALiBi: the last allowed query position, exact in float64
    bias = posenc.alibi_bias(1, 2, 1, offset=2**53)
    np.testing.assert_array_equal(bias, -0.00390625 * np.array([[[2.0**53, 2.0**53 - 1]]]))
    np.testing.assert_array_equal(
        posenc.alibi_bias(1, 2, 1, offset=2**53, like=torch.zeros(1, dtype=torch.float64))
        .cpu()
        .numpy(),
        bias,
    )
    # fairseq: the last padding_idx whose positions fit in int64
    pad = 2**63 - 1 - 3
    tokens = np.array([[5, pad, 6], [7, 8, 9]])
    want = np.array([[pad + 1, pad, pad + 2], [pad + 1, pad + 2, pad + 3]])
    np.testing.assert_array_equal(compat.fairseq_make_positions(tokens, pad), want)
    np.testing.assert_array_equal(
        compat.fairseq_make_positions(torch.as_tensor(tokens), pad).cpu().numpy(), want
    )


@pytest.mark.parametrize("t_dtype", [torch.uint8, torch.int8, torch.int16, torch.uint16])
@pytest.mark.parametrize("pad", [-1, 255 + 256, -129, 1])
def test_fairseq_make_positions_pad_outside_the_dtype_matches_no_token(t_dtype, pad):
    # torch compares uint8 255 == -1 (it wraps the scalar); NumPy compares exact values
    tokens = np.array([[255, 127, 1, 0], [1, 1, 3, 255]])
    tokens = tokens.astype(np.int64) if t_dtype.is_signed else tokens
    np_dtype = {
        torch.uint8: np.uint8,
        torch.int8: np.int8,
        torch.int16: np.int16,
        torch.uint16: np.uint16,
    }[t_dtype]
    arr = tokens.astype(np_dtype)  # int8: 255 wraps to -1, the same values in both libraries
    want = compat.fairseq_make_positions(arr.astype(np.int64), pad)
    np.testing.assert_array_equal(compat.fairseq_make_positions(arr, pad), want)
    np.testing.assert_array_equal(
        compat.fairseq_make_positions(torch.as_tensor(arr), pad).cpu().numpy(), want
    )


# --- 7. torch.compile(fullgraph=True): no graph break, equal to eager ---------------------------


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


# --- 8. the chunked torch RoPE path at real sizes ----------------------------------------------


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


# --- 9. the float32 RoPE bound at the edge of its range (|p| <= 2**31) ------------------------


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

"""posenc.torch modules against hostile input (issue 8, module side): right or refused.

Each test is the regression test of one silent wrong answer or nameless error the attack found:
integer position dtypes, meta-device initialisation, caches that lowered precision, non-floating
or NumPy ``x``, strided and offset views, unchecked lengths and offsets, and the message when
torch is missing. Module == function for every float dtype and integer position dtype.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import posenc
from posenc.torch import (
    LearnedPositionalEmbedding,
    RotaryEmbedding,
    SinusoidalPositionalEncoding,
    T5RelativeBias,
)
from posenc.torch.learned import PositionOutOfRangeError

values = pytest.mark.values


@pytest.fixture(scope="module", autouse=True)
def _on_the_cpu():
    """The modules, inputs and references here are CPU tensors with values under every --device
    (test_devices covers the other devices): tensors made without a device land there too."""
    with torch.device("cpu"):
        yield


FLOATS = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
INTS = (
    torch.uint8,
    torch.int8,
    torch.int16,
    torch.int32,
    torch.int64,
    torch.uint16,
    torch.uint32,
    torch.uint64,
)


def _randn(*shape, dtype=torch.float32, seed=0):
    gen = torch.Generator().manual_seed(seed)  # on the CPU, as the modules built here
    return torch.randn(shape, generator=gen, dtype=torch.float64, device="cpu").to(dtype)


def _ulps(got, want, dtype):
    """Max |got - want| in units of ``dtype``'s epsilon times the largest |want| (a scale-free bound)."""
    scale = float(want.double().abs().max()) or 1.0
    return float((got.double() - want.double()).abs().max()) / (scale * torch.finfo(dtype).eps)


# --- every integer dtype holds positions -----------------------------------------------------


@values
@pytest.mark.parametrize("int_dtype", INTS, ids=str)
@pytest.mark.parametrize("start", [0, 3, 120], ids=["cache-start", "cache-mid", "past-cache"])
def test_rope_integer_position_dtypes_are_positions(int_dtype, start):
    rope = RotaryEmbedding(16, max_len=64, pairing="half")
    q, k = _randn(2, 3, 8, 16), _randn(2, 1, 8, 16, seed=1)
    pos = torch.arange(start, start + 8)
    want_q = posenc.apply_rope(q, pos, pairing="half")
    want_k = posenc.apply_rope(k, pos, pairing="half")
    q_rot, k_rot = rope(q, k, positions=pos.to(int_dtype))  # uint8 is not a mask, int8 indexes
    torch.testing.assert_close(q_rot, want_q, atol=1e-6, rtol=0)
    torch.testing.assert_close(k_rot, want_k, atol=1e-6, rtol=0)
    # per-batch ids of that dtype, and the same ids as a NumPy array of the matching dtype
    ids = torch.stack([pos, pos.flip(0)]).to(int_dtype)  # (batch, seq)
    want = posenc.apply_rope(q, ids.to(torch.int64), pairing="half")
    torch.testing.assert_close(rope(q, k, positions=ids)[0], want, atol=1e-6, rtol=0)
    np_ids = ids.to(torch.int64).cpu().numpy().astype(str(int_dtype).removeprefix("torch."))
    torch.testing.assert_close(rope(q, k, positions=np_ids)[0], want, atol=1e-6, rtol=0)


@values
def test_rope_uint64_past_2_63_is_a_position_not_a_wrapped_index():
    """A uint64 position >= 2**63 read as int64 is negative; it must not hit the cache."""
    rope = RotaryEmbedding(8, max_len=16)
    q = _randn(1, 2, 8, dtype=torch.float64)
    big = torch.tensor([2**63 + 5, 3], dtype=torch.uint64)
    got, _ = rope(q, q, positions=big)
    want = posenc.apply_rope(q, big)
    torch.testing.assert_close(got, want, atol=1e-12, rtol=0)


@pytest.mark.parametrize(
    "positions,exc,match",
    [
        (
            torch.ones(3, dtype=torch.bool, device="cpu"),
            TypeError,
            r"positions must hold real numbers, got Tensor of dtype torch.bool",
        ),
        (
            torch.ones(3, dtype=torch.complex64, device="cpu"),
            TypeError,
            r"positions must hold real numbers, got Tensor of dtype torch.complex64",
        ),
        (np.ones(3, dtype=bool), TypeError, r"positions must hold real numbers"),
        (
            torch.tensor([0.0, float("inf"), 1.0], device="cpu"),
            ValueError,
            r"positions must be finite",
        ),
    ],
)
def test_rope_refuses_bool_and_complex_positions_like_apply_rope(positions, exc, match):
    with torch.device("cpu"):
        rope = RotaryEmbedding(8, max_len=16)
    q = torch.zeros(1, 3, 8, device="cpu")
    with pytest.raises(exc, match=match):
        rope(q, q, positions=positions)
    with pytest.raises(exc, match=match):
        posenc.apply_rope(q, positions)


@values
def test_rope_float_positions_are_fractional_positions():
    rope = RotaryEmbedding(8, max_len=16)
    q = _randn(1, 4, 8)
    pos = torch.tensor([0.5, 1.0, 2.25, 100.75])
    torch.testing.assert_close(
        rope(q, q, positions=pos)[0], posenc.apply_rope(q, pos), atol=1e-6, rtol=0
    )


@pytest.mark.parametrize(
    "build, match",
    [
        (
            lambda: SinusoidalPositionalEncoding(8, max_len=2**40),
            r"^the table of max_len x dim = 1099511627776 x 8 entries needs 64\.0 TiB",
        ),
        (
            lambda: LearnedPositionalEmbedding(2**40, 8),
            r"^the table of max_len x dim = 1099511627776 x 8 entries needs 32\.0 TiB",
        ),
        (
            lambda: SinusoidalPositionalEncoding(8, max_len=16).encodings(2**40),
            r"^the encodings of seq_len x dim = 1099511627776 x 8 entries needs 64\.0 TiB",
        ),
    ],
    ids=["sinusoidal", "learned", "encodings"],
)
def test_a_table_past_memory_is_refused_by_name_before_allocating(build, match):
    """Issue 21: a table past the machine's memory was the allocator's error; refused by name,
    with the size, before allocating. Under 2**48 entries, so only the memory check stands
    between these and the allocator. (RotaryEmbedding's cache has its own check, with what
    computing it costs: tests/test_torch_rope.py.)"""
    with pytest.raises(ValueError, match=match + r" for its result, more than the .* of memory"):
        build()


def test_the_memory_limit_is_the_devices_and_none_on_meta(monkeypatch):
    """The limit the refusals above use: the device's memory (monkeypatched to 1 MiB here, so
    the boundary is deterministic); on the meta device none, as it holds no values."""
    from posenc import _array

    monkeypatch.setitem(_array._MEMORY, "cpu", 2**20)
    # the sinusoidal table is computed in float64: 2**14 x 8 entries x 8 bytes is exactly 1 MiB
    assert SinusoidalPositionalEncoding(8, max_len=2**14).table.shape == (2**14, 8)
    with pytest.raises(ValueError, match=r"^the table of max_len x dim = 16385 x 8 .* 1\.0 MiB"):
        SinusoidalPositionalEncoding(8, max_len=2**14 + 1)
    # the learned table is allocated in the default dtype: float32, 4 bytes an entry
    assert LearnedPositionalEmbedding(2**15, 8).weight.shape == (2**15, 8)
    with pytest.raises(ValueError, match=r"^the table of max_len x dim = 32769 x 8"):
        LearnedPositionalEmbedding(2**15 + 1, 8)
    with torch.device("meta"):
        assert LearnedPositionalEmbedding(2**40, 8).weight.shape == (2**40, 8)


def test_memory_bytes_reads_the_machine_once_per_device(monkeypatch):
    """memory_bytes: MemTotal + SwapTotal from /proc/meminfo for the CPU, read once; None where
    nothing is known (meta, a CUDA device without a runtime)."""
    from posenc import _array

    monkeypatch.setattr(_array, "_MEMORY", {})
    meminfo = {}
    with open("/proc/meminfo") as f:
        for line in f:
            name, _, rest = line.partition(":")
            meminfo[name] = int(rest.split()[0]) * 1024
    assert _array.memory_bytes() == meminfo["MemTotal"] + meminfo.get("SwapTotal", 0)
    assert _array.memory_bytes(torch.device("cpu")) == _array.memory_bytes()
    assert _array.memory_bytes(torch.device("meta")) is None
    if not torch.cuda.is_available():
        assert _array.memory_bytes(torch.device("cuda", 0)) is None
    monkeypatch.setitem(_array._MEMORY, "cpu", 1000)  # cached: read once
    assert _array.memory_bytes() == 1000
    _array.check_memory(1000, what="x")
    with pytest.raises(ValueError, match=r"^x needs 1001 bytes for its result, more than the 1000"):
        _array.check_memory(1001, what="x")


@values
@pytest.mark.parametrize("int_dtype", INTS, ids=str)
def test_learned_embed_takes_every_integer_dtype(int_dtype):
    module = LearnedPositionalEmbedding(16, 4, padding_idx=1)
    pos = torch.tensor([0, 3, 15])
    torch.testing.assert_close(
        module.embed(pos.to(int_dtype)), module.weight[pos + 2], atol=0, rtol=0
    )
    with pytest.raises(PositionOutOfRangeError, match="position 16 is past the table"):
        module.embed(torch.tensor([2, 16]).to(int_dtype))
    if int_dtype == torch.uint64:  # 2**63 + 1 must not wrap to a negative (padding) row
        with pytest.raises(PositionOutOfRangeError, match="past the table"):
            module.embed(torch.tensor([2**63 + 1], dtype=torch.uint64))


# --- meta-device initialisation -------------------------------------------------------------

MODULES = {
    "sinusoidal": (
        lambda: SinusoidalPositionalEncoding(16, max_len=32, layout="concat"),
        lambda m: torch.cat([m(_randn(2, 20, 16)), m(_randn(2, 20, 16), offset=20)], dim=1),
    ),
    "rope": (
        lambda: RotaryEmbedding(
            16,
            max_len=32,
            rotary_dim=8,
            scaling={"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 8},
        ),
        lambda m: torch.cat(m(_randn(2, 3, 20, 16), _randn(2, 1, 20, 16, seed=1), offset=5), dim=1),
    ),
    "learned": (
        lambda: LearnedPositionalEmbedding(32, 16, padding_idx=1),
        lambda m: m(_randn(2, 20, 16), offset=4),
    ),
    "t5": (lambda: T5RelativeBias(4, num_buckets=16, max_distance=20), lambda m: m(5, 9, offset=3)),
}


@values
@pytest.mark.parametrize("name", list(MODULES))
def test_meta_init_then_to_empty_and_reset_parameters_equals_a_fresh_module(name):
    build, run = MODULES[name]
    with torch.device("cpu"):
        torch.manual_seed(123)
        fresh = build()
    with torch.device("meta"):
        lazy = build()
    assert all(t.device.type == "meta" for t in [*lazy.buffers(), *lazy.parameters()])
    lazy = lazy.to_empty(device="cpu")
    torch.manual_seed(123)  # the same draws for the learned tables as in the fresh build
    lazy.reset_parameters()
    want = {**dict(fresh.named_buffers()), **dict(fresh.named_parameters())}
    got = {**dict(lazy.named_buffers()), **dict(lazy.named_parameters())}
    assert got.keys() == want.keys() and want
    for key in want:
        assert got[key].dtype == want[key].dtype and got[key].device.type == "cpu", key
        assert torch.equal(got[key], want[key]), key
    with torch.no_grad():
        assert torch.equal(run(lazy), run(fresh))


@values
@pytest.mark.parametrize("name", ["sinusoidal", "rope"])
def test_reset_parameters_repairs_overwritten_buffers_in_place(name):
    build, run = MODULES[name]
    with torch.device("cpu"):
        module = build()
    want = run(module)
    buffers = list(module.buffers())
    for b in buffers:
        b.fill_(1e20)  # what uninitialised memory may hold
    assert not torch.allclose(run(module), want)
    module.reset_parameters()
    assert all(
        a is b for a, b in zip(module.buffers(), buffers, strict=True)
    )  # in place: same tensors
    assert torch.equal(run(module), want)


# --- caches never lower the precision of an input -------------------------------------------


@values
@pytest.mark.parametrize("convert", ["double", "to_float64", "default_float64"])
def test_rope_float64_module_rotates_in_float64(convert):
    if convert == "default_float64":
        old = torch.get_default_dtype()
        torch.set_default_dtype(torch.float64)
        try:
            with torch.device("cpu"):
                rope = RotaryEmbedding(16, max_len=256)
        finally:
            torch.set_default_dtype(old)
    else:
        with torch.device("cpu"):
            rope = RotaryEmbedding(16, max_len=256)
        rope = rope.double() if convert == "double" else rope.to(torch.float64)
    assert rope.cos_cached.dtype == torch.float64
    q = _randn(2, 8, 16, dtype=torch.float64)
    pos = torch.arange(200, 208)  # inside the cache: the cache itself must be float64-exact
    for got in (rope(q, q, offset=200)[0], rope(q, q, positions=pos)[0]):
        torch.testing.assert_close(got, posenc.apply_rope(q, pos), atol=1e-14, rtol=0)
    # and it still serves float32 input at float32 precision
    q32 = q.float()
    torch.testing.assert_close(
        rope(q32, q32, offset=200)[0], posenc.apply_rope(q32, pos), atol=1e-6, rtol=0
    )


@values
def test_rope_float32_cache_never_serves_float64_input():
    with torch.device("cpu"):
        rope = RotaryEmbedding(16, max_len=256)
    assert rope.cos_cached.dtype == torch.float32
    q = _randn(2, 8, 16, dtype=torch.float64)
    pos = torch.arange(200, 208)
    for got in (
        rope(q, q, offset=200)[0],
        rope(q, q, positions=pos)[0],
        rope.cos_sin(q, offset=200)[0],
    ):
        assert got.dtype == torch.float64
    torch.testing.assert_close(
        rope(q, q, offset=200)[0], posenc.apply_rope(q, pos), atol=1e-14, rtol=0
    )


@values
@pytest.mark.parametrize("positions", [None, torch.arange(100, 108)], ids=["offset", "positions"])
def test_rope_q_float32_with_k_float64_rotates_each_at_its_precision(positions):
    with torch.device("cpu"):
        rope = RotaryEmbedding(16, max_len=256, pairing="half")
    q, k = _randn(1, 2, 8, 16), _randn(1, 2, 8, 16, seed=1, dtype=torch.float64)
    kw = {"offset": 100} if positions is None else {"positions": positions.cpu()}
    q_rot, k_rot = rope(q, k, **kw)
    pos = torch.arange(100, 108)
    assert q_rot.dtype == torch.float32 and k_rot.dtype == torch.float64
    torch.testing.assert_close(k_rot, posenc.apply_rope(k, pos, pairing="half"), atol=1e-14, rtol=0)
    torch.testing.assert_close(q_rot, posenc.apply_rope(q, pos, pairing="half"), atol=1e-6, rtol=0)
    # and the other way round
    k_rot2, q_rot2 = rope(k, q, **kw)
    torch.testing.assert_close(k_rot2, k_rot, atol=0, rtol=0)
    torch.testing.assert_close(q_rot2, q_rot, atol=1e-6, rtol=0)


@values
def test_modules_built_under_default_bfloat16_keep_float32_precision():
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.bfloat16)
    try:
        with torch.device("cpu"):
            rope = RotaryEmbedding(16, max_len=256)
            pe = SinusoidalPositionalEncoding(16, max_len=256)
    finally:
        torch.set_default_dtype(old)
    assert rope.cos_cached.dtype == torch.float32  # never below float32
    assert pe.table.dtype == torch.bfloat16  # follows the default dtype, like a parameter
    q = _randn(2, 8, 16)
    pos = torch.arange(200, 208)
    torch.testing.assert_close(
        rope(q, q, offset=200)[0], posenc.apply_rope(q, pos), atol=1e-6, rtol=0
    )
    # float32 x with the bfloat16 table: the encodings come at float32 precision
    x = _randn(2, 8, 16, seed=3)
    torch.testing.assert_close(pe(x, offset=200), x + posenc.sinusoidal(pos, 16), atol=1e-6, rtol=0)
    # bfloat16 x with it: the table itself
    xb = x.to(torch.bfloat16)
    torch.testing.assert_close(pe(xb, offset=200), xb + pe.table[200:208], atol=0, rtol=0)


@values
@pytest.mark.parametrize("convert", ["double", "to_float64"])
def test_sinusoidal_double_is_a_float64_table(convert):
    with torch.device("cpu"):
        pe = SinusoidalPositionalEncoding(16, max_len=64)
    pe = pe.double() if convert == "double" else pe.to(torch.float64)
    want = posenc.sinusoidal(torch.arange(64), 16, dtype=torch.float64)
    assert pe.table.dtype == torch.float64
    torch.testing.assert_close(pe.table, want, atol=1e-14, rtol=0)  # not a widened float32 table
    x = _randn(1, 8, 16, dtype=torch.float64)
    torch.testing.assert_close(
        pe(x, offset=50),
        x + posenc.sinusoidal(torch.arange(50, 58), 16, dtype=torch.float64),
        atol=1e-14,
        rtol=0,
    )
    # a float32 table never serves float64 input either
    pe32 = pe.float()
    assert pe32.table.dtype == torch.float32
    torch.testing.assert_close(pe32(x, offset=50), pe(x, offset=50), atol=1e-14, rtol=0)


@values
def test_half_and_back_recomputes_instead_of_rounding():
    with torch.device("cpu"):
        rope = RotaryEmbedding(16, max_len=64)
        pe = SinusoidalPositionalEncoding(16, max_len=64)
    exact_cos, exact_table = rope.cos_cached.clone(), pe.table.clone()
    rope = rope.half()
    pe = pe.to(torch.bfloat16)
    assert rope.cos_cached.dtype == torch.float32  # the float32 cache under .half() stays
    assert pe.table.dtype == torch.bfloat16
    rope, pe = rope.float(), pe.float()
    assert torch.equal(rope.cos_cached, exact_cos)
    assert torch.equal(pe.table, exact_table)  # not bfloat16 values widened back


# --- module == function, for every float dtype and integer position dtype -----------------------


@values
@settings(max_examples=60, deadline=None)
@given(
    dtype=st.sampled_from(FLOATS),
    int_dtype=st.sampled_from(INTS),
    pairing=st.sampled_from(["interleaved", "half"]),
    start=st.integers(0, 100),
    seq=st.integers(1, 9),
    module_dtype=st.sampled_from([None, *FLOATS]),
)
def test_rope_module_equals_apply_rope(dtype, int_dtype, pairing, start, seq, module_dtype):
    with torch.device("cpu"):
        rope = RotaryEmbedding(8, max_len=48, pairing=pairing)
    if module_dtype is not None:
        rope = rope.to(module_dtype)
    q = _randn(2, seq, 8, dtype=dtype, seed=start)
    pos = torch.arange(start, start + seq)
    want = posenc.apply_rope(q, pos, pairing=pairing)
    for got in (rope(q, q, positions=pos.to(int_dtype))[0], rope(q, q, offset=start)[0]):
        assert got.dtype == dtype
        # cached and computed cos/sin differ by at most a float32 unit: the result by one unit
        # of its dtype (float16/bfloat16) or float32 noise (float32), float64 noise for float64
        bound = {torch.float64: 16.0, torch.float32: 8.0}.get(dtype, 1.0)
        assert _ulps(got, want, dtype) <= bound


@values
@settings(max_examples=40, deadline=None)
@given(
    dtype=st.sampled_from(FLOATS),
    module_dtype=st.sampled_from([None, *FLOATS]),
    layout=st.sampled_from(["interleaved", "concat"]),
    offset=st.integers(-20, 100),
    seq=st.integers(0, 9),
)
def test_sinusoidal_module_equals_function(dtype, module_dtype, layout, offset, seq):
    with torch.device("cpu"):
        pe = SinusoidalPositionalEncoding(8, max_len=48, layout=layout)
    if module_dtype is not None:
        pe = pe.to(module_dtype)
    x = _randn(2, seq, 8, dtype=dtype, seed=seq)
    got = pe(x, offset=offset)
    want = x + posenc.sinusoidal(torch.arange(offset, offset + seq), 8, layout=layout, dtype=dtype)
    assert got.dtype == dtype
    if seq:
        assert _ulps(got, want, dtype) <= (2.0 if dtype in (torch.float16, torch.bfloat16) else 8.0)


# --- non-floating and NumPy x ---------------------------------------------------------------

BAD_X = {
    "int64": (torch.zeros(1, 3, 8, dtype=torch.long), TypeError, r"dtype torch.int64"),
    "uint8": (torch.zeros(1, 3, 8, dtype=torch.uint8), TypeError, r"dtype torch.uint8"),
    "bool": (torch.zeros(1, 3, 8, dtype=torch.bool), TypeError, r"dtype torch.bool"),
    "complex": (torch.zeros(1, 3, 8, dtype=torch.complex64), TypeError, r"dtype torch.complex64"),
    "float8": (
        torch.zeros(1, 3, 8).to(torch.float8_e4m3fn),
        TypeError,
        r"dtype torch.float8_e4m3fn",
    ),
    "numpy": (
        np.zeros((1, 3, 8), dtype=np.float32),
        TypeError,
        r"got ndarray of dtype float32.*torch.from_numpy",
    ),
    "list": ([[0.0] * 8] * 3, TypeError, r"got \[\[0.0"),
    "none": (None, TypeError, r"got None"),
}


def _forwards():
    with torch.device("cpu"):
        sin, learned = (
            SinusoidalPositionalEncoding(8, max_len=16),
            LearnedPositionalEmbedding(16, 8),
        )
        rope = RotaryEmbedding(8, max_len=16)
    ok = torch.zeros(1, 3, 8, device="cpu")
    return {
        "sinusoidal(x)": ("x", lambda x: sin(x)),
        "learned(x)": ("x", lambda x: learned(x)),
        "learned(x, positions)": ("x", lambda x: learned(x, positions=torch.arange(3))),
        "rope(q, k)": ("q", lambda x: rope(x, ok)),
        "rope(q, k) k": ("k", lambda x: rope(ok, x)),
        "rope.cos_sin(x)": ("x", lambda x: rope.cos_sin(x)),
    }


@pytest.mark.parametrize("bad", list(BAD_X))
@pytest.mark.parametrize("call", list(_forwards()))
def test_forward_refuses_non_floating_x_naming_it(call, bad):
    name, fn = _forwards()[call]
    x, exc, match = BAD_X[bad]
    with pytest.raises(exc, match=rf"^{name} must be a floating tensor.*{match}"):
        fn(x)


@values
def test_sinusoidal_integer_x_is_refused_not_truncated():
    """The attack's case: all zeros came back, the encoding truncated to int64."""
    with pytest.raises(TypeError, match=r"x must be a floating tensor.*torch.int64"):
        SinusoidalPositionalEncoding(8)(torch.zeros(1, 3, 8, dtype=torch.long))


def test_module_on_another_device_than_x_is_named():
    with torch.device("meta"):
        pe = SinusoidalPositionalEncoding(8, max_len=16)
    with pytest.raises(ValueError, match=r"x is on cpu but the module's table is on meta"):
        pe(torch.zeros(1, 3, 8, device="cpu"))


# --- strided, offset and expanded q / k ------------------------------------------------------


def _layouts(shape, dtype):
    seq, dim = shape[-2], shape[-1]
    wide = _randn(*shape[:-1], 2 * dim + 2, dtype=dtype, seed=7)
    return {
        "odd storage offset x[..., 1:d+1]": wide[..., 1 : dim + 1],
        "every other x[..., ::2]": wide[..., 1::2][..., :dim],
        "expanded": _randn(seq, dim, dtype=dtype, seed=8).expand(shape),
        "transposed (b, s, h, d) -> (b, h, s, d)": _randn(
            shape[0], seq, shape[1], dim, dtype=dtype, seed=9
        ).transpose(1, 2),
        "odd offset, contiguous": _randn(int(np.prod(shape)) + 1, dtype=dtype, seed=10)[1:].view(
            shape
        ),
    }


@values
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16], ids=str)
@pytest.mark.parametrize(
    "pairing,rotary_dim", [("interleaved", None), ("half", None), ("interleaved", 8)]
)
@pytest.mark.parametrize("kind", list(_layouts((2, 3, 5, 16), torch.float32)))
def test_rope_any_layout_equals_the_contiguous_result(kind, pairing, rotary_dim, dtype):
    with torch.device("cpu"):
        rope = RotaryEmbedding(16, max_len=32, pairing=pairing, rotary_dim=rotary_dim)
    x = _layouts((2, 3, 5, 16), dtype)[kind]
    assert x.shape == (2, 3, 5, 16)
    for kw in ({}, {"offset": 30}, {"positions": torch.tensor([0, 7, 3, 31, 40])}):
        got_q, got_k = rope(x, x, **kw)
        fresh = x.clone(memory_format=torch.contiguous_format)  # storage offset 0
        want, _ = rope(fresh, fresh, **kw)
        torch.testing.assert_close(got_q, want, atol=0, rtol=0)
        torch.testing.assert_close(got_k, want, atol=0, rtol=0)


@values
@pytest.mark.parametrize("pairing", ["interleaved", "half"])
@pytest.mark.parametrize("shape", [(2, 3, 0, 16), (0, 3, 4, 16), (0, 16)], ids=str)
def test_empty_inputs_work(shape, pairing):
    with torch.device("cpu"):
        rope = RotaryEmbedding(16, max_len=8, pairing=pairing)
        pe, learned = SinusoidalPositionalEncoding(16, max_len=8), LearnedPositionalEmbedding(8, 16)
    x = torch.zeros(shape, device="cpu")
    for kw in (
        {},
        {"offset": 20},
        {"positions": torch.zeros(shape[:-1], dtype=torch.uint8, device="cpu")},
    ):
        q_rot, k_rot = rope(x, x, **kw)
        assert q_rot.shape == k_rot.shape == shape
    assert pe(x, offset=100).shape == shape
    assert learned(x, offset=8 - shape[-2]).shape == shape
    assert T5RelativeBias(2)(0, 3).shape == (1, 2, 0, 3)


# --- lengths and offsets checked everywhere --------------------------------------------------


def _cpu(build):
    with torch.device("cpu"):
        return build()


@pytest.mark.parametrize(
    "call,exc,match",
    [
        (
            lambda: _cpu(lambda: SinusoidalPositionalEncoding(8, max_len=16)).encodings(-1),
            ValueError,
            r"seq_len must be a non-negative integer, got -1",
        ),
        (
            lambda: _cpu(lambda: SinusoidalPositionalEncoding(8, max_len=16)).encodings(2.5),
            TypeError,
            r"seq_len must be a non-negative integer, got 2\.5",
        ),
        (
            lambda: _cpu(lambda: SinusoidalPositionalEncoding(8, max_len=16)).encodings(True),
            TypeError,
            r"seq_len must be a non-negative integer, got True",
        ),
        (
            lambda: _cpu(lambda: SinusoidalPositionalEncoding(8, max_len=16)).encodings("3"),
            TypeError,
            r"seq_len must be a non-negative integer",
        ),
        (
            lambda: _cpu(lambda: SinusoidalPositionalEncoding(8, max_len=16)).encodings(
                3, offset=2.0
            ),
            TypeError,
            r"offset must be an integer, got 2\.0",
        ),
        (
            lambda: _cpu(lambda: SinusoidalPositionalEncoding(8, max_len=16)).encodings(
                3, offset=2**63 - 2
            ),
            ValueError,
            r"offset must keep the positions .* within int64",
        ),
        (
            lambda: _cpu(lambda: SinusoidalPositionalEncoding(8, max_len=16)).encodings(
                3, dtype=torch.int32
            ),
            TypeError,
            r"dtype must be a floating torch.dtype",
        ),
        (
            lambda: _cpu(lambda: SinusoidalPositionalEncoding(8, max_len=16))(
                torch.zeros(1, 3, 8, device="cpu"), offset=-(2**63) - 1
            ),
            ValueError,
            r"offset must keep the positions",
        ),
        (
            lambda: _cpu(lambda: SinusoidalPositionalEncoding(8, dropout=float("nan"))),
            ValueError,
            r"dropout must be a probability in \[0, 1\), got nan",
        ),
        (
            lambda: _cpu(lambda: SinusoidalPositionalEncoding(8, dropout="0.1")),
            TypeError,
            r"dropout must be a probability in \[0, 1\), got '0.1'",
        ),
        (
            lambda: _cpu(lambda: RotaryEmbedding(8, max_len=16))(
                torch.zeros(1, 3, 8, device="cpu"),
                torch.zeros(1, 3, 8, device="cpu"),
                offset=10**30,
            ),
            ValueError,
            r"offset must keep the positions .* got offset=10{30}",
        ),
        (
            lambda: _cpu(lambda: RotaryEmbedding(8, max_len=16))(
                torch.zeros(1, 3, 8, device="cpu"), torch.zeros(1, 3, 8, device="cpu"), offset=None
            ),
            TypeError,
            r"offset must be an integer, got None",
        ),
        (
            lambda: _cpu(lambda: RotaryEmbedding(8, max_len=16)).cos_sin(
                torch.zeros(1, 3, 8, device="cpu"), offset=torch.tensor(2)
            ),
            TypeError,
            r"offset must be an integer, got Tensor",
        ),
        (
            lambda: _cpu(lambda: LearnedPositionalEmbedding(16, 8))(
                torch.zeros(1, 3, 8, device="cpu"), offset=2**70
            ),
            ValueError,
            r"offset must keep the positions",
        ),
        (
            lambda: _cpu(lambda: LearnedPositionalEmbedding(16, 8))(
                torch.zeros(1, 3, 8, device="cpu"), offset=14
            ),
            PositionOutOfRangeError,
            r"position 16 \(offset=14, seq=3\) is past the table",
        ),
        (
            lambda: _cpu(lambda: T5RelativeBias(2))(3, 4, offset=2**63),
            ValueError,
            r"offset must keep every key - query distance within int64",
        ),
        (
            lambda: _cpu(lambda: T5RelativeBias(2))(3, 4, offset=-(2**63) + 2),
            ValueError,
            r"offset must keep every key - query distance",
        ),
        (
            lambda: _cpu(lambda: T5RelativeBias(2))(-1, 4),
            ValueError,
            r"q_len must be a non-negative integer, got -1",
        ),
        (
            lambda: _cpu(lambda: T5RelativeBias(2)).buckets(2, 2.5),
            TypeError,
            r"k_len must be a non-negative integer, got 2\.5",
        ),
        # sizes no device holds: refused naming the sizes, not a NumPy/torch size or overflow error
        (
            lambda: SinusoidalPositionalEncoding(10**30),
            ValueError,
            r"the table of max_len x dim = 2048 x 10{30} entries is more than 2\*\*48",
        ),
        (
            lambda: SinusoidalPositionalEncoding(8, max_len=2**63),
            ValueError,
            r"max_len x dim = 9223372036854775808 x 8",
        ),
        (
            lambda: _cpu(lambda: SinusoidalPositionalEncoding(8, max_len=16)).encodings(10**30),
            ValueError,
            r"the encodings of seq_len x dim",
        ),
        (
            lambda: RotaryEmbedding(8, max_len=10**30),
            ValueError,
            r"the cache of max_len x dim // 2 = 10{30} x 4",
        ),
        (
            lambda: RotaryEmbedding(8, max_len=2**60, rotary_dim=4),
            ValueError,
            r"max_len x rotary_dim // 2 = 1152921504606846976 x 2",
        ),
        (lambda: LearnedPositionalEmbedding(2**63, 8), ValueError, r"the table of max_len x dim"),
        (
            lambda: LearnedPositionalEmbedding(8, 8, padding_idx=10**30),
            ValueError,
            r"max_len \+ padding_idx \+ 1 rows x dim",
        ),
        (
            lambda: T5RelativeBias(2**63),
            ValueError,
            r"num_buckets x num_heads = 32 x 9223372036854775808",
        ),
        # devices
        (
            lambda: _cpu(lambda: LearnedPositionalEmbedding(8, 4))(
                torch.zeros(1, 2, 4, device="meta")
            ),
            ValueError,
            r"x is on meta but the module's table is on cpu",
        ),
        (
            lambda: _cpu(lambda: LearnedPositionalEmbedding(8, 4)).embed(
                torch.zeros(2, dtype=torch.long, device="meta")
            ),
            ValueError,
            r"positions is on the meta device \(no values\)",
        ),
    ],
)
def test_lengths_and_offsets_are_checked_naming_the_argument(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


@values
def test_rope_numpy_positions_with_negative_strides():
    with torch.device("cpu"):
        rope = RotaryEmbedding(8, max_len=16)
    q = _randn(2, 4, 8)
    ids = np.arange(4)[::-1]  # a reversed view: torch.as_tensor refuses negative strides
    torch.testing.assert_close(
        rope(q, q, positions=ids)[0],
        posenc.apply_rope(q, torch.tensor([3, 2, 1, 0])),
        atol=1e-6,
        rtol=0,
    )


@values
def test_edge_offsets_that_fit_are_served():
    with torch.device("cpu"):
        pe = SinusoidalPositionalEncoding(8, max_len=16)
        bias = T5RelativeBias(2, num_buckets=8, max_distance=16)
    assert pe.encodings(0).shape == (0, 8) and pe.encodings(0, offset=2**63 - 1).shape == (0, 8)
    assert pe.encodings(2, offset=-(2**63)).shape == (2, 8)
    far = bias(2, 3, offset=2**62)  # every key lies far before the query: all saturate
    assert torch.equal(far, bias(2, 3, offset=10**6))


# --- posenc.torch without torch -------------------------------------------------------------


def test_import_posenc_torch_without_torch_says_what_to_install():
    code = textwrap.dedent(
        """
        import importlib.abc, sys

        class NoTorch(importlib.abc.MetaPathFinder):  # as if torch were not installed
            def find_spec(self, name, path=None, target=None):
                if name == "torch" or name.startswith("torch."):
                    raise ModuleNotFoundError(f"No module named {name!r}", name=name)
                return None

        sys.meta_path.insert(0, NoTorch())
        import posenc  # the functions need no torch
        print(posenc.sinusoidal(2, 4).shape)
        try:
            import posenc.torch
        except ImportError as exc:
            print(type(exc).__name__, exc)
        """
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "(2, 4)"
    assert lines[1].startswith("ImportError posenc.torch needs PyTorch")
    assert "pip install 'posenc[torch]'" in lines[1]

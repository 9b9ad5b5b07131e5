"""Issue 8, functions side: the positions rule, torch.compile, attention in float16, dtypes,
the float32 bound at its edge, unsigned positions, huge counts, and the pad_value deprecation."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import posenc
import seeded
from conftest import make, to_numpy
from oracle import sinusoidal as oracle
from posenc._array import compiling

pytestmark = pytest.mark.values  # values are read throughout: skipped under --device meta

# --- the positions rule: only a Python int is a count -----------------------------------------

# every function of sinusoidal.py / naive.py that takes positions, with its other arguments
POSITION_FUNCTIONS = {
    "sinusoidal": lambda p, **kw: posenc.sinusoidal(p, 8, **kw),
    "integer": lambda p, **kw: posenc.integer(p, **kw),
    "normalized": lambda p, **kw: posenc.normalized(p, 16, **kw),
    "binary": lambda p, **kw: posenc.binary(p, 4, **kw),
    "periodic": lambda p, **kw: posenc.periodic(p, 5, **kw),
}
WIDTH = {"sinusoidal": 8, "integer": 1, "normalized": 1, "binary": 4, "periodic": 5}


def _equals_numpy(t, want):
    """A float64 tensor against NumPy's values: bit for bit on the CPU (one libm, the angles
    formed alike). On another device the angles are the same float64 numbers, but sin and cos are
    the device's own, not correctly rounded (CUDA's double sin, cos: within 2 ulp; the cuda leg
    measured 1 ulp, 0.38268343236508984 against NumPy's 0.3826834323650899): 2 ulp there."""
    got = t.cpu().numpy()
    if t.device.type == "cpu":
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_array_max_ulp(got, want, maxulp=2)


@pytest.mark.parametrize("fn", sorted(POSITION_FUNCTIONS))
def test_numpy_scalar_0d_array_and_0d_tensor_are_one_position(fn):
    call = POSITION_FUNCTIONS[fn]
    ids = np.array([3, 7])
    want = call(np.array([7]))[0]  # the row of position 7
    for single in (ids[1], np.int32(7), np.uint8(7), np.array(7), np.float64(7.0), np.float32(7.0)):
        got = call(single)
        assert isinstance(got, np.ndarray) and got.shape == (WIDTH[fn],), (type(single), got.shape)
        np.testing.assert_array_equal(got, want)
    t = call(torch.tensor(7), dtype=torch.float64)
    assert isinstance(t, torch.Tensor) and tuple(t.shape) == (WIDTH[fn],)
    _equals_numpy(t, want)


@pytest.mark.parametrize("fn", sorted(POSITION_FUNCTIONS))
def test_python_int_is_a_count(fn):
    got = POSITION_FUNCTIONS[fn](7)
    assert got.shape == (7, WIDTH[fn])
    np.testing.assert_array_equal(got, POSITION_FUNCTIONS[fn](np.arange(7)))


def test_the_issue_example_numpy_and_tensor_agree():
    """sinusoidal(np.array([3, 7])[1], 8) was (7, 8); the tensor version (8,)."""
    a = posenc.sinusoidal(np.array([3, 7])[1], 8)
    b = posenc.sinusoidal(torch.tensor([3, 7])[1], 8, dtype=torch.float64)
    assert a.shape == tuple(b.shape) == (8,)
    _equals_numpy(b, a)


@pytest.mark.parametrize("fn", sorted(POSITION_FUNCTIONS))
@pytest.mark.parametrize(
    "bad,exc,match",
    [
        (True, TypeError, r"positions must be an int or an array of real numbers, got True"),
        (np.bool_(True), TypeError, r"positions must hold real numbers, got ndarray of dtype bool"),
        (
            2.0,
            TypeError,
            r"positions must be an int count or an array of positions, got 2\.0 \(float\)",
        ),
        (
            np.complex128(1j),
            TypeError,
            r"positions must hold real numbers, got ndarray of dtype complex128",
        ),
        (np.float64(np.nan), ValueError, r"positions must be finite"),
        (10**30, ValueError, r"positions as an int is a count of positions and must be <= 2\*\*53"),
        (2**53 + 1, ValueError, r"must be <= 2\*\*53 .*got 9007199254740993"),
    ],
)
def test_bad_scalars_are_refused(fn, bad, exc, match):
    with pytest.raises(exc, match=match):
        POSITION_FUNCTIONS[fn](bad)


def test_huge_grid_sizes_name_the_argument():
    with pytest.raises(ValueError, match=r"height must be <= 2\*\*53 .*got 10{30}"):
        posenc.sincos_2d(10**30, 2, 8)
    with pytest.raises(ValueError, match=r"width must be <= 2\*\*53"):
        posenc.sincos_2d(2, 10**30, 8, like=torch.zeros(1))


# --- torch.compile(fullgraph=True): no graph break, equal to eager -------------------------------

F32 = 2.4e-7  # float32 rounding of the table (the documented bound)


def _compiled(fn):
    return torch.compile(fn, fullgraph=True, backend="eager")


def test_compiling_is_seen_while_tracing():
    assert not compiling()
    traced = _compiled(lambda x: x + (1.0 if compiling() else 0.0))
    assert float(traced(torch.zeros(()))) == 1.0


@pytest.mark.parametrize(
    "case",
    ["count", "count_f32", "arange", "rows", "offset", "left_padding", "float", "concat_f64"],
)
def test_sinusoidal_compiles_without_graph_break(case):
    rows = torch.arange(64)[None, :] + torch.tensor([[0], [5], [1000], [2**20]])
    padded = torch.tensor([[0, 1, 2, 3, 4], [1, 1, 0, 1, 2]])
    cases = {
        "count": (lambda: posenc.sinusoidal(50, 16), ()),
        "count_f32": (lambda: posenc.sinusoidal(50, 16, dtype=np.float32), ()),
        "arange": (lambda p: posenc.sinusoidal(p, 32, dtype=torch.float32), (torch.arange(300),)),
        "rows": (lambda p: posenc.sinusoidal(p, 32, dtype=torch.float32), (rows,)),
        "offset": (lambda p, o: posenc.sinusoidal(p + o, 32), (torch.arange(100), 2**20)),
        "left_padding": (lambda p: posenc.sinusoidal(p, 8), (padded,)),
        "float": (lambda p: posenc.sinusoidal(p, 8), (torch.linspace(-50, 50, 37),)),
        "concat_f64": (
            lambda p: posenc.sinusoidal(p, 12, layout="concat", dtype=torch.float64),
            (torch.arange(40),),
        ),
    }
    fn, args = cases[case]
    got, want = _compiled(fn)(*args), fn(*args)
    assert type(got) is type(want) and got.dtype == want.dtype and got.shape == want.shape
    f64 = got.dtype in (np.float64, torch.float64)
    np.testing.assert_allclose(to_numpy(got), to_numpy(want), rtol=0, atol=1e-12 if f64 else F32)


def test_relative_positions_compiles():
    fn = lambda: posenc.relative_positions(4, 6, offset=2, max_distance=3)  # noqa: E731
    np.testing.assert_array_equal(_compiled(fn)(), fn())


def test_sincos_2d_compiles():
    fn = lambda like: posenc.sincos_2d(3, 5, 16, layout="sin_then_cos", like=like)  # noqa: E731
    like = torch.zeros(1, dtype=torch.float32)
    got, want = _compiled(fn)(like), fn(like)
    assert got.dtype == torch.float32 and got.shape == (15, 16)
    torch.testing.assert_close(got, want, rtol=0, atol=F32)


def test_attention_compiles_with_bias_mask_and_weights():
    g = torch.Generator().manual_seed(0)
    q, k, v = (seeded.randn(2, 3, n, 8, generator=g) for n in (5, 7, 7))
    bias = seeded.randn(3, 5, 7, generator=g)
    mask = torch.ones(5, 7, dtype=torch.bool).tril(diagonal=2)

    def fn(q, k, v, bias, mask):
        return posenc.attention(q, k, v, bias=bias, mask=mask, scale=0.3, return_weights=True)

    (out, w), (out_e, w_e) = _compiled(fn)(q, k, v, bias, mask), fn(q, k, v, bias, mask)
    torch.testing.assert_close(out, out_e, rtol=0, atol=1e-6)
    torch.testing.assert_close(w, w_e, rtol=0, atol=1e-6)


def test_export_of_a_module_that_calls_sinusoidal():
    class Encode(torch.nn.Module):
        def forward(self, ids):
            return posenc.sinusoidal(ids, 16, dtype=torch.float32)

    program = torch.export.export(Encode(), (torch.arange(10) + 3,))
    ids = torch.arange(10) + 2**20  # other values, same shape
    torch.testing.assert_close(program.module()(ids), Encode()(ids), rtol=0, atol=F32)


# --- attention: float16 scores scaled first, +inf bias refused ------------------------------------


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_attention_float16_is_right_where_sdpa_is(backend):
    """q k^T reaches 1e5 (> float16's 65504): NaN before; now the answer of the float16 inputs."""
    rng = np.random.default_rng(0)
    q, k, v = (make(backend, 40.0 + rng.normal(size=(n, 64)), dtype=np.float16) for n in (4, 6, 6))
    q64, k64, v64 = (to_numpy(x) for x in (q, k, v))  # what the float16 inputs hold
    assert (q64 @ k64.T).max() > 65504
    got, w = posenc.attention(q, k, v, return_weights=True)
    assert got.dtype == w.dtype == (np.float16 if backend == "numpy" else torch.float16)
    want, want_w = posenc.attention(q64, k64, v64, return_weights=True)
    np.testing.assert_allclose(to_numpy(got), want, rtol=0, atol=2e-2)  # float16 output rounding
    np.testing.assert_allclose(to_numpy(w), want_w, rtol=0, atol=1e-3)
    if backend == "torch":
        sdpa = torch.nn.functional.scaled_dot_product_attention(q, k, v)
        np.testing.assert_allclose(to_numpy(got), to_numpy(sdpa), rtol=0, atol=2e-2)


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_attention_scales_q_before_the_product(backend):
    """float32: q k^T = 5.8e38 overflows (max 3.4e38); the scaled scores, 7.2e37, do not."""
    f32 = np.float32
    q = make(backend, np.full((2, 64), 3e18), dtype=f32)
    k = make(backend, np.full((3, 64), 3e18) * np.array([[1.0], [0.5], [0.25]]), dtype=f32)
    v = make(backend, np.eye(3), dtype=f32)
    got, w = posenc.attention(q, k, v, return_weights=True)
    assert np.isfinite(to_numpy(w)).all()
    np.testing.assert_array_equal(to_numpy(w), [[1.0, 0.0, 0.0]] * 2)  # key 0 scores far highest
    if backend == "torch":
        sdpa = torch.nn.functional.scaled_dot_product_attention(q, k, v)
        torch.testing.assert_close(got, sdpa)


@pytest.mark.parametrize("backend", ["numpy", "torch"])
@pytest.mark.parametrize("bad", [np.inf, np.nan])
def test_attention_refuses_plus_inf_and_nan_bias(backend, bad):
    q = make(backend, np.zeros((2, 2)))
    bias = make(backend, np.array([[0.0, bad], [0.0, 0.0]]))
    with pytest.raises(ValueError, match=r"bias must not hold \+inf or nan"):
        posenc.attention(q, q, q, bias=bias)


def test_attention_torch_minus_inf_bias_on_every_allowed_key():
    """Row 1 may attend only to key 1, and bias removes key 1: 0/0, refused (torch too)."""
    q = torch.zeros(2, 2)
    bias = torch.tensor([[0.0, -torch.inf], [0.0, -torch.inf]])
    mask = torch.tensor([[True, True], [False, True]])
    with pytest.raises(ValueError, match=r"every score of some query row is -inf"):
        posenc.attention(q, q, q, bias=bias, mask=mask)
    # the same bias with a mask that leaves key 0 to row 1 is fine, and equals the mask alone
    ok = torch.tensor([[True, True], [True, True]])
    out, w = posenc.attention(q, q, torch.eye(2), bias=bias, mask=ok, return_weights=True)
    torch.testing.assert_close(w, torch.tensor([[1.0, 0.0], [1.0, 0.0]]))


def test_attention_ragged_mask_names_mask():
    q = np.zeros((2, 2))
    with pytest.raises(TypeError, match=r"mask must be a boolean array"):
        posenc.attention(q, q, q, mask=[[True, False], [True]])


# --- dtypes: longdouble computed in (at least) float64 ------------------------------------------


def test_longdouble_is_computed_in_float64():
    positions = np.arange(1000, 1300)
    got = posenc.sinusoidal(positions, 64, dtype=np.longdouble)
    assert got.dtype == np.longdouble
    # float32 work (the old behaviour) differs from the float64 table by ~1e-8
    np.testing.assert_array_equal(got.astype(np.float64), posenc.sinusoidal(positions, 64))
    scattered = np.array([5.25, -3.0, 1e6])
    np.testing.assert_array_equal(
        posenc.sinusoidal(scattered, 8, dtype=np.longdouble).astype(np.float64),
        posenc.sinusoidal(scattered, 8),
    )


def test_float16_numpy_output_is_float32_rounded_once():
    positions = np.arange(2**20 - 64, 2**20)
    got = posenc.sinusoidal(positions, 64, dtype=np.float16)
    assert got.dtype == np.float16
    want = posenc.sinusoidal(positions, 64)
    assert np.abs(got.astype(np.float64) - want).max() <= 2**-11 + 2.4e-7


# --- the float32 bound at its edge, |p| <= 2**31 -------------------------------------------------

BOUND = 2.4e-7  # the docstring's promise
EDGE = 2**31


def _two_product(a, b):
    """``a * b == hi + lo`` exactly (Dekker, with Veltkamp splitting), elementwise float64."""

    def split(x):
        c = 134217729.0 * x  # 2**27 + 1
        high = c - (c - x)
        return high, x - high

    hi = a * b
    ah, al = split(a)
    bh, bl = split(b)
    lo = ((ah * bh - hi) + ah * bl + al * bh) + al * bl
    return hi, lo


def _exact_table(positions, dim):
    """sin / cos(p w_i) with the float64 ladder w_i, to ~1e-16: the angle kept as hi + lo."""
    w = posenc.frequencies(dim)
    hi, lo = _two_product(np.asarray(positions, np.float64)[:, None], w[None, :])
    out = np.empty((len(positions), dim))
    out[:, 0::2] = np.sin(hi) * np.cos(lo) + np.cos(hi) * np.sin(lo)
    out[:, 1::2] = np.cos(hi) * np.cos(lo) - np.sin(hi) * np.sin(lo)
    return out


def test_exact_reference_is_exact():
    """The reference agrees with the oracle (Python floats) where both are exact: small p."""
    positions = np.arange(-40, 40) * 3.5
    np.testing.assert_allclose(
        _exact_table(positions, 16), np.array(oracle(positions.tolist(), 16)), rtol=0, atol=1e-14
    )
    hi, lo = _two_product(np.array([EDGE - 1.0]), np.array([0.1]))
    assert lo[0] != 0 and hi[0] + lo[0] == hi[0]  # lo holds what float64 rounds away


@pytest.mark.parametrize("backend", ["numpy", "torch"])
@pytest.mark.parametrize("kind", ["steps", "negative_steps", "scattered"])
def test_float32_bound_holds_up_to_the_edge(backend, kind, device):
    if kind == "steps":  # the anchor-and-rotation path, last rows before the edge
        positions = np.arange(EDGE - 1024, EDGE + 1)
    elif kind == "negative_steps":
        positions = -np.arange(EDGE - 1024, EDGE + 1)
    else:  # the direct float64 path
        positions = np.random.default_rng(2).integers(EDGE - 2**24, EDGE + 1, size=400)
    f32 = np.float32 if backend == "numpy" else torch.float32
    got = to_numpy(posenc.sinusoidal(make(backend, positions, device), 128, dtype=f32))
    err = np.abs(got - _exact_table(positions, 128)).max()
    assert err <= BOUND, err


def test_past_the_edge_float64_itself_cannot_keep_the_bound():
    """Why the range stops: at 2**33 the float64 angle p * w alone is off by more than 2.4e-7."""
    positions = np.arange(2**33 - 256, 2**33)
    w = posenc.frequencies(128)
    angle = positions[:, None].astype(np.float64) * w
    plain = np.empty((len(positions), 128))
    plain[:, 0::2], plain[:, 1::2] = np.sin(angle), np.cos(angle)
    assert np.abs(plain - _exact_table(positions, 128)).max() > BOUND


# --- left padding: first row in steps, later rows not --------------------------------------------


@pytest.mark.parametrize("layout", ["interleaved", "concat"])
def test_left_padding_rows_are_exact(backend, layout, device):
    mask = np.array(
        [[1, 1, 1, 1, 1, 1], [0, 0, 1, 1, 1, 1], [0, 1, 1, 1, 1, 1], [1, 1, 1, 1, 0, 0]]
    )
    ids = posenc.position_ids(mask, pad_value=1) + 1000  # row 0 in steps, rows 1-2 not
    assert not np.array_equal(ids[1], ids[1, 0] + np.arange(6))
    dt = np.float64 if backend == "numpy" else torch.float64
    got = to_numpy(posenc.sinusoidal(make(backend, ids, device), 10, layout=layout, dtype=dt))
    want = np.array(oracle(ids.ravel().tolist(), 10, 10000.0, layout)).reshape(4, 6, 10)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    # and every real token gets the row of its sequence alone
    alone = posenc.sinusoidal(np.arange(6) + 1000, 10, layout=layout)
    np.testing.assert_allclose(got[1, 2:], alone[:4], rtol=0, atol=1e-12)


# --- unsigned tensors in binary / normalized ------------------------------------------------------


@pytest.mark.parametrize("dt", ["uint8", "uint16", "uint32", "uint64"])
def test_unsigned_tensors_match_numpy(dt):
    values = np.array([0, 1, 5, 6, 7], dtype=dt)
    t = torch.as_tensor(values.astype(np.int64)).to(getattr(torch, dt))
    np.testing.assert_array_equal(
        posenc.binary(t, 3, dtype=torch.float64).cpu().numpy(), posenc.binary(values, 3)
    )
    np.testing.assert_array_equal(
        posenc.normalized(t, 8, dtype=torch.float64).cpu().numpy(), posenc.normalized(values, 8)
    )
    with pytest.raises(
        ValueError,
        match=r"positions must be whole numbers in \[0, 2\*\*bits\) = \[0, 4\) .*got position 7",
    ):
        posenc.binary(t, 2)
    with pytest.raises(
        ValueError, match=r"positions must lie in \[0, length - 1\] = \[0, 6\] .*got position 7"
    ):
        posenc.normalized(t, 7)


def test_normalized_divides_by_a_tensor_on_the_positions_device():
    """torch on CUDA divides a tensor by a CPU scalar (a Python number, a 0-d CPU tensor) as a
    product with its reciprocal, one rounding more: 5 / 7 was 0.7142857142857142 on the cuda leg,
    NumPy's 0.7142857142857143. ``normalized`` divides by a 0-d tensor on the positions' own
    device, which every device divides once, as NumPy does. Checked here on the call itself."""
    from torch.overrides import TorchFunctionMode

    divisors = []

    class Record(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            if getattr(func, "__name__", "") in ("div", "__truediv__", "true_divide"):
                divisors.append(args[1])
            return func(*args, **(kwargs or {}))

    t = torch.tensor([0, 5, 6])
    with Record():
        got = posenc.normalized(t, 8, dtype=torch.float64)
    assert divisors, "normalized divided nothing"
    for d in divisors:
        assert isinstance(d, torch.Tensor) and d.device == t.device, d
    if t.device.type != "meta":
        np.testing.assert_array_equal(got.cpu().numpy()[:, 0], np.array([0, 5, 6]) / 7)


def test_uint64_past_2_to_63():
    values = np.array([2**64 - 1, 2**63, 5], dtype=np.uint64)
    t = torch.tensor(values.tolist(), dtype=torch.uint64)
    np.testing.assert_array_equal(
        posenc.binary(t, 66, dtype=torch.float64).cpu().numpy(), posenc.binary(values, 66)
    )
    with pytest.raises(ValueError, match=r"got position 18446744073709551615"):
        posenc.binary(t, 63)
    with pytest.raises(ValueError, match=r"got position 18446744073709551615"):
        posenc.normalized(t, 10)


# --- sincos_2d: a torch dtype without like ---------------------------------------------------------


def test_sincos_2d_torch_dtype_points_to_like():
    with pytest.raises(
        TypeError, match=r"dtype must be a NumPy floating dtype .*pass like="
    ) as info:
        posenc.sincos_2d(2, 2, 8, dtype=torch.float32)
    assert "positions" not in str(info.value)


# --- position_ids: the pad_value default is deprecated ----------------------------------------


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_pad_value_default_warns_when_it_matters(backend):
    padded = make(backend, [[0, 1, 1], [1, 1, 1]])
    with pytest.warns(
        DeprecationWarning,
        match=r"the default pad_value changes from 1 to 0 in posenc 0\.3; pass pad_value explicitly",
    ) as record:
        ids = posenc.position_ids(padded)
    assert record[0].filename == __file__  # stacklevel: the warning points at the caller
    np.testing.assert_array_equal(to_numpy(ids), [[1, 0, 1], [0, 1, 2]])  # still 1 for now
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for pad in (0, 1):
            posenc.position_ids(padded, pad_value=pad)
        posenc.position_ids(make(backend, [[1, 1, 1]]))  # no padding: the default changes nothing

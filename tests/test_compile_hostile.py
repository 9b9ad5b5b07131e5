"""torch.compile(fullgraph=True) and torch.export of the functions: no graph break, equal to
eager."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import posenc
import seeded
from conftest import to_numpy
from posenc._array import compiling

pytestmark = pytest.mark.values  # values are read throughout: skipped under --device meta

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

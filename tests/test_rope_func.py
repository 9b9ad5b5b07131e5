"""posenc.apply_rope (and what shares its rotation) under torch.func transforms (issue 40, item 5).

The fast CPU path writes into its output with ``out=`` ops and reads positions through NumPy;
under ``torch.func`` the tensors are wrappers without storage, so ``grad``, ``vjp`` and
``jacrev`` failed on a data pointer, ``vmap`` on ``mul.out`` (no batching rule) and ``jacfwd``
on ``mul_out`` (no forward derivative). Inside a transform the functional path runs; every
answer here is compared with the same quantity computed without a transform (plain autograd on
the differentiable path, or the call itself looped over the batch).
"""

from __future__ import annotations

import pytest
import torch
from torch.func import functionalize, grad, hessian, jacfwd, jacrev, vjp, vmap

import posenc
import seeded
from posenc import _rope_torch

pytestmark = [pytest.mark.values, pytest.mark.filterwarnings("ignore::UserWarning")]

YARN = {"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 64}
OPTIONS = {
    "interleaved": {},
    "half": {"pairing": "half"},
    "partial": {"rotary_dim": 4},
    "yarn-half": {"pairing": "half", "scaling": YARN},
}
POS = [0.5, 3.0, 7.25, 100.0, 2.0**30]  # fractional, far: the float64 angle formula


def _randn(*shape, seed=0, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    return seeded.randn(shape, generator=g, dtype=torch.float64).to(dtype)


def _jacobian(f, x):
    """The Jacobian by plain reverse-mode autograd, no transform (the differentiable path)."""
    return torch.autograd.functional.jacobian(f, x)


@pytest.mark.parametrize("option", list(OPTIONS))
@pytest.mark.parametrize("positions", ["count", "int", "float"])
def test_jacrev_jacfwd_equal_autograd(option, positions):
    kw = OPTIONS[option]
    p = {"count": 5, "int": torch.tensor([9, 0, 4, 2**20, -3]), "float": torch.tensor(POS)}[
        positions
    ]
    x = _randn(5, 8)
    f = lambda v: posenc.apply_rope(v, p, **kw)  # noqa: E731
    want = _jacobian(f, x)
    torch.testing.assert_close(jacrev(f)(x), want, rtol=0, atol=1e-15)
    torch.testing.assert_close(jacfwd(f)(x), want, rtol=0, atol=1e-15)
    assert want.abs().sum() > 0  # a rotation: not a zero Jacobian


@pytest.mark.parametrize("option", list(OPTIONS))
def test_grad_and_vjp_equal_autograd(option):
    kw = OPTIONS[option]
    x, c = _randn(2, 3, 5, 8), _randn(2, 3, 5, 8, seed=1)
    loss = lambda v: (posenc.apply_rope(v, 5, **kw) * c).sum()  # noqa: E731
    leaf = x.clone().requires_grad_()
    (want,) = torch.autograd.grad(loss(leaf), leaf)
    torch.testing.assert_close(grad(loss)(x), want, rtol=0, atol=1e-15)
    out, pull = vjp(lambda v: posenc.apply_rope(v, 5, **kw), x)
    torch.testing.assert_close(out, posenc.apply_rope(x, 5, **kw), rtol=0, atol=1e-15)
    torch.testing.assert_close(pull(c)[0], want, rtol=0, atol=1e-15)


def test_grad_with_respect_to_float_positions():
    """d/dp of a rotation by p w is well defined: the same as autograd's."""
    x = _randn(5, 8)
    p = torch.tensor(POS, dtype=torch.float64)
    leaf = p.clone().requires_grad_()
    (want,) = torch.autograd.grad(posenc.apply_rope(x, leaf).square().sum() + x.sum(), leaf)
    got = grad(lambda q: posenc.apply_rope(x, q).square().sum() + x.sum())(p)
    torch.testing.assert_close(got, want, rtol=0, atol=0)
    (want,) = torch.autograd.grad((posenc.apply_rope(x, leaf) * x).sum(), leaf)
    got = grad(lambda q: (posenc.apply_rope(x, q) * x).sum())(p)
    torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-6)  # entries up to ~1e2 at 2**30


def test_hessian_of_a_quadratic_is_constant():
    """||R x||^2 = ||x||^2 for a rotation: its Hessian is 2 I."""
    x = _randn(3, 4)
    h = hessian(lambda v: posenc.apply_rope(v, 3).square().sum())(x)
    torch.testing.assert_close(h, 2 * torch.eye(12, dtype=torch.float64).reshape(3, 4, 3, 4))


@pytest.mark.parametrize("option", list(OPTIONS))
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32, torch.bfloat16])
def test_vmap_over_x_equals_the_batched_call(option, dtype):
    kw = OPTIONS[option]
    x = _randn(3, 2, 5, 8, dtype=dtype)
    f = lambda v: posenc.apply_rope(v, 5, **kw)  # noqa: E731
    got = vmap(f)(x)
    assert got.dtype == dtype and got.shape == x.shape
    tol = {torch.float64: 1e-15, torch.float32: 3e-7, torch.bfloat16: 2e-2}[dtype]
    torch.testing.assert_close(got.double(), f(x).double(), rtol=0, atol=tol * 8)
    torch.testing.assert_close(vmap(vmap(f))(x), got, rtol=0, atol=0)  # nested: the same path


@pytest.mark.parametrize("option", list(OPTIONS))
@pytest.mark.parametrize("kind", ["int", "float"])
def test_vmap_over_positions_equals_a_loop(option, kind):
    kw = OPTIONS[option]
    x = _randn(2, 5, 8)
    if kind == "int":
        ps = torch.tensor([[0, 1, 2, 3, 4], [7, 3, 2**40, -1, 5]])
    else:
        ps = torch.tensor([POS, [p + 0.25 for p in POS]], dtype=torch.float64)
    got = vmap(lambda p: posenc.apply_rope(x, p, **kw))(ps)
    want = torch.stack([posenc.apply_rope(x, p, **kw) for p in ps])
    torch.testing.assert_close(got, want, rtol=0, atol=1e-12)


def test_functionalize_equals_the_call():
    x = _randn(2, 5, 8)
    for kw in OPTIONS.values():
        f = lambda v, kw=kw: posenc.apply_rope(v, 5, **kw)  # noqa: E731
        torch.testing.assert_close(functionalize(f)(x), f(x), rtol=0, atol=1e-15)


def test_rerotate_keys_and_rotary_embedding_under_transforms():
    """They rotate through the same helpers: vmap and grad work there too."""
    from posenc.torch import RotaryEmbedding

    k = _randn(3, 2, 5, 8)
    move = lambda v: posenc.rerotate_keys(v, 5, torch.arange(5) + 3)  # noqa: E731
    torch.testing.assert_close(vmap(move)(k), move(k), rtol=0, atol=1e-15)
    c = _randn(3, 2, 5, 8, seed=2)
    leaf = k.clone().requires_grad_()
    (want,) = torch.autograd.grad((move(leaf) * c).sum(), leaf)
    torch.testing.assert_close(grad(lambda v: (move(v) * c).sum())(k), want, rtol=0, atol=1e-15)
    rope = RotaryEmbedding(8, max_len=16).double()
    for kwargs in ({}, {"positions": torch.arange(5) + 30}):
        f = lambda v, kwargs=kwargs: rope(v, v, **kwargs)[0]  # noqa: E731
        torch.testing.assert_close(vmap(f)(k), f(k), rtol=0, atol=1e-15)
        (want,) = torch.autograd.grad((f(leaf) * c).sum(), leaf)
        torch.testing.assert_close(
            grad(lambda v, f=f: (f(v) * c).sum())(k), want, rtol=0, atol=1e-15
        )


def test_the_fast_path_is_kept_outside_transforms():
    """The out= path still runs for a plain call (it is benchmarked against Meta's code), and
    is left inside every transform."""
    x, p = _randn(2, 5, 8), torch.arange(5)
    assert _rope_torch.eager(x, p) and not _rope_torch.functorch_active()
    seen = []

    def probe(v):
        seen.append((_rope_torch.functorch_active(), _rope_torch.eager(v, p)))
        return posenc.apply_rope(v, p)

    vmap(probe)(x)
    grad(lambda v: probe(v).sum())(x)
    jacfwd(probe)(x[0])
    functionalize(probe)(x)
    assert seen == [(True, False)] * 4, seen


def test_rerotate_keys_vmap_over_positions():
    """vmap over integer positions failed on rerotate_keys' range test (a data-dependent branch;
    nor does vmap batch an in-graph assert). It now equals the loop, and a position past 2**52,
    which cannot be refused there, gives NaN keys where it is used, never a wrong move."""
    k = _randn(2, 5, 8)
    ps = torch.arange(10).reshape(2, 5) * 1000 - 3000
    move = lambda p: posenc.rerotate_keys(k, 5, p)  # noqa: E731
    want = torch.stack([move(p) for p in ps])
    torch.testing.assert_close(vmap(move)(ps), want, rtol=0, atol=1e-12)
    bad = ps.clone()
    bad[1, 2] = 2**60
    got = vmap(move)(bad)
    assert got[1, :, 2].isnan().all()  # token 2 of the second batch element, every head
    torch.testing.assert_close(got[0], want[0], rtol=0, atol=1e-12)
    keep = torch.arange(5) != 2
    torch.testing.assert_close(got[1][:, keep], want[1][:, keep], rtol=0, atol=1e-12)


SCORES = _randn(1, 2, 3, 4, seed=5)
VMAPPED = {  # a finiteness test read the values: vmap's data-dependent control flow
    "sink_softmax-sinks": (
        lambda z: posenc.sink_softmax(SCORES, z),
        lambda: (_randn(3, 2, seed=6),),
    ),
    "forgetting_bias": (posenc.forgetting_bias, lambda: (_randn(3, 5),)),
    "stick_breaking_weights": (posenc.stick_breaking_weights, lambda: (_randn(3, 4, 4),)),
    "path_scores": (
        posenc.path_scores,
        lambda: (_randn(3, 4, 2), _randn(3, 4, 2, seed=1), _randn(3, 4, 2, seed=2), _randn(3, 4)),
    ),
    "cope_bias": (
        posenc.cope_bias,
        lambda: (_randn(3, 4, 2), _randn(3, 4, 2, seed=1), _randn(3, 5, 2, seed=2)),
    ),
}


@pytest.mark.parametrize("name", list(VMAPPED))
def test_value_checked_functions_under_vmap_equal_a_loop(name):
    """Their value checks skip inside a transform (as under torch.compile): vmap gives the loop's
    answer."""
    fn, args = VMAPPED[name]
    batch = args()
    want = torch.stack([fn(*(a[i] for a in batch)) for i in range(3)])
    torch.testing.assert_close(vmap(fn)(*batch), want, rtol=0, atol=1e-12)


@pytest.mark.parametrize("layout", ["interleaved", "concat"])
def test_sinusoidal_under_vmap_grad_and_jacfwd(layout):
    """posenc.sinusoidal filled a buffer in place and read positions (torch.equal, NumPy):
    vmap failed on aten::equal. Inside a transform it now stacks the float64 formula."""
    pos = torch.tensor([[0.5, 3.0, 7.25], [100.0, 2.0**20, 2.0**30]], dtype=torch.float64)
    f = lambda p: posenc.sinusoidal(p, 8, layout=layout, dtype=torch.float64)  # noqa: E731
    torch.testing.assert_close(vmap(f)(pos), torch.stack([f(row) for row in pos]))
    leaf = pos.clone().requires_grad_()
    f(leaf).square().sum().backward()
    torch.testing.assert_close(grad(lambda p: f(p).square().sum())(pos), leaf.grad)
    torch.testing.assert_close(jacfwd(f)(pos[0]), _jacobian(f, pos[0]))


def test_broadcast_positions_checked_once_per_stored_value():
    """A broadcast view of 2**34 x 4 float positions stores 4 values: the finiteness check looks
    at those (it allocated a 64 GiB mask before) and still finds a stored inf."""
    import numpy as np

    from posenc._array import as_positions

    arr, _ = as_positions(np.broadcast_to(np.arange(4.0), (2**34, 4)))
    assert arr.shape == (2**34, 4)
    ten, _ = as_positions(torch.arange(4.0).expand(2**34, 4))
    assert ten.shape == (2**34, 4)
    with pytest.raises(ValueError, match="positions must be finite"):
        as_positions(np.broadcast_to(np.array([0.0, np.inf]), (2**34, 2)))
    with pytest.raises(ValueError, match="positions must be finite"):
        as_positions(torch.tensor([0.0, float("nan")]).expand(2**34, 2))

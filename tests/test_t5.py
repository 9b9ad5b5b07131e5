"""posenc.t5_bucket and posenc.torch.T5RelativeBias: against Mesh TensorFlow's recipe."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import oracle_frameworks as oracle
import posenc
from conftest import make
from posenc.torch import T5RelativeBias

values = pytest.mark.values


@st.composite
def configs(draw):
    bidirectional = draw(st.booleans())
    num_buckets = draw(st.integers(4 if bidirectional else 2, 80))
    exact = (num_buckets // 2 if bidirectional else num_buckets) // 2
    max_distance = draw(st.integers(exact + 1, max(exact + 1, 6000)))
    return bidirectional, num_buckets, max_distance


rel_lists = st.lists(st.integers(-20000, 20000), min_size=1, max_size=40)


@values
@settings(max_examples=80, deadline=None)
@given(rel=rel_lists, config=configs())
def test_bucket_matches_oracle_numpy(rel, config):
    bidirectional, num_buckets, max_distance = config
    got = posenc.t5_bucket(
        np.array(rel),
        bidirectional=bidirectional,
        num_buckets=num_buckets,
        max_distance=max_distance,
    )
    want = [oracle.t5_bucket(r, bidirectional, num_buckets, max_distance) for r in rel]
    assert got.dtype == np.int64
    assert got.tolist() == want
    assert got.min() >= 0 and got.max() < num_buckets


@values
@settings(max_examples=40, deadline=None)
@given(rel=rel_lists, config=configs())
def test_bucket_matches_oracle_torch(rel, config, device):
    bidirectional, num_buckets, max_distance = config
    x = torch.tensor(rel, dtype=torch.int32, device=device)
    got = posenc.t5_bucket(
        x, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance
    )
    assert got.device == x.device and got.dtype == torch.int64
    want = [oracle.t5_bucket(r, bidirectional, num_buckets, max_distance) for r in rel]
    assert got.cpu().tolist() == want


@values
@pytest.mark.parametrize("bidirectional", [True, False])
def test_every_distance_default_config(bidirectional, backend, device):
    rel = np.arange(-1000, 1001)
    got = posenc.t5_bucket(make(backend, rel, device), bidirectional=bidirectional)
    got = got.cpu().numpy() if isinstance(got, torch.Tensor) else got
    want = [oracle.t5_bucket(int(r), bidirectional) for r in rel]
    np.testing.assert_array_equal(got, want)
    if not bidirectional:
        assert (got[rel >= 0] == 0).all()  # the query and every future key share bucket 0
    else:
        assert (got[rel > 0] >= 16).all() and (got[rel <= 0] < 16).all()


@values
@pytest.mark.parametrize("r", [8, 16, 64])
def test_float32_logarithm_is_the_recipe(r):
    """num_buckets=18: log(r / 4) / log(32) * 5 is an integer; float64 lands just below it."""
    got = posenc.t5_bucket(np.array([-r]), num_buckets=18)[0]
    assert got == oracle.t5_bucket(-r, True, 18, 128)
    assert got == oracle.t5_bucket_float64(-r, True, 18, 128) + 1


@values
@pytest.mark.parametrize("bidirectional", [True, False])
def test_buckets_are_monotone_and_saturate_before_max_distance(bidirectional):
    """The last bucket starts at e * (max_distance / e) ** ((n - e - 1) / (n - e)), below max_distance."""
    rel = -np.arange(0, 5000)
    b = posenc.t5_bucket(rel, bidirectional=bidirectional, num_buckets=64, max_distance=300)
    n = 32 if bidirectional else 64
    e = n // 2
    assert (np.diff(b) >= 0).all() and (b[:e] == np.arange(e)).all()
    first_last = int(np.argmax(b == n - 1))
    assert first_last == math.ceil(e * (300 / e) ** ((n - e - 1) / (n - e)))
    assert first_last < 300 and (b[300:] == n - 1).all()


@pytest.mark.parametrize("shape", [(), (5,), (3, 4), (2, 3, 4)])
def test_bucket_keeps_shape_library_and_device(shape, backend, device):
    rel = np.zeros(shape, dtype=np.int64)
    x = (
        make(backend, rel, device)
        if shape
        else (0 if backend == "numpy" else torch.tensor(0, device=device))
    )
    got = posenc.t5_bucket(x)
    assert tuple(got.shape) == shape
    if backend == "torch":
        assert isinstance(got, torch.Tensor) and got.device.type == torch.device(device).type
        assert got.dtype == torch.int64
    else:
        assert isinstance(got, np.ndarray) and got.dtype == np.int64


@values
@pytest.mark.parametrize("bidirectional", [True, False])
@pytest.mark.parametrize("offset", [0, 3, 9])
def test_module_looks_up_the_embedding_by_bucket(bidirectional, offset, device):
    module = T5RelativeBias(3, bidirectional=bidirectional, num_buckets=16, max_distance=20).to(
        device
    )
    out = module(4, 13, offset=offset)
    assert tuple(out.shape) == (1, 3, 4, 13) and out.device.type == torch.device(device).type
    weight = module.relative_attention_bias.weight.detach().cpu().numpy()
    for i in range(4):
        for j in range(13):
            b = oracle.t5_bucket(j - (offset + i), bidirectional, 16, 20)
            np.testing.assert_array_equal(out[0, :, i, j].detach().cpu().numpy(), weight[b])


def test_module_shapes_devices_and_gradients(device):
    module = T5RelativeBias(4).to(device)
    out = module(3, 5)
    assert tuple(out.shape) == (1, 4, 3, 5) and out.device.type == torch.device(device).type
    assert tuple(module.buckets(3, 5).shape) == (3, 5)
    assert tuple(module(0, 5).shape) == (1, 4, 0, 5)
    assert list(module.state_dict()) == ["relative_attention_bias.weight"]
    assert out.requires_grad


@values
def test_module_offset_matches_a_slice_of_the_full_bias():
    module = T5RelativeBias(2, bidirectional=False)
    full = module(10, 10)
    torch.testing.assert_close(module(3, 10, offset=7), full[:, :, 7:, :], rtol=0, atol=0)


@pytest.mark.parametrize(
    "rel,exc,match",
    [
        (
            np.array([0.5, 1.0]),
            TypeError,
            r"relative_position must hold integers, got ndarray of dtype float64",
        ),
        (
            np.array([True]),
            TypeError,
            r"relative_position must hold integers, got ndarray of dtype bool",
        ),
        (True, TypeError, r"relative_position must hold integers, got True"),
        (1.0, TypeError, r"relative_position must hold integers, got ndarray of dtype float64"),
        (["a"], TypeError, r"relative_position must hold integers"),
        (
            torch.tensor([1.0], device="cpu"),
            TypeError,
            r"relative_position must hold integers, got Tensor of dtype torch\.float32",
        ),
        (
            torch.tensor([True], device="cpu"),
            TypeError,
            r"relative_position must hold integers, got Tensor of dtype torch\.bool",
        ),
    ],
)
def test_bad_relative_position(rel, exc, match):
    with pytest.raises(exc, match=match):
        posenc.t5_bucket(rel)


BAD_CONFIG = [
    (
        {"num_buckets": 3},
        ValueError,
        r"num_buckets must be an integer >= 4 with bidirectional=True .*got 3",
    ),
    (
        {"num_buckets": 1, "bidirectional": False},
        ValueError,
        r"num_buckets must be an integer >= 2 with bidirectional=False .*got 1",
    ),
    ({"num_buckets": 32.0}, TypeError, r"num_buckets must be an integer >= 4, got 32\.0 \(float\)"),
    ({"num_buckets": True}, TypeError, r"num_buckets must be an integer >= 4, got True"),
    (
        {"max_distance": 8},
        ValueError,
        r"max_distance must be greater than the 8 exact buckets \(num_buckets=32\), got 8",
    ),
    (
        {"max_distance": 16, "bidirectional": False},
        ValueError,
        r"max_distance must be greater than the 16 exact buckets",
    ),
    (
        {"max_distance": float("nan")},
        ValueError,
        r"max_distance must be a finite real number, got nan",
    ),
    ({"max_distance": "128"}, TypeError, r"max_distance must be a finite real number, got '128'"),
    ({"bidirectional": 1}, TypeError, r"bidirectional must be a bool, got 1 \(int\)"),
    ({"bidirectional": None}, TypeError, r"bidirectional must be a bool, got None"),
]


@pytest.mark.parametrize("kwargs,exc,match", BAD_CONFIG)
@pytest.mark.parametrize("fn", ["t5_bucket", "T5RelativeBias"])
def test_bad_bucket_config(fn, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        if fn == "t5_bucket":
            posenc.t5_bucket(np.arange(-3, 3), **kwargs)
        else:
            T5RelativeBias(4, **kwargs)


@pytest.mark.parametrize(
    "call,exc,match",
    [
        (lambda: T5RelativeBias(0), ValueError, r"num_heads must be a positive integer, got 0"),
        (lambda: T5RelativeBias(2.0), TypeError, r"num_heads must be a positive integer, got 2\.0"),
        (
            lambda: T5RelativeBias(2)(-1, 3),
            ValueError,
            r"q_len must be a non-negative integer, got -1",
        ),
        (
            lambda: T5RelativeBias(2)(2, 3.0),
            TypeError,
            r"k_len must be a non-negative integer, got 3\.0",
        ),
        (
            lambda: T5RelativeBias(2)(2, 3, offset=1.5),
            TypeError,
            r"offset must be an integer, got 1\.5",
        ),
        (
            lambda: T5RelativeBias(2)(2, 3, offset=None),
            TypeError,
            r"offset must be an integer, got None",
        ),
    ],
)
def test_bad_module_arguments(call, exc, match):
    with pytest.raises(exc, match=match):
        call()

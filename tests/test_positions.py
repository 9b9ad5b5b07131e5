"""posenc.position_ids: against the oracle, in NumPy and torch, left and right padding."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import oracle
import posenc
from conftest import make

values = pytest.mark.values

mask_dtypes = st.sampled_from([np.int64, np.int32, np.uint8, np.float32, np.bool_])


@values
@settings(max_examples=80, deadline=None)
@given(
    rows=st.lists(st.lists(st.booleans(), min_size=5, max_size=5), min_size=1, max_size=6),
    dtype=mask_dtypes,
    pad_value=st.integers(-3, 600),
    backend=st.sampled_from(["numpy", "torch"]),
)
def test_matches_oracle(rows, dtype, pad_value, backend, device):
    mask = make(backend, np.array(rows, dtype=dtype), device)
    got = posenc.position_ids(mask, pad_value=pad_value)
    want = oracle.position_ids(rows, pad_value)
    if backend == "torch":
        assert got.dtype == torch.int64 and got.device == mask.device
        got = got.cpu().numpy()
    else:
        assert got.dtype == np.int64
    np.testing.assert_array_equal(got, want)


@values
@settings(max_examples=40, deadline=None)
@given(
    lengths=st.lists(st.integers(0, 8), min_size=1, max_size=5),
    backend=st.sampled_from(["numpy", "torch"]),
)
def test_left_and_right_padding_give_each_sequence_its_own_positions(lengths, backend, device):
    """Padding on either side: the real tokens get 0 .. n-1, as if the sequence were alone."""
    seq = max(lengths)
    right = np.array([[1] * n + [0] * (seq - n) for n in lengths])
    left = right[:, ::-1].copy()
    for mask in (right, left):
        ids = posenc.position_ids(make(backend, mask, device), pad_value=1)
        ids = ids.cpu().numpy() if backend == "torch" else ids
        for row, n in zip(range(len(lengths)), lengths, strict=True):
            np.testing.assert_array_equal(ids[row][mask[row] == 1], np.arange(n))
            assert np.all(ids[row][mask[row] == 0] == 1)


@values
def test_hugging_face_formula(backend, device):
    """The one-liner in Hugging Face models: cumsum(mask) - 1, then 1 where the mask is 0."""
    mask = np.array([[0, 0, 1, 1, 1, 1], [1, 1, 1, 1, 0, 0], [0, 1, 1, 0, 1, 1]])
    want = mask.cumsum(-1) - 1
    want[mask == 0] = 1
    got = posenc.position_ids(make(backend, mask, device), pad_value=1)
    np.testing.assert_array_equal(got.cpu().numpy() if backend == "torch" else got, want)


@values
def test_arange_is_wrong_for_left_padding():
    """The first real token of a left-padded row must be encoded as position 0, as when alone."""
    mask = np.array([[0, 0, 1, 1]])
    ids = posenc.position_ids(mask, pad_value=1)
    np.testing.assert_array_equal(ids[0, 2:], [0, 1])
    alone = posenc.sinusoidal(2, 8)  # the same two tokens without padding
    np.testing.assert_array_equal(posenc.sinusoidal(ids, 8)[0, 2:], alone)
    naive = posenc.sinusoidal(np.arange(4), 8)[2:]  # what a plain arange would give them
    assert np.abs(naive - alone).max() > 0.5


@pytest.mark.parametrize("shape", [(7,), (2, 7), (2, 3, 7), (0, 7), (3, 0)])
def test_shape_dtype_and_device(shape, device):
    mask = torch.ones(shape, dtype=torch.int64, device=device)
    ids = posenc.position_ids(mask)
    assert tuple(ids.shape) == shape and ids.dtype == torch.int64
    assert ids.device.type == torch.device(device).type
    ids = posenc.position_ids(mask.bool())
    assert tuple(ids.shape) == shape and ids.device.type == torch.device(device).type
    arr = posenc.position_ids(np.ones(shape, dtype=np.float32))
    assert isinstance(arr, np.ndarray) and arr.shape == shape and arr.dtype == np.int64


def test_list_input_gives_numpy():
    ids = posenc.position_ids([[1, 1, 0], [0, 1, 1]], pad_value=1)
    assert isinstance(ids, np.ndarray)
    np.testing.assert_array_equal(ids, [[0, 1, 1], [1, 0, 1]])


@pytest.mark.parametrize(
    "mask,kw,exc,match",
    [
        (
            np.array([[0, 2, 1]]),
            {},
            ValueError,
            r"attention_mask must hold only 0 and 1 \(or False and True\), got 2",
        ),
        (np.array([[1, -1]]), {}, ValueError, r"must hold only 0 and 1 .*got -1"),
        (np.array([[1.0, 0.5]]), {}, ValueError, r"must hold only 0 and 1 .*got 0.5"),
        (np.array([[1.0, np.nan]]), {}, ValueError, r"must hold only 0 and 1 .*got nan"),
        (torch.tensor([[1, 3]], device="cpu"), {}, ValueError, r"must hold only 0 and 1 .*got 3"),
        (
            torch.tensor([[0.0, -0.25]], device="cpu"),
            {},
            ValueError,
            r"must hold only 0 and 1 .*got -0.25",
        ),
        (
            np.array(1),
            {},
            ValueError,
            r"attention_mask must have shape \(\.\.\., seq\) with a sequence axis, got a 0-d array",
        ),
        (
            torch.tensor(1, device="cpu"),
            {},
            ValueError,
            r"attention_mask must have shape \(\.\.\., seq\)",
        ),
        (
            5,
            {},
            TypeError,
            r"attention_mask must be an array of shape \(\.\.\., seq\) holding 0/1 or booleans, got 5 \(int\)",
        ),
        (None, {}, TypeError, r"attention_mask must be an array .*got None"),
        ("1101", {}, TypeError, r"attention_mask must be an array .*got '1101'"),
        (
            np.array([[1 + 0j]]),
            {},
            TypeError,
            r"attention_mask must hold 0/1 or booleans, got array of dtype complex128",
        ),
        (
            np.array([["1", "0"]]),
            {},
            TypeError,
            r"attention_mask must hold 0/1 or booleans, got array of dtype <U1",
        ),
        (
            torch.tensor([[1j]], device="cpu"),
            {},
            TypeError,
            r"attention_mask must hold 0/1 or booleans, got Tensor of dtype torch.complex64",
        ),
        (
            [[1, 0], [1]],
            {},
            TypeError,
            r"attention_mask must be an array of 0/1 or booleans, got list",
        ),
        (
            np.array([[1, 0]]),
            {"pad_value": 1.0},
            TypeError,
            r"pad_value must be an integer, got 1.0 \(float\)",
        ),
        (
            np.array([[1, 0]]),
            {"pad_value": True},
            TypeError,
            r"pad_value must be an integer, got True \(bool\)",
        ),
        (
            np.array([[1, 0]]),
            {"pad_value": None},
            TypeError,
            r"pad_value must be an integer, got None",
        ),
        (
            np.array([[1, 0]]),
            {"pad_value": 2**63},
            ValueError,
            r"pad_value must fit in int64, got 9223372036854775808",
        ),
    ],
)
def test_bad_input(mask, kw, exc, match):
    with pytest.raises(exc, match=match):
        posenc.position_ids(mask, **kw)


def test_meta_skips_the_value_check():
    mask = torch.empty(2, 5, device="meta")  # no values to read
    assert posenc.position_ids(mask).shape == (2, 5)


@pytest.mark.parametrize(
    "mask",
    [
        lambda: np.broadcast_to(np.ones(1, dtype=np.int64), (2**20, 2**20)),
        lambda: torch.ones(1, dtype=torch.int64).expand(2**20, 2**20),
        lambda: torch.ones(1, dtype=torch.bool).expand(2**40),
    ],
    ids=["np-broadcast", "torch-expanded", "torch-bool-expanded"],
)
def test_a_broadcast_mask_too_large_for_memory_is_refused_before_allocating(mask):
    """Issue 40: a view of one value holding 2**40 tokens asked for 8 TiB of int64 ids (a NumPy
    MemoryError or a torch allocator error); refused by name, with the size, before any op."""
    with pytest.raises(ValueError, match=r"^attention_mask of shape .* needs 8\.0 TiB"):
        posenc.position_ids(mask(), pad_value=0)

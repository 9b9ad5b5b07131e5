"""Every public function refuses bad input with an error naming the argument, expected and got."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import posenc
from posenc.torch import SinusoidalPositionalEncoding


@pytest.mark.parametrize(
    "dim,exc,match",
    [
        (7, ValueError, r"dim must be a positive even integer, got 7"),
        (0, ValueError, r"dim must be a positive even integer, got 0"),
        (-4, ValueError, r"dim must be a positive even integer, got -4"),
        (4.0, TypeError, r"dim must be a positive even integer, got 4\.0 \(float\)"),
        ("8", TypeError, r"dim must be a positive even integer, got '8'"),
        (True, TypeError, r"dim must be a positive even integer, got True"),
    ],
)
@pytest.mark.parametrize("fn", ["sinusoidal", "frequencies", "shift_matrix", "module"])
def test_bad_dim(fn, dim, exc, match):
    call = {
        "sinusoidal": lambda: posenc.sinusoidal(4, dim),
        "frequencies": lambda: posenc.frequencies(dim),
        "shift_matrix": lambda: posenc.shift_matrix(1, dim),
        "module": lambda: SinusoidalPositionalEncoding(dim),
    }[fn]
    with pytest.raises(exc, match=match):
        call()


@pytest.mark.parametrize(
    "base,exc,match",
    [
        (0, ValueError, r"base must be a finite number > 0 and != 1, got 0\.0"),
        (-10000.0, ValueError, r"base must be a finite number > 0 and != 1, got -10000\.0"),
        (1, ValueError, r"base must be a finite number > 0 and != 1, got 1\.0"),
        (float("inf"), ValueError, r"base must be a finite real number, got inf"),
        (float("nan"), ValueError, r"base must be a finite real number, got nan"),
        (1j, TypeError, r"base must be a finite real number, got 1j"),
        ("1e4", TypeError, r"base must be a finite real number, got '1e4'"),
    ],
)
@pytest.mark.parametrize("fn", ["sinusoidal", "frequencies", "shift_matrix"])
def test_bad_base(fn, base, exc, match):
    call = {
        "sinusoidal": lambda: posenc.sinusoidal(4, 8, base=base),
        "frequencies": lambda: posenc.frequencies(8, base=base),
        "shift_matrix": lambda: posenc.shift_matrix(1, 8, base=base),
    }[fn]
    with pytest.raises(exc, match=match):
        call()


@pytest.mark.parametrize(
    "positions,exc,match",
    [
        (np.array([0.0, np.nan]), ValueError, "positions must be finite"),
        (np.array([np.inf]), ValueError, "positions must be finite"),
        (
            np.array([1 + 2j]),
            TypeError,
            "positions must hold real numbers, got ndarray of dtype complex128",
        ),
        (
            np.array([True, False]),
            TypeError,
            "positions must hold real numbers, got ndarray of dtype bool",
        ),
        (np.array(["a"]), TypeError, "positions must hold real numbers"),
        (-3, ValueError, "positions as an int is a count of positions and must be >= 0, got -3"),
        (True, TypeError, "positions must be an int or an array of real numbers, got True"),
        (2.5, TypeError, "positions must be an int count or an array of positions, got 2.5"),
        (torch.tensor([0.0, float("nan")], device="cpu"), ValueError, "positions must be finite"),
        (
            torch.tensor([1 + 1j], device="cpu"),
            TypeError,
            "positions must hold real numbers, got Tensor of dtype torch.complex64",
        ),
        (
            torch.tensor([True], device="cpu"),
            TypeError,
            "positions must hold real numbers, got Tensor of dtype torch.bool",
        ),
    ],
)
def test_bad_positions(positions, exc, match):
    with pytest.raises(exc, match=match):
        posenc.sinusoidal(positions, 8)


@pytest.mark.parametrize("layout", ["halves", "INTERLEAVED", None, 0])
def test_bad_layout(layout):
    with pytest.raises(ValueError, match=r"layout must be one of 'interleaved', 'concat', got"):
        posenc.sinusoidal(4, 8, layout=layout)
    with pytest.raises(ValueError, match=r"layout must be one of 'interleaved', 'concat', got"):
        SinusoidalPositionalEncoding(8, layout=layout)


@pytest.mark.parametrize(
    "positions,dtype,match",
    [
        (4, np.int32, "dtype must be a NumPy floating dtype, got int32"),
        (
            4,
            torch.float32,
            "dtype must be a NumPy floating dtype for NumPy/int input, got torch.float32",
        ),
        (torch.arange(4), np.float32, "dtype must be a floating torch.dtype for tensor input"),
        (
            torch.arange(4),
            torch.int64,
            "dtype must be a floating torch.dtype for tensor input, got torch.int64",
        ),
    ],
)
def test_bad_dtype(positions, dtype, match):
    with pytest.raises(TypeError, match=match):
        posenc.sinusoidal(positions, 8, dtype=dtype)


@pytest.mark.parametrize("offset", [float("nan"), float("inf"), "3", None])
def test_bad_offset_for_shift_matrix(offset):
    with pytest.raises((TypeError, ValueError), match="offset must be a finite real number"):
        posenc.shift_matrix(offset, 8)


@pytest.mark.parametrize("shape", [(2, 5, 6), (2, 5, 10), (8,)])
def test_module_rejects_wrong_width(shape):
    module = SinusoidalPositionalEncoding(8, max_len=16)
    with pytest.raises(ValueError, match=r"x must have shape \(\.\.\., seq, 8\).*got shape"):
        module(torch.zeros(shape))


@pytest.mark.parametrize(
    "kwargs,exc,match",
    [
        ({"max_len": 0}, ValueError, "max_len must be a positive integer, got 0"),
        ({"max_len": 2.5}, TypeError, "max_len must be a positive integer"),
        ({"dropout": 1.5}, ValueError, r"dropout must be a probability in \[0, 1\), got 1.5"),
        ({"dropout": -0.1}, ValueError, "dropout must be a probability"),
        ({"base": "x"}, TypeError, "base must be a finite real number, got .x."),
        ({"base": 1.0}, ValueError, "base must be a finite number > 0 and != 1"),
    ],
)
def test_module_bad_arguments(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        SinusoidalPositionalEncoding(8, **kwargs)


@pytest.mark.parametrize("offset", [1.5, "2", None])
def test_module_bad_offset(offset):
    with pytest.raises(TypeError, match="offset must be an integer"):
        SinusoidalPositionalEncoding(8, max_len=16)(torch.zeros(1, 3, 8), offset=offset)

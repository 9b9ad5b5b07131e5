"""binary and normalized with unsigned and huge positions."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import posenc

pytestmark = pytest.mark.values  # values are read throughout: skipped under --device meta

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

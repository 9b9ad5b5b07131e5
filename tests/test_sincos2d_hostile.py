"""sincos_2d: a torch dtype without like is refused, pointing to like."""

from __future__ import annotations

import pytest
import torch

import posenc

pytestmark = pytest.mark.values  # values are read throughout: skipped under --device meta

# --- sincos_2d: a torch dtype without like ---------------------------------------------------------


def test_sincos_2d_torch_dtype_points_to_like():
    with pytest.raises(
        TypeError, match=r"dtype must be a NumPy floating dtype .*pass like="
    ) as info:
        posenc.sincos_2d(2, 2, 8, dtype=torch.float32)
    assert "positions" not in str(info.value)

"""Seeded random tensors that hold the same values on every ``--device``.

``torch.Generator()`` is a CPU generator, and ``torch.randn(..., generator=g)`` refuses it once
``torch.set_default_device("cuda")`` is in force (what ``pytest --device cuda`` sets). These
helpers take the same arguments as their torch namesakes, draw on the CPU with the given
generator and move the result to the default device (cpu, cuda or meta), so one seed gives the
same numbers in every leg of the suite.
"""

from __future__ import annotations

import torch


def _size(size: tuple) -> tuple:
    if len(size) == 1 and isinstance(size[0], (tuple, list, torch.Size)):
        return tuple(size[0])
    return size


def _here(t: torch.Tensor, requires_grad: bool) -> torch.Tensor:
    t = t.to(torch.get_default_device())
    return t.requires_grad_() if requires_grad else t


def randn(*size, generator: torch.Generator, dtype=None, requires_grad: bool = False):
    """``torch.randn(*size, generator=generator, dtype=dtype)`` drawn on the CPU."""
    t = torch.randn(_size(size), generator=generator, dtype=dtype, device="cpu")
    return _here(t, requires_grad)


def rand(*size, generator: torch.Generator, dtype=None, requires_grad: bool = False):
    """``torch.rand(*size, generator=generator, dtype=dtype)`` drawn on the CPU."""
    t = torch.rand(_size(size), generator=generator, dtype=dtype, device="cpu")
    return _here(t, requires_grad)


def randint(*args, generator: torch.Generator, dtype=None):
    """``torch.randint(low, high, size, generator=generator)`` (or ``(high, size)``) on the CPU."""
    kwargs = {} if dtype is None else {"dtype": dtype}
    t = torch.randint(*args, generator=generator, device="cpu", **kwargs)
    return _here(t, False)

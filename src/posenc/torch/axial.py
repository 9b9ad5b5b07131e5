"""``AxialPositionEmbedding``: Reformer's factorised learned table, as an nn.Module."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch
from torch import nn

from .._array import _describe, check_dim, check_scalar
from ..axial import axial_position_embeddings

__all__ = ["AxialPositionEmbedding"]


class AxialPositionEmbedding(nn.Module):
    """Axial position embeddings (Reformer; Kitaev et al., 2020). Experimental.

    Holds one learned table per axis, ``weights[a]`` of shape ``(n_a, d_a)``; position
    ``p = i * n2 + j`` gets ``concat(weights[0][i], weights[1][j])`` (see
    :func:`posenc.axial_position_embeddings`). The same numbers as transformers'
    ``AxialPositionEmbeddings`` (``models/reformer``) in eval mode, whose factor ``a`` is
    ``weights[a].reshape(1, .., n_a, .., d_a)``; no dropout here (apply your own).

    Parameters
    ----------
    axial_pos_shape : sequence of int
        ``(n1, n2, ...)``: positive integers; the table covers ``n1 * n2 * ...`` positions.
    axial_pos_embds_dim : sequence of int
        ``(d1, d2, ...)``, as many as ``axial_pos_shape``; the width is their sum.
    init_std : float, default 1.0
        Standard deviation of the initial values (transformers' ``axial_norm_std``), ``>= 0``.

    Attributes
    ----------
    weights : torch.nn.ParameterList
        The factor tables.

    Raises
    ------
    TypeError, ValueError
        Sizes not positive integers, shapes of different lengths, a bad ``init_std``.

    References
    ----------
    Kitaev et al., "Reformer: The Efficient Transformer", arXiv:2001.04451.

    Examples
    --------
    >>> import torch
    >>> from posenc.torch import AxialPositionEmbedding
    >>> pe = AxialPositionEmbedding((4, 8), (3, 5))
    >>> pe(32).shape                          # positions 0 .. 31
    torch.Size([32, 8])
    >>> sum(p.numel() for p in pe.parameters())   # 4 * 3 + 8 * 5, not 32 * 8
    52
    >>> bool(torch.equal(pe(torch.tensor([9]))[0, :3], pe.weights[0][1]))
    True
    """

    def __init__(
        self,
        axial_pos_shape: Sequence[int],
        axial_pos_embds_dim: Sequence[int],
        *,
        init_std: float = 1.0,
    ) -> None:
        super().__init__()
        shape = _sizes(axial_pos_shape, "axial_pos_shape")
        dims = _sizes(axial_pos_embds_dim, "axial_pos_embds_dim")
        if len(shape) != len(dims):
            raise ValueError(
                f"axial_pos_shape and axial_pos_embds_dim must have the same length, got "
                f"{len(shape)} and {len(dims)}"
            )
        if math.prod(shape) > 2**53 or sum(n * d for n, d in zip(shape, dims, strict=True)) > 2**48:
            raise ValueError(
                f"axial_pos_shape {shape} with axial_pos_embds_dim {dims} is too large "
                "(at most 2**53 positions and 2**48 entries)"
            )
        self.axial_pos_shape, self.axial_pos_embds_dim = shape, dims
        self.init_std = check_scalar(init_std, name="init_std")
        if self.init_std < 0:
            raise ValueError(f"init_std must be a finite number >= 0, got {self.init_std}")
        self.weights = nn.ParameterList(
            [nn.Parameter(torch.empty(n, d)) for n, d in zip(shape, dims, strict=True)]
        )
        self.reset_parameters()

    @property
    def dim(self) -> int:
        """The embedding width, ``sum(axial_pos_embds_dim)``."""
        return sum(self.axial_pos_embds_dim)

    def reset_parameters(self) -> None:
        """Draw every table again from ``normal(0, init_std)`` (transformers' init).

        Also what to call after meta-device initialisation (``to_empty(device=...)``).
        """
        with torch.no_grad():
            for w in self.weights:
                nn.init.normal_(w, mean=0.0, std=self.init_std)

    def forward(self, positions: int | torch.Tensor) -> torch.Tensor:
        """The rows of ``positions``: shape ``positions.shape + (dim,)``.

        ``positions`` is an ``int`` ``n`` (``0 .. n-1``) or an integer tensor on the module's
        device with values in ``0 .. n1 * n2 * ... - 1`` (transformers' ``position_ids``).
        """
        if not isinstance(positions, (torch.Tensor, int)) or isinstance(positions, bool):
            raise TypeError(
                f"positions must be an int count or an integer tensor, got {_describe(positions)}"
            )
        return axial_position_embeddings(list(self.weights), positions, self.axial_pos_shape)

    def extra_repr(self) -> str:
        return f"axial_pos_shape={self.axial_pos_shape}, axial_pos_embds_dim={self.axial_pos_embds_dim}"


def _sizes(value: Any, name: str) -> tuple[int, ...]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) or not value:
        raise TypeError(
            f"{name} must be a non-empty sequence of positive integers, got {_describe(value)}"
        )
    return tuple(check_dim(v, name=name, even=False) for v in value)

"""Axial position embeddings (Reformer; Kitaev et al., 2020): a factorised learned table.

A learned table for ``n1 * n2`` positions of width ``d`` holds ``n1 * n2 * d`` numbers. The
axial table holds two smaller ones, ``E1`` of shape ``(n1, d1)`` and ``E2`` of shape
``(n2, d2)`` with ``d1 + d2 = d``, and gives position ``p = i * n2 + j`` the row
``concat(E1[i], E2[j])``: ``n1 * d1 + n2 * d2`` numbers. More factors work the same way
(position ``p`` written in the mixed radix ``(n1, n2, ...)``, the last digit fastest).
"""

from __future__ import annotations

import math
import numbers
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from ._array import _describe, as_positions, check_count, compiling, is_count, is_torch
from ._typing import ArrayLike, FloatArray, PositionsLike

if TYPE_CHECKING:
    from ._typing import Tensor

__all__ = ["axial_position_embeddings"]


@overload
def axial_position_embeddings(
    weights: Sequence[Tensor],
    positions: Tensor | PositionsLike,
    axial_pos_shape: Sequence[int] | None = ...,
) -> Tensor: ...
@overload
def axial_position_embeddings(
    weights: Sequence[ArrayLike],
    positions: PositionsLike,
    axial_pos_shape: Sequence[int] | None = ...,
) -> FloatArray: ...
def axial_position_embeddings(
    weights: Sequence[Tensor] | Sequence[ArrayLike],
    positions: Tensor | PositionsLike,
    axial_pos_shape: Sequence[int] | None = None,
) -> Tensor | FloatArray:
    """Axial position embeddings: ``concat(E1[i], E2[j])`` for ``p = i * n2 + j``. Experimental.

    Kitaev et al., "Reformer: The Efficient Transformer", arXiv:2001.04451. Reproduces
    transformers' ``AxialPositionEmbeddings`` (``models/reformer``) in eval mode, and in training
    mode without dropout (where it needs ``seq == n1 * n2``).

    Parameters
    ----------
    weights : sequence of arrays, factor ``a`` of shape (n_a, d_a)
        The factor tables, all NumPy or all torch (the output follows them), one floating dtype.
        transformers keeps factor ``a`` as shape ``(1, .., n_a, .., d_a)``: pass
        ``w.reshape(n_a, d_a)``.
    positions : int or integer array of shape (...,)
        A Python ``int`` ``n`` is ``0 .. n-1``; arrays hold integer positions in
        ``0 .. n1 * n2 * ... - 1`` (a tensor must be on the weights' device).
    axial_pos_shape : sequence of int, optional
        ``(n1, n2, ...)``; checked against the tables when given (transformers' config name).

    Returns
    -------
    array or tensor of shape positions.shape + (d1 + d2 + ...,)
        In the weights' library, dtype and device.

    Raises
    ------
    TypeError
        ``weights`` not a sequence of floating 2-D arrays of one library and dtype, positions
        not integers (or a tensor with NumPy weights), ``axial_pos_shape`` not integers.
    ValueError
        An empty table or no tables, ``axial_pos_shape`` that does not match the tables,
        positions outside ``0 .. n1 * n2 * ... - 1``.

    Notes
    -----
    With ``p = i_1 n_2 ... n_k + ... + i_k`` (row-major digits),
    ``E[p] = concat(E_1[i_1], ..., E_k[i_k])``: every position gets a distinct row, yet the
    table has rank structure: the first ``d_1`` features depend on ``i_1`` only.

    Examples
    --------
    >>> import numpy as np
    >>> import posenc
    >>> e1 = np.array([[0.0], [1.0]])            # n1 = 2, d1 = 1
    >>> e2 = np.array([[10.0, 0], [20, 0], [30, 0]])  # n2 = 3, d2 = 2
    >>> posenc.axial_position_embeddings([e1, e2], 6)
    array([[ 0., 10.,  0.],
           [ 0., 20.,  0.],
           [ 0., 30.,  0.],
           [ 1., 10.,  0.],
           [ 1., 20.,  0.],
           [ 1., 30.,  0.]])
    """
    tables, torch_out = _check_weights(weights)
    shape = tuple(int(t.shape[0]) for t in tables)
    if axial_pos_shape is not None:
        given = _check_shape(axial_pos_shape)
        if given != shape:
            raise ValueError(f"axial_pos_shape must match the tables' rows {shape}, got {given}")
    total = math.prod(shape)
    if torch_out and is_count(positions):
        # a count for tensor weights: arange straight on their device, so that torch.compile
        # traces no NumPy array (dynamo cannot read an ndarray's dtype)
        n = check_count(positions)
        if n > total:
            _check_range(0, n - 1, total, positions)
        torch = sys.modules["torch"]
        return _lookup(tables, shape, total, torch.arange(n, device=tables[0].device), True)
    pos, pos_torch = as_positions(positions)
    if pos_torch and not torch_out:
        raise TypeError(
            "positions must be NumPy (or an int) for NumPy weights, got a tensor; "
            "pass the weights as tensors to get a tensor"
        )
    if pos_torch:
        if pos.is_floating_point():
            raise TypeError(f"positions must be integers, got {_describe(pos)}")
        if pos.device != tables[0].device:
            raise ValueError(
                f"positions must be on the weights' device {tables[0].device}, got {pos.device}"
            )
        torch = sys.modules["torch"]
        idx = pos.to(torch.int64)
        if idx.numel() and not compiling() and idx.device.type != "meta":
            lo, hi = int(idx.min()), int(idx.max())
            _check_range(lo, hi, total, pos)
    else:
        if pos.dtype.kind == "f":
            raise TypeError(f"positions must be integers, got {_describe(pos)}")
        if pos.size:
            _check_range(int(pos.min()), int(pos.max()), total, pos)
        idx = pos.astype(np.int64)
        if torch_out:
            torch = sys.modules["torch"]
            idx = torch.as_tensor(np.ascontiguousarray(idx), device=tables[0].device)
    return _lookup(tables, shape, total, idx, torch_out)


def _lookup(
    tables: list[Any], shape: tuple[int, ...], total: int, idx: Any, torch_out: bool
) -> Any:
    """``concat(E_1[i_1], ..., E_k[i_k])`` for the int64 positions ``idx``."""
    parts = []
    stride = total
    for t, n in zip(tables, shape, strict=True):
        stride //= n
        digit = idx // stride % n  # (...,)
        parts.append(t[digit])  # (..., d_a)
    if torch_out:
        return sys.modules["torch"].cat(parts, dim=-1)
    out: FloatArray = np.concatenate(parts, axis=-1)
    return out


def _check_weights(weights: Any) -> tuple[list[Any], bool]:
    if (
        is_torch(weights)
        or isinstance(weights, (np.ndarray, str, bytes))
        or not isinstance(weights, Sequence)
    ):
        raise TypeError(
            f"weights must be a list or tuple of 2-D factor tables (n_a, d_a), "
            f"got {_describe(weights)}"
        )
    if len(weights) == 0:
        raise ValueError("weights must hold at least one factor table, got an empty sequence")
    tables = []
    for a, w in enumerate(weights):
        if is_torch(w):
            if not w.is_floating_point():
                raise TypeError(f"weights[{a}] must be a floating table, got {_describe(w)}")
        else:
            if not isinstance(w, np.ndarray):
                raise TypeError(f"weights[{a}] must be a floating array, got {_describe(w)}")
            if w.dtype.kind != "f":
                raise TypeError(f"weights[{a}] must be a floating array, got {_describe(w)}")
        if w.ndim != 2 or w.shape[0] == 0 or w.shape[1] == 0:
            raise ValueError(
                f"weights[{a}] must have shape (n_a, d_a) with n_a, d_a >= 1, "
                f"got shape {tuple(w.shape)}"
            )
        tables.append(w)
    libs = {is_torch(t) for t in tables}
    if len(libs) > 1 or len({str(t.dtype) for t in tables}) > 1:
        raise TypeError(
            "weights must all be NumPy or all torch, of one dtype, got "
            + ", ".join(_describe(t) for t in tables)
        )
    if is_torch(tables[0]) and len({str(t.device) for t in tables}) > 1:
        raise ValueError(
            "weights must all be on one device, got " + ", ".join(str(t.device) for t in tables)
        )
    return tables, is_torch(tables[0])


def _check_shape(axial_pos_shape: Any) -> tuple[int, ...]:
    if isinstance(axial_pos_shape, (str, bytes)) or not isinstance(axial_pos_shape, Sequence):
        raise TypeError(
            f"axial_pos_shape must be a sequence of positive integers, "
            f"got {_describe(axial_pos_shape)}"
        )
    out = []
    for n in axial_pos_shape:
        if isinstance(n, bool) or not isinstance(n, numbers.Integral):
            raise TypeError(f"axial_pos_shape must hold positive integers, got {_describe(n)}")
        out.append(int(n))
    return tuple(out)


def _check_range(lo: int, hi: int, total: int, pos: Any) -> None:
    if lo < 0 or hi >= total:
        raise ValueError(
            f"positions must lie in 0 .. {total - 1} (the product of the axial shape), "
            f"got values from {lo} to {hi}"
        )

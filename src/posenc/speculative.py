"""Positions of a draft tree: speculative decoding that verifies many continuations in one pass.

Speculative decoding drafts candidate tokens and has the model verify them in one forward pass.
A tree of drafts shares prefixes: node ``i``'s position is the context length plus its depth
(siblings share a position, they are alternatives for one slot), and it attends to the context,
its ancestors and itself. Then every root-to-leaf path gets exactly the outputs it would get
decoded alone.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from ._array import check_length, is_torch
from .packing import _MAX_TOTAL, _int_ids

if TYPE_CHECKING:
    from ._typing import ArrayLike, IntArray, Tensor

    BoolArray = np.ndarray[Any, np.dtype[np.bool_]]

__all__ = ["draft_tree_position_ids", "draft_tree_mask"]


@overload
def draft_tree_position_ids(parents: Tensor, *, offset: int = ...) -> Tensor: ...
@overload
def draft_tree_position_ids(parents: ArrayLike, *, offset: int = ...) -> IntArray: ...
def draft_tree_position_ids(parents: Tensor | ArrayLike, *, offset: int = 0) -> Tensor | IntArray:
    """Position ids of a tree of draft tokens: ``offset`` plus the node's depth.

    Experimental: the name, signature or results may change in any release.

    Parameters
    ----------
    parents : array of shape (n,)
        ``parents[i]``: the index of node ``i``'s parent, ``-1`` for a node that follows the
        context directly. Nodes in topological order (``parents[i] < i``), integers.
    offset : int, default 0
        The position of the first draft level: the number of tokens before the tree (the
        cache length).

    Returns
    -------
    integer array of shape (n,)
        int64, in the library and device of ``parents``. Siblings share a position: they are
        alternatives for the same slot.

    Raises
    ------
    TypeError
        ``parents`` not a 1-D integer array, ``offset`` not an integer.
    ValueError
        A parent that is not ``-1`` and not an earlier node, a negative ``offset``.

    See Also
    --------
    draft_tree_mask : which nodes each node may attend to.

    Notes
    -----
    Along any root-to-leaf path the positions are ``offset, offset + 1, ...``: exactly those of
    the path decoded as one sequence, so one pass over the tree verifies every path.

    References
    ----------
    Miao et al., "SpecInfer", arXiv:2305.09781; Cai et al., "Medusa", arXiv:2401.10774.

    Examples
    --------
    >>> import posenc
    >>> parents = [-1, -1, 0, 0, 1, 2]      # two first tokens, then their continuations
    >>> posenc.draft_tree_position_ids(parents, offset=10).tolist()
    [10, 10, 11, 11, 11, 12]
    """
    par = _parents(parents)
    offset = check_length(offset, name="offset")
    if offset > _MAX_TOTAL:
        raise ValueError(f"offset must be <= 2**40, got {offset}")
    depth = _depths(_as_list(par))
    if is_torch(par):
        torch = sys.modules["torch"]
        return torch.tensor(depth, dtype=torch.int64, device=par.device) + offset
    return np.asarray(depth, dtype=np.int64) + offset


@overload
def draft_tree_mask(parents: Tensor) -> Tensor: ...
@overload
def draft_tree_mask(parents: ArrayLike) -> BoolArray: ...
def draft_tree_mask(parents: Tensor | ArrayLike) -> Tensor | BoolArray:
    """Tree attention mask: node ``i`` attends to itself and its ancestors, nothing else.

    Experimental: the name, signature or results may change in any release.

    Parameters
    ----------
    parents : array of shape (n,)
        As for :func:`draft_tree_position_ids`.

    Returns
    -------
    boolean array of shape (n, n)
        ``mask[i, j]`` True when ``j`` is ``i`` or an ancestor of ``i``. The tokens before the
        tree (the cache) are visible to every node: concatenate a block of True on the left.

    Raises
    ------
    TypeError, ValueError
        As for :func:`draft_tree_position_ids`.

    Examples
    --------
    >>> import posenc
    >>> posenc.draft_tree_mask([-1, -1, 0, 0, 1, 2]).astype(int)
    array([[1, 0, 0, 0, 0, 0],
           [0, 1, 0, 0, 0, 0],
           [1, 0, 1, 0, 0, 0],
           [1, 0, 0, 1, 0, 0],
           [0, 1, 0, 0, 1, 0],
           [1, 0, 1, 0, 0, 1]])
    """
    par = _parents(parents)
    plist = _as_list(par)
    n = len(plist)
    mask = np.zeros((n, n), dtype=bool)
    for i, p in enumerate(plist):
        mask[i, i] = True
        if p >= 0:
            mask[i] |= mask[p]
    if is_torch(par):
        return sys.modules["torch"].as_tensor(mask, device=par.device)
    return mask


# --- helpers -----------------------------------------------------------------------------------


def _parents(parents: Any) -> Any:
    par = _int_ids(parents, name="parents")
    if len(tuple(par.shape)) != 1:
        raise TypeError(f"parents must be a 1-D array of integers, got shape {tuple(par.shape)}")
    if tuple(par.shape)[0] > 2**15:
        raise ValueError(f"parents must hold at most 2**15 nodes, got {tuple(par.shape)[0]}")
    if is_torch(par) and par.device.type == "meta":
        raise ValueError("parents must hold values (a meta tensor has none): the tree is data")
    for i, p in enumerate(_as_list(par)):
        if not -1 <= p < i:
            raise ValueError(
                f"parents[{i}] must be -1 or the index of an earlier node (0 .. {i - 1}), got {p}"
            )
    return par


def _as_list(par: Any) -> list[int]:
    return [int(v) for v in (par.tolist() if is_torch(par) else par.tolist())]


def _depths(parents: list[int]) -> list[int]:
    depth: list[int] = []
    for p in parents:
        depth.append(0 if p < 0 else depth[p] + 1)
    return depth

"""Positions when sequences are packed or split across ranks.

Packing puts several documents in one row with no padding. Each document keeps the positions it
would have alone, ``0 .. n-1``, and attention must not cross a document boundary; frameworks find
the boundaries from the position ids themselves, so ids that run on across documents silently
merge them. Context parallelism splits one long sequence across ranks, and each rank must rotate
its tokens by their *global* positions. (Draft trees of speculative decoding: :mod:`posenc.speculative`.)

- :func:`packed_position_ids`: per-document ids ``0 .. n_d - 1`` from the document lengths;
- :func:`cu_seqlens`: the cumulative boundaries FlashAttention's varlen kernels take, found where
  the ids restart at 0 (as transformers does for ``position_ids``);
- :func:`packed_causal_mask`: the block-diagonal causal mask, a new document wherever the ids do
  not go up by one (as transformers' ``masking_utils`` does);
- :func:`context_parallel_positions`: the global positions of one rank's shard, contiguous or
  load-balanced ("zigzag": chunks ``r`` and ``2W - 1 - r``).
"""

from __future__ import annotations

import numbers
import sys
from typing import TYPE_CHECKING, Any, Literal, overload

import numpy as np

from ._array import _describe, check_choice, check_length, check_memory, compiling, is_torch

if TYPE_CHECKING:
    from ._typing import ArrayLike, Tensor

    BoolArray = np.ndarray[Any, np.dtype[np.bool_]]
    from ._typing import IntArray

__all__ = [
    "packed_position_ids",
    "cu_seqlens",
    "packed_causal_mask",
    "context_parallel_positions",
]

CP_LAYOUTS = ("zigzag", "contiguous")
_MAX_TOTAL = 2**40  # more tokens than any pack or tree holds: refused by name, not by MemoryError


# --- packed sequences --------------------------------------------------------------------------


@overload
def packed_position_ids(lengths: Tensor) -> Tensor: ...
@overload
def packed_position_ids(lengths: ArrayLike) -> IntArray: ...
def packed_position_ids(lengths: Tensor | ArrayLike) -> Tensor | IntArray:
    """Position ids of packed documents: each document counts ``0, 1, ..., n_d - 1`` on its own.

    Experimental: the name, signature or results may change in any release.

    Parameters
    ----------
    lengths : array of shape (n_docs,)
        The documents' lengths in packing order, non-negative integers (NumPy, list or torch;
        a zero length adds nothing).

    Returns
    -------
    integer array of shape (sum(lengths),)
        int64, in the library (and on the device) of ``lengths``.

    Raises
    ------
    TypeError
        ``lengths`` not a 1-D array of integers.
    ValueError
        A negative length, more than ``2**40`` tokens in all (the sum is formed exactly, so
        lengths whose int64 sum would wrap are refused too), or a result of more bytes than the
        memory of the machine (or of ``lengths``' device), refused before allocating.

    See Also
    --------
    cu_seqlens : the boundaries a varlen attention kernel takes.
    packed_causal_mask : the mask that keeps documents apart.

    Notes
    -----
    ``ids[t] = t - start(d)`` for token ``t`` of document ``d``, ``start(d) = n_0 + ... + n_{d-1}``.
    transformers 5.23's ``DataCollatorWithFlattening`` writes the same ids.

    Examples
    --------
    >>> import posenc
    >>> posenc.packed_position_ids([3, 2, 4]).tolist()
    [0, 1, 2, 0, 1, 0, 1, 2, 3]
    """
    n, total = _lengths(lengths)  # total checked in Python ints: no int64 sum wraps
    device = n.device if is_torch(n) else None
    check_memory(8 * total, what=f"lengths summing to {total} tokens (int64 ids)", device=device)
    if is_torch(n):
        torch = sys.modules["torch"]
        starts = torch.cumsum(n, 0) - n
        return torch.arange(total, device=n.device) - torch.repeat_interleave(starts, n)
    starts = np.cumsum(n) - n
    return np.arange(total) - np.repeat(starts, n)


@overload
def cu_seqlens(position_ids: Tensor) -> Tensor: ...
@overload
def cu_seqlens(position_ids: ArrayLike) -> IntArray: ...
def cu_seqlens(position_ids: Tensor | ArrayLike) -> Tensor | IntArray:
    """Cumulative document boundaries ``[0, n_0, n_0 + n_1, ..., total]`` from packed position ids.

    Experimental: the name, signature or results may change in any release.

    Parameters
    ----------
    position_ids : array of shape (total,) or (1, total)
        Packed ids (NumPy, list or torch), integers; every document starts at the same smallest
        id (0, or ``padding_idx + 1`` for RoBERTa-like models), and the first token starts one.

    Returns
    -------
    integer array of shape (n_docs + 1,)
        int32 (what FlashAttention's varlen kernels take), in the ids' library and device. A
        document starts wherever the id equals the smallest id; the last entry is ``total``.

    Raises
    ------
    TypeError
        ``position_ids`` not an integer array.
    ValueError
        ``position_ids`` with a batch axis other than 1, empty, whose first id is not the
        smallest, longer than ``2**31 - 1`` tokens, past int64 (uint64), or on the meta
        device; boundaries of more bytes than the memory of the machine (or of the ids'
        device), refused before allocating.

    See Also
    --------
    packed_position_ids : the ids of packed documents.

    Notes
    -----
    The rule of transformers 5.23 (``prepare_fa_kwargs_from_position_ids``): a document starts
    where the id equals ``position_ids.min()``. Ids that run on across documents
    (``arange(total)``) give ``[0, total]``: one document, and the varlen kernel lets every token
    attend across the old boundaries. transformers returns boundaries that do not start at 0 when
    the first id is not the smallest; this function refuses such ids.

    Examples
    --------
    >>> import posenc
    >>> posenc.cu_seqlens([0, 1, 2, 0, 1, 0, 1, 2, 3]).tolist()
    [0, 3, 5, 9]
    >>> posenc.cu_seqlens([2, 3, 4, 2, 3]).tolist()      # RoBERTa-like ids start at 2
    [0, 3, 5]
    """
    ids = _flat_ids(position_ids)
    total = int(ids.shape[0])
    if total > 2**31 - 1:
        raise ValueError(f"position_ids must hold at most 2**31 - 1 tokens (int32), got {total}")
    if is_torch(ids) and ids.device.type == "meta":
        raise ValueError("position_ids must hold values (a meta tensor has none)")
    # the document starts can be every token: int64 indices of all of them (an expanded view
    # holds few values but as many tokens)
    check_memory(
        8 * total,
        what=f"position_ids of {total} tokens (int64 document starts)",
        device=ids.device if is_torch(ids) else None,
    )
    ids = _to_int64(ids, name="position_ids")
    if is_torch(ids):
        torch = sys.modules["torch"]
        first, low = int(ids[0].item()), int(ids.min().item())
        starts = (ids == low).nonzero().reshape(-1)
        end = torch.tensor([total], device=ids.device)
        out = torch.cat([starts, end]).to(torch.int32)
    else:
        first, low = int(ids[0]), int(ids.min())
        out = np.concatenate([np.flatnonzero(ids == low), [total]]).astype(np.int32)
    if first != low:
        raise ValueError(
            f"position_ids must start a document at the first token: its id {first} must be "
            f"the smallest id ({low})"
        )
    return out


@overload
def packed_causal_mask(position_ids: Tensor) -> Tensor: ...
@overload
def packed_causal_mask(position_ids: ArrayLike) -> BoolArray: ...
def packed_causal_mask(position_ids: Tensor | ArrayLike) -> Tensor | BoolArray:
    """Block-diagonal causal mask of a packed row: token ``i`` sees ``j <= i`` of its own document.

    Experimental: the name, signature or results may change in any release.

    Parameters
    ----------
    position_ids : array of shape (..., total)
        Packed ids (NumPy, list or torch), integers; one row per packed sequence.

    Returns
    -------
    boolean array of shape (..., total, total)
        True where query ``i`` may attend to key ``j``. A new document starts at the first token
        and wherever an id is not the previous id plus one.

    Raises
    ------
    TypeError
        ``position_ids`` not an integer array.
    ValueError
        ``position_ids`` 0-d or past int64 (uint64), a row longer than ``2**15`` tokens (the
        mask is quadratic), or a mask of more bytes than the memory of the machine (or of the
        ids' device), refused before allocating (batch axes count: an expanded view holds few
        values).

    See Also
    --------
    cu_seqlens : the same boundaries for varlen kernels (a document starts where the id is 0).

    Notes
    -----
    This is transformers 5.23's rule for packed rows given as ``position_ids`` with no attention
    mask (``masking_utils.find_packed_sequence_indices``). It differs from :func:`cu_seqlens`
    only for ids that jump without restarting at 0 (``[0, 1, 2, 5, 6]``: two documents here,
    one there).

    Examples
    --------
    >>> import posenc
    >>> posenc.packed_causal_mask([0, 1, 0, 1, 2]).astype(int)
    array([[1, 0, 0, 0, 0],
           [1, 1, 0, 0, 0],
           [0, 0, 1, 0, 0],
           [0, 0, 1, 1, 0],
           [0, 0, 1, 1, 1]])
    """
    ids = _int_ids(position_ids, name="position_ids")
    shape = tuple(ids.shape)
    if len(shape) == 0:
        raise ValueError("position_ids must have shape (..., total), got a 0-d array")
    if shape[-1] > 2**15:
        raise ValueError(
            f"position_ids rows must hold at most 2**15 tokens (the mask is total x total), "
            f"got {shape[-1]}"
        )
    rows = 1
    for size in shape[:-1]:
        rows *= int(size)
    check_memory(  # the batch axes multiply the mask: an expanded view holds few values
        rows * shape[-1] * shape[-1],
        what=f"position_ids of shape {shape} ({rows} bool masks of {shape[-1]} x {shape[-1]})",
        device=ids.device if is_torch(ids) else None,
    )
    ids = _to_int64(ids, name="position_ids")
    if is_torch(ids):
        torch = sys.modules["torch"]
        step = torch.diff(ids, dim=-1, prepend=ids[..., :1] - 1)
        doc = torch.cumsum((step != 1).to(torch.int64), dim=-1)
        causal = torch.ones(shape[-1], shape[-1], dtype=torch.bool, device=ids.device).tril()
        return (doc[..., :, None] == doc[..., None, :]) & causal
    step = np.diff(ids, axis=-1, prepend=ids[..., :1] - 1)
    doc = np.cumsum(step != 1, axis=-1)
    causal = np.tril(np.ones((shape[-1], shape[-1]), dtype=bool))
    return (doc[..., :, None] == doc[..., None, :]) & causal


# --- context parallelism -----------------------------------------------------------------------


def context_parallel_positions(
    seq_len: int,
    world_size: int,
    rank: int,
    *,
    layout: Literal["zigzag", "contiguous"] = "zigzag",
) -> IntArray:
    """The global positions of the tokens one rank holds when a sequence is split across ranks.

    Experimental: the name, signature or results may change in any release.

    Parameters
    ----------
    seq_len : int
        Tokens in the whole sequence; a multiple of ``2 * world_size`` (zigzag) or of
        ``world_size`` (contiguous).
    world_size : int
        Ranks in the context-parallel group, ``>= 1``.
    rank : int
        This rank, ``0 <= rank < world_size``.
    layout : {"zigzag", "contiguous"}, default "zigzag"
        ``"zigzag"``: the sequence is cut in ``2 * world_size`` chunks and rank ``r`` holds
        chunks ``r`` and ``2 * world_size - 1 - r``, so that every rank has the same causal
        work (the head-tail load balancer of torch 2.13's context parallelism).
        ``"contiguous"``: rank ``r`` holds chunk ``r`` of ``world_size``.

    Returns
    -------
    numpy.ndarray of shape (seq_len // world_size,), int64
        The positions to rotate this rank's queries and keys by (and to build its causal mask
        from), ascending.

    Raises
    ------
    TypeError, ValueError
        Arguments not integers, ``rank`` out of range, ``seq_len`` not a multiple of the chunk
        count or past ``2**40``, a bad ``layout``, a shard of more bytes than the machine's
        memory (refused before allocating).

    Notes
    -----
    Over all ranks the shards are a permutation of ``0 .. seq_len - 1``. RoPE on each shard with
    these positions, gathered back, equals RoPE on the whole sequence; ``arange`` on each shard
    instead would make every rank believe it holds the start.

    Examples
    --------
    >>> import posenc
    >>> posenc.context_parallel_positions(8, 2, 0).tolist()
    [0, 1, 6, 7]
    >>> posenc.context_parallel_positions(8, 2, 1, layout="contiguous").tolist()
    [4, 5, 6, 7]
    """
    seq_len = check_length(seq_len, name="seq_len")
    world_size = check_length(world_size, name="world_size")
    rank = check_length(rank, name="rank")
    lay = check_choice(layout, name="layout", choices=CP_LAYOUTS)
    if world_size == 0:
        raise ValueError("world_size must be a positive integer, got 0")
    if rank >= world_size:
        raise ValueError(f"rank must be in [0, world_size = {world_size}), got {rank}")
    if seq_len > _MAX_TOTAL:
        raise ValueError(f"seq_len must be <= 2**40, got {seq_len}")
    chunks = 2 * world_size if lay == "zigzag" else world_size
    if seq_len % chunks:
        raise ValueError(
            f"seq_len must be a multiple of {chunks} ({'2 * ' if lay == 'zigzag' else ''}"
            f"world_size) for layout {lay!r}, got {seq_len}"
        )
    size = seq_len // chunks
    mine = [rank, chunks - 1 - rank] if lay == "zigzag" else [rank]
    check_memory(
        8 * size * len(mine),
        what=f"seq_len={seq_len} over world_size={world_size} ({size * len(mine)} int64 positions)",
    )
    parts = [np.arange(c * size, (c + 1) * size, dtype=np.int64) for c in mine]
    return np.concatenate(parts)


# --- helpers -----------------------------------------------------------------------------------


def _int_ids(values: Any, *, name: str) -> Any:
    """An integer NumPy array or tensor (bool refused), errors naming ``name``."""
    if is_torch(values):
        torch = sys.modules["torch"]
        if values.is_floating_point() or values.is_complex() or values.dtype == torch.bool:
            raise TypeError(f"{name} must hold integers, got {_describe(values)}")
        return values
    if values is None or isinstance(values, (numbers.Number, str, bytes)):
        raise TypeError(f"{name} must be an array of integers, got {_describe(values)}")
    try:
        arr = np.asarray(values)
    except Exception as exc:
        raise TypeError(f"{name} must be a rectangular array of integers") from exc
    if arr.size == 0 and arr.dtype == np.float64 and not isinstance(values, np.ndarray):
        arr = arr.astype(np.int64)  # [] is an empty list of integers
    if arr.dtype == np.bool_ or arr.dtype.kind not in "iu":
        raise TypeError(f"{name} must hold integers, got {_describe(arr)}")
    return arr


def _lengths(lengths: Any) -> tuple[Any, int]:
    """``(lengths as int64, their total)``; the checks run on Python ints, so no int64 sum can
    wrap (``[2**62] * 4`` sums to 0 in int64) and uint64 values past int64 keep their value."""
    n = _int_ids(lengths, name="lengths")
    if len(tuple(n.shape)) != 1:
        raise TypeError(f"lengths must be a 1-D array of integers, got shape {tuple(n.shape)}")
    if is_torch(n) and n.device.type == "meta":
        raise ValueError("lengths must hold values (a meta tensor has none): they set the size")
    values = [int(v) for v in n.tolist()]  # Python ints, before any torch op that can wrap
    if values and min(values) < 0:
        raise ValueError(f"lengths must be non-negative, got {min(values)}")
    total = sum(values)
    if total > _MAX_TOTAL:
        raise ValueError(f"lengths must sum to at most 2**40 tokens, got {total}")
    if is_torch(n):
        return n.to(sys.modules["torch"].int64), total
    return n.astype(np.int64), total


def _to_int64(ids: Any, *, name: str) -> Any:
    """Integer ids as int64 (torch's min and nonzero refuse uint16/32/64); uint64 ids past int64
    are refused in both libraries alike (a cast would wrap them negative)."""
    if is_torch(ids):
        torch = sys.modules["torch"]
        out = ids.to(torch.int64)
        if (
            ids.dtype == torch.uint64
            and out.device.type != "meta"
            and not compiling()
            and bool((out < 0).any())
        ):
            raise ValueError(f"{name} must fit in int64, got a uint64 id of 2**63 or more")
        return out
    if ids.dtype == np.uint64 and ids.size and int(ids.max()) > 2**63 - 1:
        raise ValueError(f"{name} must fit in int64, got {int(ids.max())}")
    return ids.astype(np.int64, copy=False)


def _flat_ids(position_ids: Any) -> Any:
    ids = _int_ids(position_ids, name="position_ids")
    shape = tuple(ids.shape)
    if len(shape) == 2 and shape[0] == 1:
        ids = ids.reshape(-1)
    elif len(shape) != 1:
        raise ValueError(
            f"position_ids must have shape (total,) or (1, total) (one packed row), got {shape}"
        )
    if ids.shape[0] == 0:
        raise ValueError("position_ids must hold at least one token, got an empty array")
    return ids

"""T5 relative position buckets (Raffel et al., 2019).

T5 adds a learned scalar per head to each attention score, looked up by the bucket of the
relative position ``key - query``: one bucket per distance up to ``max_exact``, then
logarithmically wider buckets up to ``max_distance``, beyond which all distances share the last
bucket. The learned table itself lives in :class:`posenc.torch.T5RelativeBias`.
"""

from __future__ import annotations

import math
import numbers
import sys
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from ._array import MAX_COUNT, _describe, check_scalar, is_torch
from ._typing import ArrayLike, IntArray

if TYPE_CHECKING:
    from ._typing import Tensor

__all__ = ["t5_bucket"]


@overload
def t5_bucket(
    relative_position: Tensor,
    *,
    bidirectional: bool = ...,
    num_buckets: int = ...,
    max_distance: float = ...,
) -> Tensor: ...
@overload
def t5_bucket(
    relative_position: ArrayLike,
    *,
    bidirectional: bool = ...,
    num_buckets: int = ...,
    max_distance: float = ...,
) -> IntArray: ...
def t5_bucket(
    relative_position: Tensor | ArrayLike,
    *,
    bidirectional: bool = True,
    num_buckets: int = 32,
    max_distance: float = 128,
) -> Tensor | IntArray:
    """Bucket index of each relative position, as in T5 (Raffel et al., 2019).

    Equal, entry for entry, to ``T5Attention._relative_position_bucket`` of Hugging Face
    transformers (itself Mesh TensorFlow's ``_relative_position_bucket``).

    Parameters
    ----------
    relative_position : int or integer array of shape (...,)
        ``memory_position - query_position``: key position minus query position (NumPy, list or
        torch tensor; any shape, any integer dtype from int8 to uint64). A Python int, a NumPy
        scalar or a 0-d array or tensor is one relative position (never a count), with a 0-d
        result. Positive means the key lies after the query. Every value is bucketed exactly, ``-2**63`` and uint64 values
        above ``2**63`` included (they fall in the last bucket of their direction).
    bidirectional : bool, default True
        ``True`` (encoder): half of the buckets for keys before the query, half for keys after.
        ``False`` (decoder): every key after the query shares bucket 0 with the query itself
        (a causal mask hides them anyway), and all buckets count distances into the past.
    num_buckets : int, default 32
        Number of buckets. Must leave at least one exact bucket: >= 4 when bidirectional,
        >= 2 otherwise; at most ``2**53``.
    max_distance : float, default 128
        Where the logarithmic ladder (see Notes) would reach ``n``: every distance from
        ``e * (max_distance / e) ** ((n - e - 1) / (n - e))`` on shares the last bucket of its
        direction, which starts below ``max_distance`` (at 91 bidirectional, 113 causal, for the
        defaults). Must exceed the number ``e`` of exact buckets (``num_buckets // 4``
        bidirectional, ``num_buckets // 2`` causal).

    Returns
    -------
    integer array of the input's shape, int64
        Values in ``0 .. num_buckets - 1``. NumPy for NumPy/int/list input; a tensor on the
        input's device for tensor input.

    Raises
    ------
    TypeError
        ``relative_position`` not integer, ``bidirectional`` not a bool, ``num_buckets`` not an
        integer, ``max_distance`` not a real number.
    ValueError
        ``num_buckets`` or ``max_distance`` too small, ``num_buckets`` above ``2**53``, Python
        ints in ``relative_position`` outside the int64 and uint64 ranges.

    Notes
    -----
    With ``n = num_buckets // 2`` and ``r = |rel|`` (bidirectional; ``offset = n`` when
    ``rel > 0``), or ``n = num_buckets`` and ``r = max(-rel, 0)`` (causal), and
    ``e = n // 2`` exact buckets::

        bucket = offset + r                                                 if r < e
        bucket = offset + min(n - 1, e + floor(log(r / e) / log(max_distance / e) * (n - e)))

    The logarithm is taken in float32, as T5 and Hugging Face do. The float64 formula puts some
    exact boundaries one bucket lower (``num_buckets=18``: ``r = 8, 16, 64``), so float32 is
    what reproduces trained checkpoints.

    References
    ----------
    Raffel et al., "Exploring the Limits of Transfer Learning with a Unified Text-to-Text
    Transformer", arXiv:1910.10683.

    Examples
    --------
    >>> import numpy as np
    >>> import posenc
    >>> rel = np.array([-200, -100, -20, -8, -7, -1, 0, 1, 7, 8, 20, 100, 200])
    >>> posenc.t5_bucket(rel)
    array([15, 15, 10,  8,  7,  1,  0, 17, 23, 24, 26, 31, 31])
    >>> posenc.t5_bucket(rel, bidirectional=False)
    array([31, 30, 17,  8,  7,  1,  0,  0,  0,  0,  0,  0,  0])
    """
    rel, torch_in = _relative_positions(relative_position)
    if not isinstance(bidirectional, (bool, np.bool_)):
        raise TypeError(f"bidirectional must be a bool, got {_describe(bidirectional)}")
    n, exact, log_range = _check_buckets(num_buckets, max_distance, bool(bidirectional))
    if torch_in:
        return _bucket_torch(rel, bool(bidirectional), n, exact, log_range)
    return _bucket_numpy(rel, bool(bidirectional), n, exact, log_range)


def _relative_positions(x: Any) -> tuple[Any, bool]:
    """Integer relative positions as int64, or as uint64 where the input is uint64."""
    if isinstance(x, (bool, np.bool_)):
        raise TypeError(f"relative_position must hold integers, got {x!r}")
    if is_torch(x):
        torch = sys.modules["torch"]
        if x.is_floating_point() or x.is_complex() or x.dtype == torch.bool:
            raise TypeError(f"relative_position must hold integers, got {_describe(x)}")
        return (x if x.dtype == torch.uint64 else x.to(torch.int64)), True
    try:
        arr = np.asarray(x)
    except Exception as exc:  # ragged lists and the like
        raise TypeError(f"relative_position must hold integers, got {_describe(x)}") from exc
    if (
        arr.dtype == object
        and arr.size
        and all(
            isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_))
            for v in arr.flat
        )
    ):
        raise ValueError(
            "relative_position must fit in int64 (or uint64 for non-negative values), got Python "
            f"ints out of that range (min {min(arr.flat)}, max {max(arr.flat)})"
        )
    if arr.dtype.kind not in "iu":
        raise TypeError(f"relative_position must hold integers, got {_describe(arr)}")
    return arr.astype(np.uint64 if arr.dtype == np.uint64 else np.int64), False


def _check_buckets(
    num_buckets: Any, max_distance: Any, bidirectional: bool
) -> tuple[int, int, float]:
    least = 4 if bidirectional else 2
    if isinstance(num_buckets, bool) or not isinstance(num_buckets, numbers.Integral):
        raise TypeError(f"num_buckets must be an integer >= {least}, got {_describe(num_buckets)}")
    num_buckets = int(num_buckets)
    if num_buckets < least:
        mode = "bidirectional=True" if bidirectional else "bidirectional=False"
        raise ValueError(
            f"num_buckets must be an integer >= {least} with {mode} (at least one exact bucket "
            f"per direction), got {num_buckets}"
        )
    if num_buckets > MAX_COUNT:
        raise ValueError(f"num_buckets must be an integer <= 2**53, got {num_buckets}")
    n = num_buckets // 2 if bidirectional else num_buckets
    exact = n // 2
    max_distance = check_scalar(max_distance, name="max_distance")
    if max_distance <= exact:
        raise ValueError(
            f"max_distance must be greater than the {exact} exact buckets "
            f"(num_buckets={num_buckets}), got {max_distance:g}"
        )
    # HF's log(max_distance / e); where that ratio rounds to 1, the (tiny, > 0) exact logarithm
    # instead of a 0 that would turn r = e into 0 / 0
    log_range = math.log(max_distance / exact) or math.log1p((max_distance - exact) / exact)
    return n, exact, log_range


# Both backends split ``rel`` into three pieces that never wrap: ``after`` (rel > 0), ``r`` the
# distance that is bucketed (``|rel|`` bidirectional, ``max(-rel, 0)`` causal) as int64 saturated
# at 2**63 - 1, and ``r`` in float32 (rounded from the exact value). int64's -2**63 saturates to
# 2**63 - 1, which rounds to the same float32 2**63; uint64 above 2**63 - 1 saturates in the int64
# piece (only compared with the exact buckets) and is rounded straight from uint64 in float32.
_SATURATED = 2**63 - 1


def _bucket_numpy(rel: Any, bidirectional: bool, n: int, exact: int, log_range: float) -> IntArray:
    unsigned = rel.dtype == np.uint64
    if unsigned:
        after = rel > 0
        r_float = rel.astype(np.float32) if bidirectional else np.zeros(rel.shape, np.float32)
        big = rel > _SATURATED
        r = (
            np.where(big, _SATURATED, rel).astype(np.int64)
            if bidirectional
            else np.zeros(rel.shape, np.int64)
        )
    else:
        after = rel > 0
        r = np.abs(np.maximum(rel, -_SATURATED)) if bidirectional else -np.clip(rel, -_SATURATED, 0)
        r_float = r.astype(np.float32)
    buckets = after.astype(np.int64) * n if bidirectional else np.zeros(rel.shape, np.int64)
    # float32 throughout, like T5: log(r / e) / log(max_distance / e) * (n - e)
    scaled = np.log(np.maximum(r_float, np.float32(exact)) / np.float32(exact))
    scaled = scaled / np.float32(log_range) * np.float32(n - exact)
    # at most n - e before the cast: the same bucket (n - 1), and no int64 overflow
    scaled = np.minimum(scaled, np.float32(n - exact))
    large = np.minimum(exact + scaled.astype(np.int64), n - 1)
    return np.asarray(buckets + np.where(r < exact, r, large))


def _bucket_torch(rel: Any, bidirectional: bool, n: int, exact: int, log_range: float) -> Any:
    torch = sys.modules["torch"]
    if rel.dtype == torch.uint64:  # few uint64 kernels exist: work in int64 and float32
        as_int = rel.to(torch.int64)  # values above 2**63 - 1 wrap to negative ones
        after = as_int != 0
        if bidirectional:
            r = torch.where(as_int < 0, _SATURATED, as_int)
            r_float = rel.float()  # straight from uint64: the exact value rounded once
        else:
            r = torch.zeros_like(as_int)
            r_float = r.float()
    else:
        after = rel > 0
        if bidirectional:
            r = rel.clamp(min=-_SATURATED).abs()
        else:
            r = -rel.clamp(min=-_SATURATED, max=0)
        r_float = r.float()
    buckets = after.to(torch.int64) * n if bidirectional else torch.zeros_like(r)
    # the same float32 operations, in the same order, as transformers' T5Attention
    scaled = torch.log(r_float.clamp(min=exact) / exact) / log_range * (n - exact)
    scaled = scaled.clamp(max=n - exact)  # the same bucket (n - 1), and no int64 overflow
    large = torch.clamp(exact + scaled.to(torch.int64), max=n - 1)
    return buckets + torch.where(r < exact, r, large)

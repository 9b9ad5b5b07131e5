"""Relative positions between queries and keys (Shaw et al., 2018), optionally clipped.

Relative schemes look up an embedding or a bias by the distance ``j - i`` between key ``j`` and
query ``i`` instead of by either absolute position. This module builds that matrix; the biases
and tables that are indexed by it live with each scheme.
"""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING, Any

import numpy as np

from ._array import traced_constant

if TYPE_CHECKING:
    from ._typing import IntArray

__all__ = ["relative_positions"]

_INT64 = (-(2**63), 2**63 - 1)


def relative_positions(
    q_len: int, k_len: int, *, offset: int = 0, max_distance: int | None = None
) -> IntArray:
    """Key position minus query position, ``R[i, j] = j - (i + offset)`` (Shaw et al., 2018).

    Parameters
    ----------
    q_len : int
        Number of queries, ``>= 0``.
    k_len : int
        Number of keys, ``>= 0``.
    offset : int, default 0
        Position of the first query; the keys sit at ``0 .. k_len-1``. When decoding with a
        KV cache the new queries are the last ``q_len`` tokens: ``offset = k_len - q_len``.
    max_distance : int, optional
        Clip the distances to ``[-max_distance, max_distance]`` (Shaw et al. use one table row
        per clipped distance, ``2 * max_distance + 1`` rows). A non-negative integer.

    Returns
    -------
    numpy.ndarray of shape (q_len, k_len), int64
        Negative where the key lies before the query (in the past), positive after it.

    Raises
    ------
    TypeError
        An argument that is not an integer (bools included), ``max_distance`` neither None nor
        an integer.
    ValueError
        ``q_len`` or ``k_len`` negative, ``max_distance`` negative, or distances that do not
        fit in int64.

    See Also
    --------
    posenc.attention : takes a bias built from these distances.

    Notes
    -----
    ``R[i, j] = clip(j - (i + offset), -max_distance, max_distance)``. The matrix is
    Toeplitz: constant along each diagonal, since only the difference of the positions counts.

    References
    ----------
    Shaw, Uszkoreit and Vaswani, "Self-Attention with Relative Position Representations",
    arXiv:1803.02155.

    Examples
    --------
    >>> import posenc
    >>> posenc.relative_positions(3, 4)
    array([[ 0,  1,  2,  3],
           [-1,  0,  1,  2],
           [-2, -1,  0,  1]])
    >>> posenc.relative_positions(2, 5, offset=3)       # the last 2 of 5 tokens
    array([[-3, -2, -1,  0,  1],
           [-4, -3, -2, -1,  0]])
    >>> posenc.relative_positions(1, 6, offset=5, max_distance=2)
    array([[-2, -2, -2, -2, -1,  0]])
    """
    q_len = _check_int(q_len, "q_len", minimum=0)
    k_len = _check_int(k_len, "k_len", minimum=0)
    offset = _check_int(offset, "offset")
    if max_distance is not None:
        max_distance = _check_int(max_distance, "max_distance", minimum=0, none_ok=True)
    if q_len and k_len:
        lowest, highest = 0 - (q_len - 1 + offset), (k_len - 1) - offset
        if lowest < _INT64[0] or highest > _INT64[1]:
            raise ValueError(
                f"relative positions run from {lowest} to {highest} with q_len={q_len}, "
                f"k_len={k_len}, offset={offset}: outside int64"
            )
    return _relative(q_len, k_len, offset, max_distance)  # under torch.compile: a constant


@traced_constant
def _relative(q_len: int, k_len: int, offset: int, max_distance: int | None) -> IntArray:
    # (j - offset) - i: every intermediate lies between the extremes checked above
    key = np.arange(k_len, dtype=np.int64) - np.int64(offset)  # (k_len,)
    rel = key[None, :] - np.arange(q_len, dtype=np.int64)[:, None]  # (q_len, k_len)
    if max_distance is not None:
        np.clip(rel, -max_distance, max_distance, out=rel)
    return rel


def _check_int(value: Any, name: str, *, minimum: int | None = None, none_ok: bool = False) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        kind = "a non-negative integer" if minimum == 0 else "an integer"
        if none_ok:
            kind += " or None"
        raise TypeError(f"{name} must be {kind}, got {value!r} ({type(value).__name__})")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be a non-negative integer, got {value}")
    if not _INT64[0] <= value <= _INT64[1]:
        raise ValueError(f"{name} must fit in int64, got {value}")
    return value

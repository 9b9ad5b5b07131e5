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

import numpy as np

from ._array import _describe, check_scalar, is_torch

__all__ = ["t5_bucket"]


def t5_bucket(relative_position, *, bidirectional=True, num_buckets=32, max_distance=128):
    """Bucket index of each relative position, as in T5 (Raffel et al., 2019).

    Equal, entry for entry, to ``T5Attention._relative_position_bucket`` of Hugging Face
    transformers (itself Mesh TensorFlow's ``_relative_position_bucket``).

    Parameters
    ----------
    relative_position : int or integer array of shape (...,)
        ``memory_position - query_position``: key position minus query position (NumPy, list or
        torch tensor; any shape). Positive means the key lies after the query.
    bidirectional : bool, default True
        ``True`` (encoder): half of the buckets for keys before the query, half for keys after.
        ``False`` (decoder): every key after the query shares bucket 0 with the query itself
        (a causal mask hides them anyway), and all buckets count distances into the past.
    num_buckets : int, default 32
        Number of buckets. Must leave at least one exact bucket: >= 4 when bidirectional,
        >= 2 otherwise.
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
        ``num_buckets`` or ``max_distance`` too small.

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


def _relative_positions(x):
    if isinstance(x, (bool, np.bool_)):
        raise TypeError(f"relative_position must hold integers, got {x!r}")
    if is_torch(x):
        torch = sys.modules["torch"]
        if x.is_floating_point() or x.is_complex() or x.dtype == torch.bool:
            raise TypeError(f"relative_position must hold integers, got {_describe(x)}")
        return x.to(torch.int64), True
    try:
        arr = np.asarray(x)
    except Exception as exc:  # ragged lists and the like
        raise TypeError(f"relative_position must hold integers, got {_describe(x)}") from exc
    if arr.dtype.kind not in "iu":
        raise TypeError(f"relative_position must hold integers, got {_describe(arr)}")
    return arr.astype(np.int64), False


def _check_buckets(num_buckets, max_distance, bidirectional):
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
    n = num_buckets // 2 if bidirectional else num_buckets
    exact = n // 2
    max_distance = check_scalar(max_distance, name="max_distance")
    if max_distance <= exact:
        raise ValueError(
            f"max_distance must be greater than the {exact} exact buckets "
            f"(num_buckets={num_buckets}), got {max_distance:g}"
        )
    return n, exact, math.log(max_distance / exact)


def _bucket_numpy(rel, bidirectional, n, exact, log_range):
    if bidirectional:
        buckets = (rel > 0).astype(np.int64) * n
        r = np.abs(rel)
    else:
        buckets = np.zeros_like(rel)
        r = -np.minimum(rel, 0)
    # float32 throughout, like T5: log(r / e) / log(max_distance / e) * (n - e)
    scaled = np.log(np.maximum(r, exact).astype(np.float32) / np.float32(exact))
    scaled = scaled / np.float32(log_range) * np.float32(n - exact)
    large = np.minimum(exact + scaled.astype(np.int64), n - 1)
    return np.asarray(buckets + np.where(r < exact, r, large))


def _bucket_torch(rel, bidirectional, n, exact, log_range):
    torch = sys.modules["torch"]
    if bidirectional:
        buckets = (rel > 0).to(torch.int64) * n
        r = rel.abs()
    else:
        buckets = torch.zeros_like(rel)
        r = -torch.clamp(rel, max=0)
    # the same float32 operations, in the same order, as transformers' T5Attention
    scaled = torch.log(r.clamp(min=exact).float() / exact) / log_range * (n - exact)
    large = torch.clamp(exact + scaled.to(torch.int64), max=n - 1)
    return buckets + torch.where(r < exact, r, large)

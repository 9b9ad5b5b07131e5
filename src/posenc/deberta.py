"""DeBERTa's disentangled attention (He et al., 2020): relative positions and their two terms.

DeBERTa keeps content and position apart: each token has a content vector, and each *relative
distance* has a position vector shared by the whole layer. The attention score of query ``i`` and
key ``j`` adds to the content-to-content product two cross terms: content-to-position (``c2p``,
the query's content against the key's relative position) and position-to-content (``p2c``, the
query's relative position against the key's content). DeBERTa v2/v3 bucket the relative
distances logarithmically beyond ``bucket_size // 2``. The framework code reproduced is
``transformers.models.deberta_v2.modeling_deberta_v2`` (``make_log_bucket_position``,
``build_relative_position``, ``DisentangledSelfAttention.disentangled_attention_bias``).
"""

from __future__ import annotations

import numbers
import sys
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from ._array import _describe, check_count, is_torch, traced_constant
from ._typing import ArrayLike, FloatArray, IntArray

if TYPE_CHECKING:
    from ._typing import Tensor

__all__ = ["deberta_log_bucket", "deberta_relative_positions", "deberta_disentangled_bias"]

_INT64_MAX = 2**63 - 1


def _check_int(value: Any, *, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {_describe(value)}")
    value = int(value)
    if abs(value) > 2**53:
        raise ValueError(f"{name} must be an integer of magnitude <= 2**53, got {value}")
    return value


def _check_buckets(bucket_size: Any, max_position: Any) -> tuple[int, int] | None:
    """``(mid, max_position)``, or None when bucketing is off (either value <= 0, as in HF)."""
    bucket_size = _check_int(bucket_size, name="bucket_size")
    max_position = _check_int(max_position, name="max_position")
    if bucket_size <= 0 or max_position <= 0:
        return None
    if bucket_size < 2:
        raise ValueError(
            f"bucket_size must be >= 2 (or <= 0 to turn bucketing off), got {bucket_size}"
        )
    mid = bucket_size // 2
    if max_position <= mid + 1:
        raise ValueError(
            f"max_position must be greater than bucket_size // 2 + 1 = {mid + 1} (or <= 0 to "
            f"turn bucketing off), got {max_position}"
        )
    return mid, max_position


def _relative(x: Any) -> tuple[Any, bool]:
    """Integer relative positions as int64 (NumPy or torch)."""
    if isinstance(x, (bool, np.bool_)):
        raise TypeError(f"relative_position must hold integers, got {x!r}")
    if is_torch(x):
        torch = sys.modules["torch"]
        if x.is_floating_point() or x.is_complex() or x.dtype == torch.bool:
            raise TypeError(f"relative_position must hold integers, got {_describe(x)}")
        as_int = x.to(torch.int64)  # uint64 above 2**63 - 1 wraps to negative values
        if x.dtype == torch.uint64 and x.device.type != "meta" and bool((as_int < 0).any()):
            raise ValueError("relative_position must fit in int64, got uint64 values above it")
        return as_int, True
    try:
        arr = np.asarray(x)
    except Exception as exc:  # ragged lists and the like
        raise TypeError(f"relative_position must hold integers, got {_describe(x)}") from exc
    if arr.dtype == object:
        if arr.size and all(
            isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_))
            for v in arr.flat
        ):
            raise ValueError("relative_position must fit in int64, got Python ints beyond it")
        raise TypeError(f"relative_position must hold integers, got {_describe(arr)}")
    if arr.dtype.kind not in "iu":
        raise TypeError(f"relative_position must hold integers, got {_describe(arr)}")
    if arr.dtype == np.uint64 and arr.size and int(arr.max()) > _INT64_MAX:
        raise ValueError("relative_position must fit in int64, got uint64 values above it")
    return arr.astype(np.int64), False


@overload
def deberta_log_bucket(
    relative_position: Tensor, bucket_size: int, max_position: int
) -> Tensor: ...
@overload
def deberta_log_bucket(
    relative_position: ArrayLike, bucket_size: int, max_position: int
) -> IntArray: ...
def deberta_log_bucket(
    relative_position: Tensor | ArrayLike, bucket_size: int, max_position: int
) -> Tensor | IntArray:
    """DeBERTa v2's log-bucketed relative positions. Experimental.

    Equal, entry for entry, to ``make_log_bucket_position(rel, bucket_size, max_position)``
    followed by ``.to(torch.long)`` in Hugging Face transformers' ``deberta_v2`` (He et al.,
    2020, arXiv:2006.03654; the buckets come with DeBERTa v2).

    Parameters
    ----------
    relative_position : integer array of shape (...,)
        ``query_position - key_position`` (NumPy, list or torch tensor; any integer dtype that
        fits int64). Note the sign: DeBERTa subtracts the key from the query, T5 the reverse.
    bucket_size : int
        ``position_buckets`` of the config (256 in DeBERTa v3). Distances up to
        ``bucket_size // 2`` keep their value. A value <= 0 turns bucketing off (identity).
    max_position : int
        ``max_relative_positions`` (512 in DeBERTa v3): the distance ``max_position - 1`` lands on
        bucket ``2 * (bucket_size // 2) - 1``. Must exceed ``bucket_size // 2 + 1``; a value
        <= 0 turns bucketing off.

    Returns
    -------
    integer array of the input's shape, int64
        NumPy for NumPy/list input; a tensor on the input's device for tensor input. Not
        clamped: distances beyond ``max_position`` keep growing slowly (the attention clamps).

    Raises
    ------
    TypeError
        Non-integer ``relative_position``, ``bucket_size`` or ``max_position``.
    ValueError
        ``bucket_size`` of 1, ``max_position`` too small, values beyond int64.

    Notes
    -----
    With ``mid = bucket_size // 2`` and ``r = |rel|``::

        bucket = rel                                                          if r <= mid
        bucket = sign(rel) * (mid + ceil(log(r / mid) / log((max_position - 1) / mid)
                                          * (mid - 1)))                      otherwise

    computed in float32, as transformers does under torch's default dtype.

    Examples
    --------
    >>> import numpy as np
    >>> import posenc
    >>> rel = np.array([-600, -511, -200, -5, 0, 3, 4, 5, 200, 511])
    >>> posenc.deberta_log_bucket(rel, bucket_size=8, max_position=512)
    array([-8, -7, -7, -5,  0,  3,  4,  5,  7,  7])
    """
    rel, torch_in = _relative(relative_position)
    spec = _check_buckets(bucket_size, max_position)
    if spec is None:
        return rel
    mid, max_position = spec
    if torch_in:
        torch = sys.modules["torch"]
        sign = torch.sign(rel)
        # -2**63 has no int64 magnitude: take that of -(2**63 - 1), the same far bucket
        abs_pos = torch.where((rel < mid) & (rel > -mid), mid - 1, rel.clamp(min=-_INT64_MAX).abs())
        # the same float32 operations, in the same order, as transformers
        denom = torch.log(torch.tensor((max_position - 1) / mid, dtype=torch.float32))
        ratio = abs_pos.to(torch.float32) / mid
        log_pos = torch.ceil(torch.log(ratio) / denom.to(rel.device) * (mid - 1)) + mid
        return torch.where(abs_pos <= mid, rel, (log_pos * sign).to(torch.int64))
    # log((max_position - 1) / mid): the quotient in float64, rounded to float32, logged in float32
    denom32 = np.log(np.float32((max_position - 1) / mid))
    sign = np.sign(rel)
    abs_pos = np.where((rel < mid) & (rel > -mid), mid - 1, np.abs(np.maximum(rel, -_INT64_MAX)))
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = abs_pos.astype(np.float32) / np.float32(mid)
        log_pos = np.ceil(np.log(ratio) / denom32 * np.float32(mid - 1)) + np.float32(mid)
        large = (log_pos * sign.astype(np.float32)).astype(np.int64)
    return np.asarray(np.where(abs_pos <= mid, rel, large))


@overload
def deberta_relative_positions(
    q_len: int,
    k_len: int,
    *,
    bucket_size: int = ...,
    max_position: int = ...,
    like: Tensor,
) -> Tensor: ...
@overload
def deberta_relative_positions(
    q_len: int,
    k_len: int,
    *,
    bucket_size: int = ...,
    max_position: int = ...,
    like: FloatArray | None = ...,
) -> IntArray: ...
def deberta_relative_positions(
    q_len: int,
    k_len: int,
    *,
    bucket_size: int = -1,
    max_position: int = -1,
    like: Tensor | FloatArray | None = None,
) -> Tensor | IntArray:
    """DeBERTa's relative position matrix ``delta(i, j)``. Experimental.

    Equal to ``build_relative_position(query_layer, key_layer, bucket_size, max_position)[0]`` of
    Hugging Face transformers' ``deberta_v2`` (He et al., 2020, arXiv:2006.03654): entry
    ``(i, j)`` is ``i - j``, log-bucketed by :func:`deberta_log_bucket` when both
    ``bucket_size`` and ``max_position`` are positive.

    Parameters
    ----------
    q_len, k_len : int
        Number of queries and keys (counts from 0).
    bucket_size, max_position : int, default -1
        As in :func:`deberta_log_bucket`; -1 (any value <= 0): no bucketing (DeBERTa v1).
    like : NumPy array, torch tensor or None
        A tensor gives a tensor on its device; otherwise NumPy.

    Returns
    -------
    integer array of shape (q_len, k_len), int64
        transformers returns shape ``(1, q_len, k_len)``; this drops the leading 1.

    Raises
    ------
    TypeError, ValueError
        As :func:`deberta_log_bucket`; ``q_len``/``k_len`` not a non-negative int;
        ``like`` not an array.

    Examples
    --------
    >>> import posenc
    >>> posenc.deberta_relative_positions(3, 4)
    array([[ 0, -1, -2, -3],
           [ 1,  0, -1, -2],
           [ 2,  1,  0, -1]])
    """
    q_len = check_count(_count(q_len, "q_len"), name="q_len")
    k_len = check_count(_count(k_len, "k_len"), name="k_len")
    if like is not None and not isinstance(like, np.ndarray) and not is_torch(like):
        raise TypeError(
            f"like must be a NumPy array, a torch tensor or None, got {_describe(like)}"
        )
    _check_buckets(bucket_size, max_position)
    if is_torch(like):
        torch = sys.modules["torch"]
        dev = like.device  # type: ignore[union-attr]
        rel = torch.arange(q_len, device=dev)[:, None] - torch.arange(k_len, device=dev)[None, :]
    else:
        rel = np.arange(q_len)[:, None] - np.arange(k_len)[None, :]
    return deberta_log_bucket(rel, bucket_size, max_position)


def _count(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be a non-negative integer, got {_describe(value)}")
    value = int(value)
    if value < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {value}")
    return value


def _check_float(x: Any, *, name: str, torch_in: bool, device: Any = None) -> Any:
    if is_torch(x) != torch_in:
        lib = "torch tensor" if torch_in else "NumPy array"
        raise TypeError(f"{name} must be a {lib} like query, got {_describe(x)}")
    if torch_in:
        if not x.is_floating_point():
            raise TypeError(f"{name} must be a floating tensor, got {_describe(x)}")
        if device is not None and x.device != device:
            raise ValueError(f"{name} must be on query's device {device}, got {x.device}")
    else:
        if not isinstance(x, np.ndarray) or x.dtype.kind != "f":
            raise TypeError(f"{name} must be a floating NumPy array, got {_describe(x)}")
    if x.ndim < 2:
        raise ValueError(f"{name} must have shape (..., rows, dim), got {tuple(x.shape)}")
    return x


@overload
def deberta_disentangled_bias(
    query: Tensor,
    key: Tensor,
    relative_position: Tensor,
    *,
    pos_key: Tensor | None = ...,
    pos_query: Tensor | None = ...,
    scale_factor: int | None = ...,
) -> Tensor: ...
@overload
def deberta_disentangled_bias(
    query: FloatArray,
    key: FloatArray,
    relative_position: ArrayLike,
    *,
    pos_key: FloatArray | None = ...,
    pos_query: FloatArray | None = ...,
    scale_factor: int | None = ...,
) -> FloatArray: ...
def deberta_disentangled_bias(
    query: Tensor | FloatArray,
    key: Tensor | FloatArray,
    relative_position: Tensor | ArrayLike,
    *,
    pos_key: Tensor | FloatArray | None = None,
    pos_query: Tensor | FloatArray | None = None,
    scale_factor: int | None = None,
) -> Tensor | FloatArray:
    """DeBERTa's c2p + p2c attention bias, scaled as in transformers. Experimental.

    Equal to ``DisentangledSelfAttention.disentangled_attention_bias`` of Hugging Face
    transformers' ``deberta_v2`` (He et al., 2020, arXiv:2006.03654), given the projected
    relative embeddings: ``pos_key = rel_embeddings @ W_k_r`` (``pos_key_proj``, or ``key_proj``
    with ``share_att_key``) and ``pos_query = rel_embeddings @ W_q_r`` (``pos_query_proj`` or
    ``query_proj``), split into heads like ``query``. Add the result to
    ``query @ key.T / sqrt(dim * scale_factor)`` to get DeBERTa's attention scores.

    Parameters
    ----------
    query : float array of shape (..., q_len, dim)
        Content queries of each head (NumPy array or torch tensor; ``key`` and the ``pos_*``
        arrays of the same library).
    key : float array of shape (..., k_len, dim)
        Content keys.
    relative_position : integer array of shape (..., q_len, k_len)
        From :func:`deberta_relative_positions`. Entries are clamped to ``-span .. span - 1``
        with ``span = pos_key.shape[-2] // 2``.
    pos_key : float array of shape (..., 2 * span, dim) or None
        Projected relative embeddings for the c2p term; None leaves c2p out.
    pos_query : float array of shape (..., 2 * span, dim) or None
        Projected relative embeddings for the p2c term; None leaves p2c out. Needs
        ``q_len == k_len`` (transformers' p2c breaks otherwise).
    scale_factor : int or None
        Divide each term by ``sqrt(dim * scale_factor)``. None: ``1 +`` the number of terms
        given (3 with both), as transformers. The square root is taken in float32, as there.

    Returns
    -------
    float array of shape (..., q_len, k_len)
        ``c2p + p2c``, in the library and dtype of ``query @ pos.T``.

    Raises
    ------
    TypeError
        Wrong kinds (integer arrays, mixed libraries, non-integer ``scale_factor``).
    ValueError
        Neither ``pos_key`` nor ``pos_query``, mismatched shapes, odd or zero rows in ``pos_*``,
        ``pos_query`` with ``q_len != k_len``, ``scale_factor`` < 1.

    Notes
    -----
    With ``idx(i, j) = clamp(delta(i, j) + span, 0, 2 span - 1)``::

        c2p[i, j] = query[i] . pos_key[idx(i, j)]
        p2c[i, j] = key[j] . pos_query[idx(i, j)]

    The paper writes ``delta(j, i)`` in p2c; transformers (like Microsoft's code) reads
    ``delta(i, j)``, and so does this function.

    Examples
    --------
    >>> import numpy as np
    >>> import posenc
    >>> rng = np.random.default_rng(0)
    >>> q, k = rng.normal(size=(2, 5, 4))
    >>> pos = rng.normal(size=(8, 4))  # span 4: distances -4 .. 3
    >>> rel = posenc.deberta_relative_positions(5, 5)
    >>> posenc.deberta_disentangled_bias(q, k, rel, pos_key=pos, pos_query=pos).shape
    (5, 5)
    """
    torch_in = is_torch(query)
    query = _check_float(query, name="query", torch_in=torch_in)
    device = query.device if torch_in else None
    key = _check_float(key, name="key", torch_in=torch_in, device=device)
    dim = query.shape[-1]
    if key.shape[-1] != dim:
        raise ValueError(f"key must have dim {dim} like query, got shape {tuple(key.shape)}")
    if pos_key is None and pos_query is None:
        raise ValueError("pos_key and pos_query are both None: give at least one (c2p or p2c)")
    span = None
    for name, pos in (("pos_key", pos_key), ("pos_query", pos_query)):
        if pos is None:
            continue
        _check_float(pos, name=name, torch_in=torch_in, device=device)
        rows = pos.shape[-2]
        if pos.shape[-1] != dim or rows == 0 or rows % 2 or (span is not None and rows != 2 * span):
            raise ValueError(
                f"{name} must have shape (..., 2 * span, {dim}) with span > 0 (the same span for "
                f"pos_key and pos_query), got {tuple(pos.shape)}"
            )
        span = rows // 2
    span = int(span or 0)
    rel, rel_torch = _relative(relative_position)
    if rel_torch != torch_in:
        lib = "torch tensor" if torch_in else "NumPy array or list"
        raise TypeError(f"relative_position must be a {lib} like query, got {_describe(rel)}")
    if torch_in and rel.device.type == "meta" and str(device) != "meta":
        raise ValueError(
            f"relative_position is on the meta device (shapes only, no values) but query is on "
            f"{query.device}; build it on query's device"
        )
    q_len, k_len = query.shape[-2], key.shape[-2]
    if rel.ndim < 2 or tuple(rel.shape[-2:]) != (q_len, k_len):
        raise ValueError(
            f"relative_position must have shape (..., {q_len}, {k_len}), got {tuple(rel.shape)}"
        )
    if pos_query is not None and q_len != k_len:
        raise ValueError(
            f"pos_query (p2c) needs query and key of the same length, as in transformers' "
            f"DisentangledSelfAttention, got q_len={q_len}, k_len={k_len}"
        )
    n_terms = (pos_key is not None) + (pos_query is not None)
    if scale_factor is None:
        factor = 1 + n_terms
    else:
        if isinstance(scale_factor, bool) or not isinstance(scale_factor, numbers.Integral):
            raise TypeError(
                f"scale_factor must be a positive integer, got {_describe(scale_factor)}"
            )
        factor = int(scale_factor)
        if not 1 <= factor <= 2**24:
            raise ValueError(f"scale_factor must be an integer in 1 .. 2**24, got {factor}")
    # transformers: torch.sqrt(torch.tensor(dim, dtype=torch.float) * scale_factor), in float32
    scale = _scale(dim, factor)
    if torch_in:
        torch = sys.modules["torch"]
        parts: list[Any] = [query, key, pos_key, pos_query]
        common = query.dtype
        for x in parts[1:]:
            if x is not None:
                common = torch.promote_types(common, x.dtype)
        q, k, pk, pq = (None if x is None else x.to(common) for x in parts)
        return _bias_torch(q, k, rel, pk, pq, span, scale)
    return _bias_numpy(query, key, rel, pos_key, pos_query, span, scale)


@traced_constant
def _scale(dim: int, factor: int) -> float:
    return float(np.sqrt(np.float32(dim) * np.float32(factor)))


def _bias_numpy(q: Any, k: Any, rel: Any, pk: Any, pq: Any, span: int, scale: float) -> Any:
    out: Any = 0
    if pk is not None:
        c2p = q @ np.swapaxes(pk, -1, -2)  # (..., q, 2 span)
        idx = np.clip(rel + span, 0, 2 * span - 1)
        lead = np.broadcast_shapes(c2p.shape[:-2], idx.shape[:-2])
        c2p = np.broadcast_to(c2p, (*lead, *c2p.shape[-2:]))
        idx = np.broadcast_to(idx, (*lead, *idx.shape[-2:]))
        out = out + np.take_along_axis(c2p, idx, axis=-1) / c2p.dtype.type(scale)
    if pq is not None:
        p2c = k @ np.swapaxes(pq, -1, -2)  # (..., k, 2 span)
        idx = np.clip(-rel + span, 0, 2 * span - 1)
        lead = np.broadcast_shapes(p2c.shape[:-2], idx.shape[:-2])
        p2c = np.broadcast_to(p2c, (*lead, *p2c.shape[-2:]))
        idx = np.broadcast_to(idx, (*lead, *idx.shape[-2:]))
        term = np.swapaxes(np.take_along_axis(p2c, idx, axis=-1), -1, -2)
        out = out + term / p2c.dtype.type(scale)
    return np.asarray(out)


def _bias_torch(q: Any, k: Any, rel: Any, pk: Any, pq: Any, span: int, scale: float) -> Any:
    torch = sys.modules["torch"]
    rel = rel.to(q.device)
    out: Any = 0
    if pk is not None:
        c2p = q @ pk.transpose(-1, -2)  # (..., q, 2 span)
        idx = torch.clamp(rel + span, 0, 2 * span - 1)
        lead = torch.broadcast_shapes(c2p.shape[:-2], idx.shape[:-2])
        c2p = c2p.expand(*lead, *c2p.shape[-2:])
        idx = idx.expand(*lead, *idx.shape[-2:])
        out = out + torch.gather(c2p, -1, idx) / torch.tensor(
            scale, dtype=c2p.dtype, device=c2p.device
        )
    if pq is not None:
        p2c = k @ pq.transpose(-1, -2)  # (..., k, 2 span)
        idx = torch.clamp(-rel + span, 0, 2 * span - 1)
        lead = torch.broadcast_shapes(p2c.shape[:-2], idx.shape[:-2])
        p2c = p2c.expand(*lead, *p2c.shape[-2:])
        idx = idx.expand(*lead, *idx.shape[-2:])
        term = torch.gather(p2c, -1, idx).transpose(-1, -2)
        out = out + term / torch.tensor(scale, dtype=p2c.dtype, device=p2c.device)
    return out

"""ALiBi: attention with linear biases (Press et al., 2021).

No vector is added to the tokens. Each head ``h`` adds ``-m_h * (i - j)`` to the score of query
``i`` against key ``j``: a penalty that grows linearly with the distance, with a fixed slope
``m_h`` per head taken from a geometric sequence.
"""

from __future__ import annotations

import math
import numbers
import sys
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from ._array import MAX_COUNT, _describe, check_dim, check_length, check_scalar, like_spec
from ._typing import DTypeLike, FloatArray

if TYPE_CHECKING:
    from ._typing import Tensor, TorchDType

# Past 2**53 float64 does not hold every position, and the distances here are float64.
_MAX_POSITION = MAX_COUNT
# Entries of the (n_heads, q_len, k_len) bias an array can hold at 8 bytes each.
_MAX_ENTRIES = 2**60

__all__ = ["alibi_bias", "alibi_slopes"]


def alibi_slopes(n_heads: int, *, max_bias: float = 8.0) -> FloatArray:
    """Per-head ALiBi slopes (Press et al., 2021).

    Parameters
    ----------
    n_heads : int
        Number of attention heads, a positive integer.
    max_bias : float, default 8.0
        The exponent range: for a power of two ``n`` the slopes are ``2 ** (-max_bias * i / n)``,
        ``i = 1 .. n``. The paper fixes 8; MPT calls it ``alibi_bias_max``.

    Returns
    -------
    numpy.ndarray of shape (n_heads,), float64
        Head ``h``'s slope at index ``h``. Decreasing for a power of two; otherwise the extra
        slopes come last and fall between the first ones (see Notes).

    Raises
    ------
    TypeError
        ``n_heads`` not an integer; ``max_bias`` not a real number.
    ValueError
        ``n_heads`` <= 0 or above ``2**53``; ``max_bias`` not finite or <= 0.

    See Also
    --------
    alibi_bias : the bias these slopes scale.

    Notes
    -----
    For ``n`` a power of two, ``m_i = 2 ** (-max_bias * i / n)`` for ``i = 1 .. n``. Otherwise,
    with ``c`` the largest power of two below ``n``: the ``c`` slopes for ``c`` heads, then the
    first ``n - c`` of every other slope of the ``2c`` sequence (those with odd ``i``:
    ``2 ** (-max_bias * i / (2c))``, ``i = 1, 3, 5, ...``). This is the paper's reference code, and
    equals the slopes of BLOOM's ``build_alibi_tensor`` and of MPT's ``build_mpt_alibi_tensor``
    with ``alibi_bias_max = max_bias`` (MPT starts from the next power of two up and takes its
    even-indexed slopes, then the odd-indexed ones: a different route to the same numbers). Both
    compute in float32, so they agree with these to float32 rounding.

    References
    ----------
    Press, Smith and Lewis, "Train Short, Test Long: Attention with Linear Biases Enables Input
    Length Extrapolation", arXiv:2108.12409.

    Examples
    --------
    >>> import numpy as np
    >>> import posenc
    >>> posenc.alibi_slopes(8)
    array([0.5       , 0.25      , 0.125     , 0.0625    , 0.03125   , 0.015625  ,
           0.0078125 , 0.00390625])
    >>> np.round(posenc.alibi_slopes(6), 4)
    array([0.25  , 0.0625, 0.0156, 0.0039, 0.5   , 0.125 ])
    """
    n = check_dim(n_heads, name="n_heads", even=False)
    if n > MAX_COUNT:
        raise ValueError(f"n_heads must be a positive integer <= 2**53, got {n}")
    max_bias = check_scalar(max_bias, name="max_bias")
    if max_bias <= 0:
        raise ValueError(f"max_bias must be a finite real number > 0, got {max_bias}")
    c = 1 << (n.bit_length() - 1)  # largest power of two <= n
    slopes = _power_of_two_slopes(c, max_bias)
    if c != n:
        extra = _power_of_two_slopes(2 * c, max_bias)[0::2][: n - c]
        slopes = np.concatenate([slopes, extra])
    return slopes


# torch.compile / torch.export: the slopes depend only on these Python arguments, so the tracer
# may call the function as it is and keep its result as a constant, instead of tracing its NumPy
# arithmetic as tensor ops (which fails under torch.set_default_device). This is the flag that
# torch.compiler.assume_constant_result sets; set here so that importing posenc never imports torch.
alibi_slopes._dynamo_marked_constant = True  # type: ignore[attr-defined]


def _power_of_two_slopes(n: int, max_bias: float) -> FloatArray:
    return np.exp2(-max_bias * np.arange(1, n + 1, dtype=np.float64) / n)


@overload
def alibi_bias(
    q_len: int,
    k_len: int,
    n_heads: int,
    *,
    causal: bool = ...,
    offset: int | None = ...,
    max_bias: float = ...,
    rounding: str | None = ...,
    like: Tensor,
    dtype: TorchDType | None = ...,
) -> Tensor: ...
@overload
def alibi_bias(
    q_len: int,
    k_len: int,
    n_heads: int,
    *,
    causal: bool = ...,
    offset: int | None = ...,
    max_bias: float = ...,
    rounding: str | None = ...,
    like: np.ndarray[Any, Any] | None = ...,
    dtype: DTypeLike = ...,
) -> FloatArray: ...
def alibi_bias(
    q_len: int,
    k_len: int,
    n_heads: int,
    *,
    causal: bool = True,
    offset: int | None = None,
    max_bias: float = 8.0,
    rounding: str | None = None,
    like: Tensor | np.ndarray[Any, Any] | None = None,
    dtype: Any = None,
) -> Tensor | FloatArray:
    """ALiBi attention bias for every head, query and key (Press et al., 2021).

    Parameters
    ----------
    q_len : int
        Number of queries (0 to ``2**53``).
    k_len : int
        Number of keys (0 to ``2**53``).
    n_heads : int
        Number of heads (see :func:`alibi_slopes`).
    causal : bool, default True
        ``True``: ``-m_h * (i - j)`` for keys at or before the query and ``-inf`` for future keys
        (the paper's decoder). ``False``: ``-m_h * |i - j|`` for every key, a symmetric penalty
        for encoders (an extension; the paper treats causal language models only).
    offset : int, optional
        Position of query 0 among the keys: query ``i`` sits at position ``offset + i``, key ``j``
        at position ``j``. Default ``k_len - q_len``: the queries are the last ``q_len`` of the
        keys, as when decoding with a KV cache. A causal row whose query precedes every key is
        all ``-inf`` (its softmax is undefined). The query positions ``offset .. offset + q_len
        - 1`` must lie within ``[-2**53, 2**53]``, where float64 holds every position.
    max_bias : float, default 8.0
        Passed to :func:`alibi_slopes`.
    rounding : {None, "bfloat16"}, default None
        None: exact (float64). ``"bfloat16"``: Falcon's bias as transformers computes it
        (``build_alibi_tensor`` of ``models/falcon``, 5.24): the slope and the position are each
        rounded to bfloat16, and so is their product, ``A_h(p) = bf16(bf16(m_h) * bf16(p))``
        (round to nearest even, through float32 as torch casts); the bias is
        ``A_h(j) - A_h(offset + i)``, the model's per-key bias ``A_h(j)`` less a constant per
        query row, which the softmax cancels. Positions past 256 then move in steps of 2 or
        more (bfloat16 keeps 8 significant bits).
    like : numpy.ndarray or torch.Tensor, optional
        Chooses the output library and device (and the dtype, when ``like`` is floating). Default:
        NumPy.
    dtype : floating dtype, optional
        Output dtype, overriding ``like``'s. Default float64 for NumPy,
        ``torch.get_default_dtype()`` for a tensor ``like`` that is not floating.

    Returns
    -------
    array of shape (n_heads, q_len, k_len)
        Add it to the attention scores (before the softmax), broadcast over the batch.

    Raises
    ------
    TypeError
        A length or ``offset`` not an integer, ``causal`` not a bool, ``like`` not an array,
        ``dtype`` not floating, ``rounding`` not a string or None.
    ValueError
        ``rounding`` not ``"bfloat16"``,
        a negative length, ``n_heads`` <= 0, ``max_bias`` <= 0, a length or query position past
        ``2**53``, a bias of more than ``2**60`` entries.

    See Also
    --------
    alibi_slopes : the ``m_h``.

    Notes
    -----
    ``bias[h, i, j] = -m_h * (offset + i - j)`` when ``offset + i >= j``, else ``-inf`` (causal);
    ``-m_h * |offset + i - j|`` (``causal=False``). The bias of a query on itself is 0.
    BLOOM and MPT add ``m_h * j`` or ``m_h * (j - (k_len - 1))`` instead (and mask future keys
    separately): the same bias plus a constant per query row, which the softmax cancels.

    References
    ----------
    Press, Smith and Lewis, arXiv:2108.12409.

    Examples
    --------
    >>> import numpy as np
    >>> import posenc
    >>> np.round(posenc.alibi_bias(3, 3, 2), 4)
    array([[[ 0.    ,   -inf,   -inf],
            [-0.0625,  0.    ,   -inf],
            [-0.125 , -0.0625,  0.    ]],
    <BLANKLINE>
           [[ 0.    ,   -inf,   -inf],
            [-0.0039,  0.    ,   -inf],
            [-0.0078, -0.0039,  0.    ]]])
    >>> np.round(posenc.alibi_bias(1, 5, 1), 4)   # one new query after 4 cached keys
    array([[[-0.0156, -0.0117, -0.0078, -0.0039,  0.    ]]])
    >>> posenc.alibi_bias(2, 4, 8, causal=False).shape
    (8, 2, 4)
    >>> import torch
    >>> scores = torch.zeros(2, 8, 4, 4)                 # (batch, heads, queries, keys)
    >>> bias = posenc.alibi_bias(4, 4, 8, like=scores)   # scores' device and dtype
    >>> tuple(bias.shape), bias.dtype
    ((8, 4, 4), torch.float32)
    """
    q_len = _length(q_len, "q_len")
    k_len = _length(k_len, "k_len")
    # checked first (plain Python values), so torch.compile calls alibi_slopes as a constant
    n_heads = check_dim(n_heads, name="n_heads", even=False)
    slopes = alibi_slopes(n_heads, max_bias=check_scalar(max_bias, name="max_bias"))
    if not isinstance(causal, (bool, np.bool_)):
        raise TypeError(f"causal must be a bool, got {_describe(causal)}")
    if offset is None:
        offset = k_len - q_len
    elif isinstance(offset, bool) or not isinstance(offset, numbers.Integral):
        raise TypeError(f"offset must be an integer or None, got {_describe(offset)}")
    offset = int(offset)
    if not -_MAX_POSITION <= offset <= _MAX_POSITION - max(q_len - 1, 0):
        raise ValueError(
            f"offset must keep the query positions offset .. offset + q_len - 1 within "
            f"[-2**53, 2**53] (float64 holds every position there), got offset={offset} with "
            f"q_len={q_len}"
        )
    if rounding is not None and not isinstance(rounding, str):
        raise TypeError(f"rounding must be None or 'bfloat16', got {_describe(rounding)}")
    if rounding is not None and rounding != "bfloat16":
        raise ValueError(f"rounding must be None or 'bfloat16', got {rounding!r}")
    if n_heads * q_len * k_len > _MAX_ENTRIES:  # n_heads, not len(slopes): no traced NumPy
        raise ValueError(
            f"alibi_bias would have n_heads * q_len * k_len = {n_heads} * {q_len} * {k_len} "
            "entries, more than an array can hold (2**60); pass smaller q_len, k_len or n_heads"
        )
    torch_out, device, out_dtype = like_spec(like, dtype)
    if rounding is not None:
        # Falcon: A_h(p) = bf16(bf16(m_h) * bf16(p)); the bias A_h(j) - A_h(query position)
        m = _bf16(slopes)[:, None]
        a_q = _bf16(m * _bf16(np.arange(q_len, dtype=np.float64) + offset))  # (h, q)
        a_k = _bf16(m * _bf16(np.arange(k_len, dtype=np.float64)))  # (h, k)
        gap = a_q[:, :, None] - a_k[:, None, :]  # >= 0 for keys at or before the query
        d = (np.arange(q_len, dtype=np.float64) + offset)[:, None] - np.arange(k_len)
        if causal:
            out = np.where(d >= 0, 0.0 - gap, -np.inf)
        else:
            out = 0.0 - np.abs(gap)
        if torch_out:
            torch = sys.modules["torch"]
            return torch.as_tensor(out, device=device).to(out_dtype)
        return out.astype(out_dtype, copy=False)
    if torch_out:
        torch = sys.modules["torch"]
        i = torch.arange(q_len, dtype=torch.float64, device=device)
        j = torch.arange(k_len, dtype=torch.float64, device=device)
        d = (i + offset)[:, None] - j[None, :]  # (q, k): query position minus key position
        m = torch.as_tensor(slopes, dtype=torch.float64, device=device)[:, None, None]
        if causal:
            bias = torch.where(d >= 0, m * (0.0 - d), -math.inf)
        else:
            bias = m * (0.0 - d.abs())
        return bias.to(out_dtype)
    d = (np.arange(q_len, dtype=np.float64) + offset)[:, None] - np.arange(k_len, dtype=np.float64)
    m = slopes[:, None, None]
    if causal:
        bias = np.where(d >= 0, m * (0.0 - d), -np.inf)  # 0.0 - d: no -0.0 on the diagonal
    else:
        bias = m * (0.0 - np.abs(d))
    return bias.astype(out_dtype, copy=False)


def _bf16(x: FloatArray) -> FloatArray:
    """``x`` rounded to bfloat16 (to nearest, ties to even) through float32, as torch casts a
    float32 result or an integer to bfloat16; float64 out."""
    bits = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    half = np.uint64(0x7FFF) + ((bits >> np.uint64(16)) & np.uint64(1))
    kept = (bits + half) & np.uint64(0xFFFF0000)
    return kept.astype(np.uint32).view(np.float32).astype(np.float64)


def _length(value: Any, name: str) -> int:
    """A length in ``0 .. 2**53``."""
    n = check_length(value, name=name)
    if n > _MAX_POSITION:
        raise ValueError(f"{name} must be a non-negative integer <= 2**53, got {n}")
    return n

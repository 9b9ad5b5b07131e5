"""Drop-ins named after the framework functions they reproduce, same signature, same values.

Use ``posenc.compat.<name>``; the module is not star-imported into :mod:`posenc`. Each table
comes back as a NumPy array in the original's dtype (``torch.from_numpy`` gives the tensor the
PyTorch originals return); ``fairseq_make_positions`` follows its input's library and device.

Precision: the PyTorch and TensorFlow originals form their angles in float32, which puts an
error of up to about ``position * 1e-7`` in their tables (6e-5 at position 1000). These drop-ins
form every angle in float64 and round once, so they hold the exact formula to the output
dtype's rounding, and agree with the originals to within the originals' own float32 error. The
NumPy originals (MAE, Hugging Face Marian) are reproduced operation for operation.
"""

from __future__ import annotations

import math
import numbers
import sys
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from ._array import MAX_COUNT, _describe, check_dim, check_length, check_scalar, is_torch
from ._typing import ArrayLike, FloatArray, IntArray

if TYPE_CHECKING:
    from ._typing import Tensor

# Sizes and positions: at most 2**53 (past it float64 does not hold every position); tables at
# most 2**60 entries (what an array of 8-byte numbers can hold).
_MAX_ENTRIES = 2**60

__all__ = [
    "fairseq_make_positions",
    "fairseq_sinusoidal_embedding",
    "mae_2d_sincos_pos_embed",
    "marian_sinusoidal_weight",
    "tensor2tensor_timing_signal_1d",
    "whisper_sinusoids",
]


def tensor2tensor_timing_signal_1d(
    length: int,
    channels: int,
    min_timescale: float = 1.0,
    max_timescale: float = 1.0e4,
    start_index: int = 0,
) -> FloatArray:
    """tensor2tensor's ``get_timing_signal_1d`` (``common_attention.py``), as a NumPy array.

    Parameters
    ----------
    length : int
        Number of positions (>= 0).
    channels : int
        Signal width (>= 1). An odd width gets a zero channel at the end.
    min_timescale : float, default 1.0
        Shortest timescale (the fastest wave: ``2 pi min_timescale`` positions per turn).
    max_timescale : float, default 1.0e4
        Longest timescale.
    start_index : int, default 0
        Position of the first row. The positions ``start_index .. start_index + length - 1``
        must lie within ``[-2**53, 2**53]``.

    Returns
    -------
    numpy.ndarray of shape (1, length, channels), float32

    Raises
    ------
    TypeError, ValueError
        A size or ``start_index`` not a (non-negative) integer, a timescale not a positive
        finite number, a size or position past ``2**53``, a table of more than ``2**60``
        entries.

    Notes
    -----
    With ``n = channels // 2`` timescales and ``p = start_index + t``::

        inv[k] = min_timescale * exp(-k * log(max_timescale / min_timescale) / max(n - 1, 1))
        signal[0, t] = [sin(p inv[0]), ..., sin(p inv[n-1]), cos(p inv[0]), ..., cos(p inv[n-1])]

    All sines, then all cosines (the halves layout). The ladder spans ``[min, max]`` inclusive:
    its ``n - 1`` steps differ from the paper's ``10000 ** (-2k / d)`` (``n`` steps, ``max``
    never reached).

    Examples
    --------
    >>> import numpy as np
    >>> from posenc import compat
    >>> sig = compat.tensor2tensor_timing_signal_1d(3, 5)
    >>> sig.shape, sig.dtype
    ((1, 3, 5), dtype('float32'))
    >>> np.round(sig[0, 1].astype(np.float64), 3)
    array([0.841, 0.   , 0.54 , 1.   , 0.   ])
    """
    length = _size(length, "length")
    channels = _size(check_dim(channels, name="channels", even=False), "channels")
    _table_size(length, channels, "length", "channels")
    lo = _positive(min_timescale, "min_timescale")
    hi = _positive(max_timescale, "max_timescale")
    start = _integer(start_index, "start_index")
    if not -MAX_COUNT <= start <= MAX_COUNT - max(length - 1, 0):
        raise ValueError(
            f"start_index must keep the positions start_index .. start_index + length - 1 within "
            f"[-2**53, 2**53] (float64 holds every position there), got start_index={start} "
            f"with length={length}"
        )
    n = channels // 2
    increment = math.log(hi / lo) / max(n - 1, 1)
    inv = lo * np.exp(np.arange(n, dtype=np.float64) * -increment)
    positions = np.arange(length, dtype=np.float64) + start
    table = _halves(positions, inv, channels)  # (length, channels)
    return table.astype(np.float32)[None]


@overload
def whisper_sinusoids(
    length: int, channels: int, max_timescale: float = ..., *, like: Tensor
) -> Tensor: ...
@overload
def whisper_sinusoids(
    length: int, channels: int, max_timescale: float = ..., *, like: None = ...
) -> FloatArray: ...
def whisper_sinusoids(
    length: int, channels: int, max_timescale: float = 10000, *, like: Tensor | None = None
) -> Tensor | FloatArray:
    """Whisper's ``sinusoids`` (``WhisperEncoder.embed_positions``). Experimental.

    :func:`tensor2tensor_timing_signal_1d` under another name: ``inv[k] = exp(-k log(max) /
    (channels/2 - 1))``, rows ``[sin(p inv), cos(p inv)]``, as a ``(length, channels)`` float32
    table. Default: a NumPy array, exact to float32 (angles in float64, rounded once). With
    ``like`` a torch tensor: the original's float32 operations with torch on ``like``'s device,
    equal bit for bit to transformers' ``models.whisper.modeling_whisper.sinusoids`` (whose
    float32 angles are off by up to ``1e-4`` at position 1500). Whisper: arXiv:2212.04356.

    Parameters
    ----------
    length : int
        Rows (``>= 0``).
    channels : int
        Width, even and ``>= 4`` (Whisper divides by ``channels // 2 - 1``).
    max_timescale : float, default 10000
        Longest timescale, a finite number > 0.
    like : torch.Tensor, optional
        Build with torch on its device, operation for operation (any dtype; the result is float32).

    Examples
    --------
    >>> import numpy as np
    >>> from posenc import compat
    >>> np.round(compat.whisper_sinusoids(2, 4).astype(np.float64), 3)
    array([[0.   , 0.   , 1.   , 1.   ],
           [0.841, 0.   , 0.54 , 1.   ]])
    """
    rows = _size(length, "length")
    dim = _size(check_dim(channels, name="channels"), "channels")
    if dim < 4:
        raise ValueError(
            f"channels must be an even integer >= 4 (Whisper divides by channels/2 - 1), got {dim}"
        )
    _table_size(rows, dim, "length", "channels")
    increment = math.log(_positive(max_timescale, "max_timescale")) / (dim // 2 - 1)
    if like is None:
        inv = np.exp(np.arange(dim // 2, dtype=np.float64) * -increment)
        out: FloatArray = _halves(np.arange(rows, dtype=np.float64), inv, dim).astype(np.float32)
        return out
    if not is_torch(like):
        raise TypeError(f"like must be a torch tensor or None, got {_describe(like)}")
    torch = sys.modules["torch"]
    f32, dev = torch.float32, like.device
    inv_t = torch.exp(-increment * torch.arange(dim // 2, device=dev).to(f32))
    scaled = torch.arange(rows, device=dev).view(-1, 1).to(f32) * inv_t.view(1, -1)
    return torch.cat([scaled.sin(), scaled.cos()], dim=1)


def fairseq_sinusoidal_embedding(
    num_embeddings: int, embedding_dim: int, padding_idx: int | None = None
) -> FloatArray:
    """fairseq's ``SinusoidalPositionalEmbedding.get_embedding``, as a NumPy array.

    Also Hugging Face's port of it (``M2M100SinusoidalPositionalEmbedding.get_embedding``,
    XGLM, NLLB-MoE, Speech2Text, ...).

    Parameters
    ----------
    num_embeddings : int
        Rows (positions ``0 .. num_embeddings - 1``), >= 0.
    embedding_dim : int
        Width, >= 4 (fairseq divides by ``embedding_dim // 2 - 1``). An odd width gets a zero
        column at the end.
    padding_idx : int, optional
        A row set to zeros (negative counts from the end, as in indexing).

    Returns
    -------
    numpy.ndarray of shape (num_embeddings, embedding_dim), float32

    Raises
    ------
    TypeError, ValueError
        A size not an integer or too small, ``padding_idx`` not an integer row index.

    Notes
    -----
    With ``h = embedding_dim // 2``:
    ``E[p] = [sin(p w_0), ..., sin(p w_{h-1}), cos(p w_0), ..., cos(p w_{h-1})]``,
    ``w_k = exp(-k log(10000) / (h - 1))``: the halves layout, and a ladder from 1 down to exactly
    1/10000 (the paper stops at ``10000 ** (-(d-2)/d)``). fairseq's models start counting at
    ``padding_idx + 1`` (see :func:`fairseq_make_positions`), so their row 0 is never used by a
    token.

    Examples
    --------
    >>> import numpy as np
    >>> from posenc import compat
    >>> emb = compat.fairseq_sinusoidal_embedding(4, 6, padding_idx=1)
    >>> emb.dtype
    dtype('float32')
    >>> np.round(emb.astype(np.float64), 3)
    array([[ 0.   ,  0.   ,  0.   ,  1.   ,  1.   ,  1.   ],
           [ 0.   ,  0.   ,  0.   ,  0.   ,  0.   ,  0.   ],
           [ 0.909,  0.02 ,  0.   , -0.416,  1.   ,  1.   ],
           [ 0.141,  0.03 ,  0.   , -0.99 ,  1.   ,  1.   ]])
    """
    rows = _size(num_embeddings, "num_embeddings")
    dim = _size(check_dim(embedding_dim, name="embedding_dim", even=False), "embedding_dim")
    if dim < 4:
        raise ValueError(
            f"embedding_dim must be an integer >= 4 (fairseq divides by embedding_dim // 2 - 1), "
            f"got {dim}"
        )
    _table_size(rows, dim, "num_embeddings", "embedding_dim")
    half = dim // 2
    inv = np.exp(np.arange(half, dtype=np.float64) * -(math.log(10000) / (half - 1)))
    table = _halves(np.arange(rows, dtype=np.float64), inv, dim).astype(np.float32)
    if padding_idx is not None:
        idx = _integer(padding_idx, "padding_idx")
        if not -rows <= idx < rows:
            raise ValueError(
                f"padding_idx must index a row of the {rows}-row table "
                f"({-rows} <= padding_idx < {rows}), got {idx}"
            )
        table[idx] = 0
    return table


@overload
def fairseq_make_positions(tokens: Tensor, padding_idx: int, onnx_trace: bool = ...) -> Tensor: ...
@overload
def fairseq_make_positions(
    tokens: ArrayLike, padding_idx: int, onnx_trace: bool = ...
) -> IntArray: ...
def fairseq_make_positions(
    tokens: Tensor | ArrayLike, padding_idx: int, onnx_trace: bool = False
) -> Tensor | IntArray:
    """fairseq's ``utils.make_positions``: position ids that skip padding tokens.

    Parameters
    ----------
    tokens : integer array of shape (batch, seq, ...)
        Token ids, NumPy or torch, any integer dtype (int8 to uint64).
    padding_idx : int
        The padding token id. The largest position, ``padding_idx + seq``, must fit in int64.
        An id outside ``tokens``' dtype matches no token (no wrap-around).
    onnx_trace : bool, default False
        Accepted for fairseq's signature; unused (as in fairseq).

    Returns
    -------
    integer array of tokens' shape, int64
        ``padding_idx`` at every padding token; the ``k``-th non-padding token of a row (counted
        from 1 along axis 1) gets ``padding_idx + k``. In the input's library, on its device.

    Raises
    ------
    TypeError
        ``tokens`` not an integer array, ``padding_idx`` not an integer.
    ValueError
        ``tokens`` with fewer than 2 dimensions, ``padding_idx`` whose positions overflow int64.

    Notes
    -----
    ``positions = cumsum(tokens != padding_idx, axis=1) * (tokens != padding_idx) + padding_idx``.
    Left padding therefore leaves the first real token at ``padding_idx + 1`` whatever the
    padding length. Hugging Face's ``create_position_ids_from_input_ids`` (M2M100, XGLM,
    RoBERTa, ...) is the same with ``past_key_values_length=0``.

    Examples
    --------
    >>> import numpy as np
    >>> from posenc import compat
    >>> tokens = np.array([[1, 1, 5, 6, 7], [5, 6, 7, 8, 1]])  # padding id 1
    >>> compat.fairseq_make_positions(tokens, 1)
    array([[1, 1, 2, 3, 4],
           [2, 3, 4, 5, 1]])
    """
    pad = _integer(padding_idx, "padding_idx")
    if is_torch(tokens):
        torch = sys.modules["torch"]
        tok: Any = tokens
        if tok.is_floating_point() or tok.is_complex() or tok.dtype == torch.bool:
            raise TypeError(f"tokens must be an integer array, got {_describe(tok)}")
        _at_least_2d(tok)
        _pad_fits(pad, tok.shape[1])
        info = torch.iinfo(tok.dtype)
        if info.min <= pad <= info.max:
            mask = (tok != pad).to(torch.int64)
        else:  # torch would wrap pad into the dtype (uint8: -1 == 255); no token can equal it
            mask = torch.ones(tok.shape, dtype=torch.int64, device=tok.device)
        return torch.cumsum(mask, dim=1) * mask + pad
    try:
        arr = np.asarray(tokens)
    except Exception as exc:  # ragged lists and the like
        raise TypeError(f"tokens must be an integer array, got {_describe(tokens)}") from exc
    if arr.dtype.kind not in "iu":
        raise TypeError(f"tokens must be an integer array, got {_describe(arr)}")
    _at_least_2d(arr)
    _pad_fits(pad, arr.shape[1])
    mask = (arr != pad).astype(np.int64)  # NumPy compares out-of-range Python ints exactly
    out: IntArray = np.cumsum(mask, axis=1) * mask + pad
    return out


def marian_sinusoidal_weight(n_pos: int, dim: int) -> FloatArray:
    """Hugging Face ``MarianSinusoidalPositionalEmbedding.create_weight()``, as a NumPy array.

    Parameters
    ----------
    n_pos : int
        Rows (positions ``0 .. n_pos - 1``), >= 0.
    dim : int
        Width, >= 1.

    Returns
    -------
    numpy.ndarray of shape (n_pos, dim), float32
        ``torch.from_numpy`` of it equals the module's weight bit for bit.

    Raises
    ------
    TypeError, ValueError
        A size not a (non-negative / positive) integer.

    Notes
    -----
    The paper's frequencies ``w_i = 10000 ** (-2i / dim)``, all sines then all cosines:
    ``W[p] = [sin(p w_0), ..., sin(p w_{s-1}), cos(p w_0), ..., cos(p w_{dim-s-1})]`` with
    ``s = ceil(dim / 2)``. An odd ``dim`` has one more sine than cosines, and no zero column.
    The angles are ``p / 10000 ** (2 (j // 2) / dim)`` in float64, rounded to float32 once.

    Examples
    --------
    >>> import numpy as np
    >>> from posenc import compat
    >>> np.round(compat.marian_sinusoidal_weight(2, 5).astype(np.float64), 3)
    array([[0.   , 0.   , 0.   , 1.   , 1.   ],
           [0.841, 0.025, 0.001, 0.54 , 1.   ]])
    """
    n_pos = _size(n_pos, "n_pos")
    dim = _size(check_dim(dim, name="dim", even=False), "dim")
    _table_size(n_pos, dim, "n_pos", "dim")
    j = np.arange(dim)
    divisors = np.array([np.power(10000, 2 * (k // 2) / dim) for k in j.tolist()])
    angles = np.arange(n_pos, dtype=np.float64)[:, None] / divisors  # (n_pos, dim)
    sentinel = (dim + 1) // 2
    out = np.empty((n_pos, dim), dtype=np.float32)
    out[:, :sentinel] = np.sin(angles[:, 0::2])
    out[:, sentinel:] = np.cos(angles[:, 1::2])
    return out


def mae_2d_sincos_pos_embed(embed_dim: int, grid_size: int, cls_token: bool = False) -> FloatArray:
    """MAE's ``get_2d_sincos_pos_embed`` (``util/pos_embed.py``): a square patch grid.

    Parameters
    ----------
    embed_dim : int
        Width, a positive multiple of 4.
    grid_size : int
        Patches per side (>= 0).
    cls_token : bool, default False
        Prepend a row of zeros for the class token.

    Returns
    -------
    numpy.ndarray of shape (grid_size ** 2 + cls_token, embed_dim), float64

    Raises
    ------
    TypeError, ValueError
        ``embed_dim`` not a positive multiple of 4, ``grid_size`` not a non-negative integer,
        ``cls_token`` not a bool.

    Notes
    -----
    Row ``1 + y * grid_size + x`` (without the class token: ``y * grid_size + x``) holds
    ``[sin(x w), cos(x w), sin(y w), cos(y w)]``, ``w_k = 10000 ** (-k / (embed_dim // 4))``:
    the column index ``x`` comes first. MAE builds its grid with ``np.meshgrid(grid_w, grid_h)``
    (``xy`` indexing), so the half it calls ``emb_h`` encodes the column. This equals
    ``posenc.sincos_2d(grid_size, grid_size, embed_dim, axes="wh")``.

    Examples
    --------
    >>> import numpy as np
    >>> from posenc import compat
    >>> pe = compat.mae_2d_sincos_pos_embed(8, 2, cls_token=True)
    >>> pe.shape
    (5, 8)
    >>> np.round(pe[2], 4)                       # row 0, column 1
    array([0.8415, 0.01  , 0.5403, 1.    , 0.    , 0.    , 1.    , 1.    ])
    """
    if isinstance(embed_dim, bool) or not isinstance(embed_dim, numbers.Integral):
        raise TypeError(f"embed_dim must be a positive multiple of 4, got {_describe(embed_dim)}")
    embed_dim = int(embed_dim)
    if embed_dim <= 0 or embed_dim % 4:
        raise ValueError(f"embed_dim must be a positive multiple of 4, got {embed_dim}")
    embed_dim = _size(embed_dim, "embed_dim")
    size = _size(grid_size, "grid_size")
    _table_size(size * size, embed_dim, "grid_size ** 2", "embed_dim")
    if not isinstance(cls_token, (bool, np.bool_)):
        raise TypeError(f"cls_token must be a bool, got {_describe(cls_token)}")
    coords = np.arange(size, dtype=np.float32)
    cols, rows = np.meshgrid(coords, coords)  # xy indexing: cols[y, x] = x, rows[y, x] = y
    quarter = embed_dim // 4
    omega = np.arange(quarter, dtype=np.float64)
    omega /= quarter
    omega = 1.0 / 10000**omega  # (embed_dim/4,)
    halves = []
    for grid in (cols, rows):  # column half first: MAE's quirk
        angle = np.einsum("m,d->md", grid.reshape(-1), omega)  # (size**2, embed_dim/4)
        halves += [np.sin(angle), np.cos(angle)]
    pe = np.concatenate(halves, axis=1)
    if cls_token:
        pe = np.concatenate([np.zeros([1, embed_dim]), pe], axis=0)
    return pe


# --- shared pieces ----------------------------------------------------------------------------


def _halves(positions: FloatArray, inv: FloatArray, width: int) -> FloatArray:
    """``[sin(p inv), cos(p inv)]`` then zero columns up to ``width``; float64."""
    table = np.zeros((len(positions), width))
    angle = positions[:, None] * inv[None, :]  # (rows, n)
    n = len(inv)
    table[:, :n] = np.sin(angle)
    table[:, n : 2 * n] = np.cos(angle)
    return table


def _integer(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {_describe(value)}")
    return int(value)


def _positive(value: Any, name: str) -> float:
    value = check_scalar(value, name=name)
    if value <= 0:
        raise ValueError(f"{name} must be a finite real number > 0, got {value}")
    return value


def _at_least_2d(tokens: Any) -> None:
    if tokens.ndim < 2:
        raise ValueError(
            f"tokens must have shape (batch, seq, ...) (positions count along axis 1), "
            f"got shape {tuple(tokens.shape)}"
        )


def _size(value: Any, name: str) -> int:
    """A size in ``0 .. 2**53`` (``value`` may already be a checked int)."""
    n = check_length(value, name=name)
    if n > MAX_COUNT:
        raise ValueError(f"{name} must be at most 2**53, got {n}")
    return n


def _table_size(rows: int, width: int, rows_name: str, width_name: str) -> None:
    if rows * width > _MAX_ENTRIES:
        raise ValueError(
            f"{rows_name} * {width_name} = {rows} * {width} entries is more than an array can hold "
            "(2**60); pass smaller sizes"
        )


def _pad_fits(pad: int, seq: int) -> None:
    """``padding_idx .. padding_idx + seq`` (the positions) must fit in int64."""
    if not -(2**63) <= pad <= 2**63 - 1 - seq:
        raise ValueError(
            f"padding_idx must keep the positions padding_idx .. padding_idx + seq within int64 "
            f"(seq = {seq}), got {pad}"
        )

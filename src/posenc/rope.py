"""Rotary position embeddings (RoPE; Su et al., 2021), exact at long positions.

RoPE rotates each pair of features of a query or key by an angle ``m * w_i`` that grows with
the position ``m``; the dot product of a rotated query and key then depends on the positions
only through ``m - n``.

Pairings
--------
``pairing="interleaved"`` rotates features ``(0, 1), (2, 3), ...`` (the paper, Meta's Llama
code, GPT-J, RoFormer, ``rotary_embedding_torch``). ``pairing="half"`` rotates ``(i, i + r/2)``
(HF Llama ``rotate_half``, GPT-NeoX). Both use frequency ``w_i`` for pair ``i``; a checkpoint
moves from one to the other by permuting the rows of its q/k projections
(:func:`rope_permutation`). The frequencies and HF's context-extension scalings live in
:mod:`posenc.rope_scaling`; :func:`rope_frequencies` is re-exported here.

Why the angles are exact
------------------------
The common code forms ``position * inv_freq`` in float32: at position 2**20 the angle is
rounded by up to 6e-2 rad, and the output is off by as much. Here every angle is formed in
float64 from the positions as given (never rounded to ``x``'s dtype), cos and sin are taken in
float64 and multiplied by the attention factor, and only then rounded to the working dtype
(float32 for float16/bfloat16/float32 input, float64 for float64 input). The rotation runs in
the working dtype and the result is rounded once to ``x``'s dtype.

Where the float32 bound holds: for ``|position| <= 2**31`` a float32 result is within
``1e-6 * f * max|x|`` of the exact rotation by ``p w_i`` (``f`` the attention factor; ``w_i``
the float64 ladder of :func:`rope_frequencies`). That is the sum of the worst cases: the float64
angle is rounded by at most ``2**-23`` rad below ``2**31`` (as for :func:`posenc.sinusoidal`),
cos/sin by at most 4 float32 units, the rotation by 3; measured at most ``1.9e-7 * max|x|``
anywhere in that range. Past ``2**31`` the float64 angle itself is rounded by up to
``|p| 2**-53`` rad, which no float64 formula avoids: measured ``3.1e-7 * max|x|`` at ``2**32``,
``1.1e-6`` at ``2**34``, ``5.8e-5`` at ``2**40``. float16 / bfloat16 results are within half a
unit of their own rounding plus that float32 error.

Positions against ``x``
-----------------------
``x`` has shape ``(..., seq, dim)``. The last axis of ``positions`` runs along ``x``'s seq axis;
its other axes line up with ``x``'s leading axes *from the left*, and the axes it lacks are
inserted as size 1 just before seq. With ``x`` of shape ``(batch, heads, seq, dim)``:
``(seq,)`` is shared by all, ``(batch, seq)`` is per-batch position ids (HF's ``position_ids``,
read as ``(batch, 1, seq)``), ``(batch, 1, seq)`` and ``(batch, heads, seq)`` are used as they
are. The result must broadcast to ``x.shape[:-1]`` exactly. For a ``(batch, seq, heads, dim)``
layout (Meta's Llama, GPT-J), pass positions of shape ``(batch, seq, 1)`` or ``(1, seq, 1)``:
with as many axes as ``x.shape[:-1]`` the rule is plain broadcasting. Positions with fewer axes
whose last axis has size 1 while seq does not (``(seq, 1)`` against that layout) are refused
rather than silently lined up with the wrong axes.

Only a Python ``int`` is a count (``n`` means ``0 .. n-1``, and must equal seq). Everything
array-like holds positions: a NumPy scalar (what ``ids[1]`` returns), a 0-d array or a 0-d tensor
is one position for every token.
"""

from __future__ import annotations

import numbers
import sys
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from . import _rope_torch
from ._array import (
    _describe,
    as_positions,
    check_base,
    check_choice,
    check_dim,
    is_count,
    is_torch,
)
from ._typing import ArrayLike, FloatArray, IntArray, Pairing, PositionsLike
from .rope_scaling import ROPE_TYPES as ROPE_TYPES  # re-exported for posenc.rope users
from .rope_scaling import _check_width, _positive_int
from .rope_scaling import rope_frequencies as rope_frequencies  # posenc.rope.rope_frequencies
from .sinusoidal import _sin_cos

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ._typing import Tensor

__all__ = ["apply_rope", "rope_permutation"]

PAIRINGS = ("interleaved", "half")


# --- rotation ----------------------------------------------------------------------------------


@overload
def apply_rope(
    x: Tensor,
    positions: Tensor | PositionsLike,
    *,
    base: float = ...,
    pairing: Pairing = ...,
    scaling: Mapping[str, Any] | None = ...,
    rotary_dim: int | None = ...,
    seq_len: int | None = ...,
) -> Tensor: ...
@overload
def apply_rope(
    x: ArrayLike,
    positions: PositionsLike,
    *,
    base: float = ...,
    pairing: Pairing = ...,
    scaling: Mapping[str, Any] | None = ...,
    rotary_dim: int | None = ...,
    seq_len: int | None = ...,
) -> FloatArray: ...
def apply_rope(
    x: Tensor | ArrayLike,
    positions: Tensor | PositionsLike,
    *,
    base: float = 10000.0,
    pairing: Pairing = "interleaved",
    scaling: Mapping[str, Any] | None = None,
    rotary_dim: int | None = None,
    seq_len: int | None = None,
) -> Tensor | FloatArray:
    """Rotate queries or keys by their positions: rotary position embedding (Su et al., 2021).

    Parameters
    ----------
    x : array or tensor of shape (..., seq, dim)
        Queries or keys, floating (NumPy or torch; float16, bfloat16, float32, float64).
    positions : int or array of shape (..., seq)
        Only a Python ``int`` ``n`` is a count: ``0 .. n-1`` (``n`` must equal seq).
        Everything array-like (NumPy, list, or tensor on ``x``'s device) holds the positions:
        any integer dtype (int8 to uint64) or float (fractional positions are valid), negative
        allowed. A NumPy scalar (``ids[1]``), a 0-d array or a 0-d tensor is one position for
        every token. The last axis runs along seq; the other axes line up with ``x``'s leading
        axes from the left, missing ones inserted before seq: for ``x`` of shape
        ``(batch, heads, seq, dim)`` pass ``(seq,)``, ``(batch, seq)`` (per-batch ids),
        ``(batch, 1, seq)`` or ``(batch, heads, seq)``; for ``(batch, seq, heads, dim)`` pass
        ``(batch, seq, 1)``.
    base : float, default 10000.0
        Frequency base (HF ``rope_theta``).
    pairing : {"interleaved", "half"}, default "interleaved"
        ``"interleaved"``: pairs ``(2i, 2i+1)`` (the paper, Meta Llama, GPT-J, RoFormer).
        ``"half"``: pairs ``(i, i + r/2)`` (HF Llama/Mistral/Qwen ``rotate_half``, GPT-NeoX).
    scaling : dict, optional
        HF-style ``rope_scaling``; see :func:`rope_frequencies`. The attention factor of yarn
        and longrope multiplies cos and sin, as HF does.
    rotary_dim : int, optional
        Rotate only the first ``rotary_dim`` features (even); the rest pass through unchanged
        (GPT-J ``rotary_dim``, GPT-NeoX ``rotary_pct * head_dim``). Frequencies are those of
        width ``rotary_dim``. Default: all of ``dim`` (then ``dim`` must be even).
    seq_len : int, optional
        Current sequence length for ``"dynamic"`` and ``"longrope"`` scaling; see
        :func:`rope_frequencies`.

    Returns
    -------
    array or tensor
        Same shape, dtype, library and device as ``x``. Empty ``x`` (a zero-size batch or seq
        axis) gives an empty result, as NumPy broadcasting does.

    Raises
    ------
    TypeError
        ``x`` not a floating array (integer, bool, complex, ragged), positions not real,
        NumPy ``x`` with tensor positions.
    ValueError
        ``x`` with fewer than 2 axes or a zero-width feature axis, positions that do not fit
        ``x``, bad ``rotary_dim``, ``pairing`` or ``scaling``, positions on another device
        than ``x``.

    See Also
    --------
    rope_frequencies : the frequencies and attention factor.
    rope_permutation : converts a checkpoint between the two pairings.
    posenc.torch.RotaryEmbedding : the same with a cos/sin cache.

    Notes
    -----
    For pair ``(a, b)`` with frequency ``w_i`` at position ``m`` (RoFormer eq. 34):
    ``a' = a cos(m w_i) - b sin(m w_i)``, ``b' = a sin(m w_i) + b cos(m w_i)``. Angles are
    formed in float64; the rotation runs in float32 (float64 for float64 input). A float32
    result is within ``1e-6 * f * max|x|`` of the exact rotation for ``|m| <= 2**31`` (``f``
    the attention factor; measured at most ``1.9e-7``); past ``2**31`` the float64 angle itself
    is rounded by ``|m| 2**-53`` rad (``5.8e-5 * max|x|`` at ``2**40``). Under
    ``torch.compile(fullgraph=True)`` and ``torch.export`` it traces without a graph break.
    Under ``torch.func`` transforms (``grad``, ``vjp``, ``jacrev``, ``jacfwd``, ``hessian``,
    ``vmap`` over ``x`` or over the positions, ``functionalize``) it runs in functional ops,
    with cos and sin from the plain float64 angle (as under ``torch.compile``); there, as under
    tracing, float positions are not checked for inf or nan.

    Speed (torch, eager): interleaved pairs take one complex multiply, as Meta's Llama code
    does; half pairs two element-wise ops over ``x``. On Linux a CPU output of 4 MiB or more
    is advised for transparent huge pages, which makes faulting it in several times cheaper
    (most of the time of such a call; the kernel's THP setting decides whether it applies).
    The cos/sin tables of the last CPU call with integer positions (up to 8 MiB) are kept: a
    next call at equal positions (compared value by value) and frequencies takes them, so
    rotating ``q`` and then ``k`` builds them once.

    References
    ----------
    Su et al., "RoFormer: Enhanced Transformer with Rotary Position Embedding",
    arXiv:2104.09864.

    Examples
    --------
    >>> import numpy as np
    >>> import posenc
    >>> x = np.ones((3, 4))
    >>> np.round(posenc.apply_rope(x, 3, base=100.0), 4)
    array([[ 1.    ,  1.    ,  1.    ,  1.    ],
           [-0.3012,  1.3818,  0.8952,  1.0948],
           [-1.3254,  0.4932,  0.7814,  1.1787]])
    >>> q = np.random.default_rng(0).normal(size=(2, 8, 5, 16))   # (batch, heads, seq, dim)
    >>> ids = np.array([[0, 1, 2, 3, 4], [7, 8, 9, 10, 11]])      # (batch, seq)
    >>> posenc.apply_rope(q, ids, pairing="half", rotary_dim=8).shape
    (2, 8, 5, 16)
    """
    pair = check_choice(pairing, name="pairing", choices=PAIRINGS)
    arr, _ = _check_x(x)
    rot = _rotary_dim(rotary_dim, arr.shape[-1])
    # the arguments checked (so plain Python values) first: torch.compile then calls
    # rope_frequencies as it is and keeps its result as a constant (see rope_scaling)
    base, seq_len = check_base(base), None if seq_len is None else _positive_int(seq_len, "seq_len")
    inv_freq, factor = rope_frequencies(rot, base=base, scaling=scaling, seq_len=seq_len)
    pos = _fit_positions(positions, arr)
    out: Tensor | FloatArray
    if is_torch(arr) and _rope_torch.eager(arr, pos):  # cos + i sin straight from the angles
        work = _rope_torch.work_dtype(arr)
        tables = _rope_torch.rope_tables(pos, inv_freq, factor, work, pair)
        out = _rope_torch.rotate(arr, tables, pairing=pair, rot=rot)
        return out
    cos, sin = _cos_sin(pos, inv_freq, factor, dtype=_work_dtype(arr))
    out = _rotate(arr, cos, sin, pairing=pair, rotary_dim=rot)
    return out


def rope_permutation(dim: int, *, inverse: bool = False) -> IntArray:
    """Row permutation of a q/k projection from interleaved to half pairing (Meta -> HF Llama).

    For a per-head projection ``W`` (rows are the head's ``dim`` features), ``W[perm]`` used
    with ``pairing="half"`` gives the same attention scores as ``W`` with
    ``pairing="interleaved"``: ``perm = [0, 2, 4, ..., 1, 3, 5, ...]`` moves pair ``i`` from
    rows ``(2i, 2i+1)`` to rows ``(i, i + dim/2)``, keeping its frequency. This is what
    ``permute`` in HF's ``convert_llama_weights_to_hf.py`` does to every head of ``wq`` and
    ``wk``. The inverse (HF -> Meta, half -> interleaved) is ``np.argsort(perm)``, returned
    with ``inverse=True``.

    Parameters
    ----------
    dim : int
        Head dim (rotated width), a positive even integer (at most ``2**53``).
    inverse : bool, default False
        Return the half -> interleaved permutation instead.

    Returns
    -------
    numpy.ndarray of shape (dim,), int64

    Raises
    ------
    TypeError, ValueError
        ``dim`` not a positive even integer; ``inverse`` not a bool.

    See Also
    --------
    apply_rope : its ``pairing`` argument.

    Notes
    -----
    ``apply_rope(x[..., perm], p, pairing="half") == apply_rope(x, p)[..., perm]``; a shared
    permutation of q and k leaves every dot product unchanged. For a full projection of
    ``n_heads`` heads: ``W.reshape(n_heads, dim, -1)[:, perm].reshape(n_heads * dim, -1)``.

    Examples
    --------
    >>> import posenc
    >>> posenc.rope_permutation(8)
    array([0, 2, 4, 6, 1, 3, 5, 7])
    >>> posenc.rope_permutation(8, inverse=True)
    array([0, 4, 1, 5, 2, 6, 3, 7])
    """
    dim = _check_width(dim, "dim")
    if not isinstance(inverse, (bool, np.bool_)):
        raise TypeError(f"inverse must be a bool, got {inverse!r} ({type(inverse).__name__})")
    perm = np.concatenate([np.arange(0, dim, 2), np.arange(1, dim, 2)]).astype(np.int64)
    return np.argsort(perm).astype(np.int64) if inverse else perm


# --- shared with posenc.torch.RotaryEmbedding (not public) ------------------------------------


def _check_x(x: Any) -> tuple[Any, bool]:
    """``x`` as an array or tensor: floating, at least 2-D, a non-empty last axis."""
    if is_torch(x):
        if not x.is_floating_point():
            raise TypeError(
                f"x must be a floating tensor, got Tensor of dtype {x.dtype} (expected float16, "
                "bfloat16, float32 or float64 of shape (..., seq, dim))"
            )
        shape = tuple(x.shape)
    else:
        if isinstance(x, (numbers.Number, str, bytes)) or x is None:
            raise TypeError(
                f"x must be a floating array of shape (..., seq, dim), got {_describe(x)}"
            )
        try:
            x = np.asarray(x)
        except Exception as exc:  # ragged lists and the like
            raise TypeError(
                f"x must be a floating array of shape (..., seq, dim), got {type(x).__name__} "
                "that is not a rectangular array"
            ) from exc
        if x.dtype.kind != "f":
            raise TypeError(
                f"x must be a floating array of shape (..., seq, dim), got dtype {x.dtype}"
            )
        shape = x.shape
    if len(shape) < 2:
        raise ValueError(f"x must have shape (..., seq, dim), got shape {shape}")
    if shape[-1] == 0:
        raise ValueError(
            f"x must have a non-empty feature axis to rotate (shape (..., seq, dim) with dim >= 2), "
            f"got shape {shape}"
        )
    return x, is_torch(x)


def _rotary_dim(rotary_dim: Any, width: int, *, what: str = "x's last axis") -> int:
    if rotary_dim is None:
        if width % 2:
            raise ValueError(
                f"{what} must be even to rotate all of it, got {width}; pass rotary_dim"
            )
        return int(width)  # under torch.compile(dynamic=True): specialised on the feature width
    rot = check_dim(rotary_dim, name="rotary_dim")
    if rot > width:
        raise ValueError(f"rotary_dim must be <= {what} ({width}), got {rot}")
    return rot


def _fit_positions(positions: Any, x: Any) -> Any:
    """Positions in ``x``'s library and device, shaped to broadcast against ``x.shape[:-1]``.

    Only a Python ``int`` is a count (see :func:`posenc._array.as_positions`); NumPy scalars,
    0-d arrays and 0-d tensors are one position for every token.
    """
    want = tuple(x.shape[:-1])
    if is_count(positions):
        if positions < 0:
            as_positions(positions)  # raises its error for a negative count
        if positions != want[-1]:  # before allocating the count
            raise ValueError(
                f"positions as an int is a count and must equal x's seq axis ({want[-1]}), got {positions}"
            )
        if is_torch(x):  # straight on x's device: no NumPy array for torch.compile to trace
            torch = sys.modules["torch"]
            return torch.arange(positions, device=x.device).reshape((1,) * (len(want) - 1) + (-1,))
        pos, torch_pos = np.arange(positions), False
    elif is_torch(positions) and positions.is_floating_point() and _rope_torch.functorch_active():
        # under torch.func (vmap) a float tensor's values cannot be read: its finiteness test,
        # all as_positions does for one, is skipped, as it is under torch.compile
        pos, torch_pos = positions, True
    else:
        pos, torch_pos = as_positions(positions)
    if torch_pos and not is_torch(x):
        raise TypeError(
            "positions is a torch tensor but x is a NumPy array; pass both from one library"
        )
    if torch_pos and pos.device != x.device:
        raise ValueError(f"positions is on {pos.device} but x is on {x.device}; move one of them")
    shape = tuple(pos.shape)
    if len(shape) > len(want):
        raise ValueError(f"positions of shape {shape} have more axes than x.shape[:-1] = {want}")
    if 0 < len(shape) < len(want) and shape[-1] == 1 and want[-1] != 1:
        # (seq, 1) meant for a (batch, seq, heads, dim) layout would line seq up with batch
        raise ValueError(
            f"positions of shape {shape} have a size-1 last axis, but that axis runs along x's seq "
            f"axis (x.shape = {tuple(x.shape)}); for a (batch, seq, heads, dim) layout pass "
            f"positions with one axis per axis of x.shape[:-1], e.g. shape (1, seq, 1)"
        )
    if shape:
        shape = shape[:-1] + (1,) * (len(want) - len(shape)) + shape[-1:]
    else:
        shape = (1,) * len(want)
    if not all(p in (1, w) for p, w in zip(shape, want, strict=True)):  # broadcasts to want
        raise ValueError(
            f"positions of shape {tuple(pos.shape)} do not fit x of shape {tuple(x.shape)}: the last "
            "axis of positions runs along seq (x's axis -2), its other axes line up with x's leading "
            f"axes from the left; expected e.g. ({want[-1]},) or a shape broadcastable to {want}"
        )
    if is_torch(x):
        torch = sys.modules["torch"]
        if isinstance(pos, np.ndarray):  # torch refuses negative strides (a reversed view)
            pos = np.ascontiguousarray(pos)
        pos = torch.as_tensor(pos, device=x.device)
    return pos.reshape(shape)


def _work_dtype(x: Any) -> Any:
    """The dtype the rotation runs in: float64 for float64 input, else float32."""
    if is_torch(x):
        torch = sys.modules["torch"]
        return torch.float64 if x.dtype == torch.float64 else torch.float32
    return np.dtype(np.float64) if x.dtype.itemsize >= 8 else np.dtype(np.float32)


def _cos_sin(pos: Any, inv_freq: FloatArray, factor: float, dtype: Any = None) -> tuple[Any, Any]:
    """``attention_factor * cos(p w)`` and ``... sin(p w)``, shape ``pos.shape + (r/2,)``.

    Exact to the output dtype (float64 by default): the angles are formed in float64, by the
    anchor-and-rotation method of :func:`posenc.sinusoidal` where positions run in steps.
    """
    if is_torch(pos):
        torch = sys.modules["torch"]
        dtype = torch.float64 if dtype is None else dtype
        if _rope_torch.functorch_active():  # torch.func: functional ops only
            return _rope_torch.cos_sin_functional(pos, inv_freq, factor, dtype)
    else:
        dtype = np.dtype(np.float64) if dtype is None else np.dtype(dtype)
    table = _sin_cos(pos, inv_freq, dtype)  # (..., r): sin, cos interleaved
    sin, cos = table[..., 0::2], table[..., 1::2]
    if factor != 1.0:
        cos, sin = cos * factor, sin * factor
    return cos, sin


def _rotate(
    x: Any, cos: Any, sin: Any, *, pairing: str, rotary_dim: int, tables: Any = None
) -> Any:
    """Rotate the first ``rotary_dim`` features of ``x`` by precomputed cos/sin (any float dtype).

    For torch, ``tables`` (from :func:`posenc._rope_torch.tables`) may be passed in place of a
    second computation of them (q and k sharing one cos/sin).
    """
    rot, half = rotary_dim, rotary_dim // 2
    if is_torch(x):
        if not _rope_torch.eager(x, cos, sin):
            return _rope_torch.rotate_functional(x, cos, sin, pairing=pairing, rot=rot)
        if tables is None:
            tables = _rope_torch.tables(cos, sin, pairing, _rope_torch.work_dtype(x))
        return _rope_torch.rotate(x, tables, pairing=pairing, rot=rot)
    work = np.float64 if x.dtype.itemsize >= 8 else np.float32
    cos, sin = cos.astype(work, copy=False), sin.astype(work, copy=False)
    xr = x[..., :rot].astype(work, copy=False)
    if pairing == "interleaved":
        a, b = xr[..., 0::2], xr[..., 1::2]
        out = np.stack((a * cos - b * sin, a * sin + b * cos), axis=-1).reshape(
            a.shape[:-1] + (rot,)
        )
    else:
        a, b = xr[..., :half], xr[..., half:]
        out = np.concatenate((a * cos - b * sin, a * sin + b * cos), axis=-1)
    out = out.astype(x.dtype, copy=False)
    return out if rot == x.shape[-1] else np.concatenate((out, x[..., rot:]), axis=-1)

"""Multi-axis rotary embeddings of diffusion transformers: FLUX, HunyuanVideo, Wan (N-D RoPE).

Every token carries ``n`` coordinates: (frame, row, column) for a video latent, (index, row,
column) for FLUX's image and text tokens. The head dim is cut into ``n`` blocks of widths
``axes_dim = (d_0, ..., d_{n-1})``; block ``a`` rotates its ``d_a / 2`` pairs by coordinate
``a`` alone, with a ladder of its own, ``w_{a,k} = base ** (-2k / d_a)``, ``k < d_a / 2``. Each
axis thus gets a full range of wavelengths, from ``2 pi`` up to about ``2 pi base``; M-RoPE
(:mod:`posenc.mrope`) instead cuts *one* ladder of ``head_dim / 2`` rungs into bands, so its
first axis gets the fast rungs only.

This is diffusers' ``FluxPosEmbed`` (``axes_dim``, ``theta``), ``HunyuanVideoRotaryPosEmbed``
(``rope_axes_dim``, ``rope_theta``) and ``WanRotaryPosEmbed`` (``t, h, w`` widths
``d - 4 (d // 6)``, ``2 (d // 6)``, ``2 (d // 6)``), all three with adjacent pairs
(``pairing="interleaved"``, diffusers' ``use_real_unbind_dim=-1``). Angles are formed in
float64 from the coordinates as given, as in :func:`posenc.apply_rope`.
"""

from __future__ import annotations

import numbers
import sys
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from ._array import (
    MAX_COUNT,
    _describe,
    as_positions,
    check_base,
    check_choice,
    check_memory,
    is_torch,
    like_spec,
    traced_constant,
)
from .rope import PAIRINGS, _check_x, _rotate, _work_dtype

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ._typing import ArrayLike, FloatArray, IntArray, Pairing, Tensor

__all__ = ["rope_axes_frequencies", "apply_rope_axes", "rope_grid_positions"]

MAX_AXES = 16  # far past any model (FLUX, HunyuanVideo, Wan: 3); refused by name past it


def _axes_dim(axes_dim: Any) -> tuple[int, ...]:
    """``axes_dim`` as a tuple of positive even ints (at least one)."""
    if isinstance(axes_dim, (str, bytes)) or not hasattr(axes_dim, "__len__"):
        raise TypeError(
            f"axes_dim must be a sequence of positive even ints (one width per axis), got "
            f"{_describe(axes_dim)}"
        )
    if hasattr(axes_dim, "tolist"):  # a NumPy array or a tensor
        axes_dim = axes_dim.tolist()
    dims = list(axes_dim)
    if not 1 <= len(dims) <= MAX_AXES:
        raise ValueError(f"axes_dim must hold 1 to {MAX_AXES} widths, got {len(dims)}: {dims}")
    for d in dims:
        if isinstance(d, bool) or not isinstance(d, numbers.Integral):
            raise TypeError(f"axes_dim must hold positive even ints, got {_describe(d)}")
    out = tuple(int(d) for d in dims)
    if any(d <= 0 or d % 2 for d in out) or sum(out) > MAX_COUNT:
        raise ValueError(f"axes_dim must hold positive even ints, got {list(out)}")
    return out


@traced_constant
def _ladders(axes_dim: tuple[int, ...], base: float) -> tuple[FloatArray, IntArray]:
    """The frequency and the axis of each of the ``sum(axes_dim) / 2`` pairs (float64, int64)."""
    freqs = [base ** (-np.arange(0, d, 2, dtype=np.float64) / d) for d in axes_dim]
    axis = [np.full(d // 2, a, dtype=np.int64) for a, d in enumerate(axes_dim)]
    return np.concatenate(freqs), np.concatenate(axis)


def rope_axes_frequencies(axes_dim: Sequence[int], *, base: float = 10000.0) -> FloatArray:
    """The ``(sum(axes_dim) // 2, n_axes)`` frequency table of multi-axis RoPE.

    Experimental. Row ``k`` is pair ``k`` of the head: the pairs of block ``a`` (widths
    ``axes_dim``, in order) have frequency ``base ** (-2j / axes_dim[a])`` in column ``a``
    (``j`` counts the pairs inside the block) and 0 in the other columns. The same layout as
    :func:`posenc.rope_2d_frequencies`, so ``apply_rope_mixed`` takes it for two axes.

    Parameters
    ----------
    axes_dim : sequence of positive even ints
        Features per axis (diffusers ``axes_dim`` / ``rope_axes_dim``); their sum is the head
        dim that rotates.
    base : float, default 10000.0
        ``theta`` (FLUX, Wan: 10000; HunyuanVideo: 256).

    Returns
    -------
    numpy.ndarray of shape (sum(axes_dim) // 2, len(axes_dim)), float64

    Raises
    ------
    TypeError, ValueError
        ``axes_dim`` not a sequence of 1 to 16 positive even ints, bad ``base``, a table of
        more bytes than the machine's memory (refused before allocating).

    Examples
    --------
    >>> import numpy as np
    >>> import posenc
    >>> np.round(posenc.rope_axes_frequencies([2, 4], base=100.0), 3)
    array([[1. , 0. ],
           [0. , 1. ],
           [0. , 0.1]])
    """
    dims = _axes_dim(axes_dim)
    b = check_base(base)
    pairs = sum(dims) // 2
    check_memory(  # the table, before _ladders builds its columns
        8 * pairs * len(dims),
        what=f"axes_dim {list(dims)} (a {pairs} x {len(dims)} float64 table)",
    )
    freqs, axis = _ladders(dims, b)
    table = np.zeros((len(freqs), len(dims)))
    table[np.arange(len(freqs)), axis] = freqs
    return table


@overload
def apply_rope_axes(
    x: Tensor,
    positions: Tensor | ArrayLike,
    axes_dim: Sequence[int],
    *,
    base: float = ...,
    pairing: Pairing = ...,
) -> Tensor: ...
@overload
def apply_rope_axes(
    x: ArrayLike,
    positions: ArrayLike,
    axes_dim: Sequence[int],
    *,
    base: float = ...,
    pairing: Pairing = ...,
) -> FloatArray: ...
def apply_rope_axes(
    x: Tensor | ArrayLike,
    positions: Tensor | ArrayLike,
    axes_dim: Sequence[int],
    *,
    base: float = 10000.0,
    pairing: Pairing = "interleaved",
) -> Tensor | FloatArray:
    """Rotate queries or keys by ``n`` coordinates per token: the N-D RoPE of diffusion models.

    Experimental. Pair ``j`` of block ``a`` (the blocks have the widths ``axes_dim``, in order)
    turns by ``positions[..., a] * base ** (-2j / axes_dim[a])``. With the defaults this is
    diffusers 0.42's ``FluxPosEmbed`` + ``apply_rotary_emb`` (FLUX: ``axes_dim=(16, 56, 56)``),
    ``HunyuanVideoRotaryPosEmbed`` (``(16, 56, 56)``, ``base=256``) and ``WanRotaryPosEmbed``
    (for head dim ``d``: ``(d - 4 (d // 6), 2 (d // 6), 2 (d // 6))``), with the angles in
    float64.

    Parameters
    ----------
    x : array or tensor of shape (..., seq, dim)
        Queries or keys, floating (NumPy or torch). ``dim >= sum(axes_dim)``; features past
        ``sum(axes_dim)`` are passed through unrotated.
    positions : array or tensor of shape (..., seq, n_axes)
        The coordinates of each token (:func:`rope_grid_positions` for a grid), integer or
        float, ``n_axes = len(axes_dim)``. Leading axes broadcast against ``x.shape[:-2]``
        the NumPy way (aligned from the right). For diffusers' ``(batch, seq, heads, dim)``
        queries pass ``positions[:, None]``.
    axes_dim : sequence of positive even ints
        Features per axis.
    base : float, default 10000.0
        ``theta``.
    pairing : {"interleaved", "half"}, default "interleaved"
        ``"interleaved"``: pair ``k`` is features ``(2k, 2k+1)`` (FLUX, HunyuanVideo, Wan).
        ``"half"``: ``(k, k + r/2)`` with ``r = sum(axes_dim)``.

    Returns
    -------
    array or tensor
        Same shape, dtype, library and device as ``x``.

    Raises
    ------
    TypeError
        ``x`` not floating, ``positions`` not real or a tensor with a NumPy ``x``, ``axes_dim``
        not ints.
    ValueError
        ``axes_dim`` wider than ``x``, ``positions`` not finite, without a last axis of
        ``len(axes_dim)`` or not fitting ``x``, bad ``base`` or ``pairing``.

    See Also
    --------
    rope_axes_frequencies : the frequency of each pair.
    apply_mrope : one ladder cut into bands (Qwen2-VL).

    Notes
    -----
    For pair ``(u, v)`` of block ``a``, ``theta = p_a * base ** (-2j / d_a)``:
    ``u' = u cos(theta) - v sin(theta)``, ``v' = v cos(theta) + u sin(theta)``.

    References
    ----------
    Black Forest Labs, FLUX.1 (``EmbedND``, ``axes_dim``). Kong et al., "HunyuanVideo",
    arXiv:2412.03603. Wan Team, "Wan: Open and Advanced Large-Scale Video Generative Models",
    arXiv:2503.20314.

    Examples
    --------
    >>> import numpy as np
    >>> import posenc
    >>> q = np.ones((1, 4, 8))                              # (heads, seq, dim)
    >>> pos = posenc.rope_grid_positions((1, 2, 2))         # (frame, row, col) of 4 tokens
    >>> np.round(posenc.apply_rope_axes(q, pos, [2, 2, 4])[0, 3], 3)
    array([ 1.   ,  1.   , -0.301,  1.382, -0.301,  1.382,  0.99 ,  1.01 ])
    """
    arr, torch_x = _check_x(x)
    dims = _axes_dim(axes_dim)
    rot = sum(dims)
    if rot > arr.shape[-1]:
        raise ValueError(
            f"axes_dim {list(dims)} sums to {rot}, more than x's last axis ({arr.shape[-1]})"
        )
    pair = check_choice(pairing, name="pairing", choices=PAIRINGS)
    freqs, axis = _ladders(dims, check_base(base))
    pos = _check_coords(positions, arr, len(dims))
    want = tuple(arr.shape[:-1])
    try:
        fits = np.broadcast_shapes(tuple(pos.shape[:-1]), want) == want
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(
            f"positions of shape {tuple(pos.shape)} do not fit x of shape {tuple(arr.shape)}: "
            f"positions (..., seq, {len(dims)}) broadcast against x's leading axes from the right"
        )
    work = _work_dtype(arr)
    if torch_x:
        torch = sys.modules["torch"]
        f64 = torch.as_tensor(freqs, device=arr.device)
        idx = torch.as_tensor(axis, device=arr.device)
        angle = pos.to(torch.float64)[..., idx] * f64  # (..., seq, rot / 2)
        cos, sin = torch.cos(angle).to(work), torch.sin(angle).to(work)
    else:
        angle = pos.astype(np.float64)[..., axis] * freqs
        cos, sin = np.cos(angle).astype(work), np.sin(angle).astype(work)
    out: Tensor | FloatArray = _rotate(arr, cos, sin, pairing=pair, rotary_dim=rot)
    return out


def _check_coords(positions: Any, x: Any, n: int) -> Any:
    """Coordinates: real, finite, last axis ``n``, in ``x``'s library and on its device."""
    if isinstance(positions, (int, float)) and not isinstance(positions, bool):
        raise TypeError(
            f"positions must be an array of shape (..., seq, {n}), got {_describe(positions)}; "
            "build grid coordinates with posenc.rope_grid_positions"
        )
    arr, torch_in = as_positions(positions, name="positions")
    if torch_in and not is_torch(x):
        raise TypeError(
            "positions is a torch tensor but x is a NumPy array; pass both from one library"
        )
    if arr.ndim < 2 or arr.shape[-1] != n:
        raise ValueError(
            f"positions must have shape (..., seq, {n}) (one coordinate per axis of axes_dim), "
            f"got shape {tuple(arr.shape)}"
        )
    if is_torch(x):
        torch = sys.modules["torch"]
        if torch_in:
            if arr.device != x.device:
                raise ValueError(f"positions is on {arr.device} but x is on {x.device}; move one")
        else:
            arr = torch.as_tensor(np.ascontiguousarray(arr), device=x.device)
    return arr


@overload
def rope_grid_positions(sizes: Sequence[int], *, like: Tensor) -> Tensor: ...
@overload
def rope_grid_positions(sizes: Sequence[int], *, like: ArrayLike | None = ...) -> IntArray: ...
def rope_grid_positions(sizes: Sequence[int], *, like: Any = None) -> Tensor | IntArray:
    """The coordinates of every cell of an ``n``-D grid, row-major: ``(prod(sizes), n)`` ints.

    Experimental. Cell ``(i_0, ..., i_{n-1})`` comes in the order of ``x.flatten`` over a
    ``sizes``-shaped grid (the last axis fastest): the token order of a video latent
    ``(frames, rows, cols)`` patchified by diffusers' HunyuanVideo and Wan, and of FLUX's
    ``(1, rows, cols)`` image ids once their first column is set.

    Parameters
    ----------
    sizes : sequence of ints
        The grid's extent along each axis, each >= 0 (1 to 16 axes).
    like : numpy.ndarray or torch.Tensor, optional
        Output library and device (default NumPy).

    Returns
    -------
    int64 array of shape (prod(sizes), len(sizes))

    Raises
    ------
    TypeError, ValueError
        ``sizes`` not a sequence of 1 to 16 non-negative ints, a grid of more than ``2**40``
        cells or of more bytes than the memory of the machine (or of ``like``'s device),
        refused before allocating, ``like`` not an array.

    Examples
    --------
    >>> import posenc
    >>> posenc.rope_grid_positions((2, 1, 3)).T
    array([[0, 0, 0, 1, 1, 1],
           [0, 0, 0, 0, 0, 0],
           [0, 1, 2, 0, 1, 2]])
    """
    if isinstance(sizes, (str, bytes)) or not hasattr(sizes, "__len__"):
        raise TypeError(f"sizes must be a sequence of non-negative ints, got {_describe(sizes)}")
    raw = sizes.tolist() if hasattr(sizes, "tolist") else list(sizes)
    if not 1 <= len(raw) <= MAX_AXES:
        raise ValueError(f"sizes must hold 1 to {MAX_AXES} extents, got {len(raw)}: {raw}")
    for s in raw:
        if isinstance(s, bool) or not isinstance(s, numbers.Integral):
            raise TypeError(f"sizes must hold non-negative ints, got {_describe(s)}")
    shape = tuple(int(s) for s in raw)
    if min(shape) < 0:
        raise ValueError(f"sizes must hold non-negative ints, got {list(shape)}")
    cells = 1
    for s in shape:
        cells *= s
    if cells > 2**40:
        raise ValueError(
            f"sizes {list(shape)} make a grid of {cells} cells, more than 2**40: pass one that "
            "fits in memory"
        )
    torch_out, device, _ = like_spec(like, None)
    what = f"sizes {list(shape)} ({cells} cells x {len(shape)} int64 coordinates)"
    check_memory(8 * cells * len(shape), what=what)  # built in NumPy first
    if torch_out:
        check_memory(8 * cells * len(shape), what=what, device=device)
    grid = np.indices(shape, dtype=np.int64).reshape(len(shape), -1).T
    if torch_out:
        torch = sys.modules["torch"]
        return torch.as_tensor(np.ascontiguousarray(grid), device=device)
    return np.ascontiguousarray(grid)

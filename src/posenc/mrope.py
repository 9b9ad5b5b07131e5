"""Multimodal rotary position embeddings (M-RoPE; Qwen2-VL, Qwen2.5-VL, Qwen3-VL).

M-RoPE gives every token three position ids, temporal ``t``, height ``h`` and width ``w``, and
rotates each frequency pair of RoPE by one of them: the ``head_dim / 2`` pairs are split by
``mrope_section = [s_t, s_h, s_w]`` into three bands (Qwen2-VL, Qwen2.5-VL), or the three axes
take turns pair by pair (Qwen3-VL, "interleaved"). Text tokens have ``t = h = w``, so on text
M-RoPE is plain 1-D RoPE; image and video patches get their grid coordinates.

Two functions: :func:`mrope_position_ids` builds the ``(3, batch, seq)`` ids from a layout of
text runs and image/video grids (what transformers' ``get_rope_index`` does from token type ids),
and :func:`apply_mrope` rotates queries or keys by them (the model's rotary embedding plus its
``apply_rotary_pos_emb``). Angles are formed in float64, as in :func:`posenc.apply_rope`.
"""

from __future__ import annotations

import numbers
import sys
from typing import TYPE_CHECKING, Any, Literal, overload

import numpy as np
import numpy.typing as npt

from ._array import (
    _describe,
    as_positions,
    check_base,
    check_choice,
    check_memory,
    check_scalar,
    is_count,
    is_torch,
    traced_constant,
)
from ._typing import ArrayLike, FloatArray, IntArray
from .rope import _check_x, _cos_sin, _fit_positions, _rotate, _work_dtype
from .rope_scaling import rope_frequencies

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ._typing import Tensor

__all__ = ["apply_mrope", "mrope_position_ids"]

RESUMES = ("max", "spatial")
KINDS = ("text", "pad", "image", "video")
MAX_TOKENS = 2**31  # per row: far past any context; refused by name instead of a MemoryError


# --- rotation ----------------------------------------------------------------------------------


@overload
def apply_mrope(
    x: Tensor,
    position_ids: Tensor | ArrayLike,
    mrope_section: Sequence[int],
    *,
    base: float = ...,
    interleaved: bool = ...,
) -> Tensor: ...
@overload
def apply_mrope(
    x: ArrayLike,
    position_ids: ArrayLike,
    mrope_section: Sequence[int],
    *,
    base: float = ...,
    interleaved: bool = ...,
) -> FloatArray: ...
def apply_mrope(
    x: Tensor | ArrayLike,
    position_ids: Tensor | ArrayLike,
    mrope_section: Sequence[int],
    *,
    base: float = 10000.0,
    interleaved: bool = False,
) -> Tensor | FloatArray:
    """Rotate queries or keys by three position ids per token: multimodal RoPE (M-RoPE).

    Experimental. Qwen2-VL's M-RoPE (Wang et al., 2024, arXiv:2409.12191): pair ``i`` of the
    ``head_dim / 2`` rotate-half pairs (HF's ``rotate_half`` pairing, ``(i, i + head_dim/2)``)
    turns by ``p_a(i) * w_i``, where ``a(i)`` is the axis (temporal, height, width) that
    ``mrope_section`` gives to pair ``i``. Equal to transformers 5.23's
    ``Qwen2VLRotaryEmbedding`` / ``Qwen2_5_VLRotaryEmbedding`` (``interleaved=False``) and
    ``Qwen3VLTextRotaryEmbedding`` (``interleaved=True``) followed by their
    ``apply_rotary_pos_emb``, with the angles in float64 instead of float32.

    Parameters
    ----------
    x : array or tensor of shape (..., seq, head_dim)
        Queries or keys, floating (NumPy or torch), ``head_dim`` even; usually
        ``(batch, heads, seq, head_dim)``.
    position_ids : array of shape (3, ..., seq)
        Temporal, height and width ids (:func:`mrope_position_ids`). ``position_ids[a]`` must
        fit ``x`` as ``positions`` fit :func:`posenc.apply_rope`: ``(3, seq)`` is shared by the
        batch, ``(3, batch, seq)`` is per row. Integer or float, NumPy, list or a tensor on
        ``x``'s device. For text only, ``np.broadcast_to(ids, (3,) + ids.shape)``.
    mrope_section : sequence of 3 ints
        Pairs per axis ``[s_t, s_h, s_w]``, non-negative, summing to ``head_dim / 2`` (HF
        ``rope_parameters["mrope_section"]``; transformers 5.23 falls back to ``[16, 24, 24]`` for
        Qwen2-VL / Qwen2.5-VL and ``[24, 20, 20]`` for Qwen3-VL).
    base : float, default 10000.0
        Frequency base (HF ``rope_theta``).
    interleaved : bool, default False
        ``False``: bands, pairs ``0 .. s_t-1`` follow t, the next ``s_h`` follow h, the last
        ``s_w`` follow w (Qwen2-VL, Qwen2.5-VL). ``True``: pair ``i`` follows h when
        ``i % 3 == 1`` and ``i < 3 s_h``, w when ``i % 3 == 2`` and ``i < 3 s_w``, else t
        (Qwen3-VL); needs ``3 s_h <= head_dim/2 + 1`` and ``3 s_w <= head_dim/2``.

    Returns
    -------
    array or tensor
        Same shape, dtype, library and device as ``x``.

    Raises
    ------
    TypeError
        ``x`` not floating, ``position_ids`` not real or from another library than ``x``,
        ``mrope_section`` not a sequence of ints, ``interleaved`` not a bool.
    ValueError
        Odd ``head_dim``, ``position_ids`` without a leading axis of 3 or not fitting ``x``,
        ``mrope_section`` of the wrong length or sum, bad ``base``.

    See Also
    --------
    mrope_position_ids : builds ``position_ids`` from a layout of text and image/video grids.
    apply_rope : the one-axis case (all three ids equal).

    Notes
    -----
    For pair ``(a, b) = (x_i, x_{i + d/2})`` with axis ``a(i)``:
    ``a' = a cos(p_{a(i)} w_i) - b sin(p_{a(i)} w_i)``,
    ``b' = b cos(p_{a(i)} w_i) + a sin(p_{a(i)} w_i)``, ``w_i = base ** (-2i / d)``.

    References
    ----------
    Wang et al., "Qwen2-VL: Enhancing Vision-Language Model's Perception of the World at Any
    Resolution", arXiv:2409.12191. Bai et al., "Qwen2.5-VL Technical Report",
    arXiv:2502.13923.

    Examples
    --------
    >>> import numpy as np
    >>> import posenc
    >>> q = np.ones((1, 1, 3, 8))                   # (batch, heads, seq, head_dim)
    >>> ids = np.array([[0, 1, 1], [0, 1, 2], [0, 2, 1]])   # (3, seq): t, h, w
    >>> np.round(posenc.apply_mrope(q, ids, [2, 1, 1], base=100.0)[0, 0], 3)
    array([[ 1.   ,  1.   ,  1.   ,  1.   ,  1.   ,  1.   ,  1.   ,  1.   ],
           [-0.301,  0.639,  0.895,  0.935,  1.382,  1.261,  1.095,  1.061],
           [-0.301,  0.639,  0.781,  0.968,  1.382,  1.261,  1.179,  1.031]])
    """
    arr, _ = _check_x(x)
    dim = int(arr.shape[-1])
    if dim % 2:
        raise ValueError(f"x's last axis (head_dim) must be even, got {dim}")
    if not isinstance(interleaved, (bool, np.bool_)):
        raise TypeError(
            f"interleaved must be a bool, got {interleaved!r} ({type(interleaved).__name__})"
        )
    axes = _pair_axes(dim // 2, mrope_section, bool(interleaved))
    freqs, back = _bands(dim, check_base(base), tuple(axes))
    pos = _check_ids(position_ids, arr)
    dtype = _work_dtype(arr)
    cos_parts, sin_parts = [], []
    for a in range(3):
        if a not in axes:  # no pair on this axis (a Python test: freqs is a graph constant)
            continue
        try:
            p = _fit_positions(pos[a], arr)
        except ValueError as exc:
            raise ValueError(
                f"position_ids of shape {tuple(pos.shape)} do not fit x of shape "
                f"{tuple(arr.shape)}: position_ids[a] must fit as positions fit apply_rope "
                f"({exc})"
            ) from None
        c, s = _cos_sin(p, freqs[a], 1.0, dtype=dtype)  # (..., seq, pairs of axis a)
        cos_parts.append(c)
        sin_parts.append(s)
    cat = _cat(arr)
    cos, sin = cat(cos_parts), cat(sin_parts)  # pairs grouped by axis: t, then h, then w
    if back is not None:  # interleaved: back to pair order
        cos, sin = cos[..., list(back)], sin[..., list(back)]
    out: Tensor | FloatArray = _rotate(arr, cos, sin, pairing="half", rotary_dim=dim)
    return out


@traced_constant
def _bands(
    dim: int, base: float, axes: tuple[int, ...]
) -> tuple[tuple[FloatArray, ...], tuple[int, ...] | None]:
    """The frequencies of the pairs of each axis, and the permutation from pairs grouped by axis
    back to pair order (None when they are in order); under torch.compile a graph constant."""
    inv_freq, _ = rope_frequencies(dim, base=base)
    groups = [[i for i, a in enumerate(axes) if a == ax] for ax in range(3)]
    order = [i for g in groups for i in g]
    back = tuple(sorted(range(len(order)), key=order.__getitem__))
    return tuple(inv_freq[g] for g in groups), None if order == sorted(order) else back


def _cat(x: Any) -> Any:
    if is_torch(x):
        torch = sys.modules["torch"]
        return lambda parts: torch.cat(parts, dim=-1)
    return lambda parts: np.concatenate(parts, axis=-1)


def _check_section(half: int, mrope_section: Any) -> list[int]:
    """``mrope_section`` as 3 ints (t, h, w) summing to ``half`` (head_dim / 2), or a clear error;
    shared by M-RoPE and VideoRoPE (posenc.video_rope)."""
    if isinstance(mrope_section, (str, bytes)) or not hasattr(mrope_section, "__len__"):
        raise TypeError(
            f"mrope_section must be a sequence of 3 non-negative ints, got {_describe(mrope_section)}"
        )
    if is_torch(mrope_section) or isinstance(mrope_section, np.ndarray):
        mrope_section = mrope_section.tolist()
    sec = list(mrope_section)
    if len(sec) != 3:
        raise ValueError(
            f"mrope_section must have 3 entries (temporal, height, width), got {len(sec)}: {sec}"
        )
    for s in sec:
        if isinstance(s, bool) or not isinstance(s, numbers.Integral):
            raise TypeError(f"mrope_section must hold non-negative ints, got {_describe(s)}")
    sec = [int(s) for s in sec]
    if min(sec) < 0 or sum(sec) != half:
        raise ValueError(
            f"mrope_section must be 3 non-negative ints summing to head_dim / 2 = {half}, got {sec}"
        )
    return sec


def _pair_axes(half: int, mrope_section: Any, interleaved: bool) -> list[int]:
    """The axis (0 = t, 1 = h, 2 = w) of each of the ``half`` frequency pairs."""
    sec = _check_section(half, mrope_section)
    if not interleaved:
        return [0] * sec[0] + [1] * sec[1] + [2] * sec[2]
    axes = [0] * half  # Qwen3-VL: t everywhere, then h on 1, 4, 7, ... and w on 2, 5, 8, ...
    for a, start in ((1, 1), (2, 2)):
        if start + 3 * (sec[a] - 1) >= half and sec[a] > 0:
            raise ValueError(
                f"mrope_section {sec} does not fit the interleaved layout of head_dim / 2 = {half} "
                f"pairs: axis {'hw'[a - 1]} needs pair {start + 3 * (sec[a] - 1)}"
            )
        for i in range(start, 3 * sec[a], 3):
            axes[i] = a
    return axes


def _check_ids(position_ids: Any, x: Any) -> Any:
    """``position_ids`` as an array or tensor of shape (3, ..., seq), in ``x``'s library."""
    if is_count(position_ids):
        raise TypeError(
            f"position_ids must be an array of shape (3, ..., seq), got {position_ids!r} (int); "
            "a count is not enough: M-RoPE needs three ids per token"
        )
    pos, torch_pos = as_positions(position_ids, name="position_ids")
    if torch_pos and not is_torch(x):
        raise TypeError(
            "position_ids is a torch tensor but x is a NumPy array; pass both from one library"
        )
    if torch_pos and pos.device != x.device:
        raise ValueError(f"position_ids is on {pos.device} but x is on {x.device}; move one")
    if pos.ndim < 2 or pos.shape[0] != 3:
        raise ValueError(
            "position_ids must have shape (3, ..., seq) (temporal, height, width ids), got "
            f"shape {tuple(pos.shape)}"
        )
    return pos


# --- position ids ------------------------------------------------------------------------------


@overload
def mrope_position_ids(
    layouts: Sequence[Sequence[Any]],
    *,
    spatial_merge_size: int = ...,
    tokens_per_second: float | None = ...,
    resume: Literal["max", "spatial"] = ...,
    like: Tensor,
) -> Tensor: ...
@overload
def mrope_position_ids(
    layouts: Sequence[Sequence[Any]],
    *,
    spatial_merge_size: int = ...,
    tokens_per_second: float | None = ...,
    resume: Literal["max", "spatial"] = ...,
    like: npt.NDArray[Any] | None = ...,
) -> IntArray: ...
def mrope_position_ids(
    layouts: Sequence[Sequence[Any]],
    *,
    spatial_merge_size: int = 2,
    tokens_per_second: float | None = None,
    resume: Literal["max", "spatial"] = "max",
    like: Tensor | npt.NDArray[Any] | None = None,
) -> Tensor | IntArray:
    """The ``(3, batch, seq)`` M-RoPE position ids of a batch of text/image/video layouts.

    Experimental. What transformers' ``get_rope_index`` of Qwen2-VL, Qwen2.5-VL and Qwen3-VL
    computes from ``mm_token_type_ids`` and the grids, from a layout written out as segments:
    text tokens get ``t = h = w = `` one counter; an image or video grid of ``(t, h, w)``
    patches gives its ``t * (h/m) * (w/m)`` tokens (``m = spatial_merge_size``) the ids
    ``(start + floor(k * interval), start + i, start + j)`` for frame ``k``, row ``i``, column
    ``j`` in that order, ``start`` being the counter; the text after it resumes at the
    largest id of the grid + 1 (``resume="max"``).

    Parameters
    ----------
    layouts : list of layouts, one per batch row
        A layout is a list of segments, each a tuple:

        * ``("text", n)``: ``n >= 1`` text tokens;
        * ``("image", (t, h, w))``: an image grid in patches, as in HF ``image_grid_thw``
          (``t`` is 1 for an image; ``h`` and ``w`` divisible by ``spatial_merge_size``);
        * ``("video", (t, h, w))`` or ``("video", (t, h, w), seconds_per_grid)``: a video grid
          (HF ``video_grid_thw``; ``seconds_per_grid`` is Qwen2.5-VL's ``second_per_grid_ts``
          entry, default 1.0, used only with ``tokens_per_second``);
        * ``("pad", n)``: ``n >= 1`` padding tokens: ids 0, the counter does not move (HF with
          an ``attention_mask`` of 0 there).

        Every row must come to the same length (pad the shorter ones). For Qwen3-VL, write a
        video as its frames, ``("video", (1, h, w))`` each, with the timestamp text between them
        (Qwen3-VL's processor puts ``<t seconds>`` text before every frame).
    spatial_merge_size : int, default 2
        Patches merged per side into one token (HF ``vision_config.spatial_merge_size``).
    tokens_per_second : float, optional
        Qwen2.5-VL's ``vision_config.tokens_per_second``: video frame ``k`` gets temporal id
        ``start + floor(k * tokens_per_second * seconds_per_grid)``, the product formed in
        float32 as transformers does (its processor stores ``second_per_grid_ts`` as float32:
        pass that float32 value). None (Qwen2-VL, Qwen3-VL): frame ``k`` gets ``start + k``.
        Images are never scaled.
    resume : {"max", "spatial"}, default "max"
        Where the counter goes after a grid. ``"max"``: the largest id of the grid + 1 (Qwen's
        release code and transformers 4.x). ``"spatial"``: ``start + max(h, w) / m``
        (transformers 5.23's ``get_rope_index``). They differ only for a video whose temporal
        ids pass its spatial ones (more frames than rows and columns, or a scaled time axis).
    like : tensor, optional
        Return a torch ``int64`` tensor on ``like``'s device instead of a NumPy array.

    Returns
    -------
    int64 array or tensor of shape (3, batch, seq)
        Temporal, height and width ids. The next generated token takes
        ``ids.max(axis=(0, 2)) + 1`` of its row (HF's ``rope_deltas`` is that minus seq).

    Raises
    ------
    TypeError
        A layout or segment of the wrong kind, a size that is not an int, ``like`` not a tensor
        or array.
    ValueError
        An unknown segment kind, a size < 1, a grid side not divisible by
        ``spatial_merge_size``, ``seconds_per_grid`` without ``tokens_per_second``, a time
        step ``tokens_per_second * seconds_per_grid`` past float32's range, rows of
        different lengths, more than ``2**31`` tokens in a row, bad ``resume``, ids of more
        bytes than the memory of the machine (or of ``like``'s device), refused before
        allocating.

    See Also
    --------
    apply_mrope : rotates queries and keys by these ids.

    References
    ----------
    Wang et al., arXiv:2409.12191 (Qwen2-VL, section 2.1); Bai et al., arXiv:2502.13923
    (Qwen2.5-VL, absolute time alignment).

    Examples
    --------
    >>> import posenc
    >>> layout = [("text", 2), ("image", (1, 4, 6)), ("text", 2)]
    >>> posenc.mrope_position_ids([layout])[:, 0]
    array([[0, 1, 2, 2, 2, 2, 2, 2, 5, 6],
           [0, 1, 2, 2, 2, 3, 3, 3, 5, 6],
           [0, 1, 2, 3, 4, 2, 3, 4, 5, 6]])
    """
    merge = _size(spatial_merge_size, "spatial_merge_size")
    tps = None
    if tokens_per_second is not None:
        tps = check_scalar(tokens_per_second, name="tokens_per_second")
        if tps <= 0:
            raise ValueError(f"tokens_per_second must be > 0, got {tps}")
    mode = check_choice(resume, name="resume", choices=RESUMES)
    if like is not None and not is_torch(like) and not isinstance(like, np.ndarray):
        raise TypeError(
            f"like must be a torch tensor, a NumPy array or None, got {_describe(like)}"
        )
    if isinstance(layouts, (str, bytes)) or not isinstance(layouts, (list, tuple)):
        raise TypeError(
            f"layouts must be a list of layouts (lists of segments), got {_describe(layouts)}"
        )
    segs = [_row_segments(lay, b, merge, tps) for b, lay in enumerate(layouts)]
    _check_rows([sum(n for _, n, _ in row) for row in segs], like, itemsize=8)
    rows = [_row(row, mode) for row in segs]
    ids = np.stack(rows, axis=1) if rows else np.zeros((3, 0, 0), dtype=np.int64)
    if like is not None and is_torch(like):
        torch = sys.modules["torch"]
        return torch.as_tensor(ids, device=like.device)
    return ids


def _size(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be a positive integer, got {_describe(value)}")
    value = int(value)
    if not 1 <= value <= MAX_TOKENS:
        raise ValueError(f"{name} must be a positive integer <= 2**31, got {value}")
    return value


def _check_rows(lengths: list[int], like: Any, *, itemsize: int) -> None:
    """Rows of one length, and a ``(3, batch, seq)`` result that fits in memory: checked from
    the parsed segments, before any row is built (shared with posenc.video_rope)."""
    if len(set(lengths)) > 1:
        raise ValueError(
            f"layouts give rows of different lengths {sorted(set(lengths))}; pad the shorter "
            "rows with ('pad', n) segments"
        )
    seq = lengths[0] if lengths else 0
    what = f"layouts of {len(lengths)} rows x {seq} tokens (3 ids each)"
    nbytes = 3 * len(lengths) * seq * itemsize
    check_memory(nbytes, what=what)  # the ids are built in NumPy first
    if like is not None and is_torch(like):
        check_memory(nbytes, what=what, device=like.device)


def _row_segments(layout: Any, b: int, merge: int, tps: float | None) -> list[tuple[str, int, Any]]:
    """The checked segments of one layout (no ids built yet)."""
    where = f"layouts[{b}]"
    if isinstance(layout, tuple) and layout and isinstance(layout[0], str):
        raise TypeError(
            f"{where} must be a layout (a list of segments), got the segment {layout!r}; "
            "for one sequence pass [layout]"
        )
    if isinstance(layout, (str, bytes)) or not isinstance(layout, (list, tuple)):
        raise TypeError(f"{where} must be a list of segments, got {_describe(layout)}")
    segs = [_segment(seg, f"{where}[{i}]", merge, tps) for i, seg in enumerate(layout)]
    total = sum(n for _, n, _ in segs)
    if total > MAX_TOKENS:
        raise ValueError(f"{where} holds {total} tokens; at most 2**31 per row")
    return segs


def _row(segs: list[tuple[str, int, Any]], mode: str) -> IntArray:
    """The (3, seq) ids of one layout's checked segments."""
    parts, cur = [], 0
    for kind, n, grid in segs:
        if kind == "text":
            parts.append(np.broadcast_to(cur + np.arange(n, dtype=np.int64), (3, n)))
            cur += n
        elif kind == "pad":
            parts.append(np.zeros((3, n), dtype=np.int64))
        else:
            t, gh, gw, interval = grid
            if isinstance(interval, np.float32):  # as HF: arange(t) * step in float32
                frames = np.arange(t, dtype=np.int64).astype(np.float32)
                tt = (frames * interval).astype(np.int64)  # truncation: HF's .long()
            else:  # an integer step (1, or an int tokens_per_second): exact
                tt = np.arange(t, dtype=np.int64) * interval
            grids = np.meshgrid(tt, np.arange(gh), np.arange(gw), indexing="ij")
            block = cur + np.stack(grids).reshape(3, -1).astype(np.int64)
            parts.append(block)
            cur = int(block.max()) + 1 if mode == "max" else cur + max(gh, gw)
    if not parts:
        return np.zeros((3, 0), dtype=np.int64)
    return np.concatenate(parts, axis=1)


def _segment(seg: Any, where: str, merge: int, tps: float | None) -> tuple[str, int, Any]:
    """``(kind, n_tokens, (t, h/m, w/m, interval) or None)`` of one segment."""
    if not isinstance(seg, (tuple, list)) or not seg or not isinstance(seg[0], str):
        raise TypeError(
            f"{where} must be a segment tuple ('text', n), ('pad', n), ('image', (t, h, w)) or "
            f"('video', (t, h, w)[, seconds_per_grid]), got {_describe(seg)}"
        )
    kind = seg[0]
    if kind not in KINDS:
        raise ValueError(f"{where} has an unknown kind {kind!r}; expected one of {KINDS}")
    if kind in ("text", "pad"):
        if len(seg) != 2:
            raise ValueError(f"{where} must be ({kind!r}, n), got {seg!r}")
        return kind, _size(seg[1], f"{where} ({kind} length)"), None
    if len(seg) not in (2, 3) or (kind == "image" and len(seg) != 2):
        raise ValueError(f"{where} must be ({kind!r}, (t, h, w)), got {seg!r}")
    grid = seg[1].tolist() if is_torch(seg[1]) or isinstance(seg[1], np.ndarray) else seg[1]
    if not isinstance(grid, (tuple, list)) or len(grid) != 3:
        raise TypeError(f"{where} needs a grid (t, h, w) of 3 ints, got {_describe(seg[1])}")
    t, h, w = (_size(g, f"{where} (grid {a})") for g, a in zip(grid, "thw", strict=True))
    for side, a in ((h, "h"), (w, "w")):
        if side % merge:
            raise ValueError(
                f"{where}: grid {a} = {side} is not divisible by spatial_merge_size = {merge}"
            )
    # a video's time step as transformers forms it: tokens_per_second times the processor's
    # float32 second_per_grid_ts, in float32; without it HF multiplies by tokens_per_second
    # itself, exactly for an int (its config's type), in float32 (torch's default) for a float
    interval: np.float32 | int = 1
    if len(seg) == 3:
        sec = check_scalar(seg[2], name=f"{where} seconds_per_grid")
        if sec <= 0:
            raise ValueError(f"{where} seconds_per_grid must be > 0, got {sec}")
        if tps is None:
            raise ValueError(
                f"{where} gives seconds_per_grid but tokens_per_second is None (only Qwen2.5-VL "
                "scales time); pass tokens_per_second or drop seconds_per_grid"
            )
        with np.errstate(over="ignore", under="ignore"):  # an overflow is refused just below
            interval = np.float32(tps) * np.float32(sec)
    elif kind == "video" and tps is not None:
        sec = 1.0
        if tps.is_integer() and tps <= MAX_TOKENS:
            interval = int(tps)
        else:
            with np.errstate(over="ignore", under="ignore"):
                interval = np.float32(tps)
    if not np.isfinite(interval):
        raise ValueError(
            f"{where}: tokens_per_second * seconds_per_grid = {tps:g} * {sec:g} overflows "
            "float32 (transformers forms the time step in float32)"
        )
    n = t * (h // merge) * (w // merge)
    if n > MAX_TOKENS:
        raise ValueError(f"{where}: grid {(t, h, w)} is too large (at most 2**31 tokens)")
    if (t - 1) * float(interval) > MAX_TOKENS:
        raise ValueError(
            f"{where}: the time ids of grid {(t, h, w)} reach {(t - 1) * float(interval):g}, "
            "past 2**31: tokens_per_second * seconds_per_grid is too large"
        )
    return kind, n, (t, h // merge, w // merge, interval)

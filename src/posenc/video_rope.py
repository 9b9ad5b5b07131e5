"""Video position ids beyond Qwen2-VL: VideoRoPE and Qwen2.5-Omni's TMRoPE.

Both keep M-RoPE's three ids per token (temporal ``t``, height ``h``, width ``w``; see
:mod:`posenc.mrope`) and change where the ids come from or which frequencies each axis gets:

* **VideoRoPE** (Wei et al., 2025): the temporal axis takes the *lowest* frequencies (the last
  ``s_t`` pairs; "low-frequency temporal allocation"), ``h`` and ``w`` alternate over the other
  pairs; frame ``k`` of a grid starting at ``s`` gets ``t = s + delta k`` ("adjustable temporal
  spacing") and its patches ``h = t + i - (H-1)//2``, ``w = t + j - (W-1)//2`` ("diagonal
  layout": the centre of every frame sits on the diagonal ``t = h = w`` that text follows).
  :func:`videorope_position_ids` and :func:`apply_videorope`, after the authors' code
  (Wiselnn570/VideoRoPE, ``get_t_scale_rope_index`` and
  ``apply_m_modify_multimodal_rotary_pos_emb``).
* **TMRoPE** (Qwen2.5-Omni): the temporal id counts time, 25 ids per second (one per 40 ms);
  audio tokens (one per 40 ms) take consecutive ids like text, a video frame ``k`` takes
  ``floor(25 k s)`` for ``s`` seconds per grid, and a video with its audio track is cut into
  2-second chunks laid out video, audio, video, audio, ... :func:`tmrope_position_ids`, equal to
  transformers 5.23's ``get_rope_index`` of Qwen2.5-Omni; the rotation is
  :func:`posenc.apply_mrope` with ``mrope_section=[16, 24, 24]``.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, overload

import numpy as np
import numpy.typing as npt

from ._array import _describe, check_base, check_scalar, is_torch
from .mrope import (
    MAX_TOKENS,
    _bands,
    _cat,
    _check_ids,
    _check_rows,
    _check_section,
    _segment,
    _size,
)
from .rope import _check_x, _cos_sin, _fit_positions, _rotate, _work_dtype

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ._typing import ArrayLike, FloatArray, IntArray, Tensor

__all__ = ["videorope_position_ids", "apply_videorope", "tmrope_position_ids"]

PAD_ID = 1  # what both reference codes leave in padded slots (torch.ones, never overwritten)


def _check_like(like: Any) -> None:
    if like is not None and not is_torch(like) and not isinstance(like, np.ndarray):
        raise TypeError(
            f"like must be a torch tensor, a NumPy array or None, got {_describe(like)}"
        )


def _layouts(layouts: Any) -> list[Any]:
    if isinstance(layouts, (str, bytes)) or not isinstance(layouts, (list, tuple)):
        raise TypeError(
            f"layouts must be a list of layouts (lists of segments), got {_describe(layouts)}"
        )
    out = []
    for b, layout in enumerate(layouts):
        where = f"layouts[{b}]"
        if isinstance(layout, tuple) and layout and isinstance(layout[0], str):
            raise TypeError(
                f"{where} must be a layout (a list of segments), got the segment {layout!r}; "
                "for one sequence pass [layout]"
            )
        if isinstance(layout, (str, bytes)) or not isinstance(layout, (list, tuple)):
            raise TypeError(f"{where} must be a list of segments, got {_describe(layout)}")
        out.append(layout)
    return out


def _stack(rows: list[Any], like: Any, dtype: Any) -> Any:
    """The rows (of one length: :func:`posenc.mrope._check_rows`) as ``(3, batch, seq)``."""
    ids = np.stack(rows, axis=1) if rows else np.zeros((3, 0, 0), dtype=dtype)
    if like is not None and is_torch(like):
        torch = sys.modules["torch"]
        return torch.as_tensor(ids, device=like.device)
    return ids


# --- VideoRoPE ---------------------------------------------------------------------------------


@overload
def videorope_position_ids(
    layouts: Sequence[Sequence[Any]],
    *,
    spatial_merge_size: int = ...,
    temporal_stride: float = ...,
    like: Tensor,
) -> Tensor: ...
@overload
def videorope_position_ids(
    layouts: Sequence[Sequence[Any]],
    *,
    spatial_merge_size: int = ...,
    temporal_stride: float = ...,
    like: npt.NDArray[Any] | None = ...,
) -> FloatArray: ...
def videorope_position_ids(
    layouts: Sequence[Sequence[Any]],
    *,
    spatial_merge_size: int = 2,
    temporal_stride: float = 2.0,
    like: Tensor | npt.NDArray[Any] | None = None,
) -> Tensor | FloatArray:
    """The ``(3, batch, seq)`` VideoRoPE position ids: diagonal layout, scaled time.

    Experimental. Text tokens get ``t = h = w`` = one counter, as in M-RoPE. A grid of
    ``(T, H, W)`` tokens (after merging) starting at counter ``s`` gives frame ``k``, row ``i``,
    column ``j`` the ids ``t = s + delta k``, ``h = t + i - (H - 1) // 2``,
    ``w = t + j - (W - 1) // 2``: every frame is centred on the diagonal ``t = h = w`` at its
    own time, and frames are ``delta`` apart (``delta = temporal_stride``). The text after a
    grid resumes at ``s + delta (T - 1) + 1``, one past the last frame's time, not past the
    largest spatial id. What ``get_t_scale_rope_index`` of the authors' code computes
    (Wiselnn570/VideoRoPE at commit 7712ca3, ``scale_factor=2.0`` in training).

    Parameters
    ----------
    layouts : list of layouts, one per batch row
        Segments as in :func:`posenc.mrope_position_ids`: ``("text", n)``, ``("pad", n)``,
        ``("image", (t, h, w))``, ``("video", (t, h, w))`` with grids in patches (divisible
        by ``spatial_merge_size``). Rows must come to the same length.
    spatial_merge_size : int, default 2
    temporal_stride : float, default 2.0
        ``delta``, the temporal id step between frames (> 0; the paper's adjustable temporal
        spacing; 1.0 is M-RoPE's step).
    like : tensor, optional
        Return a torch ``float64`` tensor on ``like``'s device instead of a NumPy array.

    Returns
    -------
    float64 array or tensor of shape (3, batch, seq)
        ``t``, ``h``, ``w``. Padding slots hold 1 (what the reference leaves there).

    Raises
    ------
    TypeError
        A layout or segment of the wrong kind, a size not an int, ``like`` not an array.
    ValueError
        An unknown segment kind, a size < 1, a grid side not divisible by
        ``spatial_merge_size``, a video segment with a ``seconds_per_grid`` (VideoRoPE spaces
        frames by ``temporal_stride``), ``temporal_stride`` not finite and > 0 or taking a
        grid's time ids past ``2**31``, rows of different lengths, more than ``2**31`` tokens
        in a row, ids of more bytes than the memory of the machine (or of ``like``'s device),
        refused before allocating.

    See Also
    --------
    apply_videorope : rotates by these ids with the low frequencies on the time axis.

    References
    ----------
    Wei et al., "VideoRoPE: What Makes for Good Video Rotary Position Embedding?",
    arXiv:2502.05173.

    Examples
    --------
    >>> import posenc
    >>> ids = posenc.videorope_position_ids([[("text", 2), ("video", (2, 6, 6)),
    ...                                       ("text", 1)]])
    >>> ids[:, 0].astype(int)
    array([[0, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 4, 4, 4, 4, 4, 4, 4, 4, 4, 5],
           [0, 1, 1, 1, 1, 2, 2, 2, 3, 3, 3, 3, 3, 3, 4, 4, 4, 5, 5, 5, 5],
           [0, 1, 1, 2, 3, 1, 2, 3, 1, 2, 3, 3, 4, 5, 3, 4, 5, 3, 4, 5, 5]])
    """
    merge = _size(spatial_merge_size, "spatial_merge_size")
    delta = check_scalar(temporal_stride, name="temporal_stride")
    if delta <= 0:
        raise ValueError(f"temporal_stride must be > 0, got {delta}")
    _check_like(like)
    parsed = []
    for b, layout in enumerate(_layouts(layouts)):
        segs = [_video_segment(seg, f"layouts[{b}][{i}]", merge) for i, seg in enumerate(layout)]
        if sum(n for _, n, _ in segs) > MAX_TOKENS:
            raise ValueError(f"layouts[{b}] holds more than 2**31 tokens")
        parsed.append(segs)
    _check_rows([sum(n for _, n, _ in segs) for segs in parsed], like, itemsize=8)
    rows = []
    for b, segs in enumerate(parsed):
        parts, cur = [], 0.0
        for i, (kind, n, grid) in enumerate(segs):
            if kind == "text":
                parts.append(np.broadcast_to(cur + np.arange(n, dtype=np.float64), (3, n)))
                cur += n
            elif kind == "pad":
                parts.append(np.full((3, n), float(PAD_ID)))
            else:
                t, gh, gw, _ = grid
                last = cur + delta * (t - 1)  # the grid's last time id, before allocating
                if not last <= MAX_TOKENS:  # also inf (a stride near float64's limit)
                    raise ValueError(
                        f"layouts[{b}][{i}]: the time ids of a grid of {t} frames starting at "
                        f"{cur:g} reach {last:g}, past 2**31: temporal_stride = {delta:g} is "
                        "too large"
                    )
                k, r, c = np.meshgrid(np.arange(t), np.arange(gh), np.arange(gw), indexing="ij")
                tt = cur + delta * k.reshape(-1)
                hh = tt + r.reshape(-1) - (gh - 1) // 2
                ww = tt + c.reshape(-1) - (gw - 1) // 2
                parts.append(np.stack([tt, hh, ww]))
                cur = cur + delta * (t - 1) + 1
        rows.append(np.concatenate(parts, axis=1) if parts else np.zeros((3, 0)))
    out: Tensor | FloatArray = _stack(rows, like, np.float64)
    return out


def _video_segment(seg: Any, where: str, merge: int) -> tuple[str, int, Any]:
    """A VideoRoPE segment: M-RoPE's, without Qwen2.5-VL's seconds per grid (VideoRoPE spaces
    frames by ``temporal_stride``; the M-RoPE message would name ``tokens_per_second``)."""
    if isinstance(seg, (tuple, list)) and len(seg) == 3 and seg[:1] in (("video",), ["video"]):
        raise ValueError(
            f"{where} gives seconds_per_grid ({seg[2]!r}), which videorope_position_ids does not "
            "take: its frames are temporal_stride ids apart; write the segment as "
            "('video', (t, h, w)) and set temporal_stride"
        )
    return _segment(seg, where, merge, None)


def _videorope_axes(half: int, mrope_section: Any) -> list[int]:
    """The axis (0 = t, 1 = h, 2 = w) of each pair: h, w, h, w, ... then ``s_t`` pairs of t."""
    sec = _check_section(half, mrope_section)
    spatial = sec[1] + sec[2]
    return [1 + (i % 2) for i in range(spatial)] + [0] * sec[0]


@overload
def apply_videorope(
    x: Tensor,
    position_ids: Tensor | ArrayLike,
    mrope_section: Sequence[int] = ...,
    *,
    base: float = ...,
) -> Tensor: ...
@overload
def apply_videorope(
    x: ArrayLike,
    position_ids: ArrayLike,
    mrope_section: Sequence[int] = ...,
    *,
    base: float = ...,
) -> FloatArray: ...
def apply_videorope(
    x: Tensor | ArrayLike,
    position_ids: Tensor | ArrayLike,
    mrope_section: Sequence[int] = (16, 24, 24),
    *,
    base: float = 10000.0,
) -> Tensor | FloatArray:
    """Rotate queries or keys by VideoRoPE: low frequencies to time, h and w interleaved.

    Experimental. Of the ``head_dim / 2`` rotate-half pairs (frequency
    ``w_i = base ** (-2i / head_dim)``), the first ``s_h + s_w`` alternate between the height
    id (even ``i``) and the width id (odd ``i``), and the last ``s_t`` -- the slowest -- turn
    with the temporal id. M-RoPE (:func:`posenc.apply_mrope`) gives time the *first*, fastest
    pairs. The authors' ``apply_m_modify_multimodal_rotary_pos_emb`` (Wiselnn570/VideoRoPE at
    commit 7712ca3) on Qwen2-VL, with the angles in float64.

    Parameters
    ----------
    x : array or tensor of shape (..., seq, head_dim)
        Queries or keys, floating, ``head_dim`` even.
    position_ids : array of shape (3, ..., seq)
        ``t``, ``h``, ``w`` (:func:`videorope_position_ids`), fitting ``x`` as in
        :func:`posenc.apply_mrope`.
    mrope_section : sequence of 3 ints, default (16, 24, 24)
        ``[s_t, s_h, s_w]`` summing to ``head_dim / 2`` (Qwen2-VL's config value; VideoRoPE
        reads it as "``s_t`` temporal pairs, ``s_h + s_w`` spatial pairs").
    base : float, default 10000.0
        ``rope_theta`` (Qwen2-VL checkpoints: 1e6).

    Returns
    -------
    array or tensor
        Same shape, dtype, library and device as ``x``.

    Raises
    ------
    TypeError, ValueError
        As :func:`posenc.apply_mrope`.

    References
    ----------
    Wei et al., arXiv:2502.05173 (low-frequency temporal allocation).

    Examples
    --------
    >>> import numpy as np
    >>> import posenc
    >>> q = np.ones((1, 2, 8))                          # (heads, seq, head_dim)
    >>> ids = np.array([[0.0, 2.0], [0.0, 0.0], [0.0, 0.0]])   # only t moves
    >>> np.round(posenc.apply_videorope(q, ids, [1, 2, 1], base=100.0)[0, 1], 3)
    array([1.   , 1.   , 1.   , 0.935, 1.   , 1.   , 1.   , 1.061])
    """
    arr, _ = _check_x(x)
    dim = int(arr.shape[-1])
    if dim % 2:
        raise ValueError(f"x's last axis (head_dim) must be even, got {dim}")
    axes = _videorope_axes(dim // 2, mrope_section)
    return _apply_axes(arr, position_ids, axes, check_base(base))


def _apply_axes(arr: Any, position_ids: Any, axes: list[int], base: float) -> Any:
    """Rotate-half RoPE where pair ``i`` turns with ``position_ids[axes[i]]``."""
    freqs, back = _bands(int(arr.shape[-1]), base, tuple(axes))
    pos = _check_ids(position_ids, arr)
    dtype = _work_dtype(arr)
    cos_parts, sin_parts = [], []
    for a in range(3):
        if not len(freqs[a]):
            continue
        try:
            p = _fit_positions(pos[a], arr)
        except ValueError as exc:
            raise ValueError(
                f"position_ids of shape {tuple(pos.shape)} do not fit x of shape "
                f"{tuple(arr.shape)}: position_ids[a] must fit as positions fit apply_rope "
                f"({exc})"
            ) from None
        c, s = _cos_sin(p, freqs[a], 1.0, dtype=dtype)
        cos_parts.append(c)
        sin_parts.append(s)
    cat = _cat(arr)
    cos, sin = cat(cos_parts), cat(sin_parts)
    if back is not None:
        cos, sin = cos[..., list(back)], sin[..., list(back)]
    return _rotate(arr, cos, sin, pairing="half", rotary_dim=int(arr.shape[-1]))


# --- TMRoPE (Qwen2.5-Omni) ---------------------------------------------------------------------

OMNI_KINDS = ("text", "pad", "audio", "image", "video", "video+audio")


def _chunks(times: IntArray, per_chunk: int) -> list[tuple[int, int]]:
    """Qwen2.5-Omni's ``get_chunked_index``: cut a non-decreasing run of time ids into chunks.

    A new chunk starts at the first id ``>= c * per_chunk`` for ``c = 1, 2, ...``, moving ``c``
    on by one per token: an id that jumps several chunks ahead closes one chunk per token.
    """
    out, start, c = [], 0, 1
    for i, v in enumerate(times.tolist()):
        if v >= c * per_chunk:
            out.append((start, i))
            start, c = i, c + 1
    out.append((start, len(times)))
    return out


def _omni_segment(seg: Any, where: str, merge: int, rate: float) -> tuple[str, Any]:
    if not isinstance(seg, (tuple, list)) or not seg or not isinstance(seg[0], str):
        raise TypeError(
            f"{where} must be a segment tuple such as ('text', n), ('audio', n), "
            f"('image', (t, h, w)), ('video', (t, h, w), seconds_per_grid) or "
            f"('video+audio', (t, h, w), seconds_per_grid, n_audio), got {_describe(seg)}"
        )
    kind = seg[0]
    if kind not in OMNI_KINDS:
        raise ValueError(f"{where} has an unknown kind {kind!r}; expected one of {OMNI_KINDS}")
    if kind in ("text", "pad", "audio"):
        if len(seg) != 2:
            raise ValueError(f"{where} must be ({kind!r}, n), got {seg!r}")
        return kind, _size(seg[1], f"{where} ({kind} length)")
    want = {"image": 2, "video": 3, "video+audio": 4}[kind]
    if len(seg) not in (want, want - 1) or (kind == "image" and len(seg) != 2):
        shape = {
            "image": "('image', (t, h, w))",
            "video": "('video', (t, h, w)[, seconds_per_grid])",
            "video+audio": "('video+audio', (t, h, w), seconds_per_grid, n_audio)",
        }[kind]
        raise ValueError(f"{where} must be {shape}, got {seg!r}")
    if kind == "video+audio" and len(seg) != 4:
        raise ValueError(
            f"{where} must be ('video+audio', (t, h, w), seconds_per_grid, n_audio), got {seg!r}"
        )
    _, n, (t, gh, gw, _) = _segment(("image", seg[1]), where, merge, None)
    sec = 1.0
    if kind != "image" and len(seg) >= 3:
        sec = check_scalar(seg[2], name=f"{where} seconds_per_grid")
        if sec <= 0:
            raise ValueError(f"{where} seconds_per_grid must be > 0, got {sec}")
    n_audio = _size(seg[3], f"{where} (audio length)") if kind == "video+audio" else 0
    # HF: arange(t) * float32(seconds) * rate, in float32, truncated (images: seconds 1). The
    # last frame's id is the largest (float32 rounding is monotone): checked before the int64
    # cast, where inf and nan turn into -2**63
    with np.errstate(over="ignore", invalid="ignore"):
        scale, rate32 = np.float32(sec), np.float32(rate)
        last = np.float32(t - 1) * scale * rate32
    if not np.isfinite(last):
        raise ValueError(
            f"{where}: the time ids of a grid of {t} frames, frame * seconds_per_grid * "
            f"position_id_per_seconds = {t - 1} * {sec:g}{' (an image)' if kind == 'image' else ''}"
            f" * {rate:g}, are not finite in float32 (transformers forms them in float32): pass "
            "smaller values"
        )
    if last > MAX_TOKENS:
        raise ValueError(
            f"{where}: the time ids of a grid of {t} frames reach {float(last):g}, past 2**31: "
            "seconds_per_grid * position_id_per_seconds is too large"
        )
    return kind, (t, gh, gw, scale, n, n_audio)


def _grid_ids(start: int, times: IntArray, gh: int, gw: int) -> IntArray:
    k = np.repeat(times, gh * gw)
    i = np.tile(np.repeat(np.arange(gh), gw), len(times))
    j = np.tile(np.arange(gw), len(times) * gh)
    return start + np.stack([k, i, j]).astype(np.int64)


@overload
def tmrope_position_ids(
    layouts: Sequence[Sequence[Any]],
    *,
    spatial_merge_size: int = ...,
    position_id_per_seconds: float = ...,
    seconds_per_chunk: float = ...,
    like: Tensor,
) -> Tensor: ...
@overload
def tmrope_position_ids(
    layouts: Sequence[Sequence[Any]],
    *,
    spatial_merge_size: int = ...,
    position_id_per_seconds: float = ...,
    seconds_per_chunk: float = ...,
    like: npt.NDArray[Any] | None = ...,
) -> IntArray: ...
def tmrope_position_ids(
    layouts: Sequence[Sequence[Any]],
    *,
    spatial_merge_size: int = 2,
    position_id_per_seconds: float = 25,
    seconds_per_chunk: float = 2.0,
    like: Tensor | npt.NDArray[Any] | None = None,
) -> Tensor | IntArray:
    """The ``(3, batch, seq)`` TMRoPE position ids of Qwen2.5-Omni: time-aligned audio and video.

    Experimental. The counter of M-RoPE, with time in the temporal id: text and audio tokens
    take consecutive ids (``t = h = w``; an audio token is 40 ms, one id at 25 ids/s); an image
    ``(t, h, w)`` or a video frame ``k`` of a grid starting at ``s`` takes
    ``t = s + floor(k * seconds_per_grid * position_id_per_seconds)`` and ``h = s + i``,
    ``w = s + j``; after a block the counter is its largest id + 1. A video with its audio
    (``"video+audio"``) starts both streams at one id ``s``, cuts each into chunks of
    ``position_id_per_seconds * seconds_per_chunk`` ids (2 s) and lays the tokens out video
    chunk 1, audio chunk 1, video chunk 2, ... Equal to transformers 5.23's
    ``Qwen2_5OmniPreTrainedModelForConditionalGeneration.get_rope_index`` (and the processor's
    token order).

    Parameters
    ----------
    layouts : list of layouts, one per batch row
        Lists of segments:

        * ``("text", n)``, ``("pad", n)``: text tokens, padding (ids 1, as HF leaves them);
          write the ``<|..._bos|>`` / ``<|..._eos|>`` marker of an image, audio or video
          as text;
        * ``("audio", n)``: ``n`` audio tokens (HF's count from the feature length ``L``:
          ``((L - 1) // 2 + 1 - 2) // 2 + 1``);
        * ``("image", (t, h, w))``: a grid in patches (``image_grid_thw``);
        * ``("video", (t, h, w), seconds_per_grid)``: a video without its audio
          (``video_grid_thw``, ``video_second_per_grid``; default 1.0 s);
        * ``("video+audio", (t, h, w), seconds_per_grid, n_audio)``: a video and its ``n_audio``
          audio tokens, *with* its four markers: ``<|vision_bos|><|audio_bos|>`` (one id),
          the interleaved chunks, ``<|audio_eos|><|vision_eos|>`` (one id) -- ``4 + n_video +
          n_audio`` tokens (HF ``use_audio_in_video=True``).
    spatial_merge_size : int, default 2
    position_id_per_seconds : float, default 25
        Temporal ids per second (HF config ``position_id_per_seconds``).
    seconds_per_chunk : float, default 2.0
        Seconds per interleaved chunk (HF config ``seconds_per_chunk``).
    like : tensor, optional
        Return a torch ``int64`` tensor on ``like``'s device instead of a NumPy array.

    Returns
    -------
    int64 array or tensor of shape (3, batch, seq)

    Raises
    ------
    TypeError, ValueError
        As :func:`posenc.mrope_position_ids`; a bad ``position_id_per_seconds`` or
        ``seconds_per_chunk`` (finite, > 0, chunks of at least one id).

    See Also
    --------
    apply_mrope : the rotation (``mrope_section=[16, 24, 24]``, bands).

    References
    ----------
    Xu et al., "Qwen2.5-Omni Technical Report", arXiv:2503.20215 (TMRoPE, time-interleaving).

    Examples
    --------
    >>> import posenc
    >>> lay = [("text", 1), ("audio", 3), ("text", 1), ("video", (2, 2, 2), 2.0), ("text", 1)]
    >>> posenc.tmrope_position_ids([lay], position_id_per_seconds=1)[:, 0]
    array([[0, 1, 2, 3, 4, 5, 7, 8],
           [0, 1, 2, 3, 4, 5, 5, 8],
           [0, 1, 2, 3, 4, 5, 5, 8]])
    """
    merge = _size(spatial_merge_size, "spatial_merge_size")
    rate = check_scalar(position_id_per_seconds, name="position_id_per_seconds")
    if rate <= 0:
        raise ValueError(f"position_id_per_seconds must be > 0, got {rate}")
    chunk_s = check_scalar(seconds_per_chunk, name="seconds_per_chunk")
    if chunk_s <= 0:
        raise ValueError(f"seconds_per_chunk must be > 0, got {chunk_s}")
    # ids per chunk: past 2**62 (or past float64: inf) a chunk holds every id of a row (at most
    # 2**31 tokens past ids of at most 2**31 + ...), so the cap changes no chunk
    per_chunk = int(min(rate * chunk_s, 2.0**62))
    if per_chunk < 1:
        raise ValueError(
            "position_id_per_seconds * seconds_per_chunk must be at least 1 id per chunk, got "
            f"{rate} * {chunk_s} = {rate * chunk_s}"
        )
    _check_like(like)
    parsed = []
    for b, layout in enumerate(_layouts(layouts)):
        where = f"layouts[{b}]"
        segs = [_omni_segment(seg, f"{where}[{i}]", merge, rate) for i, seg in enumerate(layout)]
        if sum(_omni_tokens(kind, val) for kind, val in segs) > MAX_TOKENS:
            raise ValueError(f"{where} holds more than 2**31 tokens")
        parsed.append(segs)
    lengths = [sum(_omni_tokens(kind, val) for kind, val in segs) for segs in parsed]
    _check_rows(lengths, like, itemsize=8)
    rows = [_omni_row(segs, rate, per_chunk) for segs in parsed]
    out: Tensor | IntArray = _stack(rows, like, np.int64)
    return out


def _omni_tokens(kind: str, val: Any) -> int:
    """The tokens of one checked TMRoPE segment (a video with its audio adds 4 markers)."""
    if kind in ("text", "pad", "audio"):
        return int(val)
    _, _, _, _, n, n_audio = val
    return int(4 + n + n_audio) if kind == "video+audio" else int(n)


def _omni_row(segs: list[tuple[str, Any]], rate: float, per_chunk: int) -> IntArray:
    """The (3, seq) ids of one layout's checked segments. ``blocks`` are what HF appends for the
    real (unpadded) tokens, in order; the counter is always the last block's largest id + 1."""
    blocks: list[IntArray] = []
    order: list[tuple[bool, Any]] = []  # (is padding, block or count) in layout order

    def counter() -> int:
        return int(blocks[-1].max()) + 1 if blocks else 0

    def add(block: IntArray) -> None:
        blocks.append(block)
        order.append((False, block))

    for kind, val in segs:
        if kind == "pad":
            order.append((True, val))
        elif kind in ("text", "audio"):
            add(np.broadcast_to(counter() + np.arange(val, dtype=np.int64), (3, val)))
        else:
            t, gh, gw, scale, n, n_audio = val
            # HF: arange(t) * float32(seconds) * rate, in float32, truncated (images: seconds 1;
            # finite and <= 2**31: _omni_segment checked the last frame)
            times = (np.arange(t, dtype=np.float32) * scale * np.float32(rate)).astype(np.int64)
            if kind != "video+audio":
                add(_grid_ids(counter(), times, gh, gw))
                continue
            start = counter()
            add(np.full((3, 2), start, dtype=np.int64))  # <|vision_bos|><|audio_bos|>: one id
            video = _grid_ids(start + 1, times, gh, gw)
            audio = np.broadcast_to(start + 1 + np.arange(n_audio, dtype=np.int64), (3, n_audio))
            vc = _chunks(video[0] - start - 1, per_chunk)
            ac = _chunks(audio[0] - start - 1, per_chunk)
            for c in range(max(len(vc), len(ac))):
                if c < len(vc):
                    add(video[:, vc[c][0] : vc[c][1]])
                if c < len(ac):
                    add(audio[:, ac[c][0] : ac[c][1]])
            add(np.full((3, 2), counter(), dtype=np.int64))  # <|audio_eos|><|vision_eos|>
    parts = [np.full((3, v), PAD_ID, dtype=np.int64) if pad else v for pad, v in order]
    return np.concatenate(parts, axis=1) if parts else np.zeros((3, 0), dtype=np.int64)

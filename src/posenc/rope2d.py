"""2-D rotary position embeddings for vision encoders: axial (Pixtral, Qwen2-VL) and RoPE-Mixed.

A patch at row ``r`` and column ``c`` of a grid rotates each pair ``k`` of its query/key
features by the angle ``r * f_k[0] + c * f_k[1]``: one frequency per axis and pair, held in a
``(dim // 2, 2)`` table whose last axis is ``(row, col)``, the same order as the positions.

* **Axial** (:func:`apply_rope_2d`): half the pairs have a row frequency only, the other half
  a column frequency only (:func:`rope_2d_frequencies`). The patch order and the frequency
  layout follow the model named by ``convention``: ``"pixtral"`` (HF
  ``PixtralVisionRotaryEmbedding``: row-major patches, one geometric ladder split between the
  axes, even rungs to rows, odd rungs to columns) or ``"qwen2_vl"`` (HF
  ``Qwen2VLVisionRotaryEmbedding`` + ``get_vision_position_ids``: patches in spatial-merge
  order, the same ladder for both axes).
* **Mixed** (:func:`apply_rope_mixed`, Heo et al. 2024): every pair has both frequencies, learned
  (:func:`rope_mixed_frequencies` gives the paper's initialisation).

The angles are formed in float64 from the positions as given, cos and sin are taken in float64
and rounded once to the working dtype (float32, or float64 for float64 input), as in
:func:`posenc.apply_rope`.
"""

from __future__ import annotations

import math
import sys
from typing import TYPE_CHECKING, Any, Literal, overload

import numpy as np

from ._array import (
    MAX_COUNT,
    _describe,
    as_positions,
    check_base,
    check_choice,
    check_length,
    check_memory,
    compiling,
    is_count,
    is_torch,
    like_spec,
    traced_constant,
)
from .rope import PAIRINGS, _check_x, _rotate, _work_dtype

if TYPE_CHECKING:
    from ._typing import ArrayLike, FloatArray, IntArray, Pairing, Tensor

__all__ = [
    "rope_2d_positions",
    "rope_2d_frequencies",
    "apply_rope_2d",
    "apply_rope_mixed",
    "rope_mixed_frequencies",
]

CONVENTIONS = ("qwen2_vl", "pixtral")
Convention = Literal["qwen2_vl", "pixtral"]


def _check_width(dim: Any, name: str = "dim") -> int:
    """A head dim for 2-D RoPE: a positive multiple of 4 (dim/4 pairs per axis)."""
    if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)):
        raise TypeError(f"{name} must be a positive multiple of 4, got {_describe(dim)}")
    dim = int(dim)
    if dim <= 0 or dim % 4 or dim > MAX_COUNT:
        raise ValueError(f"{name} must be a positive multiple of 4 (at most 2**53), got {dim}")
    return dim


# --- positions ---------------------------------------------------------------------------------


@overload
def rope_2d_positions(
    height: int,
    width: int,
    *,
    convention: Convention = ...,
    merge_size: int | None = ...,
    frames: int = ...,
    like: Tensor,
) -> Tensor: ...
@overload
def rope_2d_positions(
    height: int,
    width: int,
    *,
    convention: Convention = ...,
    merge_size: int | None = ...,
    frames: int = ...,
    like: ArrayLike | None = ...,
) -> IntArray: ...
def rope_2d_positions(
    height: int,
    width: int,
    *,
    convention: Convention = "qwen2_vl",
    merge_size: int | None = None,
    frames: int = 1,
    like: Any = None,
) -> Tensor | IntArray:
    """The (row, col) of every patch of a ``height x width`` grid, in the model's order.

    Experimental. ``convention="pixtral"`` lists the patches row by row (row-major, the order of
    ``x.flatten(2)`` on a ``(B, C, H, W)`` map), as HF ``PixtralVisionModel.forward`` does.
    ``convention="qwen2_vl"`` lists them block by block: the ``merge_size x merge_size``
    blocks that the patch merger later fuses into one token are row-major over the grid and
    each block is row-major inside, as HF ``get_vision_position_ids`` (``vision_utils``,
    transformers 5.23; formerly ``Qwen2VisionTransformerPretrainedModel.rot_pos_emb``) does.

    Parameters
    ----------
    height, width : int
        Rows and columns of the patch grid (>= 0). With ``"qwen2_vl"`` both must be multiples
        of ``merge_size`` (the model's reshape needs it).
    convention : {"qwen2_vl", "pixtral"}, default "qwen2_vl"
        Whose patch order.
    merge_size : int, optional
        ``spatial_merge_size`` of Qwen2-VL (default 2). Only for ``"qwen2_vl"``; given with
        ``"pixtral"`` it is refused.
    frames : int, default 1
        The grid is repeated ``frames`` times (the temporal grid ``t`` of a Qwen2-VL video:
        every frame gets the same spatial positions). >= 0.
    like : numpy.ndarray or torch.Tensor, optional
        Output library and device (default NumPy).

    Returns
    -------
    int64 array of shape (frames * height * width, 2)
        ``[..., 0]`` the row, ``[..., 1]`` the column.

    Raises
    ------
    TypeError, ValueError
        A size not a non-negative integer, a grid not divisible by ``merge_size``, an unknown
        ``convention``, ``merge_size`` with ``"pixtral"``, ``like`` not an array, a result of
        more bytes than the machine's memory (refused before allocating, with its size).

    References
    ----------
    Wang et al., "Qwen2-VL", arXiv:2409.12191. Mistral AI, "Pixtral 12B", arXiv:2410.07073.

    Examples
    --------
    >>> import posenc
    >>> posenc.rope_2d_positions(2, 4, convention="qwen2_vl")[:, 0]   # rows
    array([0, 0, 1, 1, 0, 0, 1, 1])
    >>> posenc.rope_2d_positions(2, 4, convention="qwen2_vl")[:, 1]   # cols
    array([0, 1, 0, 1, 2, 3, 2, 3])
    >>> posenc.rope_2d_positions(2, 4, convention="pixtral")[:, 1]
    array([0, 1, 2, 3, 0, 1, 2, 3])
    """
    height = check_length(height, name="height")
    width = check_length(width, name="width")
    frames = check_length(frames, name="frames")
    conv = check_choice(convention, name="convention", choices=CONVENTIONS)
    for name, size in (("height", height), ("width", width), ("frames", frames)):
        if size > 2**31:
            raise ValueError(f"{name} must be <= 2**31 (a grid that fits in memory), got {size}")
    if conv == "pixtral":
        if merge_size is not None:
            raise ValueError(
                f"merge_size is a Qwen2-VL setting; Pixtral lists patches row-major, so pass "
                f"merge_size=None with convention='pixtral', got {merge_size!r}"
            )
        m = 1
    else:
        m = 2 if merge_size is None else check_length(merge_size, name="merge_size")
        if m == 0 or m > 2**31:
            raise ValueError(f"merge_size must be a positive integer <= 2**31, got {m}")
        if height % m or width % m:
            raise ValueError(
                f"height and width must be multiples of merge_size ({m}) with convention="
                f"'qwen2_vl', got height={height}, width={width}"
            )
    n = height * width * frames
    if n > 2**40:
        raise ValueError(
            f"height x width x frames = {n} positions is more than 2**40: "
            "pass a grid that fits in memory"
        )
    what = f"height x width x frames = {height} x {width} x {frames} = {n} positions"
    check_memory(16 * n, what=what)  # built in NumPy first
    torch_out, device, _ = like_spec(like, None)
    if torch_out:
        check_memory(16 * n, what=what, device=device)
    rows = np.arange(height).reshape(height // m, m, 1, 1)
    cols = np.arange(width).reshape(1, 1, width // m, m)
    rows, cols = np.broadcast_arrays(rows, cols)  # (H/m, m, W/m, m)
    grid = np.stack([rows.transpose(0, 2, 1, 3), cols.transpose(0, 2, 1, 3)], axis=-1)
    out = np.tile(grid.reshape(-1, 2).astype(np.int64), (frames, 1))  # (frames * H * W, 2)
    if torch_out:
        torch = sys.modules["torch"]
        return torch.as_tensor(out, device=device)
    return out


# --- frequencies -------------------------------------------------------------------------------


def rope_2d_frequencies(
    dim: int, *, convention: Convention = "qwen2_vl", base: float = 10000.0
) -> FloatArray:
    """The ``(dim // 2, 2)`` frequency table of axial 2-D RoPE: ``[k] = (row freq, col freq)``.

    Experimental. Pairs ``0 .. dim/4 - 1`` turn with the row, pairs ``dim/4 .. dim/2 - 1`` with
    the column (the other entry is 0). ``"qwen2_vl"`` (HF
    ``Qwen2VLVisionRotaryEmbedding``): both halves use ``w_k = base ** (-4k / dim)``.
    ``"pixtral"`` (HF ``PixtralVisionRotaryEmbedding``): the 1-D ladder
    ``v_j = base ** (-2j / dim)``, ``j < dim/2``, split: rows get ``v_0, v_2, ...`` (equal to
    Qwen's ``w_k``), columns ``v_1, v_3, ...`` (half a rung lower).

    Parameters
    ----------
    dim : int
        Head dim, a positive multiple of 4.
    convention : {"qwen2_vl", "pixtral"}, default "qwen2_vl"
    base : float, default 10000.0
        ``rope_theta`` of the vision config.

    Returns
    -------
    numpy.ndarray of shape (dim // 2, 2), float64

    Raises
    ------
    TypeError, ValueError
        ``dim`` not a positive multiple of 4, a bad ``base`` or ``convention``, a table of more
        bytes than the machine's memory (refused before allocating).

    Examples
    --------
    >>> import numpy as np
    >>> import posenc
    >>> np.round(posenc.rope_2d_frequencies(8, convention="pixtral", base=100.0), 4)
    array([[1.    , 0.    ],
           [0.1   , 0.    ],
           [0.    , 0.3162],
           [0.    , 0.0316]])
    """
    dim = _check_width(dim)
    conv = check_choice(convention, name="convention", choices=CONVENTIONS)
    b = check_base(base)
    check_memory(8 * dim, what=f"dim={dim} (a {dim // 2} x 2 float64 table)")
    return _axial_table(dim, conv, b).copy()


@traced_constant
def _axial_table(dim: int, conv: str, base: float) -> FloatArray:
    """The table of :func:`rope_2d_frequencies` (checked arguments); a graph constant under
    torch.compile."""
    q = dim // 4
    if conv == "qwen2_vl":
        row = col = base ** (-np.arange(q, dtype=np.float64) * 4.0 / dim)
    else:
        ladder = base ** (-np.arange(2 * q, dtype=np.float64) * 2.0 / dim)
        row, col = ladder[0::2], ladder[1::2]
    out = np.zeros((2 * q, 2))
    out[:q, 0], out[q:, 1] = row, col
    return out


@overload
def rope_mixed_frequencies(dim: int, angles: Tensor, *, theta: float = ...) -> Tensor: ...
@overload
def rope_mixed_frequencies(dim: int, angles: ArrayLike, *, theta: float = ...) -> FloatArray: ...
def rope_mixed_frequencies(
    dim: int, angles: Tensor | ArrayLike, *, theta: float = 10.0
) -> Tensor | FloatArray:
    """RoPE-Mixed's initial frequencies (Heo et al. 2024), one ``(dim // 2, 2)`` table per angle.

    Experimental. For magnitudes ``m_k = theta ** (-4k / dim)``, ``k < dim/4``, and a direction
    ``a`` per head, the first ``dim/4`` pairs get the frequency vector
    ``m_k (cos a, sin a)`` in (col, row) and the last ``dim/4`` get ``m_k (cos(a + pi/2),
    sin(a + pi/2))``: two orthogonal directions in the image plane. This is
    ``init_random_2d_freqs`` of the paper's code (naver-ai/rope-vit, ``theta=10`` for
    RoPE-Mixed) with its random ``a = 2 pi U(0, 1)`` given here as ``angles``, and its
    ``(freqs_x, freqs_y)`` stored in posenc's ``(row, col)`` order: ``out[..., 0] = freqs_y``,
    ``out[..., 1] = freqs_x``.

    Parameters
    ----------
    dim : int
        Head dim, a positive multiple of 4.
    angles : array or tensor of shape (...,)
        The direction of each head (radians, finite). A tensor gives a tensor (float64 for
        float64 input, else the default dtype) on its device.
    theta : float, default 10.0
        Base of the magnitudes (the paper uses 10 for RoPE-Mixed, 100 for RoPE-Axial).

    Returns
    -------
    array or tensor of shape angles.shape + (dim // 2, 2)

    Raises
    ------
    TypeError, ValueError
        ``dim`` not a positive multiple of 4, ``angles`` not real or not finite, a bad
        ``theta``, a result of more bytes than the memory of the machine (or of ``angles``'
        device), refused before allocating.

    References
    ----------
    Heo et al., "Rotary Position Embedding for Vision Transformer", arXiv:2403.13298.

    Examples
    --------
    >>> import numpy as np
    >>> import posenc
    >>> np.round(posenc.rope_mixed_frequencies(8, np.array([0.0])), 4)
    array([[[0.    , 1.    ],
            [0.    , 0.3162],
            [1.    , 0.    ],
            [0.3162, 0.    ]]])
    """
    dim = _check_width(dim)
    theta = check_base(theta, name="theta")
    if is_count(angles):
        raise TypeError(
            f"angles must be an array of per-head angles, got {_describe(angles)}; "
            "wrap a single angle in an array"
        )
    ang, torch_in = as_positions(angles, name="angles")
    check_memory(2 * dim, what=f"dim={dim} ({dim // 4} float64 magnitudes)")
    if not compiling():  # tracing: the angles' size may be symbolic (check_memory skips it too)
        n_angles = int(ang.numel()) if torch_in else int(ang.size)
        what = f"dim={dim} for {n_angles} angles ({n_angles} float64 tables of {dim // 2} x 2)"
        check_memory(8 * dim * n_angles, what=what, device=ang.device if torch_in else None)
    mag = theta ** (-np.arange(0, dim, 4, dtype=np.float64) / dim)  # (dim/4,)
    if torch_in:
        torch = sys.modules["torch"]
        out_dtype = ang.dtype if ang.dtype == torch.float64 else torch.get_default_dtype()
        a = ang.to(torch.float64)[..., None]
        m = torch.as_tensor(mag, device=ang.device)
        col = torch.cat([m * torch.cos(a), m * torch.cos(a + math.pi / 2)], dim=-1)
        row = torch.cat([m * torch.sin(a), m * torch.sin(a + math.pi / 2)], dim=-1)
        return torch.stack([row, col], dim=-1).to(out_dtype)
    a = np.asarray(ang, dtype=np.float64)[..., None]
    col = np.concatenate([mag * np.cos(a), mag * np.cos(a + math.pi / 2)], axis=-1)
    row = np.concatenate([mag * np.sin(a), mag * np.sin(a + math.pi / 2)], axis=-1)
    return np.stack([row, col], axis=-1)


# --- rotation ----------------------------------------------------------------------------------


@overload
def apply_rope_2d(
    x: Tensor,
    positions: Tensor | ArrayLike,
    *,
    convention: Convention = ...,
    base: float = ...,
    pairing: Pairing = ...,
) -> Tensor: ...
@overload
def apply_rope_2d(
    x: ArrayLike,
    positions: ArrayLike,
    *,
    convention: Convention = ...,
    base: float = ...,
    pairing: Pairing = ...,
) -> FloatArray: ...
def apply_rope_2d(
    x: Tensor | ArrayLike,
    positions: Tensor | ArrayLike,
    *,
    convention: Convention = "qwen2_vl",
    base: float = 10000.0,
    pairing: Pairing = "half",
) -> Tensor | FloatArray:
    """Rotate queries or keys of image patches by their (row, col): axial 2-D RoPE.

    Experimental. Pair ``k < dim/4`` turns by ``row * f_k``, pair ``dim/4 + k`` by
    ``col * g_k`` with the frequencies of :func:`rope_2d_frequencies` for ``convention``;
    with ``pairing="half"`` pair ``k`` is features ``(k, k + dim/2)``, the ``rotate_half``
    layout of HF ``apply_rotary_pos_emb`` (Pixtral) and ``apply_rotary_pos_emb_vision``
    (Qwen2-VL). Equal to ``apply_rope_mixed(x, positions, rope_2d_frequencies(dim, ...))``.

    Parameters
    ----------
    x : array or tensor of shape (..., seq, dim)
        Queries or keys, floating; ``dim`` a positive multiple of 4.
    positions : array or tensor of shape (..., seq, 2)
        ``(row, col)`` of each patch (:func:`rope_2d_positions`), integer or float. Its
        leading axes broadcast against ``x.shape[:-1]`` the NumPy way (aligned from the
        right); the result must have ``x``'s shape. For HF Qwen2-VL's ``(seq, heads, dim)``
        queries pass ``positions[:, None]``.
    convention : {"qwen2_vl", "pixtral"}, default "qwen2_vl"
    base : float, default 10000.0
        ``rope_theta`` of the vision config.
    pairing : {"half", "interleaved"}, default "half"
        Which features form a pair; see :func:`posenc.apply_rope`.

    Returns
    -------
    array or tensor
        Same shape, dtype, library and device as ``x``.

    Raises
    ------
    TypeError, ValueError
        ``x`` not floating or of width not a multiple of 4, positions not real, not finite, not
        of shape ``(..., seq, 2)`` or not fitting ``x``, bad ``convention``, ``base`` or
        ``pairing``.

    References
    ----------
    Heo et al., "Rotary Position Embedding for Vision Transformer", arXiv:2403.13298.

    Examples
    --------
    >>> import numpy as np
    >>> import posenc
    >>> q = np.random.default_rng(0).normal(size=(2, 16, 8))   # (heads, seq, dim)
    >>> pos = posenc.rope_2d_positions(4, 4)                    # (16, 2)
    >>> posenc.apply_rope_2d(q, pos).shape
    (2, 16, 8)
    """
    arr, _ = _check_x(x)
    dim = _check_width(arr.shape[-1], name="x's last axis (dim)")
    conv = check_choice(convention, name="convention", choices=CONVENTIONS)
    table: Any = _axial_table(dim, conv, check_base(base))
    if is_torch(arr):  # a tensor already: no NumPy op for torch.compile to trace
        table = sys.modules["torch"].as_tensor(table, device=arr.device)
    return _apply(arr, positions, table, pairing)


@overload
def apply_rope_mixed(
    x: Tensor, positions: Tensor | ArrayLike, freqs: Tensor | ArrayLike, *, pairing: Pairing = ...
) -> Tensor: ...
@overload
def apply_rope_mixed(
    x: ArrayLike, positions: ArrayLike, freqs: ArrayLike, *, pairing: Pairing = ...
) -> FloatArray: ...
def apply_rope_mixed(
    x: Tensor | ArrayLike,
    positions: Tensor | ArrayLike,
    freqs: Tensor | ArrayLike,
    *,
    pairing: Pairing = "interleaved",
) -> Tensor | FloatArray:
    """Rotate queries or keys by mixed 2-D frequencies: RoPE-Mixed (Heo et al., 2024).

    Experimental. Pair ``k`` of the patch at ``(row, col)`` turns by
    ``row * freqs[k, 0] + col * freqs[k, 1]``: each pair has its own direction in the image
    plane, so the score of two patches depends on their offset along rows, columns and the
    diagonals. The frequencies are learned in the paper (``posenc.torch.RoPEMixed`` holds them
    as parameters; gradients flow through this function). The paper's code pairs features
    ``(2k, 2k+1)`` (``pairing="interleaved"``, the default).

    Parameters
    ----------
    x : array or tensor of shape (..., seq, dim)
        Queries or keys, floating, ``dim`` even.
    positions : array or tensor of shape (..., seq, 2)
        ``(row, col)`` of each patch, integer or float (see :func:`apply_rope_2d`).
    freqs : array or tensor of shape (..., dim // 2, 2)
        ``(row freq, col freq)`` of each pair; leading axes (e.g. heads) broadcast against
        ``x.shape[:-2]``. Finite real numbers. A tensor needs a tensor ``x`` on its device.
    pairing : {"interleaved", "half"}, default "interleaved"

    Returns
    -------
    array or tensor
        Same shape, dtype, library and device as ``x``.

    Raises
    ------
    TypeError, ValueError
        As :func:`apply_rope_2d`; ``freqs`` not real, not finite or not of shape
        ``(..., dim // 2, 2)``.

    References
    ----------
    Heo et al., "Rotary Position Embedding for Vision Transformer", arXiv:2403.13298.

    Examples
    --------
    >>> import numpy as np
    >>> import posenc
    >>> f = posenc.rope_mixed_frequencies(8, np.array([0.3, 1.1]))   # 2 heads
    >>> q = np.ones((2, 4, 8))                                       # (heads, seq, dim)
    >>> out = posenc.apply_rope_mixed(q, posenc.rope_2d_positions(2, 2), f)
    >>> np.round(out[1, 3, :2], 4)
    array([-0.7505,  1.1986])
    """
    arr, _ = _check_x(x)
    if arr.shape[-1] % 2:
        raise ValueError(f"x's last axis (dim) must be even to rotate pairs, got {arr.shape[-1]}")
    return _apply(arr, positions, freqs, pairing)


def _apply(x: Any, positions: Any, freqs: Any, pairing: Any) -> Any:
    pair = check_choice(pairing, name="pairing", choices=PAIRINGS)
    half = x.shape[-1] // 2
    torch_x = is_torch(x)
    pos = _check_pairs(positions, "positions", x, "(..., seq, 2)")
    f = _check_pairs(freqs, "freqs", x, f"(..., {half}, 2) (dim // 2 = {half} pairs)")
    if f.ndim < 2 or f.shape[-2] != half:
        raise ValueError(
            f"freqs must have shape (..., {half}, 2) for x of width {2 * half}, got shape "
            f"{tuple(f.shape)}"
        )
    want = tuple(x.shape[:-1]) + (half,)
    try:
        got = np.broadcast_shapes(tuple(pos.shape[:-1]) + (1,), tuple(f.shape[:-2]) + (1, half))
        fits = np.broadcast_shapes(got, want) == want
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(
            f"positions of shape {tuple(pos.shape)} and freqs of shape {tuple(f.shape)} do not "
            f"fit x of shape {tuple(x.shape)}: positions (..., seq, 2) and freqs (..., dim/2, 2) "
            "broadcast against x's leading axes from the right"
        )
    if torch_x:
        torch = sys.modules["torch"]
        p64, f64 = pos.to(torch.float64), f.to(torch.float64)
    else:
        p64, f64 = pos.astype(np.float64), f.astype(np.float64)
    # angle[..., s, k] = row_s * f[k, 0] + col_s * f[k, 1], in float64
    angle = (
        p64[..., :, None, 0] * f64[..., None, :, 0] + p64[..., :, None, 1] * f64[..., None, :, 1]
    )
    work = _work_dtype(x)
    if torch_x:
        cos, sin = torch.cos(angle).to(work), torch.sin(angle).to(work)
    else:
        cos, sin = np.cos(angle).astype(work), np.sin(angle).astype(work)
    return _rotate(x, cos, sin, pairing=pair, rotary_dim=x.shape[-1])


def _check_pairs(value: Any, name: str, x: Any, shape: str) -> Any:
    """Positions or frequencies: real, finite, last axis 2, in ``x``'s library and device."""
    if is_count(value):
        raise TypeError(
            f"{name} must be an array of shape {shape}, got {_describe(value)}"
            + (
                "; build grid positions with posenc.rope_2d_positions"
                if name == "positions"
                else ""
            )
        )
    arr, torch_in = as_positions(value, name=name)
    if torch_in and not is_torch(x):
        raise TypeError(
            f"{name} is a tensor but x is a NumPy array; pass both as tensors or both as NumPy"
        )
    if arr.ndim < 2 or arr.shape[-1] != 2:
        raise ValueError(f"{name} must have shape {shape}, got shape {tuple(arr.shape)}")
    if is_torch(x):
        torch = sys.modules["torch"]
        if torch_in:
            if arr.device != x.device:
                raise ValueError(
                    f"{name} must be on x's device ({x.device}), got a tensor on {arr.device}"
                )
        else:
            arr = torch.as_tensor(np.ascontiguousarray(arr), device=x.device)
    return arr

"""Resizing a learned position-embedding table for a new image resolution or a longer text.

A ViT learns one vector per patch of a fixed grid (plus one per prefix token such as the class
token). At another resolution the grid changes, so the table is treated as an image with ``dim``
channels and resampled (bicubic in DINO, DeiT, ViT, CLIP and SigLIP of transformers); prefix
tokens are kept as they are. The framework code reproduced is ``ViTEmbeddings.
interpolate_pos_encoding`` and ``CLIPVisionEmbeddings.interpolate_pos_encoding`` of Hugging Face
transformers.
"""

from __future__ import annotations

import math
import numbers
import sys
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from ._array import _describe, check_memory, is_torch
from ._typing import FloatArray

if TYPE_CHECKING:
    from ._typing import Tensor

__all__ = ["resize_position_embeddings"]

_MODES = ("bicubic", "bilinear", "nearest", "nearest-exact", "area")
_MAX_SIDE = 2**20


def _side(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must hold positive integers, got {_describe(value)}")
    value = int(value)
    if not 1 <= value <= _MAX_SIDE:
        raise ValueError(f"{name} must hold integers in 1 .. 2**20, got {value}")
    return value


def _grid(value: Any, name: str) -> tuple[int, ...]:
    """An int (a 1-D sequence) or a pair (rows, columns) of positive ints."""
    if isinstance(value, (tuple, list)):
        if len(value) != 2:
            raise ValueError(f"{name} must be an int or a pair (rows, cols), got {value!r}")
        return (_side(value[0], name), _side(value[1], name))
    if isinstance(value, np.ndarray) or is_torch(value):
        raise TypeError(f"{name} must be an int or a tuple (rows, cols), got {_describe(value)}")
    return (_side(value, name),)


@overload
def resize_position_embeddings(
    table: Tensor,
    new_grid: int | tuple[int, int],
    *,
    old_grid: int | tuple[int, int] | None = ...,
    num_prefix_tokens: int = ...,
    mode: str = ...,
    align_corners: bool = ...,
    antialias: bool = ...,
) -> Tensor: ...
@overload
def resize_position_embeddings(
    table: FloatArray,
    new_grid: int | tuple[int, int],
    *,
    old_grid: int | tuple[int, int] | None = ...,
    num_prefix_tokens: int = ...,
    mode: str = ...,
    align_corners: bool = ...,
    antialias: bool = ...,
) -> FloatArray: ...
def resize_position_embeddings(
    table: Tensor | FloatArray,
    new_grid: int | tuple[int, int],
    *,
    old_grid: int | tuple[int, int] | None = None,
    num_prefix_tokens: int = 1,
    mode: str = "bicubic",
    align_corners: bool = False,
    antialias: bool = False,
) -> Tensor | FloatArray:
    """Resample a learned position-embedding table to a new patch grid or length. Experimental.

    With the defaults, equal (bit for bit, in the table's dtype) to ``interpolate_pos_encoding``
    of Hugging Face transformers' ``ViTEmbeddings`` and ``CLIPVisionEmbeddings`` (and, with
    ``num_prefix_tokens=0``, ``SiglipVisionEmbeddings``): the prefix rows are kept, the grid rows
    are reshaped to ``(dim, rows, cols)`` and resampled by ``torch.nn.functional.interpolate``
    with an explicit output ``size`` (Dosovitskiy et al., 2020, arXiv:2010.11929, section 3.2).

    Parameters
    ----------
    table : float array of shape (..., num_prefix_tokens + old_rows * old_cols, dim)
        The learned table (a torch tensor, or a NumPy array, which needs torch installed). HF
        ViT stores it as ``(1, N, dim)``, CLIP as an ``nn.Embedding`` weight ``(N, dim)``.
    new_grid : int or (int, int)
        The new grid ``(rows, cols)`` (``height // patch_size, width // patch_size``), or an int
        ``L`` for a 1-D table (a longer text), resampled as a ``1 x L`` image.
    old_grid : int or (int, int) or None
        The grid the table was trained on. None: a square ``sqrt(N - num_prefix_tokens)`` for a
        pair ``new_grid`` (refused when that count is not a square), ``N - num_prefix_tokens``
        for an int ``new_grid``.
    num_prefix_tokens : int, default 1
        Leading rows kept unchanged (class token 1, DeiT's class + distillation 2, SigLIP 0).
    mode : {"bicubic", "bilinear", "nearest", "nearest-exact", "area"}, default "bicubic"
        ``torch.nn.functional.interpolate``'s mode.
    align_corners : bool, default False
        Corners-to-corners (True) or pixel centres (False, transformers and timm). Only for
        "bicubic" and "bilinear".
    antialias : bool, default False
        Low-pass filter when shrinking (timm's ``resample_abs_pos_embed`` default is True);
        only for "bicubic" and "bilinear". float16/bfloat16 are then computed in float32.

    Returns
    -------
    float array of shape (..., num_prefix_tokens + new_rows * new_cols, dim)
        Same library, dtype and device as ``table``.

    Raises
    ------
    TypeError
        ``table`` not a floating array, grid or option of the wrong kind.
    ValueError
        ``table`` too small or not matching ``old_grid``, a non-square grid count without
        ``old_grid``, ``mode`` unknown, ``align_corners``/``antialias`` with a mode that has none,
        a ``new_grid`` whose result needs more bytes than the table's device holds (refused
        before allocating, with its size).
    ImportError
        NumPy input without torch installed.

    Examples
    --------
    >>> import numpy as np
    >>> import posenc
    >>> table = np.random.default_rng(0).normal(size=(1 + 4 * 4, 8))
    >>> posenc.resize_position_embeddings(table, (6, 5)).shape
    (31, 8)
    """
    torch_in = is_torch(table)
    if torch_in:
        torch = sys.modules["torch"]
        t = table
        if not t.is_floating_point():  # type: ignore[union-attr]
            raise TypeError(f"table must be a floating tensor, got {_describe(table)}")
    else:
        if not isinstance(table, np.ndarray) or table.dtype.kind != "f":
            raise TypeError(
                f"table must be a floating NumPy array or torch tensor, got {_describe(table)}"
            )
        try:
            import torch
        except ImportError as exc:  # pragma: no cover - torch is in the test environment
            raise ImportError(
                "resize_position_embeddings needs torch for NumPy input too: pip install torch"
            ) from exc
        if table.dtype == np.longdouble and np.longdouble != np.float64:
            raise TypeError("table must be float16, float32 or float64, got float128")
        # torch reads native byte order only: a big-endian table is read in the native one
        # (same values) and the result is given back in the table's own dtype
        t = torch.from_numpy(np.ascontiguousarray(table, dtype=table.dtype.newbyteorder("=")))
    if t.ndim < 2:
        raise ValueError(f"table must have shape (..., rows, dim), got {tuple(t.shape)}")
    new = _grid(new_grid, "new_grid")
    if isinstance(num_prefix_tokens, bool) or not isinstance(num_prefix_tokens, numbers.Integral):
        raise TypeError(
            f"num_prefix_tokens must be a non-negative integer, got {_describe(num_prefix_tokens)}"
        )
    prefix = int(num_prefix_tokens)
    n_rows, dim = t.shape[-2], t.shape[-1]
    if not 0 <= prefix < n_rows:
        raise ValueError(
            f"num_prefix_tokens must be in 0 .. {n_rows - 1} (table has {n_rows} rows), got {prefix}"
        )
    count = n_rows - prefix
    if old_grid is None:
        if len(new) == 1:
            old: tuple[int, ...] = (count,)
        else:
            side = math.isqrt(count)
            if side * side != count:
                raise ValueError(
                    f"table has {count} grid rows after {prefix} prefix rows, not a square: "
                    "pass old_grid=(rows, cols)"
                )
            old = (side, side)
    else:
        old = _grid(old_grid, "old_grid")
        if len(old) != len(new):
            raise ValueError(
                f"old_grid must have the form of new_grid ({len(new)} sides), got {old_grid!r}"
            )
        if math.prod(old) != count:
            raise ValueError(
                f"old_grid {old_grid!r} holds {math.prod(old)} positions but table has {count} "
                f"rows after {prefix} prefix rows"
            )
    if len(new) == 1:  # a 1-D table: a 1 x L image
        old, new = (1, old[0]), (1, new[0])
    if not isinstance(mode, str) or mode not in _MODES:
        valid = ", ".join(repr(m) for m in _MODES)
        raise ValueError(f"mode must be one of {valid}, got {mode!r}")
    for name, flag in (("align_corners", align_corners), ("antialias", antialias)):
        if not isinstance(flag, (bool, np.bool_)):
            raise TypeError(f"{name} must be a bool, got {_describe(flag)}")
        if flag and mode not in ("bicubic", "bilinear"):
            raise ValueError(f"{name}=True needs mode 'bicubic' or 'bilinear', got mode={mode!r}")
    if dim == 0:
        raise ValueError(f"table must have at least one feature column, got {tuple(t.shape)}")
    lead = tuple(t.shape[:-2])
    batch = math.prod(lead)
    rows_out = prefix + new[0] * new[1]
    check_memory(
        batch * rows_out * dim * t.element_size(),
        what=f"new_grid {new_grid!r} (a table of {batch} x {rows_out} x {dim} {t.dtype} entries)",
        device=t.device,
    )
    flat = t.reshape(batch, n_rows, dim)
    head, grid = flat[:, :prefix], flat[:, prefix:]
    grid = grid.reshape(batch, old[0], old[1], dim).permute(0, 3, 1, 2)  # (B, dim, rows, cols)
    work = grid
    if antialias and grid.dtype in (torch.float16, torch.bfloat16):
        work = grid.float()  # no half kernel for the antialiased filters on the CPU
    kwargs: dict[str, Any] = {"size": new, "mode": mode}
    if mode in ("bicubic", "bilinear"):
        kwargs.update(align_corners=bool(align_corners), antialias=bool(antialias))
    out = torch.nn.functional.interpolate(work, **kwargs).to(grid.dtype)
    out = out.permute(0, 2, 3, 1).reshape(batch, new[0] * new[1], dim)  # (B, new rows * cols, dim)
    result = torch.cat((head, out), dim=1).reshape(*lead, prefix + new[0] * new[1], dim)
    return result if torch_in else result.numpy().astype(table.dtype, copy=False)

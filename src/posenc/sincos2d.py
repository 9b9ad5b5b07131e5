"""2-D sine-cosine position encodings for image patches (ViT / MAE style).

A patch at row ``y`` and column ``x`` of a ``height x width`` grid gets a 1-D sinusoidal
encoding of ``y`` in one half of its channels and of ``x`` in the other half. Patches are
listed row by row (row-major), the order of ``x.flatten(2)`` on a ``(B, C, H, W)`` feature map.
"""

from __future__ import annotations

import numbers
import sys
from typing import TYPE_CHECKING, Any, Literal, overload

import numpy as np

from ._array import (
    MAX_COUNT,
    MAX_SIZE,
    _describe,
    check_base,
    check_choice,
    check_length,
    like_spec,
    traced_constant,
)
from .sinusoidal import sinusoidal

if TYPE_CHECKING:
    from ._typing import DTypeLike, FloatArray, Tensor, TorchDType

__all__ = ["sincos_2d"]

AXES = ("hw", "wh")
LAYOUTS = ("per_axis", "sin_then_cos")


@overload
def sincos_2d(
    height: int,
    width: int,
    dim: int,
    *,
    base: float = ...,
    axes: Literal["hw", "wh"] = ...,
    layout: Literal["per_axis", "sin_then_cos"] = ...,
    like: Tensor,
    dtype: TorchDType | None = ...,
) -> Tensor: ...
@overload
def sincos_2d(
    height: int,
    width: int,
    dim: int,
    *,
    base: float = ...,
    axes: Literal["hw", "wh"] = ...,
    layout: Literal["per_axis", "sin_then_cos"] = ...,
    like: FloatArray | None = ...,
    dtype: DTypeLike = ...,
) -> FloatArray: ...
def sincos_2d(
    height: int,
    width: int,
    dim: int,
    *,
    base: float = 10000.0,
    axes: Literal["hw", "wh"] = "hw",
    layout: Literal["per_axis", "sin_then_cos"] = "per_axis",
    like: Any = None,
    dtype: Any = None,
) -> Tensor | FloatArray:
    """2-D sine-cosine position encodings of a patch grid (ViT/MAE style).

    Parameters
    ----------
    height : int
        Rows of the patch grid (>= 0).
    width : int
        Columns of the patch grid (>= 0).
    dim : int
        Encoding width, a positive multiple of 4: ``dim // 2`` channels per axis.
    base : float, default 10000.0
        Frequency base: ``w_k = base ** (-k / (dim // 4))``, ``k = 0 .. dim // 4 - 1``.
    axes : {"hw", "wh"}, default "hw"
        Which axis the first half of the channels encodes. ``"hw"``: the row index ``y``
        first, then the column index ``x`` (timm). ``"wh"``: ``x`` first, then ``y`` (what MAE's
        ``get_2d_sincos_pos_embed`` actually produces, and big_vision).
    layout : {"per_axis", "sin_then_cos"}, default "per_axis"
        ``"per_axis"``: ``[sin(a w), cos(a w), sin(b w), cos(b w)]`` with ``a`` the first axis
        and ``b`` the second (MAE; timm with ``interleave_sin_cos=True``). ``"sin_then_cos"``:
        ``[sin(a w), sin(b w), cos(a w), cos(b w)]`` (timm's ``build_sincos2d_pos_embed``
        default). Each block holds ``dim // 4`` channels, fastest frequency first.
    like : numpy.ndarray or torch.Tensor, optional
        Chooses the output library and device (and the dtype, when ``like`` is floating).
        Default: NumPy.
    dtype : floating dtype, optional
        Output dtype, overriding ``like``'s. Default float64 for NumPy,
        ``torch.get_default_dtype()`` for a tensor ``like`` that is not floating. A torch dtype
        needs a tensor ``like`` (the output's library and device come from ``like``).

    Returns
    -------
    array of shape (height * width, dim)
        Row ``y * width + x`` encodes the patch at row ``y``, column ``x``.

    Raises
    ------
    TypeError
        A size not an integer, ``like`` not an array, ``dtype`` not floating, or a torch
        ``dtype`` without a tensor ``like``.
    ValueError
        ``dim`` not a positive multiple of 4, a negative size or one above ``2**53``, a bad
        ``base``, unknown ``axes`` or ``layout``.

    See Also
    --------
    sinusoidal : each half is ``sinusoidal(coordinate, dim // 2, layout="concat")``.

    Notes
    -----
    With ``axes="hw"``, ``layout="per_axis"`` and ``q = dim // 4``:
    ``PE[y W + x] = [sin(y w), cos(y w), sin(x w), cos(x w)]``, ``w_k = base ** (-k / q)``.

    References
    ----------
    Dosovitskiy et al., "An Image is Worth 16x16 Words", arXiv:2010.11929.
    He et al., "Masked Autoencoders Are Scalable Vision Learners", arXiv:2111.06377.

    Examples
    --------
    >>> import numpy as np
    >>> import posenc
    >>> pe = posenc.sincos_2d(2, 3, 8)
    >>> pe.shape
    (6, 8)
    >>> np.round(pe[4], 4)                       # row 1, column 1
    array([0.8415, 0.01  , 0.5403, 1.    , 0.8415, 0.01  , 0.5403, 1.    ])
    >>> np.round(pe[2], 4)                       # row 0, column 2
    array([ 0.    ,  0.    ,  1.    ,  1.    ,  0.9093,  0.02  , -0.4161,
            0.9998])
    """
    height = check_length(height, name="height")
    width = check_length(width, name="width")
    for name, size in (("height", height), ("width", width)):
        if size > MAX_COUNT:
            raise ValueError(f"{name} must be <= 2**53 (a count of grid positions), got {size}")
    if isinstance(dim, bool) or not isinstance(dim, numbers.Integral):
        raise TypeError(f"dim must be a positive multiple of 4, got {_describe(dim)}")
    dim = int(dim)
    if dim <= 0 or dim % 4:
        raise ValueError(f"dim must be a positive multiple of 4, got {dim}")
    if dim > MAX_SIZE:
        raise ValueError(f"dim must be a positive multiple of 4 <= 2**53, got {dim}")
    base = check_base(base)
    axes = check_choice(axes, name="axes", choices=AXES)
    layout = check_choice(layout, name="layout", choices=LAYOUTS)
    torch_out, device, out_dtype = like_spec(like, dtype)
    half = dim // 2
    if torch_out:
        torch = sys.modules["torch"]
        ys, xs = torch.arange(height, device=device), torch.arange(width, device=device)
        ys = sinusoidal(ys, half, base=base, layout="concat", dtype=out_dtype)  # (H, dim/2)
        xs = sinusoidal(xs, half, base=base, layout="concat", dtype=out_dtype)  # (W, dim/2)
        ys = ys[:, None, :].expand(height, width, half)  # (H, W, dim/2)
        xs = xs[None, :, :].expand(height, width, half)
        return _assemble(ys, xs, torch.cat, height, width, dim, axes, layout)
    return _numpy_grid(height, width, dim, base, axes, layout, np.dtype(out_dtype).str)


@traced_constant
def _numpy_grid(
    height: int, width: int, dim: int, base: float, axes: str, layout: str, dtype: str
) -> FloatArray:
    """The NumPy table; under torch.compile a constant of the graph (static arguments only)."""
    half = dim // 2
    ys = sinusoidal(height, half, base=base, layout="concat", dtype=np.dtype(dtype))
    xs = sinusoidal(width, half, base=base, layout="concat", dtype=np.dtype(dtype))
    ys = np.broadcast_to(ys[:, None, :], (height, width, half))
    xs = np.broadcast_to(xs[None, :, :], (height, width, half))
    return _assemble(ys, xs, np.concatenate, height, width, dim, axes, layout)


def _assemble(
    ys: Any, xs: Any, cat: Any, height: int, width: int, dim: int, axes: str, layout: str
) -> Any:
    """The (H*W, dim) table from the per-axis halves, each (H, W, dim/2)."""
    a, b = (ys, xs) if axes == "hw" else (xs, ys)
    q = dim // 4
    if layout == "per_axis":
        parts = [a, b]
    else:
        parts = [a[..., :q], b[..., :q], a[..., q:], b[..., q:]]
    return cat(parts, -1).reshape(height * width, dim)  # (H*W, dim), row-major

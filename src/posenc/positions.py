"""Position ids from a padding mask: count only the real tokens, whichever side the padding is on.

A batch of sequences of different lengths is padded to one length. With right padding the
real tokens already sit at ``0 .. n-1``; with left padding (the usual layout for generation)
they do not, and ``arange(seq)`` would give the first real token of a short sequence a
position of 3 or 30. Counting the real tokens instead gives every sequence the positions it
would have alone.
"""

from __future__ import annotations

import numbers
import sys
import warnings
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from ._array import check_memory, compiling, is_torch

if TYPE_CHECKING:
    from ._typing import ArrayLike, IntArray, Tensor

__all__ = ["position_ids"]

_PAD_DEFAULT = 1  # posenc 0.2; becomes 0 in posenc 0.3 (see the DeprecationWarning below)
_UNSET: Any = object()  # tells "pad_value not passed" from pad_value=1


@overload
def position_ids(attention_mask: Tensor, *, pad_value: int = ...) -> Tensor: ...
@overload
def position_ids(attention_mask: ArrayLike, *, pad_value: int = ...) -> IntArray: ...
def position_ids(
    attention_mask: Tensor | ArrayLike, *, pad_value: int = _UNSET
) -> Tensor | IntArray:
    """Position ids counted over the real tokens of a padded batch (the Hugging Face convention).

    Parameters
    ----------
    attention_mask : array of shape (..., seq)
        1 (or True) for a real token, 0 (or False) for padding; NumPy array, list or torch
        tensor, of integer, float or boolean dtype, holding only 0 and 1.
    pad_value : int, default 1 (0 from posenc 0.3)
        The id written at padded slots: any valid row of a position table does, since the slot
        is masked out of attention, so the value only has to be a legal index. The default 1 is
        what Hugging Face transformers 4.x wrote; transformers 5 writes 0, and posenc 0.3 will
        default to 0. Until then a call that relies on the default with a mask that has padding
        emits a ``DeprecationWarning``: pass ``pad_value`` explicitly (1 keeps today's ids).

    Returns
    -------
    integer array of shape attention_mask.shape
        int64, in the mask's library and on its device: real tokens get ``0, 1, 2, ...``
        counted from the left over real tokens only, padded slots get ``pad_value``.

    Raises
    ------
    TypeError
        ``attention_mask`` not an array of real or boolean values, ``pad_value`` not an int.
    ValueError
        ``attention_mask`` with no sequence axis (0-d) or holding values other than 0 and 1
        (not checked on torch ``meta`` tensors, which hold no values, nor while
        ``torch.compile`` traces the call), ``pad_value`` outside int64, ids of more bytes than
        the memory of the machine (or of the mask's device; a broadcast view holds few values
        but as many ids), refused before allocating.

    Warns
    -----
    DeprecationWarning
        ``pad_value`` not passed while the mask has padding: the default changes from 1 to 0
        in posenc 0.3.

    See Also
    --------
    posenc.sinusoidal : takes these ids as its positions.

    Notes
    -----
    ``ids = cumsum(mask, axis=-1) - 1`` where ``mask == 1``, ``pad_value`` elsewhere. The
    real tokens of a left-padded row then start at 0, exactly as in the same row without
    padding.

    Examples
    --------
    >>> import numpy as np
    >>> import posenc
    >>> mask = np.array([[0, 0, 1, 1, 1],     # left padding
    ...                  [1, 1, 1, 0, 0]])    # right padding
    >>> posenc.position_ids(mask, pad_value=1)
    array([[1, 1, 0, 1, 2],
           [0, 1, 2, 1, 1]])
    >>> posenc.position_ids(mask, pad_value=0)
    array([[0, 0, 0, 1, 2],
           [0, 1, 2, 0, 0]])
    """
    torch_in = is_torch(attention_mask)
    pad_given = pad_value is not _UNSET
    if not pad_given:
        pad_value = _PAD_DEFAULT
    if isinstance(pad_value, bool) or not isinstance(pad_value, numbers.Integral):
        kind = type(pad_value).__name__
        raise TypeError(f"pad_value must be an integer, got {pad_value!r} ({kind})")
    pad_value = int(pad_value)
    if not -(2**63) <= pad_value < 2**63:
        raise ValueError(f"pad_value must fit in int64, got {pad_value}")
    mask = _as_mask(attention_mask, torch_in)
    shape = tuple(mask.shape)
    if len(shape) == 0:
        raise ValueError(
            "attention_mask must have shape (..., seq) with a sequence axis, got a 0-d array"
        )
    if not compiling():  # tracing: sizes may be symbolic (check_memory skips it too)
        entries = 1
        for size in shape:
            entries *= int(size)
        check_memory(  # an expanded / broadcast view holds few values but as many ids
            8 * entries,
            what=f"attention_mask of shape {shape} ({entries} int64 ids)",
            device=mask.device if torch_in else None,
        )
    if torch_in:
        torch = sys.modules["torch"]
        has_values = mask.device.type != "meta" and not compiling()  # tracing: no value reads
        if has_values and mask.numel():
            bad = (mask != 0) & (mask != 1)
            if bool(bad.any()):
                raise ValueError(
                    "attention_mask must hold only 0 and 1 (or False and True), "
                    f"got {mask[bad].reshape(-1)[0].item()!r}"
                )
        real = mask != 0
        if not pad_given and has_values and not bool(real.all()):
            _warn_pad_default()
        ids = torch.cumsum(real.to(torch.int64), dim=-1) - 1  # (..., seq)
        return ids.masked_fill(~real, pad_value)
    if mask.size:
        bad = (mask != 0) & (mask != 1)
        if bad.any():
            raise ValueError(
                "attention_mask must hold only 0 and 1 (or False and True), "
                f"got {mask[bad].reshape(-1)[0].item()!r}"
            )
    real = mask != 0
    if not pad_given and not real.all():
        _warn_pad_default()
    ids = np.cumsum(real, axis=-1, dtype=np.int64) - 1  # (..., seq)
    return np.where(real, ids, np.int64(pad_value))


def _warn_pad_default() -> None:
    warnings.warn(
        "position_ids: the default pad_value changes from 1 to 0 in posenc 0.3; "
        "pass pad_value explicitly (pad_value=1 keeps the current ids, pad_value=0 matches "
        "transformers 5)",
        DeprecationWarning,
        stacklevel=3,  # _warn_pad_default <- position_ids <- the caller
    )


def _as_mask(attention_mask: Any, torch_in: bool) -> Any:
    if torch_in:
        if attention_mask.is_complex():
            raise TypeError(
                "attention_mask must hold 0/1 or booleans, "
                f"got Tensor of dtype {attention_mask.dtype}"
            )
        return attention_mask
    if attention_mask is None or isinstance(attention_mask, (numbers.Number, str)):
        raise TypeError(
            "attention_mask must be an array of shape (..., seq) holding 0/1 or booleans, "
            f"got {attention_mask!r} ({type(attention_mask).__name__})"
        )
    try:
        mask = np.asarray(attention_mask)
    except Exception as exc:  # ragged lists and the like
        raise TypeError(
            "attention_mask must be an array of 0/1 or booleans, "
            f"got {type(attention_mask).__name__}"
        ) from exc
    if mask.dtype.kind not in "biuf":
        raise TypeError(
            f"attention_mask must hold 0/1 or booleans, got array of dtype {mask.dtype}"
        )
    return mask

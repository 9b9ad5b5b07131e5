"""``SinusoidalPositionalEncoding``: adds :func:`posenc.sinusoidal` to its input."""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from .._array import _describe, check_base, check_choice, check_dim, check_length
from .._typing import Layout
from ..sinusoidal import LAYOUTS, sinusoidal
from ._common import check_entries, check_input, check_offset, covers, rebuild

__all__ = ["SinusoidalPositionalEncoding"]


class SinusoidalPositionalEncoding(nn.Module):
    """Add fixed sinusoidal position encodings to ``x`` (Vaswani et al., 2017).

    The table for positions ``0 .. max_len-1`` is a non-persistent buffer: it is not in
    ``state_dict``, follows ``.to(device)``, and follows ``.half()`` / ``.double()`` /
    ``.to(dtype)`` by being computed again, exactly, in the new dtype (never by rounding the old
    table, so ``.double()`` gives a float64 table, not a widened float32 one). It starts in
    ``torch.get_default_dtype()``. A sequence that runs past ``max_len``, or an ``x`` of a
    more precise dtype than the table (float32 ``x`` with a bfloat16 table), is computed on the
    fly, exactly, in ``x``'s dtype: the table never lowers the precision of the result.

    Parameters
    ----------
    dim : int
        Model width, a positive even integer.
    max_len : int, default 2048
        Rows precomputed in the table.
    base : float, default 10000.0
        Frequency ladder base.
    layout : {"interleaved", "concat"}, default "interleaved"
        See :func:`posenc.sinusoidal`.
    dropout : float, default 0.0
        Dropout applied to ``x + PE`` (the paper uses 0.1).

    Raises
    ------
    TypeError
        ``dim`` or ``max_len`` not an integer, ``base`` or ``dropout`` not a real number.
    ValueError
        ``dim`` odd or <= 0, ``max_len`` <= 0, bad ``base`` or ``layout``, ``dropout`` outside
        ``[0, 1)``, a table of more than 2**48 entries (``max_len x dim``) or of more bytes (in
        float64) than the default device's memory (refused before allocating, with its size).

    Notes
    -----
    Built on the meta device (``with torch.device("meta")``, as ``init_empty_weights`` and
    FSDP do), the table holds no values: after ``to_empty(device=...)`` call
    ``reset_parameters()``, which computes it again. Under ``torch.compile`` and
    ``torch.export`` the module traces without graph breaks.

    Examples
    --------
    >>> import torch
    >>> from posenc.torch import SinusoidalPositionalEncoding
    >>> pe = SinusoidalPositionalEncoding(8, max_len=16)
    >>> x = torch.zeros(2, 5, 8)                 # (batch, seq, dim)
    >>> pe(x).shape
    torch.Size([2, 5, 8])
    >>> bool(torch.equal(pe(x, offset=3)[0], pe.table[3:8]))
    True
    >>> list(pe.state_dict())
    []
    >>> with torch.device("meta"):
    ...     lazy = SinusoidalPositionalEncoding(8, max_len=16)
    >>> lazy = lazy.to_empty(device=pe.table.device)
    >>> lazy.reset_parameters()
    >>> bool(torch.equal(lazy.table, pe.table))
    True
    """

    table: torch.Tensor
    dropout: nn.Dropout

    def __init__(
        self,
        dim: int,
        max_len: int = 2048,
        *,
        base: float = 10000.0,
        layout: Layout = "interleaved",
        dropout: float = 0.0,
    ) -> None:
        super().__init__()
        self.dim = check_dim(dim)
        self.max_len = check_dim(max_len, name="max_len", even=False)
        check_entries(self.max_len, self.dim, what="the table of max_len x dim")
        self.base = check_base(base)
        self.layout: Layout = check_choice(layout, name="layout", choices=LAYOUTS)  # type: ignore[assignment]
        expected = "dropout must be a probability in [0, 1)"
        if isinstance(dropout, bool) or not isinstance(dropout, numbers.Real):
            raise TypeError(f"{expected}, got {_describe(dropout)}")
        if not 0 <= float(dropout) < 1:  # also refuses nan
            raise ValueError(f"{expected}, got {dropout!r}")
        table = self._compute(torch.arange(self.max_len), torch.get_default_dtype())
        self.register_buffer("table", table, persistent=False)
        self.dropout = nn.Dropout(float(dropout))

    def _compute(self, positions: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
        return sinusoidal(positions, self.dim, base=self.base, layout=self.layout, dtype=dtype)

    def reset_parameters(self) -> None:
        """Compute the table again, exactly, in its dtype and on its device.

        The buffer holds no values after ``to_empty`` (meta-device initialisation); this fills it.
        """
        positions = torch.arange(self.max_len, device=self.table.device)
        rebuild(self, "table", self._compute(positions, self.table.dtype))

    def _apply(self, fn: Callable[[torch.Tensor], torch.Tensor], recurse: bool = True) -> Any:
        # a dtype change computes the table again: a float32 table cast to float64 would keep
        # float32's rounding, and one cast to bfloat16 and back would keep bfloat16's
        before = self.table.dtype
        super()._apply(fn, recurse)
        if self.table.dtype != before:
            self.reset_parameters()
        return self

    def encodings(
        self, seq_len: int, offset: int = 0, *, dtype: torch.dtype | None = None
    ) -> torch.Tensor:
        """The ``(seq_len, dim)`` encodings of positions ``offset .. offset+seq_len-1``.

        On the table's device, in ``dtype`` (default: the table's). Rows of the table when they
        are inside it and the table's dtype is at least as precise as ``dtype``; else computed,
        exactly, in ``dtype``.

        Raises
        ------
        TypeError
            ``seq_len`` or ``offset`` not an integer, ``dtype`` not a floating torch.dtype.
        ValueError
            ``seq_len`` negative; positions outside int64.
        """
        seq_len = check_length(seq_len, name="seq_len")
        check_entries(
            seq_len, self.dim, what="the encodings of seq_len x dim", device=self.table.device
        )
        offset = check_offset(offset, seq_len)
        if dtype is None:
            dtype = self.table.dtype
        elif not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
            raise TypeError(f"dtype must be a floating torch.dtype or None, got {dtype!r}")
        if 0 <= offset and offset + seq_len <= self.max_len and covers(self.table.dtype, dtype):
            return self.table[offset : offset + seq_len].to(dtype)
        positions = torch.arange(offset, offset + seq_len, device=self.table.device)
        return self._compute(positions, dtype)

    def forward(self, x: torch.Tensor, offset: int = 0) -> torch.Tensor:
        """Return ``dropout(x + PE[offset : offset + seq])`` for ``x`` of shape ``(..., seq, dim)``.

        ``x`` is a floating tensor (float16, bfloat16, float32 or float64) on the module's
        device; the encodings are added in ``x``'s dtype, at ``x``'s precision.

        Raises
        ------
        TypeError
            ``x`` not a floating tensor (integer, bool, complex, a NumPy array), ``offset`` not
            an integer.
        ValueError
            ``x`` of the wrong shape or on another device than the module; positions outside
            int64.
        """
        x = check_input(x, name="x", dim=self.dim)
        if x.device != self.table.device:
            raise ValueError(
                f"x is on {x.device} but the module's table is on {self.table.device}; move the "
                f"module with .to({str(x.device)!r})"
            )
        pe = self.encodings(x.shape[-2], offset, dtype=x.dtype)  # (seq, dim)
        return self.dropout(x + pe)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, max_len={self.max_len}, base={self.base}, layout={self.layout!r}"

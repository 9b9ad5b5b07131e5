"""``SinusoidalPositionalEncoding``: adds :func:`posenc.sinusoidal` to its input."""

from __future__ import annotations

import numbers

import torch
from torch import nn

from .._array import check_base, check_choice, check_dim
from ..sinusoidal import LAYOUTS, sinusoidal

__all__ = ["SinusoidalPositionalEncoding"]


class SinusoidalPositionalEncoding(nn.Module):
    """Add fixed sinusoidal position encodings to ``x`` (Vaswani et al., 2017).

    The table for positions ``0 .. max_len-1`` is a non-persistent buffer: it is not in
    ``state_dict`` and follows ``.to(device)`` and ``.half()``. A sequence that runs past
    ``max_len`` is computed on the fly, exactly, rather than refused or truncated.

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
    """

    def __init__(self, dim, max_len=2048, *, base=10000.0, layout="interleaved", dropout=0.0):
        super().__init__()
        self.dim = check_dim(dim)
        self.max_len = check_dim(max_len, name="max_len", even=False)
        self.base = check_base(base)
        self.layout = check_choice(layout, name="layout", choices=LAYOUTS)
        if isinstance(dropout, bool) or not isinstance(dropout, numbers.Real) or not 0 <= dropout < 1:
            raise ValueError(f"dropout must be a probability in [0, 1), got {dropout!r}")
        table = sinusoidal(torch.arange(self.max_len), self.dim, base=base, layout=layout)
        self.register_buffer("table", table, persistent=False)
        self.dropout = nn.Dropout(dropout)

    def encodings(self, seq_len: int, offset: int = 0) -> torch.Tensor:
        """The ``(seq_len, dim)`` encodings of positions ``offset .. offset+seq_len-1``."""
        if isinstance(offset, bool) or not isinstance(offset, numbers.Integral):
            raise TypeError(f"offset must be an integer, got {offset!r}")
        offset = int(offset)
        if 0 <= offset and offset + seq_len <= self.max_len:
            return self.table[offset : offset + seq_len]
        positions = torch.arange(offset, offset + seq_len, device=self.table.device)
        return sinusoidal(positions, self.dim, base=self.base, layout=self.layout, dtype=self.table.dtype)

    def forward(self, x: torch.Tensor, offset: int = 0) -> torch.Tensor:
        """Return ``dropout(x + PE[offset : offset + seq])`` for ``x`` of shape ``(..., seq, dim)``."""
        if x.dim() < 2 or x.shape[-1] != self.dim:
            raise ValueError(
                f"x must have shape (..., seq, {self.dim}) (last dim = the module's dim), "
                f"got shape {tuple(x.shape)}"
            )
        pe = self.encodings(x.shape[-2], offset)  # (seq, dim)
        return self.dropout(x + pe.to(x.dtype))

    def extra_repr(self) -> str:
        return f"dim={self.dim}, max_len={self.max_len}, base={self.base}, layout={self.layout!r}"

"""``LearnedPositionalEmbedding``: a trained table with one row per position (BERT, GPT-2, OPT)."""

from __future__ import annotations

import numbers
from typing import NoReturn

import torch
from torch import nn
from torch.nn import functional as F

from .._array import check_dim, check_scalar
from ._common import check_entries, check_input, check_offset, is_compiling

__all__ = ["LearnedPositionalEmbedding"]


class PositionOutOfRangeError(ValueError, IndexError):
    """A position with no row in a learned table (both a ValueError and an IndexError)."""


class LearnedPositionalEmbedding(nn.Module):
    """Learned absolute position embeddings (BERT, GPT-2; fairseq/BART/OPT with ``padding_idx``).

    One trainable ``dim``-vector per position ``0 .. max_len-1``, initialised from
    ``normal(0, init_std)`` (0.02 as in BERT and GPT-2) and added to the input. Unlike
    ``SinusoidalPositionalEncoding`` there is nothing to compute for a position the table
    has no row for: asking for one raises an error that says so.

    Parameters
    ----------
    max_len : int
        Number of positions with a row, a positive integer.
    dim : int
        Embedding width, a positive integer.
    padding_idx : int, optional
        The fairseq convention that BART and OPT checkpoints keep: the table gets
        ``padding_idx + 1`` extra rows in front, ``max_len + padding_idx + 1`` in all, and
        position ``p`` reads row ``p + padding_idx + 1`` (OPT and BART: ``padding_idx=1``, so
        2 extra rows and position 0 in row 2). Row ``padding_idx`` starts at zero; the rows
        in front are never read by ``forward`` or ``embed``. A non-negative integer.
    init_std : float, default 0.02
        Standard deviation of the initial values, a finite number ``>= 0``.

    Attributes
    ----------
    weight : torch.nn.Parameter of shape (max_len + first_row, dim)
        The table; the ``state_dict`` key is ``weight``, as in ``nn.Embedding``.
    first_row : int
        The row of position 0: ``0``, or ``padding_idx + 1``.

    Raises
    ------
    TypeError
        ``max_len``, ``dim`` or ``padding_idx`` not an integer, ``init_std`` not a real number.
    ValueError
        ``max_len`` or ``dim`` <= 0, ``padding_idx`` negative, ``init_std`` negative or not
        finite, a table of more than 2**48 entries or of more bytes than the default device's
        memory (refused before allocating, with its size).

    See Also
    --------
    SinusoidalPositionalEncoding : the fixed encoding, defined at every position.
    posenc.position_ids : positions of a padded batch, for ``embed``.

    Notes
    -----
    ``out[..., t, :] = x[..., t, :] + W[first_row + offset + t]``.

    References
    ----------
    Devlin et al., "BERT", arXiv:1810.04805. Zhang et al., "OPT", arXiv:2205.01068.

    Examples
    --------
    >>> import torch
    >>> from posenc.torch import LearnedPositionalEmbedding
    >>> pe = LearnedPositionalEmbedding(16, 8)
    >>> pe.weight.shape
    torch.Size([16, 8])
    >>> x = torch.zeros(2, 5, 8)                   # (batch, seq, dim)
    >>> pe(x).shape
    torch.Size([2, 5, 8])
    >>> bool(torch.equal(pe(x, offset=3)[0], pe.weight[3:8]))
    True
    >>> opt_like = LearnedPositionalEmbedding(512, 8, padding_idx=1)
    >>> opt_like.weight.shape, opt_like.first_row
    (torch.Size([514, 8]), 2)
    >>> bool(torch.equal(opt_like.embed(torch.tensor([0, 1])), opt_like.weight[2:4]))
    True
    """

    def __init__(
        self, max_len: int, dim: int, *, padding_idx: int | None = None, init_std: float = 0.02
    ) -> None:
        super().__init__()
        self.max_len = check_dim(max_len, name="max_len", even=False)
        self.dim = check_dim(dim, even=False)
        if padding_idx is not None:
            expected = "padding_idx must be None or a non-negative integer"
            if isinstance(padding_idx, bool) or not isinstance(padding_idx, numbers.Integral):
                raise TypeError(f"{expected}, got {padding_idx!r}")
            if padding_idx < 0:
                raise ValueError(f"{expected}, got {padding_idx}")
            padding_idx = int(padding_idx)
        self.padding_idx = padding_idx
        self.first_row = 0 if padding_idx is None else padding_idx + 1
        rows = "max_len" if padding_idx is None else "max_len + padding_idx + 1 rows"
        check_entries(
            self.first_row + self.max_len,
            self.dim,
            what=f"the table of {rows} x dim",
            itemsize=torch.get_default_dtype().itemsize,
        )
        self.init_std = check_scalar(init_std, name="init_std")
        if self.init_std < 0:
            raise ValueError(f"init_std must be a finite number >= 0, got {self.init_std}")
        self.weight = nn.Parameter(torch.empty(self.first_row + self.max_len, self.dim))
        self.reset_parameters()

    @property
    def num_embeddings(self) -> int:
        """Rows in the table: ``max_len + first_row``."""
        return self.first_row + self.max_len

    def reset_parameters(self) -> None:
        """Draw the table again from ``normal(0, init_std)``; row ``padding_idx`` to zero.

        Also what to call after meta-device initialisation (``to_empty(device=...)``): with the
        same random seed, the table equals that of a module built directly on the device.
        """
        with torch.no_grad():
            nn.init.normal_(self.weight, mean=0.0, std=self.init_std)
            if self.padding_idx is not None:
                self.weight[self.padding_idx].zero_()

    def embed(self, positions: torch.Tensor) -> torch.Tensor:
        """The ``positions.shape + (dim,)`` rows of the given positions (any shape, integer).

        ``positions`` holds positions ``0 .. max_len-1`` (for a padded batch, e.g. from
        ``posenc.position_ids``), in any integer dtype (``uint8`` too: positions, never a
        mask); it is moved to the table's device. A position without a row raises
        ``PositionOutOfRangeError`` (a ValueError); under ``torch.compile`` / ``torch.export``
        the same test runs inside the graph (``torch._assert_async``, a RuntimeError).
        """
        if not isinstance(positions, torch.Tensor):
            raise TypeError(
                f"positions must be an integer torch.Tensor, got {type(positions).__name__}"
                + (f" of dtype {positions.dtype}" if hasattr(positions, "dtype") else "")
            )
        if positions.is_floating_point() or positions.is_complex() or positions.dtype == torch.bool:
            raise TypeError(f"positions must be an integer tensor, got dtype {positions.dtype}")
        if positions.device.type == "meta" and self.weight.device.type != "meta":
            raise ValueError(
                f"positions is on the meta device (no values) but the table is on "
                f"{self.weight.device}; pass positions with values"
            )
        positions = positions.to(self.weight.device)
        if is_compiling():  # reading the values would be a data-dependent branch: test in-graph
            wide = positions.to(torch.int64)  # uint64 past 2**63 wraps negative: refused too
            inside = (wide >= 0) & (wide < self.max_len)
            torch._assert_async(
                inside.all(),
                f"positions must lie in 0 .. {self.max_len - 1} (max_len={self.max_len})",
            )
        elif positions.device.type != "meta" and positions.numel():
            # uint16/32/64 have no min/max on every device; uint64 past 2**63 would wrap in int64
            wide = positions.to(torch.float64 if positions.dtype == torch.uint64 else torch.int64)
            lo, hi = int(wide.min()), int(wide.max())
            if lo < 0:
                self._out_of_range(lo)
            if hi >= self.max_len:
                self._out_of_range(hi)
        return F.embedding(positions.to(torch.int64) + self.first_row, self.weight)

    def forward(
        self, x: torch.Tensor, offset: int = 0, *, positions: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Return ``x + W[offset : offset + seq]`` for ``x`` of shape ``(..., seq, dim)``.

        With ``positions`` (an integer tensor broadcastable to ``x.shape[:-1]``, e.g. from
        ``posenc.position_ids`` for a left-padded batch) the rows of those positions are
        added instead, and ``offset`` must stay 0. ``x`` is a floating tensor (float16,
        bfloat16, float32 or float64); the rows are added in its dtype.

        Raises
        ------
        TypeError
            ``x`` not a floating tensor (integer, bool, complex, a NumPy array), ``offset`` not
            an integer, ``positions`` not an integer tensor.
        ValueError
            ``x`` of the wrong shape, positions without a row (``PositionOutOfRangeError``),
            both ``offset`` and ``positions``, ``positions`` that do not broadcast to
            ``x.shape[:-1]``.
        """
        x = check_input(x, name="x", dim=self.dim)
        if x.device != self.weight.device:
            raise ValueError(
                f"x is on {x.device} but the module's table is on {self.weight.device}; move the "
                f"module with .to({str(x.device)!r})"
            )
        offset = check_offset(offset, x.shape[-2])
        if positions is not None:
            if offset:
                raise ValueError(f"pass offset or positions, not both (got offset={offset})")
            emb = self.embed(positions)  # (..., seq, dim)
            try:
                out_shape = torch.broadcast_shapes(emb.shape, x.shape)
            except RuntimeError:
                out_shape = None
            if out_shape != x.shape:
                raise ValueError(
                    "positions must have a shape broadcastable to x.shape[:-1] = "
                    f"{tuple(x.shape[:-1])}, got shape {tuple(positions.shape)}"
                )
            return x + emb.to(x.dtype)
        seq = x.shape[-2]
        if seq:
            if offset < 0:
                self._out_of_range(offset, offset=offset, seq=seq)
            if offset + seq > self.max_len:
                self._out_of_range(offset + seq - 1, offset=offset, seq=seq)
        start = self.first_row + offset
        return x + self.weight[start : start + seq].to(x.dtype)  # (seq, dim) broadcast over ...

    def _out_of_range(
        self, position: int, *, offset: int | None = None, seq: int | None = None
    ) -> NoReturn:
        where = "" if offset is None else f" (offset={offset}, seq={seq})"
        if position < 0:
            raise PositionOutOfRangeError(
                f"position {position}{where} is negative: this LearnedPositionalEmbedding has "
                f"rows for positions 0 .. {self.max_len - 1} (max_len={self.max_len}); "
                "count positions from 0"
            )
        raise PositionOutOfRangeError(
            f"position {position}{where} is past the table: max_len={self.max_len} gives rows "
            f"for positions 0 .. {self.max_len - 1} only, and a learned table has nothing for a "
            "position it never had a row for. Build the module with a larger max_len (and "
            "train the new rows), shorten or split the input, or use an encoding defined at "
            "every position (posenc.torch.SinusoidalPositionalEncoding)"
        )

    def extra_repr(self) -> str:
        pad = "" if self.padding_idx is None else f", padding_idx={self.padding_idx}"
        return f"max_len={self.max_len}, dim={self.dim}{pad}, init_std={self.init_std}"

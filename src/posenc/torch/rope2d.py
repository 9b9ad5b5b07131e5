"""``RoPEMixed``: 2-D rotary embedding with learned mixed frequencies (Heo et al., 2024)."""

from __future__ import annotations

import math

import torch
from torch import nn

from .._array import MAX_SIZE, check_base, check_choice, check_dim
from .._typing import ArrayLike, Pairing
from ..rope import PAIRINGS
from ..rope2d import _check_width, apply_rope_mixed, rope_mixed_frequencies
from ._common import check_entries

__all__ = ["RoPEMixed"]


class RoPEMixed(nn.Module):
    """RoPE-Mixed: each head's pairs rotate by ``row * f[k, 0] + col * f[k, 1]``, ``f`` learned.

    Experimental. Holds the parameter ``freqs`` of shape ``(num_heads, dim // 2, 2)``
    (``(row, col)`` frequency of each pair, per head) and calls
    :func:`posenc.apply_rope_mixed`. One module per attention layer: the paper learns a table per
    layer and head. Gradients reach ``freqs`` through the float64 angles.

    Parameters
    ----------
    dim : int
        Head dim, a positive multiple of 4.
    num_heads : int
        Number of heads, each with its own frequencies.
    theta : float, default 10.0
        Base of the initial magnitudes (the paper's ``rope_theta`` for RoPE-Mixed).
    rotate : bool, default True
        Initialise each head with a random direction (the paper); False: direction 0 for all.
    pairing : {"interleaved", "half"}, default "interleaved"
        Feature pairs; the paper's code uses ``(2k, 2k+1)``.

    Raises
    ------
    TypeError, ValueError
        ``dim`` not a positive multiple of 4, ``num_heads`` not a positive integer, a bad
        ``theta``, ``rotate`` not a bool, a bad ``pairing``, a table of more than 2**48 entries.

    Notes
    -----
    ``reset_parameters`` follows ``init_random_2d_freqs`` of the paper's code
    (naver-ai/rope-vit): per head an angle ``a = 2 pi U(0, 1)`` drawn from torch's global
    generator (0 when ``rotate=False``), then :func:`posenc.rope_mixed_frequencies`: magnitudes
    ``theta ** (-4k / dim)`` along the directions ``a`` and ``a + pi/2``. Built under
    ``torch.device("meta")``, ``to_empty(device=...)`` then ``reset_parameters()`` initialises it.

    References
    ----------
    Heo et al., "Rotary Position Embedding for Vision Transformer", arXiv:2403.13298.

    Examples
    --------
    >>> import torch
    >>> import posenc
    >>> from posenc.torch import RoPEMixed
    >>> rope = RoPEMixed(16, 4)
    >>> q = torch.randn(2, 4, 9, 16)                       # (batch, heads, seq, dim)
    >>> pos = posenc.rope_2d_positions(3, 3, convention="pixtral")
    >>> tuple(rope(q, pos).shape), tuple(rope.freqs.shape)
    ((2, 4, 9, 16), (4, 8, 2))
    """

    freqs: nn.Parameter

    def __init__(
        self,
        dim: int,
        num_heads: int,
        *,
        theta: float = 10.0,
        rotate: bool = True,
        pairing: Pairing = "interleaved",
    ) -> None:
        super().__init__()
        self.dim = _check_width(dim)
        num_heads = check_dim(num_heads, name="num_heads", even=False, maximum=MAX_SIZE)
        check_entries(num_heads, self.dim, what="freqs = num_heads x dim")
        self.num_heads = int(num_heads)
        self.theta = check_base(theta, name="theta")
        if not isinstance(rotate, bool):
            raise TypeError(f"rotate must be a bool, got {rotate!r} ({type(rotate).__name__})")
        self.rotate = rotate
        self.pairing: Pairing = check_choice(pairing, name="pairing", choices=PAIRINGS)  # type: ignore[assignment]
        self.freqs = nn.Parameter(torch.empty(self.num_heads, self.dim // 2, 2))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw the initial frequencies as the paper does (see Notes)."""
        if self.freqs.device.type == "meta":
            return
        with torch.no_grad():
            if self.rotate:
                angles = torch.rand(self.num_heads, dtype=torch.float64) * (2 * math.pi)
            else:
                angles = torch.zeros(self.num_heads, dtype=torch.float64)
            table = rope_mixed_frequencies(self.dim, angles, theta=self.theta)
            self.freqs.copy_(table.to(self.freqs.dtype))

    def forward(self, x: torch.Tensor, positions: torch.Tensor | ArrayLike) -> torch.Tensor:
        """Rotate ``x`` of shape ``(batch, num_heads, seq, dim)`` (or ``(num_heads, seq, dim)``)
        by patch ``positions`` of shape ``(..., seq, 2)`` (``(row, col)``, see
        :func:`posenc.rope_2d_positions`)."""
        if not isinstance(x, torch.Tensor):
            raise TypeError(
                f"x must be a floating tensor of shape (..., num_heads, seq, {self.dim}), got "
                f"{type(x).__name__}"
            )
        if x.dim() < 3 or x.shape[-1] != self.dim or x.shape[-3] != self.num_heads:
            raise ValueError(
                f"x must have shape (..., {self.num_heads}, seq, {self.dim}) (heads, seq, dim of "
                f"the module), got shape {tuple(x.shape)}"
            )
        out: torch.Tensor = apply_rope_mixed(x, positions, self.freqs, pairing=self.pairing)
        return out

    def extra_repr(self) -> str:
        return f"dim={self.dim}, num_heads={self.num_heads}, theta={self.theta}"

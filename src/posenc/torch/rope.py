"""``RotaryEmbedding``: rotates queries and keys with a cached, exact cos/sin table."""

from __future__ import annotations

import numbers

import torch
from torch import nn

from .._array import check_choice, check_dim
from ..rope import PAIRINGS, _cos_sin, _fit_positions, _rotary_dim, _rotate, rope_frequencies

__all__ = ["RotaryEmbedding"]


class RotaryEmbedding(nn.Module):
    """Rotary position embedding of queries and keys (Su et al., 2021), with a cos/sin cache.

    cos and sin of positions ``0 .. max_len-1`` are computed once, exactly (float64 angles, see
    :func:`posenc.apply_rope`), and kept as non-persistent buffers ``cos_cached`` and
    ``sin_cached`` of shape ``(max_len, rotary_dim // 2)``: not in ``state_dict``; they follow
    ``.to(device)``, but stay float32 under ``.half()`` / ``.to(bfloat16)`` (recomputed exactly),
    so half-precision rotations stay correctly rounded. Positions that fit the cache are looked up; others
    (past ``max_len``, negative, fractional, or any positions on the meta device) are computed on
    the fly with the same exact formula. float64 input never uses a lower-precision cache.

    Parameters
    ----------
    dim : int
        Head dim: the last axis of ``q`` and ``k``.
    base : float, default 10000.0
        Frequency base (HF ``rope_theta``).
    pairing : {"interleaved", "half"}, default "interleaved"
        See :func:`posenc.apply_rope`.
    scaling : dict, optional
        HF-style ``rope_scaling``; see :func:`posenc.rope_frequencies`.
    max_len : int, default 2048
        Positions held in the cache.
    rotary_dim : int, optional
        Rotate only the first ``rotary_dim`` features (default: all ``dim``).
    seq_len : int, optional
        The sequence length the ``"dynamic"`` / ``"longrope"`` frequencies are computed for
        (fixed for the module's life; default: the trained length).

    Notes
    -----
    Dynamic NTK and KV caches: dynamic scaling makes the frequencies depend on the current
    length, so keys rotated and cached at one length and queries rotated at a longer one use
    different bases, and the score no longer depends on ``m - n`` alone. HF's
    ``LlamaRotaryEmbedding`` recomputes its frequencies whenever ``max(position_ids) + 1``
    grows past the length it last saw, which is exactly that mix during generation. This
    module keeps one set of frequencies (for ``seq_len``) for its whole life; to change them,
    build a new module and re-rotate the cached keys.

    Examples
    --------
    >>> import torch
    >>> from posenc.torch import RotaryEmbedding
    >>> rope = RotaryEmbedding(16, max_len=32, pairing="half")
    >>> q = torch.randn(2, 4, 10, 16)          # (batch, heads, seq, dim)
    >>> k = torch.randn(2, 1, 10, 16)          # grouped-query: fewer key heads
    >>> q_rot, k_rot = rope(q, k)
    >>> tuple(q_rot.shape), tuple(k_rot.shape)
    ((2, 4, 10, 16), (2, 1, 10, 16))
    >>> q1, _ = rope(q[:, :, -1:], k[:, :, -1:], offset=9)   # one decoding step
    >>> bool(torch.allclose(q1, q_rot[:, :, -1:]))
    True
    >>> list(rope.state_dict())
    []
    """

    def __init__(
        self,
        dim,
        *,
        base=10000.0,
        pairing="interleaved",
        scaling=None,
        max_len=2048,
        rotary_dim=None,
        seq_len=None,
    ):
        super().__init__()
        self.dim = check_dim(dim, even=rotary_dim is None)
        self.rotary_dim = _rotary_dim(rotary_dim, self.dim, what="dim")
        self.pairing = check_choice(pairing, name="pairing", choices=PAIRINGS)
        self.max_len = check_dim(max_len, name="max_len", even=False)
        inv_freq, factor = rope_frequencies(self.rotary_dim, base=base, scaling=scaling, seq_len=seq_len)
        self.base = float(base)
        self.scaling = None if scaling is None else dict(scaling)
        self.inv_freq = inv_freq  # float64 NumPy: not a buffer, so .half() cannot round it
        self.attention_factor = factor
        cos, sin = _cos_sin(torch.arange(self.max_len), inv_freq, factor)  # default device
        dtype = torch.get_default_dtype()
        self.register_buffer("cos_cached", cos.to(dtype), persistent=False)
        self.register_buffer("sin_cached", sin.to(dtype), persistent=False)

    def cos_sin(self, x: torch.Tensor, positions=None, offset: int = 0):
        """cos and sin for ``x`` of shape ``(..., seq, dim)``, shaped ``(..., seq, rotary_dim // 2)``."""
        if positions is None:
            if isinstance(offset, bool) or not isinstance(offset, numbers.Integral):
                raise TypeError(f"offset must be an integer, got {offset!r}")
            offset, seq = int(offset), x.shape[-2]
            if 0 <= offset and offset + seq <= self.max_len and self._cache_ok(x):
                return self.cos_cached[offset : offset + seq], self.sin_cached[offset : offset + seq]
            positions = torch.arange(offset, offset + seq, device=x.device)
        elif not (isinstance(offset, numbers.Integral) and not isinstance(offset, bool) and offset == 0):
            raise ValueError(f"pass positions or offset, not both (got offset={offset!r})")
        pos = _fit_positions(positions, x)
        if (
            self._cache_ok(x)
            and not pos.is_floating_point()
            and pos.device.type != "meta"
            and pos.numel()
            and bool(((pos >= 0) & (pos < self.max_len)).all())
        ):
            return self.cos_cached[pos], self.sin_cached[pos]
        return _cos_sin(pos, self.inv_freq, self.attention_factor)

    def _apply(self, fn, recurse=True):
        # .half() / .to(bfloat16) would round the cache and with it every rotation: keep cos/sin
        # in float32 (recomputed exactly from the float64 angles), and follow device moves only
        super()._apply(fn, recurse)
        if self.cos_cached.dtype not in (torch.float32, torch.float64):
            positions = torch.arange(self.max_len, device=self.cos_cached.device)
            cos, sin = _cos_sin(positions, self.inv_freq, self.attention_factor)
            self.cos_cached, self.sin_cached = cos.to(torch.float32), sin.to(torch.float32)
        return self

    def _cache_ok(self, x):
        # the cache must be on x's device and as precise as the rotation of x needs
        work = torch.float64 if x.dtype == torch.float64 else torch.float32
        return self.cos_cached.device == x.device and self.cos_cached.dtype in (work, x.dtype)

    def forward(self, q: torch.Tensor, k: torch.Tensor, positions=None, offset: int = 0):
        """Rotate ``q`` and ``k`` of shape ``(..., seq, dim)`` (same seq) by their positions.

        ``positions`` (see :func:`posenc.apply_rope` for shapes) defaults to
        ``offset .. offset + seq - 1``; pass one or the other. Returns ``(q_rot, k_rot)`` with
        the shapes and dtypes of ``q`` and ``k``.
        """
        for name, t in (("q", q), ("k", k)):
            if not isinstance(t, torch.Tensor) or not t.is_floating_point():
                raise TypeError(f"{name} must be a floating tensor, got {type(t).__name__}")
            if t.dim() < 2 or t.shape[-1] != self.dim:
                raise ValueError(
                    f"{name} must have shape (..., seq, {self.dim}) (last dim = the module's dim), "
                    f"got shape {tuple(t.shape)}"
                )
        if q.shape[-2] != k.shape[-2]:
            raise ValueError(
                f"q and k must have the same seq length (they share positions), got {q.shape[-2]} and {k.shape[-2]}"
            )
        if q.device != k.device:
            raise ValueError(f"q and k must be on one device, got {q.device} and {k.device}")
        cos, sin = self.cos_sin(q, positions, offset)
        if positions is not None and k.shape[:-1] != q.shape[:-1]:
            cos_k, sin_k = self.cos_sin(k, positions, offset)
        else:
            cos_k, sin_k = cos, sin
        q_rot = _rotate(q, cos, sin, pairing=self.pairing, rotary_dim=self.rotary_dim)
        k_rot = _rotate(k, cos_k, sin_k, pairing=self.pairing, rotary_dim=self.rotary_dim)
        return q_rot, k_rot

    def extra_repr(self) -> str:
        rope_type = "default" if self.scaling is None else self.scaling.get("rope_type", self.scaling.get("type"))
        return (
            f"dim={self.dim}, rotary_dim={self.rotary_dim}, base={self.base}, pairing={self.pairing!r}, "
            f"scaling={rope_type!r}, max_len={self.max_len}"
        )

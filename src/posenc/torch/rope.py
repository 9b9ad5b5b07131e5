"""``RotaryEmbedding``: rotates queries and keys with a cached, exact cos/sin table."""

from __future__ import annotations

import numbers
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import torch
from torch import nn

from .. import _rope_torch
from .._array import check_choice, check_dim, memory_bytes
from .._typing import Pairing, PositionsLike
from ..rope import PAIRINGS, _cos_sin, _fit_positions, _rotary_dim, _rotate, rope_frequencies
from ._common import check_entries, check_input, check_offset, is_compiling, rebuild

__all__ = ["RotaryEmbedding"]


class RotaryEmbedding(nn.Module):
    """Rotary position embedding of queries and keys (Su et al., 2021), with a cos/sin cache.

    cos and sin of positions ``0 .. max_len-1`` are computed once, exactly (float64 angles, see
    :func:`posenc.apply_rope`), and kept as non-persistent buffers ``cos_cached`` and
    ``sin_cached`` of shape ``(max_len, rotary_dim // 2)``: not in ``state_dict``; they follow
    ``.to(device)``. The cache is float32, or float64 when built under
    ``torch.set_default_dtype(torch.float64)`` or after ``.double()`` / ``.to(torch.float64)``;
    a dtype change computes it again exactly (never by rounding the old one), and under
    ``.half()`` / ``.to(bfloat16)`` it stays float32, so half-precision rotations stay
    correctly rounded. Positions that fit the cache are looked up; others (past ``max_len``,
    negative, fractional, any positions on the meta device) are computed on the fly with the
    same exact formula, as is every rotation of float64 input by a float32 cache: the cache
    never lowers the precision of any input, and each of ``q`` and ``k`` is rotated at its own
    precision (a float32 ``q`` with a float64 ``k`` gives the results of
    :func:`posenc.apply_rope` on each).

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

    Raises
    ------
    TypeError, ValueError
        As :func:`posenc.rope_frequencies` for ``dim``, ``base``, ``scaling``, ``seq_len``;
        ``max_len`` not a positive integer; bad ``pairing`` or ``rotary_dim``; a cache of more
        than 2**48 entries (``max_len x rotary_dim // 2``), or one whose computation needs more
        memory than the device has (refused with its size before anything is allocated).

    Notes
    -----
    Positions: as in :func:`posenc.apply_rope`. Integer positions of any dtype (``uint8``,
    ``int8``, ``int16``, ..., ``uint64``) are positions, never a mask; float positions are
    fractional positions; bool and complex positions are refused with a TypeError.

    Any layout of ``q`` and ``k`` works: non-contiguous, strided (``x[..., ::2]``), sliced at an
    odd storage offset (``x[..., 1:9]``) or expanded; the result equals that of the contiguous
    tensor.

    Meta-device initialisation: built under ``with torch.device("meta")`` the cache holds no
    values; after ``to_empty(device=...)`` call ``reset_parameters()``, which computes it again.

    ``torch.compile(fullgraph=True)`` and ``torch.export`` trace the module without graph
    breaks: while tracing, positions given as a tensor (or running past the cache) take the
    branch-free float64 formula instead of the data-dependent cache lookup (the same values to
    float32 rounding).

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
    >>> str(rope.double().cos_cached.dtype), str(rope.half().cos_cached.dtype)
    ('torch.float64', 'torch.float32')
    """

    cos_cached: torch.Tensor
    sin_cached: torch.Tensor

    def __init__(
        self,
        dim: int,
        *,
        base: float = 10000.0,
        pairing: Pairing = "interleaved",
        scaling: Mapping[str, Any] | None = None,
        max_len: int = 2048,
        rotary_dim: int | None = None,
        seq_len: int | None = None,
    ) -> None:
        super().__init__()
        self.dim = check_dim(dim, even=rotary_dim is None)
        self.rotary_dim: int = _rotary_dim(rotary_dim, self.dim, what="dim")
        self.pairing: Pairing = check_choice(pairing, name="pairing", choices=PAIRINGS)  # type: ignore[assignment]
        self.max_len = check_dim(max_len, name="max_len", even=False)
        width = "dim" if rotary_dim is None else "rotary_dim"
        check_entries(
            self.max_len,
            self.rotary_dim // 2,
            what=f"the cache of max_len x {width} // 2",
            memory=False,  # checked with what computing it costs, by _check_cache_fits below
        )
        inv_freq, factor = rope_frequencies(
            self.rotary_dim, base=base, scaling=scaling, seq_len=seq_len
        )
        self.base = float(base)
        self.scaling = None if scaling is None else dict(scaling)
        self.inv_freq: np.ndarray = (
            inv_freq  # float64 NumPy: not a buffer, so .half() cannot round it
        )
        self.attention_factor = float(factor)
        dtype = torch.float64 if torch.get_default_dtype() == torch.float64 else torch.float32
        _check_cache_fits(self.max_len, self.rotary_dim // 2, torch.empty(0).device, dtype)
        cos, sin = self._table(None, dtype)  # default device
        self.register_buffer("cos_cached", cos, persistent=False)
        self.register_buffer("sin_cached", sin, persistent=False)

    def _table(
        self, device: torch.device | None, dtype: torch.dtype
    ) -> tuple[torch.Tensor, torch.Tensor]:
        # float64 first, then one rounding to the cache's dtype
        cos, sin = _cos_sin(
            torch.arange(self.max_len, device=device), self.inv_freq, self.attention_factor
        )
        return cos.to(dtype), sin.to(dtype)

    def reset_parameters(self) -> None:
        """Compute the cos/sin cache again, exactly, in its dtype and on its device.

        The buffers hold no values after ``to_empty`` (meta-device initialisation); this fills them.
        """
        device, dtype = self.cos_cached.device, self.cos_cached.dtype
        _check_cache_fits(self.max_len, self.rotary_dim // 2, device, dtype)
        cos, sin = self._table(device, dtype)
        rebuild(self, "cos_cached", cos)
        rebuild(self, "sin_cached", sin)

    def _apply(self, fn: Callable[[torch.Tensor], torch.Tensor], recurse: bool = True) -> Any:
        # a dtype change computes the cache again: float32 values cast to float64 keep float32's
        # rounding, and .half() / .to(bfloat16) would round every rotation (float32 instead)
        before = self.cos_cached.dtype
        super()._apply(fn, recurse)
        after = self.cos_cached.dtype
        if after != before:
            want = after if after in (torch.float32, torch.float64) else torch.float32
            self.cos_cached, self.sin_cached = self._table(self.cos_cached.device, want)
        return self

    def cos_sin(
        self,
        x: torch.Tensor,
        positions: torch.Tensor | PositionsLike | None = None,
        offset: int = 0,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """cos and sin for ``x`` of shape ``(..., seq, dim)``: ``(..., seq, rotary_dim // 2)`` each.

        In the dtype the rotation of ``x`` runs in: float64 for float64 ``x``, float32 otherwise.
        ``positions`` and ``offset`` as in :meth:`forward`.
        """
        x = check_input(x, name="x", dim=self.dim)
        return self._cos_sin(x, positions, offset)

    def _cos_sin(
        self, x: torch.Tensor, positions: Any, offset: Any
    ) -> tuple[torch.Tensor, torch.Tensor]:
        work = torch.float64 if x.dtype == torch.float64 else torch.float32
        # the cache serves x when it is on x's device and as precise as x's rotation needs
        cache_ok = self.cos_cached.device == x.device and (
            work == torch.float32 or self.cos_cached.dtype == work
        )
        seq = x.shape[-2]
        if positions is None:
            offset = check_offset(offset, seq)
            if cache_ok and 0 <= offset and offset + seq <= self.max_len:
                cos, sin = (
                    self.cos_cached[offset : offset + seq],
                    self.sin_cached[offset : offset + seq],
                )
                return cos.to(work), sin.to(work)
            pos = torch.arange(offset, offset + seq, device=x.device)  # (seq,)
        else:
            if isinstance(offset, bool) or not (
                isinstance(offset, numbers.Integral) and offset == 0
            ):
                raise ValueError(f"pass positions or offset, not both (got offset={offset!r})")
            if isinstance(positions, np.ndarray) and any(st < 0 for st in positions.strides):
                positions = positions.copy()  # torch takes no negative strides (a[::-1])
            pos = _fit_positions(positions, x)  # validated, on x's device, shaped against x
            if (
                cache_ok
                and not is_compiling()  # the range test reads values: a data-dependent branch
                and not pos.is_floating_point()
                and pos.device.type != "meta"
                and pos.numel()
            ):
                idx = pos.to(torch.int64)  # uint8 would index as a mask, int8/int16 not at all
                # a uint64 position >= 2**63 wraps to a negative index, which is out of range too
                if bool(((idx >= 0) & (idx < self.max_len)).all()):
                    return self.cos_cached[idx].to(work), self.sin_cached[idx].to(work)
        return _cos_sin(pos, self.inv_freq, self.attention_factor, dtype=work)

    def forward(
        self,
        q: torch.Tensor,
        k: torch.Tensor,
        positions: torch.Tensor | PositionsLike | None = None,
        offset: int = 0,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Rotate ``q`` and ``k`` of shape ``(..., seq, dim)`` (same seq) by their positions.

        ``positions`` (see :func:`posenc.apply_rope` for shapes; an int count, or an array or
        tensor of any integer or float dtype) defaults to ``offset .. offset + seq - 1``; pass
        one or the other. Returns ``(q_rot, k_rot)`` with the shapes and dtypes of ``q`` and
        ``k``, each rotated at its own precision.

        Raises
        ------
        TypeError
            ``q`` or ``k`` not a floating tensor (integer, bool, complex, a NumPy array),
            ``offset`` not an integer, bool or complex ``positions``.
        ValueError
            ``q`` or ``k`` of the wrong shape, different seq lengths or devices, positions that
            do not fit, both ``positions`` and ``offset``.
        """
        q = check_input(q, name="q", dim=self.dim)
        k = check_input(k, name="k", dim=self.dim)
        if q.shape[-2] != k.shape[-2]:
            raise ValueError(
                "q and k must have the same seq length (they share positions), "
                f"got {q.shape[-2]} and {k.shape[-2]}"
            )
        if q.device != k.device:
            raise ValueError(f"q and k must be on one device, got {q.device} and {k.device}")
        cos, sin = self._cos_sin(q, positions, offset)
        same_work = (q.dtype == torch.float64) == (k.dtype == torch.float64)
        shared = same_work and (positions is None or k.shape[:-1] == q.shape[:-1])
        cos_k, sin_k = (cos, sin) if shared else self._cos_sin(k, positions, offset)
        if is_compiling():  # elementwise ops that inductor fuses; no out=, no complex views
            return self._rotate_traced(q, cos, sin), self._rotate_traced(k, cos_k, sin_k)
        pairing, rot = self.pairing, self.rotary_dim
        # the tables the rotation multiplies by (cos + i sin, or [cos, cos] and sin), made once
        # for q and k when they share cos/sin
        tables_q = _rope_torch.tables(cos, sin, pairing, cos.dtype)
        tables_k = tables_q if shared else _rope_torch.tables(cos_k, sin_k, pairing, cos_k.dtype)
        q_rot = _rotate(q, cos, sin, pairing=pairing, rotary_dim=rot, tables=tables_q)
        k_rot = _rotate(k, cos_k, sin_k, pairing=pairing, rotary_dim=rot, tables=tables_k)
        return q_rot, k_rot

    def _rotate_traced(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        """The rotation of :func:`posenc.apply_rope` in the work dtype of ``cos``, branch-free."""
        rot, half = self.rotary_dim, self.rotary_dim // 2
        src = x[..., :rot].to(cos.dtype)
        if self.pairing == "interleaved":
            a, b = src[..., 0::2], src[..., 1::2]
            out = torch.stack((a * cos - b * sin, a * sin + b * cos), dim=-1).flatten(-2)
        else:
            a, b = src[..., :half], src[..., half:]
            out = torch.cat((a * cos - b * sin, b * cos + a * sin), dim=-1)
        out = out.to(x.dtype)
        return out if rot == self.dim else torch.cat((out, x[..., rot:]), dim=-1)

    def extra_repr(self) -> str:
        rope_type = (
            "default"
            if self.scaling is None
            else self.scaling.get("rope_type", self.scaling.get("type"))
        )
        return (
            f"dim={self.dim}, rotary_dim={self.rotary_dim}, base={self.base}, pairing={self.pairing!r}, "
            f"scaling={rope_type!r}, max_len={self.max_len}"
        )


def _check_cache_fits(max_len: int, half: int, device: torch.device, dtype: torch.dtype) -> None:
    """Refuse, naming ``max_len`` and the size, a cache that the device cannot compute.

    Computing the cache holds the float64 positions and ``cos + i sin`` in complex128 (32 bytes
    per entry with the positions) besides the two tables in ``dtype``; past the device's
    memory (posenc._array.memory_bytes: memory and swap for the CPU) the allocator would fail deep inside torch (or the machine would swap), so the
    module says so first. Devices whose memory is not known (meta, mps, ...) are not checked.
    """
    total = memory_bytes(device)
    if total is None:
        return
    entries = max_len * half
    cache = 2 * entries * torch.empty((), dtype=dtype).element_size()
    build = 16 * entries + 16 * max_len
    if cache + build > total:
        raise ValueError(
            f"max_len={max_len} asks for a cos/sin cache of max_len x rotary_dim // 2 = "
            f"{max_len} x {half} entries: {_bytes(cache)} in {dtype}, {_bytes(cache + build)} "
            f"while it is computed, more than the {_bytes(total)} of memory on {device}; pass a "
            "smaller max_len (positions past the cache are computed exactly on the fly)"
        )


def _bytes(n: int) -> str:
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} bytes"

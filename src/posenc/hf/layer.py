"""``LayerScheme``: one attention layer's position parameters, and its frequencies."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..rope_scaling import rope_frequencies
from .registry import as_jsonable
from .schema import ROTARY_KINDS

if TYPE_CHECKING:
    from .._typing import FloatArray

__all__ = ["LayerScheme"]


@dataclass(frozen=True)
class LayerScheme:
    """Experimental. One attention layer's position parameters, as :meth:`Scheme.layer` gives them.

    Attributes
    ----------
    index : int
        The layer index, from 0.
    layer_type : str
        The config's name for the layer kind (``"full_attention"``, ``"sliding_attention"``,
        ``"chunked_attention"``, ...).
    kind : str
        ``"rope"``, ``"mrope"``, ``"nope"`` (a rotary model's layer that does not rotate), or a
        non-rotary kind (``"alibi"``, ``"t5"``, ``"sinusoidal"``, ``"learned"``, ``"none"``).
    pairing : str or None
        ``"half"``, ``"interleaved"`` or ``"deinterleave"`` (see :class:`Convention`).
    slot : str or None
        ``"head"`` or ``"tail"``: where the rotated features sit in a head.
    head_dim : int or None
        The width of a query/key head.
    rotary_dim : int or None
        How many features rotate (even).
    base : float or None
        The RoPE base (``rope_theta``).
    rope_type : str or None
        ``"default"``, ``"linear"``, ``"dynamic"``, ``"yarn"``, ``"llama3"``, ``"longrope"``
        or ``"proportional"``.
    scaling : dict or None
        The scaling parameters in the form :func:`posenc.rope_frequencies` takes (None for
        default and proportional RoPE).
    attention_factor : float or None
        The factor on cos and sin at the trained length (YaRN, LongRoPE; 1.0 otherwise).
    window : int or None
        The sliding window or chunk size of a local layer.
    mrope_section : tuple of int or None
        M-RoPE: the pairs given to the t, h and w ids.
    mrope_interleaved : bool
        M-RoPE: the axes take turns pair by pair (Qwen3-VL).
    proportional_angles : int or None
        ``"proportional"`` RoPE: how many pairs turn (the rest have frequency 0).
    angle_sign : int
        -1 for a model that rotates by minus the angle.
    rotated_heads : int or None
        Only the first ``rotated_heads`` heads rotate (the others pass through); None: all.
    mrope_layout : str or None
        M-RoPE: ``"hw_then_t"`` (Ernie 4.5 VL: the first ``mrope_section[0] +
        mrope_section[1]`` pairs alternate h, w; the rest are t); None: bands or, with
        ``mrope_interleaved``, Qwen3-VL's turns.
    mscale : tuple of (float, float) or None
        Phi-3.5-MoE's rotary: the frequencies of the trained length at every length, cos and
        sin multiplied by ``mscale[0]`` while ``max(position_ids) + 1`` is at most
        ``scaling['original_max_position_embeddings']``, by ``mscale[1]`` beyond
        (``short_mscale``, ``long_mscale``) in place of the attention factor. None: the
        scaling's own attention factor.
    query_temperature : dict or None
        A NoPE layer that scales its queries by position (Llama 4 with
        ``attn_temperature_tuning``): ``{"attn_scale": a, "floor_scale": s}``, the queries at
        cache position ``p`` multiplied by ``1 + a * log1p(floor((p + 1) / s))``
        (:meth:`Scheme.scale_queries`); None: queries are not scaled.
    """

    index: int
    layer_type: str
    kind: str
    pairing: str | None = None
    slot: str | None = None
    head_dim: int | None = None
    rotary_dim: int | None = None
    base: float | None = None
    rope_type: str | None = None
    scaling: Mapping[str, Any] | None = None
    attention_factor: float | None = None
    window: int | None = None
    mrope_section: tuple[int, ...] | None = None
    mrope_interleaved: bool = False
    proportional_angles: int | None = None
    angle_sign: int = 1
    rotated_heads: int | None = None
    mrope_layout: str | None = None
    query_temperature: Mapping[str, float] | None = None
    mscale: tuple[float, float] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The fields as JSON-ready values."""
        out = asdict(self)
        out["scaling"] = None if self.scaling is None else dict(self.scaling)
        temperature = self.query_temperature
        out["query_temperature"] = None if temperature is None else dict(temperature)
        return {k: as_jsonable(v) for k, v in out.items()}

    def inv_freq(self, seq_len: int | None = None) -> tuple[FloatArray, float]:
        """The inverse frequencies (float64, ``rotary_dim // 2`` of them) and attention factor.

        ``seq_len`` is what transformers passes to dynamic and LongRoPE scaling,
        ``max(position_ids) + 1``; None means the trained length.
        """
        if self.kind not in ROTARY_KINDS or self.rotary_dim is None or self.base is None:
            raise ValueError(f"layer {self.index} does not rotate (kind {self.kind!r})")
        if self.rope_type == "proportional":
            # transformers' "proportional" RoPE (Gemma 4): the first `proportional_angles`
            # pairs get base ** (-2i / head_dim), the others frequency 0; all of it divided by
            # `factor`
            n = int(self.proportional_angles or 0)
            i = np.arange(0, 2 * n, 2, dtype=np.float64) / self.rotary_dim
            inv = np.zeros(self.rotary_dim // 2)
            inv[:n] = np.float64(self.base) ** -i
            factor = float((self.scaling or {}).get("factor", 1.0))
            return inv / factor, 1.0
        if self.mscale is not None:  # Phi-3.5-MoE: fixed frequencies, the factor by length
            fixed, _ = rope_frequencies(self.rotary_dim, base=self.base, scaling=self.scaling)
            trained = (self.scaling or {}).get("original_max_position_embeddings")
            longer = seq_len is not None and trained is not None and seq_len > trained
            return fixed, float(self.mscale[1] if longer else self.mscale[0])
        return rope_frequencies(
            self.rotary_dim, base=self.base, scaling=self.scaling, seq_len=seq_len
        )

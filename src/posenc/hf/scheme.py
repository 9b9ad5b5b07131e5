"""``Scheme`` and ``LayerScheme``: what a model does with positions, and the rotation itself."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .._array import _describe, as_positions, is_torch
from ..rope import _check_x, _cos_sin, _rotate, _work_dtype
from ..rope_scaling import rope_frequencies
from .registry import TRANSFORMERS_VERSION, as_jsonable
from .schema import ROTARY_KINDS

if TYPE_CHECKING:
    from .._typing import FloatArray

__all__ = ["LayerScheme", "Scheme"]


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

    def to_dict(self) -> dict[str, Any]:
        """The fields as JSON-ready values."""
        out = asdict(self)
        out["scaling"] = None if self.scaling is None else dict(self.scaling)
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
        return rope_frequencies(
            self.rotary_dim, base=self.base, scaling=self.scaling, seq_len=seq_len
        )


@dataclass(frozen=True)
class Scheme:
    """Experimental. What a model does with positions, read from its config by :func:`describe`.

    Attributes
    ----------
    model_type : str
        The config's ``model_type``.
    convention : str
        A key of :data:`posenc.hf.CONVENTIONS`.
    kind : str
        The convention's kind (``"rope"``, ``"mrope"``, ``"alibi"``, ...).
    known : bool
        Whether the registry has a row for ``model_type`` (False: described from standard keys
        alone, not verified).
    layers : tuple of LayerScheme
        One per attention layer.
    max_position_embeddings : int or None
        The config's trained or supported length.
    sources : dict
        Each parameter's name (prefixed ``"<layer_type>: "`` for other layer types than full
        attention) and where its value came from, in one of three forms: a key of the config
        (``config['rope_theta']``, ``config['text_config']['n_layer']`` for an aliased key),
        the config class's default for a key the file leaves out (``config['hidden_size']
        (absent: LlamaConfig's default)``), or the model's code (text ending ``(model code)``).
    notes : tuple of str
        Quirks of the model type (English), from the registry.
    ignored_keys : tuple of str
        Keys of ``rope_parameters`` that no formula here reads.
    fixed : dict
        The parameters of a scheme without rotation (``"alibi"``: ``num_heads``,
        ``max_bias``, ``scale``, and ``rounding`` where the model's code rounds (Falcon); ``"t5"``: ``num_buckets``, ``max_distance``, ``bidirectional``, and for an
        encoder-decoder ``decoder_bidirectional`` (False), for LayoutLM's box bias
        ``bbox_num_buckets`` and ``bbox_max_distance``;
        ``"sinusoidal"``: ``table``, ``dim`` and the table's own keys); empty for rotary schemes.
    applies_to : str
        What the rotation turns (see :class:`Convention`): ``"qk"`` (queries and keys),
        ``"qkv"`` (values too, by the same angles) or ``"hidden"`` (the hidden states split
        into heads, before the q and k projections).
    """

    model_type: str
    convention: str
    kind: str
    known: bool
    layers: tuple[LayerScheme, ...]
    max_position_embeddings: int | None = None
    sources: Mapping[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    notes_zh: tuple[str, ...] = ()
    ignored_keys: tuple[str, ...] = ()
    fixed: Mapping[str, Any] = field(default_factory=dict)
    applies_to: str = "qk"

    @property
    def num_layers(self) -> int:
        """How many attention layers the config has."""
        return len(self.layers)

    def layer(self, index: int) -> LayerScheme:
        """The parameters of layer ``index`` (from 0; negative counts from the end)."""
        if isinstance(index, bool) or not isinstance(index, int | np.integer):
            raise TypeError(f"layer must be an int, got {_describe(index)}")
        n = len(self.layers)
        if not -n <= int(index) < n:
            raise ValueError(
                f"layer must be in [0, {n}) for this {self.model_type} config, got {index}"
            )
        return self.layers[int(index)]

    def to_dict(self) -> dict[str, Any]:
        """The scheme as JSON-ready values (layers in full)."""
        return {
            "model_type": self.model_type,
            "convention": self.convention,
            "kind": self.kind,
            "known": self.known,
            "transformers": TRANSFORMERS_VERSION,
            "max_position_embeddings": self.max_position_embeddings,
            "num_layers": self.num_layers,
            "layers": [layer.to_dict() for layer in self.layers],
            "sources": dict(self.sources),
            "notes": list(self.notes),
            "ignored_keys": list(self.ignored_keys),
            "fixed": as_jsonable(dict(self.fixed)),
            "applies_to": self.applies_to,
        }

    def function(self, **overrides: Any) -> Any:
        """Experimental. The posenc function that reproduces a scheme without rotation, with the
        config's parameters bound (``overrides`` replace them, e.g. ``bidirectional=False`` for
        a T5 decoder).

        - ``"alibi"``: ``posenc.alibi_bias(q_len, k_len)`` with ``n_heads``, ``max_bias`` and
          ``rounding`` (Falcon: ``"bfloat16"``), times ``scale`` (Falcon:
          ``1 / sqrt(head_dim)``).
        - ``"t5"``: ``posenc.t5_bucket(relative_position)`` with ``num_buckets``,
          ``max_distance`` and ``bidirectional`` (True: the encoder's buckets).
        - ``"sinusoidal"``: the table: ``posenc.compat.fairseq_sinusoidal_embedding(
          num_embeddings)`` (fairseq, M2M100, XGLM, Speech2Text: ``embedding_dim``,
          ``padding_idx``), ``posenc.compat.marian_sinusoidal_weight(n_pos)`` (Marian:
          ``dim``), ``posenc.compat.whisper_sinusoids(length)`` (Whisper's encoder:
          ``channels``) or the fairseq table with cosines first (MusicGen, ``"cos_first"``).

        Raises
        ------
        ValueError
            A rotary scheme (use :meth:`rotate`) or a scheme without positions.
        """
        from functools import partial

        fixed = {**self.fixed, **overrides}
        if self.kind == "alibi":
            from ..alibi import alibi_bias

            bound = partial(
                alibi_bias,
                n_heads=fixed["num_heads"],
                max_bias=fixed["max_bias"],
                rounding=fixed.get("rounding"),
            )
            scale = float(fixed.get("scale", 1.0))
            if scale == 1.0:
                return bound
            return lambda *args, **kwargs: bound(*args, **kwargs) * scale
        if self.kind == "t5":
            from ..t5 import t5_bucket

            return partial(
                t5_bucket,
                num_buckets=fixed["num_buckets"],
                max_distance=fixed["max_distance"],
                bidirectional=fixed["bidirectional"],
            )
        if self.kind == "sinusoidal":
            from .. import compat

            table = fixed["table"]
            if table == "fairseq":
                return partial(
                    compat.fairseq_sinusoidal_embedding,
                    embedding_dim=fixed["dim"],
                    padding_idx=fixed.get("padding_idx"),
                )
            if table == "cos_first":  # MusicGen: the fairseq ladder, cosines first, from 0
                return partial(_cos_first, dim=fixed["dim"])
            if table == "marian":
                return partial(compat.marian_sinusoidal_weight, dim=fixed["dim"])
            return partial(compat.whisper_sinusoids, channels=fixed["dim"])
        raise ValueError(
            f"a {self.model_type} scheme is {self.kind!r}: "
            + (
                "rotate queries and keys with Scheme.rotate"
                if self.kind in ROTARY_KINDS
                else "it has no position function"
            )
        )

    def explain(self, lang: str = "en") -> str:
        """A short text: the scheme, each parameter and its config key, the posenc call, pitfalls."""
        from .explain import explain

        return explain(self, lang)

    def rotate(self, x: Any, position_ids: Any, *, layer: int = 0) -> Any:
        """``x`` rotated as layer ``layer``'s attention rotates its queries and keys.

        Parameters
        ----------
        x : array or tensor of shape (batch, heads, seq, head_dim)
            Whole query or key heads (NumPy or torch, floating). Features the model does not
            rotate pass through unchanged, wherever they sit. Where :attr:`applies_to` is
            ``"qkv"`` the model rotates value heads the same way; where it is ``"hidden"``, ``x``
            is the hidden states split into heads, ``h.view(batch, seq, heads,
            head_dim).transpose(1, 2)``, which the model rotates before its q and k
            projections.
        position_ids : array or tensor
            What the model's rotary embedding receives: ``(batch, seq)`` (or ``(seq,)``), or
            ``(axes, batch, seq)`` for M-RoPE: 3 (t, h, w), 2 for NeoMME (row, column),
            ``len(mrope_section)`` for HunYuan-VL.
        layer : int, default 0
            The layer; a NoPE layer returns ``x`` unchanged.

        Returns
        -------
        array or tensor
            Same shape, dtype, library and device as ``x``. The attention factor of YaRN and
            LongRoPE multiplies the rotated features, as transformers does. Dynamic and LongRoPE
            scaling read ``max(position_ids) + 1`` as the current length, as transformers does
            on a fresh rotary module.

        Raises
        ------
        TypeError
            ``x`` not a floating array or tensor, ``position_ids`` not real numbers (fractional
            ids are rotated by fractional angles, as transformers' ``position_ids.float()``
            does), ``position_ids`` a tensor with a NumPy ``x``.
        ValueError
            A scheme that does not rotate (see :attr:`kind`), ``x`` not 4-D or of the wrong head
            width, ``position_ids`` of the wrong shape.
        """
        spec = self.layer(layer)
        if spec.kind not in (*ROTARY_KINDS, "nope"):
            raise ValueError(
                f"a {self.model_type} model does not rotate queries and keys (its positions are "
                f"{spec.kind!r}); see Scheme.explain() for the posenc function that reproduces them"
            )
        arr, torch_x = _check_x(x)
        if arr.ndim != 4:
            raise ValueError(
                f"x must have shape (batch, heads, seq, head_dim), got shape {tuple(arr.shape)}"
            )
        if spec.head_dim is not None and arr.shape[-1] != spec.head_dim:
            raise ValueError(
                f"x's last axis must be the head dim {spec.head_dim} of this {self.model_type} "
                f"config, got {arr.shape[-1]}"
            )
        axes = len(spec.mrope_section or ()) if spec.kind == "mrope" else 0
        ids = _check_ids(position_ids, arr, axes=axes)
        if spec.kind == "nope":
            return x
        seq_len = None
        if spec.rope_type in ("dynamic", "longrope") and _size(ids):
            seq_len = int(ids.max()) + 1
        inv_freq, factor = spec.inv_freq(seq_len)
        work = _work_dtype(arr)
        if spec.mrope_layout == "xd":  # HunYuan-VL: per-feature angles, not per pair
            cos, sin = _xd_cos_sin(ids, inv_freq, factor, spec, work)
        elif spec.kind == "mrope":
            cos, sin = _mrope_cos_sin(ids, inv_freq, factor, spec, work)
        else:
            cos, sin = _cos_sin(ids[:, None, :], inv_freq, factor, dtype=work)
        if spec.angle_sign == -1:
            sin = -sin
        rot = int(spec.rotary_dim or 0)
        width = arr.shape[-1]
        start = width - rot if spec.slot == "tail" else 0
        part = arr[..., start : start + rot]
        if spec.pairing == "deinterleave":
            part = _deinterleave(part)
        pairing = "interleaved" if spec.pairing == "interleaved" else "half"
        if spec.mrope_layout == "xd":
            out = _rotate_features(part, cos, sin, torch_x)
        else:
            out = _rotate(part, cos, sin, pairing=pairing, rotary_dim=rot)
        if rot != width:
            pieces = (arr[..., :start], out) if spec.slot == "tail" else (out, arr[..., rot:])
            out = _cat(pieces, torch_x, axis=-1)
        if spec.rotated_heads is not None:  # the other heads carry no positions
            out = _cat((out[:, : spec.rotated_heads], arr[:, spec.rotated_heads :]), torch_x, 1)
        return out


def _cat(pieces: tuple[Any, Any], torch_x: bool, axis: int) -> Any:
    if torch_x:
        return sys.modules["torch"].cat(pieces, dim=axis)
    return np.concatenate(pieces, axis=axis)


def _cos_first(num_embeddings: int, dim: int) -> Any:
    """fairseq's table with its halves swapped, ``[cos | sin]`` (MusicGen), positions from 0."""
    from ..compat import fairseq_sinusoidal_embedding

    table = fairseq_sinusoidal_embedding(num_embeddings, dim)
    half = dim // 2
    return np.concatenate((table[:, half : 2 * half], table[:, :half], table[:, 2 * half :]), 1)


def _size(ids: Any) -> int:
    return int(ids.numel()) if is_torch(ids) else int(ids.size)


def _check_ids(position_ids: Any, x: Any, *, axes: int) -> Any:
    """``position_ids`` as (batch, seq) (or (axes, batch, seq) for M-RoPE: ``axes`` > 0) in
    ``x``'s library."""
    mrope = axes > 0
    ids, torch_ids = as_positions(position_ids, name="position_ids")
    if torch_ids and not is_torch(x):
        raise TypeError("position_ids is a torch tensor but x is a NumPy array; pass one library")
    if is_torch(x) and not torch_ids:
        ids = sys.modules["torch"].as_tensor(np.ascontiguousarray(ids), device=x.device)
    elif torch_ids and ids.device != x.device:
        raise ValueError(
            f"position_ids is on {ids.device} but x is on {x.device}; move one of them"
        )
    batch, seq = x.shape[0], x.shape[2]
    shape = tuple(ids.shape)
    if mrope and len(shape) == 2:  # (batch, seq) text ids: t = h = w
        ids = (
            ids[None].expand(axes, *shape)
            if is_torch(ids)
            else np.broadcast_to(ids, (axes, *shape))
        )
        shape = tuple(ids.shape)
    want = (
        f"({axes}, {batch}, {seq}) or ({batch}, {seq})"
        if mrope
        else f"({batch}, {seq}) or ({seq},)"
    )
    if not mrope and len(shape) == 1:
        ids = ids[None]
        shape = tuple(ids.shape)
    ok = len(shape) == (3 if mrope else 2) and shape[-1] == seq and shape[-2] in (1, batch)
    if mrope:
        ok = ok and shape[0] == axes
    if not ok:
        raise ValueError(
            f"position_ids must have shape {want} for x of shape {tuple(x.shape)}, got {shape}"
        )
    return ids


def _mrope_cos_sin(ids: Any, inv_freq: Any, factor: float, spec: LayerScheme, work: Any) -> Any:
    from ..mrope import _pair_axes

    half = len(inv_freq)
    section = list(spec.mrope_section or ())
    n = len(section)
    if n == 2:  # row and column take turns pair by pair (NeoMME)
        axes = np.arange(half) % 2
    elif spec.mrope_layout == "hw_then_t":  # Ernie 4.5 VL: h, w in turn, then t
        hw = section[0] + section[1]
        axes = np.where(np.arange(half) < hw, 1 + np.arange(half) % 2, 0)
    else:
        axes = np.asarray(_pair_axes(half, section, spec.mrope_interleaved))
    parts = [_cos_sin(ids[a][:, None, :], inv_freq, factor, dtype=work) for a in range(n)]
    if is_torch(ids):
        torch = sys.modules["torch"]
        sel = [torch.as_tensor(axes == a, device=ids.device) for a in range(n)]
        cos = sum(torch.where(sel[a], parts[a][0], 0) for a in range(n))
        sin = sum(torch.where(sel[a], parts[a][1], 0) for a in range(n))
        return cos, sin
    cos = sum(np.where(axes == a, parts[a][0], 0) for a in range(n))
    sin = sum(np.where(axes == a, parts[a][1], 0) for a in range(n))
    return cos, sin


def _xd_cos_sin(ids: Any, inv_freq: Any, factor: float, spec: LayerScheme, work: Any) -> Any:
    """cos and sin of width rotary_dim, feature by feature: ``cat(freqs, freqs)`` cut into
    chunks of ``2 * mrope_section[i]`` features, chunk ``i`` at the angles of axis ``i``."""
    section = list(spec.mrope_section or ())
    n = len(section)
    axes = np.repeat(np.arange(n), [2 * s for s in section])
    parts = [_cos_sin(ids[a][:, None, :], inv_freq, factor, dtype=work) for a in range(n)]
    if is_torch(ids):
        torch = sys.modules["torch"]
        sel = [torch.as_tensor(axes == a, device=ids.device) for a in range(n)]
        full = [(torch.cat((c, c), -1), torch.cat((s, s), -1)) for c, s in parts]
        cos = sum(torch.where(sel[a], full[a][0], 0) for a in range(n))
        sin = sum(torch.where(sel[a], full[a][1], 0) for a in range(n))
        return cos, sin
    full_np = [(np.concatenate((c, c), -1), np.concatenate((s, s), -1)) for c, s in parts]
    cos = sum(np.where(axes == a, full_np[a][0], 0) for a in range(n))
    sin = sum(np.where(axes == a, full_np[a][1], 0) for a in range(n))
    return cos, sin


def _rotate_features(x: Any, cos: Any, sin: Any, torch_x: bool) -> Any:
    """``x * cos + rotate_half(x) * sin`` with cos and sin given per feature (width of x)."""
    half = x.shape[-1] // 2
    if torch_x:
        torch = sys.modules["torch"]
        turned = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
        return x * cos.to(x.dtype) + turned * sin.to(x.dtype)
    turned = np.concatenate((-x[..., half:], x[..., :half]), axis=-1)
    return (x * cos + turned * sin).astype(x.dtype, copy=False)


def _deinterleave(part: Any) -> Any:
    """Features (x0, x1, x2, x3, ...) reordered as (x0, x2, ..., x1, x3, ...)."""
    if is_torch(part):
        torch = sys.modules["torch"]
        return torch.cat((part[..., 0::2], part[..., 1::2]), dim=-1)
    return np.concatenate((part[..., 0::2], part[..., 1::2]), axis=-1)

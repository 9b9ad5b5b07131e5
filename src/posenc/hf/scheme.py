"""``Scheme``: what a model does with positions; ``LayerScheme`` (one layer) lives in ``layer``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._array import _describe
from .explain import explain as explain_text
from .layer import LayerScheme
from .registry import TRANSFORMERS_VERSION, as_jsonable
from .rotate import rotate, scale_queries
from .schema import ROTARY_KINDS

__all__ = ["LayerScheme", "Scheme"]


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
    indexer : LayerScheme or None
        The lightning indexer of DeepSeek Sparse Attention (DeepSeek-V3.2), which
        every attention layer runs beside its MLA attention to pick the keys it attends to:
        ``layer_type`` ``"indexer"``, its own q and k heads ``index_head_dim`` wide, the FIRST
        ``rotary_dim`` (``qk_rope_head_dim``) features rotated with the attention's
        frequencies (slot ``"head"``; the attention rotates the last ones), with its own
        pairing. :meth:`rotate_indexer` rotates them. None for models without one.
    length_keys : dict
        The config's length keys that other engines read, as its config class holds them (a
        key the file leaves out takes the class's default where posenc.hf records one), raw:
        ``max_position_embeddings`` and the others vLLM serves the smallest of, and the
        top-level ``original_max_position_embeddings`` that llama.cpp's converter reads for
        Llama 3 scaling. :mod:`posenc.engines` reads and checks them. Not compared (two schemes
        that rotate alike are equal) and empty for schemes without rotation.
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
    indexer: LayerScheme | None = None
    length_keys: Mapping[str, Any] = field(default_factory=dict, compare=False)

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
            "indexer": None if self.indexer is None else self.indexer.to_dict(),
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
        return explain_text(self, lang)

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
            on a fresh rotary module: at or below the trained length (negative ids included) the
            trained frequencies, above it the grown ones. Under ``torch.compile`` and
            ``torch.export`` the choice is made in the graph (``torch.where``), so one graph
            serves every length.

        Raises
        ------
        TypeError
            ``x`` not a floating array or tensor, ``position_ids`` not real numbers (fractional
            ids are rotated by fractional angles, as transformers' ``position_ids.float()``
            does), ``position_ids`` a tensor with a NumPy ``x``.
        ValueError
            A scheme that does not rotate (see :attr:`kind`), ``x`` not 4-D or of the wrong head
            width, ``position_ids`` of the wrong shape; with dynamic or LongRoPE scaling, an id
            of ``2**53`` or more (under tracing: a RuntimeError from the graph), or ids long
            enough to overflow the dynamic NTK base.
        """
        return rotate(self.layer(layer), x, position_ids, model_type=self.model_type)

    def rotate_indexer(self, x: Any, position_ids: Any) -> Any:
        """Experimental. ``x`` rotated as the DSA lightning indexer (:attr:`indexer`) rotates its
        queries and keys, the same in every layer.

        DeepSeek-V3.2's ``DeepseekV32Indexer`` (transformers 5.24) rotates the first
        ``qk_rope_head_dim`` features of its ``index_head_dim``-wide heads in rotate_half
        pairs, with the attention's cos and sin (its attention rotates the last
        ``qk_rope_head_dim`` features of its heads, in interleaved pairs); the other features
        pass through.

        Parameters
        ----------
        x : array or tensor of shape (batch, heads, seq, index_head_dim)
            Indexer query heads, or its single key head (``heads`` = 1).
        position_ids : array or tensor
            ``(batch, seq)`` or ``(seq,)``, as :meth:`rotate` takes them.

        Returns
        -------
        array or tensor
            Same shape, dtype, library and device as ``x``.

        Raises
        ------
        ValueError
            A model without an indexer; ``x`` not 4-D or not ``index_head_dim`` wide;
            ``position_ids`` of the wrong shape.
        TypeError
            As :meth:`rotate`.
        """
        if self.indexer is None:
            raise ValueError(
                f"a {self.model_type} model has no DSA indexer (Scheme.indexer is None); rotate "
                "its attention's queries and keys with Scheme.rotate"
            )
        return rotate(self.indexer, x, position_ids, model_type=self.model_type)

    def scale_queries(self, q: Any, positions: Any, *, layer: int = 0) -> Any:
        """Experimental. ``q`` scaled as layer ``layer``'s attention scales its queries by position
        (Llama 4's temperature on NoPE layers); ``q`` unchanged where the layer does not.

        Llama 4 with ``attn_temperature_tuning`` multiplies the queries of its NoPE layers by
        ``1 + attn_scale * log1p(floor((p + 1) / floor_scale))`` (``Llama4TextAttention``,
        transformers 5.24): 1 for the first ``floor_scale - 1`` positions, about 1.257 at
        ``p = 100000`` with the shipped ``attn_scale = 0.1``, ``floor_scale = 8192``. The
        layer's :attr:`LayerScheme.query_temperature` holds the two numbers.

        Parameters
        ----------
        q : array or tensor of shape (batch, heads, seq, head_dim)
            Query heads (NumPy or torch, floating); keys are never scaled.
        positions : array or tensor
            The queries' cache positions, ``(batch, seq)`` or ``(seq,)``: what the model uses is
            ``arange(seq) + past_seen_tokens`` (the length of the cache before this call), not
            ``position_ids``.
        layer : int, default 0
            The layer.

        Returns
        -------
        array or tensor
            Same shape, dtype, library and device as ``q``. The scale is computed in float32 as
            the model computes it (positions past ``2**24`` round as ``positions.float()``
            rounds them), the product in the promoted dtype, then cast back to ``q``'s dtype.

        Raises
        ------
        TypeError
            ``q`` not a floating array or tensor; ``positions`` not real numbers or a tensor
            with a NumPy ``q``.
        ValueError
            ``q`` not 4-D or of the wrong head width; ``positions`` of the wrong shape or
            negative (the model's cache positions never are; below -1 the scale would be
            ``log1p(-1) = -inf``). Under ``torch.compile`` a negative position raises a
            RuntimeError from the graph.
        """
        return scale_queries(self.layer(layer), q, positions, model_type=self.model_type)


def _cos_first(num_embeddings: int, dim: int) -> Any:
    """fairseq's table with its halves swapped, ``[cos | sin]`` (MusicGen), positions from 0."""
    from ..compat import fairseq_sinusoidal_embedding

    table = fairseq_sinusoidal_embedding(num_embeddings, dim)
    half = dim // 2
    return np.concatenate((table[:, half : 2 * half], table[:, :half], table[:, 2 * half :]), 1)

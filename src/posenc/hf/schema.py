"""The shape of the atlas's rows: :class:`Convention` and :class:`ModelRow`.

Model knowledge in :mod:`posenc.hf` lives in data tables, a row per convention or per model type,
never in branches of code: ``conventions.py`` holds :data:`~posenc.hf.CONVENTIONS` (how a family
of models applies positions) and ``registry.py`` holds :data:`~posenc.hf.MODELS` (what each
transformers ``model_type``'s code decides that its config does not say). This module defines
the two row types and the few value sets their fields take, so that the tables and the code that
reads them (``read.py``, ``rotary.py``, ``fixed.py``, ``scheme.py``) share one definition.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["APPLIES_TO", "ROTARY_KINDS", "Convention", "ModelRow"]

# the kinds that rotate queries and keys (Scheme.rotate); the others use Scheme.function
ROTARY_KINDS = ("rope", "mrope")
# what a rotary convention turns (Convention.applies_to)
APPLIES_TO = ("qk", "qkv", "hidden")


@dataclass(frozen=True)
class Convention:
    """Experimental. How a family of models applies positions (one row of the atlas).

    Attributes
    ----------
    name : str
        The key, e.g. ``"llama"``.
    kind : str
        ``"rope"``, ``"mrope"`` (rotary with 3-D ids), ``"alibi"``, ``"t5"`` (bucketed
        relative bias), ``"sinusoidal"`` (a fixed table added to the embeddings), ``"learned"``
        (a trained table), ``"none"``, or ``"unknown"`` (the one row of model types posenc.hf
        has no verified row for: described as unknown, never guessed).
    pairing : str
        Rotary only: ``"half"`` (``rotate_half``: pairs ``(i, i + r/2)``), ``"interleaved"``
        (pairs ``(2i, 2i+1)``), or ``"deinterleave"`` (the rotated features are first reordered
        evens-then-odds, then rotated as ``"half"``; the output stays in that order: DeepSeek's
        ``rope_interleave``).
    slot : str
        Rotary only: where the rotated features sit in a head: ``"head"`` (the first
        ``rotary_dim``; the rest pass through) or ``"tail"`` (the last ``rotary_dim``: MLA puts
        the no-position part first).
    page : str
        The site page that derives it (without ``.md``).
    title_en, title_zh : str
        A short name in each language.
    pitfalls_en, pitfalls_zh : tuple of str
        What a port of such a model must get right, one sentence each.
    applies_to : str
        Rotary only: what the rotation turns. ``"qk"`` (queries and keys, after their
        projections: nearly every model), ``"qkv"`` (values too, by the same angles: CLVP) or
        ``"hidden"`` (the hidden states split into heads, before the q and k projections; the
        values take the unrotated states: wav2vec2-conformer's rotary option).
    axes : int
        M-RoPE only: how many position-id axes. 3 (t, h, w: ``mrope_section`` splits the pairs)
        or 2 (row, column taking turns pair by pair, as NeoMME does: pair ``j`` turns by axis
        ``j % 2``).
    layout : str
        M-RoPE only, beyond ``mrope_interleaved``: ``"hw_then_t"`` (Ernie 4.5 VL) gives the
        first ``mrope_section[0] + mrope_section[1]`` pairs to the h and w ids in turn (even
        pairs h, odd pairs w) and the last ``mrope_section[2]`` pairs to t; ``"xd"``
        (HunYuan-VL's xD-RoPE) cuts the features of ``cat(freqs, freqs)`` into chunks of
        ``2 * mrope_section[i]`` and gives chunk ``i`` the angles of axis ``i``, so the two
        features of a ``rotate_half`` pair can turn by angles of two different axes (any number
        of axes); ``""`` otherwise.
    """

    name: str
    kind: str
    pairing: str = "half"
    slot: str = "head"
    page: str = "rope"
    title_en: str = ""
    title_zh: str = ""
    pitfalls_en: tuple[str, ...] = ()
    pitfalls_zh: tuple[str, ...] = ()
    applies_to: str = "qk"
    axes: int = 3
    layout: str = ""


@dataclass(frozen=True)
class ModelRow:
    """Experimental. What a model type's code decides that its config does not say.

    Attributes
    ----------
    convention : str
        A key of :data:`CONVENTIONS`.
    sub_config : str or None
        Read the positions from this sub-config (``"text_config"`` for most multimodal models).
    pairing : str or None
        Overrides the convention's pairing, when a config key chooses (see ``pairing_key``).
    pairing_key : str or None
        A boolean config key that switches to ``"interleaved"`` (or ``"deinterleave"`` for MLA)
        when true, e.g. DeepSeek's ``rope_interleave``.
    dim_key : str or None
        The config key holding the rotated width (``"qk_rope_head_dim"`` for MLA); else the
        head dim times ``partial_rotary_factor``.
    head_dim_key : str or None
        The config key holding the full query/key head width when it is not ``head_dim``
        (MLA: ``"qk_head_dim"``, or the sum of ``qk_nope_head_dim`` and ``qk_rope_head_dim``).
    pattern : tuple or None
        ``(key, default, first_full)``: with no ``layer_types`` in the config, layer ``i`` is
        full attention when ``(i + 1) % pattern == 0`` (``first_full=False``) or
        ``i % pattern == 0`` (``first_full=True``), sliding otherwise; ``pattern`` is
        ``config[key]``, else ``default`` (``key`` None: always ``default``, Gemma 2's 2).
    nope : str or None
        How NoPE layers are marked: ``"no_rope_layers"`` (a 0/1 list, 1 = rotates),
        ``"full_attention"`` (full-attention layers do not rotate).
    default_base : float
        The base when neither the config nor its class names one (classes without
        ``rope_parameters``: GPT-J, RoFormer; the others' defaults are in ``classes.json``).
    layer_head_dim : tuple or None
        ``(layer_type, key, default)``: layers of that type have the head dim in ``key``
        (Gemma 4's full layers: ``global_head_dim``, 512), unless ``per_layer_config`` says.
    angle_sign : int
        -1 when the model rotates by minus the angle (its ``rotate_half`` returns
        ``(x2, -x1)``).
    mrope_default : tuple or None
        The ``mrope_section`` the model's code uses when the config names none.
    pattern_other : str
        The kind of the layers ``pattern`` does not make full attention:
        ``"sliding_attention"``, or ``"linear_attention"`` (Qwen3-Next's
        ``full_attention_interval``: linear-attention layers, no positions).
    cross_layers : tuple or None
        ``(key, default)``: the layers listed in ``config[key]`` (else ``default``) are
        cross-attention layers, whose attention takes no positions (mllama's
        ``cross_attention_layers``).
    chunk_rotating : bool
        With no ``layer_types`` in the config, the layers that rotate are
        ``"chunked_attention"`` when ``attention_chunk_size`` is set (Llama 4's config code:
        RoPE layers attend in chunks, NoPE layers attend fully).
    window_rule : tuple of (str, int) or None
        ``(key, divisor)``: a sliding layer's window is ``config[key] // divisor``
        (ModernBERT: ``local_attention // 2``); None: ``sliding_window``.
    bidirectional : bool
        An encoder: no causal mask (ModernBERT).
    switch : tuple or None
        ``(key, row)``: a boolean config key that switches the model to another row (Falcon's
        ``alibi``).
    table : str or None
        Sinusoidal tables: ``"fairseq"``, ``"marian"``, ``"whisper"`` (which posenc.compat
        function builds it) or ``"cos_first"`` (MusicGen).
    padded : bool
        fairseq tables: positions start at ``padding_idx + 1`` (``pad_token_id``); False for
        ports that count from 0 with no padding row (MusicGen).
    causal : bool
        T5 buckets: the only stack is a decoder (``bidirectional=False``; Pix2Struct's text
        model).
    alibi_scaled : bool
        ALiBi divided by ``sqrt(head_dim)`` before it joins the scores (Falcon).
    alibi_rounding : str or None
        ALiBi computed in a lower precision by the model's code: ``"bfloat16"`` (Falcon's
        slopes, positions and their products; the ``rounding`` of :func:`posenc.alibi_bias`).
    bucket_keys : tuple of (str or None, str or None)
        T5 buckets: the config keys holding ``num_buckets`` and ``max_distance``. None: the
        model's code fixes the value at T5's default (32 buckets, distance 128) whatever the
        config says (MPNet).
    bbox_keys : tuple of (str, str, str) or None
        T5 buckets: ``(flag, num_buckets key, max_distance key)`` of a second, 2-D bias that
        buckets the differences of box coordinates (LayoutLMv2/v3), reported as
        ``bbox_num_buckets`` and ``bbox_max_distance`` when the boolean ``flag`` is true.
    requires : str or None
        A boolean config key (default true) without which the model has no positions of this
        row's kind: a bucketed-bias row refuses a config that sets it false (LayoutLM's
        ``has_relative_attention_bias``); a rotary row then has only NoPE layers (CLVP's
        ``use_rotary_embedding``).
    selector : tuple of (str, str) or None
        ``(key, value)``: the row describes the model only when ``config[key] == value``; any
        other value (the config class's default included, see ``defaults``) selects position
        code posenc.hf does not describe, and is refused with the key named
        (wav2vec2-conformer's ``position_embeddings_type``: ``"rotary"``, default
        ``"relative"``).
    dim_rule : tuple of (str, int) or None
        ``(key, floor)``: the rotated width is ``max(config[key] // (2 * num_attention_heads),
        floor)``, as the model's rotary class computes it (CLVP: ``projection_dim``, 32).
    rotated_heads : int or None
        Only the first ``rotated_heads`` attention heads of q and k rotate; the others carry no
        positions (Qwen2.5-Omni's DiT: 1). None: every head.
    ntk_alpha : bool
        ``rope_type`` ``"dynamic"`` with an ``alpha`` key is NTK-alpha (HunYuan): a static base
        ``rope_theta * alpha ** (d / (d - 2))``, ``d`` the head dim, not dynamic NTK scaling.
    section_alias : str or None
        Another spelling of ``mrope_section`` in ``rope_parameters`` that the config class
        converts (HunYuan-VL's legacy ``xdrope_section``).
    value_key : str or None
        A boolean config key that makes the model rotate the values too (``applies_to``
        ``"qkv"``): RoFormer's ``rotary_value``.
    base_key : str or None
        The config key holding the RoPE base when the config has no ``rope_theta`` or
        ``rope_parameters`` (wav2vec2-conformer: ``rotary_embedding_base``).
    table_length : str or None
        Sinusoidal tables: the config key holding the table's number of rows (Whisper's
        encoder: ``max_source_positions``), reported as ``length``.
    learned_decoder : str or None
        The config key holding the length of a decoder's learned position table beside the
        encoder's fixed one (Whisper: ``max_target_positions``), reported as ``decoder_length``
        with ``decoder_table`` ``"learned"``.
    indexer : str or None
        The pairing of a DeepSeek Sparse Attention indexer that every attention layer has
        (``"half"``: DeepSeek-V3.2): its own q and k heads,
        ``index_head_dim`` wide, rotated on their FIRST ``qk_rope_head_dim`` features with the
        attention's frequencies (:attr:`Scheme.indexer`). None: no indexer.
    query_temperature : bool
        The NoPE layers multiply their queries by ``1 + attn_scale * log1p(floor((p + 1) /
        floor_scale))`` at cache position ``p`` when ``attn_temperature_tuning`` is true (Llama
        4's ``Llama4TextAttention``); :meth:`Scheme.scale_queries` applies it.
    nope_interval : int or None
        With ``nope="no_rope_layers"`` and that key empty or missing: every
        ``no_rope_layer_interval``-th layer (default this) is NoPE (Llama 4's config code).
    layers_rule : tuple or None
        How the config class derives the layer kinds when the file has no ``layer_types`` (nor
        an alias of it), as data: ``("indices", key)``: the layers listed in ``config[key]``
        are full attention, the others linear attention (Bamba's ``attn_layer_indices``; none
        listed: no layer attends); ``("cycle", key, default, linear_block, kind)``: the
        block names of ``config[key]`` (else ``default``) repeated over the layers, a block
        named ``linear_block`` a linear-attention layer, any other a layer of ``kind``
        (RecurrentGemma's ``block_types``: ``"recurrent"``, else sliding attention); ``("list", default)``: the class's default list
        (Zamba2's ``layers_block_type``); ``("fill", kind)``: every layer ``kind``
        (GraniteMoeHybrid: all Mamba).
    rope_when : tuple or None
        ``(key, value, default)``: the model builds its rotary module only when
        ``config[key]`` (else ``default``) equals ``value``; otherwise no layer rotates
        (GraniteMoeHybrid's ``position_embedding_type``: ``"rope"``, default None; Zamba2's
        ``use_mem_rope``, default false).
    nope_when : str or None
        With ``nope``, the NoPE rule holds only while ``config[nope_when]`` is set (EXAONE 4:
        with ``sliding_window`` null every layer rotates; set, the full-attention layers do
        not). The pattern of ``pattern`` is then 0 with the key null: a config with neither
        the key nor ``layer_types`` is refused, as its config class fails on it.
    head_dim_rule : int or None
        With no head dim in the file, the config class derives ``head_dim_rule * hidden_size
        // num_attention_heads`` (Zamba2's shared attention works on the doubled width: 2).
    partial_from : str or None
        A legacy key the config class turns into ``partial_rotary_factor = config[key] /
        head_dim`` when the file has no ``partial_rotary_factor`` (MiniMax-M2's
        ``rotary_dim``).
    mscale_keys : tuple of (str, str) or None
        LongRoPE as Phi-3.5-MoE's rotary runs it: the short factors at every length, cos and
        sin multiplied by ``rope_parameters[mscale_keys[0]]`` while ``max(position_ids) + 1``
        is at most ``original_max_position_embeddings``, by ``rope_parameters[mscale_keys[1]]``
        beyond (``short_mscale``, ``long_mscale``); both required, as its config class requires.
    layers_key : str
        The config key holding the number of layers (``"num_layers"`` for LongCat-Flash,
        whose config class has no ``num_hidden_layers``).
    notes_en, notes_zh : tuple of str
        Quirks of this model type worth a sentence.
    """

    convention: str
    sub_config: str | None = None
    pairing: str | None = None
    pairing_key: str | None = None
    dim_key: str | None = None
    head_dim_key: tuple[str, ...] | None = None
    pattern: tuple[str | None, int, bool] | None = None
    nope: str | None = None
    default_base: float = 10000.0
    layer_head_dim: tuple[str, str, int] | None = None
    angle_sign: int = 1
    mrope_default: tuple[int, int, int] | None = None
    nope_interval: int | None = None
    query_temperature: bool = False
    indexer: str | None = None
    table_length: str | None = None
    learned_decoder: str | None = None
    switch: tuple[str, ModelRow] | None = None
    pattern_other: str = "sliding_attention"
    cross_layers: tuple[str, tuple[int, ...]] | None = None
    chunk_rotating: bool = False
    window_rule: tuple[str, int] | None = None
    bidirectional: bool = False
    table: str | None = None
    padded: bool = True
    causal: bool = False
    alibi_scaled: bool = False
    alibi_rounding: str | None = None
    bucket_keys: tuple[str | None, str | None] = (
        "relative_attention_num_buckets",
        "relative_attention_max_distance",
    )
    bbox_keys: tuple[str, str, str] | None = None
    requires: str | None = None
    selector: tuple[str, str] | None = None
    dim_rule: tuple[str, int] | None = None
    base_key: str | None = None
    value_key: str | None = None
    rotated_heads: int | None = None
    ntk_alpha: bool = False
    section_alias: str | None = None
    layers_rule: tuple[Any, ...] | None = None
    rope_when: tuple[str, Any, Any] | None = None
    nope_when: str | None = None
    head_dim_rule: int | None = None
    partial_from: str | None = None
    mscale_keys: tuple[str, str] | None = None
    layers_key: str = "num_hidden_layers"
    notes_en: tuple[str, ...] = field(default=())
    notes_zh: tuple[str, ...] = field(default=())

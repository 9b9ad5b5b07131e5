"""Probes of ``hf_walk_fixed`` for position code that has no standard class (issue 12).

- T5-like buckets computed outside a ``compute_bias``: each probe calls the model's own
  position-bias code (MPNet's ``compute_position_bias``, LayoutLM's ``_cal*_1d/2d*`` methods,
  CPM-Ant's ``CpmAntSegmentPositionEmbedding``) with its bias table set to the bucket index,
  and returns the buckets with the relative positions they came from.
- Rotary models without a ``*RotaryEmbedding`` class (GPT-J, CodeGen: a sinusoidal buffer and
  ``rotate_every_two``; RoFormer: a Marian table and ``apply_rotary_position_embeddings``):
  the model's own table and apply function on random q, k (and v) against
  ``describe(config).rotate`` on (batch, heads, seq, dim).

Nothing here is a result: each probe only says how the model's code is called, as read from
transformers 5.23's modeling files.
"""

from __future__ import annotations

import copy
from typing import Any

import torch

import seeded

BATCH, SEQ, PAST = 2, 7, 3

# non-default parameters, so the walk checks that describe reads the model's own keys
BUCKET_KEYS: dict[str, dict[str, Any]] = {
    "mpnet": {"relative_attention_num_buckets": 40},  # only sizes the table: buckets stay 32
    "layoutlmv2": {
        "rel_pos_bins": 20,
        "max_rel_pos": 48,
        "rel_2d_pos_bins": 24,
        "max_rel_2d_pos": 100,
    },  # fmt: skip
    "layoutlmv3": {
        "rel_pos_bins": 20,
        "max_rel_pos": 48,
        "rel_2d_pos_bins": 24,
        "max_rel_2d_pos": 100,
    },  # fmt: skip
    "cpmant": {"position_bias_num_buckets": 20, "position_bias_max_distance": 48},
}
# types the T5 scan finds whose bucketed bias describe does not cover, with the reason
NOT_DESCRIBED = {
    "udop": "two bucket sets: the decoder's compute_bias buckets causally with "
    "relative_attention_num_buckets/max_distance, but the encoder ignores its compute_bias and "
    "sums RelativePositionBiasAggregated: a 1-D t5 bucket bias whose parameters come from "
    "relative_bias_args (defaults 32/128, not the relative_attention_* keys) plus horizontal "
    "and vertical biases over bbox centres times 100 (max distance 100); not described",
    "pp_doclayout_v2": "its reading-order encoder's 1-D t5 buckets are off by default "
    "(has_relative_attention_bias False) and ignored whenever its spatial bias is on (default); "
    "that bias is a box-relation embedding of box centres and sizes, not buckets",
}


def _arange_weight(w: torch.Tensor, axis: int) -> None:
    """Fill a bias table so that looking up bucket ``b`` gives ``b`` (along ``axis``)."""
    n = w.shape[axis]
    idx = torch.arange(n, dtype=w.dtype)
    with torch.no_grad():
        w.copy_(idx[:, None].expand_as(w) if axis == 0 else idx[None, :].expand_as(w))


def _head0(values: torch.Tensor) -> torch.Tensor:
    """(batch, heads, q, k) biases -> batch 0, head 0 as integer buckets."""
    return values[0, 0].round().long()


def buckets_mpnet(mod: Any, cfg: Any) -> list[tuple[str, torch.Tensor, torch.Tensor, str]]:
    enc = mod.MPNetEncoder(cfg)
    _arange_weight(enc.relative_attention_bias.weight, 0)
    out = []
    for n in (SEQ, 160):  # MPNetEncoder.forward passes no position_ids: 0 .. n-1
        with torch.no_grad():
            got = _head0(enc.compute_position_bias(torch.zeros(BATCH, n, 4)))
        rel = torch.arange(n)[None, :] - torch.arange(n)[:, None]  # key - query
        out.append(("1d", got, rel, "MPNetEncoder.compute_position_bias"))
    return out


def buckets_layoutlm(mod: Any, cfg: Any) -> list[tuple[str, torch.Tensor, torch.Tensor, str]]:
    enc_cls = next(c for n, c in vars(mod).items() if n.endswith("Encoder") and "LayoutLM" in n)
    enc = enc_cls(cfg)
    one_d = getattr(enc, "_cal_1d_pos_emb", None) or enc._calculate_1d_position_embeddings
    two_d = getattr(enc, "_cal_2d_pos_emb", None) or enc._calculate_2d_position_embeddings
    _arange_weight(enc.rel_pos_bias.weight, 1)  # weight.t()[bucket]: (bins, heads) rows
    out = []
    for n, start in ((SEQ, PAST), (160, 0)):
        pid = torch.arange(start, start + n)[None].expand(BATCH, -1)
        got = _head0(one_d(pid))
        out.append(("1d", got, pid[0][None, :] - pid[0][:, None], enc_cls.__name__))
    gen = torch.Generator().manual_seed(1)
    bbox = seeded.randint(0, 1000, (BATCH, 40, 4), generator=gen)
    for axis, coord in (("x", 0), ("y", 3)):  # x: left edges, y: bottom edges
        this, other = (enc.rel_pos_x_bias, enc.rel_pos_y_bias)[:: 1 if axis == "x" else -1]
        _arange_weight(this.weight, 1)
        with torch.no_grad():
            other.weight.zero_()
        got = _head0(two_d(bbox))
        c = bbox[0, :, coord]
        out.append(("bbox", got, c[None, :] - c[:, None], f"{enc_cls.__name__}:{axis}"))
    return out


def buckets_cpmant(mod: Any, cfg: Any) -> list[tuple[str, torch.Tensor, torch.Tensor, str]]:
    emb = mod.CpmAntSegmentPositionEmbedding(cfg)
    _arange_weight(emb.relative_attention_bias, 0)
    out = []
    for n in (SEQ + PAST, 160):
        pos = torch.arange(n, dtype=torch.int32)[None].expand(BATCH, -1)
        seg = torch.full((BATCH, n), 2, dtype=torch.int32)  # one segment: distance buckets
        with torch.no_grad():
            got = _head0(emb(pos, pos, seg, seg))
        rel = torch.arange(n)[None, :] - torch.arange(n)[:, None]
        out.append(("1d", got, rel, "CpmAntSegmentPositionEmbedding"))
    return out


BUCKET_PROBES = {
    "mpnet": buckets_mpnet,
    "layoutlmv2": buckets_layoutlm,
    "layoutlmv3": buckets_layoutlm,
    "cpmant": buckets_cpmant,
}


# ---------------------------------------------------------------- rotary tables


def _qkv(hd: int, seed: int = 0) -> tuple[torch.Tensor, ...]:
    gen = torch.Generator().manual_seed(seed)
    return tuple(seeded.randn(BATCH, SEQ, 4, hd, generator=gen) for _ in range(3))  # (b, s, h, d)


def _gptj_sin_cos(mod: Any, cfg: Any, pid: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """GPT-J / CodeGen's [sin | cos] table of width rotary_dim gathered at ``pid``: from its
    rotary embedding class (transformers 5.24: ``GPTJRotaryEmbedding``) or, before that, from
    the attention's ``embed_positions`` buffer."""
    emb = next((c for n, c in vars(mod).items() if n.endswith("RotaryEmbedding")), None)
    if emb is not None:
        return emb(cfg)(torch.zeros(1), pid)
    # 5.23: GPTJAttention.__init__ builds create_sinusoidal_positions(max_positions,
    # rotary_dim or embed_dim) as its embed_positions buffer; the same call, without the layer
    table = mod.create_sinusoidal_positions(cfg.n_positions, cfg.rotary_dim or cfg.n_embd)
    sincos = table[pid]  # (batch, seq, pos_embd_dim)
    sin, cos = torch.split(sincos, sincos.shape[-1] // 2, dim=-1)
    return sin, cos


def rotary_gptj(mod: Any, cfg: Any) -> list[tuple[Any, ...]]:
    """GPT-J / CodeGen attention, read line by line: a (max_pos, rotary_dim) [sin | cos] table
    gathered at position_ids, split, and ``apply_rotary_pos_emb(tensor, sin, cos)`` on the first
    ``rotary_dim`` features of (batch, seq, heads, dim) q and k (5.23's strict configs take no
    ``rotary_dim=None``: the whole head is ``rotary_dim = head_dim``)."""
    out = []
    for rot in (cfg.rotary_dim, cfg.n_embd // cfg.n_head):
        c = copy.deepcopy(cfg)
        c.rotary_dim = rot
        hd = c.n_embd // c.n_head
        q, k, _ = _qkv(hd)
        pid = torch.stack([torch.arange(SEQ), torch.arange(SEQ) + 5])
        sin, cos = _gptj_sin_cos(mod, c, pid)
        refs = []
        for x in (q, k):
            x_rot = mod.apply_rotary_pos_emb(x[..., :rot], sin, cos)
            x = torch.cat([x_rot, x[..., rot:]], dim=-1)
            refs.append(x.permute(0, 2, 1, 3))  # (batch, heads, seq, dim), as the model does
        out.append((c, f"rotary_dim={rot}", (q.transpose(1, 2), k.transpose(1, 2)), refs, pid))
    return out


def rotary_roformer(mod: Any, cfg: Any) -> list[tuple[Any, ...]]:
    """RoFormer's encoder: its Marian table (filled by create_weight, as _init_weights does) at
    ``past .. past + seq``, and ``apply_rotary_position_embeddings`` on (batch, heads, seq, dim)
    q, k and (rotary_value) v."""
    out = []
    for value in (False, True):
        c = copy.deepcopy(cfg)
        c.rotary_value = value
        enc = mod.RoFormerEncoder(c)
        with torch.no_grad():
            enc.embed_positions.weight.copy_(enc.embed_positions.create_weight())
        hd = c.hidden_size // c.num_attention_heads
        q, k, v = (x.transpose(1, 2) for x in _qkv(hd))
        sin_pos = enc.embed_positions((BATCH, SEQ), PAST)[None, None, :, :]
        attn = next(m for m in enc.modules() if hasattr(m, "apply_rotary_position_embeddings"))
        refs = attn.apply_rotary_position_embeddings(sin_pos, q, k, v if value else None)
        ins = (q, k, v) if value else (q, k)
        pid = torch.arange(PAST, PAST + SEQ)[None].expand(BATCH, -1)
        out.append((c, f"rotary_value={value}", ins, list(refs), pid))
    return out


ROTARY_PROBES = {"gptj": rotary_gptj, "codegen": rotary_gptj, "roformer": rotary_roformer}


def rotary_hidden(mod: Any, cfg: Any) -> list[tuple[Any, ...]]:
    """wav2vec2-conformer / wav2vec2-bert with ``position_embeddings_type="rotary"``: the
    encoder's own ``*RotaryPositionalEmbedding`` table (positions 0 .. seq-1, as its forward
    builds them from the input's length) and the self-attention's ``_apply_rotary_embedding`` on
    random hidden states (batch, seq, hidden), which the model rotates before linear_q/linear_k;
    both sides viewed as heads (batch, heads, seq, hidden / heads)."""
    rot_cls = next(
        c for n, c in vars(mod).items() if n.endswith("RotaryPositionalEmbedding") and "Wav2" in n
    )
    attn_cls = next(
        c
        for n, c in vars(mod).items()
        if isinstance(c, type) and "_apply_rotary_embedding" in vars(c)
    )
    heads = cfg.num_attention_heads
    hd = cfg.hidden_size // heads
    gen = torch.Generator().manual_seed(0)
    h = seeded.randn(BATCH, SEQ, cfg.hidden_size, generator=gen)
    with torch.no_grad():
        table = rot_cls(cfg)(h)  # (2, seq, 1, 1, hd): cos and sin
        out = attn_cls(cfg)._apply_rotary_embedding(h, table)

    def as_heads(t: torch.Tensor) -> torch.Tensor:
        return t.view(BATCH, SEQ, heads, hd).transpose(1, 2)

    pid = torch.arange(SEQ)[None].expand(BATCH, -1)  # the model takes no ids
    return [
        (cfg, "position_embeddings_type=rotary", (as_heads(h),), [as_heads(out)], pid, "hidden")
    ]


def rotary_clvp(mod: Any, cfg: Any) -> list[tuple[Any, ...]]:
    """CLVP's encoders, read from ClvpSelfAttention.forward: ``ClvpRotaryPositionalEmbedding``
    over the input (here SEQ + 5 tokens, so that per-batch offset ids stay inside its table),
    then ``apply_rotary_pos_emb(q, k, v, cos, sin, position_ids)`` on the first
    ``rotary_emb_dim`` features of q, k and v; for two ``projection_dim`` values (rotated width
    half the head, then the whole head). ``cfg`` is a clvp_encoder config or a clvp composite
    (its text_config)."""
    out = []
    for proj in (64, 256):
        c = copy.deepcopy(cfg)
        enc = getattr(c, "text_config", c)
        enc.projection_dim = proj
        hd = enc.hidden_size // enc.num_attention_heads
        q, k, v = (x.transpose(1, 2) for x in _qkv(hd))  # (batch, heads, seq, hd)
        with torch.no_grad():
            emb = mod.ClvpRotaryPositionalEmbedding(enc)(torch.zeros(BATCH, SEQ + 5, 1))
        pid = torch.stack([torch.arange(SEQ), torch.arange(SEQ) + 5])
        r = emb.shape[-1]
        cos, sin = emb.cos().squeeze(0), emb.sin().squeeze(0)
        rots = mod.apply_rotary_pos_emb(q[..., :r], k[..., :r], v[..., :r], cos, sin, pid)
        refs = [
            torch.cat((x_r, x[..., r:]), dim=-1) for x_r, x in zip(rots, (q, k, v), strict=True)
        ]
        out.append((c, f"projection_dim={proj}", (q, k, v), refs, pid))
    return out


def rotary_dit(mod: Any, cfg: Any) -> list[tuple[Any, ...]]:
    """Qwen2.5-Omni's DiT, read from DiTAttention.forward: its own rotary embedding at per-batch
    offset ids, then ``apply_rotary_pos_emb(deinterleave_head_dim(query[:, :1]), ...)``
    written back into the first head of (batch, heads, seq, head_dim) q and k; the other heads
    untouched. ``cfg`` is a qwen2_5_omni_dit config or a token2wav composite (its dit_config)."""
    dit = getattr(cfg, "dit_config", cfg)
    q, k, _ = (x.transpose(1, 2) for x in _qkv(dit.head_dim))
    pid = torch.stack([torch.arange(SEQ), torch.arange(SEQ) + 5])
    with torch.no_grad():
        cos, sin = mod.Qwen2_5OmniDiTRotaryEmbedding(config=dit)(q, pid)
    q_ref, k_ref = q.clone(), k.clone()
    q_ref[:, :1], k_ref[:, :1] = mod.apply_rotary_pos_emb(
        mod.deinterleave_head_dim(q[:, :1]), mod.deinterleave_head_dim(k[:, :1]), cos, sin
    )
    return [(cfg, "head 0", (q, k), [q_ref, k_ref], pid)]


ROTARY_PROBES.update(
    {
        "qwen2_5_omni_dit": rotary_dit,
        "qwen2_5_omni_token2wav": rotary_dit,
        "wav2vec2-conformer": rotary_hidden,
        "wav2vec2-bert": rotary_hidden,
        "clvp": rotary_clvp,
        "clvp_encoder": rotary_clvp,
    }
)

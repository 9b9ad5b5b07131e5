"""posenc as a user's type checker sees it: NumPy in gives NumPy out, a tensor in gives a tensor out.

tests/test_types.py runs mypy over this file (every ``assert_type`` is an error when the inferred
type differs) and then runs :func:`main`, which checks at run time that each value really is
of the class the checker was told. The types are spelled as a user writes them, not through
``posenc._typing``. PyTorch's ``nn.Module.__call__`` is typed ``Any`` by torch itself, so the
modules are checked through ``forward`` and their other methods.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
import numpy.typing as npt
import torch

import posenc
import posenc.compat
import posenc.hf
import posenc.torch

if sys.version_info >= (3, 11):
    from typing import assert_type
else:  # pragma: no cover - Python 3.10
    from typing_extensions import assert_type

Floats = npt.NDArray[np.floating[Any]]
Ints = npt.NDArray[np.integer[Any]]
Tensor = torch.Tensor


def _is(value: object, cls: type) -> None:
    if not isinstance(value, cls):
        raise AssertionError(f"expected {cls.__name__}, got {type(value).__name__}")


def sinusoidal_family() -> None:
    f = posenc.frequencies(8)
    assert_type(f, Floats)
    _is(f, np.ndarray)

    for pe in (
        posenc.sinusoidal(4, 8),
        posenc.sinusoidal(np.arange(4), 8),
        posenc.sinusoidal([0, 2, 5], 8, layout="concat"),
        posenc.sinusoidal(np.arange(4), 8, dtype=np.float32),
    ):
        assert_type(pe, Floats)
        _is(pe, np.ndarray)
    pt = posenc.sinusoidal(torch.arange(4), 8)
    assert_type(pt, Tensor)
    _is(pt, torch.Tensor)
    pt = posenc.sinusoidal(torch.arange(4), 8, dtype=torch.float32)
    assert_type(pt, Tensor)
    _is(pt, torch.Tensor)

    m = posenc.shift_matrix(3, 8)
    assert_type(m, Floats)
    _is(m, np.ndarray)


def naive_family() -> None:
    ids = np.arange(5)
    tids = torch.arange(5)
    a, b, c, d = (
        posenc.integer(ids),
        posenc.normalized(ids, 5),
        posenc.binary(ids, 4),
        posenc.periodic(ids, 4),
    )
    assert_type(a, Floats)
    assert_type(b, Floats)
    assert_type(c, Floats)
    assert_type(d, Floats)
    for x in (a, b, c, d):
        _is(x, np.ndarray)
    ta, tb, tc, td = (
        posenc.integer(tids),
        posenc.normalized(tids, 5),
        posenc.binary(tids, 4),
        posenc.periodic(tids, 4),
    )
    assert_type(ta, Tensor)
    assert_type(tb, Tensor)
    assert_type(tc, Tensor)
    assert_type(td, Tensor)
    for t in (ta, tb, tc, td):
        _is(t, torch.Tensor)


def attention_and_positions() -> None:
    rng = np.random.default_rng(0)
    q, k, v = (
        rng.standard_normal((2, 4, 8)),
        rng.standard_normal((2, 6, 8)),
        rng.standard_normal((2, 6, 8)),
    )
    out = posenc.attention(q, k, v)
    assert_type(out, Floats)
    _is(out, np.ndarray)
    out, weights = posenc.attention(q, k, v, return_weights=True)
    assert_type(out, Floats)
    assert_type(weights, Floats)
    _is(weights, np.ndarray)

    tq, tk, tv = torch.randn(2, 4, 8), torch.randn(2, 6, 8), torch.randn(2, 6, 8)
    tout = posenc.attention(tq, tk, tv, bias=torch.zeros(4, 6))
    assert_type(tout, Tensor)
    _is(tout, torch.Tensor)
    tout, tweights = posenc.attention(tq, tk, tv, return_weights=True)
    assert_type(tout, Tensor)
    assert_type(tweights, Tensor)
    _is(tweights, torch.Tensor)

    mask = np.array([[0, 1, 1], [1, 1, 1]])
    ids = posenc.position_ids(mask, pad_value=0)
    assert_type(ids, Ints)
    _is(ids, np.ndarray)
    tids = posenc.position_ids(torch.as_tensor(mask), pad_value=0)
    assert_type(tids, Tensor)
    _is(tids, torch.Tensor)

    rel = posenc.relative_positions(3, 5, offset=2)
    assert_type(rel, Ints)
    _is(rel, np.ndarray)


def rope_family() -> None:
    inv_freq, factor = posenc.rope_frequencies(8, scaling={"rope_type": "linear", "factor": 2.0})
    assert_type(inv_freq, Floats)
    assert_type(factor, float)
    _is(inv_freq, np.ndarray)
    _is(factor, float)

    x = np.random.default_rng(0).standard_normal((2, 3, 8))
    for r in (posenc.apply_rope(x, 3), posenc.apply_rope(x, np.arange(3), pairing="half")):
        assert_type(r, Floats)
        _is(r, np.ndarray)
    tr = posenc.apply_rope(torch.randn(2, 3, 8), torch.arange(3), pairing="half")
    assert_type(tr, Tensor)
    _is(tr, torch.Tensor)
    tr = posenc.apply_rope(torch.randn(2, 3, 8), 3)
    assert_type(tr, Tensor)
    _is(tr, torch.Tensor)

    perm = posenc.rope_permutation(8)
    assert_type(perm, Ints)
    _is(perm, np.ndarray)


def bias_family() -> None:
    slopes = posenc.alibi_slopes(4)
    assert_type(slopes, Floats)
    _is(slopes, np.ndarray)
    bias = posenc.alibi_bias(3, 5, 4)
    assert_type(bias, Floats)
    _is(bias, np.ndarray)
    bias = posenc.alibi_bias(3, 5, 4, like=np.zeros(1, dtype=np.float32))
    assert_type(bias, Floats)
    _is(bias, np.ndarray)
    tbias = posenc.alibi_bias(3, 5, 4, like=torch.zeros(1))
    assert_type(tbias, Tensor)
    _is(tbias, torch.Tensor)

    buckets = posenc.t5_bucket(posenc.relative_positions(3, 5))
    assert_type(buckets, Ints)
    _is(buckets, np.ndarray)
    tbuckets = posenc.t5_bucket(torch.arange(-4, 4), bidirectional=False)
    assert_type(tbuckets, Tensor)
    _is(tbuckets, torch.Tensor)


def sincos_2d() -> None:
    grid = posenc.sincos_2d(2, 3, 8)
    assert_type(grid, Floats)
    _is(grid, np.ndarray)
    tgrid = posenc.sincos_2d(2, 3, 8, like=torch.zeros(1), dtype=torch.float32)
    assert_type(tgrid, Tensor)
    _is(tgrid, torch.Tensor)


def compat_drop_ins() -> None:
    for table in (
        posenc.compat.tensor2tensor_timing_signal_1d(4, 8),
        posenc.compat.fairseq_sinusoidal_embedding(6, 8, padding_idx=1),
        posenc.compat.marian_sinusoidal_weight(6, 8),
        posenc.compat.mae_2d_sincos_pos_embed(8, 2, cls_token=True),
    ):
        assert_type(table, Floats)
        _is(table, np.ndarray)
    tokens = np.array([[1, 5, 6], [5, 6, 7]])
    pos = posenc.compat.fairseq_make_positions(tokens, 1)
    assert_type(pos, Ints)
    _is(pos, np.ndarray)
    tpos = posenc.compat.fairseq_make_positions(torch.as_tensor(tokens), 1)
    assert_type(tpos, Tensor)
    _is(tpos, torch.Tensor)


def torch_modules() -> None:
    x = torch.randn(2, 3, 8)
    sin = posenc.torch.SinusoidalPositionalEncoding(8, max_len=16)
    for t in (sin.forward(x), sin.forward(x, offset=2), sin.encodings(3)):
        assert_type(t, Tensor)
        _is(t, torch.Tensor)

    learned = posenc.torch.LearnedPositionalEmbedding(16, 8)
    t = learned.forward(x)
    assert_type(t, Tensor)
    _is(t, torch.Tensor)
    t = learned.embed(torch.arange(3))
    assert_type(t, Tensor)
    _is(t, torch.Tensor)

    rope = posenc.torch.RotaryEmbedding(8, max_len=16)
    q, k = rope.forward(x, x)
    assert_type(q, Tensor)
    assert_type(k, Tensor)
    _is(k, torch.Tensor)

    t5 = posenc.torch.T5RelativeBias(2)
    for t in (t5.forward(3, 5), t5.buckets(3, 5)):
        assert_type(t, Tensor)
        _is(t, torch.Tensor)


def rope_2d_family() -> None:
    pos = posenc.rope_2d_positions(2, 4)
    assert_type(pos, Ints)
    _is(pos, np.ndarray)
    tpos = posenc.rope_2d_positions(2, 4, convention="pixtral", like=torch.zeros(1))
    assert_type(tpos, Tensor)
    _is(tpos, torch.Tensor)
    table = posenc.rope_2d_frequencies(8)
    assert_type(table, Floats)
    _is(table, np.ndarray)
    mix = posenc.rope_mixed_frequencies(8, np.array([0.5, 1.0]))
    assert_type(mix, Floats)
    _is(mix, np.ndarray)
    tmix = posenc.rope_mixed_frequencies(8, torch.tensor([0.5, 1.0]))
    assert_type(tmix, Tensor)
    _is(tmix, torch.Tensor)
    x = np.ones((2, 8, 8))
    for out in (posenc.apply_rope_2d(x, pos), posenc.apply_rope_mixed(x, pos, mix)):
        assert_type(out, Floats)
        _is(out, np.ndarray)
    tx = torch.ones(2, 8, 8)
    for t in (posenc.apply_rope_2d(tx, tpos), posenc.apply_rope_mixed(tx, tpos, tmix)):
        assert_type(t, Tensor)
        _is(t, torch.Tensor)
    t = posenc.torch.RoPEMixed(8, 2).forward(tx, tpos)
    assert_type(t, Tensor)
    _is(t, torch.Tensor)


def xpos_axial_whisper() -> None:
    q = np.ones((2, 4, 8))
    qo, ko = posenc.apply_xpos(q, q, 4)
    assert_type(qo, Floats)
    _is(ko, np.ndarray)
    tq, tk = posenc.apply_xpos(torch.ones(2, 4, 8), torch.ones(2, 4, 8), torch.arange(4))
    assert_type(tq, Tensor)
    _is(tk, torch.Tensor)
    s = posenc.xpos_scale(4, 8)
    assert_type(s, Floats)
    _is(s, np.ndarray)
    ts = posenc.xpos_scale(torch.arange(4), 8)
    assert_type(ts, Tensor)
    _is(ts, torch.Tensor)
    e = posenc.axial_position_embeddings([np.ones((2, 3)), np.ones((3, 5))], 6)
    assert_type(e, Floats)
    _is(e, np.ndarray)
    te = posenc.axial_position_embeddings([torch.ones(2, 3), torch.ones(3, 5)], 6)
    assert_type(te, Tensor)
    _is(te, torch.Tensor)
    w = posenc.compat.whisper_sinusoids(4, 8)
    assert_type(w, Floats)
    _is(w, np.ndarray)
    tw = posenc.compat.whisper_sinusoids(4, 8, like=torch.zeros(0))
    assert_type(tw, Tensor)
    _is(tw, torch.Tensor)
    ax = posenc.torch.AxialPositionEmbedding((2, 3), (3, 5)).forward(6)
    assert_type(ax, Tensor)
    _is(ax, torch.Tensor)


def mrope_family() -> None:
    ids = posenc.mrope_position_ids([[("text", 2), ("image", (1, 2, 4))]])
    assert_type(ids, Ints)
    _is(ids, np.ndarray)
    tids = posenc.mrope_position_ids([[("text", 4)]], like=torch.zeros(1))
    assert_type(tids, Tensor)
    _is(tids, torch.Tensor)
    r = posenc.apply_mrope(np.ones((4, 8)), ids[:, 0], [2, 1, 1])
    assert_type(r, Floats)
    _is(r, np.ndarray)
    tr = posenc.apply_mrope(torch.ones(4, 8), tids[:, 0], [2, 1, 1], interleaved=True)
    assert_type(tr, Tensor)
    _is(tr, torch.Tensor)


def deberta_and_resize() -> None:
    b = posenc.deberta_log_bucket(np.arange(-5, 6), 4, 16)
    assert_type(b, Ints)
    _is(b, np.ndarray)
    tb = posenc.deberta_log_bucket(torch.arange(-5, 6), 4, 16)
    assert_type(tb, Tensor)
    _is(tb, torch.Tensor)
    rel = posenc.deberta_relative_positions(3, 3)
    assert_type(rel, Ints)
    _is(rel, np.ndarray)
    trel = posenc.deberta_relative_positions(3, 3, like=torch.zeros(1))
    assert_type(trel, Tensor)
    _is(trel, torch.Tensor)
    q = np.ones((3, 4))
    bias = posenc.deberta_disentangled_bias(q, q, rel, pos_key=np.ones((4, 4)))
    assert_type(bias, Floats)
    _is(bias, np.ndarray)
    tq = torch.ones(3, 4)
    tbias = posenc.deberta_disentangled_bias(tq, tq, trel, pos_query=torch.ones(4, 4))
    assert_type(tbias, Tensor)
    _is(tbias, torch.Tensor)
    big = posenc.resize_position_embeddings(np.ones((1 + 4, 2)), (3, 3))
    assert_type(big, Floats)
    _is(big, np.ndarray)
    tbig = posenc.resize_position_embeddings(torch.ones(1 + 4, 2), (3, 3))
    assert_type(tbig, Tensor)
    _is(tbig, torch.Tensor)


def layer_patterns() -> None:
    nope = posenc.llama4_nope_layers(8)
    assert_type(nope, tuple[int, ...])
    _is(nope, tuple)
    scale = posenc.llama4_attn_scale(np.arange(4))
    assert_type(scale, Floats)
    _is(scale, np.ndarray)
    tscale = posenc.llama4_attn_scale(torch.arange(4))
    assert_type(tscale, Tensor)
    _is(tscale, torch.Tensor)
    lr = posenc.layer_rope_parameters({"model_type": "gemma2", "num_hidden_layers": 2}, 0)
    assert_type(lr, posenc.layers.LayerRope)
    _is(lr, posenc.layers.LayerRope)


def frontier_and_mla() -> None:
    d = np.arange(-3, 4)
    kb = posenc.kerple_bias(d, r1=1.0, r2=0.5)
    assert_type(kb, Floats)
    _is(kb, np.ndarray)
    tkb = posenc.kerple_bias(torch.arange(-3, 4), r1=1.0, r2=0.5)
    assert_type(tkb, Tensor)
    _is(tkb, torch.Tensor)
    sb = posenc.sandwich_bias(d, 8)
    assert_type(sb, Floats)
    tsb = posenc.sandwich_bias(torch.arange(-3, 4), 8)
    assert_type(tsb, Tensor)
    fr = posenc.fire_relative(np.arange(4), np.arange(4), c=1.0, threshold=8.0)
    assert_type(fr, Floats)
    _is(fr, np.ndarray)
    tfr = posenc.fire_relative(torch.arange(4), torch.arange(4), c=1.0, threshold=8.0)
    assert_type(tfr, Tensor)
    q = np.ones((3, 4))
    cb = posenc.cope_bias(q, q, np.ones((4, 4)))
    assert_type(cb, Floats)
    _is(cb, np.ndarray)
    tq = torch.ones(3, 4)
    tcb = posenc.cope_bias(tq, tq, torch.ones(4, 4))
    assert_type(tcb, Tensor)
    rd = posenc.rerope_distance(d, window=2.0)
    assert_type(rd, Floats)
    trd = posenc.rerope_distance(torch.arange(-3, 4), window=2.0)
    assert_type(trd, Tensor)
    _is(trd, torch.Tensor)
    qm, km = posenc.apply_mla_rope(np.ones((2, 3, 6)), np.ones((1, 3, 4)), 3)
    assert_type(qm, Floats)
    assert_type(km, Floats)
    _is(qm, np.ndarray)
    tqm, tkm = posenc.apply_mla_rope(torch.ones(2, 3, 6), torch.ones(1, 3, 4), torch.arange(3))
    assert_type(tqm, Tensor)
    assert_type(tkm, Tensor)
    _is(tkm, torch.Tensor)
    scale = posenc.mla_softmax_scale(4, 2)
    assert_type(scale, float)


def hf_atlas() -> None:
    cfg = {"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4}
    scheme = posenc.hf.describe({**cfg, "num_hidden_layers": 2})
    assert_type(scheme, posenc.hf.Scheme)
    _is(scheme, posenc.hf.Scheme)
    assert_type(scheme.num_layers, int)
    layer = scheme.layer(0)
    assert_type(layer, posenc.hf.LayerScheme)
    inv, factor = layer.inv_freq()
    assert_type(inv, Floats)
    assert_type(factor, float)
    _is(inv, np.ndarray)
    # Scheme.rotate is typed (Any, Any) -> Any: no NumPy-in/NumPy-out overloads yet
    r = scheme.rotate(np.ones((1, 1, 3, 16)), np.arange(3), layer=1)
    _is(r, np.ndarray)
    tr = scheme.rotate(torch.ones(1, 1, 3, 16), torch.arange(3))
    _is(tr, torch.Tensor)
    assert_type(scheme.to_dict(), dict[str, Any])
    assert_type(layer.to_dict(), dict[str, Any])
    assert_type(scheme.explain("zh"), str)
    assert_type(posenc.hf.posenc_call(scheme, 0), str)
    assert_type(posenc.hf.MODELS["llama"], posenc.hf.ModelRow)
    assert_type(posenc.hf.CONVENTIONS["llama"], posenc.hf.Convention)
    assert_type(posenc.hf.TRANSFORMERS_VERSION, str)
    row = posenc.hf.ModelRow("llama", default_base=5e5)
    conv = posenc.hf.Convention("llama", "rope", pairing="half")
    assert row.convention == conv.name
    nope = posenc.hf.LayerScheme(0, "full_attention", "nope")
    by_hand = posenc.hf.Scheme("my_model", "llama", "rope", False, (nope,))
    _is(by_hand.rotate(np.ones((1, 1, 2, 4)), np.arange(2)), np.ndarray)


def video_and_engines() -> None:
    """N-D RoPE (diffusion models), VideoRoPE, TMRoPE and the engine mappings (issue 24)."""
    grid = posenc.rope_grid_positions((2, 2, 3))
    assert_type(grid, npt.NDArray[np.integer[Any]])
    _is(posenc.rope_grid_positions((2, 3), like=torch.zeros(1)), torch.Tensor)
    assert_type(posenc.rope_axes_frequencies([4, 2, 2]), npt.NDArray[np.floating[Any]])
    q = np.ones((2, 12, 8))
    assert_type(posenc.apply_rope_axes(q, grid, [4, 2, 2]), npt.NDArray[np.floating[Any]])
    _is(posenc.apply_rope_axes(torch.ones(2, 12, 8), grid, [4, 2, 2]), torch.Tensor)
    lay = [("text", 2), ("video", (2, 4, 4)), ("text", 1)]
    ids = posenc.videorope_position_ids([lay])
    assert_type(ids, npt.NDArray[np.floating[Any]])
    _is(posenc.videorope_position_ids([lay], like=torch.zeros(1)), torch.Tensor)
    x = np.ones((1, ids.shape[-1], 8))
    assert_type(posenc.apply_videorope(x, ids[:, 0], [2, 1, 1]), npt.NDArray[np.floating[Any]])
    omni = posenc.tmrope_position_ids([[("text", 1), ("audio", 3), ("text", 1)]])
    assert_type(omni, npt.NDArray[np.integer[Any]])
    cfg = {"model_type": "qwen2", "hidden_size": 64, "num_attention_heads": 4,
           "num_hidden_layers": 2, "rope_theta": 1e6}  # fmt: skip
    assert_type(posenc.gguf_rope(cfg), dict[str, Any])
    assert_type(posenc.mlx_rope(cfg), dict[str, Any])
    assert_type(posenc.vllm_rope(cfg), dict[str, Any])
    assert posenc.engine_conventions("qwen2").gguf_arch == "qwen2"
    assert_type(posenc.explain_engines(cfg, "zh"), str)
    assert_type(posenc.explain_engines(posenc.hf.describe(cfg)), str)
    g = np.full(4, -0.5)
    assert_type(posenc.forgetting_bias(g), npt.NDArray[np.floating[Any]])
    _is(posenc.forgetting_bias(torch.from_numpy(g)), torch.Tensor)
    z = np.zeros((4, 4))
    assert_type(posenc.stick_breaking_weights(z), npt.NDArray[np.floating[Any]])
    _is(posenc.stick_breaking_weights(torch.zeros(4, 4), attend_current=True), torch.Tensor)
    qk = np.ones((4, 3))
    assert_type(posenc.path_scores(qk, qk, qk, np.ones(4)), npt.NDArray[np.floating[Any]])
    t = torch.ones(4, 3)
    _is(posenc.path_scores(t, t, t, torch.ones(4)), torch.Tensor)
    assert posenc.hybrid_attention("jamba").attention == "none"


def partial_cache_packing() -> None:
    w = posenc.partial_rope_frequencies(16, 0.25, rule="proportional")
    assert_type(w, Floats)
    _is(w, np.ndarray)
    y = posenc.apply_partial_rope(np.ones((3, 16)), 3, fraction=0.5)
    assert_type(y, Floats)
    ty = posenc.apply_partial_rope(torch.ones(3, 16), torch.arange(3), fraction=0.5)
    assert_type(ty, Tensor)
    _is(ty, torch.Tensor)
    moved = posenc.rerotate_keys(np.ones((3, 8)), np.arange(3), 3)
    assert_type(moved, Floats)
    tmoved = posenc.rerotate_keys(torch.ones(3, 8), torch.arange(3), torch.arange(3))
    assert_type(tmoved, Tensor)
    _is(tmoved, torch.Tensor)
    kept, pos = posenc.streaming_positions(10, sinks=2, window=3)
    assert_type(kept, Ints)
    assert_type(pos, Ints)
    sw = posenc.sink_softmax(np.zeros((1, 2, 3)), np.zeros(1))
    assert_type(sw, Floats)
    tsw = posenc.sink_softmax(torch.zeros(1, 2, 3), torch.zeros(1))
    assert_type(tsw, Tensor)
    ids = posenc.packed_position_ids([2, 3])
    assert_type(ids, Ints)
    tids = posenc.packed_position_ids(torch.tensor([2, 3]))
    assert_type(tids, Tensor)
    cu = posenc.cu_seqlens(ids)
    assert_type(cu, Ints)
    tcu = posenc.cu_seqlens(tids)
    assert_type(tcu, Tensor)
    mask = posenc.packed_causal_mask(ids)
    _is(mask, np.ndarray)
    tmask = posenc.packed_causal_mask(tids)
    assert_type(tmask, Tensor)
    shard = posenc.context_parallel_positions(8, 2, 0)
    assert_type(shard, Ints)
    tree = posenc.draft_tree_position_ids([-1, 0, 0], offset=4)
    assert_type(tree, Ints)
    ttree = posenc.draft_tree_position_ids(torch.tensor([-1, 0, 0]))
    assert_type(ttree, Tensor)
    tm = posenc.draft_tree_mask([-1, 0, 0])
    _is(tm, np.ndarray)
    ttm = posenc.draft_tree_mask(torch.tensor([-1, 0, 0]))
    assert_type(ttm, Tensor)


def main() -> None:
    """Run every check above (tests/test_types.py calls it)."""
    layer_patterns()
    deberta_and_resize()
    sinusoidal_family()
    naive_family()
    attention_and_positions()
    rope_family()
    bias_family()
    sincos_2d()
    compat_drop_ins()
    torch_modules()
    rope_2d_family()
    xpos_axial_whisper()
    mrope_family()
    frontier_and_mla()
    hf_atlas()
    video_and_engines()
    partial_cache_packing()


if __name__ == "__main__":
    main()

"""posenc.packing: packed position ids, cu_seqlens, the packed mask, context-parallel shards and
draft trees.

Against transformers (tested with 5.23.0): ``DataCollatorWithFlattening``,
``prepare_fa_kwargs_from_position_ids``, ``masking_utils`` (``find_packed_sequence_indices`` and
the mask ``create_causal_mask`` builds from packed ``position_ids``), and a small random Llama run
on packed rows (what breaks when the ids run across documents: measured here, quoted on
docs/*/packing.md). Against torch (tested with 2.13.0): the head-tail load balancer of its
context parallelism.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import posenc
import seeded
from ci_rule import require

LENGTHS = [[3, 2, 4], [1], [5, 1, 1, 7], [2, 0, 3]]


@pytest.mark.parametrize("lengths", LENGTHS)
def test_packed_ids_and_boundaries(lengths):
    ids = posenc.packed_position_ids(lengths)
    want = np.concatenate([np.arange(n) for n in lengths])
    assert ids.dtype == np.int64 and ids.tolist() == want.tolist()
    ids_t = posenc.packed_position_ids(torch.tensor(lengths))
    assert ids_t.dtype == torch.int64 and ids_t.tolist() == want.tolist()
    nonzero = [n for n in lengths if n]
    cu = posenc.cu_seqlens(ids)
    assert (
        cu.dtype == np.int32 and cu.tolist() == np.concatenate([[0], np.cumsum(nonzero)]).tolist()
    )
    assert posenc.cu_seqlens(ids_t[None]).tolist() == cu.tolist()


@pytest.mark.parametrize("lengths", [n for n in LENGTHS if 0 not in n])
def test_against_data_collator_with_flattening(lengths):
    transformers = require("transformers")
    rng = np.random.default_rng(0)
    features = [{"input_ids": rng.integers(0, 100, n).tolist()} for n in lengths]
    collator = transformers.DataCollatorWithFlattening(return_flash_attn_kwargs=True)
    batch = collator(features, return_tensors="pt")
    assert batch["position_ids"].tolist() == [posenc.packed_position_ids(lengths).tolist()]
    cu = posenc.cu_seqlens(batch["position_ids"])
    assert cu.tolist() == list(batch["cu_seq_lens_q"])
    assert int(np.diff(cu.cpu().numpy()).max()) == batch["max_length_q"]


@pytest.mark.parametrize(
    "ids",
    [[0, 1, 2, 0, 1, 0, 1, 2, 3], [0, 1, 2, 3, 4, 5], [0, 0, 0], [0, 1, 2, 5, 6, 0, 1]],
)
def test_cu_seqlens_against_prepare_fa_kwargs(ids):
    require("transformers")
    from transformers.modeling_flash_attention_utils import prepare_fa_kwargs_from_position_ids

    (cu_q, cu_k), (max_q, _) = prepare_fa_kwargs_from_position_ids(torch.tensor([ids]))
    got = posenc.cu_seqlens(torch.tensor([ids]))
    assert got.dtype == cu_q.dtype == torch.int32
    assert got.tolist() == cu_q.tolist() == cu_k.tolist()


def test_cu_seqlens_refuses_what_transformers_gets_wrong():
    """transformers splits at the smallest id; when the first id is not the smallest its
    boundaries do not start at 0 (what a varlen kernel would misread). posenc refuses."""
    require("transformers")
    from transformers.modeling_flash_attention_utils import prepare_fa_kwargs_from_position_ids

    (cu_q, _), _ = prepare_fa_kwargs_from_position_ids(torch.tensor([[4, 5, 6, 0, 1]]))
    assert cu_q.tolist() == [3, 5]
    with pytest.raises(ValueError, match="position_ids"):
        posenc.cu_seqlens([4, 5, 6, 0, 1])
    start2 = transformers_collator_ids([3, 2], start=2)
    assert posenc.cu_seqlens(start2).tolist() == [0, 3, 5]


def transformers_collator_ids(lengths, start):
    transformers = require("transformers")
    features = [{"input_ids": list(range(n))} for n in lengths]
    collator = transformers.DataCollatorWithFlattening(position_ids_start=start)
    return collator(features, return_tensors="pt")["position_ids"]


@pytest.mark.parametrize(
    "ids",
    [[0, 1, 2, 0, 1, 0, 1, 2, 3], [0, 1, 2, 5, 6, 0, 1], [4, 5, 6, 0, 1], [0, 1, 2, 3]],
)
def test_packed_mask_against_transformers_masking_utils(ids):
    transformers = require("transformers")
    from transformers.masking_utils import create_causal_mask, find_packed_sequence_indices

    pid = torch.tensor([ids])
    mask = posenc.packed_causal_mask(pid)
    seq = find_packed_sequence_indices(pid)
    docs = torch.zeros_like(pid) if seq is None else seq
    assert torch.equal(
        mask[0], (docs[0][:, None] == docs[0][None]) & torch.ones(len(ids), len(ids)).tril().bool()
    )
    config = transformers.LlamaConfig(hidden_size=8, num_attention_heads=2, num_hidden_layers=1)
    config._attn_implementation = "eager"
    embeds = torch.zeros(1, len(ids), 8)
    hf = create_causal_mask(config, embeds, None, None, position_ids=pid)
    allowed = hf[0, 0] == 0 if hf.dtype != torch.bool else hf[0, 0]
    assert torch.equal(mask[0], allowed)


def _tiny_llama(impl):
    transformers = require("transformers")
    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(
        hidden_size=64,
        num_attention_heads=4,
        num_key_value_heads=4,
        intermediate_size=128,
        num_hidden_layers=2,
        vocab_size=100,
        attn_implementation=impl,
    )
    # weights drawn by the CPU generator, then moved: the same model on every --device (the
    # cuda leg's own generator drew other weights, and the page quotes this model's numbers)
    with torch.device("cpu"):
        model = transformers.LlamaForCausalLM(cfg)
    return model.to(torch.get_default_device()).double().eval()


@pytest.mark.parametrize("impl", ["sdpa", "eager"])
def test_what_breaks_when_ids_run_across_documents(impl):
    """The measurement quoted on docs/*/packing.md#what-breaks (transformers 5.23.0)."""
    model = _tiny_llama(impl)
    gen = torch.Generator().manual_seed(1)
    lengths = [5, 7, 4]
    docs = [seeded.randint(0, 100, (n,), generator=gen) for n in lengths]
    ids = torch.cat(docs)[None]
    reset = posenc.packed_position_ids(torch.tensor(lengths))[None]
    running = torch.arange(ids.shape[1])[None]
    with torch.no_grad():
        alone = torch.cat([model(d[None], use_cache=False).logits[0] for d in docs])
        ok = model(ids, position_ids=reset, use_cache=False).logits[0]
        with_cache = model(ids, position_ids=reset).logits[0]  # use_cache defaults to True
        run = model(ids, position_ids=running, use_cache=False).logits[0]
        block = posenc.packed_causal_mask(reset)[None]
        additive = torch.zeros(block.shape, dtype=torch.float64).masked_fill(~block, float("-inf"))
        run_masked = model(ids, position_ids=running, attention_mask=additive).logits[0]
    err = {
        "reset": float((ok - alone).abs().max()),
        "reset, default cache": float((with_cache - alone).abs().max()),
        "running": float((run - alone).abs().max()),
        "running, first doc": float((run[:5] - alone[:5]).abs().max()),
        "running, block mask": float((run_masked - alone).abs().max()),
    }
    scale = float(alone.abs().max())
    assert err["reset"] < 1e-6 * scale  # packed ids, no cache: documents kept apart
    assert err["reset, default cache"] > 0.05 * scale  # a cache disables the packed-row rule
    assert err["running"] > 0.05 * scale  # ids that run on: documents merged
    assert err["running, first doc"] < 1e-6 * scale  # the first document sees nothing new
    # RoPE is relative: with the right mask, running ids change only float32 angle rounding
    assert err["running, block mask"] < 1e-6 * scale
    if impl == "sdpa":  # the numbers the page quotes
        quoted = {"reset, default cache": 0.47, "running": 0.47}
        assert {key: round(err[key], 2) for key in quoted} == quoted, err
        assert round(scale, 2) == 0.51


@pytest.mark.parametrize("world", [1, 2, 3, 4, 8])
def test_zigzag_equals_torch_head_tail_load_balancer(world):
    lb = require("torch.distributed.tensor.experimental._context_parallel._load_balancer")
    seq = 16 * world
    order = lb._HeadTailLoadBalancer(seq, world, "cpu")._generate_indices()[0]
    shards = order.view(world, -1)
    for rank in range(world):
        assert posenc.context_parallel_positions(seq, world, rank).tolist() == sorted(
            shards[rank].tolist()
        )


@pytest.mark.parametrize("layout", ["zigzag", "contiguous"])
def test_shards_rotate_like_the_whole_sequence(layout):
    world, seq, dim = 4, 32, 16
    x = np.random.default_rng(2).normal(size=(2, seq, dim))
    whole = posenc.apply_rope(x, seq, pairing="half")
    seen = []
    for rank in range(world):
        pos = posenc.context_parallel_positions(seq, world, rank, layout=layout)
        seen += pos.tolist()
        np.testing.assert_allclose(
            posenc.apply_rope(x[:, pos], pos, pairing="half"), whole[:, pos], atol=1e-12
        )
    assert sorted(seen) == list(range(seq))


def test_zigzag_balances_causal_work():
    world, seq = 4, 64
    work = []
    for rank in range(world):
        pos = posenc.context_parallel_positions(seq, world, rank)
        work.append(int((pos + 1).sum()))  # keys each query sees under a causal mask
    assert len(set(work)) == 1
    contiguous = [
        int((posenc.context_parallel_positions(seq, world, r, layout="contiguous") + 1).sum())
        for r in range(world)
    ]
    assert max(contiguous) > 3 * min(contiguous)


TREES = [[-1, -1, 0, 0, 1, 2], [-1, 0, 1, 2], [-1, -1, -1], [-1, 0, 0, 1, 1, 2, 5]]


@pytest.mark.parametrize("parents", TREES)
def test_tree_attention_equals_decoding_each_path(parents):
    """One pass over the tree, with its positions and mask, gives every node the output it gets
    when its root-to-node path is decoded as a plain causal sequence after the same context."""
    rng = np.random.default_rng(3)
    n, ctx, dim = len(parents), 5, 16
    q_raw, k_raw, v = rng.normal(size=(3, ctx + n, dim))
    pos = posenc.draft_tree_position_ids(parents, offset=ctx)
    tree = posenc.draft_tree_mask(parents)
    all_pos = np.concatenate([np.arange(ctx), pos])
    mask = np.concatenate([np.ones((n, ctx), dtype=bool), tree], axis=1)
    q = posenc.apply_rope(q_raw[ctx:], pos)
    k = posenc.apply_rope(k_raw, all_pos)
    out = posenc.attention(q, k, v, mask=mask)
    for node in range(n):
        path = [node]
        while parents[path[-1]] >= 0:
            path.append(parents[path[-1]])
        rows = list(range(ctx)) + [ctx + i for i in reversed(path)]
        seq_k = posenc.apply_rope(k_raw[rows], len(rows))
        seq_q = posenc.apply_rope(q_raw[rows[-1:]], np.array([len(rows) - 1]))
        want = posenc.attention(seq_q, seq_k, v[rows])
        np.testing.assert_allclose(out[node : node + 1], want, rtol=0, atol=1e-12)


def test_tree_torch_follows_its_input():
    par = torch.tensor([-1, 0, 0, 1])
    assert posenc.draft_tree_position_ids(par, offset=3).tolist() == [3, 4, 4, 5]
    m = posenc.draft_tree_mask(par)
    assert m.dtype == torch.bool and m.tolist() == posenc.draft_tree_mask([-1, 0, 0, 1]).tolist()


# --- issue 40: sizes, overflow (refused by name, before any allocation) ---------------------

_WRAP = """
import numpy as np, torch, posenc
for lengths in (torch.tensor([2**62] * 4), torch.tensor([2**63 - 1, 1]), np.array([2**62] * 4)):
    try:
        posenc.packed_position_ids(lengths)
    except ValueError as exc:
        print("ValueError", exc)
    else:
        print("no error")
"""


def test_torch_lengths_whose_int64_sum_wraps_are_refused_in_a_subprocess():
    """[2**62] * 4 sums to 0 in int64 and crashed the interpreter in repeat_interleave; [2**63 - 1,
    1] wraps negative (a bare RuntimeError). Run apart: a segfault fails this test, not pytest."""
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-c", _WRAP], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, (run.returncode, run.stderr[-2000:])
    lines = run.stdout.splitlines()
    assert len(lines) == 3, run.stdout
    for line in lines:  # torch refuses as NumPy does: a ValueError naming lengths and the limit
        assert line.startswith("ValueError lengths must sum to at most 2**40"), line


@pytest.mark.parametrize(
    "lengths",
    [
        [2**63 - 1, 1],
        [2**40, 1],
        [2**39] * 2 + [1],
    ],
)
def test_torch_refuses_the_totals_numpy_refuses(lengths):
    with pytest.raises(ValueError, match=r"^lengths must sum to at most 2\*\*40") as np_err:
        posenc.packed_position_ids(np.array(lengths))
    with pytest.raises(ValueError, match=r"^lengths must sum to at most 2\*\*40") as t_err:
        posenc.packed_position_ids(torch.tensor(lengths))
    assert str(t_err.value) == str(np_err.value)


def test_torch_uint64_lengths_past_int64_are_refused_by_their_total():
    big = torch.tensor([2**63 + 5, 3], dtype=torch.uint64)
    with pytest.raises(ValueError, match=r"lengths must sum to at most 2\*\*40"):
        posenc.packed_position_ids(big)
    with pytest.raises(ValueError, match=r"lengths must sum to at most 2\*\*40"):
        posenc.packed_position_ids(np.array([2**63 + 5, 3], dtype=np.uint64))


def test_cu_seqlens_checks_the_size_of_its_boundaries_before_allocating(monkeypatch):
    """An expanded view of 2**27 tokens holds one value but can start 2**27 documents: 1 GiB of
    int64 starts, refused by name on a machine of 256 MiB (the limit is patched, nothing is
    allocated)."""
    import posenc._array as arr

    monkeypatch.setattr(arr, "memory_bytes", lambda device=None: 2**28)
    for ids in (torch.zeros(1, dtype=torch.int64).expand(2**27), np.broadcast_to(0, (2**27,))):
        with pytest.raises(ValueError, match=r"^position_ids of 134217728 tokens .* 1\.0 GiB"):
            posenc.cu_seqlens(ids)
    assert posenc.cu_seqlens(np.zeros(4, dtype=np.int64)).tolist() == [0, 1, 2, 3, 4]

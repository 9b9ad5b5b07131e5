"""What docs/*/packing.md and docs/*/kv-cache.md say about other libraries' code, run on it.

transformers (tested with 5.23.0 and 5.24.0): the FlashAttention path finds packed documents only
in a batch of one row and whatever the cache (run with a reference kernel in place of flash-attn,
which needs a GPU); dynamic NTK and LongRoPE pick their frequencies from ``max(position_ids) + 1``
over the whole batch; ``DataCollatorWithFlattening(return_seq_idx=True)``; DeepSeek-V3 keeps its
rotated key part in the cache's value slot, and moving that part alone moves the cache.
"""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pytest
import torch

import posenc
import seeded
from ci_rule import require

# --- packing: FlashAttention's packed-row rule ------------------------------------------------


def _attend(q, k, v, scale):
    """Causal softmax attention of one sequence, (seq, heads, dim), bottom-right aligned."""
    s = torch.einsum("qhd,khd->hqk", q, k) * scale
    keep = torch.ones(q.shape[0], k.shape[0], dtype=torch.bool).tril(k.shape[0] - q.shape[0])
    return torch.einsum("hqk,khd->qhd", s.masked_fill(~keep, float("-inf")).softmax(-1), v)


class _ReferenceFlash:
    """flash-attn's two entry points, in plain torch: what transformers calls, and with what."""

    def __init__(self):
        self.calls = []

    def flash(self, q, k, v, causal=True, softmax_scale=None, **_):
        self.calls.append("flash")
        return torch.stack([_attend(q[b], k[b], v[b], softmax_scale) for b in range(q.shape[0])])

    def varlen(self, q, k, v, cu_seqlens_q, cu_seqlens_k, causal=True, softmax_scale=None, **_):
        cu = cu_seqlens_q.tolist()
        self.calls.append(("varlen", cu))
        parts = [_attend(q[a:b], k[a:b], v[a:b], softmax_scale) for a, b in pairwise(cu)]
        return torch.cat(parts)

    def imports(self, *args, **kwargs):
        def process(**kw):
            return {"causal": kw["is_causal"], "softmax_scale": kw["softmax_scale"]}

        return (self.flash, self.varlen, None, None, None), (process, process)


def _llama(impl):
    transformers = require("transformers")
    cfg = transformers.LlamaConfig(
        hidden_size=64,
        num_attention_heads=4,
        num_key_value_heads=4,
        intermediate_size=128,
        num_hidden_layers=2,
        vocab_size=100,
    )
    with torch.device("cpu"):
        torch.manual_seed(0)
        model = transformers.LlamaForCausalLM(cfg)
    model = model.to(torch.get_default_device()).double().eval()
    model.config._attn_implementation = impl  # flash-attn is not installed: set, not loaded
    return model


def test_flash_path_finds_documents_only_in_a_batch_of_one_whatever_the_cache(monkeypatch):
    """packing.md#as-run: `_is_packed_sequence` (modeling_flash_attention_utils.py:564-578 in
    5.23.0) returns False for batch_size != 1, so two packed rows go to the plain kernel and
    their documents attend to each other; it never looks at the cache, so use_cache=True keeps
    the documents apart at batch size 1 (masking_utils' rule for eager/SDPA/flex does not)."""
    require("transformers")
    import transformers.modeling_flash_attention_utils as fa_utils

    kernel = _ReferenceFlash()
    monkeypatch.setattr(fa_utils, "lazy_import_flash_attention", kernel.imports)
    model = _llama("flash_attention_2")
    gen = torch.Generator().manual_seed(1)
    lengths = [5, 7, 4]
    docs = [seeded.randint(0, 100, (n,), generator=gen) for n in lengths]
    row = torch.cat(docs)[None]
    ids = posenc.packed_position_ids(torch.tensor(lengths))[None]
    other_row = torch.cat(docs[::-1])[None]
    other_ids = posenc.packed_position_ids(torch.tensor(lengths[::-1]))[None]
    with torch.no_grad():
        alone = torch.cat([model(d[None], use_cache=False).logits[0] for d in docs])
        scale = float(alone.abs().max())
        kernel.calls.clear()
        one = model(row, position_ids=ids, use_cache=False).logits[0]
        assert kernel.calls[0] == ("varlen", [0, 5, 12, 16])
        assert float((one - alone).abs().max()) < 1e-9 * scale
        kernel.calls.clear()
        cached = model(row, position_ids=ids, use_cache=True).logits[0]
        assert kernel.calls[0] == ("varlen", [0, 5, 12, 16])
        assert float((cached - alone).abs().max()) < 1e-9 * scale
        kernel.calls.clear()
        two = model(
            torch.cat([row, other_row]), position_ids=torch.cat([ids, other_ids]), use_cache=False
        ).logits[0]
        assert kernel.calls[0] == "flash"
        err = float((two - alone).abs().max())
        assert err > 0.05 * scale
        # the number packing.md quotes (the same model as tests/test_packing.py's)
        assert round(err, 2) == 0.47 and round(scale, 2) == 0.51
        # SDPA keeps the two rows' documents apart without a cache
        model.config._attn_implementation = "sdpa"
        sdpa_two = model(
            torch.cat([row, other_row]), position_ids=torch.cat([ids, other_ids]), use_cache=False
        ).logits[0]
        assert float((sdpa_two - alone).abs().max()) < 1e-9 * scale


# --- packing: length-dependent RoPE reads the batch's largest id ------------------------------


def _rotary(config):
    require("transformers")
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    return LlamaRotaryEmbedding(config=config)


def _cos(rotary, position_ids):
    x = torch.zeros(1, dtype=torch.float64)
    with torch.no_grad():
        cos, _ = rotary(x, position_ids)
    return cos.double()


@pytest.mark.parametrize("kind", ["dynamic", "longrope"])
def test_length_dependent_rope_reads_the_largest_id_of_the_batch(kind):
    """packing.md#mask-or-ids: modeling_rope_utils.py:49 and :89 (5.23.0) take
    `torch.max(position_ids) + 1` over the whole tensor, so a row whose ids run on switches the
    frequencies of every row in the batch; posenc with seq_len = that value agrees."""
    transformers = require("transformers")
    dim, trained = 16, 8
    if kind == "dynamic":
        params = {"rope_type": "dynamic", "factor": 2.0, "rope_theta": 10000.0}
        cfg = transformers.LlamaConfig(
            hidden_size=2 * dim,
            num_attention_heads=2,
            max_position_embeddings=trained,
            rope_parameters=params,
        )
        scaling = {"rope_type": "dynamic", "factor": 2.0, "original_max_position_embeddings": 8}
    else:
        short = [1.0 + 0.1 * i for i in range(dim // 2)]
        long = [2.0 + 0.5 * i for i in range(dim // 2)]
        params = {
            "rope_type": "longrope",
            "rope_theta": 10000.0,
            "short_factor": short,
            "long_factor": long,
            "original_max_position_embeddings": trained,
        }
        cfg = transformers.LlamaConfig(
            hidden_size=2 * dim,
            num_attention_heads=2,
            max_position_embeddings=4 * trained,
            rope_parameters=params,
        )
        scaling = {
            "rope_type": "longrope",
            "short_factor": short,
            "long_factor": long,
            "original_max_position_embeddings": trained,
            "factor": 4.0,
        }
    packed = posenc.packed_position_ids(torch.tensor([3, 2, 4]))
    running = torch.arange(9)
    short_row = torch.tensor([0, 1, 2, 3, 0, 1, 2, 0, 1])
    alone = _cos(_rotary(cfg), short_row[None])[0]
    with_packed = _cos(_rotary(cfg), torch.stack([packed, short_row]))[1]
    with_running = _cos(_rotary(cfg), torch.stack([running, short_row]))[1]
    assert torch.equal(with_packed, alone)
    assert not torch.allclose(with_running, alone, rtol=0, atol=1e-4)
    # the same frequencies as posenc's at seq_len = max over the batch + 1
    for seq_len, got in ((4, alone), (9, with_running)):
        inv, f = posenc.rope_frequencies(dim, scaling=scaling, seq_len=seq_len)
        want = np.cos(short_row.numpy()[:, None] * inv[None, :]) * f
        np.testing.assert_allclose(got[:, : dim // 2].numpy(), want, rtol=1e-6, atol=1e-6)


# --- packing: seq_idx for state-space layers ---------------------------------------------------


@pytest.mark.parametrize("lengths", [[3, 2, 4], [1, 5], [6]])
def test_seq_idx_of_the_collator_is_the_document_index_of_cu_seqlens(lengths):
    """packing.md#as-run: DataCollatorWithFlattening(return_seq_idx=True) (data_collator.py:1348
    in 5.23.0) numbers each token's document; it is the index of the cu_seqlens interval."""
    transformers = require("transformers")
    collator = transformers.DataCollatorWithFlattening(return_seq_idx=True)
    batch = collator([{"input_ids": list(range(10, 10 + n))} for n in lengths])
    cu = posenc.cu_seqlens(posenc.packed_position_ids(lengths))
    seq_idx = np.searchsorted(cu, np.arange(sum(lengths)), side="right") - 1
    assert batch["seq_idx"].tolist() == [seq_idx.tolist()]


# --- kv-cache: DeepSeek-V3 keeps the rotated key part in the value slot ----------------------


def _deepseek(transformers):
    cfg = transformers.DeepseekV3Config(
        vocab_size=50,
        hidden_size=32,
        intermediate_size=64,
        moe_intermediate_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=2,
        n_routed_experts=4,
        n_shared_experts=1,
        num_experts_per_tok=2,
        first_k_dense_replace=1,
        n_group=1,
        topk_group=1,
        kv_lora_rank=16,
        q_lora_rank=None,
        qk_rope_head_dim=8,
        qk_nope_head_dim=8,
        v_head_dim=8,
        max_position_embeddings=256,
        attn_implementation="eager",
    )
    with torch.device("cpu"):
        torch.manual_seed(0)
        model = transformers.DeepseekV3ForCausalLM(cfg)
    return model.to(torch.get_default_device()).double().eval()


def test_deepseek_v3_cache_moves_by_its_value_slot_alone():
    """kv-cache.md#design: modeling_deepseek_v3.py:459 (5.23.0) caches (kv_nope, k_rot) as
    (keys, values); kv_nope has no position, k_rot is rotated in "half" layout (rope_interleave's
    output). Moving the value slot alone gives the cache of the same tokens at other positions
    (one layer: its keys do not depend on what came before); moving the key slot does not."""
    transformers = require("transformers")
    model = _deepseek(transformers)
    gen = torch.Generator().manual_seed(2)
    tokens = seeded.randint(0, 50, (1, 6), generator=gen)
    nxt = seeded.randint(0, 50, (1, 1), generator=gen)
    shift = 40
    with torch.no_grad():
        out = model(tokens, use_cache=True)
        cache = out.past_key_values
        layer = cache.layers[0]
        kv_nope, k_rot = layer.keys.clone(), layer.values.clone()
        assert kv_nope.shape[-1] == 16 and k_rot.shape[-1] == 8
        old, new = torch.arange(6), torch.arange(6) + shift
        layer.values = posenc.rerotate_keys(k_rot, old, new, pairing="half")
        moved = model(nxt, past_key_values=cache, position_ids=torch.tensor([[6 + shift]]))
        fresh = model(
            torch.cat([tokens, nxt], 1), position_ids=torch.arange(7)[None] + shift, use_cache=False
        )
        torch.testing.assert_close(moved.logits[0, -1], fresh.logits[0, -1], rtol=0, atol=1e-10)
        # the generic recipe (re-rotate the key slot) leaves the positions where they were
        wrong = model(tokens, use_cache=True).past_key_values
        wrong.layers[0].keys = posenc.rerotate_keys(kv_nope, old, new, pairing="half")
        bad = model(nxt, past_key_values=wrong, position_ids=torch.tensor([[6 + shift]]))
        assert float((bad.logits[0, -1] - fresh.logits[0, -1]).abs().max()) > 1e-3

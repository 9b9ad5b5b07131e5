"""Tiny checkpoints with random weights: config.json, model.safetensors and a tokenizer.

``build_checkpoint(family, out_dir)`` writes a directory that transformers and the engines load
as they would a checkpoint from the Hub: the family's ``config.json`` (in its spelling), the
weights of transformers' own model class for it (float32, seeded: every matrix drawn from a
normal distribution with the standard deviation ``STD``, so that attention is far from uniform
and the logits spread over several units; norms keep their initial values) and a byte-level
BPE tokenizer built here with the ``tokenizers`` package, as large as the config's vocabulary
(320): 256 byte tokens, 59 merges (ids 256-314), then ``<s>`` = 315, ``</s>`` = 316,
``<|endoftext|>`` = 317, ``<|user|>`` = 318, ``<unk>`` = 319. The tokenizer is not under test: both engines are fed the same token
ids, never text.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from .families import SMALL, Family, config

STD = 0.15  # weights ~ N(0, STD^2): attention logits of a few units, not flat
EMBED_STD = 1.0  # token embeddings ~ N(0, 1)
SEED = 2024
# looked up by name: GLM-4's converter wants the first two, llama.cpp's vocabulary loader wants
# <unk> for a model whose name says phi3
EXTRA_SPECIAL = ["<|endoftext|>", "<|user|>", "<unk>"]


def ids(family: Family, seed: int = SEED) -> list[int]:
    """The token ids of ``family``'s run: ``family.tokens`` ids drawn among the 256 byte
    tokens (the same ids for every engine)."""
    rng = np.random.default_rng(seed)
    return [int(i) for i in rng.integers(0, 256, size=family.tokens)]


def _tokenizer(out_dir: Path) -> None:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    byte_map = pre_tokenizers.ByteLevel.alphabet()  # the 256 printable stand-ins of bytes
    alphabet = sorted(byte_map)
    vocab = {ch: i for i, ch in enumerate(alphabet)}
    # merges up to the config's vocabulary (llama.cpp refuses a BPE vocabulary without any;
    # Gemma 3's converter cuts the embedding to the tokenizer's size): ids 256..315
    n_merges = SMALL["vocab_size"] - 256 - 2 - len(EXTRA_SPECIAL)
    merges = [(alphabet[i], alphabet[i + 1]) for i in range(0, 2 * n_merges, 2)]
    for a, b in merges:
        vocab[a + b] = len(vocab)
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>")
    fast.add_special_tokens({"bos_token": "<s>", "eos_token": "</s>"})
    fast.add_special_tokens({"additional_special_tokens": EXTRA_SPECIAL})
    fast.save_pretrained(str(out_dir))
    # GPT2Tokenizer is what it is (byte-level BPE); Phi-3's converter takes the GPT-2 vocabulary
    # path only for that class name (else it wants sentencepiece and a tokenizer.model).
    path = out_dir / "tokenizer_config.json"
    tc = json.loads(path.read_text())
    tc["tokenizer_class"] = "GPT2Tokenizer"
    path.write_text(json.dumps(tc, indent=1))


def build_checkpoint(family: Family, out_dir: Path) -> Path:
    """Write ``family``'s tiny checkpoint into ``out_dir`` (created) and return it."""
    import torch
    import transformers
    from transformers import AutoConfig

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    cfg = config(family)
    (out_dir / "config.json").write_text(json.dumps(cfg, indent=1))
    hf_config = AutoConfig.from_pretrained(str(out_dir))
    torch.manual_seed(SEED)
    auto = getattr(transformers, family.auto)
    model = auto.from_config(hf_config, attn_implementation="eager")
    model = model.float()
    gen = torch.Generator().manual_seed(SEED)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.ndim >= 2:
                std = EMBED_STD if "emb" in name or "wte" in name else STD
                p.copy_(torch.randn(p.shape, generator=gen) * std)
            elif "sinks" in name:
                p.copy_(torch.randn(p.shape, generator=gen))
    model.save_pretrained(str(out_dir), safe_serialization=True)
    # save_pretrained writes transformers 5's own spelling: put the family's back.
    (out_dir / "config.json").write_text(json.dumps(cfg, indent=1))
    _tokenizer(out_dir)
    return out_dir


def reference_logits(
    model_dir: Path, token_ids: list[int], auto: str = "AutoModelForCausalLM"
) -> np.ndarray:
    """transformers' logits [T, vocab] for ``token_ids`` (positions 0..T-1): the checkpoint
    through ``auto`` (the family's auto class), float32, eager attention, one forward pass."""
    import torch
    import transformers

    model = getattr(transformers, auto).from_pretrained(
        str(model_dir), dtype=torch.float32, attn_implementation="eager"
    )
    model.eval()
    with torch.no_grad():
        out = model(torch.tensor([token_ids]), use_cache=False)
    return out.logits[0].float().numpy()

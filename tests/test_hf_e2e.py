"""posenc.hf end to end (issue 12): ten flagship families, same logits with posenc's rotation.

For each family a tiny random model from transformers 5.23 (2 layers, hidden 64, vocab 96,
float32, eval mode, seed 0) runs on random tokens with per-batch offset position ids (3-D ids
with distinct t/h/w for Qwen2-VL). Then its rotary code is swapped for posenc: the modeling
module's rotary embedding returns the position ids themselves (a :class:`Positions` marker in
place of cos/sin), and the module-level function the attention calls to rotate q and k (read
from each model's attention forward) calls ``posenc.hf.describe(model.config).rotate(x, ids,
layer=<the attention's layer_idx>)``. The logits must agree within 1e-5 * max|logits|, without
a cache (one forward) and with one (a prefill, then one-token steps with ``past_key_values``).

Non-vacuous by construction: the patched function must be called by exactly the layers that
rotate (two calls per layer per forward), NoPE layers of Llama 4 must never call it, and the
same models must move by far more than the tolerance when the positions change.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

import pytest
import torch

import posenc.hf
import seeded
from ci_rule import require
from hf_e2e_models import FAMILIES, VOCAB, Family

pytestmark = pytest.mark.values

BATCH, SEQ, SPLIT = 2, 10, 7  # the cached run: a prefill of SPLIT tokens, then one token a step
OFFSETS = (0, 7)  # per-batch position offsets
RTOL = 1e-5  # max |diff| <= RTOL * max |logits| (the issue: float32, 1e-5)


class Positions:
    """Stands in for cos/sin (or freqs_cis): carries the position ids to the apply function."""

    def __init__(self, ids: torch.Tensor) -> None:
        self.ids = ids

    def to(self, *args: Any, **kwargs: Any) -> Positions:  # Llama 4 moves freqs_cis to q's device
        return self


@dataclass
class Built:
    fam: Family
    module: Any
    model: Any
    scheme: posenc.hf.Scheme
    tokens: torch.Tensor
    ids: torch.Tensor  # (batch, seq), or (3, batch, seq) for M-RoPE
    full: torch.Tensor  # the original model's logits, no cache
    steps: torch.Tensor  # the original model's logits of the cached steps


def position_ids(mrope: bool) -> torch.Tensor:
    ids = torch.arange(SEQ)[None] + torch.tensor(OFFSETS)[:, None]  # (batch, seq)
    if not mrope:
        return ids
    # t, h, w as for a 2-wide grid of patches after some text: distinct on each axis
    return torch.stack((ids, ids + torch.arange(SEQ) % 2, ids + 3 * (torch.arange(SEQ) // 2)))


def run_full(model: Any, tokens: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return model(input_ids=tokens, position_ids=ids, use_cache=False).logits


def run_cached(model: Any, tokens: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
    """Prefill SPLIT tokens, then one token a step; the steps' logits (batch, steps, vocab)."""
    out = []
    with torch.no_grad():
        res = model(input_ids=tokens[:, :SPLIT], position_ids=ids[..., :SPLIT], use_cache=True)
        cache = res.past_key_values
        for t in range(SPLIT, SEQ):
            res = model(
                input_ids=tokens[:, t : t + 1],
                position_ids=ids[..., t : t + 1],
                past_key_values=cache,
                use_cache=True,
            )
            cache = res.past_key_values
            out.append(res.logits[:, -1])
    return torch.stack(out, dim=1)


def rel_diff(a: torch.Tensor, ref: torch.Tensor) -> float:
    return float((a - ref).abs().max() / ref.abs().max())


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """One torch thread while these tiny models run: on the shared 2-core machine a second
    intra-op thread only spins (measured: the file takes about 3x as long with two)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module", params=FAMILIES, ids=[f.name for f in FAMILIES])
def built(request) -> Built:
    fam = request.param
    transformers = require("transformers")
    module = importlib.import_module(f"transformers.models.{fam.package}.modeling_{fam.package}")
    cfg = fam.config(transformers)
    torch.manual_seed(0)
    model = getattr(module, fam.model)(cfg).eval()
    scheme = posenc.hf.describe(model.config)
    gen = torch.Generator().manual_seed(1)
    tokens = seeded.randint(0, VOCAB, (BATCH, SEQ), generator=gen)
    ids = position_ids(fam.mrope)
    full = run_full(model, tokens, ids)
    steps = run_cached(model, tokens, ids)
    return Built(fam, module, model, scheme, tokens, ids, full, steps)


def rotating_layers(b: Built) -> set[int]:
    """The layers whose attention rotates, as the model's own code decides (Llama 4: use_rope)."""
    attns = [m for m in b.model.modules() if type(m).__name__ == b.fam.attention]
    return {m.layer_idx for m in attns if getattr(m, "use_rope", True)}


class Patched:
    """The model's rotary code swapped for ``scheme.rotate``; ``calls`` records each call's layer.

    The monkeypatch (undone at the test's end) swaps the functions; the hooks that name the
    running attention's layer live from ``__enter__`` to ``__exit__``.
    """

    def __init__(self, b: Built, monkeypatch: pytest.MonkeyPatch) -> None:
        self.b, self.calls, self.layer = b, [], None
        fam, scheme = b.fam, b.scheme

        def rotary_forward(_self: Any, x: Any, position_ids: torch.Tensor, *args: Any) -> Any:
            pos = Positions(position_ids)
            return pos if fam.style == "complex" else (pos, pos)

        def rot(x: torch.Tensor, pos: Positions) -> torch.Tensor:
            assert isinstance(pos, Positions), type(pos)
            self.calls.append(self.layer)
            return scheme.rotate(x, pos.ids, layer=self.layer)

        if fam.style == "cos_sin":

            def apply(q, k, cos, sin, unsqueeze_dim=1):  # q, k: (batch, heads, seq, head_dim)
                assert sin is cos
                return rot(q, cos), rot(k, cos)

        elif fam.style == "mla":
            nope = b.model.config.qk_nope_head_dim

            def whole_head(x: torch.Tensor, pos: Positions) -> torch.Tensor:
                # rotate() takes whole MLA heads [no-position part | rotary part]; the attention
                # hands over the rotary part only: fill the rest and check it passes through
                fill = x.new_full((*x.shape[:-1], nope), 0.5)
                out = rot(torch.cat((fill, x), dim=-1), pos)
                torch.testing.assert_close(out[..., :nope], fill, rtol=0, atol=0)
                return out[..., nope:]

            def apply(q, k, cos, sin, position_ids=None, unsqueeze_dim=1):
                return whole_head(q, cos), whole_head(k, cos)

        else:

            def apply(xq, xk, freqs_cis):  # (batch, seq, heads, head_dim)
                return (
                    rot(xq.transpose(1, 2), freqs_cis).transpose(1, 2),
                    rot(xk.transpose(1, 2), freqs_cis).transpose(1, 2),
                )

        monkeypatch.setattr(getattr(b.module, fam.rotary), "forward", rotary_forward)
        monkeypatch.setattr(b.module, fam.apply, apply)
        if fam.style == "mla":  # the attention picks one of two functions by rope_interleave
            assert b.model.config.rope_interleave is True
            monkeypatch.setattr(b.module, "apply_rotary_pos_emb", _never)

    def __enter__(self) -> Patched:
        attns = [m for m in self.b.model.modules() if type(m).__name__ == self.b.fam.attention]
        assert attns, f"no {self.b.fam.attention} in the model"

        def enter(m: Any, args: Any) -> None:
            self.layer = m.layer_idx

        def leave(m: Any, args: Any, out: Any) -> None:
            self.layer = None  # a call outside an attention would fail in scheme.layer(None)

        self.handles = [
            h
            for m in attns
            for h in (m.register_forward_pre_hook(enter), m.register_forward_hook(leave))
        ]
        return self

    def __exit__(self, *exc: Any) -> None:
        for h in self.handles:
            h.remove()


def _never(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("the attention called the pairing that rope_interleave=True excludes")


def check_calls(b: Built, calls: list[Any], forwards: int) -> None:
    """Each rotating layer called rotate on q and k once per forward; no other layer did."""
    rotating = rotating_layers(b)
    assert rotating, "the model has no rotating layer"
    scheme_rotating = {i for i in range(b.scheme.num_layers) if b.scheme.layer(i).kind != "nope"}
    assert scheme_rotating == rotating, (scheme_rotating, rotating)
    assert sorted(calls) == sorted([i for i in rotating for _ in range(2 * forwards)]), calls


def test_logits_equal_without_cache(built: Built, monkeypatch) -> None:
    b = built
    with Patched(b, monkeypatch) as p:
        logits = run_full(b.model, b.tokens, b.ids)
    check_calls(b, p.calls, forwards=1)
    err = rel_diff(logits, b.full)
    assert err <= RTOL, f"{b.fam.name}: max|diff| / max|logits| = {err:.2e}"


def test_logits_equal_with_cache(built: Built, monkeypatch) -> None:
    b = built
    with Patched(b, monkeypatch) as p:
        steps = run_cached(b.model, b.tokens, b.ids)
    check_calls(b, p.calls, forwards=1 + SEQ - SPLIT)
    err = rel_diff(steps, b.steps)
    assert err <= RTOL, f"{b.fam.name}: cached steps, max|diff| / max|logits| = {err:.2e}"
    # the cache against the one-pass run: equal, except where the model's own code differs
    err_full = rel_diff(steps, b.full[:, SPLIT:])
    if b.fam.cache_matches_full:
        assert err_full <= RTOL, f"{b.fam.name}: cached against full, {err_full:.2e}"
    else:
        assert err_full > 1e3 * RTOL, f"{b.fam.name}: expected the model's own cache quirk"


def test_positions_matter(built: Built) -> None:
    """The tolerance means something: other positions move these logits far beyond it.

    Runs after the patched tests of its family (the fixture groups them): the model's own
    rotary code must be back, giving bit for bit the logits it gave before.
    """
    b = built
    assert torch.equal(run_full(b.model, b.tokens, b.ids), b.full)
    moved = run_full(b.model, b.tokens, b.ids * 2)
    assert rel_diff(moved, b.full) > 1e3 * RTOL


def test_layer_kinds(built: Built) -> None:
    """describe sees the model's layer types, and rotate is the identity on NoPE layers only."""
    b = built
    text = getattr(b.model.config, "text_config", None) or b.model.config
    types = getattr(text, "layer_types", None) or ["full_attention"] * text.num_hidden_layers
    assert [layer.layer_type for layer in b.scheme.layers] == list(types)
    if b.fam.name == "gemma3_text":  # each kind its own base: 1e4 sliding, 1e6 (linear x8) full
        assert [b.scheme.layer(i).base for i in (0, 1)] == [1e4, 1e6]
    nope = [i for i in range(b.scheme.num_layers) if b.scheme.layer(i).kind == "nope"]
    assert nope == sorted(set(range(b.scheme.num_layers)) - rotating_layers(b))
    if b.fam.name == "llama4_text":
        assert nope == [1]  # no_rope_layers = [1, 0]: layer 1 does not rotate
    head_dim = b.scheme.layer(0).head_dim
    x = seeded.randn(BATCH, 2, SEQ, head_dim, generator=torch.Generator().manual_seed(2))
    for i in range(b.scheme.num_layers):
        out = b.scheme.rotate(x, b.ids, layer=i)
        assert (out is x) == (i in nope), i
        if i not in nope:
            assert not torch.equal(out, x)

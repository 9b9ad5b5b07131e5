"""The corpus of real-shaped ``config.json`` files (tests/hf_corpus/, see its README) against
transformers' own code.

For each file, ``posenc.hf.describe(dict)`` is held to what transformers makes of the same dict
(its config class builds the config object; its modeling code rotates or biases):

- rotary layers: for every distinct (layer type, head width) of the scheme, the model's own
  rotary embedding (built from the config object) and its own apply function rotate random
  q and k at small positions (0..7) and large ones (near the trained length, at least 65536),
  against ``Scheme.rotate``: in float64 (transformers' code run in float64, to 1e-10 of
  max |x|, plus p * 2**-50 at the largest position p for transformers' own float64 rounding
  of the angle: 9e-9 at Llama 4 Scout's 10M) and in float32 (within 1e-6 + p * 2**-22:
  transformers forms its angles in float32, posenc exactly);
- NoPE and no-attention layers: the model's attention for that layer, built on the meta device
  and run with its apply function counted, must not rotate;
- ALiBi, T5 buckets, sinusoidal tables: the walk's probes (tests/hf_walk_fixed.py) on this
  config instead of a small one (layer counts, vocabulary and FFN widths shrunk first: they
  carry no positions).

- one reading: ``describe`` of transformers' config object equals ``describe`` of the dict,
  and ``posenc.layer_rope_parameters`` says what the scheme's layer says (or refuses by name
  a layer it cannot say: MLA, M-RoPE, linear- and cross-attention layers, non-rotary schemes).

Each file ends ``matched``, ``refused`` (posenc.hf refuses it by name, or describes its type as
unknown) or ``wrong`` (anything else: a difference, or a description of a file transformers
refuses).
"""

from __future__ import annotations

import contextlib
import copy
import importlib
import inspect
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

import hf_walk
import hf_walk_fixed
import posenc.hf
import seeded

CORPUS = Path(__file__).resolve().parent / "hf_corpus"
BATCH, HEADS, SEQ = 2, 2, 8
TOL64 = 1e-10
LARGE = 65536  # the large positions start at least here (or at the trained length)


@dataclass
class Result:
    name: str
    model_type: str
    status: str  # matched | refused | wrong
    detail: str = ""
    kinds: list[str] = field(default_factory=list)
    err64: float = 0.0
    err32: float = 0.0


def files() -> list[Path]:
    return sorted(CORPUS.glob("*/*.json"))


@contextlib.contextmanager
def float64_torch():
    """transformers' rotary code run in float64: its float32 casts (``torch.float``,
    ``torch.float32``, ``Tensor.float()``) made float64 for the duration."""
    saved = (torch.float, torch.float32, torch.Tensor.float, torch.get_default_dtype())
    torch.float = torch.float64
    torch.float32 = torch.float64
    torch.Tensor.float = lambda self, *a, **k: self.double()  # type: ignore[method-assign]
    torch.set_default_dtype(torch.float64)
    try:
        yield
    finally:
        torch.float, torch.float32, torch.Tensor.float = saved[:3]  # type: ignore[misc]
        torch.set_default_dtype(saved[3])


def hf_config(d: dict[str, Any]) -> Any:
    """The config object transformers' class of ``d['model_type']`` builds from ``d``."""
    from transformers import CONFIG_MAPPING

    return CONFIG_MAPPING[d["model_type"]].from_dict(copy.deepcopy(d))


def _module_of(model_type: str) -> Any:
    module = hf_walk.modeling_modules().get(model_type)
    return None if module is None else importlib.import_module(module)


def _text(obj: Any) -> Any:
    try:
        return obj.get_text_config(decoder=True)
    except TypeError:
        return obj.get_text_config()


def _ids(scheme_layer: Any, max_pos: int | None) -> torch.Tensor:
    big = max(LARGE, int(max_pos or 0) - SEQ)
    ids = torch.stack([torch.arange(SEQ), torch.arange(big, big + SEQ)])
    if scheme_layer.kind == "mrope":
        axes = len(scheme_layer.mrope_section or ())
        return torch.stack([ids, ids // 2 + 1, ids % 5, (3 * ids) % 7][:axes])
    return ids


def _rotary_reference(obj: Any) -> tuple[Any, Any, Any, Any, Any] | str:
    """(rotary class, apply function, MLA interleave function, text config, module) of the
    model, or why none."""
    text = _text(obj)
    mod = _module_of(text.model_type) or _module_of(obj.model_type)
    if mod is None:
        return f"no modeling module for {text.model_type!r}"
    rots = [
        rc
        for rc in hf_walk._rotary_classes(mod)
        if hf_walk._config_class(rc) in (type(text), type(obj))
    ]
    if not rots:
        return f"no rotary class of {type(text).__name__} in {mod.__name__}"
    apply_fn = getattr(mod, "apply_rotary_pos_emb", None) or getattr(
        mod, "apply_rotary_pos_emb_interleave", None
    )
    if apply_fn is None and hasattr(mod, "apply_rotary_emb"):
        apply_fn = hf_walk._complex_apply(
            mod.apply_rotary_emb, bshd=text.model_type.startswith("llama4")
        )
    if apply_fn is None:
        return f"no apply function in {mod.__name__}"
    return rots[0], apply_fn, getattr(mod, "apply_rotary_pos_emb_interleave", None), text, mod


def _gptj_reference(mod: Any, cfg: Any, q: torch.Tensor, pid: torch.Tensor) -> torch.Tensor:
    """GPT-J / CodeGen: a [sin | cos] table of width rotary_dim gathered at the ids and
    ``apply_rotary_pos_emb`` on the first rotary_dim features of (batch, seq, heads, dim) x
    (the walk's probe, tests/hf_walk_extra.py, on this config)."""
    import hf_walk_extra

    rot = cfg.rotary_dim or q.shape[-1]
    c = copy.deepcopy(cfg)
    c.n_positions = max(int(pid.max()) + 1, c.n_positions)  # the table's length
    sin, cos = hf_walk_extra._gptj_sin_cos(mod, c, pid)
    x = q.transpose(1, 2)
    x_rot = mod.apply_rotary_pos_emb(x[..., :rot], sin.to(q.dtype), cos.to(q.dtype))
    return torch.cat([x_rot, x[..., rot:]], dim=-1).transpose(1, 2)


def _compare_rotary(res: Result, scheme: Any, obj: Any) -> None:
    gen = torch.Generator().manual_seed(0)
    gptj = scheme.model_type in ("gptj", "codegen")
    ref = None if gptj else _rotary_reference(obj)
    if isinstance(ref, str):
        res.status, res.detail = "wrong", ref
        return
    groups: dict[tuple[str, int | None], int] = {}
    for layer in scheme.layers:
        if layer.kind in ("rope", "mrope"):
            groups.setdefault((layer.layer_type, layer.head_dim), layer.index)
    for (layer_type, hd), index in groups.items():
        layer = scheme.layer(index)
        pid = _ids(layer, scheme.max_position_embeddings)
        q = seeded.randn(BATCH, HEADS, SEQ, hd, generator=gen, dtype=torch.float64)
        k = seeded.randn(BATCH, HEADS, SEQ, hd, generator=gen, dtype=torch.float64)
        res.kinds.append(f"{layer_type}:{layer.kind}:{hd}")
        for dtype in (torch.float64, torch.float32):
            qd, kd = q.to(dtype), k.to(dtype)
            ctx = float64_torch() if dtype == torch.float64 else contextlib.nullcontext()
            with ctx, torch.no_grad():
                if gptj:
                    mod = _module_of(scheme.model_type)
                    q_ref = _gptj_reference(mod, obj, qd, pid)
                    k_ref = _gptj_reference(mod, obj, kd, pid)
                else:
                    rc, apply_fn, mla_fn, text, _ = ref
                    takes = "layer_type" in inspect.signature(rc.forward).parameters
                    lt = layer_type if takes and getattr(text, "layer_types", None) else None
                    q_ref, k_ref = hf_walk.run_model(rc, text, apply_fn, lt, qd, kd, pid, mla_fn)
            q_got = scheme.rotate(qd, pid, layer=index)
            k_got = scheme.rotate(kd, pid, layer=index)
            err = max(
                float((q_ref.double() - q_got.double()).abs().max() / q.abs().max()),
                float((k_ref.double() - k_got.double()).abs().max() / k.abs().max()),
            )
            if dtype == torch.float64:
                # 1e-10, plus transformers' own rounding of the angle p * theta in float64 past
                # a few million positions (Llama 4 Scout's 10M): p * 2**-50
                bound = TOL64 + float(pid.max()) * 2.0**-50
                res.err64 = max(res.err64, err)
                if not err <= bound:
                    res.status = "wrong"
                    res.detail = f"{layer_type}: float64 error {err:.2e} (bound {bound:.1e})"
                    return
            else:
                bound = 1e-6 + float(pid.max()) * 2.0**-22
                res.err32 = max(res.err32, err)
                if not err <= bound:
                    res.status = "wrong"
                    res.detail = f"{layer_type}: float32 error {err:.2e} (bound {bound:.1e})"
                    return


def _rotates(mod: Any, obj: Any, text: Any, index: int) -> bool | None:
    """Whether the model's attention of layer ``index`` calls its rotary apply function: the
    decoder layer built on the meta device and run with the function counted (None when the
    model's classes cannot be run so)."""
    names = [n for n in ("apply_rotary_pos_emb", "apply_rotary_emb") if hasattr(mod, n)]
    layers = [
        c
        for n, c in vars(mod).items()
        if inspect.isclass(c) and n.endswith("DecoderLayer") and c.__module__ == mod.__name__
    ]
    if not names or not layers:
        return None
    calls = []

    def counted(q: Any, k: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return q, k

    saved = {n: getattr(mod, n) for n in names}
    try:
        for n in names:
            setattr(mod, n, counted)
        with torch.device("meta"):
            for cls in layers:
                try:
                    block = cls(text, index)
                except Exception:
                    continue
                attn = getattr(block, "self_attn", None) or getattr(block, "cross_attn", None)
                if attn is None:
                    continue
                hidden = torch.zeros(1, 4, text.hidden_size)
                hd = getattr(attn, "head_dim", None) or text.hidden_size // text.num_attention_heads
                cos = torch.zeros(1, 4, hd)
                try:
                    attn(hidden_states=hidden, position_embeddings=(cos, cos), attention_mask=None)
                except Exception:
                    if not calls:
                        continue
                return bool(calls)
    finally:
        for n, f in saved.items():
            setattr(mod, n, f)
    return None


def _no_rotary_module(mod: Any, text: Any) -> bool:
    """Whether the model's base class, built on the meta device from ``text``, has its rotary
    module switched off (``rotary_emb`` None: GraniteMoeHybrid unless position_embedding_type
    is "rope"): then no attention layer gets cos and sin, whatever its code would do."""
    for name, cls in vars(mod).items():
        if not (inspect.isclass(cls) and name.endswith("Model") and cls.__module__ == mod.__name__):
            continue
        if getattr(cls, "config_class", None) is not type(text) or "PreTrained" in name:
            continue
        try:
            with torch.device("meta"):
                model = cls(copy.deepcopy(text))
        except Exception:
            continue
        if hasattr(model, "rotary_emb"):
            return model.rotary_emb is None
    return False


def _compare_nope(res: Result, scheme: Any, obj: Any) -> None:
    """Layers the scheme does not rotate: the model's attention does not rotate them either;
    the first layer of each rotating layer type does rotate."""
    ref = _rotary_reference(obj)
    if isinstance(ref, str):
        return
    _, _, _, text, mod = ref
    if _no_rotary_module(mod, text):
        rotating = [layer.index for layer in scheme.layers if layer.kind in ("rope", "mrope")]
        if rotating:
            res.status = "wrong"
            res.detail = (
                f"layer {rotating[0]}: posenc rotates it, the model builds no rotary module"
            )
        else:
            res.kinds.append("model:no-rotary-module")
        return
    seen = set()
    for layer in scheme.layers:
        if layer.kind not in ("nope",) or layer.layer_type in seen:
            continue
        seen.add(layer.layer_type)
        res.kinds.append(f"{layer.layer_type}:nope")
        got = _rotates(mod, obj, text, layer.index)
        if got is None:
            res.kinds[-1] += ":unchecked"
        elif got:
            res.status = "wrong"
            res.detail = f"layer {layer.index}: the model rotates it, posenc says NoPE"
            return
    checked = set()
    for layer in scheme.layers:  # and the first rotating layer of each type does call it
        if layer.kind in ("rope", "mrope") and layer.layer_type not in checked:
            checked.add(layer.layer_type)
            if _rotates(mod, obj, text, layer.index) is False:
                res.status = "wrong"
                res.detail = f"layer {layer.index}: posenc rotates it, the model does not"
                return


_SHRINK = {
    "vocab_size": 128, "encoder_layers": 1, "decoder_layers": 1, "num_layers": 1,
    "num_decoder_layers": 1, "num_hidden_layers": 1, "encoder_ffn_dim": 16,
    "decoder_ffn_dim": 16, "ffn_dim": 16, "d_ff": 16, "intermediate_size": 16, "n_layer": 1,
    "n_layers": 1, "decoder_vocab_size": 128,
}  # fmt: skip


def _compare_fixed(res: Result, scheme: Any, d: dict[str, Any], obj: Any) -> None:
    small = copy.deepcopy(obj)
    pad = getattr(small, "pad_token_id", None)
    vocab = max(128, pad + 2) if isinstance(pad, int) else 128
    for key, value in {**_SHRINK, "vocab_size": vocab, "decoder_vocab_size": vocab}.items():
        if hasattr(small, key) and getattr(small, key) is not None:
            with contextlib.suppress(Exception):
                setattr(small, key, value)
    walker = {
        "alibi": hf_walk_fixed.walk_alibi,
        "t5": hf_walk_fixed.walk_t5,
        "sinusoidal": hf_walk_fixed.walk_sinusoidal,
    }[scheme.kind]
    module = hf_walk.modeling_modules()[d["model_type"]]
    hf_walk_fixed.GIVEN[0] = (d, small)
    try:
        o = walker(d["model_type"], module)
    finally:
        hf_walk_fixed.GIVEN[0] = None
    if o is None or o.status != "verified":
        res.status = "wrong"
        res.detail = "fixed walk: " + ("no probe" if o is None else f"{o.status}: {o.reason}")
    else:
        res.kinds = list(o.layer_kinds)
        res.err32 = float(o.error or 0.0)


def _one_reading(scheme: Any, d: dict[str, Any], obj: Any) -> str:
    """Why posenc's readings of this file disagree (empty when they agree): ``describe`` of
    transformers' config object against ``describe`` of the dict (every field but the sources,
    which name the dict's keys), and ``posenc.layer_rope_parameters`` against the scheme's
    layer, for one layer of each distinct kind (refused by name where a LayerRope cannot say
    the layer: MLA's tail, M-RoPE)."""
    from posenc.layers import _beyond_layer_rope

    of_obj = posenc.hf.describe(obj).to_dict()
    of_dict = scheme.to_dict()
    diff = sorted(k for k in of_dict if k != "sources" and of_dict[k] != of_obj.get(k))
    if diff:
        return f"describe(config object) differs from describe(dict) in {diff}"
    seen: set[tuple[Any, ...]] = set()
    for layer in scheme.layers:
        key = (layer.layer_type, layer.kind, layer.head_dim)
        if key in seen:
            continue
        seen.add(key)
        refusal = (
            scheme.kind != "rope"
            or layer.kind not in ("rope", "nope")  # linear- and cross-attention layers
            or (layer.kind == "rope" and bool(_beyond_layer_rope(layer)))
        )
        try:
            lr = posenc.layer_rope_parameters(d, layer.index)
        except ValueError as exc:
            if refusal:
                continue
            return f"layer_rope_parameters refuses layer {layer.index}: {exc}"
        if refusal:
            return f"layer_rope_parameters describes layer {layer.index}, describe cannot"
        want = (layer.kind == "rope", layer.base, layer.window)
        got = (lr.rope, lr.base, lr.window)
        if lr.rope:
            want += (layer.scaling, layer.rotary_dim, layer.pairing)
            got += (
                None if lr.scaling is None else dict(lr.scaling),
                round(layer.head_dim * lr.partial_rotary_factor),
                lr.pairing,
            )
        if want != got:
            return f"layer_rope_parameters layer {layer.index}: {got} != describe's {want}"
    return ""


def check(path: Path) -> Result:
    d = json.loads(path.read_text(encoding="utf-8"))
    name = f"{path.parent.name}/{path.stem}"
    res = Result(name, str(d.get("model_type")), "matched")
    try:
        scheme = posenc.hf.describe(d)
    except (TypeError, ValueError) as exc:
        res.status, res.detail = "refused", f"{type(exc).__name__}: {exc}"
        return res
    if scheme.kind == "unknown":
        res.status, res.detail = "refused", "unknown: " + " ".join(scheme.notes)
        return res
    try:
        obj = hf_config(d)
    except Exception as exc:
        res.status, res.detail = "wrong", f"described, but transformers refuses it: {exc!r}"[:300]
        return res
    disagree = _one_reading(scheme, d, obj)
    if disagree:
        res.status, res.detail = "wrong", disagree
        return res
    if scheme.kind in ("rope", "mrope"):
        _compare_rotary(res, scheme, obj)
        if res.status == "matched":
            _compare_nope(res, scheme, obj)
    elif scheme.kind in ("alibi", "t5", "sinusoidal"):
        _compare_fixed(res, scheme, d, obj)
    else:
        res.status, res.detail = "wrong", f"kind {scheme.kind!r} has no check"
    return res


def check_all() -> list[Result]:
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    import logging
    import warnings

    warnings.filterwarnings("ignore")
    logging.disable(logging.WARNING)
    return [check(p) for p in files()]


RECORD = CORPUS / "verdicts.json"


def verdicts(results: list[Result]) -> dict[str, Any]:
    """The record of the corpus's outcomes (tests/hf_corpus/verdicts.json): the transformers
    version, the counts and, per file, its outcome, the layer kinds compared and, for a
    refused or wrong file, why (a refusal's exception class, or ``unknown``)."""
    import transformers

    rows: dict[str, Any] = {}
    for r in results:
        row: dict[str, Any] = {"model_type": r.model_type, "status": r.status, "kinds": r.kinds}
        if r.status == "refused":
            row["why"] = "unknown" if r.detail.startswith("unknown:") else r.detail.split(":")[0]
        elif r.status == "wrong":
            row["why"] = r.detail[:120]
        rows[r.name] = row
    counts = {s: sum(r.status == s for r in results) for s in ("matched", "refused", "wrong")}
    return {"transformers": transformers.__version__, "counts": counts, "files": rows}


def write_record(results: list[Result]) -> None:
    text = json.dumps(verdicts(results), indent=1, ensure_ascii=False, sort_keys=True)
    RECORD.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":  # a summary, as the closing note of issue 20 reports it
    import sys
    import time

    t = time.time()
    record = "--record" in sys.argv
    only = [a for a in sys.argv[1:] if a != "--record"]
    if record and only:
        raise SystemExit("--record writes the whole corpus's outcomes: name no files with it")
    if only:
        results = [check(p) for p in files() if any(o in str(p) for o in only)]
    else:
        results = check_all()
    for r in results:
        print(f"{r.status:8s} {r.name:60s} {','.join(r.kinds)[:60]:60s} "
              f"{r.err64:.1e} {r.err32:.1e} {r.detail[:160]}")  # fmt: skip
    counts = {s: sum(r.status == s for r in results) for s in ("matched", "refused", "wrong")}
    print(counts, f"{len(results)} files, {time.time() - t:.1f} s")
    if record:
        write_record(results)
        print("wrote", RECORD)
    _ = math

"""Record what llama.cpp, MLX and vLLM do with transformers checkpoints: docs/assets/engines.json.

The engines do not install into the project's environment (llama.cpp's converter is a script of
its repository; vLLM wants a CUDA build of torch; MLX runs on Linux only as its CPU build), so
this runs once in an environment that has them, and the test suite (tests/test_engines.py)
holds ``posenc.engines`` to what it recorded. For each small config of ``CASES`` it records:

* llama.cpp: what the converter's own model class writes (``set_gguf_parameters`` in dry-run
  mode: the GGUF keys and values), the ``rope_freqs`` tensor it generates, the row order it
  gives the q and k projections (``modify_tensors`` on weights whose rows hold their index), and
  the rope type ``llama_model_rope_type`` returns for the architecture (read from
  src/llama-model.cpp and src/llama-arch.cpp);
* MLX: the rotary module mlx-lm's own model class builds from the config (class, ``dims``,
  ``traditional``, ``base``, ``scale``) and its output on fixed queries;
* vLLM: the ``is_neox_style`` of the model file vLLM's registry maps the architecture to,
  whether that file permutes q/k at load, ``max_model_len`` as vLLM derives it, and the output
  of ``get_rope(**posenc.vllm_rope(config)).forward_native`` on the same queries;
* the key names of the ``gguf`` package (``gguf.Keys.Rope``).

Environment (what produced the committed file): Python 3.11, torch 2.13.0+cpu, transformers
5.23.0, gguf 0.19.0, mlx 0.32.4 + mlx-cpu 0.32.4, mlx-lm 0.32.2 (installed with --no-deps),
llama.cpp from the llama-cpp-python 0.3.36 sdist (vendor/llama.cpp), vLLM 0.33.0 from its
sdist (Python sources on PYTHONPATH; no compiled ops, the native rotary path only)::

    PYTHONPATH=src:$VLLM_SRC python tools/engines_record.py --llama-cpp $LLAMA_CPP [--out PATH]
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import inspect
import io
import json
import logging
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "assets" / "engines.json"

# Small configs, one per model type of posenc.engines.ENGINE_ROWS (and the scalings): built by
# transformers' own config classes, so config.json holds what a checkpoint's would.
SMALL = {
    "hidden_size": 64,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "num_hidden_layers": 2,
    "intermediate_size": 128,
    "vocab_size": 128,
}
CASES: list[tuple[str, str, str, dict[str, Any]]] = [
    # (name, model_type, architecture, config overrides)
    ("llama-3.1", "llama", "LlamaForCausalLM", {
        "max_position_embeddings": 131072,
        "rope_parameters": {"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0,
                            "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                            "original_max_position_embeddings": 8192}}),
    ("llama-linear", "llama", "LlamaForCausalLM", {
        "max_position_embeddings": 4096,
        "rope_parameters": {"rope_type": "linear", "rope_theta": 10000.0, "factor": 4.0}}),
    ("llama-dynamic", "llama", "LlamaForCausalLM", {
        "max_position_embeddings": 4096,
        "rope_parameters": {"rope_type": "dynamic", "rope_theta": 10000.0, "factor": 2.0}}),
    ("mistral", "mistral", "MistralForCausalLM", {
        "max_position_embeddings": 32768, "rope_parameters": {"rope_type": "default",
                                                              "rope_theta": 1000000.0}}),
    ("mixtral", "mixtral", "MixtralForCausalLM", {
        "num_local_experts": 2, "num_experts_per_tok": 1, "max_position_embeddings": 32768,
        "rope_parameters": {"rope_type": "default", "rope_theta": 1000000.0}}),
    ("qwen2-yarn", "qwen2", "Qwen2ForCausalLM", {
        "max_position_embeddings": 131072,
        "rope_parameters": {"rope_type": "yarn", "rope_theta": 1000000.0, "factor": 4.0,
                            "original_max_position_embeddings": 32768}}),
    ("qwen3", "qwen3", "Qwen3ForCausalLM", {
        "head_dim": 16, "max_position_embeddings": 40960,
        "rope_parameters": {"rope_type": "default", "rope_theta": 1000000.0}}),
    ("gemma", "gemma", "GemmaForCausalLM", {"head_dim": 16, "max_position_embeddings": 8192}),
    ("gemma2", "gemma2", "Gemma2ForCausalLM", {"head_dim": 16, "max_position_embeddings": 8192}),
    ("phi3-longrope", "phi3", "Phi3ForCausalLM", {
        "max_position_embeddings": 131072, "original_max_position_embeddings": 4096,
        "rope_parameters": {"rope_type": "longrope", "rope_theta": 10000.0,
                            "short_factor": [1.0, 1.1, 1.2, 1.5, 2.0, 3.0, 5.0, 8.0],
                            "long_factor": [1.0, 1.5, 2.0, 4.0, 8.0, 16.0, 24.0, 32.0],
                            "original_max_position_embeddings": 4096}}),
    ("gpt_neox", "gpt_neox", "GPTNeoXForCausalLM", {
        "max_position_embeddings": 2048,
        "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0,
                            "partial_rotary_factor": 0.25}}),
    ("stablelm", "stablelm", "StableLmForCausalLM", {
        "max_position_embeddings": 4096,
        "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0,
                            "partial_rotary_factor": 0.25}}),
    ("olmo2", "olmo2", "Olmo2ForCausalLM", {"max_position_embeddings": 4096}),
    ("starcoder2", "starcoder2", "Starcoder2ForCausalLM", {
        "max_position_embeddings": 16384,
        "rope_parameters": {"rope_type": "default", "rope_theta": 100000.0}}),
    ("cohere", "cohere", "CohereForCausalLM", {
        "max_position_embeddings": 8192,
        "rope_parameters": {"rope_type": "default", "rope_theta": 8000000.0}}),
    ("cohere2", "cohere2", "Cohere2ForCausalLM", {
        "num_hidden_layers": 4, "max_position_embeddings": 8192, "sliding_window": 64,
        "rope_parameters": {"rope_type": "default", "rope_theta": 50000.0}}),
    ("glm4", "glm4", "Glm4ForCausalLM", {
        "head_dim": 16, "max_position_embeddings": 32768,
        "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0,
                            "partial_rotary_factor": 0.5}}),
]  # fmt: skip
POSITIONS = [0, 1, 2, 3, 300, 301]  # two runs: offset 0 (4 tokens) and offset 300 (2 tokens)


def queries(head_dim: int) -> np.ndarray:
    """The fixed input of the numeric checks: one head, ``len(POSITIONS)`` tokens, float32."""
    return np.random.default_rng(2024).normal(size=(len(POSITIONS), head_dim)).astype(np.float32)


def _r(x: float) -> float:
    return float(f"{float(x):.9g}")


# Keys of a transformers-4 config.json that transformers 5.23's to_dict() folds into
# ``rope_parameters``; checkpoints on the Hub saved by transformers 4 hold them at the top level.
# Cohere2: llama.cpp's converter reads ``rotary_pct``, a key transformers' Cohere2Config does not
# define; it is added here by hand (1.0: all of the head rotates) to get past it.
LEGACY = {
    "gpt_neox": {"rotary_pct": 0.25, "rotary_emb_base": 10000},
    "cohere2": {"rotary_pct": 1.0},
}


def legacy(cfg: dict[str, Any]) -> dict[str, Any]:
    """``cfg`` as a transformers-4 ``config.json`` holds it: ``rope_theta``, ``rope_scaling`` and
    ``partial_rotary_factor`` at the top level, no ``rope_parameters``."""
    out = dict(cfg)
    rp = dict(out.pop("rope_parameters", None) or {})
    if "rope_theta" in rp:
        out["rope_theta"] = rp["rope_theta"]
    if "partial_rotary_factor" in rp:
        out["partial_rotary_factor"] = rp["partial_rotary_factor"]
    if rp.get("rope_type", "default") != "default":
        scaling = {k: v for k, v in rp.items() if k not in ("rope_theta", "partial_rotary_factor")}
        scaling["type"] = scaling["rope_type"]  # older files spell it "type" (Phi-3, Qwen2.5)
        out["rope_scaling"] = scaling
    out.update(LEGACY.get(cfg["model_type"], {}))
    return out


def _config(model_type: str, arch: str, over: dict[str, Any]) -> dict[str, Any]:
    from transformers import AutoConfig

    cfg = AutoConfig.for_model(model_type, **{**SMALL, **over}).to_dict()
    cfg["architectures"] = [arch]
    for key in ("transformers_version", "dtype", "torch_dtype"):
        cfg.pop(key, None)
    return json.loads(json.dumps(cfg))  # plain JSON types


# --- llama.cpp ---------------------------------------------------------------------------------


def llama_cpp_rope_types(src: Path) -> dict[str, str]:
    """GGUF arch name -> the rope type ``llama_model_rope_type`` returns for it (the simple
    ``case ...: return LLAMA_ROPE_TYPE_X;`` groups of src/llama-model.cpp)."""
    names = dict(
        re.findall(
            r"\{\s*(LLM_ARCH_\w+)\s*,\s*\"([^\"]+)\"\s*\}", (src / "llama-arch.cpp").read_text()
        )
    )
    text = (src / "llama-model.cpp").read_text()
    body = text[text.index("llama_rope_type llama_model_rope_type(") :]
    body = body[: body.index("\n}\n")]
    out, pending = {}, []
    for line in body.splitlines():
        line = line.strip()
        m = re.match(r"case (LLM_ARCH_\w+):", line)
        if m:
            pending.append(m.group(1))
            continue
        m = re.match(
            r"return (?:model->hparams\.use_mrope\(\) \? LLAMA_ROPE_TYPE_MROPE : )?"
            r"LLAMA_ROPE_TYPE_(\w+);",
            line,
        )  # text-only files: the second branch
        if m and pending:
            for arch in pending:
                out[names.get(arch, arch)] = m.group(1).lower()
            pending = []
        elif line and not line.startswith("//"):
            pending = []  # a conditional return: not a fixed type
    return out


def llama_cpp_case(cfg: dict[str, Any], head_dim: int) -> dict[str, Any]:
    import gguf
    import torch
    from conversion import get_model_class

    cls = get_model_class(cfg["architectures"][0])
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        (d / "config.json").write_text(json.dumps(cfg))
        model = cls(d, gguf.LlamaFileType.ALL_F32, d / "out.gguf", dry_run=True)
        model.set_gguf_parameters()
        extra = dict(model.generate_extra_tensors())  # may add keys too
        kv = {k: v.value for part in model.gguf_writer.kv_data for k, v in part.items()}
        arch = gguf.MODEL_ARCH_NAMES[model.model_arch]
        keep = {
            k: (_r(v) if isinstance(v, float) else v)
            for k, v in kv.items()
            if k.startswith(f"{arch}.rope.") or k == f"{arch}.context_length"
        }
        tensors = {
            name.removesuffix(".weight"): [_r(v) for v in t.tolist()]
            for name, t in extra.items()
            if "rope" in name
        }
        perms = {}
        heads = {"q": cfg["num_attention_heads"], "k": cfg["num_key_value_heads"]}
        for which, n in heads.items():
            rows = n * head_dim
            w = torch.arange(rows, dtype=torch.float32)[:, None].repeat(1, 4)
            name = f"model.layers.0.self_attn.{which}_proj.weight"
            out = list(model.modify_tensors(w, name, 0))
            perms[which] = out[0][1][:, 0].round().int().tolist()[:head_dim]
    return {
        "arch": arch,
        "class": cls.__name__,
        "metadata": keep,
        "tensors": tensors,
        "q_rows_head0": perms["q"],
        "k_rows_head0": perms["k"],
    }


# --- MLX ---------------------------------------------------------------------------------------


def mlx_case(cfg: dict[str, Any], head_dim: int) -> dict[str, Any]:
    import mlx.core as mx
    from mlx_lm.utils import _get_classes

    model_cls, args_cls = _get_classes(cfg)
    model = model_cls(args_cls.from_dict(cfg))
    rope = None
    for _, mod in model.named_modules():
        if "rope" in type(mod).__name__.lower():
            rope = mod
            break
    assert rope is not None, "no rotary module found"
    attrs = {k: getattr(rope, k, None) for k in ("dims", "dim", "traditional", "base", "scale")}
    q = queries(head_dim)[None, None]  # (1, 1, 6, head_dim)
    a = rope(mx.array(q[:, :, :4]), offset=0)
    b = rope(mx.array(q[:, :, 4:]), offset=300)
    out = np.concatenate([np.array(a), np.array(b)], axis=2)[0, 0]
    return {
        "module_file": type(model).__module__,
        "class": type(rope).__name__,
        "dims": attrs["dims"] if attrs["dims"] is not None else attrs["dim"],
        "traditional": attrs["traditional"],
        "base": None if attrs["base"] is None else _r(attrs["base"]),
        "scale": None if attrs["scale"] is None else _r(attrs["scale"]),
        "output": [[_r(v) for v in row] for row in out.tolist()],
    }


# --- vLLM --------------------------------------------------------------------------------------


def vllm_case(cfg: dict[str, Any], head_dim: int) -> dict[str, Any]:
    import torch
    from transformers import AutoConfig
    from vllm.config import DeviceConfig, VllmConfig, set_current_vllm_config
    from vllm.model_executor.layers.rotary_embedding import get_rope
    from vllm.model_executor.models.registry import (
        _TEXT_GENERATION_MODELS,
        _TRANSFORMERS_SUPPORTED_MODELS,
    )
    from vllm.transformers_utils.model_arch_config_convertor import (
        ModelArchConfigConvertorBase,
    )

    import posenc
    import posenc.hf

    arch = cfg["architectures"][0]
    if arch not in _TEXT_GENERATION_MODELS:
        module, _ = _TRANSFORMERS_SUPPORTED_MODELS[arch]
        return {"backend": "transformers", "module_file": f"vllm/model_executor/models/{module}"}
    module, _ = _TEXT_GENERATION_MODELS[arch]
    source = Path(inspect.getfile(sys.modules["vllm"])).parent / "model_executor" / "models"
    text = (source / f"{module}.py").read_text()
    neox = not re.search(r"is_neox_style\s*=\s*False", text)
    permute = "permute_qk_weight_for_rotary" in text
    hf_config = AutoConfig.for_model(
        cfg["model_type"], **{k: v for k, v in cfg.items() if k != "model_type"}
    )
    derived, key = ModelArchConfigConvertorBase(hf_config, hf_config).derive_max_model_len_and_key()
    from types import SimpleNamespace

    from vllm.config.model import _get_and_verify_max_len

    max_len = _get_and_verify_max_len(
        hf_config,
        SimpleNamespace(derived_max_model_len_and_key=(derived, key)),
        None,
        None,
        False,
        None,
    )
    args = posenc.vllm_rope(cfg)
    q = torch.from_numpy(queries(head_dim))
    vllm_config = VllmConfig(device_config=DeviceConfig(device="cpu"))
    # LongRoPE reads the engine's max_model_len (long factors for every position past the
    # original length); the default one is what vLLM derives from the config.
    object.__setattr__(vllm_config, "model_config", SimpleNamespace(max_model_len=int(max_len)))
    with set_current_vllm_config(vllm_config):
        rope = get_rope(
            args["head_size"],
            max_position=args["max_position"],
            is_neox_style=args["is_neox_style"],
            rope_parameters=args["rope_parameters"],
            dtype=torch.float32,
        )
        positions = torch.tensor(POSITIONS)
        native = getattr(rope, "forward_native", rope.forward)  # LongRoPE: a plain Module
        out_q, _ = native(positions, q.clone(), q.clone())
    return {
        "backend": "native",
        "module_file": f"vllm/model_executor/models/{module}.py",
        "is_neox_style_in_file": neox,
        "permutes_qk_in_file": permute,
        "derived_max_len": derived,
        "derived_max_len_key": key,
        "max_model_len": int(max_len),
        "rope_class": type(rope).__name__,
        "output": [[_r(v) for v in row] for row in out_q.tolist()],
    }


def both(fn: Any, cfg: dict[str, Any], *args: Any) -> dict[str, Any]:
    """The engine's record for the config.json transformers 5.23 writes and, where the engine
    does something else with it (an error, other settings), for the transformers-4 style one
    (``legacy``: the top-level keys checkpoints on the Hub hold)."""

    def run(c: dict[str, Any]) -> dict[str, Any]:
        try:
            return fn(c, *args)  # type: ignore[no-any-return]
        except Exception as exc:
            return {"error": f"{type(exc).__name__}: {exc}"}

    new, old = run(cfg), run(legacy(cfg))
    return {"transformers5": new, "legacy": "same" if old == new else old}


def record(llama_cpp: Path) -> dict[str, Any]:
    sys.path.insert(0, str(llama_cpp))
    sys.path.insert(1, str(llama_cpp / "gguf-py"))
    logging.disable(logging.WARNING)
    import mlx.core as mx
    import mlx_lm
    import torch
    import transformers
    import vllm

    import posenc
    import posenc.hf

    types = llama_cpp_rope_types(llama_cpp / "src")
    pypi_gguf = _pypi_gguf_keys()
    cases = []
    for name, model_type, arch, over in CASES:
        cfg = _config(model_type, arch, over)
        layer = [x for x in posenc.hf.describe(cfg).layers if x.kind == "rope"][0]
        head_dim = int(layer.head_dim)
        with contextlib.redirect_stdout(io.StringIO()):
            entry = {
                "name": name,
                "config": cfg,
                "llama.cpp": both(llama_cpp_case, cfg, head_dim),
                "mlx": both(mlx_case, cfg, head_dim),
                "vllm": both(vllm_case, cfg, head_dim),
            }
        for rec in entry["llama.cpp"].values():
            if isinstance(rec, dict) and "arch" in rec:
                rec["rope_type"] = types.get(rec["arch"])
        cases.append(entry)
        print(name, "recorded", file=sys.stderr)
    return {
        "recorded": datetime.date.today().isoformat(),
        "positions": POSITIONS,
        "versions": {
            "llama.cpp": "vendor/llama.cpp of the llama-cpp-python 0.3.36 sdist (PyPI), gguf-py "
            + _vendored_gguf_version(llama_cpp),
            "gguf (PyPI)": pypi_gguf["version"],
            "mlx": mx.__version__,
            "mlx-lm": mlx_lm.__version__,
            "vllm": vllm.__version__,
            "transformers": transformers.__version__,
            "torch": torch.__version__,
        },
        "gguf_keys": pypi_gguf["keys"],
        "cases": cases,
    }


def _vendored_gguf_version(llama_cpp: Path) -> str:
    text = (llama_cpp / "gguf-py" / "pyproject.toml").read_text()
    return re.search(r'^version = "([^"]+)"', text, re.M).group(1)  # type: ignore[union-attr]


def _pypi_gguf_keys() -> dict[str, Any]:
    """The rope key names of the gguf package installed from PyPI (not the vendored copy)."""
    import importlib.metadata
    import subprocess

    code = (
        "import json, gguf; R = gguf.Keys.Rope; "
        "print(json.dumps({k: getattr(R, k) for k in dir(R) if k.isupper()}))"
    )
    keys = json.loads(subprocess.check_output([sys.executable, "-c", code], text=True))
    return {"version": importlib.metadata.version("gguf"), "keys": keys}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--llama-cpp", type=Path, required=True, help="a llama.cpp source tree")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    data = record(args.llama_cpp)
    args.out.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()

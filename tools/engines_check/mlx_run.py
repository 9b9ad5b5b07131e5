"""MLX's cells of the engines matrix: mlx-lm's own model class on the tiny checkpoint's weights.

mlx-lm does not install into the project's environment (MLX runs on Linux only as its CPU
build, and mlx-lm pins its own transformers), so it lives in a venv of its own::

    python3.11 -m venv /work/engines/mlxvenv
    /work/engines/mlxvenv/bin/pip install mlx==0.32.4 mlx-cpu==0.32.4 numpy safetensors \\
        pyyaml transformers          # transformers: mlx_lm.utils imports its tokenizer classes
    /work/engines/mlxvenv/bin/pip install --no-deps mlx-lm==0.32.2

``mlx_cell`` is what ``python -m tools.engines_check`` calls from the project's environment:
where ``mlx`` does not import, it runs this file with the MLX venv's interpreter (``MLX_PYTHON``,
default ``/work/engines/mlxvenv/bin/python``) on the checkpoint's folder and the token ids, and
reads the logits back from an ``.npy``. ``mlx_logits`` is the run itself: ``mlx_lm.utils.load_model``
(``_get_classes`` picks the module of the config's ``model_type``, ``ModelArgs.from_dict`` reads
config.json as it is, the class's ``sanitize`` renames transformers' weights), float32, one
forward pass over all the ids, no cache.

For the driver: ``mlx_cell(model_dir, ids, ref_logits)`` -> ``{"logits": array}`` or
``{"error": message}``; ``cause(family)`` -> the cause of a family's difference or refusal
(text, file relative to site-packages, line, code) or None; ``versions()`` -> mlx, mlx-cpu
and mlx-lm as the MLX interpreter has them. None of them needs mlx in the calling interpreter.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

MLX_PYTHON = Path(os.environ.get("MLX_PYTHON", "/work/engines/mlxvenv/bin/python"))
TIMEOUT_S = 600

# Why mlx-lm 0.32.2 differs from transformers or refuses, found by reading its code:
# family -> (the text, the file relative to site-packages, a snippet of the line). The line
# number is looked up in the installed file at each run (``cause``).
# Each was confirmed by a variant of the checkpoint that removes it (a legacy-spelled config,
# a window longer than the run, an MLP four times as wide): the variant's cell is "same".
_NOT_SUPPORTED = (
    "mlx-lm has no model module for this type (_get_classes)",
    "mlx_lm/utils.py",
    'msg = f"Model type {model_type} not supported."',
)
_T5 = "transformers 5's spelling"
CAUSES: dict[str, tuple[str, str, str]] = {
    "llama3": (
        "ModelArgs reads rope_theta and rope_scaling at the top level only; from_dict drops "
        f"rope_parameters ({_T5}), so the llama3 scaling is not applied",
        "mlx_lm/models/llama.py",
        "rope_scaling: Optional[Dict[str, Union[float, str]]] = None",
    ),
    "qwen2-1m": (
        f"qwen2's ModelArgs has no rope_parameters ({_T5}): its default base 1e6 is used, "
        "not the config's",
        "mlx_lm/models/qwen2.py",
        "rope_theta: float = 1000000",
    ),
    "gemma2": (
        "every layer gets the full causal mask: sliding_window is not read",
        "mlx_lm/models/gemma2.py",
        "mask = create_attention_mask(h, cache[0], return_array=True)",
    ),
    "gemma3": (
        "rope_scaling is read at the top level only; the linear factor under "
        f"rope_parameters.full_attention ({_T5}) is dropped",
        "mlx_lm/models/gemma3_text.py",
        "rope_scaling: Dict = None",
    ),
    "phi3-longrope-short": (
        "SuScaledRoPE rotates with the long factors at every length; short_factor is taken "
        "and never used",
        "mlx_lm/models/rope_utils.py",
        "self._freqs = mx.array(long_factor, dtype=mx.float32) * freqs",
    ),
    "gpt_neox": (
        "the MLP is 4 * hidden_size wide whatever intermediate_size says",
        "mlx_lm/models/gpt_neox.py",
        "self.dense_h_to_4h = nn.Linear(self.hidden_size, 4 * self.hidden_size)",
    ),
    "gpt_oss": (
        "sanitize reads experts in the Hub's MXFP4 layout only: an unquantized gate_up_proj "
        "(transformers' [experts, hidden, 2 x intermediate]) is split on the wrong axis and "
        "renamed without .weight",
        "mlx_lm/models/gpt_oss.py",
        'new_weights[k.replace("gate_up_proj", "gate_proj")] = mx.contiguous(',
    ),
    "llama4": (
        "mlx-lm's llama4_text model is dense: one MLP per layer, no router or experts, and "
        "its output layer is named output, not lm_head",
        "mlx_lm/models/llama4_text.py",
        "self.feed_forward = MLP(",
    ),
    # read from the code, not confirmed by a variant: the text model is built from text_config
    # alone, where transformers 5 writes no tie_word_embeddings (it is False at the top level)
    "qwen2_vl": (
        "the text model is built from text_config alone; tie_word_embeddings (False, at the "
        "top level) is not read there, so qwen2's default True ties the output to the "
        "embedding and the checkpoint's lm_head is refused",
        "mlx_lm/models/qwen2_vl.py",
        "self.language_model = qwen2.Model(qwen2.ModelArgs.from_dict(args.text_config))",
    ),
    "falcon": _NOT_SUPPORTED,
    "falcon-alibi": _NOT_SUPPORTED,
    "mpt": _NOT_SUPPORTED,
    "bloom": _NOT_SUPPORTED,
}
CAUSES["llama4-short"] = CAUSES["llama4"]
MAX_MESSAGE = 160  # an engine's message is cut here (mlx-lm lists every unexpected weight)


def _has_mlx() -> bool:
    import importlib.util

    return importlib.util.find_spec("mlx") is not None


def mlx_logits(model_dir: Path, ids: list[int]) -> np.ndarray:
    """mlx-lm's logits [T, vocab] (float32) for ``ids`` at positions 0..T-1 (needs mlx)."""
    import mlx.core as mx
    from mlx.utils import tree_map
    from mlx_lm.utils import load_model

    model, _ = load_model(Path(model_dir), lazy=False, strict=True)
    model.update(
        tree_map(
            lambda p: p.astype(mx.float32) if mx.issubdtype(p.dtype, mx.floating) else p,
            model.parameters(),
        )
    )
    out = model(mx.array([list(ids)], dtype=mx.int32))
    mx.eval(out)
    return np.array(out[0].astype(mx.float32))


def versions() -> dict[str, str]:
    """mlx's and mlx-lm's versions, as the MLX interpreter reports them."""
    code = (
        "import importlib.metadata as m, json;"
        "print(json.dumps({n: m.version(n) for n in ('mlx', 'mlx-cpu', 'mlx-lm')}))"
    )
    py = sys.executable if _has_mlx() else str(MLX_PYTHON)
    out = subprocess.run([py, "-c", code], capture_output=True, text=True, check=True)
    return dict(json.loads(out.stdout))


def site_packages() -> Path:
    """The folder that holds the ``mlx_lm`` package the cells ran."""
    code = "import mlx_lm, pathlib; print(pathlib.Path(mlx_lm.__file__).parents[1])"
    py = sys.executable if _has_mlx() else str(MLX_PYTHON)
    out = subprocess.run([py, "-c", code], capture_output=True, text=True, check=True)
    return Path(out.stdout.strip())


def cause(family: str) -> dict[str, Any] | None:
    """The cause of ``family``'s MLX cell (text, file, line, code), or None if none is known."""
    if family not in CAUSES:
        return None
    text, file, snippet = CAUSES[family]
    lines = (site_packages() / file).read_text().splitlines()
    hits = [i for i, ln in enumerate(lines, 1) if snippet in ln]
    if len(hits) != 1:
        raise RuntimeError(
            f"mlx_run.CAUSES[{family}]: {snippet!r} found {len(hits)} times in {file}"
        )
    return {"text": text, "file": file, "line": hits[0], "code": lines[hits[0] - 1].strip()}


def _short(message: str) -> str:
    message = " ".join(message.split())
    return message if len(message) <= MAX_MESSAGE else message[: MAX_MESSAGE - 1] + "…"


def _error(text: str) -> str:
    """The engine's own message: the last line of a traceback or of the output, shortened."""
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    for ln in reversed(lines):
        if not ln.startswith(" ") and ":" in ln and not ln.startswith("Traceback"):
            return _short(ln)
    return _short(lines[-1]) if lines else "no output"


def mlx_cell(model_dir: Path, ids: list[int], ref_logits: np.ndarray) -> dict[str, Any]:
    """MLX's result for the checkpoint in ``model_dir``: ``{"logits": array [T, vocab]}`` or
    ``{"error": message}`` (the ``__main__`` driver forms the cell against ``ref_logits``)."""
    if _has_mlx():
        try:
            return {"logits": mlx_logits(model_dir, ids)}
        except Exception as exc:  # the loader's refusal is the cell
            return {"error": _short(f"{type(exc).__name__}: {exc}")}
    if not MLX_PYTHON.exists():
        return {"error": f"no MLX interpreter at {MLX_PYTHON} (set MLX_PYTHON)"}
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "logits.npy"
        ids_file = Path(tmp) / "ids.json"
        ids_file.write_text(json.dumps([int(i) for i in ids]))
        proc = subprocess.run(
            [str(MLX_PYTHON), __file__, str(model_dir), str(ids_file), str(out)],
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
        )
        if proc.returncode != 0 or not out.exists():
            return {"error": _error(proc.stderr or proc.stdout)}
        logits = np.load(out)
    if logits.shape != np.shape(ref_logits):
        return {"error": f"logits of shape {logits.shape}, transformers' {np.shape(ref_logits)}"}
    return {"logits": logits}


def _main(argv: list[str]) -> None:
    model_dir, ids_file, out = argv
    ids = json.loads(Path(ids_file).read_text())
    try:
        logits = mlx_logits(Path(model_dir), ids)
    except Exception as exc:
        # one line the caller shows as "cannot load: ..."
        print(f"{type(exc).__name__}: {exc}".replace("\n", " "), file=sys.stderr)
        raise SystemExit(1) from None
    np.save(out, logits)


if __name__ == "__main__":
    _main(sys.argv[1:])

"""The engines matrix: llama.cpp and MLX logits against transformers', by running them.

``python -m tools.engines_check --llama-cpp SDIST --llama-lib LIB`` (``make engines-check``)
builds one tiny checkpoint per architecture family (``families.py``, ``checkpoints.py``), runs
transformers on it (float32, eager attention: the reference), converts and runs it in llama.cpp
(``llama_cpp.py``) and, where ``tools/engines_check/mlx_run.py`` exists, in MLX
(``mlx_run.mlx_cell``), and writes docs/assets/engines_runs.json. It is not part of
``make test``: tests/test_engines_matrix.py holds the record to families.py and posenc.

llama.cpp here: the llama-cpp-python 0.3.36 sdist (``pip download --no-deps
llama-cpp-python==0.3.36``) unpacked to SDIST, its vendored tree built as shared libraries
(libllama.so took 8 min 29 s on 2 busy cores; no pip install, the bindings are loaded from the
sdist by ``llama_cpp.py``)::

    cmake -G Ninja -S SDIST/vendor/llama.cpp -B BUILD -DGGML_NATIVE=ON -DLLAMA_CURL=OFF \
        -DBUILD_SHARED_LIBS=ON -DCMAKE_BUILD_TYPE=Release -DLLAMA_BUILD_TESTS=OFF
    cmake --build BUILD -j2 --target llama          # LIB = BUILD/bin

The record (docs/assets/engines_runs.json)::

    {
      "recorded": "YYYY-MM-DD",
      "versions": {"llama-cpp-python": ..., "llama.cpp": <what the sdist says of its vendored
                   tree>, "gguf-py (vendored)": ..., "transformers": ..., "torch": ...,
                   "mlx": ..., "mlx-lm": ...},
      "tolerance": {"relative": TOLERANCE, "scale": ..., "why": ...},
      "bands": {"inside": "[0, trained - EDGE)", "end": "[trained - EDGE, trained + EDGE)",
                "beyond": "[trained + EDGE, tokens)"},
      "families": [
        {"name": "llama3", "model_type": "llama", "architecture": "LlamaForCausalLM",
         "spelling": "transformers5" | "legacy", "what": <the position scheme in words>,
         "trained": 64, "tokens": 320, "ids_seed": 2024,
         "config": <config.json as written>,
         "logit_scale": <max |transformers logit| over the run>,
         "engines": {
           "llama.cpp": CELL,
           "mlx": CELL            # absent when MLX was not run
         }}
      ]
    }

    CELL = {"cell": "same"
                  | "differs from position N: <cause>, <file>:<line>"
                  | "cannot load: <message>",
            "bands": {"inside": float, "end": float, "beyond": float} | null,
                     # max |logit difference| per band (absolute; null when it did not run)
            "first": N | null,          # first position past the tolerance
            "cause": {"text": ..., "file": "src/...", "line": int, "code": <that line>} | null}

A cell is "same" when every position's max |difference| over the vocabulary is at most
``TOLERANCE * logit_scale``. ``cell(...)`` below forms it from two logit arrays; an engine
module may return ``{"logits": array [tokens, vocab]}`` or ``{"error": message}``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

# max |difference| / max |reference logit|; float32 engines that agree stay near 1e-6 here
# (recorded per family in engines_runs.json), a wrong rotation moves logits by 1e-1 and more
TOLERANCE = 1e-3
EDGE = 8  # half-width of the "end" band around the trained length


def bands(diff: np.ndarray, trained: int) -> dict[str, float | None]:
    """Max of the per-position differences ``diff`` [T] in each band."""
    t = len(diff)
    edges = {
        "inside": (0, trained - EDGE),
        "end": (trained - EDGE, trained + EDGE),
        "beyond": (trained + EDGE, t),
    }
    out: dict[str, float | None] = {}
    for name, (lo, hi) in edges.items():
        part = diff[max(lo, 0) : min(hi, t)]
        out[name] = float(f"{float(part.max()):.3g}") if part.size else None
    return out


def cell(ref: np.ndarray, logits: np.ndarray, trained: int) -> dict[str, Any]:
    """The cell of an engine whose logits are ``logits`` [T, vocab] against ``ref``.

    Only the ``cell`` text of a difference is provisional: ``"differs from position N"``; the
    cause is added by ``__main__`` (its ``CAUSES``)."""
    if logits.shape != ref.shape:
        return {
            "cell": f"cannot load: logits of shape {logits.shape}, transformers' {ref.shape}",
            "bands": None,
            "first": None,
            "cause": None,
        }
    diff = np.abs(logits.astype(np.float64) - ref.astype(np.float64)).max(axis=-1)
    scale = float(np.abs(ref).max())
    bad = np.flatnonzero(~(diff <= TOLERANCE * scale))  # NaN counts as a difference
    first = int(bad[0]) if bad.size else None
    return {
        "cell": "same" if first is None else f"differs from position {first}",
        "bands": bands(diff, trained),
        "first": first,
        "cause": None,
    }


def cannot_load(message: str) -> dict[str, Any]:
    return {"cell": f"cannot load: {message}", "bands": None, "first": None, "cause": None}

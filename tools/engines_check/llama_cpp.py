"""llama.cpp on a tiny checkpoint: convert it with the vendored converter, run it, get logits.

Both steps run in a child process (``python -m tools.engines_check.llama_cpp convert|run``), so
a converter that refuses a family, or a llama.cpp that aborts on it, makes a cell
("cannot load: <message>") and not a crash of the tool.

``SDIST`` is the unpacked llama-cpp-python sdist (its ``llama_cpp`` Python package, the ctypes
bindings, and ``vendor/llama.cpp``); ``LIB`` the folder of the ``libllama.so`` built from that
vendored tree (``cmake -DBUILD_SHARED_LIBS=ON``; the bindings find it by
``LLAMA_CPP_LIB_PATH``). Only the low-level bindings are used (``llama_cpp.llama_cpp``); the
package's ``__init__`` is not run (it imports the high-level ``Llama`` and its dependencies).

Conversion: ``vendor/llama.cpp/convert_hf_to_gguf.py --outtype f32`` with its own ``gguf-py``.
Two methods of the converter are replaced in the child process, because the tokenizer is not
under test (the engines are fed token ids, never text):

* ``TextModel.get_vocab_base_pre`` returns ``"gpt-2"``: the converter names a BPE
  pre-tokenizer by the hash of its output on a fixed text, and the tiny byte-level tokenizer
  built here has no hash it knows;
* ``TextModel._set_vocab_sentencepiece`` falls back to ``_set_vocab_gpt2`` (Gemma's converters
  ask for a ``tokenizer.model``; sentencepiece is not installed and the checkpoint has none).

Run: one ``llama_decode`` of the whole id sequence at positions 0..T-1 in one batch
(``n_batch = n_ubatch = T``; ``n_ctx = T`` unless the family sets another context size),
every position's logits requested (llama.cpp rounds n_ctx up to a multiple of 256); K and V cached in
float32 (the default cache type is float16, which alone moves logits by ~1e-3), flash attention
off, the full-size cache for sliding-window layers (``swa_full``), 2 threads.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]


def vendored(sdist: Path) -> Path:
    """The llama.cpp tree vendored in the sdist."""
    return Path(sdist) / "vendor" / "llama.cpp"


def _tail(text: str) -> str:
    """A child's error, for a cell's message: llama.cpp's own "error loading model" line where
    it printed one, its failed assertion where it aborted, else the last line (a Python
    exception's)."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    errors = [ln for ln in lines if "error loading model" in ln]
    if errors:
        return errors[-1].split("error loading model: ", 1)[-1]
    asserts = [ln for ln in lines if "GGML_ASSERT" in ln or "GGML_ABORT" in ln]
    if asserts:  # an abort (its backtrace follows): the assertion and where, from vendor/
        return "aborts: " + asserts[0].split("/vendor/llama.cpp/", 1)[-1]
    return lines[-1] if lines else "(no output)"


def _child(args: list[str], env: dict[str, str], timeout: int) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tools.engines_check.llama_cpp", *args],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def convert(model_dir: Path, out: Path, sdist: Path, timeout: int = 600) -> str | None:
    """Convert ``model_dir`` to ``out`` (f32 GGUF); None when it worked, else the converter's
    error (the last line it printed)."""
    proc = _child(["convert", str(sdist), str(model_dir), str(out)], {}, timeout)
    if proc.returncode != 0 or not out.exists():
        return _tail(proc.stderr + proc.stdout)
    return None


def run(
    gguf: Path,
    ids: list[int],
    sdist: Path,
    lib: Path,
    n_ctx: int | None = None,
    timeout: int = 600,
) -> np.ndarray | str:
    """llama.cpp's logits [T, vocab] for ``ids`` at positions 0..T-1 in a context of ``n_ctx``
    (default T), or the error message."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "logits.npy"
        env = {"LLAMA_CPP_LIB_PATH": str(lib)}
        args = ["run", str(sdist), str(gguf), json.dumps(ids), str(out), str(n_ctx or len(ids))]
        proc = _child(args, env, timeout)
        if proc.returncode != 0 or not out.exists():
            return _tail(proc.stderr + proc.stdout)
        return np.load(out)  # type: ignore[no-any-return]


def version(sdist: Path) -> dict[str, str]:
    """The sdist's version and what it says of its vendored llama.cpp."""
    pkg = (Path(sdist) / "PKG-INFO").read_text()
    ver = next(ln.split(":", 1)[1].strip() for ln in pkg.splitlines() if ln.startswith("Version:"))
    return {
        "llama-cpp-python": ver,
        "llama.cpp": f"ggml-org/llama.cpp@{vendored_commit(sdist, ver)} (vendor/llama.cpp of the sdist)",
        "gguf-py (vendored)": _gguf_version(sdist),
    }


def vendored_commit(sdist: Path, ver: str) -> str:
    """The llama.cpp commit the sdist's CHANGELOG names under its version ("update llama.cpp
    to ggml-org/llama.cpp@<sha>"; the sdist carries no .git)."""
    import re

    text = (Path(sdist) / "CHANGELOG.md").read_text()
    section = text.split(f"## [{ver}]", 1)[1].split("\n## [", 1)[0]
    m = re.search(r"ggml-org/llama\.cpp@([0-9a-f]{7,40})", section)
    return m.group(1) if m else "unknown"


def _gguf_version(sdist: Path) -> str:
    for ln in (vendored(sdist) / "gguf-py" / "pyproject.toml").read_text().splitlines():
        if ln.startswith("version"):
            return ln.split("=", 1)[1].strip().strip('"')
    return "unknown"


# --- the child process ---------------------------------------------------------------------


def _convert_child(sdist: Path, model_dir: Path, out: Path) -> None:
    src = vendored(sdist)
    sys.path[:0] = [str(src), str(src / "gguf-py")]
    import conversion.base as base  # the converter's package (vendor/llama.cpp/conversion)

    cls = base.TextModel
    cls.get_vocab_base_pre = lambda self, tokenizer: "gpt-2"  # type: ignore[method-assign]

    def spm_or_gpt2(self, *a, **k):  # type: ignore[no-untyped-def]
        if (self.dir_model / "tokenizer.model").exists():
            return _spm(self, *a, **k)
        return self._set_vocab_gpt2()

    _spm = cls._set_vocab_sentencepiece
    cls._set_vocab_sentencepiece = spm_or_gpt2  # type: ignore[method-assign]
    import runpy

    sys.argv = ["convert_hf_to_gguf.py", str(model_dir), "--outtype", "f32", "--outfile", str(out)]
    runpy.run_path(str(src / "convert_hf_to_gguf.py"), run_name="__main__")


def _run_child(sdist: Path, gguf: Path, ids: list[int], out: Path, n_ctx: int) -> None:
    import ctypes
    import types

    pkg = types.ModuleType("llama_cpp")  # the bindings without the package's __init__
    pkg.__path__ = [str(Path(sdist) / "llama_cpp")]
    sys.modules["llama_cpp"] = pkg
    import llama_cpp.llama_cpp as ll

    ll.llama_backend_init()
    mp = ll.llama_model_default_params()
    mp.n_gpu_layers = 0
    model = ll.llama_model_load_from_file(str(gguf).encode(), mp)
    if not model:
        raise SystemExit(f"llama_model_load_from_file failed for {gguf.name}")
    n = len(ids)
    cp = ll.llama_context_default_params()
    cp.n_ctx = n_ctx
    cp.n_batch = cp.n_ubatch = n
    cp.n_threads = cp.n_threads_batch = 2
    cp.type_k = cp.type_v = 0  # GGML_TYPE_F32
    cp.flash_attn_type = 0  # LLAMA_FLASH_ATTN_TYPE_DISABLED
    cp.swa_full = True
    ctx = ll.llama_init_from_model(model, cp)
    if not ctx:
        raise SystemExit("llama_init_from_model failed")
    batch = ll.llama_batch_init(n, 0, 1)
    for i, tok in enumerate(ids):
        batch.token[i] = tok
        batch.pos[i] = i
        batch.n_seq_id[i] = 1
        batch.seq_id[i][0] = 0
        batch.logits[i] = 1
    batch.n_tokens = n
    rc = ll.llama_decode(ctx, batch)
    if rc != 0:
        raise SystemExit(f"llama_decode returned {rc}")
    vocab = ll.llama_vocab_n_tokens(ll.llama_model_get_vocab(model))
    ptr = ll.llama_get_logits(ctx)
    buf = (ctypes.c_float * (n * vocab)).from_address(ctypes.addressof(ptr.contents))
    logits = np.frombuffer(buf, dtype=np.float32).reshape(n, vocab).copy()
    np.save(out, logits)
    ll.llama_batch_free(batch)
    ll.llama_free(ctx)
    ll.llama_model_free(model)


if __name__ == "__main__":
    what, sdist_arg = sys.argv[1], Path(sys.argv[2])
    if what == "convert":
        _convert_child(sdist_arg, Path(sys.argv[3]), Path(sys.argv[4]))
    elif what == "run":
        ids_arg = json.loads(sys.argv[4])
        _run_child(sdist_arg, Path(sys.argv[3]), ids_arg, Path(sys.argv[5]), int(sys.argv[6]))
    else:
        raise SystemExit(f"usage: convert|run, got {what!r}")

"""python -m tools.engines_check: run the engines matrix, write docs/assets/engines_runs.json.

    python -m tools.engines_check --llama-cpp SDIST --llama-lib LIB [--families a b ...]
                                  [--out PATH] [--work DIR]

SDIST: the unpacked llama-cpp-python sdist; LIB: the folder of the libllama.so built from its
vendor/llama.cpp (see llama_cpp.py). Without --llama-cpp only MLX runs (where mlx_run.py
exists). With --families, only those families are run and the other rows of an existing
record are kept.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from . import EDGE, TOLERANCE, cannot_load, cell
from . import checkpoints as ck
from . import families as fam
from . import llama_cpp as lc

OUT = fam.ROOT / "docs" / "assets" / "engines_runs.json"

# Why an engine differs or refuses, found by reading its code: (engine, family) -> the text, the file
# (relative to the engine's tree: vendor/llama.cpp for llama.cpp) and a snippet of the line,
# looked up in the file at each run (a moved line is found again; a vanished one fails loudly).
CAUSES: dict[tuple[str, str], tuple[str, str, str]] = {
    ("llama.cpp", "gpt_oss"): (
        "YaRN's correction range is always rounded outward (floor/ceil); rope_scaling.truncate "
        "= false (GPT-OSS's own setting: transformers uses the unrounded range) is neither "
        "converted nor read",
        "ggml/src/ggml.c",
        "ceilf(ggml_rope_yarn_corr_dim(n_dims, n_ctx_orig, beta_slow",
    ),
    ("llama.cpp", "llama4-short"): (
        "llama.cpp sets Llama 4's attention temperature (floor_scale 8192, attn_scale 0.1) and "
        "chunk size (8192) itself; the config's floor_scale and attention_chunk_size are not "
        "read",
        "src/models/llama4.cpp",
        "hparams.n_attn_temp_floor_scale = 8192;",
    ),
    ("llama.cpp", "llama-dynamic"): (
        "the converter writes no scaling for rope_type dynamic (left to model classes), so "
        "llama.cpp runs plain RoPE where transformers raises the base for a run longer than "
        "max_position_embeddings",
        "conversion/base.py",
        'elif rope_type == "dynamic":',
    ),
    ("llama.cpp", "phi3-longrope-short"): (
        "llama.cpp picks LongRoPE's long or short factors by the context size (long once "
        "n_ctx exceeds the original length), transformers by the length of the sequence run: "
        "a short prompt in a large context gets the long factors from its first token (and "
        "n_ctx is rounded up to a multiple of 256, src/llama-context.cpp, so with an original "
        "length under 256 every context is large)",
        "src/llama-model.cpp",
        "if (n_ctx_seq > hparams.n_ctx_orig_yarn) {",
    ),
    ("llama.cpp", "gpt_neox"): (
        "the converter reads rotary_pct from the config as transformers 5's AutoConfig "
        "returns it (load_hparams), where it is partial_rotary_factor under rope_parameters",
        "conversion/gptneox.py",
        'self.hparams["rotary_pct"]',
    ),
}


def _cause(engine: str, family: str, sdist: Path | None) -> dict[str, Any] | None:
    if engine == "mlx":  # mlx_run keeps MLX's causes (files relative to site-packages)
        mlx = _mlx()
        return mlx.cause(family) if mlx is not None and hasattr(mlx, "cause") else None
    if (engine, family) not in CAUSES:
        return None
    text, file, snippet = CAUSES[(engine, family)]
    if engine == "llama.cpp" and sdist is not None:
        lines = (lc.vendored(sdist) / file).read_text().splitlines()
        hits = [i for i, ln in enumerate(lines, 1) if snippet in ln]
        if len(hits) != 1:
            raise SystemExit(
                f"CAUSES[{engine}, {family}]: {snippet!r} found {len(hits)} times in {file}"
            )
        return {"text": text, "file": file, "line": hits[0], "code": lines[hits[0] - 1].strip()}
    return {"text": text, "file": file, "line": None, "code": snippet}


def _finish(c: dict[str, Any], engine: str, family: str, sdist: Path | None) -> dict[str, Any]:
    if c["cell"].startswith("cannot load"):
        cause = _cause(engine, family, sdist)
        if cause is not None:  # where the engine refuses: the line, after its own message
            c["cause"] = cause
            c["cell"] += f" ({cause['text']}, {cause['file']}:{cause['line']})"
        return c
    if c["first"] is None:
        return c
    cause = _cause(engine, family, sdist)
    c["cause"] = cause
    where = f"{cause['text']}, {cause['file']}:{cause['line']}" if cause else "cause not traced"
    c["cell"] = f"differs from position {c['first']}: {where}"
    return c


def _mlx() -> Any:
    """tools/engines_check/mlx_run.py where it exists and MLX can run: in this interpreter, or
    in the MLX venv it names (``MLX_PYTHON``); else None (no MLX cells)."""
    here = Path(__file__).resolve().parent / "mlx_run.py"
    if not here.exists():
        return None
    from . import mlx_run  # type: ignore[attr-defined]

    if importlib.util.find_spec("mlx") is None and not Path(mlx_run.MLX_PYTHON).exists():
        print(f"MLX not run: no mlx here, no {mlx_run.MLX_PYTHON}", file=sys.stderr)
        return None
    return mlx_run


def _engine_result(res: Any, ref: np.ndarray, trained: int) -> dict[str, Any]:
    """A cell from what an engine module returned: logits, an error, or a cell already."""
    if isinstance(res, str):
        return cannot_load(res)
    if isinstance(res, np.ndarray):
        return cell(ref, res, trained)
    if "cell" in res:
        return dict(res)
    if "error" in res:
        return cannot_load(str(res["error"]))
    return cell(ref, np.asarray(res["logits"]), trained)


def run_family(
    f: fam.Family, work: Path, sdist: Path | None, lib: Path | None, mlx: Any
) -> dict[str, Any]:
    d = ck.build_checkpoint(f, work / f.name)
    ids = ck.ids(f)
    ref = ck.reference_logits(d, ids, f.auto)
    row: dict[str, Any] = {
        "name": f.name,
        "model_type": f.model_type,
        "architecture": f.architecture,
        "spelling": f.spelling,
        "what": f.what,
        "trained": f.trained,
        "tokens": f.tokens,
        "n_ctx": f.n_ctx or f.tokens,
        "ids_seed": ck.SEED,
        "config": json.loads((d / "config.json").read_text()),
        "logit_scale": float(f"{float(np.abs(ref).max()):.4g}"),
        "engines": {},
    }
    timings = {}
    if sdist is not None and lib is not None:
        t0 = time.monotonic()
        gguf = work / f"{f.name}.gguf"
        err = lc.convert(d, gguf, sdist)
        if err is not None:
            c = cannot_load(f"the converter: {err}")
        else:
            out = lc.run(gguf, ids, sdist, lib, n_ctx=f.n_ctx)
            c = _engine_result(out, ref, f.trained)
        row["engines"]["llama.cpp"] = _finish(c, "llama.cpp", f.name, sdist)
        timings["llama.cpp"] = round(time.monotonic() - t0, 1)
    if mlx is not None:
        t0 = time.monotonic()
        try:
            res = mlx.mlx_cell(d, ids, ref)
        except Exception as exc:  # a crash of the engine's loader is a cell too
            res = {"error": f"{type(exc).__name__}: {exc}"}
        row["engines"]["mlx"] = _finish(_engine_result(res, ref, f.trained), "mlx", f.name, None)
        timings["mlx"] = round(time.monotonic() - t0, 1)
    print(f.name, {k: v["cell"][:90] for k, v in row["engines"].items()}, timings, file=sys.stderr)
    return row


def versions(sdist: Path | None, mlx: Any) -> dict[str, str]:
    import torch
    import transformers

    v = {"transformers": transformers.__version__, "torch": torch.__version__}
    if sdist is not None:
        v.update(lc.version(sdist))
    if mlx is not None:
        v.update(mlx.versions())
    return v


def _relative(row: dict[str, Any], c: dict[str, Any]) -> float | None:
    bands = [b for b in (c["bands"] or {}).values() if b is not None]
    return max(bands) / row["logit_scale"] if bands else None


def _tolerance(rows: list[dict[str, Any]], sdist: Path | None) -> dict[str, Any]:
    """The tolerance, and what the run saw on either side of it (max |difference| / scale)."""
    seen: dict[str, list[tuple[float, str]]] = {"same": [], "differs": []}
    for row in rows:
        for engine, c in row["engines"].items():
            rel = _relative(row, c)
            if rel is not None:
                kind = "same" if c["cell"] == "same" else "differs"
                seen[kind].append((rel, f"{row['name']} ({engine})"))
    out: dict[str, Any] = {
        "relative": TOLERANCE,
        "scale": "max |transformers logit| over the run (the family's logit_scale)",
    }
    if seen["same"]:
        ok = sorted(seen["same"])
        out["largest_same"] = {"relative": float(f"{ok[-1][0]:.3g}"), "cell": ok[-1][1]}
        out["median_same"] = float(f"{ok[len(ok) // 2][0]:.3g}")
    if seen["differs"]:
        bad = min(seen["differs"])
        out["smallest_differs"] = {"relative": float(f"{bad[0]:.3g}"), "cell": bad[1]}
    why = (
        "float32 engines that agree differ by ~1e-6 of the logit scale; the GELU models "
        "(gemma2, gemma3, falcon, mpt, bloom) by up to ~4e-4 at every position alike, because "
        "ggml's CPU GELU reads a float16 table"
    )
    if sdist is not None:
        file = "ggml/src/ggml-cpu/vec.h"
        lines = (lc.vendored(sdist) / file).read_text().splitlines()
        hit = next(i for i, ln in enumerate(lines, 1) if "ggml_table_gelu_f16[t]" in ln)
        why += f" ({file}:{hit})"
    out["why"] = why + "; a wrong rotation, scaling or mask moves logits by far more"
    return out


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--llama-cpp", type=Path, help="the unpacked llama-cpp-python sdist")
    p.add_argument("--llama-lib", type=Path, help="the folder of libllama.so built from it")
    p.add_argument("--families", nargs="*", help="run only these (default: all)")
    p.add_argument("--out", type=Path, default=OUT)
    p.add_argument("--work", type=Path, help="where checkpoints go (default: a temporary folder)")
    args = p.parse_args(argv)
    if (args.llama_cpp is None) != (args.llama_lib is None):
        p.error("--llama-cpp and --llama-lib go together")
    import transformers

    transformers.logging.set_verbosity_error()
    chosen = fam.by_name(args.families)
    mlx = _mlx()
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        work = args.work or Path(tmp)
        rows = [run_family(f, work, args.llama_cpp, args.llama_lib, mlx) for f in chosen]
    old = json.loads(args.out.read_text()) if args.out.exists() and args.families else None
    if old is not None:
        mine = {r["name"] for r in rows}
        rows = [r for r in old["families"] if r["name"] not in mine] + rows
        order = {f.name: i for i, f in enumerate(fam.FAMILIES)}
        rows.sort(key=lambda r: order.get(r["name"], len(order)))
    record = {
        "recorded": datetime.date.today().isoformat(),
        "versions": versions(args.llama_cpp, mlx),
        "tolerance": _tolerance(rows, args.llama_cpp),
        "bands": {
            "inside": f"[0, trained - {EDGE})",
            "end": f"[trained - {EDGE}, trained + {EDGE})",
            "beyond": f"[trained + {EDGE}, tokens)",
        },
        "wall_s": round(time.monotonic() - t0, 1),
        "families": rows,
    }
    args.out.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {args.out} ({len(rows)} families, {record['wall_s']} s)", file=sys.stderr)


if __name__ == "__main__":
    main()

"""The engines matrix (docs/assets/engines_runs.json) against tools/engines_check and posenc.

The record is written by ``make engines-check`` (tools/engines_check: tiny checkpoints run in
llama.cpp and MLX against transformers); these tests need neither engine. They hold the record
to its own rules (each cell one of three forms, consistent with its bands and tolerance), to
the families tools/engines_check/families.py builds today (a changed config, or transformers
computing other logits for the same seeded checkpoint, makes the record stale), and to
posenc.hf's reading of each config."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

import posenc.hf
from ci_rule import require

ROOT = Path(__file__).resolve().parent.parent
RECORD = json.loads((ROOT / "docs" / "assets" / "engines_runs.json").read_text())
ROWS = {r["name"]: r for r in RECORD["families"]}
CELL = re.compile(r"same|differs from position (\d+): (.+)|cannot load: (.+)")
ENGINES = ("llama.cpp", "mlx")


def _cells():
    for row in RECORD["families"]:
        for engine, c in row["engines"].items():
            yield pytest.param(row, engine, c, id=f"{row['name']}-{engine}")


def test_record_covers_the_families():
    """At least 12 families, each run in llama.cpp; engine names are the known ones."""
    assert len(ROWS) >= 12
    assert all("llama.cpp" in r["engines"] for r in ROWS.values())
    assert all(set(r["engines"]) <= set(ENGINES) for r in ROWS.values())
    v = RECORD["versions"]
    assert re.fullmatch(r"\d+\.\d+\.\d+", v["llama-cpp-python"])
    assert re.match(r"ggml-org/llama\.cpp@[0-9a-f]{7,40} ", v["llama.cpp"])
    assert v["transformers"] and v["torch"]
    tol = RECORD["tolerance"]
    assert 0 < tol["relative"] < 1e-2
    assert tol["largest_same"]["relative"] <= tol["relative"]
    if "smallest_differs" in tol:
        assert tol["smallest_differs"]["relative"] > tol["relative"]


@pytest.mark.parametrize(("row", "engine", "c"), list(_cells()))
def test_cell_is_one_of_three_forms_and_agrees_with_its_bands(row, engine, c):
    m = CELL.fullmatch(c["cell"])
    assert m, c["cell"]
    limit = RECORD["tolerance"]["relative"] * row["logit_scale"]
    if c["cell"].startswith("cannot load"):
        assert c["bands"] is None and c["first"] is None
        return
    bands = [b for b in c["bands"].values() if b is not None]
    assert set(c["bands"]) == {"inside", "end", "beyond"} and bands
    if row["tokens"] >= row["trained"] + 8:
        assert c["bands"]["beyond"] is not None
    if c["cell"] == "same":
        assert c["first"] is None and max(bands) <= limit
        return
    first = int(m.group(1))
    assert c["first"] == first < row["tokens"]
    assert max(bands) > limit
    band = (
        "inside"
        if first < row["trained"] - 8
        else "end"
        if first < row["trained"] + 8
        else "beyond"
    )
    assert c["bands"][band] > limit, f"position {first} is in the {band} band"
    if c["cause"] is not None:  # a traced cause names its line, and the cell says it
        assert c["cell"].endswith(f"{c['cause']['file']}:{c['cause']['line']}")
        assert c["cause"]["line"] > 0 and c["cause"]["code"]


def test_configs_are_what_families_builds_today():
    """Every row's config.json, spelling and lengths are families.py's today."""
    require("transformers")
    from tools.engines_check import families

    built = {f.name: f for f in families.FAMILIES}
    assert set(ROWS) == set(built)
    for name, row in ROWS.items():
        f = built[name]
        assert row["config"] == families.config(f), name
        assert (row["model_type"], row["architecture"], row["spelling"]) == (
            f.model_type,
            f.architecture,
            f.spelling,
        )
        assert (row["trained"], row["tokens"], row["n_ctx"]) == (
            f.trained,
            f.tokens,
            f.n_ctx or f.tokens,
        )
        if f.n_ctx is None:  # else a short run in a larger context, by design
            assert f.tokens >= 2 * f.trained, (
                f"{name}: the run stops short of 2x its trained length"
            )


@pytest.mark.values
@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(ROWS))
def test_transformers_logits_are_the_recorded_ones(name, tmp_path):
    """The seeded checkpoint built today gives transformers the logit scale the record holds
    (the engines were compared against these logits)."""
    require("torch")
    require("transformers")
    import transformers
    from tools.engines_check import checkpoints, families

    transformers.logging.set_verbosity_error()
    f = families.by_name([name])[0]
    d = checkpoints.build_checkpoint(f, tmp_path / name)
    ref = checkpoints.reference_logits(d, checkpoints.ids(f), f.auto)
    assert ref.shape == (f.tokens, families.SMALL["vocab_size"])
    assert np.isclose(np.abs(ref).max(), ROWS[name]["logit_scale"], rtol=1e-3)


@pytest.mark.parametrize("name", sorted(ROWS))
def test_posenc_reads_each_config(name):
    """posenc.hf describes every config of the matrix, layer by layer: ALiBi families as ALiBi,
    M-RoPE as M-RoPE, Llama 4's NoPE layers where no_rope_layers puts them, the others as
    rotary."""
    row = ROWS[name]
    scheme = posenc.hf.describe(row["config"])
    kinds = [layer.kind for layer in scheme.layers]
    cfg = row["config"]
    sizes = cfg.get("text_config", cfg)
    n_layers = next(sizes[k] for k in ("num_hidden_layers", "n_layer", "n_layers") if k in sizes)
    assert len(kinds) == n_layers
    if "ALiBi" in row["what"]:
        assert set(kinds) == {"alibi"}
    elif row["model_type"] == "llama4_text":
        assert kinds == ["rope" if r else "nope" for r in cfg["no_rope_layers"]]
    elif "M-RoPE" in row["what"]:
        assert set(kinds) == {"mrope"}
    else:
        assert set(kinds) == {"rope"}

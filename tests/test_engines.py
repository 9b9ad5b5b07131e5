"""posenc.engines against what llama.cpp, MLX and vLLM did with the same configs.

docs/assets/engines.json is written by tools/engines_record.py, which ran the engines' own code
(llama.cpp's converter, mlx-lm's model classes, vLLM's get_rope) on small transformers configs
(its header names the versions). These tests hold posenc's mapping to that record, and the
engines' recorded rotations to transformers' rotation as posenc.hf reproduces it. The gguf
package (PyPI) is checked live where it is installed."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

import posenc
import posenc.engines
import posenc.hf
from ci_rule import require

ROOT = Path(__file__).resolve().parent.parent
RECORD = json.loads((ROOT / "docs" / "assets" / "engines.json").read_text())
RUNS = json.loads((ROOT / "docs" / "assets" / "engines_runs.json").read_text())
CASES = {c["name"]: c for c in RECORD["cases"]}
POSITIONS = np.array(RECORD["positions"])
# the cases llama.cpp's converter converted from a transformers-4 config.json (GPT-NeoX, which it
# fails on whatever the config says, is test_converter_failures_are_the_ones_documented's)
CONVERTED = sorted(
    n for n, c in CASES.items()
    if "error" not in c["llama.cpp"]["legacy" if c["llama.cpp"]["legacy"] != "same" else "transformers5"]
)  # fmt: skip
values = pytest.mark.values

# llama.cpp's loader fills a key the file lacks with these (src/llama-model.cpp, load_hparams):
# rope.freq_base 10000, rope.dimension_count the head dim, no scaling.
LOADER_DEFAULTS = {"rope.freq_base": 10000.0, "rope.scaling.type": "none"}


def queries(head_dim: int) -> np.ndarray:
    """tools/engines_record.py's fixed input (float32 there; the same numbers here)."""
    return np.random.default_rng(2024).normal(size=(len(POSITIONS), head_dim)).astype(np.float32)


def _legacy(cfg: dict) -> dict:
    """``cfg`` in the transformers-4 spelling the record's "legacy" runs were given."""
    import sys

    sys.path.insert(0, str(ROOT / "tools"))
    try:
        from engines_record import legacy
    finally:
        sys.path.remove(str(ROOT / "tools"))
    return legacy(cfg)


def _rec(case: dict, engine: str, variant: str = "legacy") -> dict:
    rec = case[engine][variant]
    return case[engine]["transformers5"] if rec == "same" else rec


def _hf(case: dict) -> tuple[np.ndarray, int]:
    """transformers' rotation of the fixed queries (posenc.hf, verified against transformers
    in test_hf_walk.py), and the head dim."""
    scheme = posenc.hf.describe(case["config"])
    layer = next(i for i, x in enumerate(scheme.layers) if x.kind == "rope")
    head = int(scheme.layers[layer].head_dim)
    q = queries(head).astype(np.float64)[None, None]
    return scheme.rotate(q, POSITIONS[None], layer=layer)[0, 0], head


def test_record_names_its_versions():
    v = RECORD["versions"]
    assert v["transformers"] == "5.23.0" and v["vllm"] == "0.33.0" and v["mlx-lm"] == "0.32.2"
    assert v["mlx"] == "0.32.4" and v["gguf (PyPI)"] == "0.19.0"
    assert "llama-cpp-python 0.3.36" in v["llama.cpp"]
    assert set(CASES) >= {"llama-3.1", "qwen2-yarn", "phi3-longrope", "cohere", "glm4"}


def test_engine_rows_are_the_recorded_model_types():
    """ENGINE_ROWS holds a row for exactly the model types the record ran (the atlas's "in
    other engines" table lists those), each verified in the atlas's record, and each row says
    what the engines did with that type's first case."""
    first: dict[str, dict] = {}
    for case in RECORD["cases"]:
        first.setdefault(case["config"]["model_type"], case)
    assert set(posenc.engines.ENGINE_ROWS) == set(first)
    atlas = json.loads((ROOT / "docs" / "assets" / "atlas.json").read_text())["types"]
    assert all(atlas[mt]["status"] == "verified" for mt in first)
    for mt, case in first.items():
        row = posenc.engine_conventions(mt)
        gguf = _rec(case, "llama.cpp")
        if "error" not in gguf:
            assert (row.gguf_arch, row.gguf_rope) == (gguf["arch"], gguf["rope_type"]), mt
            assert row.gguf_permute == (gguf["q_rows_head0"] != sorted(gguf["q_rows_head0"]))
        assert row.mlx_traditional == bool(_rec(case, "mlx")["traditional"]), mt
        vllm = _rec(case, "vllm", "transformers5")
        neox = None if vllm["backend"] == "transformers" else vllm["is_neox_style_in_file"]
        assert row.vllm_neox == neox, mt


# --- llama.cpp / GGUF --------------------------------------------------------------------------


def _effective(meta: dict, arch: str, head_dim: int) -> dict:
    """What llama.cpp runs with: the keys of the file, the loader's defaults for the others."""
    out = {f"{arch}.{k}": v for k, v in LOADER_DEFAULTS.items()}
    out[f"{arch}.rope.dimension_count"] = head_dim
    out.update(meta)
    return out


@values
@pytest.mark.parametrize("name", CONVERTED)
def test_gguf_metadata_matches_the_converter(name):
    """posenc.gguf_rope's keys hold the values llama.cpp's converter wrote (or, for a key it
    left out, the value the loader takes); its tensors equal the converter's."""
    case = CASES[name]
    rec = _rec(case, "llama.cpp")
    got = posenc.gguf_rope(case["config"])
    _, head = _hf(case)
    assert got["arch"] == rec["arch"]
    assert got["rope_type"] == rec["rope_type"]
    have = _effective(rec["metadata"], rec["arch"], head)
    for key, value in got["metadata"].items():
        assert key in have, (key, have)
        if isinstance(value, float):
            assert math.isclose(value, have[key], rel_tol=1e-6), (key, value, have[key])
        else:
            assert value == have[key], (key, value, have[key])
    extra = set(rec["metadata"]) - set(got["metadata"])
    assert all(rec["metadata"][k] == "none" for k in extra), extra  # only 'no scaling'
    assert set(got["tensors"]) == set(rec["tensors"])
    for tname, vals in got["tensors"].items():
        np.testing.assert_allclose(vals, rec["tensors"][tname], rtol=1e-6)


@values
@pytest.mark.parametrize("name", CONVERTED)
def test_gguf_permutation_matches_the_converter(name):
    """The row order the converter gives q and k: rope_permutation (halves -> adjacent pairs)
    exactly where posenc says it permutes, the identity elsewhere."""
    case = CASES[name]
    rec = _rec(case, "llama.cpp")
    got = posenc.gguf_rope(case["config"])
    _, head = _hf(case)
    perm = posenc.rope_permutation(head, inverse=True)  # halves -> adjacent (HF -> Meta)
    want = perm.tolist() if got["permute_qk"] else list(range(head))
    assert rec["q_rows_head0"] == want and rec["k_rows_head0"] == want


@values
@pytest.mark.parametrize("name", sorted(CASES))
def test_engine_pairing_is_consistent(name):
    """An engine whose kernel pairs differently from transformers must permute q/k; one that
    pairs the same way must not: for every row, llama.cpp and vLLM."""
    case = CASES[name]
    scheme = posenc.hf.describe(case["config"])
    pairing = next(x.pairing for x in scheme.layers if x.kind == "rope")
    row = posenc.engine_conventions(scheme.model_type)
    gguf_differs = (row.gguf_rope == "norm") != (pairing == "interleaved")
    assert row.gguf_permute == gguf_differs
    if row.vllm_neox is not None:
        assert row.vllm_permute == (row.vllm_neox != (pairing == "half"))
    assert row.mlx_traditional == (pairing == "interleaved")  # mlx-lm loads q/k as they are


def test_converter_failures_are_the_ones_documented():
    """The converter fails on GPT-NeoX whatever config.json says (it reads the config through
    transformers 5.23, which drops rotary_pct), and on a Cohere2 config without rotary_pct."""
    neox = CASES["gpt_neox"]["llama.cpp"]
    assert "KeyError: 'rotary_pct'" in neox["transformers5"]["error"]
    assert neox["legacy"] == "same"  # the same error with rotary_pct in config.json
    cohere2 = CASES["cohere2"]["llama.cpp"]
    assert "KeyError: 'rotary_pct'" in cohere2["transformers5"]["error"]
    assert cohere2["legacy"]["arch"] == "cohere2"
    broken = {n for n, c in CASES.items() if "error" in c["llama.cpp"]["transformers5"]}
    assert broken == {"gpt_neox", "cohere2"}
    assert set(CASES) - set(CONVERTED) == {"gpt_neox"}  # the others are compared key by key


def test_gguf_key_names_of_the_record():
    """The keys posenc writes are spelled as the gguf package (PyPI) spells them."""
    keys = set(RECORD["gguf_keys"].values())
    for case in CASES.values():
        for key in posenc.gguf_rope(case["config"])["metadata"]:
            arch, rest = key.split(".", 1)
            if rest != "context_length":
                assert "{arch}." + rest in keys, key


def test_gguf_key_names_live():
    """The same against the installed gguf package, and a GGUF header round trip: written with
    its GGUFWriter, read back with its GGUFReader."""
    gguf = require("gguf")
    keys = {getattr(gguf.Keys.Rope, k) for k in dir(gguf.Keys.Rope) if k.isupper()}
    assert keys == set(RECORD["gguf_keys"].values())
    assert gguf.Keys.LLM.CONTEXT_LENGTH == "{arch}.context_length"
    g = posenc.gguf_rope(CASES["qwen2-yarn"]["config"])
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "h.gguf"
        writer = gguf.GGUFWriter(str(path), g["arch"])
        for key, value in g["metadata"].items():
            if isinstance(value, str):
                writer.add_string(key, value)
            elif isinstance(value, float):
                writer.add_float32(key, value)
            else:
                writer.add_uint32(key, value)
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.close()
        reader = gguf.GGUFReader(str(path))
        back = {f.name: f.contents() for f in reader.fields.values() if f.name.startswith("qwen2.")}
    assert back["qwen2.rope.scaling.type"] == "yarn"
    assert back["qwen2.rope.freq_base"] == 1e6 and back["qwen2.rope.scaling.factor"] == 4.0


# --- MLX ----------------------------------------------------------------------------------------


@values
@pytest.mark.parametrize("name", sorted(CASES))
def test_mlx_module_matches_mlx_lm(name):
    """posenc.mlx_rope names the module mlx-lm built from the transformers-4 style config.json,
    with its dims, traditional, base and scale; mlx-lm's output on the fixed queries equals
    transformers' rotation (LongRoPE: the long factors, which mlx-lm always takes)."""
    case = CASES[name]
    rec = _rec(case, "mlx")
    got = posenc.mlx_rope(_legacy(case["config"]))
    assert got["ignored"] is None and got["error"] is None
    assert got["module"].removeprefix("nn.") == rec["class"]
    assert got["dims"] == rec["dims"]
    # SuScaledRoPE has no such attribute: it always pairs halves (traditional=False)
    assert got["traditional"] == (rec["traditional"] or False)
    if got["module"] == "nn.RoPE":
        assert math.isclose(got["base"], rec["base"]) and math.isclose(got["scale"], rec["scale"])
    want, head = _hf(case)
    if name == "phi3-longrope":
        scheme = posenc.hf.describe(case["config"])
        layer = scheme.layers[0]
        want = posenc.apply_rope(
            queries(head).astype(np.float64), POSITIONS, base=layer.base, pairing="half",
            scaling=dict(layer.scaling), seq_len=131072,
        )  # fmt: skip
    np.testing.assert_allclose(rec["output"], want, rtol=0, atol=5e-5)


@pytest.mark.parametrize("name", sorted(CASES))
def test_mlx_rope_of_a_transformers5_config_is_what_mlx_lm_built(name):
    """issue 39: for a config.json as transformers 5 writes it (the rope only under
    rope_parameters) posenc.mlx_rope said what mlx-lm should build (Llama3RoPE, base 5e5 for
    Llama 3.1); mlx-lm 0.32.2 built plain nn.RoPE with its ModelArgs default base, or refused
    the config: posenc now says what the record saw mlx-lm build."""
    case = CASES[name]
    rec = case["mlx"]["transformers5"]
    got = posenc.mlx_rope(case["config"])
    if "error" in rec:
        assert got["module"] is None and got["error"] and got["ignored"] == "rope_parameters"
        assert rec["error"].startswith("TypeError: ModelArgs.__init__() missing")
        return
    assert got["error"] is None
    assert got["module"].removeprefix("nn.") == rec["class"] == "RoPE"
    assert got["dims"] == rec["dims"] and got["traditional"] == rec["traditional"]
    assert math.isclose(got["base"], rec["base"]) and math.isclose(got["scale"], rec["scale"])
    reads = case["config"]["model_type"] == "qwen3"  # models/qwen3.py:33-38
    assert got["ignored"] == (None if reads else "rope_parameters")


def test_mlx_lm_ignores_rope_parameters():
    """A config.json written by transformers 5.23 keeps the base and the scaling only in
    rope_parameters; mlx-lm 0.32.2 reads rope_theta / rope_scaling and silently falls back to
    its defaults: these cases rotate wrongly (errors of order 1), the others by luck right."""
    wrong = {}
    for name, case in CASES.items():
        rec = case["mlx"]["transformers5"]
        if "output" not in rec:
            continue
        want, _ = _hf(case)
        wrong[name] = float(np.abs(np.array(rec["output"]) - want).max())
    bad = {n for n, e in wrong.items() if e > 0.1}
    assert bad == {"llama-3.1", "llama-linear", "mistral", "qwen2-yarn", "phi3-longrope"}
    assert min(wrong[n] for n in bad) > 0.3
    assert CASES["llama-3.1"]["mlx"]["transformers5"]["base"] == 10000.0  # not 500000


# --- vLLM ---------------------------------------------------------------------------------------


@values
@pytest.mark.parametrize("name", sorted(CASES))
def test_vllm_matches_get_rope(name):
    """is_neox_style as in vLLM's model file, max_model_len as vLLM derives it, and get_rope's
    native path with posenc's arguments equal to transformers' rotation."""
    case = CASES[name]
    rec = _rec(case, "vllm", "transformers5")
    got = posenc.vllm_rope(case["config"])
    if rec["backend"] == "transformers":
        assert got["backend"] == "transformers" and got["is_neox_style"] is None
        return
    assert got["backend"] == "native"
    assert got["is_neox_style"] == rec["is_neox_style_in_file"]
    assert got["permute_qk"] == rec["permutes_qk_in_file"]
    assert got["max_model_len"] == rec["max_model_len"]
    want, _ = _hf(case)
    np.testing.assert_allclose(rec["output"], want, rtol=0, atol=5e-5)


@values
def test_yarn_attention_factor_in_every_engine():
    """engines.md: YaRN's attention factor is 0.1 ln s + 1 in all three; the MLX and vLLM
    outputs of the record hold it (their rotation equals transformers' with the factor, and
    differs from the rotation without it by more than the tolerance)."""
    case = CASES["qwen2-yarn"]
    layer = posenc.hf.describe(case["config"]).layers[0]
    s = layer.scaling["factor"]
    assert math.isclose(layer.attention_factor, 0.1 * math.log(s) + 1, rel_tol=1e-15)
    want, _ = _hf(case)
    for out in (_rec(case, "mlx")["output"], _rec(case, "vllm", "transformers5")["output"]):
        np.testing.assert_allclose(out, want, rtol=0, atol=5e-5)
        assert np.abs(np.array(out) - want / layer.attention_factor).max() > 1e-2


def test_vllm_longrope_takes_the_short_factors_by_default():
    """vLLM's default max_model_len for LongRoPE is original_max_position_embeddings (4096
    here), so every position gets the short factors; transformers switches per length."""
    case = CASES["phi3-longrope"]
    assert case["vllm"]["transformers5"]["max_model_len"] == 4096
    assert posenc.vllm_rope(case["config"])["max_model_len"] == 4096


@pytest.mark.parametrize("name", sorted(CASES))
def test_explain_engines(name):
    """The text names the arch, the rope type, each GGUF key with its value, each engine's
    module; a Scheme gives the same; Scheme.explain ends with it."""
    cfg = CASES[name]["config"]
    g, m, v = posenc.gguf_rope(cfg), posenc.mlx_rope(cfg), posenc.vllm_rope(cfg)
    for lang in ("en", "zh"):
        text = posenc.explain_engines(cfg, lang)
        lines = text.splitlines()
        assert lines[0].startswith(("In llama.cpp / MLX / vLLM", "在 llama.cpp / MLX / vLLM 中"))
        head = next(x for x in lines if x.startswith(("  llama.cpp: GGUF", "  llama.cpp：GGUF")))
        assert repr(g["arch"]) in head and g["rope_type"].upper() in head
        for key, value in g["metadata"].items():
            line = next(x for x in lines if x.strip().startswith(key + " = "))
            shown = line.split(" = ", 1)[1]
            if isinstance(value, float):
                assert math.isclose(float(shown), value, rel_tol=1e-5), (line, value)
            else:
                assert shown == repr(value), (line, value)
        if m["error"] is None:
            assert m["module"] + f"(dims={m['dims']}, traditional={m['traditional']}" in text
        else:
            assert "MLX (mlx-lm): cannot load" in text or "MLX（mlx-lm）：无法加载" in text
        assert lines[-1].strip().startswith(f"max_model_len = {v['max_model_len']}")
        if v["backend"] == "native":
            assert f"is_neox_style={v['is_neox_style']})" in text
            assert sum("rope_parameters[" in x for x in lines) == len(v["rope_parameters"])
        assert text == posenc.explain_engines(posenc.hf.describe(cfg), lang)
        full = posenc.hf.describe(cfg).explain(lang)
        assert full.endswith("\n" + text) and full.count(lines[0]) == 1


READ_LABEL = {
    "en": "  read from the engine's source, not run:",
    "zh": "  以下读自引擎的源码，未实际运行：",
}
RUN_NAMES = {"llama.cpp": "llama.cpp", "mlx": "MLX"}


def _run_part(text: str, lang: str) -> tuple[str, list[str]]:
    """The run section of an explain_engines text (its wrapped lines joined) and the rest."""
    lines = text.splitlines()
    label = lines.index(READ_LABEL[lang])
    return " ".join(x.strip() for x in lines[1:label]), lines[label + 1 :]


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_explain_engines_states_what_the_run_matrix_observed(name, lang):
    """issue 39, item 5: the engine section states each cell the run matrix
    (engines_runs.json) holds for the config's model type, engine by engine, and labels the
    rest "read from the engine's source, not run"; nothing below that label claims a run."""
    cfg = CASES[name]["config"]
    fams = [f for f in RUNS["families"] if f["model_type"] == cfg["model_type"]]
    ran, rest = _run_part(posenc.explain_engines(cfg, lang), lang)
    cells = [(e, f) for e in RUN_NAMES for f in fams if e in f["engines"]]
    assert bool(ran) == bool(cells)
    sep = ", " if lang == "en" else "，"
    colon = ": " if lang == "en" else "："
    for engine, fam in cells:
        cell = fam["engines"][engine]
        item = f"{RUN_NAMES[engine]}{sep}{fam['name']}{colon}"
        assert ran.count(item) == 1, (item, ran)
        said = ran.split(item, 1)[1]
        if cell["cell"] == "same":
            want = {
                "en": f"same logits as transformers at positions 0..{fam['tokens'] - 1}",
                "zh": f"在位置 0..{fam['tokens'] - 1} 上与 transformers 的 logits 相同",
            }[lang]
        elif cell["first"] is not None:
            want = cell["cell"] if lang == "en" else f"从位置 {cell['first']} 起"
        else:
            want = cell["cell"] if lang == "en" else "无法加载"
        assert said.startswith(want), (want, said)
    if cells:
        tol = RUNS["tolerance"]["relative"]
        assert (
            f"tolerance {tol:g} x" if lang == "en" else f"容差为最大 |logit| 的 {tol:g} 倍"
        ) in ran
    assert not any("same logits" in x or "相同" in x for x in rest)


@pytest.fixture
def runs_file(monkeypatch, tmp_path):
    """posenc.engines reading a run record of the test's own (None: no record at all)."""

    def use(record: dict | None) -> None:
        path = tmp_path / "engines_runs.json"
        if record is not None:
            path.write_text(json.dumps(record), encoding="utf-8")
        monkeypatch.setattr(posenc.engines, "RUNS_FILES", (path,))
        posenc.engines._load_runs.cache_clear()

    yield use
    posenc.engines._load_runs.cache_clear()


def test_explain_engines_without_a_run_record_claims_no_run(runs_file):
    """Without engines_runs.json (a wheel that does not carry it) everything is labelled
    "read from the engine's source, not run", right under the title."""
    runs_file(None)
    for lang in ("en", "zh"):
        lines = posenc.explain_engines(CASES["qwen2-yarn"]["config"], lang).splitlines()
        assert lines[1] == READ_LABEL[lang]
        assert lines[2].startswith(("  llama.cpp: GGUF", "  llama.cpp：GGUF"))


def test_explain_engines_run_lines(runs_file):
    """The three kinds of cell, in both languages: a difference names its position and the
    engine's file:line, a refusal the engine's message; long items wrap within 80 columns."""
    cause = {"text": "a cause", "file": "mlx_lm/models/qwen2.py", "line": 27, "code": "x"}
    fams = [
        {"name": "q-a", "model_type": "qwen2", "tokens": 320,
         "engines": {"llama.cpp": {"cell": "same", "first": None, "cause": None},
                     "mlx": {"cell": "differs from position 1: a cause, mlx_lm/models/qwen2.py:27",
                             "first": 1, "cause": cause}}},
        {"name": "q-b", "model_type": "qwen2", "tokens": 64,
         "engines": {"mlx": {"cell": "cannot load: ValueError: no", "first": None, "cause": None}}},
        {"name": "other", "model_type": "llama", "tokens": 64,
         "engines": {"mlx": {"cell": "same", "first": None, "cause": None}}},
    ]  # fmt: skip
    runs_file({"tolerance": {"relative": 0.001}, "families": fams})
    cfg = CASES["qwen2-yarn"]["config"]
    en = posenc.explain_engines(cfg).splitlines()
    assert en[1:6] == [
        "  run (tiny qwen2 checkpoints, float32; logits against transformers', tolerance",
        "      0.001 x the largest |logit|):",
        "    llama.cpp, q-a: same logits as transformers at positions 0..319",
        "    MLX, q-a: differs from position 1: a cause, mlx_lm/models/qwen2.py:27",
        "    MLX, q-b: cannot load: ValueError: no",
    ]
    assert en[6] == READ_LABEL["en"]
    zh = posenc.explain_engines(cfg, "zh").splitlines()
    assert zh[2:5] == [
        "    llama.cpp，q-a：在位置 0..319 上与 transformers 的 logits 相同",
        "    MLX，q-a：从位置 1 起与 transformers 的 logits 不同（mlx_lm/models/qwen2.py:27）",
        "    MLX，q-b：无法加载",
    ]
    assert zh[5] == READ_LABEL["zh"]
    assert max(len(x) for x in en + zh) <= 80


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_runs_table_is_the_record(lang):
    """The engines page's table (generated at build time): one row per family of
    engines_runs.json, in its order, each engine's cell as the record has it, and the
    record's versions under it."""
    table, foot = posenc.engines._runs_markdown(lang).split("\n\n")
    rows = table.splitlines()[2:]
    assert len(rows) == len(RUNS["families"]) >= 12
    for row, fam in zip(rows, RUNS["families"], strict=True):
        cells = [c.strip() for c in row.replace("\\|", "/").split("|")[1:-1]]
        assert cells[0] == f"`{fam['name']}`" and cells[1] == f"`{fam['model_type']}`"
        for engine, shown in zip(RUN_NAMES, cells[-2:], strict=True):
            cell = fam["engines"].get(engine)
            if cell is None:
                assert shown == {"en": "not run", "zh": "未运行"}[lang]
            elif cell["cell"] == "same":
                assert shown.startswith({"en": "same (", "zh": "相同（"}[lang])
            elif cell["first"] is not None:
                assert f" {cell['first']}" in shown
                if cell["cause"]:
                    assert f"{cell['cause']['file']}:{cell['cause']['line']}" in shown
            else:
                assert shown.startswith({"en": "cannot load: ", "zh": "无法加载"}[lang])
                if cell["cause"]:
                    assert f"{cell['cause']['file']}:{cell['cause']['line']}" in shown
    assert all(str(v) in foot for v in RUNS["versions"].values())
    assert f"{RUNS['tolerance']['relative']:g}" in foot


# --- issue 39's five statements, against what the engines did ---------------------------------


def test_issue39_a_mlx_lm_reads_rope_parameters_for_qwen3():
    """The issue said mlx-lm cannot load a Qwen3 config.json written by transformers 5 (rope
    only under rope_parameters). It can: mlx-lm 0.32.2's qwen3 ModelArgs reads rope_parameters
    (models/qwen3.py:33-38; run on a tiny Qwen3 with base 5e5 there, its logits equal
    transformers' at every position). The record's mlx-lm built nn.RoPE with the config's base
    from such a file (rope_theta is None by default there: without reading it, it raises), and
    posenc says the same for Qwen3 with base 5e6."""
    case = CASES["qwen3"]
    assert "rope_theta" not in case["config"] and "rope_scaling" not in case["config"]
    rec = case["mlx"]["transformers5"]
    assert "error" not in rec and rec["class"] == "RoPE"
    assert rec["base"] == case["config"]["rope_parameters"]["rope_theta"]
    cfg = {**case["config"], "rope_parameters": {"rope_type": "default", "rope_theta": 5e6}}
    got = posenc.mlx_rope(cfg)
    assert (got["module"], got["base"], got["ignored"], got["error"]) == (
        "nn.RoPE",
        5e6,
        None,
        None,
    )
    run = next(f for f in RUNS["families"] if f["name"] == "qwen3")
    assert run["spelling"] == "transformers5" and "rope_theta" not in run["config"]
    assert run["engines"]["mlx"]["cell"] == "same"  # the whole model, logits at 0..383


QWEN25_1M = {  # Qwen2.5-7B-Instruct-1M's config.json as transformers 5 writes it
    "model_type": "qwen2", "hidden_size": 3584, "num_attention_heads": 28,
    "num_key_value_heads": 4, "num_hidden_layers": 28, "max_position_embeddings": 1010000,
    "rope_parameters": {"rope_type": "default", "rope_theta": 10000000.0},
}  # fmt: skip


def test_issue39_b_mlx_lm_drops_qwen25_1m_base_written_by_transformers5():
    """The issue said right: mlx-lm 0.32.2's qwen2 ModelArgs has no rope_parameters (its
    rope_theta defaults to 1e6, models/qwen2.py:27), so Qwen2.5-1M re-saved by transformers 5
    runs with base 1e6, not 1e7 (a tiny Qwen2 with base 1e7 under rope_parameters: logits differ
    from position 1; with rope_theta at the top level: the same). posenc said 1e7; it now says
    what mlx-lm builds. The record shows the same loss: its transformers-5 qwen2 config's YaRN
    scaling became plain nn.RoPE."""
    got = posenc.mlx_rope(QWEN25_1M)
    assert (got["module"], got["base"], got["ignored"]) == ("nn.RoPE", 1e6, "rope_parameters")
    assert posenc.mlx_rope(_legacy(QWEN25_1M))["base"] == 1e7
    rec = CASES["qwen2-yarn"]["mlx"]
    assert rec["transformers5"]["class"] == "RoPE" and rec["legacy"]["class"] == "YarnRoPE"
    assert posenc.engines.MLX_IGNORED_ROPE_PARAMETERS_BASE["qwen2"] == 1e6
    for lang in ("en", "zh"):
        assert "rope_parameters" in posenc.explain_engines(QWEN25_1M, lang).split("vLLM")[1]
    # the same loss run whole: Llama 3 with its scaling only under rope_parameters differs
    # from position 1 in MLX (models/llama.py), spelled as transformers 4 wrote it: the same
    runs = {f["name"]: f["engines"]["mlx"] for f in RUNS["families"]}
    assert runs["llama3"]["first"] == 1
    assert runs["llama3"]["cause"]["file"] == "mlx_lm/models/llama.py"
    assert runs["llama3-legacy"]["cell"] == "same"


def test_issue39_c_vllm_runs_olmo2_through_its_transformers_backend():
    """The issue said vLLM has a native olmo2 model file. vLLM 0.33.0 has none: its registry
    maps Olmo2ForCausalLM to ("transformers", "TransformersForCausalLM")
    (vllm/model_executor/models/registry.py:762), as the record saw, and posenc says so."""
    case = CASES["olmo2"]
    rec = case["vllm"]["transformers5"]
    assert rec["backend"] == "transformers"
    assert rec["module_file"] == "vllm/model_executor/models/transformers"
    got = posenc.vllm_rope(case["config"])
    assert got["backend"] == "transformers" and got["is_neox_style"] is None
    assert posenc.engines.ENGINE_ROWS["olmo2"].vllm_neox is None
    lines = posenc.explain_engines(case["config"]).splitlines()
    assert "  vLLM: runs transformers' own modeling code (its transformers backend)" in lines


# (d) llama.cpp's converter reads the nested original length first:
#     test_gguf_llama3_rope_freqs_read_the_nested_original_length_first (below).
# (e) explain's max_model_len is vllm_rope's, the smallest length key:
#     test_vllm_max_model_len_is_the_same_from_a_config_and_its_scheme (below).


def test_explain_has_no_engine_section_without_a_verified_row():
    """Scheme.explain of a model type outside ENGINE_ROWS says nothing about the engines."""
    cfg = {**CASES["qwen3"]["config"], "model_type": "qwen3_moe"}
    assert "qwen3_moe" not in posenc.engines.ENGINE_ROWS
    for lang in ("en", "zh"):
        text = posenc.hf.describe(cfg).explain(lang)
        assert "llama.cpp" not in text and "vLLM" not in text


def test_explain_engines_shortens_long_lists():
    """LongRoPE's factor lists are shown by their ends and their length, never in full."""
    text = posenc.explain_engines(CASES["phi3-longrope"]["config"])
    sc = posenc.vllm_rope(CASES["phi3-longrope"]["config"])["rope_parameters"]
    n, first, last = len(sc["long_factor"]), sc["long_factor"][0], sc["long_factor"][-1]
    assert n > 4
    assert f"rope_parameters['long_factor'] = [{first!r}, ..., {last!r}] ({n} values)" in text
    assert max(len(x) for x in text.splitlines()) <= 80


# --- bad input ----------------------------------------------------------------------------------


@pytest.mark.parametrize("fn", [posenc.gguf_rope, posenc.mlx_rope, posenc.vllm_rope])
def test_refusals(fn):
    with pytest.raises(TypeError, match="config"):
        fn("config.json")
    bert = {"model_type": "bert", "hidden_size": 64, "num_attention_heads": 4,
            "num_hidden_layers": 2}  # fmt: skip
    with pytest.raises(ValueError, match="model_type"):
        fn(bert)
    with pytest.raises(ValueError, match="model_type"):
        fn({**CASES["qwen3"]["config"], "model_type": "qwen2_moe"})


def test_engine_conventions_refusals():
    with pytest.raises(TypeError, match="model_type"):
        posenc.engine_conventions(3)
    with pytest.raises(ValueError, match="model_type"):
        posenc.engine_conventions("bert")


# --- issue 40: the config's length keys, as vLLM and llama.cpp's converter read them ------------

SMALL = {"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 2,
         "max_position_embeddings": 4096}  # fmt: skip


@pytest.mark.parametrize(
    "key,value,error",
    [
        ("seq_length", "4k", TypeError),
        ("seq_length", True, TypeError),
        ("seq_length", [2048], TypeError),
        ("seq_length", -5, ValueError),
        ("seq_length", 0, ValueError),
        ("seq_length", 2048.5, ValueError),
        ("seq_length", math.nan, ValueError),
        ("model_max_length", math.inf, ValueError),
        ("model_max_length", -math.inf, ValueError),
        ("n_positions", 10**400, ValueError),
        ("max_seq_len", 2.0**60, ValueError),
    ],
    ids=["str", "bool", "list", "negative", "zero", "fraction", "nan", "inf", "-inf", "10**400",
         "2**60"],
)  # fmt: skip
def test_vllm_refuses_bad_length_keys_by_name(key, value, error):
    """vLLM takes the smallest of its length keys as the model's length: a key that is no
    positive integer is refused by its name (it was -5 for seq_length=-5, 1 for True, and a
    message naming no key for "4k" or inf); the engine section of explain refuses it too."""
    cfg = {**SMALL, key: value}
    with pytest.raises(error, match=rf"config\['{key}'\]"):
        posenc.vllm_rope(cfg)
    with pytest.raises(error, match=rf"config\['{key}'\]"):
        posenc.hf.describe(cfg).explain()


@pytest.mark.parametrize(
    "changes,want",
    [
        ({}, 4096),
        ({"seq_length": 2048}, 2048),  # the smallest length key
        ({"seq_length": 2048.0}, 2048),  # a whole float is read as vLLM reads it, int(2048.0)
        ({"n_positions": 8192, "max_seq_len": 1024}, 1024),
        ({"seq_length": 2048, "model_max_length": 16384}, 16384),  # model_max_length overrides
        ({"rope_scaling": {"rope_type": "linear", "factor": 2.0}, "seq_length": 1024}, 2048),
    ],
    ids=["max-pos", "seq_length", "whole-float", "smallest", "model_max_length", "linear"],
)
def test_vllm_max_model_len_is_the_same_from_a_config_and_its_scheme(changes, want):
    """issue 40, item 7: explain printed max_model_len 4096 for a config whose seq_length is 2048
    (the Scheme it read kept max_position_embeddings only) where vllm_rope said 2048."""
    cfg = {**SMALL, **changes}
    scheme = posenc.hf.describe(cfg)
    assert posenc.vllm_rope(cfg)["max_model_len"] == want
    assert posenc.vllm_rope(scheme)["max_model_len"] == want
    text = posenc.explain_engines(cfg)
    assert text == posenc.explain_engines(scheme)
    assert text.splitlines()[-1].strip() == f"max_model_len = {want} (vLLM's default)"
    for lang in ("en", "zh"):
        assert scheme.explain(lang).endswith("\n" + posenc.explain_engines(cfg, lang))


def test_the_scheme_keeps_every_length_key_the_engines_read():
    from posenc.hf.keys import LENGTH_KEYS

    wanted = {*posenc.engines.VLLM_LENGTH_KEYS, "original_max_position_embeddings"}
    assert set(LENGTH_KEYS) == wanted
    cfg = {**SMALL, **{key: 1000 + i for i, key in enumerate(LENGTH_KEYS)}}
    assert dict(posenc.hf.describe(cfg).length_keys) == {k: cfg[k] for k in LENGTH_KEYS}


def test_vllm_max_model_len_takes_the_config_class_default():
    """vLLM reads the config through transformers' config class: a qwen2 config.json without
    max_position_embeddings has Qwen2Config's default, not vLLM's 2048 fallback."""
    cfg = {"model_type": "qwen2", "hidden_size": 64, "num_attention_heads": 4,
           "num_hidden_layers": 2}  # fmt: skip
    scheme = posenc.hf.describe(cfg)
    assert scheme.max_position_embeddings == 32768  # Qwen2Config's default (classes.json)
    assert posenc.vllm_rope(cfg)["max_model_len"] == 32768


@pytest.mark.parametrize("factor", [1e308, 2.0**60])
@pytest.mark.parametrize("kind", ["linear", "dynamic"])
def test_vllm_refuses_a_factor_that_overflows_max_model_len(kind, factor):
    """A linear factor of 1e308 made max_model_len infinite: an OverflowError traceback."""
    cfg = {**SMALL, "rope_scaling": {"rope_type": kind, "factor": factor}}
    with pytest.raises(ValueError, match=r"config\['rope_scaling'\]\['factor'\]"):
        posenc.vllm_rope(cfg)


def _converter_rope_freqs(cfg: dict) -> np.ndarray:
    """llama.cpp's converter (vendored in llama-cpp-python 0.3.36: conversion/llama.py:297-320,
    generate_extra_tensors), transcribed: the original length comes from the scaling dict, which
    the top-level key fills only where it has none (conversion/base.py:1376-1377), else 8192."""
    rp = cfg["rope_scaling"]
    dim = cfg["hidden_size"] // cfg["num_attention_heads"]
    base = cfg.get("rope_theta", 10000.0)
    freqs = 1.0 / (base ** (np.arange(0, dim, 2, dtype=np.float32) / np.float32(dim)))
    factor, low, high = rp["factor"], rp["low_freq_factor"], rp["high_freq_factor"]
    old = rp.get("original_max_position_embeddings", cfg.get("original_max_position_embeddings"))
    old = 8192 if old is None else old
    out = []
    for freq in freqs:
        wavelen = 2 * math.pi / freq
        if wavelen < old / high:
            out.append(1.0)
        elif wavelen > old / low:
            out.append(factor)
        else:
            smooth = (old / wavelen - low) / (high - low)
            out.append(1 / ((1 - smooth) / factor + smooth))
    return np.array(out, dtype=np.float32)


@pytest.mark.parametrize("top", [None, 4096])
def test_gguf_llama3_rope_freqs_read_the_nested_original_length_first(top):
    """issue 40, item 6, checked against the converter itself (run on the vendored source): the
    nested original length wins over the top-level key, so the nested 4096 gives
    [..., 2.30, 8, 8] whatever the top level says; the issue's [..., 1, 4.68, 8] (top level
    first) is not what the converter writes."""
    cfg = {**SMALL, "rope_theta": 10000.0, "max_position_embeddings": 131072,
           "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                            "high_freq_factor": 4.0, "original_max_position_embeddings": 4096}}  # fmt: skip
    if top is not None:
        cfg["original_max_position_embeddings"] = top
    want = _converter_rope_freqs(cfg)
    for given in (cfg, posenc.hf.describe(cfg)):
        got = posenc.gguf_rope(given)["tensors"]["rope_freqs"]
        np.testing.assert_allclose(got, want, rtol=1e-6)
    assert [round(float(v), 2) for v in want[-3:]] == [2.3, 8.0, 8.0]


@pytest.mark.parametrize(
    "value,error", [("8192", TypeError), (True, TypeError), (-4096, ValueError), (0, ValueError)]
)
def test_gguf_llama3_refuses_a_bad_top_level_original_length(value, error):
    cfg = {**SMALL, "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
           "high_freq_factor": 4.0, "original_max_position_embeddings": 4096},
           "original_max_position_embeddings": value}  # fmt: skip
    try:
        posenc.hf.describe(cfg)
    except (TypeError, ValueError) as exc:  # describe itself reads the key (transformers does)
        assert "original_max_position_embeddings" in str(exc)
        return
    with pytest.raises(error, match=r"config\['original_max_position_embeddings'\]"):
        posenc.gguf_rope(cfg)

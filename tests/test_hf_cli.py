"""``python -m posenc explain CONFIG.json``: the atlas on the command line (issue 12).

Driven through ``posenc.__main__.main([...])`` with config files in ``tmp_path``; one subprocess
runs the real ``python -m posenc explain`` and checks that it imports neither torch nor
transformers (nothing is downloaded: the command reads one local file).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import posenc.hf
from hf_configs import llama31
from posenc.__main__ import main

LLAMA = llama31()


def _write(tmp_path: Path, content: object, name: str = "config.json") -> str:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        text = content if isinstance(content, str) else json.dumps(content, indent=2)
        path.write_text(text, encoding="utf-8")
    return str(path)


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(["explain", *argv])
    out, err = capsys.readouterr()
    return status, out, err


def _one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("posenc explain: error: "), err
    assert "Traceback" not in err
    return lines[0]


# --- it works --------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_explain_prints_the_scheme_explanation(tmp_path, capsys, lang):
    path = _write(tmp_path, LLAMA)
    args = (path,) if lang == "en" else (path, "--lang", "zh")
    status, out, err = _run(capsys, *args)
    assert (status, err) == (0, "")
    assert out == posenc.hf.describe(LLAMA).explain(lang) + "\n"
    assert "config['rope_scaling']" in out and "posenc.apply_rope(" in out


def test_explain_json_groups_layers_and_carries_the_call_and_the_pitfalls(tmp_path, capsys):
    """issue 20, goal 6: --json was Scheme.to_dict(), 854 lines for Llama 3.1 (one object per
    identical layer), with no posenc call, no pitfalls and the same text in zh."""
    from hf_configs import llama31
    from posenc.hf.explain import _SCHEMA

    scheme = posenc.hf.describe(llama31())
    status, out, err = _run(capsys, _write(tmp_path, llama31()), "--json")
    assert (status, err) == (0, "")
    data = json.loads(out)
    assert data["schema"] == _SCHEMA == "posenc.explain/1" and data["lang"] == "en"
    assert data["posenc"] == posenc.__version__
    assert len(out.splitlines()) < 100, len(out.splitlines())  # was 854
    (group,) = data["layer_groups"]
    assert group["layers"] == [[0, 31]] and group["rope_type"] == "llama3"
    assert group["call"] == posenc.hf.posenc_call(scheme, 0)
    assert group["sources"]["base"] == "config['rope_theta']"
    assert group["sources"]["attention_factor"] == "1 (model code)"
    assert data["pitfalls"] == posenc.hf.explain._pitfalls(scheme, "en")
    assert data["num_layers"] == 32 and data["kind"] == "rope"
    status, out_zh, _ = _run(capsys, _write(tmp_path, llama31()), "--json", "--lang", "zh")
    zh = json.loads(out_zh)
    assert zh["lang"] == "zh" and zh["pitfalls"] == posenc.hf.explain._pitfalls(scheme, "zh")
    assert zh["pitfalls"] != data["pitfalls"] and "（" in zh["title"]


def test_explain_json_of_a_scheme_without_rotation(tmp_path, capsys):
    cfg = {"model_type": "t5", "num_layers": 2, "d_model": 64}
    status, out, _ = _run(capsys, _write(tmp_path, cfg), "--json")
    data = json.loads(out)
    assert status == 0 and data["call"].startswith("posenc.t5_bucket(")
    assert data["layer_groups"][0]["call"] is None and data["fixed"]["num_buckets"] == 32


def test_explain_reads_a_checkpoint_folder(tmp_path, capsys):
    _write(tmp_path, LLAMA)
    status, out, _ = _run(capsys, str(tmp_path))
    assert status == 0 and out.startswith("llama: ")


def test_explain_zh_json_keeps_chinese_unescaped(tmp_path, capsys):
    cfg = {**LLAMA, "model_type": "qwen2"}
    status, out, _ = _run(capsys, _write(tmp_path, cfg), "--json", "--lang", "zh")
    assert status == 0 and json.loads(out)["model_type"] == "qwen2"
    status, out, _ = _run(capsys, _write(tmp_path, cfg), "--lang", "zh")
    assert "移植要点" in out and "\\u" not in out


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_list_groups_the_known_model_types_by_convention(capsys, lang):
    status = main(["explain", "--list", "--lang", lang])
    out, err = capsys.readouterr()
    assert (status, err) == (0, "")
    lines = out.splitlines()
    n = len(posenc.hf.MODELS)
    assert str(n) in lines[0] and posenc.hf.TRANSFORMERS_VERSION in lines[0]
    listed: dict[str, list[str]] = {}
    for head, body in zip(lines[1::2], lines[2::2], strict=True):
        listed[head.split(" ", 1)[0]] = body.strip().split(", ")
    assert sorted(t for types in listed.values() for t in types) == sorted(posenc.hf.MODELS)
    for conv, types in listed.items():
        assert all(posenc.hf.MODELS[t].convention == conv for t in types)
        title = posenc.hf.CONVENTIONS[conv].title_zh if lang == "zh" else None
        assert title is None or title in out


def test_list_json(capsys):
    assert main(["explain", "--list", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["transformers"] == posenc.hf.TRANSFORMERS_VERSION
    assert {t: c for c, types in got["conventions"].items() for t in types} == {
        t: row.convention for t, row in posenc.hf.MODELS.items()
    }


# --- bad input: one line on stderr, status 2, no traceback --------------------------------------


@pytest.mark.parametrize(
    "content,words",
    [
        ('{"model_type": "llama",\n  "rope_theta": }', ["not JSON", "line 2", "column 17"]),
        ("", ["not JSON", "line 1", "column 1"]),
        (b"\xff\xfe\x00{", ["not JSON"]),
        ("[1, 2]", ["JSON object", "array"]),
        ('"llama"', ["JSON object", "string"]),
        ("null", ["JSON object", "null"]),
        ('{"hidden_size": 64}', ["model_type"]),
        ('{"model_type": null}', ["model_type"]),
        ('{"model_type": 3}', ["model_type", "string", "number"]),
    ],
    ids=["syntax", "empty", "binary", "array", "string", "null", "no-model-type", "null-type",
         "int-type"],
)  # fmt: skip
def test_bad_files_get_one_clear_line(tmp_path, capsys, content, words):
    path = _write(tmp_path, content)
    status, out, err = _run(capsys, path)
    line = _one_error_line(err)
    assert status == 2 and out == ""
    assert path in line
    missing = [w for w in words if w not in line]
    assert not missing, line


def test_missing_file(tmp_path, capsys):
    status, out, err = _run(capsys, str(tmp_path / "nope.json"))
    line = _one_error_line(err)
    assert status == 2 and out == "" and "nope.json" in line and "no such file" in line


def test_folder_without_config(tmp_path, capsys):
    status, _, err = _run(capsys, str(tmp_path))
    assert status == 2 and "without a config.json" in _one_error_line(err)


@pytest.mark.parametrize(
    "cfg,words",
    [
        # contradictory keys: describe's message, naming both
        ({**LLAMA, "rope_parameters": {"rope_type": "yarn", "factor": 4.0}},
         ["rope_parameters", "rope_scaling", "disagree"]),
        ({**LLAMA, "layer_types": ["full_attention"] * 3}, ["layer_types", "32"]),
        ({**LLAMA, "rope_theta": "500000"}, ["rope_theta", "number"]),
        ({**LLAMA, "rope_scaling": {"rope_type": "bogus"}}, ["rope_type", "bogus"]),
        ({**LLAMA, "rope_theta": 10**400}, ["rope_theta", "finite"]),
        ({**LLAMA, "rope_scaling": {"rope_type": ["yarn"]}}, ["rope_type", "yarn"]),
        ({"model_type": "falcon", "alibi": "false"}, ["alibi", "boolean"]),
    ],
    ids=["rope-disagree", "layer-types-length", "theta-str", "rope-type", "theta-10**400",
         "rope-type-list", "bool-str"],
)  # fmt: skip
def test_keys_describe_refuses_are_reported_by_name(tmp_path, capsys, cfg, words):
    status, out, err = _run(capsys, _write(tmp_path, cfg))
    line = _one_error_line(err)
    assert status == 2 and out == ""
    missing = [w for w in words if w not in line]
    assert not missing, line


@pytest.mark.parametrize("as_json", [False, True])
@pytest.mark.parametrize(
    "cfg,name",
    [
        ({**LLAMA, "model_type": "my_llama_fork"}, "my_llama_fork"),
        ({"model_type": "conv_thing", "width": 3}, "conv_thing"),
        ({"model_type": "bert", "hidden_size": 768, "num_attention_heads": 12,
          "num_hidden_layers": 12}, "bert"),
        ({"model_type": "llava", "text_config": {"model_type": "my_lm", "hidden_size": 64}},
         "my_lm"),
    ],
    ids=["fork", "no-keys", "bert", "llava-unknown-text"],
)  # fmt: skip
def test_an_unknown_model_type_is_refused_with_what_is_needed(tmp_path, capsys, cfg, name, as_json):
    # issue 20: never a guess; status 2, one line saying why and what a description needs
    status, out, err = _run(capsys, _write(tmp_path, cfg), *(["--json"] if as_json else []))
    line = _one_error_line(err)
    assert status == 2 and out == ""
    for word in (repr(name), "not described", str(len(posenc.hf.MODELS)), "--list",
                 "posenc.hf.MODELS"):  # fmt: skip
        assert word in line, line


def test_a_fixed_sub_config_class_ignores_the_model_type_in_it(tmp_path, capsys):
    # Gemma3Config builds Gemma3TextConfig whatever text_config's model_type says (its spec is
    # not AutoConfig), so transformers reads gemma9_text's keys as Gemma 3 text: so does posenc
    text = {"model_type": "gemma9_text", "hidden_size": 64, "num_attention_heads": 4,
            "head_dim": 16, "num_hidden_layers": 2}  # fmt: skip
    status, out, err = _run(capsys, _write(tmp_path, {"model_type": "gemma3", "text_config": text}))
    assert status == 0 and err == "" and out.startswith("gemma3")
    assert posenc.hf.describe({"model_type": "gemma3", "text_config": text}).num_layers == 2


@pytest.mark.parametrize(
    "argv,word",
    [
        ([], "CONFIG.json"),
        (["--list", "x.json"], "not both"),
    ],
    ids=["no-config", "config-and-list"],
)
def test_usage_errors(capsys, argv, word):
    status = main(["explain", *argv])
    err = capsys.readouterr().err
    assert status == 2 and word in err.strip().splitlines()[-1] and "Traceback" not in err


@pytest.mark.parametrize("argv", [["--lang", "fr", "x.json"], ["--bogus"]])
def test_argparse_refuses_bad_options(capsys, argv):
    with pytest.raises(SystemExit) as info:
        main(["explain", *argv])
    assert info.value.code == 2 and "usage:" in capsys.readouterr().err


# --- the real command ----------------------------------------------------------------------------


def test_python_m_posenc_explain_imports_neither_torch_nor_transformers(tmp_path):
    path = _write(tmp_path, {**LLAMA, "model_type": "mistral"})
    code = (
        "import sys; from posenc.__main__ import main; status = main(sys.argv[1:]); "
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'transformers')); "
        "assert not bad, bad; sys.exit(status)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, "explain", path, "--lang", "zh"],
        capture_output=True,
        text=True,
        encoding="utf-8",
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("mistral：") and proc.stderr == ""
    # and as a module, the way the issue spells it
    proc = subprocess.run(
        [sys.executable, "-m", "posenc", "explain", str(tmp_path / "missing.json")],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("posenc explain: error: ") and "Traceback" not in proc.stderr

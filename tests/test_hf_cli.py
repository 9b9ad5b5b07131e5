"""``python -m posenc explain CONFIG.json``: the atlas on the command line (issue 12).

Driven through ``posenc.__main__.main([...])`` with config files in ``tmp_path``; one subprocess
runs the real ``python -m posenc explain`` and checks that it imports neither torch nor
transformers (nothing is downloaded: the command reads one local file).
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest

import posenc.hf
from hf_configs import llama31
from posenc.__main__ import main

LLAMA = llama31()
CORPUS = Path(__file__).parent / "hf_corpus"


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


# --- issue 40: hostile files (items 1-3, 7) -------------------------------------------------------

HAN = re.compile(r"[\u4e00-\u9fff]")
# what a terminal may act on: control characters (C0 but the newline, DEL, C1), format
# characters (bidi overrides, zero-width), surrogates, line and paragraph separators
UNSAFE = re.compile(r"[^\S\s]|[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e"
                    r"\u2060-\u2069\ufeff\ud800-\udfff]")  # fmt: skip
SMALL = {"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4,
         "num_hidden_layers": 2, "max_position_embeddings": 4096}  # fmt: skip


def _zh(argv: tuple[str, ...], lang: str) -> tuple[str, ...]:
    return (*argv, "--lang", "zh") if lang == "zh" else argv


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_huge_config_json_is_refused_before_it_is_read(tmp_path, capsys, monkeypatch, lang):
    """A 6 GiB config.json was read whole (and then reported as not JSON). A sparse file: its
    size is refused, naming the file and the size, and it is never opened."""
    path = tmp_path / "config.json"
    with path.open("wb") as f:
        f.truncate(6 * 2**30)  # sparse: nothing is written
    opened = []
    monkeypatch.setattr(Path, "read_bytes", lambda self: opened.append(self) or b"")
    monkeypatch.setattr(Path, "open", lambda self, *a, **k: opened.append(self) or 1 / 0)
    status, out, err = _run(capsys, *_zh((str(tmp_path),), lang))
    line = _one_error_line(err)
    assert (status, out, opened) == (2, "", [])
    assert str(path) in line and "6442450944" in line and "6.0 GiB" in line, line
    assert "MiB" in line  # the limit
    assert bool(HAN.search(line)) == (lang == "zh"), line


def test_a_stream_is_read_no_further_than_the_limit(capsys):
    """A file whose size says nothing (a device, a pipe) is read up to the limit, then refused."""
    if not Path("/dev/zero").exists():
        pytest.skip("no /dev/zero on this platform")
    status, out, err = _run(capsys, "/dev/zero")
    line = _one_error_line(err)
    assert (status, out) == (2, "") and "/dev/zero" in line and "MiB" in line, line


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("kind", ["linear", "dynamic"])
def test_a_factor_that_overflows_is_refused_by_its_key(tmp_path, capsys, kind, lang):
    """A linear factor of 1e308 ended in an OverflowError traceback (vLLM's max_model_len)."""
    cfg = {**SMALL, "rope_scaling": {"rope_type": kind, "factor": 1e308}}
    status, out, err = _run(capsys, *_zh((_write(tmp_path, cfg),), lang))
    line = _one_error_line(err)
    assert (status, out) == (2, "")
    assert "config['rope_scaling']['factor']" in line and "1e+308" in line, line
    assert bool(HAN.search(line)) == (lang == "zh"), line


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize(
    "text,where",
    [
        ('{"model_type": "llama", "\\ud800x": 1}', r"config['\ud800x']"),
        ('{"model_type": "llama", "rope_scaling": {"rope_type": "linear", "factor": 2.0, '
         '"\\udc00": 3}}', r"config['rope_scaling']['\udc00']"),
        ('{"model_type": "llama", "architectures": ["Llama\\udfff"]}',
         r"config['architectures'][0]"),
        ('{"model_type": "llama\\ud800"}', r"config['model_type']"),
    ],
    ids=["top-key", "nested-key", "value-in-list", "model_type"],
)  # fmt: skip
def test_a_lone_surrogate_is_refused_by_its_key(tmp_path, capsys, text, where, lang):
    """A lone surrogate (JSON's "\\ud800" alone) is no Unicode text: printing it ended in a
    UnicodeEncodeError traceback. Refused naming where it is, the surrogate escaped."""
    status, out, err = _run(capsys, *_zh((_write(tmp_path, text),), lang))
    line = _one_error_line(err)
    assert (status, out) == (2, "")
    assert where in line and ("surrogate" in line or "代理" in line), line
    assert not UNSAFE.search(line), line
    assert bool(HAN.search(line)) == (lang == "zh"), line


ESCAPES = ["\x1b[31mred", "\x9b2J", "del\x7f", "bidi\u202eevil", "nl\nVerified against", "\ud800"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_control_characters_from_the_file_are_escaped(tmp_path, capsys, lang):
    """A config key holding a terminal escape (ESC, CSI, DEL, a bidi override, a newline) was
    printed raw by explain, in en and zh: they are printed escaped, as Python writes them."""
    keys = [k for k in ESCAPES if k != "\ud800"]
    cfg = {
        **SMALL,
        "rope_scaling": {"rope_type": "linear", "factor": 2.0, **dict.fromkeys(keys, 1)},
    }
    status, out, err = _run(capsys, *_zh((_write(tmp_path, cfg),), lang))
    assert (status, err) == (0, "")
    assert not UNSAFE.search(out), [m.group(0) for m in UNSAFE.finditer(out)]
    for shown in (r"\x1b[31mred", r"\x9b2J", r"del\x7f", r"bidi\u202eevil", r"nl\nVerified"):
        assert shown in out, shown
    assert not any(x.startswith("Verified against") for x in out.splitlines())
    # --json: escaped the JSON way, and read back as the keys of the file
    status, out, err = _run(capsys, *_zh((_write(tmp_path, cfg), "--json"), lang))
    assert (status, err) == (0, "") and not UNSAFE.search(out)
    assert sorted(json.loads(out)["ignored_keys"]) == sorted(keys)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_refusals_echo_no_control_characters(tmp_path, capsys, lang):
    cfg = {**SMALL, "rope_scaling": {"rope_type": "\x1b[2J\u202e", "factor": 2.0}}
    status, out, err = _run(capsys, *_zh((_write(tmp_path, cfg),), lang))
    line = _one_error_line(err)
    assert (status, out) == (2, "") and not UNSAFE.search(line), line
    assert r"\x1b[2J" in line, line


def test_explain_engine_section_is_vllm_rope(tmp_path, capsys):
    """issue 40, item 7: explain said max_model_len = 4096 where vllm_rope says 2048 (vLLM
    takes the smallest length key): the section is explain_engines of the config."""
    cfg = {**SMALL, "seq_length": 2048}
    assert posenc.vllm_rope(cfg)["max_model_len"] == 2048
    for lang in ("en", "zh"):
        status, out, _ = _run(capsys, *_zh((_write(tmp_path, cfg),), lang))
        assert status == 0 and out.endswith("\n" + posenc.explain_engines(cfg, lang) + "\n")
        assert "max_model_len = 2048" in out and "max_model_len = 4096" not in out


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_bad_length_key_is_refused_by_name(tmp_path, capsys, lang):
    status, out, err = _run(capsys, *_zh((_write(tmp_path, {**SMALL, "seq_length": "4k"}),), lang))
    line = _one_error_line(err)
    assert (status, out) == (2, "") and "config['seq_length']" in line, line
    assert bool(HAN.search(line)) == (lang == "zh"), line


FUZZ_FILES = [
    "llama/meta-llama--Llama-3.1-8B",
    "phi/microsoft--Phi-3.5-mini-instruct",
    "llama4/meta-llama--Llama-4-Scout-17B-16E-Instruct",
    "deepseek/deepseek-ai--DeepSeek-V3",
]
FUZZ_VALUES = [10**400, 1e308, -1, 2**53 + 2, math.nan, "4k", "\ud800", "\x1b[2J", [1e308]]


def _paths(cfg: dict, prefix: tuple = ()):
    """The keys of ``cfg``, nested ones included (a vision tower's keys aside: posenc reads
    the text model's)."""
    for key, value in cfg.items():
        if key in ("model_type", "vision_config"):
            continue
        yield (*prefix, key)
        if isinstance(value, dict):
            yield from _paths(value, (*prefix, key))


@pytest.mark.slow
@pytest.mark.parametrize("name", FUZZ_FILES)
def test_no_key_of_a_real_config_gets_a_traceback(tmp_path, capsys, name):
    """issue 40, item 2: every key of a real config.json (nested ones included) set to each of
    a few hostile values: explain prints its text (status 0) or one line (status 2), never a
    traceback (1e308, 10**400, a head of 2**53 and a lone surrogate each ended in one)."""
    base = json.loads((CORPUS / f"{name}.json").read_text(encoding="utf-8"))
    for cfg in (base, base.get("text_config") or {}):  # 4 layers: the same keys, 10x faster
        if "num_hidden_layers" in cfg and "layer_types" not in cfg:
            cfg["num_hidden_layers"] = 4
    posenc.hf.describe(base)  # the shortened file is a config posenc.hf describes
    problems = []
    for path in _paths(base):
        for i, value in enumerate(FUZZ_VALUES):
            cfg = json.loads(json.dumps(base))
            node = cfg
            for key in path[:-1]:
                node = node[key]
            node[path[-1]] = value
            lang = ("en", "zh")[i % 2]
            try:
                status, out, err = _run(capsys, _write(tmp_path, cfg), "--lang", lang)
            except Exception as exc:  # what the test looks for: a traceback
                problems.append((path, value, f"{type(exc).__name__}: {exc}"[:200]))
                continue
            ok = (status == 0 and err == "") or (
                status == 2 and out == "" and len(err.strip().splitlines()) == 1
            )
            if not ok or UNSAFE.search(out + err):
                problems.append((path, value, status, err[:200]))
    assert not problems, problems

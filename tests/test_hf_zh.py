"""``explain --lang zh`` in Chinese throughout (issue 20, goal 6): for every corpus file
(tests/hf_corpus) that posenc.hf describes or calls unknown, the text, the ``--json`` strings and
the unknown-type message hold no run of English words outside code, keys and identifiers (the
source annotations, the registry's notes, the layer labels and the calls' comments included).
Configs that describe refuses (a ValueError or TypeError) are not covered: their messages are
English."""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import pytest

import posenc.hf as hf
from posenc.__main__ import main
from posenc.hf.explain import _explain_dict

CORPUS = Path(__file__).parent / "hf_corpus"
HAN = re.compile(r"[\u4e00-\u9fff]")
# two or more English words in a row (lower case, two letters or more): a phrase nobody
# translated; single words inside Chinese are code (position * inv_freq)
RUN = re.compile(r"\b[a-z]{2,}\b(?:[ ,;:]+\b[a-z]{2,}\b)+")


def _prose(text: str) -> str:
    """``text`` without what is code: calls, keys, quoted values, identifiers, and parentheses
    holding code (no Chinese, and an operator or comma: shapes, formulas, constructors)."""
    out = []
    for line in text.splitlines():
        if line.strip().startswith(("posenc.", "q, k")):
            line = line.split("  # ", 1)[1] if "  # " in line else ""
        line = re.sub(r"config(\[[^\]]*\])+", " ", line)
        line = re.sub(r"`[^`]*`|'[^']*'|\[[^\]]*\]|\{[^}]*\}", " ", line)
        while True:
            stripped = re.sub(r"\((?=[^()\u4e00-\u9fff]*[=,*/+])[^()\u4e00-\u9fff]*\)", " ", line)
            if stripped == line:
                break
            line = stripped
        line = re.sub(r"[\w.-]*[_.\d/][\w.-]*", " ", line)
        out.append(line)
    return "\n".join(out)


def _english(text: str) -> list[str]:
    return [m.group(0) for m in RUN.finditer(_prose(text))]


def test_the_check_catches_english_and_spares_code():
    assert _english("  layers <- config['n_layer'] (model code's default 4)") == ["model code"]
    assert _english("  NoPE layers <- every layer") == ["every layer"]
    assert not _english("    posenc.apply_rope(q, position_ids, base=10000, pairing='half')")
    assert not _english("  - transformers 以 float32 计算角度（inv_freq 与 position * inv_freq）")
    # the English text of a corpus file is caught at each kind of line the Chinese one translates
    llama4 = CORPUS / "llama4" / "meta-llama--Llama-4-Scout-17B-16E-Instruct.json"
    found = _english(hf.describe(json.loads(llama4.read_text(encoding="utf-8"))).explain("en"))
    for phrase in (
        "model code",
        "chunked layers",
        "the layers that rotate",
        "attention temperature",
    ):
        assert any(phrase in f for f in found), phrase
    assert _english("    posenc.apply_rope(x, ids)  # x = the indexer's q or k heads")


RECORD = json.loads((CORPUS / "verdicts.json").read_text(encoding="utf-8"))


def _files():
    return sorted(CORPUS.glob("*/*.json"))


@pytest.mark.parametrize("path", _files(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_zh_explain_has_no_english_phrase(path):
    config = json.loads(path.read_text(encoding="utf-8"))
    key = f"{path.parent.name}/{path.stem}"
    if RECORD["files"][key].get("why") in ("TypeError", "ValueError"):
        # refused with an error (a string boolean, a spelling transformers refuses too): the
        # error messages are English in every language; the refusal itself is what is held
        with pytest.raises((TypeError, ValueError)):
            hf.describe(config)
        return
    scheme = hf.describe(config)
    if scheme.kind == "unknown":
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            assert main(["explain", "--lang", "zh", str(path)]) == 2
        assert HAN.search(err.getvalue())
        assert not _english(err.getvalue().split("：", 1)[1]), err.getvalue()
        return
    text = scheme.explain("zh")
    assert HAN.search(text)
    assert not _english(text), "\n".join(_english(text))
    data = _explain_dict(scheme, "zh")
    strings = [data["title"], *data["pitfalls"], *data["notes"], *data["sources"].values()]
    for group in data["layer_groups"]:
        strings += [*group["sources"].values(), group["call"] or ""]
    if data["indexer"]:
        strings += [*data["indexer"]["sources"].values(), data["indexer"]["call"]]
    found = [e for s in strings for e in _english(s)]
    assert not found, found


@pytest.mark.parametrize(
    "content",
    [
        '{"model_type": "llama",\n  "rope_theta": }', '{"a" 1}', '{"a": 1 "b": 2}', "{a: 1}",
        '{"a": 1} x', '{"a": "x', '{"a": "\\q"}', '{"a": "\\u12"}', "", b"\xff\xfe\x00{",
        "[1, 2]", '"llama"', "null", '{"hidden_size": 64}', '{"model_type": 3}',
        '{"model_type": "llama", "\\ud800x": 1}', '{"a": ' + "1" * 5000 + "}",
        '{"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4, '
        '"num_hidden_layers": 2, "seq_length": "4k"}',
    ],
    ids=["no-value", "no-colon", "no-comma", "bare-key", "extra", "unterminated", "escape",
         "u-escape", "empty", "binary", "array", "string", "null", "no-model-type", "int-type",
         "surrogate", "5000-digits", "seq_length-str"],
)  # fmt: skip
def test_zh_refusals_of_a_file_are_chinese(tmp_path, content):
    """issue 40: a refusal under --lang zh is Chinese (the key names, values and describe's
    own message aside, which stay as the file and the code spell them)."""
    path = tmp_path / "config.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8", errors="surrogatepass")
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        assert main(["explain", "--lang", "zh", str(path)]) == 2
    line = err.getvalue().strip()
    assert "\n" not in line and HAN.search(line), line
    message = line.split(str(path), 1)[1]
    english = _english(message.split("配置有误：")[0])
    assert not english, (english, line)


def test_zh_refusals_of_a_missing_file_and_an_empty_folder_are_chinese(tmp_path):
    for name in (str(tmp_path / "missing.json"), str(tmp_path)):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            assert main(["explain", "--lang", "zh", name]) == 2
        line = err.getvalue().strip()
        assert HAN.search(line) and not _english(line.split(name, 1)[1]), line

"""posenc.hf on config.json files as the Hub ships them (issue 20, goal 2), against transformers.

The corpus (tests/hf_corpus/, its README says how each file was made) holds popular checkpoints
of every family the atlas page shows, in the shapes they ship: sparse (only the keys the file
has), legacy (4.x ``rope_scaling``, ``type`` for ``rope_type``, Phi-3's ``su``), aliased
(GPT-J's ``n_layer``, Moonshine's ``decoder_num_*``) and nested (LLaVA's, PaliGemma's and
Gemma 3's sparse ``text_config``). tests/hf_corpus.py holds each file's description to what
transformers' own config class and modeling code make of the same file; this test runs it once
and holds every file to its outcome.
"""

from __future__ import annotations

import json

import pytest

from ci_rule import require

pytestmark = pytest.mark.values

# files posenc.hf is known to describe wrongly, with why (none: Falcon's bfloat16 ALiBi, the
# last one, is alibi_bias(rounding="bfloat16"))
KNOWN_WRONG: dict[str, str] = {}


@pytest.fixture(scope="module")
def results():
    require("transformers")
    require("torch")
    import hf_corpus

    return {r.name: r for r in hf_corpus.check_all()}


def test_the_corpus_is_large_and_covers_the_families():
    import hf_corpus

    paths = hf_corpus.files()
    assert len(paths) >= 120, len(paths)
    families = {p.parent.name for p in paths}
    for family in ("llama", "mistral", "qwen", "gemma", "phi", "gpt_neox", "gptj", "deepseek",
                   "llama4", "cohere", "falcon", "bloom", "mpt", "t5", "sinusoidal", "llava",
                   "modernbert", "smollm3", "mllama", "unknown", "hubcode"):  # fmt: skip
        assert family in families, family


def test_the_outcomes_are_the_recorded_ones(results):
    # tests/hf_corpus/verdicts.json (python tests/hf_corpus.py --record): per file, its
    # outcome and the layer kinds compared, made with the pinned transformers
    import transformers

    import hf_corpus

    record = json.loads(hf_corpus.RECORD.read_text(encoding="utf-8"))
    assert record["transformers"] == transformers.__version__
    got = hf_corpus.verdicts(list(results.values()))
    assert set(got["files"]) == set(record["files"]), set(got["files"]) ^ set(record["files"])
    changed = {
        n: (record["files"][n], r) for n, r in got["files"].items() if r != record["files"][n]
    }
    assert not changed, changed
    assert got["counts"] == record["counts"]
    assert sum(record["counts"].values()) == len(record["files"]) >= 120


def test_every_file_matches_transformers_or_is_refused(results):
    wrong = {
        n: r.detail for n, r in results.items() if r.status == "wrong" and n not in KNOWN_WRONG
    }
    assert not wrong, wrong
    # the known wrong ones are still wrong (else the list above is stale)
    for name, why in KNOWN_WRONG.items():
        assert results[name].status == "wrong", (name, why)


def test_rotary_files_were_compared_in_float64_and_float32(results):
    rotary = [
        r for r in results.values() if r.status == "matched" and ":rope:" in ",".join(r.kinds)
    ]
    assert len(rotary) >= 90, len(rotary)
    for r in rotary:
        assert 0 < r.err32 and r.err64 <= 1e-10 + 2.0**-50 * 2**24, (r.name, r.err64)


@pytest.mark.parametrize(
    "name,words",
    [
        ("unknown/google-bert--bert-base-uncased", ["BertConfig", "posenc.hf.MODELS"]),
        ("unknown/google--vit-base-patch16-224", ["ViTConfig"]),
        ("unknown/openai--clip-vit-base-patch32", ["CLIPConfig"]),
        ("unknown/ai21labs--Jamba-v0.1", ["JambaConfig"]),
        ("hubcode/moonshotai--Kimi-K2-Instruct", ["kimi_k2", "trust_remote_code"]),
        ("hubcode/THUDM--chatglm3-6b", ["chatglm", "trust_remote_code"]),
        (
            "phi/microsoft--Phi-3-mini-128k-instruct-su",
            ["'su'", "original_max_position_embeddings"],
        ),
        ("falcon/string-bool--falcon-rw-1b-alibi-false-string", ["alibi", "JSON boolean"]),
    ],
)
def test_refusals_say_why(results, name, words):
    r = results[name]
    assert r.status == "refused", (r.status, r.detail)
    for word in words:
        assert word in r.detail, (word, r.detail)


@pytest.mark.parametrize(
    "name,kinds",
    [
        # a sparse text_config on LlamaConfig's / Gemma2Config's defaults (issue 20)
        ("llava/llava-hf--llava-1.5-7b-hf", ["full_attention:rope:128"]),
        ("gemma/google--paligemma2-3b-pt-224", ["sliding_attention:rope:256", "full_attention:rope:256"]),
        # attribute_map names (issue 20)
        ("gptj/EleutherAI--gpt-j-6b", ["full_attention:rope:256"]),
        ("moonshine/UsefulSensors--moonshine-tiny", ["full_attention:rope:36"]),
        # rope_interleave left out: DeepseekV3Config defaults it to True (issue 20)
        ("deepseek/deepseek-ai--DeepSeek-V3", ["full_attention:rope:192"]),
        # low_freq_factor == high_freq_factor; NoPE layers checked against the model's attention
        ("llama4/meta-llama--Llama-4-Scout-17B-16E-Instruct",
         ["chunked_attention:rope:128", "full_attention:nope"]),
        ("smollm3/HuggingFaceTB--SmolLM3-3B", ["full_attention:rope:128", "full_attention:nope"]),
        ("cohere/CohereForAI--c4ai-command-r7b-12-2024",
         ["sliding_attention:rope:128", "full_attention:nope"]),
        # transformers' Falcon rounds its ALiBi to bfloat16 (32 heads: slopes not powers of 2)
        ("falcon/tiiuae--falcon-rw-1b", ["alibi:32 heads"]),
        # GPT-NeoX reads rotary_pct (default 0.25), not partial_rotary_factor (issue 20)
        ("gpt_neox/partial-key--pythia-160m-partial_rotary_factor", ["full_attention:rope:64"]),
    ],
)  # fmt: skip
def test_the_files_of_the_issue_match_layer_kind_by_layer_kind(results, name, kinds):
    r = results[name]
    assert r.status == "matched", (r.status, r.detail)
    assert r.kinds == kinds, r.kinds


def test_the_readme_lists_every_file():
    import hf_corpus

    readme = (hf_corpus.CORPUS / "README.md").read_text(encoding="utf-8")
    for path in hf_corpus.files():
        assert f"{path.parent.name}/{path.stem}" in readme, path
        json.loads(path.read_text(encoding="utf-8"))  # and each is JSON


def test_every_key_posenc_reads_has_its_class_default_recorded(monkeypatch):
    # a key read without being in READ_KEYS would never take its class's default (silently)
    import hf_corpus
    import posenc.hf
    from posenc.hf.classes import READ_KEYS
    from posenc.hf.keys import Config

    seen: set[str] = set()
    original = Config.get

    def spy(self, key, default=None):
        seen.add(key)
        return original(self, key, default)

    monkeypatch.setattr(Config, "get", spy)
    for path in hf_corpus.files():
        try:
            posenc.hf.describe(json.loads(path.read_text(encoding="utf-8")))
        except (TypeError, ValueError):
            pass
    not_fields = {"model_type", "rope_scaling"}  # not fields of any config class
    assert seen - set(READ_KEYS) - not_fields == set(), sorted(seen - set(READ_KEYS))
    assert len(seen) > 20

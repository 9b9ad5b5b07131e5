"""Where each value of ``explain`` came from (issue 20, goal 6): every value with the key it came
from, or "model code", or "class default", held on the corpus files (tests/hf_corpus) that
showed each wrong or missing source."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import posenc.hf as hf

CORPUS = Path(__file__).parent / "hf_corpus"


def _load(name: str) -> dict:
    return json.loads((CORPUS / f"{name}.json").read_text(encoding="utf-8"))


def _explain(name: str, lang: str = "en") -> str:
    return hf.describe(_load(name)).explain(lang)


def test_phi3_factor_and_original_length_name_their_keys():
    name = "phi/microsoft--Phi-3.5-mini-instruct"
    cfg = _load(name)
    assert "factor" not in cfg["rope_scaling"]
    assert "original_max_position_embeddings" not in cfg["rope_scaling"]
    text = _explain(name)
    want = (
        "    scaling['factor'] = 32.0  <- config['max_position_embeddings'] / "
        "config['original_max_position_embeddings'] (model code)"
    )
    assert want in text.splitlines()
    assert cfg["max_position_embeddings"] / cfg["original_max_position_embeddings"] == 32.0
    assert (
        "    scaling['original_max_position_embeddings'] = 4096  <- "
        "config['original_max_position_embeddings']"
    ) in text.splitlines()
    data = hf.describe(cfg)
    from posenc.hf.explain import _explain_dict

    sources = _explain_dict(data)["layer_groups"][0]["sources"]
    assert sources["scaling['original_max_position_embeddings']"] == (
        "config['original_max_position_embeddings']"
    )
    # a factor the file's own rope_scaling holds gets no line of its own
    llama = _explain("llama/dynamic-ntk--Llama-2-7b-hf-dynamic-x2")
    assert "scaling['factor']" not in llama


def test_gpt_neox_base_is_its_rotary_emb_base():
    name = "gpt_neox/EleutherAI--pythia-160m"
    assert "rotary_emb_base" in _load(name)
    assert "  base = 10000.0  <- config['rotary_emb_base']" in _explain(name).splitlines()


def test_t5_max_distance_is_the_class_default_of_an_absent_key():
    name = "t5/google-t5--t5-small"
    assert "relative_attention_max_distance" not in _load(name)
    line = next(x for x in _explain(name).splitlines() if x.startswith("  max_distance"))
    assert line == (
        "  max_distance = 128  <- config['relative_attention_max_distance'] "
        "(absent: T5Config's default)"
    )


def test_a_type_spelling_is_reported_as_type():
    name = "llama/lmsys--longchat-7b-v1.5-32k"
    assert "type" in _load(name)["rope_scaling"]
    assert "rope_type" not in _load(name)["rope_scaling"]
    lines = _explain(name).splitlines()
    assert "  rope_type = 'linear'  <- config['rope_scaling']['type']" in lines


def test_qwen2_vl_mrope_spelling_and_what_a_port_needs():
    name = "qwen/Qwen--Qwen2-VL-7B-Instruct"
    assert _load(name)["rope_scaling"]["type"] == "mrope"
    text = _explain(name)
    assert (
        "  rope_type = 'default'  <- config['rope_scaling']['type'], 'mrope' read as 'default' "
        "(config class)"
    ) in text.splitlines()
    for needed in ("get_rope_index", "spatial_merge_size", "vision_config", "mrope_section"):
        assert needed in text
    assert "spatial_merge_size" in _explain(name, "zh")


def test_qwen2_vl_note_is_what_get_rope_index_does():
    """The note's claims, run: text 0, 1, 2; a 1 x 4 x 4 image merged by 2 takes 4 tokens with
    height and width ids from 3; the text after it resumes at 3 + max(4, 4) / 2 = 5; the delta is
    the largest id + 1 - length."""
    from types import SimpleNamespace

    from ci_rule import require

    torch = require("torch")
    require("transformers")
    from transformers.models.qwen2_vl.modeling_qwen2_vl import Qwen2VLModel

    fake = SimpleNamespace(
        config=SimpleNamespace(vision_config=SimpleNamespace(spatial_merge_size=2))
    )
    fake.get_vision_position_ids = lambda *a, **k: Qwen2VLModel.get_vision_position_ids(
        fake, *a, **k
    )
    kinds = torch.tensor([[0, 0, 0, 1, 1, 1, 1, 0, 0]])
    ids, delta = Qwen2VLModel.get_rope_index(
        fake,
        torch.zeros(1, 9, dtype=torch.long),
        mm_token_type_ids=kinds,
        image_grid_thw=torch.tensor([[1, 4, 4]]),
    )
    t, h, w = ids[:, 0].tolist()
    assert [h[:3], w[:3], t[:3]] == [[0, 1, 2]] * 3
    assert h[3:7] == [3, 3, 4, 4] and w[3:7] == [3, 4, 3, 4]
    assert [t[7:], h[7:], w[7:]] == [[5, 6]] * 3
    assert delta.item() == 6 + 1 - 9


def test_every_value_of_every_corpus_file_has_a_source():
    """window and attention_factor included: in every rotary group, each printed value but the
    convention's own (pairing, slot) and the widths the convention computes names its source."""
    bare = []
    for path in sorted(CORPUS.glob("*/*.json")):
        try:
            scheme = hf.describe(json.loads(path.read_text(encoding="utf-8")))
        except (TypeError, ValueError):
            continue  # refused (the corpus's verdicts hold which)
        for line in scheme.explain().splitlines():
            m = re.match(r"  (window|attention_factor|base|rope_type|scaling|head_dim) = ", line)
            if m and "  <- " not in line:
                bare.append(f"{path.name}: {line[:80]}")
    assert not bare, "\n".join(bare)


@pytest.mark.parametrize(
    ("name", "line"),
    [
        ("gemma/google--gemma-2-9b", "  window = 4096  <- config['sliding_window']"),
        (
            "llama4/meta-llama--Llama-4-Scout-17B-16E-Instruct",
            "  window = 8192  <- config['text_config']['attention_chunk_size']",
        ),
    ],
)
def test_window_names_its_key(name, line):
    assert line in _explain(name).splitlines()

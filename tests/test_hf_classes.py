"""classes.json and verified.json: what posenc.hf knows of transformers, and on which version.

- The data is what tools/hf_classes.py generates from the installed transformers (a sample of
  classes regenerated here, all of them by ``tools/hf_classes.py --check``), for the version
  requirements/constraints.txt pins, which is the version installed.
- ``explain --list``, ``posenc.hf.MODELS`` and the atlas record list the same verified types,
  each with the version it was verified on.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import posenc.hf
from ci_rule import require
from posenc.hf.classes import READ_KEYS, class_facts, classes_version

ROOT = Path(__file__).resolve().parents[1]
RECORD = ROOT / "docs" / "assets" / "atlas.json"


def _pin() -> str:
    text = (ROOT / "requirements" / "constraints.txt").read_text(encoding="utf-8")
    found = re.search(r"^transformers==(\S+)$", text, re.M)
    assert found, "requirements/constraints.txt pins no transformers"
    return found.group(1)


def test_the_pin_the_installed_transformers_and_the_data_agree():
    transformers = require("transformers")
    assert _pin() == transformers.__version__, "make setup installs the pinned transformers"
    record = json.loads(RECORD.read_text(encoding="utf-8"))
    assert classes_version() == posenc.hf.TRANSFORMERS_VERSION == record["transformers"] == _pin()


@pytest.mark.parametrize(
    "model_type",
    ["llama", "gpt_neox", "phi3", "gemma3_text", "deepseek_v3", "llava", "gptj"],
)  # fmt: skip
def test_a_sample_of_classes_is_what_the_generator_gives(model_type):
    require("transformers")
    from transformers import CONFIG_MAPPING

    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import hf_classes
    finally:
        sys.path.remove(str(ROOT / "tools"))
    fresh = hf_classes.describe_class(CONFIG_MAPPING[model_type], READ_KEYS)
    assert json.loads(json.dumps(fresh)) == class_facts(model_type)


def test_the_facts_the_issue_names():
    # class defaults a sparse file relies on, aliases, sub-configs, RoPE spellings
    assert class_facts("deepseek_v3")["defaults"]["rope_interleave"] is True
    assert class_facts("gptj")["aliases"]["num_hidden_layers"] == "n_layer"
    assert class_facts("llava")["subs"]["text_config"] == {
        "auto": True, "init": {}, "model_type": "llama", "optional": False}  # fmt: skip
    assert class_facts("phi3")["rope"]["type_aliases"] == {"su": "longrope", "yarn": "longrope"}
    neox = class_facts("gpt_neox")["rope"]
    assert neox["theta_keys"] == {"": ["rotary_emb_base"]} and neox["partial_default"] == {"": 0.25}
    assert class_facts("falcon")["bools"] == ["alibi"]


def test_explain_list_the_registry_and_the_record_list_the_same_verified_types():
    record = json.loads(RECORD.read_text(encoding="utf-8"))
    verified = {mt for mt, t in record["types"].items() if t["status"] == "verified"}
    assert set(posenc.hf.MODELS) == verified
    out = subprocess.run(
        [sys.executable, "-m", "posenc", "explain", "--list", "--json"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    listed = {mt for types in json.loads(out.stdout)["conventions"].values() for mt in types}
    assert listed == verified
    for mt in verified:
        assert posenc.hf.registry.verified_on(mt) == record["types"][mt]["verified_on"]

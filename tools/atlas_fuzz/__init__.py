"""The atlas's differential fuzzer (issue 38, item 1).

For every model type of the locked transformers whose code has a position mechanism, generate
config dicts that vary the keys its config class declares and its modeling code reads, and hold
three readings of each to one another: ``posenc.hf.describe(dict)``, ``describe(config object)``
and what the model's own rotary module and attention do (tests/hf_corpus.py's ``check``: q and k
rotated at small and large positions in float64 and float32, NoPE layers run on the meta
device). A config transformers refuses must be refused by posenc too.

    .venv/bin/python -m tools.atlas_fuzz [--types T ...] [--per-type N] [--seed S] [--out F]

Modules: :mod:`.bases` (one small config per type, captured from the suite's walks),
:mod:`.generate` (mutations derived from the config class and the modeling source),
:mod:`.compare` (the verdict of one dict, and shrinking), :mod:`.run` (the loop and report).
"""

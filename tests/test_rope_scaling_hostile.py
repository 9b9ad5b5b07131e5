"""rope_frequencies' scalings against hostile input: where the function lives, YaRN's
derived attention factors, and every bad scaling key or value refused by its key."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import posenc
import posenc.rope
import posenc.rope_scaling

YARN = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64}


# --- the split: rope_frequencies lives in rope_scaling, importable from every old path ------


def test_rope_frequencies_is_one_function_under_every_path():
    from posenc.rope import rope_frequencies as from_rope

    assert posenc.rope_frequencies is posenc.rope_scaling.rope_frequencies is from_rope
    assert posenc.__all__.count("rope_frequencies") == 1
    assert {"rope_frequencies", "apply_rope", "rope_permutation"} <= set(posenc.__all__)
    # the rotation still reads the frequencies of the scaling it is given
    x = np.random.default_rng(0).normal(size=(5, 8))
    inv, f = posenc.rope_frequencies(8, scaling=YARN)
    angle = np.arange(5)[:, None] * inv
    want = np.empty_like(x)
    want[:, 0::2] = f * (x[:, 0::2] * np.cos(angle) - x[:, 1::2] * np.sin(angle))
    want[:, 1::2] = f * (x[:, 0::2] * np.sin(angle) + x[:, 1::2] * np.cos(angle))
    np.testing.assert_allclose(posenc.apply_rope(x, 5, scaling=YARN), want, rtol=0, atol=1e-14)


# --- YaRN: a derived attention factor <= 0 (or a division by zero) is refused by key -------


def _g(factor, m):  # HF's get_mscale
    return 0.1 * m * math.log(factor) + 1.0


@pytest.mark.parametrize(
    "extra,key",
    [
        ({"mscale": 1.0, "mscale_all_dim": -10.0}, "mscale_all_dim"),  # g = 0 exactly: 1 / 0
        ({"mscale": 1.0, "mscale_all_dim": -20.0}, "mscale_all_dim"),  # g < 0: sign flip
        ({"mscale": -20.0, "mscale_all_dim": 1.0}, "mscale"),
        ({"mscale": -20.0, "mscale_all_dim": -20.0}, "mscale"),  # ratio > 0, each term < 0
        ({"mscale": 1.7e308, "mscale_all_dim": 1.0, "factor": 1e6}, "mscale"),  # g = inf
    ],
)
def test_yarn_attention_factor_must_be_positive(extra, key):
    scaling = {**YARN, "factor": math.e, **extra}
    factor = "1e\\+06" if scaling["factor"] == 1e6 else "2\\.71828"
    with pytest.raises(
        ValueError, match=rf"scaling\['{key}'\] = .* scaling\['factor'\] = {factor}.*> 0"
    ):
        posenc.rope_frequencies(8, scaling=scaling)
    with pytest.raises(ValueError, match=rf"scaling\['{key}'\]"):
        posenc.apply_rope(torch.ones(3, 8), 3, scaling=scaling)


def test_yarn_mscale_ratio_that_overflows_is_refused():
    # g(mscale) ~ 1.4e306 over g(mscale_all_dim) ~ 1e-15: the ratio is inf
    tiny = -1 / (0.1 * math.log(4.0)) * (1 - 1e-15)
    scaling = {**YARN, "mscale": 1e307, "mscale_all_dim": tiny}
    with pytest.raises(
        ValueError, match=r"scaling\['mscale'\] .* scaling\['mscale_all_dim'\] .*overflows"
    ):
        posenc.rope_frequencies(8, scaling=scaling)


@pytest.mark.parametrize(
    "mscale,mscale_all", [(1.0, -1.0), (0.707, 0.707), (2.0, 1.0), (1.0, -7.0)]
)
def test_yarn_positive_mscale_combinations_keep_hf_value(mscale, mscale_all):
    _, f = posenc.rope_frequencies(
        8, scaling={**YARN, "mscale": mscale, "mscale_all_dim": mscale_all}
    )
    assert f == pytest.approx(_g(4.0, mscale) / _g(4.0, mscale_all), rel=1e-15)
    assert f > 0


@pytest.mark.parametrize(
    "betas", [{"beta_fast": 1e308}, {"beta_slow": 1e-300}, {"beta_fast": 1e308, "truncate": False}]
)
def test_yarn_extreme_betas_give_finite_frequencies(betas):
    plain, _ = posenc.rope_frequencies(16)
    inv, f = posenc.rope_frequencies(16, scaling={**YARN, **betas})
    assert np.isfinite(inv).all() and f > 0
    # every pair lies between interpolation (w / factor) and extrapolation (w)
    assert np.all(inv <= plain * (1 + 1e-15)) and np.all(inv >= plain / 4.0 * (1 - 1e-15))


# --- scaling keys: strings only, every bad value named by its key ---------------------------


@pytest.mark.parametrize(
    "scaling", [{"rope_type": "linear", "factor": 2.0, 1: 3}, {("a",): 1}, {None: 2.0}]
)
def test_scaling_with_non_string_keys_is_a_type_error_naming_scaling(scaling):
    with pytest.raises(TypeError, match=r"^scaling must have string keys .*got "):
        posenc.rope_frequencies(8, scaling=scaling)


@pytest.mark.parametrize("key", ["rope_type", "type"])
@pytest.mark.parametrize("value", [3, ["yarn"], np.array(["linear", "yarn"])])
def test_rope_type_that_is_not_a_string_is_named(key, value):
    with pytest.raises(TypeError, match=rf"^scaling\['{key}'\] must be a string"):
        posenc.rope_frequencies(8, scaling={key: value, "factor": 2.0})


_VALID = {
    "linear": {"factor": 2.0},
    "dynamic": {"factor": 2.0, "original_max_position_embeddings": 64},
    "yarn": {
        **YARN,
        "beta_fast": 32.0,
        "beta_slow": 1.0,
        "mscale": 1.0,
        "mscale_all_dim": 1.0,
        "truncate": True,
    },
    "llama3": {
        "factor": 8.0,
        "original_max_position_embeddings": 64,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
    },
    "longrope": {
        "short_factor": [1.0] * 4,
        "long_factor": [2.0] * 4,
        "original_max_position_embeddings": 64,
        "factor": 2.0,
        "attention_factor": 1.1,
    },
}
_KEY_CASES = [(t, k) for t, params in _VALID.items() for k in params if k != "rope_type"]


@pytest.mark.parametrize("rope_type,key", _KEY_CASES)
@pytest.mark.parametrize("bad", ["x", float("nan"), -1e400, 10**400, [1.0, 2.0]])
def test_every_bad_scaling_value_names_its_key(rope_type, key, bad):
    scaling = {**_VALID[rope_type], "rope_type": rope_type, key: bad}
    with pytest.raises((TypeError, ValueError), match=rf"scaling\['{key}'\]"):
        posenc.rope_frequencies(8, scaling=scaling, seq_len=100)


def test_the_valid_scalings_of_the_table_are_accepted():  # so the test above is not vacuous
    for rope_type, params in _VALID.items():
        inv, f = posenc.rope_frequencies(8, scaling={**params, "rope_type": rope_type}, seq_len=100)
        assert inv.shape == (4,) and np.isfinite(inv).all() and f > 0


def test_factor_list_error_says_what_came():
    bad = {**_VALID["longrope"], "rope_type": "longrope", "long_factor": [1.0, 2.0, -3.0, 1.0]}
    with pytest.raises(
        ValueError,
        match=r"scaling\['long_factor'\] must hold finite numbers > 0, got -3(\.0)? at index 2",
    ):
        posenc.rope_frequencies(8, scaling=bad, seq_len=100)

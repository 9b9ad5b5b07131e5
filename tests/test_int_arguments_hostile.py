"""Huge ints in any integer argument: a ValueError naming the argument, never a raw
OverflowError, and the largest allowed values still compute right."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import posenc
import posenc.rope
import posenc.rope_scaling
from posenc import compat

YARN = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64}


# --- huge ints: a ValueError naming the argument, never a raw OverflowError ------------------


@pytest.mark.parametrize(
    "call,match",
    [
        (
            lambda: posenc.alibi_bias(2, 2, 2, offset=10**30),
            r"^offset must keep the query positions",
        ),
        (
            lambda: posenc.alibi_bias(2, 2, 2, offset=-(10**30), like=torch.zeros(1)),
            r"^offset must keep",
        ),
        (lambda: posenc.alibi_bias(3, 2, 2, offset=2**53 - 1), r"^offset must keep .*q_len=3"),
        (
            lambda: posenc.alibi_bias(10**30, 2, 2),
            r"^q_len must be a non-negative integer <= 2\*\*53",
        ),
        (lambda: posenc.alibi_bias(2, 2**70, 2, like=torch.zeros(1)), r"^k_len must be"),
        (
            lambda: posenc.alibi_bias(2**40, 2**40, 2),
            r"^alibi_bias would have n_heads \* q_len \* k_len",
        ),
        (lambda: posenc.alibi_slopes(2**70), r"^n_heads must be a positive integer <= 2\*\*53"),
        (
            lambda: compat.fairseq_make_positions(np.ones((2, 3), np.int64), 2**70),
            r"^padding_idx must keep",
        ),
        (
            lambda: compat.fairseq_make_positions(torch.ones(2, 3, dtype=torch.long), 2**70),
            r"^padding_idx",
        ),
        (
            lambda: compat.fairseq_make_positions(torch.ones(2, 3, dtype=torch.long), 2**63 - 3),
            r"^padding_idx",
        ),
        (
            lambda: compat.fairseq_make_positions(np.ones((2, 3), np.int64), -(2**63) - 1),
            r"^padding_idx",
        ),
        (
            lambda: compat.tensor2tensor_timing_signal_1d(3, 4, start_index=10**400),
            r"^start_index must keep",
        ),
        (
            lambda: compat.tensor2tensor_timing_signal_1d(10**30, 4),
            r"^length must be at most 2\*\*53",
        ),
        (lambda: compat.tensor2tensor_timing_signal_1d(2**40, 2**40), r"^length \* channels = "),
        (
            lambda: compat.fairseq_sinusoidal_embedding(10**30, 4),
            r"^num_embeddings must be at most",
        ),
        (lambda: compat.fairseq_sinusoidal_embedding(4, 2**70), r"^embedding_dim must be at most"),
        (lambda: compat.marian_sinusoidal_weight(10**30, 4), r"^n_pos must be at most"),
        (lambda: compat.marian_sinusoidal_weight(2**31, 2**31), r"^n_pos \* dim = "),
        (lambda: compat.mae_2d_sincos_pos_embed(8, 10**30), r"^grid_size must be at most"),
        (lambda: compat.mae_2d_sincos_pos_embed(2**70, 2), r"^embed_dim must be at most"),
        (lambda: compat.mae_2d_sincos_pos_embed(8, 2**30), r"^grid_size \*\* 2 \* embed_dim = "),
        (
            lambda: posenc.rope_frequencies(2**70),
            r"^dim must be a positive even integer <= 2\*\*53",
        ),
        (
            lambda: posenc.rope_permutation(2**70),
            r"^dim must be a positive even integer <= 2\*\*53",
        ),
        (
            lambda: posenc.rope_frequencies(8, seq_len=10**400),
            r"^seq_len must be an integer <= 2\*\*53",
        ),
        (
            lambda: posenc.rope_frequencies(
                8, scaling={**YARN, "original_max_position_embeddings": 10**400}
            ),
            r"^scaling\['original_max_position_embeddings'\] must be an integer <= 2\*\*53",
        ),
        (
            lambda: posenc.rope_frequencies(8, scaling={"rope_type": "linear", "factor": 10**400}),
            r"^scaling\['factor'\] must be a finite real number",
        ),
        (
            lambda: posenc.rope_frequencies(
                4,
                scaling={
                    "rope_type": "dynamic",
                    "factor": 1e300,
                    "original_max_position_embeddings": 1,
                },
                seq_len=2**53,
            ),
            r"^seq_len = 9007199254740992 with scaling\['factor'\] = 1e\+300 .* overflow",
        ),
    ],
)
def test_huge_ints_are_a_value_error_naming_the_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_the_largest_allowed_values_still_compute_right():
    # ALiBi: the last allowed query position, exact in float64
    bias = posenc.alibi_bias(1, 2, 1, offset=2**53)
    np.testing.assert_array_equal(bias, -0.00390625 * np.array([[[2.0**53, 2.0**53 - 1]]]))
    np.testing.assert_array_equal(
        posenc.alibi_bias(1, 2, 1, offset=2**53, like=torch.zeros(1, dtype=torch.float64))
        .cpu()
        .numpy(),
        bias,
    )
    # fairseq: the last padding_idx whose positions fit in int64
    pad = 2**63 - 1 - 3
    tokens = np.array([[5, pad, 6], [7, 8, 9]])
    want = np.array([[pad + 1, pad, pad + 2], [pad + 1, pad + 2, pad + 3]])
    np.testing.assert_array_equal(compat.fairseq_make_positions(tokens, pad), want)
    np.testing.assert_array_equal(
        compat.fairseq_make_positions(torch.as_tensor(tokens), pad).cpu().numpy(), want
    )


@pytest.mark.parametrize("t_dtype", [torch.uint8, torch.int8, torch.int16, torch.uint16])
@pytest.mark.parametrize("pad", [-1, 255 + 256, -129, 1])
def test_fairseq_make_positions_pad_outside_the_dtype_matches_no_token(t_dtype, pad):
    # torch compares uint8 255 == -1 (it wraps the scalar); NumPy compares exact values
    tokens = np.array([[255, 127, 1, 0], [1, 1, 3, 255]])
    tokens = tokens.astype(np.int64) if t_dtype.is_signed else tokens
    np_dtype = {
        torch.uint8: np.uint8,
        torch.int8: np.int8,
        torch.int16: np.int16,
        torch.uint16: np.uint16,
    }[t_dtype]
    arr = tokens.astype(np_dtype)  # int8: 255 wraps to -1, the same values in both libraries
    want = compat.fairseq_make_positions(arr.astype(np.int64), pad)
    np.testing.assert_array_equal(compat.fairseq_make_positions(arr, pad), want)
    np.testing.assert_array_equal(
        compat.fairseq_make_positions(torch.as_tensor(arr), pad).cpu().numpy(), want
    )

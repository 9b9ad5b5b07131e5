"""Slow, obvious versions of the framework formulas, written loop by loop from their sources.

Each function restates one published recipe (paper, reference code or framework source, named
in its docstring) with Python floats and the math module, one entry at a time. The exception is
the T5 bucket, whose published recipe computes in float32: there each step is a NumPy float32
scalar, so the rounding is the recipe's.
"""

from __future__ import annotations

import math

import numpy as np

# --- ALiBi -------------------------------------------------------------------------------------


def alibi_slopes_press(n):
    """Press et al. (arXiv:2108.12409), reference code ``get_slopes``: a geometric sequence that
    starts at 2^(-8/n) with that same ratio; for n not a power of two, the closest power of two's
    slopes, then every other slope of twice that power's sequence."""

    def power_of_two(m):
        start = 2.0 ** (-(2.0 ** -(math.log2(m) - 3)))
        return [start * start**i for i in range(m)]

    if math.log2(n).is_integer():
        return power_of_two(n)
    closest = 2 ** math.floor(math.log2(n))
    return power_of_two(closest) + alibi_slopes_press(2 * closest)[0::2][: n - closest]


def alibi_slopes_mpt(n, alibi_bias_max=8.0):
    """MPT (``attention.py`` gen_slopes): slopes of the next power of two ``N`` up,
    1 / 2^(i * alibi_bias_max / N) for i = 1..N; for n < N, the even-indexed ones (i = 2, 4, ...)
    then the odd ones (i = 1, 3, ...), cut to n."""
    big = 2 ** math.ceil(math.log2(n))
    slopes = [1.0 / 2.0 ** (i * alibi_bias_max / big) for i in range(1, big + 1)]
    if big != n:
        slopes = (slopes[1::2] + slopes[0::2])[:n]
    return slopes


def alibi_bias(q_len, k_len, slopes, causal=True, offset=None):
    """bias[h][i][j] = -m_h (i' - j) with i' = offset + i; -inf for j > i' when causal;
    -m_h |i' - j| when not."""
    if offset is None:
        offset = k_len - q_len
    out = []
    for m in slopes:
        head = []
        for i in range(q_len):
            row = []
            for j in range(k_len):
                d = offset + i - j
                if causal:
                    row.append(-m * d if d >= 0 else -math.inf)
                else:
                    row.append(-m * abs(d))
            head.append(row)
        out.append(head)
    return out


# --- T5 ----------------------------------------------------------------------------------------


def t5_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    """Mesh TensorFlow ``_relative_position_bucket`` (transformer_layers.py), one position at a
    time; the logarithm in float32 as ``tf.to_float`` does there."""
    f32 = np.float32
    ret = 0
    n = -relative_position  # Mesh TF works with query - memory
    if bidirectional:
        num_buckets //= 2
        if n < 0:
            ret += num_buckets
        n = abs(n)
    else:
        n = max(n, 0)
    max_exact = num_buckets // 2
    if n < max_exact:
        return ret + n
    val = f32(np.log(f32(n) / f32(max_exact)))
    val = f32(val / f32(math.log(max_distance / max_exact)))
    val = f32(val * f32(num_buckets - max_exact))
    val_if_large = max_exact + int(val)
    return ret + min(val_if_large, num_buckets - 1)


def t5_bucket_float64(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    """The same formula in float64 (what one writes from the paper's description)."""
    ret = 0
    n = -relative_position
    if bidirectional:
        num_buckets //= 2
        if n < 0:
            ret += num_buckets
        n = abs(n)
    else:
        n = max(n, 0)
    max_exact = num_buckets // 2
    if n < max_exact:
        return ret + n
    val = math.log(n / max_exact) / math.log(max_distance / max_exact) * (num_buckets - max_exact)
    return ret + min(max_exact + math.floor(val), num_buckets - 1)


# --- 1-D sinusoidal tables of the frameworks -----------------------------------------------------


def tensor2tensor_timing_signal_1d(
    length, channels, min_timescale=1.0, max_timescale=1.0e4, start_index=0
):
    """tensor2tensor ``common_attention.get_timing_signal_1d``: channels // 2 timescales
    geometrically spaced from min to max (increment log(max/min) / max(n - 1, 1)), sines in the
    first half, cosines in the second, a zero channel when channels is odd; shape (1, L, C)."""
    n = channels // 2
    increment = math.log(float(max_timescale) / float(min_timescale)) / max(n - 1, 1)
    rows = []
    for t in range(length):
        p = t + start_index
        row = [0.0] * channels
        for k in range(n):
            inv = min_timescale * math.exp(-k * increment)
            row[k] = math.sin(p * inv)
            row[n + k] = math.cos(p * inv)
        rows.append(row)
    return [rows]


def fairseq_sinusoidal_embedding(num_embeddings, embedding_dim, padding_idx=None):
    """fairseq ``SinusoidalPositionalEmbedding.get_embedding``: w_k = exp(-k log(10000) /
    (half - 1)), [sin ... , cos ...], zero column for odd dim, zero row at padding_idx."""
    half = embedding_dim // 2
    step = math.log(10000) / (half - 1)
    rows = []
    for p in range(num_embeddings):
        row = [0.0] * embedding_dim
        for k in range(half):
            w = math.exp(-k * step)
            row[k] = math.sin(p * w)
            row[half + k] = math.cos(p * w)
        rows.append(row)
    if padding_idx is not None:
        rows[padding_idx] = [0.0] * embedding_dim
    return rows


def fairseq_make_positions(tokens, padding_idx):
    """fairseq ``utils.make_positions``: along each row, the k-th non-padding token gets
    padding_idx + k; padding tokens get padding_idx."""
    out = []
    for row in tokens:
        count = 0
        new = []
        for tok in row:
            if tok != padding_idx:
                count += 1
                new.append(padding_idx + count)
            else:
                new.append(padding_idx)
        out.append(new)
    return out


def marian_sinusoidal_weight(n_pos, dim):
    """Hugging Face ``MarianSinusoidalPositionalEmbedding.create_weight``: angle p / 10000^(2
    (j // 2) / dim) for column j; sines of the even columns' angles fill the first ceil(dim/2)
    slots, cosines of the odd columns' angles the rest."""
    sentinel = dim // 2 if dim % 2 == 0 else dim // 2 + 1
    rows = []
    for p in range(n_pos):
        angles = [p / 10000 ** (2 * (j // 2) / dim) for j in range(dim)]
        sines = [math.sin(a) for a in angles[0::2]]
        cosines = [math.cos(a) for a in angles[1::2]]
        assert len(sines) == sentinel
        rows.append(sines + cosines)
    return rows


# --- 2-D sin-cos tables -------------------------------------------------------------------------


def _sincos_1d(coord, dim):
    """MAE get_1d_sincos_pos_embed_from_grid for one coordinate: omega_d = 1 / 10000^(d / (dim/2)),
    [sin(c omega), cos(c omega)]."""
    half = dim // 2
    omegas = [1.0 / 10000 ** (d / half) for d in range(half)]
    return [math.sin(coord * o) for o in omegas] + [math.cos(coord * o) for o in omegas]


def mae_2d_sincos_pos_embed(embed_dim, grid_size, cls_token=False):
    """MAE ``util/pos_embed.py`` get_2d_sincos_pos_embed. Its grid is np.meshgrid(grid_w, grid_h)
    ('xy' indexing), so grid[0][y][x] = x: the half it calls emb_h encodes x (the column), the
    second half encodes y; rows run y-major."""
    rows = []
    if cls_token:
        rows.append([0.0] * embed_dim)
    for y in range(grid_size):
        for x in range(grid_size):
            grid0, grid1 = x, y  # meshgrid(grid_w, grid_h)[0][y, x] = x, [1][y, x] = y
            rows.append(_sincos_1d(grid0, embed_dim // 2) + _sincos_1d(grid1, embed_dim // 2))
    return rows


def sincos_2d(height, width, dim, base=10000.0, axes="hw", layout="per_axis"):
    """2-D table of posenc.sincos_2d: w_k = base^(-k / (dim/4)); row y*W + x; ``axes`` picks which
    coordinate comes first, ``layout`` per axis [sin a, cos a, sin b, cos b] or
    [sin a, sin b, cos a, cos b]."""
    q = dim // 4
    rows = []
    for y in range(height):
        for x in range(width):
            a, b = (y, x) if axes == "hw" else (x, y)
            sa = [math.sin(a / base ** (k / q)) for k in range(q)]
            ca = [math.cos(a / base ** (k / q)) for k in range(q)]
            sb = [math.sin(b / base ** (k / q)) for k in range(q)]
            cb = [math.cos(b / base ** (k / q)) for k in range(q)]
            rows.append(sa + ca + sb + cb if layout == "per_axis" else sa + sb + ca + cb)
    return rows

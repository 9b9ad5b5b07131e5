"""posenc.mrope_position_ids and posenc.apply_mrope: against transformers 5.23's Qwen2-VL,
Qwen2.5-VL and Qwen3-VL (``get_rope_index``, the text rotary embedding, ``apply_rotary_pos_emb``),
and against a loop-by-loop oracle of the rotation."""

from __future__ import annotations

import types

import numpy as np
import pytest
import torch

import posenc
import seeded
from ci_rule import require

values = pytest.mark.values

MODELS = {
    "qwen2_vl": ("Qwen2VL", "Qwen2VLRotaryEmbedding", False),
    "qwen2_5_vl": ("Qwen2_5_VL", "Qwen2_5_VLRotaryEmbedding", False),
    "qwen3_vl": ("Qwen3VL", "Qwen3VLTextRotaryEmbedding", True),
}
TYPE = {"text": 0, "pad": 0, "image": 1, "video": 2}


@pytest.fixture(scope="module")
def hf():
    """name -> (modeling module, configuration module): imported once for the file."""
    require("transformers")
    out = {}
    for name in MODELS:
        out[name] = (
            require(f"transformers.models.{name}.modeling_{name}"),
            require(f"transformers.models.{name}.configuration_{name}"),
        )
    return out


def hf_rope_index(hf, name, layouts, *, merge=2, tokens_per_second=None, frames_split=False):
    """``get_rope_index`` of ``name``'s Model class, called on the smallest object that has what
    it reads (``config.vision_config`` and ``get_vision_position_ids``): no weights are built."""
    modeling, configuration = hf[name]
    prefix = MODELS[name][0]
    model_cls = getattr(modeling, f"{prefix}Model")
    vision = {"spatial_merge_size": merge}
    if tokens_per_second is not None:
        vision["tokens_per_second"] = tokens_per_second
    config = getattr(configuration, f"{prefix}Config")(vision_config=vision)
    owner = types.SimpleNamespace(config=config)
    owner.get_vision_position_ids = lambda *a, **k: model_cls.get_vision_position_ids(
        owner, *a, **k
    )
    types_, mask, images, videos, seconds = [], [], [], [], []
    for layout in layouts:
        row_t, row_m = [], []
        for seg in layout:
            kind = seg[0]
            if kind in ("text", "pad"):
                n = seg[1]
            else:
                t, h, w = seg[1]
                n = t * (h // merge) * (w // merge)
                (images if kind == "image" else videos).append(list(seg[1]))
                if kind == "video":
                    seconds.append(seg[2] if len(seg) == 3 else 1.0)
            row_t += [TYPE[kind]] * n
            row_m += [0 if kind == "pad" else 1] * n
        types_.append(row_t)
        mask.append(row_m)
    if frames_split:  # Qwen3-VL: the layout holds one (1, h, w) segment per frame of one video
        videos = [[len(videos), *videos[0][1:]]] if videos else []
    input_ids = torch.ones(len(layouts), len(types_[0]), dtype=torch.long)
    kwargs = {
        "input_ids": input_ids,
        "mm_token_type_ids": torch.tensor(types_, dtype=torch.int32),
        "image_grid_thw": torch.tensor(images) if images else None,
        "video_grid_thw": torch.tensor(videos) if videos else None,
        "attention_mask": torch.tensor(mask),
    }
    if name == "qwen2_5_vl" and videos:
        kwargs["second_per_grid_ts"] = torch.tensor(seconds)
    ids, deltas = model_cls.get_rope_index(owner, **kwargs)
    return ids.cpu().numpy(), deltas.cpu().numpy()


# Layouts as the processors write them: a vision block always sits between text tokens
# (<|vision_start|> ... <|vision_end|>), which is what get_rope_index needs to tell blocks apart.
IMAGES = [
    [("text", 3), ("image", (1, 4, 6)), ("text", 5), ("image", (1, 8, 2)), ("text", 2)],
    [("pad", 4), ("text", 1), ("image", (1, 6, 6)), ("text", 3), ("image", (1, 2, 4)), ("text", 1)],
]
VIDEO = [  # 2 frames of 2 x 3 tokens: the temporal ids stay below the spatial ones
    [("text", 2), ("video", (2, 4, 6)), ("text", 3), ("image", (1, 4, 4)), ("text", 2)],
]
LONG_VIDEO = [  # 6 frames of 1 x 2 tokens: the temporal ids pass the spatial ones
    [("text", 2), ("video", (6, 2, 4)), ("text", 3)],
    [("text", 1), ("video", (3, 2, 2)), ("text", 2), ("pad", 11)],
]


@values
@pytest.mark.parametrize("name", ["qwen2_vl", "qwen2_5_vl", "qwen3_vl"])
@pytest.mark.parametrize("resume", ["max", "spatial"])
def test_images_match_get_rope_index(hf, name, resume):
    """Images, left padding, two rows: both resume rules give HF's ids exactly (for an image the
    largest id of the grid + 1 is start + max(h, w) / m), and rope_deltas is max + 1 - length."""
    want, deltas = hf_rope_index(hf, name, IMAGES)
    got = posenc.mrope_position_ids(IMAGES, resume=resume)
    assert got.dtype == np.int64 and got.shape == want.shape == (3, 2, 20)
    np.testing.assert_array_equal(got, want)
    n_real = np.array([sum(s[1] for s in row if s[0] == "text") for row in IMAGES])
    n_real += [sum(s[1][1] * s[1][2] // 4 for s in row if s[0] == "image") for row in IMAGES]
    np.testing.assert_array_equal(got.max(axis=(0, 2)) + 1 - n_real, deltas[:, 0])


@values
@pytest.mark.parametrize("name", ["qwen2_vl", "qwen2_5_vl"])
def test_short_video_matches_get_rope_index(hf, name):
    tps = 2 if name == "qwen2_5_vl" else None  # interval 2 * 1.0 s: ids 0, 2 on the time axis
    want, _ = hf_rope_index(hf, name, VIDEO, tokens_per_second=tps)
    for resume in ("max", "spatial"):
        got = posenc.mrope_position_ids(VIDEO, tokens_per_second=tps, resume=resume)
        np.testing.assert_array_equal(got, want)
    if tps:  # the time axis was scaled: frame 1 starts 2 after frame 0
        assert got[0, 0, 2 + 6] - got[0, 0, 2] == 2


@values
@pytest.mark.parametrize("name", ["qwen2_vl", "qwen2_5_vl"])
def test_long_video_resume_spatial_is_hf_523(hf, name):
    """transformers 5.23 resumes after a grid at start + max(h, w) / m even when the time axis
    went further: resume="spatial" reproduces it; resume="max" (Qwen's release code) does not."""
    tps = 4 if name == "qwen2_5_vl" else None
    layouts = [
        [("text", 2), ("video", (6, 2, 4), 0.5), ("text", 3)] if tps else LONG_VIDEO[0],
        LONG_VIDEO[1],
    ]
    want, _ = hf_rope_index(hf, name, layouts, tokens_per_second=tps)
    got = posenc.mrope_position_ids(layouts, tokens_per_second=tps, resume="spatial")
    np.testing.assert_array_equal(got, want)
    got_max = posenc.mrope_position_ids(layouts, tokens_per_second=tps, resume="max")
    after = slice(-3, None)  # the text after the video in row 0
    assert not np.array_equal(got_max[:, 0, after], want[:, 0, after])
    # resume="max": the text starts right after the largest id of the video, on all three axes
    video = got_max[:, 0, 2:-3]
    assert got_max[0, 0, -3] == video.max() + 1 > got[0, 0, -3]


@values
def test_qwen25_seconds_per_grid(hf):
    """Qwen2.5-VL: frame k at start + floor(k * tokens_per_second * seconds_per_grid), one
    seconds_per_grid per video (second_per_grid_ts), images unscaled."""
    layouts = [
        [("text", 1), ("video", (3, 2, 2), 0.75), ("text", 1), ("image", (1, 2, 2)), ("text", 8)],
        [("text", 1), ("video", (4, 2, 2), 2.0), ("text", 1), ("image", (1, 2, 2)), ("text", 7)],
    ]
    want, _ = hf_rope_index(hf, "qwen2_5_vl", layouts, tokens_per_second=3)
    got = posenc.mrope_position_ids(layouts, tokens_per_second=3, resume="spatial")
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got[0, 0, 1:4], [1, 3, 5])  # floor(k * 2.25) = 0, 2, 4


@values
def test_qwen25_time_ids_are_formed_in_float32(hf):
    """Issue 21, item 5: 25 fps, tokens_per_second 2, second_per_grid_ts = float32(2 / 25) as the
    processor stores it: 25 * 2 * 0.08 is 3.99999991 in float64 but 4 in float32, and HF gives
    frame 25 the time id start + 4 (float64 gave start + 3)."""
    sec = float(np.float32(2 / 25))
    layouts = [[("text", 1), ("video", (26, 2, 2), sec), ("text", 1)]]
    want, _ = hf_rope_index(hf, "qwen2_5_vl", layouts, tokens_per_second=2)
    got = posenc.mrope_position_ids(layouts, tokens_per_second=2, resume="spatial")
    np.testing.assert_array_equal(got, want)
    assert got[0, 0, 26] == 1 + 4
    # random float32 seconds per grid and integer tokens_per_second (the type of HF's config)
    rng = np.random.default_rng(0)
    for tps, sec in zip(rng.integers(1, 50, size=12), rng.uniform(0.01, 2.0, size=12), strict=True):
        sec32 = float(np.float32(sec))
        layouts = [
            [("text", 1), ("video", (40, 2, 2), sec32), ("text", 1), ("video", (9, 2, 2))],
        ]
        want, _ = hf_rope_index(hf, "qwen2_5_vl", layouts, tokens_per_second=int(tps))
        got = posenc.mrope_position_ids(layouts, tokens_per_second=int(tps), resume="spatial")
        np.testing.assert_array_equal(got, want)


@values
def test_qwen3_video_frames(hf):
    """Qwen3-VL splits a video into frames of t = 1 with timestamp text between them: the layout
    lists each frame, and the ids equal get_rope_index on the whole video_grid_thw."""
    layout = [("text", 2)]
    for _ in range(3):
        layout += [("video", (1, 4, 4)), ("text", 4)]
    layout += [("image", (1, 2, 6)), ("text", 2)]
    want, _ = hf_rope_index(hf, "qwen3_vl", [layout], frames_split=True)
    got = posenc.mrope_position_ids([layout])
    np.testing.assert_array_equal(got, want)


def test_layout_rules_by_hand():
    """The rules on a small layout, written out: text shares t = h = w, the grid starts at the
    counter, the text after it resumes at the largest id + 1, pads are 0 and do not count."""
    ids = posenc.mrope_position_ids(
        [[("pad", 1), ("text", 2), ("video", (2, 2, 4), 1.5), ("text", 1)]],
        tokens_per_second=2,
    )[:, 0]
    want = [
        [0, 0, 1, 2, 2, 5, 5, 6],
        [0, 0, 1, 2, 2, 2, 2, 6],
        [0, 0, 1, 2, 3, 2, 3, 6],
    ]
    np.testing.assert_array_equal(ids, want)
    tensor = posenc.mrope_position_ids([[("text", 2)]], like=torch.zeros(1))
    assert tensor.dtype == torch.int64 and tensor.tolist() == [[[0, 1]]] * 3


# --- rotation --------------------------------------------------------------------------------


def oracle_mrope(x, ids, section, base, interleaved):
    """Loop by loop: pair i = (i, i + d/2) turns by ids[axis(i)] * base ** (-2i / d)."""
    x = np.asarray(x, dtype=np.float64)
    d = x.shape[-1]
    half = d // 2
    if interleaved:
        axis = [0] * half
        for i in range(half):
            if i % 3 == 1 and i < 3 * section[1]:
                axis[i] = 1
            elif i % 3 == 2 and i < 3 * section[2]:
                axis[i] = 2
    else:
        axis = [0] * section[0] + [1] * section[1] + [2] * section[2]
    out = x.copy()
    b_, h_, s_, _ = x.shape
    for b in range(b_):
        for h in range(h_):
            for s in range(s_):
                for i in range(half):
                    angle = float(ids[axis[i], b, s]) * base ** (-2.0 * i / d)
                    a, c = x[b, h, s, i], x[b, h, s, i + half]
                    out[b, h, s, i] = a * np.cos(angle) - c * np.sin(angle)
                    out[b, h, s, i + half] = c * np.cos(angle) + a * np.sin(angle)
    return out


SECTIONS = {False: [2, 3, 3], True: [3, 3, 2]}  # head_dim 16: 8 pairs (t h w t h w t h)


@pytest.fixture(scope="module")
def qk():
    g = torch.Generator().manual_seed(0)
    q = seeded.randn(2, 3, 20, 16, generator=g, dtype=torch.float64)
    k = seeded.randn(2, 1, 20, 16, generator=g, dtype=torch.float64)
    return q, k


@values
@pytest.mark.parametrize("interleaved", [False, True])
def test_rotation_matches_oracle(qk, interleaved):
    q, _ = qk
    ids = posenc.mrope_position_ids(IMAGES)
    want = oracle_mrope(q.cpu().numpy(), ids, SECTIONS[interleaved], 100.0, interleaved)
    got = posenc.apply_mrope(
        q.cpu().numpy(), ids, SECTIONS[interleaved], base=100.0, interleaved=interleaved
    )
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    got_t = posenc.apply_mrope(
        q, torch.as_tensor(ids), SECTIONS[interleaved], base=100.0, interleaved=interleaved
    )
    np.testing.assert_allclose(got_t.cpu().numpy(), want, rtol=1e-12, atol=1e-12)


def _hf_rotary(hf, name, section, base=100.0):
    modeling, configuration = hf[name]
    prefix = MODELS[name][0]
    text_cfg = getattr(configuration, f"{prefix}TextConfig")(
        hidden_size=48,
        num_attention_heads=3,
        num_key_value_heads=1,
        head_dim=16,
        rope_parameters={"rope_type": "default", "rope_theta": base, "mrope_section": section},
    )
    return getattr(modeling, MODELS[name][1])(text_cfg), modeling


@values
@pytest.mark.parametrize("name", ["qwen2_vl", "qwen2_5_vl", "qwen3_vl"])
def test_rotation_matches_hf(hf, qk, name):
    """The model's text rotary embedding + apply_rotary_pos_emb. Two checks: (1) HF's own
    recomposition_frequencies (the band / interleave layout) fed float64 angles, then its apply
    function in float64: equal to 1e-12; (2) HF's forward as it runs (float32 angles, positions
    up to 15): within 2e-6."""
    q, k = qk
    interleaved = MODELS[name][2]
    section = SECTIONS[interleaved]
    rotary, modeling = _hf_rotary(hf, name, section)
    ids = posenc.mrope_position_ids(IMAGES)
    ids_t = torch.as_tensor(ids)
    inv = torch.as_tensor(posenc.rope_frequencies(16, base=100.0)[0])
    freqs = ids_t[..., None].double() * inv  # (3, batch, seq, 8), float64
    cos = rotary.recomposition_frequencies(freqs.cos().clone())
    sin = rotary.recomposition_frequencies(freqs.sin().clone())
    want_q, want_k = modeling.apply_rotary_pos_emb(q, k, cos, sin)
    for x, want in ((q, want_q), (k, want_k)):
        got = posenc.apply_mrope(x, ids_t, section, base=100.0, interleaved=interleaved)
        torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-12)
    cos32, sin32 = rotary(q.float(), ids_t)
    hf_q, _ = modeling.apply_rotary_pos_emb(q.float(), k.float(), cos32, sin32)
    got32 = posenc.apply_mrope(q.float(), ids_t, section, base=100.0, interleaved=interleaved)
    torch.testing.assert_close(got32, hf_q, rtol=0, atol=2e-6)


@values
def test_interleaved_layout_qwen3_default():
    """Qwen3-VL's [24, 20, 20] over 64 pairs: t h w t h w ... for 60 pairs, then 4 more t."""
    from posenc.mrope import _pair_axes

    axes = _pair_axes(64, [24, 20, 20], True)
    assert axes == [0, 1, 2] * 20 + [0] * 4
    assert _pair_axes(64, [16, 24, 24], False) == [0] * 16 + [1] * 24 + [2] * 24


@values
def test_text_only_is_rope(qk):
    """On text (t = h = w) M-RoPE is plain RoPE with half pairing, for either layout."""
    q, _ = qk
    pos = np.arange(5, 25)
    ids = np.broadcast_to(pos, (3, 20))
    for inter in (False, True):
        got = posenc.apply_mrope(
            q.cpu().numpy(), ids, SECTIONS[inter], base=100.0, interleaved=inter
        )
        want = posenc.apply_rope(q.cpu().numpy(), pos, base=100.0, pairing="half")
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@values
def test_compiles_fullgraph(qk):
    q, _ = qk
    ids = torch.as_tensor(posenc.mrope_position_ids(IMAGES))

    def f(x, p):
        return posenc.apply_mrope(x, p, [3, 3, 2], base=100.0, interleaved=True)

    compiled = torch.compile(f, fullgraph=True, backend="eager")
    torch.testing.assert_close(compiled(q, ids), f(q, ids), rtol=1e-12, atol=1e-12)


def test_refusals_name_the_argument():
    x = np.ones((1, 1, 4, 16))
    ids = np.zeros((3, 4), dtype=np.int64)
    with pytest.raises(ValueError, match="mrope_section"):
        posenc.apply_mrope(x, ids, [2, 3, 2])
    with pytest.raises(ValueError, match="mrope_section"):
        posenc.apply_mrope(x, ids, [0, 4, 4], interleaved=True)  # h needs pair 10 of 8
    with pytest.raises(ValueError, match="position_ids"):
        posenc.apply_mrope(x, ids[:2], [2, 3, 3])
    with pytest.raises(ValueError, match="layouts\\[0\\]\\[1\\].*spatial_merge_size"):
        posenc.mrope_position_ids([[("text", 1), ("image", (1, 3, 4))]])
    with pytest.raises(TypeError, match="layouts\\[0\\].*\\[layout\\]"):
        posenc.mrope_position_ids([("text", 1), ("image", (1, 2, 4))])
    with pytest.raises(ValueError, match="layouts.*pad"):
        posenc.mrope_position_ids([[("text", 1)], [("text", 2)]])
    with pytest.raises(ValueError, match="tokens_per_second"):
        posenc.mrope_position_ids([[("video", (2, 2, 2), 0.5)]])


def test_position_ids_check_like_devices_memory_too(monkeypatch):
    """Issue 40: the ids are built in NumPy and moved to ``like``'s device; ids that fit the host
    but not the device (patched: 1 MiB, nothing allocated) are refused before any row is built."""
    import posenc._array as arr

    monkeypatch.setattr(arr, "memory_bytes", lambda device=None: 2**40 if device is None else 2**20)
    lay = [[("text", 2**16)]]
    with pytest.raises(ValueError, match=r"^layouts of 1 rows x 65536 tokens .*1\.5 MiB"):
        posenc.mrope_position_ids(lay, like=torch.zeros(1))
    assert posenc.mrope_position_ids(lay).shape == (3, 1, 2**16)

"""Video and N-D RoPE: posenc.apply_rope_axes against diffusers 0.42 (FLUX, HunyuanVideo, Wan),
posenc.tmrope_position_ids against transformers 5.23's Qwen2.5-Omni ``get_rope_index``,
VideoRoPE against a loop-by-loop oracle written from the paper and the authors' code."""

from __future__ import annotations

import inspect
import types

import numpy as np
import pytest
import torch

import oracle_video
import posenc
import seeded
from ci_rule import require
from posenc.video_rope import _chunks

values = pytest.mark.values


def _randn(*shape, seed=0, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    return seeded.randn(*shape, generator=g, dtype=torch.float64).to(dtype)  # same on any device


# --- N-D RoPE against diffusers ----------------------------------------------------------------


@pytest.fixture(scope="module")
def diffusers():
    return require("diffusers")


@values
def test_flux_pos_embed(diffusers):
    """FluxPosEmbed + apply_rotary_emb (the FLUX attention processor's rotation): text ids
    (0, 0, 0), image ids (0, row, col); the angles are float64 in both, cos/sin float32 there."""
    from diffusers.models.embeddings import apply_rotary_emb
    from diffusers.models.transformers.transformer_flux import FluxPosEmbed

    grid = posenc.rope_grid_positions((3, 4))
    ids = np.concatenate([np.zeros((5, 3)), np.c_[np.zeros(12), grid]]).astype(np.float32)
    cos, sin = FluxPosEmbed(theta=10000, axes_dim=[4, 6, 6])(torch.from_numpy(ids))
    x = _randn(2, 3, 17, 16)  # (batch, heads, seq, head_dim)
    want = apply_rotary_emb(x, (cos, sin), sequence_dim=2)
    got = posenc.apply_rope_axes(x, ids, [4, 6, 6])
    torch.testing.assert_close(got, want, rtol=0, atol=1e-6)
    angle = np.arctan2(sin.double().cpu().numpy()[:, 0::2], cos.double().cpu().numpy()[:, 0::2])
    freqs = posenc.rope_axes_frequencies([4, 6, 6])
    np.testing.assert_allclose(np.angle(np.exp(1j * (ids @ freqs.T))), angle, atol=1e-6)
    assert torch.equal(got[:, :, :5], x[:, :, :5])  # text tokens at (0, 0, 0): unrotated


@values
def test_flux_defaults(diffusers):
    """FLUX.1's transformer builds FluxPosEmbed(theta=10000, axes_dim=(16, 56, 56)): 64 pairs of
    a 128-wide head, each axis with its own ladder from 1 down to 10000 ** (-(d-2)/d)."""
    from diffusers.models.transformers.transformer_flux import FluxTransformer2DModel

    sig = inspect.signature(FluxTransformer2DModel.__init__)
    assert tuple(sig.parameters["axes_dims_rope"].default) == (16, 56, 56)
    assert sig.parameters["attention_head_dim"].default == 128
    f = posenc.rope_axes_frequencies([16, 56, 56])
    assert f.shape == (64, 3) and (np.count_nonzero(f, axis=1) == 1).all()
    np.testing.assert_allclose(f[[0, 8, 36], [0, 1, 2]], 1.0)
    np.testing.assert_allclose(f[7, 0], 10000 ** (-14 / 16))


@values
def test_hunyuan_video(diffusers):
    """HunyuanVideoRotaryPosEmbed: a (frames, rows, cols) latent, theta 256, float32 angles."""
    from diffusers.models.embeddings import apply_rotary_emb
    from diffusers.models.transformers.transformer_hunyuan_video import (
        HunyuanVideoRotaryPosEmbed,
        HunyuanVideoTransformer3DModel,
    )

    rope = HunyuanVideoRotaryPosEmbed(patch_size=2, patch_size_t=1, rope_dim=[4, 6, 6], theta=256.0)
    cos, sin = rope(torch.zeros(1, 1, 3, 4, 6))  # 3 frames of 2 x 3 patches
    x = _randn(1, 18, 2, 16)  # (batch, seq, heads, head_dim)
    want = apply_rotary_emb(x, (cos, sin), sequence_dim=1)
    pos = posenc.rope_grid_positions((3, 2, 3))[:, None]  # (seq, 1, 3): broadcast over heads
    got = posenc.apply_rope_axes(x, pos, [4, 6, 6], base=256.0)
    torch.testing.assert_close(got, want, rtol=0, atol=1e-6)
    sig = inspect.signature(HunyuanVideoTransformer3DModel.__init__)
    assert tuple(sig.parameters["rope_axes_dim"].default) == (16, 56, 56)
    assert sig.parameters["rope_theta"].default == 256.0


@values
@pytest.mark.parametrize("head_dim", [24, 128])
def test_wan_split_and_attention(diffusers, head_dim):
    """WanRotaryPosEmbed splits head_dim d as (d - 4 (d // 6), 2 (d // 6), 2 (d // 6)) (44, 42,
    42 for 128); the whole WanAttention with its own processor equals SDPA over posenc-rotated
    q and k."""
    from diffusers.models.transformers.transformer_wan import (
        WanAttention,
        WanAttnProcessor,
        WanRotaryPosEmbed,
    )

    emb = WanRotaryPosEmbed(attention_head_dim=head_dim, patch_size=(1, 2, 2), max_seq_len=32)
    axes = (emb.t_dim, emb.h_dim, emb.w_dim)
    assert axes == (head_dim - 4 * (head_dim // 6), 2 * (head_dim // 6), 2 * (head_dim // 6))
    if head_dim == 128:
        assert axes == (44, 42, 42)
        return
    torch.manual_seed(0)
    attn = WanAttention(2 * head_dim, heads=2, dim_head=head_dim, processor=WanAttnProcessor())
    attn = attn.double().eval()
    rotary = emb(torch.zeros(1, 1, 2, 4, 6))  # 2 frames of 2 x 3 patches: 12 tokens
    h = _randn(1, 12, 2 * head_dim, seed=3)
    with torch.no_grad():
        want = attn(h, rotary_emb=tuple(r.double() for r in rotary))
        q = attn.norm_q(attn.to_q(h)).unflatten(2, (2, -1)).transpose(1, 2)
        k = attn.norm_k(attn.to_k(h)).unflatten(2, (2, -1)).transpose(1, 2)
        v = attn.to_v(h).unflatten(2, (2, -1)).transpose(1, 2)
        pos = posenc.rope_grid_positions((2, 2, 3))
        q, k = (posenc.apply_rope_axes(t, pos, axes) for t in (q, k))
        o = torch.nn.functional.scaled_dot_product_attention(q, k, v)
        got = attn.to_out[0](o.transpose(1, 2).flatten(2))
    torch.testing.assert_close(got, want, rtol=0, atol=1e-6)


@values
@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_axes_rope_oracle_and_relative(backend):
    """Every token against the loop oracle; the score depends on the coordinate offsets only."""
    rng = np.random.default_rng(0)
    axes = [4, 2, 6]
    x = rng.normal(size=(7, 14))
    pos = rng.integers(-5, 40, size=(7, 3)).astype(float) + rng.random((7, 3))
    xin = torch.from_numpy(x) if backend == "torch" else x
    out = np.asarray(posenc.apply_rope_axes(xin, pos, axes, base=50.0))
    for s in range(7):
        want = oracle_video.axes_rope(x[s].tolist(), pos[s].tolist(), axes, base=50.0)
        np.testing.assert_allclose(out[s, :12], want[:12], rtol=0, atol=1e-13)
    np.testing.assert_array_equal(out[:, 12:], x[:, 12:])  # past sum(axes_dim): untouched
    q, k = rng.normal(size=(2, 1, 12))
    shift = np.array([[3.0, -7.0, 11.0]])
    a = posenc.apply_rope_axes(q, pos[:1], axes) @ posenc.apply_rope_axes(k, pos[1:2], axes).T
    b = posenc.apply_rope_axes(q, pos[:1] + shift, axes) @ (
        posenc.apply_rope_axes(k, pos[1:2] + shift, axes).T
    )
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)


@values
def test_axes_rope_precision_and_dtypes():
    """float16/bfloat16 in, same dtype out; the float32 result at coordinates near 2**20 is within
    1e-6 of the float64 one (angles formed in float64)."""
    x = _randn(2, 5, 16)
    pos = torch.tensor([[2.0**20 + i, 3.0, 2.0**19] for i in range(5)])
    ref = posenc.apply_rope_axes(x, pos, [8, 4, 4])
    got = posenc.apply_rope_axes(x.float(), pos, [8, 4, 4])
    assert got.dtype == torch.float32
    assert float((got.double() - ref).abs().max()) < 1e-6
    for dt in (torch.float16, torch.bfloat16):
        assert posenc.apply_rope_axes(x.to(dt), pos, [8, 4, 4]).dtype == dt


def test_grid_positions_order():
    g = posenc.rope_grid_positions((2, 3, 4))
    want = np.stack(np.meshgrid(np.arange(2), np.arange(3), np.arange(4), indexing="ij"), -1)
    np.testing.assert_array_equal(g, want.reshape(-1, 3))
    assert posenc.rope_grid_positions((0, 3)).shape == (0, 2)
    t = posenc.rope_grid_positions((2, 2), like=torch.zeros(1))
    assert isinstance(t, torch.Tensor) and t.dtype == torch.int64


# --- VideoRoPE ---------------------------------------------------------------------------------

LAYOUTS = [
    [("text", 3), ("video", (3, 6, 4)), ("text", 2), ("image", (1, 4, 4)), ("text", 2)],
    [("pad", 9), ("text", 2), ("video", (2, 4, 6)), ("text", 4), ("image", (1, 2, 2)), ("text", 1)],
]


@values
@pytest.mark.parametrize("delta", [1.0, 2.0, 0.5])
def test_videorope_ids_oracle(delta):
    got = posenc.videorope_position_ids(LAYOUTS, temporal_stride=delta)
    assert got.dtype == np.float64 and got.shape == (3, 2, 29)
    for b, layout in enumerate(LAYOUTS):
        want = np.array(oracle_video.videorope_ids(layout, delta=delta)).T
        np.testing.assert_array_equal(got[:, b], want)


@values
def test_videorope_diagonal_layout():
    """The centre patch of every frame sits on the diagonal t = h = w; frames are delta apart;
    the text after the video resumes one past the last frame's time."""
    ids = posenc.videorope_position_ids([[("text", 4), ("video", (3, 6, 6)), ("text", 1)]])[:, 0]
    frames = ids[:, 4:31].reshape(3, 3, 9)  # (axis, frame, 3 x 3 patches)
    centre = frames[:, :, 4]
    np.testing.assert_array_equal(centre, np.broadcast_to([[4.0, 6.0, 8.0]], (3, 3)))
    assert ids[:, -1].tolist() == [9.0, 9.0, 9.0]
    mrope = posenc.mrope_position_ids([[("text", 4), ("video", (3, 6, 6)), ("text", 1)]])[:, 0]
    assert mrope[:, -1].tolist() == [7, 7, 7]  # M-RoPE: max + 1 of its grid


@values
@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_apply_videorope_oracle(backend):
    rng = np.random.default_rng(2)
    x = rng.normal(size=(2, 10, 16))
    ids = posenc.videorope_position_ids([[("text", 1), ("video", (2, 4, 4)), ("text", 1)]])[:, 0]
    xin = torch.from_numpy(x) if backend == "torch" else x
    out = np.asarray(posenc.apply_videorope(xin, ids, [2, 3, 3], base=100.0))
    for h in range(2):
        for s in range(ids.shape[1]):
            want = oracle_video.videorope_rotate(x[h, s].tolist(), ids[:, s], (2, 3, 3), 100.0)
            np.testing.assert_allclose(out[h, s], want, rtol=0, atol=1e-13)


@values
def test_videorope_time_on_the_slowest_pairs():
    """Only t differs between two tokens: M-RoPE rotates the first (fastest) pairs, VideoRoPE the
    last (slowest) s_t pairs; with t = h = w both are plain RoPE."""
    x = np.ones((2, 16))
    ids = np.array([[0.0, 5.0], [0.0, 0.0], [0.0, 0.0]])
    moved = lambda y: np.flatnonzero(np.abs(y[1] - y[0]) > 1e-12) % 8  # noqa: E731
    assert sorted(set(moved(posenc.apply_videorope(x, ids, [2, 3, 3])))) == [6, 7]
    assert sorted(set(moved(posenc.apply_mrope(x, ids, [2, 3, 3])))) == [0, 1]
    text = np.broadcast_to(np.arange(2.0), (3, 2))
    np.testing.assert_allclose(
        posenc.apply_videorope(x, text, [2, 3, 3]), posenc.apply_rope(x, 2, pairing="half")
    )


# --- TMRoPE against transformers' Qwen2.5-Omni -------------------------------------------------


@pytest.fixture(scope="module")
def omni():
    require("transformers")
    modeling = require("transformers.models.qwen2_5_omni.modeling_qwen2_5_omni")
    configuration = require("transformers.models.qwen2_5_omni.configuration_qwen2_5_omni")
    return modeling, configuration


VISION_START = 151652  # the checkpoints' thinker config carries it; the class default is None


def hf_tmrope(omni, layouts, *, merge=2, audio_in_video=False):
    """``get_rope_index`` on the smallest object that has what it reads: input ids written as
    the processor writes them (markers around every image, audio and video)."""
    modeling, configuration = omni
    cls = modeling.Qwen2_5OmniPreTrainedModelForConditionalGeneration
    cfg = configuration.Qwen2_5OmniThinkerConfig()
    cfg.vision_start_token_id = VISION_START
    owner = types.SimpleNamespace(config=cfg, spatial_merge_size=merge)
    owner.get_llm_pos_ids_for_vision = lambda *a: cls.get_llm_pos_ids_for_vision(owner, *a)
    owner.get_chunked_index = lambda *a: cls.get_chunked_index(owner, *a)
    text, img, vid, aud = 100, cfg.image_token_id, cfg.video_token_id, cfg.audio_token_id
    rows, masks, images, videos, seconds, audio_lens = [], [], [], [], [], []
    for layout in layouts:
        row, mask = [], []
        for seg in layout:
            kind = seg[0]
            if kind in ("text", "pad"):
                row += [text] * seg[1]
                mask += [0 if kind == "pad" else 1] * seg[1]
                continue
            if kind == "audio":
                row[-1] = cfg.audio_start_token_id
                row += [aud] * seg[1]
                audio_lens.append(4 * seg[1] + 1)  # HF: ((L-1)//2 + 1 - 2)//2 + 1 = n
                mask += [1] * seg[1]
                continue
            t, h, w = seg[1]
            n = t * (h // merge) * (w // merge)
            if kind == "image":
                row[-1] = VISION_START
                row += [img] * n
                images.append([t, h, w])
                mask += [1] * n
                continue
            sec = seg[2] if len(seg) > 2 else 1.0
            videos.append([t, h, w])
            seconds.append(sec)
            if kind == "video":
                row[-1] = VISION_START
                row += [vid] * n
                mask += [1] * n
                continue
            # video + audio: the processor's token order (its own chunking of both streams)
            n_audio = seg[3]
            audio_lens.append(4 * n_audio + 1)
            times = np.repeat(
                (np.arange(t, dtype=np.float32) * np.float32(sec) * np.float32(25)).astype(int),
                (h // merge) * (w // merge),
            )
            vc, ac = _chunks(times, 50), _chunks(np.arange(n_audio), 50)
            body = []
            for c in range(max(len(vc), len(ac))):
                if c < len(vc):
                    body += [vid] * (vc[c][1] - vc[c][0])
                if c < len(ac):
                    body += [aud] * (ac[c][1] - ac[c][0])
            row += [VISION_START, cfg.audio_start_token_id, *body, cfg.audio_end_token_id, 0]
            mask += [1] * (4 + n + n_audio)
        rows.append(row)
        masks.append(mask)
    pos, deltas = cls.get_rope_index(
        owner,
        input_ids=torch.tensor(rows),
        image_grid_thw=torch.tensor(images) if images else None,
        video_grid_thw=torch.tensor(videos) if videos else None,
        attention_mask=torch.tensor(masks),
        use_audio_in_video=audio_in_video,
        audio_seqlens=torch.tensor(audio_lens) if audio_lens else None,
        second_per_grids=torch.tensor(seconds) if seconds else None,
    )
    return pos.cpu().numpy(), deltas.cpu().numpy()


OMNI = [
    [("text", 3), ("image", (1, 4, 6)), ("text", 2), ("audio", 7), ("text", 3),
     ("video", (3, 4, 4), 0.5), ("text", 2)],
    [("pad", 15), ("text", 2), ("audio", 3), ("text", 2), ("video", (4, 2, 4), 2.0),
     ("text", 3), ("image", (1, 2, 2)), ("text", 1)],
]  # fmt: skip


@values
def test_tmrope_matches_get_rope_index(omni):
    want, deltas = hf_tmrope(omni, OMNI)
    got = posenc.tmrope_position_ids(OMNI)
    assert got.dtype == np.int64 and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    n_real = np.array([sum(_n(s) for s in row if s[0] != "pad") for row in OMNI])
    np.testing.assert_array_equal(got.max(axis=(0, 2)) + 1 - n_real, deltas[:, 0])


def _n(seg):
    if seg[0] in ("text", "audio"):
        return seg[1]
    t, h, w = seg[1]
    return t * (h // 2) * (w // 2)


AV = [
    [("text", 2), ("video+audio", (6, 4, 4), 1.0, 130), ("text", 3)],  # 6 s: 3 chunks each
    [("text", 1), ("video+audio", (3, 2, 4), 4.0, 20), ("text", 2), ("pad", 130)],  # 100-id jumps
]


@values
def test_tmrope_audio_in_video_matches_get_rope_index(omni):
    """Video with its audio track (use_audio_in_video=True): 2-second chunks of each stream, laid
    out video, audio, video, ...; frames 4 s apart close one chunk per token (HF's rule)."""
    want, _ = hf_tmrope(omni, AV, audio_in_video=True)
    got = posenc.tmrope_position_ids(AV)
    np.testing.assert_array_equal(got, want)


@values
def test_tmrope_time_alignment():
    """An audio token and a video frame of the same instant get the same temporal id: audio token
    k is at 40 k ms, frame k of a 0.5 s grid at 500 k ms = audio token 12.5 k (floored)."""
    ids = posenc.tmrope_position_ids([[("text", 1), ("video+audio", (4, 2, 2), 0.5, 60),
                                       ("text", 1)]])[0, 0]  # fmt: skip
    body = ids[3:-3]  # after text + 2 bos, before 2 eos + text
    start = ids[1] + 1
    video_t = sorted(set((body[:4] - start).tolist()))  # first chunk: the 4 frames, 1 token each
    assert video_t == [0, 12, 25, 37]
    audio_t = (body[4:] - start).tolist()
    assert audio_t[:50] == list(range(50))


@values
def test_tmrope_rotation_is_mrope(omni):
    """Qwen2.5-Omni's thinker rotary embedding + apply_multimodal_rotary_pos_emb on TMRoPE ids:
    posenc.apply_mrope with the bands [16, 24, 24] scaled down to [2, 3, 3]."""
    modeling, configuration = omni
    text_cfg = configuration.Qwen2_5OmniTextConfig(
        hidden_size=32, num_attention_heads=2, num_key_value_heads=2,
        rope_parameters={"rope_type": "default", "rope_theta": 100.0, "mrope_section": [2, 3, 3]},
    )  # fmt: skip
    rotary = modeling.Qwen2_5OmniRotaryEmbedding(text_cfg)
    # as_tensor, not from_numpy: on the device under test, with q (the cuda leg)
    ids = torch.as_tensor(posenc.tmrope_position_ids(OMNI[:1], position_id_per_seconds=2))
    q = _randn(1, 2, ids.shape[-1], 16, seed=4)
    inv = torch.as_tensor(posenc.rope_frequencies(16, base=100.0)[0])
    freqs = ids[..., None].double() * inv  # float64 angles into HF's own band layout
    cos = rotary.recomposition_frequencies(freqs.cos())
    sin = rotary.recomposition_frequencies(freqs.sin())
    want, _ = modeling.apply_rotary_pos_emb(q, q, cos, sin)
    torch.testing.assert_close(posenc.apply_mrope(q, ids, [2, 3, 3], base=100.0), want,
                               rtol=1e-12, atol=1e-12)  # fmt: skip
    cos32, sin32 = rotary(q.float(), ids)  # as it runs: float32 angles (ids up to ~70)
    want32, _ = modeling.apply_rotary_pos_emb(q.float(), q.float(), cos32, sin32)
    got32 = posenc.apply_mrope(q.float(), ids, [2, 3, 3], base=100.0)
    torch.testing.assert_close(got32, want32, rtol=0, atol=2e-5)


def test_refusals_name_the_argument():
    with pytest.raises(ValueError, match="axes_dim"):
        posenc.apply_rope_axes(np.ones((2, 8)), np.zeros((2, 3)), [4, 4, 4])
    with pytest.raises(ValueError, match=r"positions must have shape \(\.\.\., seq, 3\)"):
        posenc.apply_rope_axes(np.ones((2, 12)), np.zeros((2, 2)), [4, 4, 4])
    with pytest.raises(TypeError, match="axes_dim"):
        posenc.rope_axes_frequencies([4.0, 4])
    with pytest.raises(ValueError, match="temporal_stride"):
        posenc.videorope_position_ids([[("text", 1)]], temporal_stride=0)
    with pytest.raises(ValueError, match="mrope_section"):
        posenc.apply_videorope(np.ones((1, 8)), np.zeros((3, 1)), [1, 1, 1])
    with pytest.raises(ValueError, match="video\\+audio"):
        posenc.tmrope_position_ids([[("video+audio", (1, 2, 2), 1.0)]])
    with pytest.raises(ValueError, match="seconds_per_chunk"):
        posenc.tmrope_position_ids([[("text", 1)]], seconds_per_chunk=0.01)


# --- issue 40: overflowing time ids, unclear errors -------------------------------------------


@pytest.mark.parametrize(
    "segment, kwargs, names",
    [
        # frame 1 at 3e37 s * 25 ids/s: inf in float32 (the ids came back as -2**63)
        (("video", (4, 2, 2), 3e37), {}, ("seconds_per_grid",)),
        # one frame: 0 * inf = nan in float32 (seconds_per_grid past float32's range)
        (("video", (1, 2, 2), 1e39), {}, ("seconds_per_grid",)),
        # the rate itself past float32's range
        (
            ("video", (2, 2, 2), 1.0),
            {"position_id_per_seconds": 1e39},
            ("position_id_per_seconds",),
        ),
        (("video+audio", (4, 2, 2), 3e37, 2), {}, ("seconds_per_grid",)),
        (("image", (1, 2, 2)), {"position_id_per_seconds": 1e39}, ("position_id_per_seconds",)),
    ],
)
def test_tmrope_refuses_time_ids_that_overflow_float32(segment, kwargs, names):
    with pytest.raises(ValueError, match="float32") as err:
        posenc.tmrope_position_ids([[("text", 1), segment]], **kwargs)
    for name in names:
        assert name in str(err.value)


def test_tmrope_chunk_of_more_ids_than_float64_holds_is_one_chunk():
    """position_id_per_seconds * seconds_per_chunk past float64's range made int(inf) raise an
    OverflowError; a chunk that long holds the whole video, as any chunk longer than its ids."""
    lay = [[("text", 1), ("video+audio", (1, 2, 2), 1.0, 3), ("text", 1)]]
    want = posenc.tmrope_position_ids(lay, position_id_per_seconds=1e30, seconds_per_chunk=1e8)
    got = posenc.tmrope_position_ids(lay, position_id_per_seconds=1e30, seconds_per_chunk=1e300)
    assert got.tolist() == want.tolist()
    assert want[0, 0].tolist() == [0, 1, 1, 2, 2, 3, 4, 5, 5, 6]


@pytest.mark.parametrize("stride", [1e308, 1e300, 2.0**31])
def test_videorope_refuses_a_temporal_stride_whose_ids_overflow(stride):
    """temporal_stride=1e308 gave ids of inf; time ids past 2**31 are refused by name, as
    mrope_position_ids and tmrope_position_ids refuse theirs."""
    with pytest.raises(ValueError, match=r"temporal_stride.*2\*\*31|2\*\*31.*temporal_stride"):
        posenc.videorope_position_ids([[("text", 1), ("video", (3, 2, 2))]], temporal_stride=stride)


def test_videorope_large_but_fitting_stride_works():
    ids = posenc.videorope_position_ids([[("video", (3, 2, 2))]], temporal_stride=2.0**29)
    assert ids[0, 0].tolist() == [0.0, 2.0**29, 2.0**30]
    assert np.isfinite(ids).all()


def test_videorope_seconds_per_grid_error_names_what_it_takes():
    """The message told the user to pass tokens_per_second, which videorope_position_ids does not
    take: it names temporal_stride, its own time step."""
    with pytest.raises(ValueError) as err:
        posenc.videorope_position_ids([[("text", 1), ("video", (2, 2, 2), 2.0)]])
    msg = str(err.value)
    assert "tokens_per_second" not in msg
    assert "layouts[0][1]" in msg and "seconds_per_grid" in msg and "temporal_stride" in msg
    params = inspect.signature(posenc.videorope_position_ids).parameters
    assert "temporal_stride" in params and "tokens_per_second" not in params


@pytest.mark.parametrize(
    "call",
    [
        lambda like: posenc.rope_grid_positions((512, 256), like=like),
        lambda like: posenc.videorope_position_ids([[("text", 2**16)]], like=like),
        lambda like: posenc.tmrope_position_ids([[("audio", 2**16)]], like=like),
    ],
    ids=["rope_grid_positions", "videorope_position_ids", "tmrope_position_ids"],
)
def test_results_built_in_numpy_check_like_devices_memory_too(monkeypatch, call):
    """Issue 40: these build in NumPy, then move to ``like``'s device; a result that fits the
    host but not the device (patched: 1 MiB, nothing allocated) is refused by name first."""
    import posenc._array as arr

    monkeypatch.setattr(arr, "memory_bytes", lambda device=None: 2**40 if device is None else 2**20)
    with pytest.raises(ValueError, match=r"(sizes|layouts) .*MiB.*more than the 1\.0 MiB"):
        call(torch.zeros(1))
    assert call(None).size > 2**16  # NumPy: only the host's memory counts

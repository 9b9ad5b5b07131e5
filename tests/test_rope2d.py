"""2-D RoPE (posenc.rope2d, posenc.torch.RoPEMixed).

Axial: against transformers 5.23's own code -- the patch order captured from a tiny
``PixtralVisionModel`` and ``Qwen2VisionTransformerPretrainedModel`` forward (and
``vision_utils.get_vision_position_ids``), the rotation against ``PixtralVisionRotaryEmbedding`` +
``apply_rotary_pos_emb`` and ``Qwen2VLVisionRotaryEmbedding`` + ``apply_rotary_pos_emb_vision``.
Both form their angles in float32; the comparison is float32: within ``1e-6 * max|x|``. In
bfloat16 they part: Pixtral rounds cos and sin to the input dtype and rotates there, Qwen2-VL
rotates in float32 (the page's two paths, held equal to HF's bit for bit). RoPE-Mixed has no framework code: a loop-by-loop oracle of
the paper's formula (float64, 1e-12) and of its initialisation.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import posenc
from ci_rule import require
from posenc.torch import RoPEMixed

RNG = np.random.default_rng(11)


# --- oracles (slow and obvious) -----------------------------------------------------------------


def oracle_mixed(x, positions, freqs, pairing="interleaved"):
    """x (heads, seq, dim), positions (seq, 2) = (row, col), freqs (heads, dim/2, 2)."""
    heads, seq, dim = x.shape
    out = np.array(x, dtype=np.float64)
    for h in range(heads):
        for s in range(seq):
            row, col = positions[s]
            for k in range(dim // 2):
                angle = row * freqs[h, k, 0] + col * freqs[h, k, 1]
                i, j = (2 * k, 2 * k + 1) if pairing == "interleaved" else (k, k + dim // 2)
                a, b = x[h, s, i], x[h, s, j]
                out[h, s, i] = a * math.cos(angle) - b * math.sin(angle)
                out[h, s, j] = a * math.sin(angle) + b * math.cos(angle)
    return out


def oracle_init(dim, angles, theta):
    """init_random_2d_freqs of naver-ai/rope-vit with the random angle given; (row, col) order."""
    out = np.zeros((len(angles), dim // 2, 2))
    for h, a in enumerate(angles):
        mags = [1 / theta ** (k / dim) for k in range(0, dim, 4)]
        fx = [m * math.cos(a) for m in mags] + [m * math.cos(math.pi / 2 + a) for m in mags]
        fy = [m * math.sin(a) for m in mags] + [m * math.sin(math.pi / 2 + a) for m in mags]
        out[h, :, 0], out[h, :, 1] = fy, fx
    return out


def oracle_positions(height, width, merge):
    """Spatial-merge order, written as loops: blocks row-major, patches row-major inside."""
    out = []
    for br in range(height // merge):
        for bc in range(width // merge):
            for r in range(merge):
                for c in range(merge):
                    out.append((br * merge + r, bc * merge + c))
    return np.array(out, dtype=np.int64).reshape(-1, 2)


# --- transformers pieces, built once ----------------------------------------------------------


@pytest.fixture(scope="module")
def pixtral():
    mp = require("transformers.models.pixtral.modeling_pixtral")
    from transformers import PixtralVisionConfig

    cfg = PixtralVisionConfig(
        hidden_size=32,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        patch_size=2,
        image_size=16,
    )
    torch.manual_seed(0)
    return mp, mp.PixtralVisionModel(cfg).eval()


@pytest.fixture(scope="module")
def qwen():
    mq = require("transformers.models.qwen2_vl.modeling_qwen2_vl")
    from transformers.models.qwen2_vl.configuration_qwen2_vl import Qwen2VLVisionConfig

    cfg = Qwen2VLVisionConfig(
        embed_dim=32, num_heads=2, depth=1, hidden_size=32, mlp_ratio=1, patch_size=2
    )
    torch.manual_seed(0)
    return mq, mq.Qwen2VisionTransformerPretrainedModel(cfg).eval()


def _capture(rotary, run):
    """The position ids the model hands its rotary module."""
    seen = {}

    def hook(module, args):
        seen["pos"] = args[1]

    handle = rotary.register_forward_pre_hook(hook)
    try:
        with torch.no_grad():
            run()
    finally:
        handle.remove()
    return seen["pos"]


def _close32(got, want, x):
    bound = 1e-6 * float(x.abs().max())
    diff = float((got - want).abs().max())
    assert got.dtype == want.dtype and got.shape == want.shape
    assert diff <= bound, (diff, bound)


# --- axial: Pixtral ---------------------------------------------------------------------------


def test_pixtral_patch_order_is_the_models(pixtral):
    mp, model = pixtral
    for h, w in ((4, 6), (3, 5)):
        pix = torch.randn(1, 3, 2 * h, 2 * w)
        pos = _capture(model.patch_positional_embedding, lambda pix=pix: model(pix))
        assert pos.shape == (h * w, 2)
        np.testing.assert_array_equal(
            pos.cpu().numpy(), posenc.rope_2d_positions(h, w, convention="pixtral")
        )


def test_pixtral_rotation_matches_hf(pixtral):
    mp, model = pixtral
    rotary = model.patch_positional_embedding
    # a large grid too: the float32 angles of HF stay within the bound there
    for h, w in ((4, 6), (40, 64)):
        pos = torch.as_tensor(posenc.rope_2d_positions(h, w, convention="pixtral"))
        q = torch.randn(1, 2, h * w, 16)  # (batch, heads, seq, head_dim)
        cos, sin = rotary(q, pos)
        want, _ = mp.apply_rotary_pos_emb(q, q, cos, sin, unsqueeze_dim=0)
        got = posenc.apply_rope_2d(q, pos, convention="pixtral")
        _close32(got, want, q)


def test_pixtral_frequencies_are_hfs_inv_freq(pixtral):
    _, model = pixtral
    inv = model.patch_positional_embedding.inv_freq.double().cpu().numpy()  # (row half, col half)
    f = posenc.rope_2d_frequencies(16, convention="pixtral")
    np.testing.assert_allclose(np.concatenate([f[:4, 0], f[4:, 1]]), inv, rtol=1e-7)
    assert not f[:4, 1].any() and not f[4:, 0].any()


# --- axial: Qwen2-VL --------------------------------------------------------------------------


def test_qwen2_vl_patch_order_is_the_models(qwen):
    mq, model = qwen
    grid = torch.tensor([[2, 4, 6], [1, 2, 2], [1, 6, 4]])  # (t, h, w) per image/video
    n = int(grid.prod(-1).sum())
    patches = torch.randn(n, 3 * 2 * 2 * 2)  # (seq, C * temporal_patch * patch * patch)
    pos = _capture(model.rotary_pos_emb, lambda: model(patches, grid_thw=grid))
    want = np.concatenate([posenc.rope_2d_positions(h, w, frames=t) for t, h, w in grid.tolist()])
    np.testing.assert_array_equal(pos.cpu().numpy(), want)
    vision_utils = require("transformers.vision_utils")
    np.testing.assert_array_equal(vision_utils.get_vision_position_ids(grid, 2).cpu().numpy(), want)


@pytest.mark.parametrize("h, w, m", [(4, 6, 2), (6, 9, 3), (2, 2, 1), (8, 4, 4)])
def test_qwen2_vl_order_matches_loop_oracle(h, w, m):
    got = posenc.rope_2d_positions(h, w, merge_size=m)
    np.testing.assert_array_equal(got, oracle_positions(h, w, m))


def test_qwen2_vl_rotation_matches_hf(qwen):
    mq, model = qwen
    rotary = model.rotary_pos_emb
    for h, w in ((4, 6), (40, 64)):
        pos = torch.as_tensor(posenc.rope_2d_positions(h, w))
        x = torch.randn(h * w, 2, 16)  # HF's vision layout: (seq, heads, head_dim)
        cos, sin = rotary(x, pos)
        want, _ = mq.apply_rotary_pos_emb_vision(x, x, cos, sin)
        got = posenc.apply_rope_2d(x, pos[:, None], convention="qwen2_vl")
        _close32(got, want, x)


def test_qwen2_vl_frequencies_are_hfs_inv_freq(qwen):
    _, model = qwen
    inv = model.rotary_pos_emb.inv_freq.double().cpu().numpy()
    f = posenc.rope_2d_frequencies(16)
    np.testing.assert_allclose(f[:4, 0], inv, rtol=1e-7)
    np.testing.assert_array_equal(f[:4, 0], f[4:, 1])


def test_default_vision_configs_use_base_10000():
    """The page's claim: both vision configs default to rope_theta = 10000 (the default base)."""
    require("transformers")
    from transformers import PixtralVisionConfig
    from transformers.models.qwen2_vl.configuration_qwen2_vl import Qwen2VLVisionConfig

    for cfg in (PixtralVisionConfig(), Qwen2VLVisionConfig()):
        assert cfg.rope_parameters["rope_theta"] == 10000.0


# --- properties and the mixed form --------------------------------------------------------------


@pytest.mark.parametrize("pairing", ["interleaved", "half"])
def test_mixed_matches_loop_oracle(pairing):
    x = RNG.normal(size=(3, 12, 8))
    pos = np.concatenate([posenc.rope_2d_positions(3, 4, convention="pixtral")[:-1], [[2.5, -1]]])
    freqs = RNG.normal(size=(3, 4, 2))
    want = oracle_mixed(x, pos, freqs, pairing)
    got = posenc.apply_rope_mixed(x, pos, freqs, pairing=pairing)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    got_t = posenc.apply_rope_mixed(
        torch.as_tensor(x), torch.as_tensor(pos), torch.as_tensor(freqs), pairing=pairing
    )
    assert got_t.dtype == torch.float64
    np.testing.assert_allclose(got_t.cpu().numpy(), want, rtol=1e-12, atol=1e-12)
    got32 = posenc.apply_rope_mixed(torch.as_tensor(x).float(), pos, freqs, pairing=pairing)
    assert got32.dtype == torch.float32
    np.testing.assert_allclose(got32.cpu().numpy(), want, rtol=0, atol=1e-6 * np.abs(x).max())


@pytest.mark.parametrize("convention", ["qwen2_vl", "pixtral"])
def test_axial_is_mixed_with_the_axial_table(convention):
    x = RNG.normal(size=(2, 24, 16))
    pos = posenc.rope_2d_positions(4, 6, convention=convention)
    f = posenc.rope_2d_frequencies(16, convention=convention, base=100.0)
    got = posenc.apply_rope_2d(x, pos, convention=convention, base=100.0)
    want = oracle_mixed(x, pos, np.broadcast_to(f, (2, 8, 2)), "half")
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kind", ["qwen2_vl", "pixtral", "mixed"])
def test_scores_depend_on_the_2d_offset_only(kind):
    q, k = RNG.normal(size=(2, 1, 1, 16))
    f = posenc.rope_mixed_frequencies(16, np.array([0.7]))

    def rot(x, r, c):
        p = np.array([[r, c]])
        if kind == "mixed":
            return posenc.apply_rope_mixed(x, p, f)
        return posenc.apply_rope_2d(x, p, convention=kind)

    def score(a, b):
        return float((rot(q, *a) * rot(k, *b)).sum())

    base = score((1, 2), (4, 7))
    for dr, dc in ((3, 0), (0, 5), (-2, 9)):
        assert abs(score((1 + dr, 2 + dc), (4 + dr, 7 + dc)) - base) < 1e-12


def test_axial_cannot_tell_diagonals_apart_but_mixed_can():
    """Axial: every pair sees one axis, so q.k(offset) = A(dr) + B(dc) separates; mixed does not."""
    q, k = RNG.normal(size=(2, 1, 1, 16))
    f = posenc.rope_mixed_frequencies(16, np.array([0.7]))

    def score(rot, dr, dc):
        return float((rot(q, np.array([[dr, dc]])) * rot(k, np.array([[0, 0]]))).sum())

    def sep(rot):  # s(1,1) - s(1,0) - s(0,1) + s(0,0): zero when the score is A(dr) + B(dc)
        return score(rot, 1, 1) - score(rot, 1, 0) - score(rot, 0, 1) + score(rot, 0, 0)

    assert abs(sep(posenc.apply_rope_2d)) < 1e-12
    assert abs(sep(lambda x, p: posenc.apply_rope_mixed(x, p, f))) > 1e-3


def test_mixed_init_matches_the_papers_code():
    angles = RNG.uniform(0, 2 * math.pi, size=5)
    for theta in (10.0, 100.0):
        got = posenc.rope_mixed_frequencies(16, angles, theta=theta)
        np.testing.assert_allclose(got, oracle_init(16, angles, theta), rtol=1e-14, atol=1e-15)
        got_t = posenc.rope_mixed_frequencies(16, torch.as_tensor(angles), theta=theta)
        np.testing.assert_allclose(got_t.cpu().numpy(), got, rtol=1e-14, atol=1e-15)


def test_positions_tensor_follows_like():
    like = torch.zeros(1, device="meta")
    out = posenc.rope_2d_positions(4, 4, like=like)
    assert out.device.type == "meta" and out.dtype == torch.int64 and out.shape == (16, 2)


# --- the module ------------------------------------------------------------------------------


def test_module_init_is_the_papers_and_learns():
    torch.manual_seed(3)
    m = RoPEMixed(16, 3)
    torch.manual_seed(3)
    angles = torch.rand(3, dtype=torch.float64) * (2 * math.pi)
    want = oracle_init(16, angles.cpu().numpy(), 10.0)
    np.testing.assert_allclose(m.freqs.detach().double().cpu().numpy(), want, rtol=1e-6, atol=1e-7)
    assert [n for n, _ in m.named_parameters()] == ["freqs"]
    x = torch.randn(2, 3, 9, 16)
    pos = posenc.rope_2d_positions(3, 3, convention="pixtral")
    out = m(x, pos)
    want_out = posenc.apply_rope_mixed(x.double(), pos, m.freqs.detach().double())
    torch.testing.assert_close(out.double(), want_out, rtol=0, atol=1e-6)
    out.square().sum().backward()
    g = m.freqs.grad
    assert g is not None and g.shape == (3, 8, 2) and bool(torch.isfinite(g).all())
    assert float(g.abs().max()) > 0


def test_module_meta_init_then_reset():
    torch.manual_seed(5)
    fresh = RoPEMixed(8, 2, rotate=False)
    with torch.device("meta"):
        m = RoPEMixed(8, 2, rotate=False)
    m = m.to_empty(device=torch.get_default_device())  # where fresh was drawn
    m.reset_parameters()
    torch.testing.assert_close(m.freqs, fresh.freqs, rtol=0, atol=0)


def test_compiles_without_graph_breaks():
    x = torch.randn(2, 12, 8)
    pos = torch.as_tensor(posenc.rope_2d_positions(2, 6))
    fn = torch.compile(
        lambda x, p: posenc.apply_rope_2d(x, p, convention="pixtral"),
        fullgraph=True,
        backend="eager",
    )
    torch.testing.assert_close(fn(x, pos), posenc.apply_rope_2d(x, pos, convention="pixtral"))


def test_a_grid_past_memory_is_refused_before_allocating(monkeypatch):
    """Issue 21: rope_2d_positions(2**20, 2**20) (16 TiB, exactly its 2**40 cap) was NumPy's
    MemoryError; now refused by name, with the size, before allocating."""
    from posenc import _array

    with pytest.raises(ValueError, match=r"^height x width x frames = .* needs 16\.0 TiB"):
        posenc.rope_2d_positions(2**20, 2**20)
    monkeypatch.setitem(_array._MEMORY, "cpu", 2**20)
    assert posenc.rope_2d_positions(64, 128).shape == (8192, 2)  # 128 KiB
    with pytest.raises(ValueError, match=r"frames = 512 x 512 x 1 = 262144 positions needs 4\.0"):
        posenc.rope_2d_positions(512, 512)


def _rotate_half_paths(x, pos, convention):
    """rope-2d.md's two bfloat16 paths: cos/sin rounded to x's dtype and the rotation there
    (Pixtral), or everything in float32 and one rounding (Qwen2-VL)."""
    tab = torch.as_tensor(posenc.rope_2d_frequencies(x.shape[-1], convention=convention))
    angle = torch.as_tensor(pos).float() @ tab.float().T
    cos, sin = torch.cat([angle.cos()] * 2, -1), torch.cat([angle.sin()] * 2, -1)

    def rotate(v, c, s):
        a, b = v.chunk(2, dim=-1)
        return v * c + torch.cat([-b, a], -1) * s

    low = rotate(x, cos.to(x.dtype), sin.to(x.dtype))
    high = rotate(x.float(), cos, sin).to(x.dtype)
    return low, high


def test_pixtral_rotates_in_the_input_dtype_qwen2_vl_in_float32(pixtral, qwen):
    """The page's bfloat16 claim, against HF's own code, bit for bit."""
    mp, model = pixtral
    mq, qmodel = qwen
    h, w = 8, 12
    x = torch.randn(2, h * w, 16).to(torch.bfloat16)  # (heads, seq, dim)
    pos = posenc.rope_2d_positions(h, w, convention="pixtral")
    cos, sin = model.patch_positional_embedding(x, torch.as_tensor(pos))
    assert cos.dtype == torch.bfloat16
    hf, _ = mp.apply_rotary_pos_emb(x[None], x[None], cos, sin, unsqueeze_dim=0)
    low, high = _rotate_half_paths(x, pos, "pixtral")
    assert torch.equal(hf[0], low) and not torch.equal(low, high)
    qpos = posenc.rope_2d_positions(h, w)
    xq = x.transpose(0, 1)  # HF's vision layout (seq, heads, dim)
    qcos, qsin = qmodel.rotary_pos_emb(xq, torch.as_tensor(qpos))
    assert qcos.dtype == torch.float32
    hq, _ = mq.apply_rotary_pos_emb_vision(xq, xq, qcos, qsin)
    _, qhigh = _rotate_half_paths(x, qpos, "qwen2_vl")
    assert torch.equal(hq, qhigh.transpose(0, 1))


def _small_device(monkeypatch, limit=2**20):
    """A machine of 1 TiB whose tensor device holds ``limit`` bytes (patched: nothing is
    allocated), to tell the device's check from the host's."""
    import posenc._array as arr

    monkeypatch.setattr(arr, "memory_bytes", lambda device=None: 2**40 if device is None else limit)


def test_rope_2d_positions_checks_like_devices_memory_too(monkeypatch):
    """Issue 40: the positions are built in NumPy and moved to ``like``'s device; a result that
    fits the host but not the device is refused by name before it is built."""
    _small_device(monkeypatch)
    with pytest.raises(ValueError, match=r"^height x width x frames = 512 x 512 x 1 .*4\.0 MiB"):
        posenc.rope_2d_positions(512, 512, like=torch.zeros(1))
    assert posenc.rope_2d_positions(512, 512).shape == (512 * 512, 2)  # NumPy: the host's


def test_rope_mixed_frequencies_checks_the_angles_device(monkeypatch):
    _small_device(monkeypatch)
    with pytest.raises(ValueError, match=r"^dim=1024 for 256 angles"):
        posenc.rope_mixed_frequencies(1024, torch.zeros(256))
    assert posenc.rope_mixed_frequencies(1024, np.zeros(256)).shape == (256, 512, 2)

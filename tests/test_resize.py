"""posenc.resize_position_embeddings: against transformers' ViT, CLIP and SigLIP
interpolate_pos_encoding (tiny random configs, bit for bit), and against F.interpolate's rules."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import posenc
from ci_rule import require

pytestmark = pytest.mark.values


@pytest.fixture(scope="module")
def tf():
    return require("transformers")


@pytest.fixture(scope="module")
def vit(tf):
    from transformers import ViTConfig
    from transformers.models.vit.modeling_vit import ViTEmbeddings

    config = ViTConfig(image_size=16, patch_size=4, hidden_size=8, num_channels=3)
    torch.manual_seed(0)
    emb = ViTEmbeddings(config).eval()
    with torch.no_grad():
        emb.position_embeddings.normal_()
        emb.cls_token.normal_()
    return emb


@pytest.fixture(scope="module")
def clip(tf):
    from transformers import CLIPVisionConfig
    from transformers.models.clip.modeling_clip import CLIPVisionEmbeddings

    config = CLIPVisionConfig(
        image_size=12, patch_size=3, hidden_size=8, num_channels=3, num_attention_heads=2
    )
    torch.manual_seed(1)
    return CLIPVisionEmbeddings(config).double().eval()


@pytest.mark.parametrize(("height", "width"), [(32, 32), (24, 40), (8, 12), (20, 16)])
def test_vit_equals_transformers(vit, height, width):
    table = vit.position_embeddings.detach()  # (1, 1 + 16, 8), float32
    with torch.no_grad():
        pixels = torch.randn(2, 3, height, width)
        got = posenc.resize_position_embeddings(table, (height // 4, width // 4))
        grid = (height // 4) * (width // 4)
        want = vit.interpolate_pos_encoding(torch.zeros(1, 1 + grid, 8), height, width)
        assert got.shape == (1, 1 + grid, 8) and got.dtype == torch.float32
        assert torch.equal(got, want)  # bit for bit
        # the embeddings the model computes with interpolate_pos_encoding=True
        out = vit(pixels, interpolate_pos_encoding=True)
        patches = vit.patch_embeddings(pixels)
        start = torch.cat((vit.cls_token.expand(2, -1, -1), patches), dim=1)
        assert torch.equal(out, start + got)
        # the class token row is kept as it is
        assert torch.equal(got[:, 0], table[:, 0])


@pytest.mark.parametrize(("height", "width"), [(24, 24), (18, 30), (6, 6)])
def test_clip_equals_transformers(clip, height, width):
    table = clip.position_embedding.weight.detach()  # (1 + 16, 8), float64
    with torch.no_grad():
        pixels = torch.randn(2, 3, height, width, dtype=torch.float64)
        got = posenc.resize_position_embeddings(table, (height // 3, width // 3))
        assert got.dtype == torch.float64 and got.ndim == 2
        out = clip(pixels, interpolate_pos_encoding=True)
        patches = clip.patch_embedding(pixels).flatten(2).transpose(1, 2)
        start = torch.cat((clip.class_embedding.expand(2, 1, -1), patches), dim=1)
        assert torch.equal(out, start + got[None])
        # NumPy in, NumPy out: the NumPy path runs torch's CPU kernel, so it equals a CPU table's
        # result bit for bit. On another device (the cuda leg) interpolate's kernel sums the taps
        # in another order: the device result is the same to float64 rounding, not bit for bit.
        got_np = posenc.resize_position_embeddings(table.cpu().numpy(), (height // 3, width // 3))
        on_cpu = posenc.resize_position_embeddings(table.cpu(), (height // 3, width // 3))
        assert isinstance(got_np, np.ndarray) and np.array_equal(got_np, on_cpu.numpy())
        np.testing.assert_allclose(got_np, got.cpu().numpy(), rtol=0, atol=1e-12)


def test_siglip_equals_transformers(tf):
    from transformers import SiglipVisionConfig
    from transformers.models.siglip.modeling_siglip import SiglipVisionEmbeddings

    config = SiglipVisionConfig(
        image_size=12, patch_size=3, hidden_size=8, num_channels=3, num_attention_heads=2
    )
    torch.manual_seed(2)
    emb = SiglipVisionEmbeddings(config).eval()
    table = emb.position_embedding.weight.detach()  # (16, 8): no class token
    with torch.no_grad():
        want = emb.interpolate_pos_encoding(torch.zeros(1, 35, 8), 15, 21)
    got = posenc.resize_position_embeddings(table[None], (5, 7), num_prefix_tokens=0)
    assert torch.equal(got, want)


def test_same_grid_is_identity_and_1d_is_interpolate():
    table = torch.randn(1 + 25, 6, dtype=torch.float64)
    assert torch.equal(posenc.resize_position_embeddings(table, (5, 5)), table)
    text = torch.randn(10, 6, dtype=torch.float64)
    got = posenc.resize_position_embeddings(text, 17, num_prefix_tokens=0, mode="bilinear")
    want = torch.nn.functional.interpolate(
        text.T[None], size=17, mode="linear", align_corners=False
    )[0].T
    torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-12)


def test_options_change_the_result():
    table = torch.randn(1 + 64, 4, dtype=torch.float64)
    base = posenc.resize_position_embeddings(table, (4, 4))
    for kw in ({"align_corners": True}, {"antialias": True}, {"mode": "bilinear"}):
        other = posenc.resize_position_embeddings(table, (4, 4), **kw)
        assert not torch.allclose(other[1:], base[1:])
        assert torch.equal(other[0], base[0])  # the class token is never resampled


def test_non_square_needs_old_grid():
    table = torch.randn(1 + 3 * 5, 4)
    with pytest.raises(ValueError, match="old_grid"):
        posenc.resize_position_embeddings(table, (6, 10))
    out = posenc.resize_position_embeddings(table, (6, 10), old_grid=(3, 5))
    assert out.shape == (61, 4)
    # rows and columns are not interchangeable: the wrong old_grid gives other values
    other = posenc.resize_position_embeddings(table, (6, 10), old_grid=(5, 3))
    assert not torch.allclose(out, other)


def test_big_endian_table_is_read_in_native_order():
    """Issue 21: a big-endian NumPy table gave torch's byte-order error (table not named); it is
    resized as its native-order copy and comes back in its own dtype."""
    table = np.random.default_rng(0).normal(size=(1 + 16, 8))
    for dtype in (">f4", ">f8"):
        got = posenc.resize_position_embeddings(table.astype(dtype), (3, 5), old_grid=(4, 4))
        want = posenc.resize_position_embeddings(
            table.astype(dtype.replace(">", "=")), (3, 5), old_grid=(4, 4)
        )
        assert got.dtype == np.dtype(dtype) and np.array_equal(got, want)


def test_a_result_past_memory_is_refused_before_allocating(monkeypatch):
    """Issue 21: new_grid=(2**20, 2**20) was an allocator error (32 TiB); refused by name with the
    size. The limit is the device's memory (monkeypatched here to 1 MiB: deterministic)."""
    from posenc import _array

    t = torch.zeros(1 + 16, 8)
    with pytest.raises(ValueError, match=r"^new_grid \(1048576, 1048576\) .* needs 32\.0 TiB"):
        posenc.resize_position_embeddings(t, (2**20, 2**20))
    key = str(t.device) if t.device.type == "cuda" else t.device.type  # _array's key per device
    monkeypatch.setitem(_array._MEMORY, key, 2**20)
    assert posenc.resize_position_embeddings(t, (90, 90)).shape == (1 + 8100, 8)  # 259 KiB
    with pytest.raises(ValueError, match=r"needs 1\.2 MiB for its result, more than the 1\.0 MiB"):
        posenc.resize_position_embeddings(t, (200, 200))
    # the meta device holds no values: no limit
    assert posenc.resize_position_embeddings(t.to("meta"), (2**20, 2**20)).shape == (2**40 + 1, 8)


def test_siglip2_is_bilinear_with_antialias(tf):
    """resize.md: SigLIP2 resamples bilinear, align_corners=False, antialias=True."""
    from transformers.models.siglip2.modeling_siglip2 import Siglip2VisionEmbeddings

    torch.manual_seed(3)
    grid = torch.randn(6, 6, 8)  # (height, width, dim) as SigLIP2 holds it
    for h, w in ((9, 4), (3, 5), (6, 6)):
        want = Siglip2VisionEmbeddings.resize_positional_embeddings(
            grid, torch.tensor([[h, w]]), max_length=h * w
        )[0]
        got = posenc.resize_position_embeddings(
            grid.reshape(1, 36, 8), (h, w), num_prefix_tokens=0, mode="bilinear", antialias=True
        )[0]
        torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-6)


def test_qwen3_vl_gathers_bilinear_align_corners_every_forward(tf):
    """resize.md: Qwen3-VL's vision encoder resamples its square table to each image's grid,
    bilinear with align_corners=True, as gather indices and weights (raster order here)."""
    from transformers.vision_utils import get_vision_interpolation_indices_and_weights

    torch.manual_seed(4)
    side, dim = 6, 5
    table = torch.randn(side * side, dim, dtype=torch.float64)
    for h, w in ((4, 10), (9, 7)):
        idx, wts = get_vision_interpolation_indices_and_weights(
            torch.tensor([[1, h, w]]), side, mode="bilinear", align_corners=True
        )
        want = (table[idx] * wts[..., None].double()).sum(1)
        got = posenc.resize_position_embeddings(
            table[None], (h, w), num_prefix_tokens=0, mode="bilinear", align_corners=True
        )[0]
        torch.testing.assert_close(got, want, rtol=0, atol=1e-6)  # HF's weights are float32


def test_dinov2_resizes_in_float32_and_casts_back(tf):
    """resize.md: DINOv2 upcasts to float32 for the bicubic and casts the result back."""
    from transformers import Dinov2Config
    from transformers.models.dinov2.modeling_dinov2 import Dinov2Embeddings

    config = Dinov2Config(image_size=16, patch_size=4, hidden_size=8, num_channels=3)
    torch.manual_seed(5)
    emb = Dinov2Embeddings(config).eval().to(torch.bfloat16)
    table = emb.position_embeddings.detach()  # (1, 1 + 16, 8), bfloat16
    with torch.no_grad():
        want = emb.interpolate_pos_encoding(torch.zeros(1, 37, 8, dtype=torch.bfloat16), 24, 24)
    got = posenc.resize_position_embeddings(table.float(), (6, 6)).to(torch.bfloat16)
    assert torch.equal(got, want)

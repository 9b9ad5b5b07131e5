"""posenc.torch modules under torch.compile(fullgraph=True) and torch.export (issue 8).

``fullgraph=True`` turns any graph break into an error, so each call below passing is the test
that the module traces as one graph. The ``eager`` backend is enough for that (it runs the
captured graph with the ordinary kernels; inductor's speed is measured in ``python -m bench
--only compile``). Results must equal eager within float32 rounding. The compiled callables are
built once per module (module-scoped fixtures) and the shapes are small, to keep this fast.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import posenc
import seeded
from posenc.torch import (
    LearnedPositionalEmbedding,
    RotaryEmbedding,
    SinusoidalPositionalEncoding,
    T5RelativeBias,
)

pytestmark = [pytest.mark.values, pytest.mark.filterwarnings("ignore::UserWarning")]

MAX_LEN = 16


def _compile(fn):
    return torch.compile(fn, fullgraph=True, backend="eager")


def _randn(*shape, seed=0, dtype=torch.float32):
    return seeded.randn(
        shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64
    ).to(dtype)


def _close(got, want, atol=1e-6):
    if isinstance(want, tuple):
        for g, w in zip(got, want, strict=True):
            _close(g, w, atol)
        return
    assert got.dtype == want.dtype and got.shape == want.shape
    torch.testing.assert_close(got.detach(), want.detach(), atol=atol, rtol=0)


@pytest.fixture(scope="module")
def cpu():
    # a CPU module whatever --device says (compile is tested on the CPU); a fresh dynamo cache,
    # and an error, not a silent eager fallback, if a frame recompiles past the limit
    torch._dynamo.reset()
    with torch.device("cpu"), torch._dynamo.config.patch(fail_on_recompile_limit_hit=True):
        yield
    torch._dynamo.reset()


def test_each_module_call_is_captured_as_one_graph(cpu):
    """The calls below run compiled code, not an eager fallback: one frame, one graph, ops in it."""
    from torch._dynamo.testing import CompileCounter

    rope = RotaryEmbedding(16, max_len=MAX_LEN)
    calls = {
        "rope positions": (
            lambda q, p: rope(q, q, positions=p),
            (_randn(2, 4, 16), torch.arange(4)),
        ),
        "rope offset": (lambda q: rope(q, q, offset=40), (_randn(2, 4, 16),)),
        "sinusoidal": (SinusoidalPositionalEncoding(16, max_len=MAX_LEN), (_randn(2, 4, 16),)),
        "learned": (LearnedPositionalEmbedding(MAX_LEN, 16), (_randn(2, 4, 16),)),
        "t5": (T5RelativeBias(2), (3, 5)),
    }
    for name, (fn, args) in calls.items():
        counter = CompileCounter()
        torch.compile(fn, fullgraph=True, backend=counter)(*args)
        assert counter.frame_count == 1 and counter.op_count > 0, (
            name,
            counter.frame_count,
            counter.op_count,
        )


# --- RotaryEmbedding ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def rope(cpu):
    module = RotaryEmbedding(16, max_len=MAX_LEN, pairing="half")
    return (
        module,
        _compile(module),
        _compile(lambda q, k, positions: module(q, k, positions=positions)),
    )


@pytest.mark.parametrize("offset", [0, 5, 12, 40], ids=["start", "inside", "runs-past", "far-past"])
def test_rope_offset(rope, offset):
    module, compiled, _ = rope
    q, k = _randn(2, 3, 4, 16), _randn(2, 1, 4, 16, seed=1)
    _close(compiled(q, k, offset=offset), module(q, k, offset=offset))
    pos = torch.arange(offset, offset + 4)
    _close(compiled(q, k, offset=offset)[0], posenc.apply_rope(q, pos, pairing="half"))


@pytest.mark.parametrize(
    "positions",
    [
        torch.arange(4),  # inside the cache (eager looks it up; traced: computed)
        torch.arange(MAX_LEN - 2, MAX_LEN + 2),  # runs past max_len
        torch.tensor([[0, 1, 2, 3], [100, 101, 102, 103]]),  # per-batch ids, half far past
        torch.tensor([-3, 0, 7, 2**20]),  # negative and far
        torch.arange(4, dtype=torch.uint8) + 9,  # uint8: positions, never a mask
        torch.tensor([0.5, 1.5, 2.25, 40.0]),  # fractional
    ],
    ids=["inside", "past-max-len", "per-batch", "negative-far", "uint8", "float"],
)
def test_rope_positions_tensor(rope, positions):
    module, _, with_positions = rope
    positions = positions.cpu()  # built at import, on the default device; compiled on the CPU
    q, k = _randn(2, 3, 4, 16), _randn(2, 1, 4, 16, seed=1)
    _close(with_positions(q, k, positions), module(q, k, positions=positions))
    _close(with_positions(q, k, positions)[1], posenc.apply_rope(k, positions, pairing="half"))


def test_rope_dtypes_and_gradients(rope):
    module, compiled, _ = rope
    q64 = _randn(1, 2, 4, 16, dtype=torch.float64)
    _close(compiled(q64, q64, offset=3), module(q64, q64, offset=3), atol=1e-13)
    qh = _randn(1, 2, 4, 16, dtype=torch.bfloat16)
    got, want = compiled(qh, qh, offset=3), module(qh, qh, offset=3)
    assert all(g.dtype == torch.bfloat16 for g in got)
    _close(got, want, atol=float(want[0].abs().max()) * 2**-8)  # one bfloat16 unit at most
    q = _randn(1, 2, 4, 16).requires_grad_()
    k = _randn(1, 2, 4, 16, seed=1)
    (compiled(q, k, offset=20)[0] * k).sum().backward()
    grad, q.grad = q.grad, None
    (module(q, k, offset=20)[0] * k).sum().backward()
    _close(grad, q.grad)


@pytest.mark.parametrize("pairing,rotary_dim", [("interleaved", None), ("interleaved", 8)])
def test_rope_interleaved_and_partial(cpu, pairing, rotary_dim):
    module = RotaryEmbedding(16, max_len=MAX_LEN, pairing=pairing, rotary_dim=rotary_dim)
    compiled = _compile(lambda q, p: module(q, q, positions=p))
    q = _randn(2, 4, 16)
    for p in (torch.arange(4), torch.arange(30, 34)):
        _close(compiled(q, p), module(q, q, positions=p))


def test_rope_dynamic_shapes(cpu):
    module = RotaryEmbedding(16, max_len=MAX_LEN)
    compiled = torch.compile(module, fullgraph=True, backend="eager", dynamic=True)
    for seq, offset in ((3, 0), (5, 2), (7, 30)):
        q = _randn(1, 2, seq, 16, seed=seq)
        _close(compiled(q, q, offset=offset), module(q, q, offset=offset))


def test_rope_export_with_positions_tensor(rope):
    module, _, _ = rope
    q, k = _randn(2, 3, 4, 16), _randn(2, 1, 4, 16, seed=1)
    program = torch.export.export(module, (q, k), {"positions": torch.arange(4)})
    exported = program.module()
    # the exported graph holds no assumption about the traced positions' values
    for positions in (
        torch.arange(4),
        torch.arange(MAX_LEN - 1, MAX_LEN + 3),
        torch.tensor([9, 0, 2**16, 3]),
    ):
        _close(exported(q, k, positions=positions), module(q, k, positions=positions))


# --- SinusoidalPositionalEncoding ---------------------------------------------------------------


@pytest.fixture(scope="module")
def sinusoidal(cpu):
    module = SinusoidalPositionalEncoding(16, max_len=MAX_LEN)
    return module, _compile(module)


@pytest.mark.parametrize("offset", [0, 6, 14, -3])
def test_sinusoidal_offset(sinusoidal, offset):
    module, compiled = sinusoidal
    x = _randn(2, 4, 16)
    _close(compiled(x, offset=offset), module(x, offset=offset))
    _close(compiled(x, offset=offset), x + posenc.sinusoidal(torch.arange(offset, offset + 4), 16))


def test_sinusoidal_export(sinusoidal):
    module, _ = sinusoidal
    x = _randn(2, 4, 16)
    exported = torch.export.export(module, (x,)).module()
    _close(exported(x), module(x))


# --- LearnedPositionalEmbedding -----------------------------------------------------------------


@pytest.fixture(scope="module")
def learned(cpu):
    torch.manual_seed(0)
    module = LearnedPositionalEmbedding(MAX_LEN, 16, padding_idx=1)
    return module, _compile(module), _compile(lambda x, positions: module(x, positions=positions))


def test_learned_offset_and_positions(learned):
    module, compiled, with_positions = learned
    x = _randn(2, 4, 16)
    _close(compiled(x, offset=3), module(x, offset=3), atol=0)
    positions = torch.tensor([[0, 1, 2, 3], [15, 14, 0, 0]])
    _close(with_positions(x, positions), module(x, positions=positions), atol=0)
    _close(with_positions(x, positions.to(torch.uint8)), module(x, positions=positions), atol=0)


def test_learned_out_of_range_still_refused_when_compiled(learned):
    _, _, with_positions = learned
    x = _randn(1, 2, 16)
    # eager raises PositionOutOfRangeError; traced, the same test runs in the graph
    for bad in (torch.tensor([0, MAX_LEN]), torch.tensor([-1, 0])):
        with pytest.raises(RuntimeError, match=rf"positions must lie in 0 \.\. {MAX_LEN - 1}"):
            with_positions(x, bad)


# --- T5RelativeBias -----------------------------------------------------------------------------


@pytest.mark.parametrize("bidirectional", [True, False])
def test_t5_bias(cpu, bidirectional):
    module = T5RelativeBias(4, bidirectional=bidirectional, num_buckets=16, max_distance=20)
    compiled = _compile(module)
    for q_len, k_len, offset in ((3, 5, 0), (1, 9, 100)):
        _close(compiled(q_len, k_len, offset=offset), module(q_len, k_len, offset=offset), atol=0)


# --- the inductor bench merges its section into bench.json ----------------------------------------


# --- AxialPositionEmbedding, and number arguments that change between calls (issue 21) -----------


def test_axial_module_compiles_with_an_int_count_and_exports(cpu):
    """An int count gave 'Unsupported ndarray attribute access' under fullgraph (a NumPy arange
    traced); the count now becomes a tensor arange on the weights' device."""
    from posenc.torch import AxialPositionEmbedding

    torch.manual_seed(0)
    module = AxialPositionEmbedding((4, 8), (3, 5))
    compiled = _compile(module)
    for n in (10, 32):
        _close(compiled(n), module(n))
    _close(module(10), module(torch.arange(10)))
    positions = torch.tensor([[0, 9], [31, 8]])
    exported = torch.export.export(module, (positions,)).module()
    _close(exported(torch.tensor([[3, 4], [30, 1]])), module(torch.tensor([[3, 4], [30, 1]])))


NUMBER_ARGUMENTS = {  # one of each path: check_scalar, a scaling dict, another constant ladder
    "apply_rope-base": (lambda x, v: posenc.apply_rope(x, 4, base=v), (1e4, 5e5)),
    "apply_rope-factor": (
        lambda x, v: posenc.apply_rope(x, 4, scaling={"rope_type": "linear", "factor": v}),
        (2.0, 4.0),
    ),
    "sinusoidal-base": (
        lambda x, v: posenc.sinusoidal(torch.arange(4), 8, base=v, dtype=torch.float64),
        (1e4, 5e5),
    ),
}


@pytest.mark.parametrize("case", list(NUMBER_ARGUMENTS))
def test_a_changed_number_argument_recompiles_without_a_graph_break(cpu, case):
    """A compiled function taking base or a scaling factor as an argument failed under fullgraph
    once the value changed: dynamo retraces a changed number as symbolic, which math.isfinite (in
    check_scalar) and the traced-constant frequency ladder cannot take. Now each value is made
    static: one frame per distinct value, the same results as eager."""
    from torch._dynamo.testing import CompileCounter

    fn, values = NUMBER_ARGUMENTS[case]
    counter = CompileCounter()
    compiled = torch.compile(fn, fullgraph=True, backend=counter)
    x = _randn(1, 4, 8, dtype=torch.float64)
    for v in (*values, values[0]):
        _close(compiled(x, v), fn(x, v), atol=1e-12)
    assert counter.frame_count == len(values), counter.frame_count


def test_compile_bench_merges_its_section_and_keeps_the_others(tmp_path):
    import json
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from bench.compile import KEY, merge_into

    path = tmp_path / "bench.json"
    path.write_text(
        json.dumps({"cases": [{"id": "rope-torch"}], "compile": {"old": True}}), encoding="utf-8"
    )
    merge_into(path, {"id": KEY, "rows": [{"name": "m", "ratio": 0.5}]}, {"quick": True})
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["cases"] == [{"id": "rope-torch"}]  # other sections untouched
    assert data[KEY] == {
        "quick": True,
        "id": KEY,
        "rows": [{"name": "m", "ratio": 0.5}],
    }  # replaced


# --- posenc.hf.Scheme.rotate with dynamic and LongRoPE scaling (issue 21, item 21) ---------------

HF_BASE = {
    "model_type": "llama",
    "hidden_size": 64,
    "num_attention_heads": 4,
    "num_hidden_layers": 2,
}
HF_SCALED = {
    "dynamic": {**HF_BASE, "max_position_embeddings": 16,
                "rope_scaling": {"rope_type": "dynamic", "factor": 2.0}},
    "longrope": {**HF_BASE, "model_type": "phi3", "max_position_embeddings": 64,
                 "original_max_position_embeddings": 16,
                 "rope_scaling": {"rope_type": "longrope",
                                  "short_factor": [1.0 + i / 10 for i in range(8)],
                                  "long_factor": [2.0 + i for i in range(8)]}},
}  # fmt: skip
HF_IDS = ([[-4, -3, -2, -1]], [[0, 1, 2, 3]], [[12, 13, 14, 15]], [[20, 21, 22, 30]])


@pytest.mark.parametrize("rope_type", list(HF_SCALED))
def test_scheme_rotate_with_a_length_dependent_scaling_compiles_and_exports(cpu, rope_type):
    """``int(ids.max()) + 1`` stopped both (a Python int from the data): the choice between the
    trained and the grown frequencies is now a torch.where in the graph. One graph serves ids
    below, at and past the trained length 16; the results equal eager's."""
    from torch._dynamo.testing import CompileCounter

    import posenc.hf

    scheme = posenc.hf.describe(HF_SCALED[rope_type])
    q = _randn(1, 2, 4, 16)
    counter = CompileCounter()
    compiled = torch.compile(lambda x, p: scheme.rotate(x, p), fullgraph=True, backend=counter)
    for ids in HF_IDS:
        p = torch.tensor(ids)
        _close(compiled(q, p), scheme.rotate(q, p))
    assert counter.frame_count == 1, counter.frame_count

    class Rotate(torch.nn.Module):
        def forward(self, x, position_ids):
            return scheme.rotate(x, position_ids)

    exported = torch.export.export(Rotate(), (q, torch.tensor(HF_IDS[1]))).module()
    for ids in HF_IDS:
        p = torch.tensor(ids)
        _close(exported(q, p), scheme.rotate(q, p))
    # eager refuses an id of 2**53 or more by name; in the graph the same test raises
    with pytest.raises(RuntimeError, match=r"position_ids must be < 2\*\*53"):
        compiled(q, torch.tensor([[0, 1, 2, 2**53]]))


# --- kv-cache and hybrid functions (issue 40, item 6) ---------------------------------------------

VALUE_CHECKED = {  # each read tensor values in a check: a data-dependent guard under fullgraph
    "rerotate_keys": (
        lambda k, a, b: posenc.rerotate_keys(k, a, b, pairing="half"),
        lambda: (_randn(2, 4, 8), torch.arange(4) + 9, torch.tensor([0, 1, 2, 3])),
    ),
    "rerotate_keys-float": (
        posenc.rerotate_keys,
        lambda: (_randn(2, 4, 8), torch.arange(4), torch.tensor([0.5, 1.0, 2**40, -3.0])),
    ),
    "sink_softmax": (
        posenc.sink_softmax,
        lambda: (_randn(1, 3, 2, 4), torch.tensor([0.5, -1.0, 1e39], dtype=torch.float64)),
    ),
    "sink_softmax-numpy-sinks": (  # a NumPy constant: dynamo traces no ndarray.dtype
        lambda s: posenc.sink_softmax(s, np.array([0.5, -1.0, 1e39])),
        lambda: (_randn(1, 3, 2, 4),),
    ),
    "forgetting_bias": (
        posenc.forgetting_bias,
        lambda: (torch.nn.functional.logsigmoid(_randn(2, 5)),),
    ),
    "stick_breaking_weights": (posenc.stick_breaking_weights, lambda: (_randn(2, 4, 4),)),
    "path_scores": (
        posenc.path_scores,
        lambda: (_randn(4, 3), _randn(4, 3, seed=1), _randn(4, 3, seed=2), _randn(4, seed=3)),
    ),
}


@pytest.mark.parametrize("name", list(VALUE_CHECKED))
def test_value_checked_functions_compile_as_one_graph(cpu, name):
    """rerotate_keys (a range test by .item()), sink_softmax (finite sinks), forgetting_bias,
    stick_breaking_weights and path_scores (finite inputs) broke fullgraph on a data-dependent
    guard; the value checks now skip under tracing (rerotate_keys' range test runs in the
    graph). One frame, the same results as eager."""
    from torch._dynamo.testing import CompileCounter

    fn, args = VALUE_CHECKED[name]
    counter = CompileCounter()
    compiled = torch.compile(fn, fullgraph=True, backend=counter)
    _close(compiled(*args()), fn(*args()))
    assert counter.frame_count == 1 and counter.op_count > 0, counter.frame_count


def test_rerotate_keys_range_check_runs_in_the_graph(cpu):
    """Compiled, an int position past 2**52 is still refused (in the graph: a RuntimeError with
    eager's message), not silently moved by a wrapped difference."""
    compiled = _compile(posenc.rerotate_keys)
    k = _randn(1, 2, 8)
    _close(
        compiled(k, torch.tensor([0, 1]), torch.tensor([5, 6])),
        posenc.rerotate_keys(k, 2, torch.tensor([5, 6])),
    )
    with pytest.raises(RuntimeError, match=r"to_positions must lie within \+-2\*\*52"):
        compiled(k, torch.tensor([0, 1]), torch.tensor([5, 2**60]))

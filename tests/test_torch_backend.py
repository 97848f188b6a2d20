"""``torch.compile(model, backend="fuser")`` on the CPU: ATen graphs (forward and
backward, through AOTAutograd) partitioned into fuser fusions, run by the reference
interpreter; the rest stays in torch. Training steps of an MLP, a tiny Hugging Face
GPT-2 and a tiny Llama match eager torch (loss and every gradient), the report says
what ran where, and a partition fuser cannot translate falls back to torch."""

from __future__ import annotations

import copy
from typing import Any

import pytest

torch = pytest.importorskip("torch")

import fuser  # noqa: E402
from benchmarks import model_families  # noqa: E402
from fuser.frontend import torch_backend, torch_graph  # noqa: E402
from tests import backend_cases as cases  # noqa: E402


class _Block(torch.nn.Module):
    """linear + tanh GELU, linear, residual, layer norm, softmax."""

    def __init__(self) -> None:
        super().__init__()
        self.l1 = torch.nn.Linear(16, 32)
        self.l2 = torch.nn.Linear(32, 16)
        self.ln = torch.nn.LayerNorm(16)

    def forward(self, x: Any) -> Any:
        h = torch.nn.functional.gelu(self.l1(x), approximate="tanh")
        return torch.softmax(self.ln(self.l2(h) + x), -1)


@pytest.fixture(autouse=True)
def _fresh_dynamo() -> Any:
    torch._dynamo.reset()  # noqa: SLF001
    yield
    torch._dynamo.reset()  # noqa: SLF001


def test_training_step_of_an_mlp_block_matches_eager(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FUSER_BACKEND_CHECK", "1")  # every partition also against torch
    torch.manual_seed(0)
    ref = _Block()
    ours = copy.deepcopy(ref)
    compiled = torch.compile(ours, backend="fuser")  # the entry point's name
    x = torch.randn(8, 16)
    y_ref, y = ref(x), compiled(x)
    torch.testing.assert_close(y, y_ref, rtol=1e-5, atol=1e-6)
    y_ref.square().sum().backward()
    y.square().sum().backward()
    cases.grads_match(ref, ours)


def test_report_shows_partitions_and_fallbacks() -> None:
    torch.manual_seed(0)
    report = fuser.explain(_Block(), torch.randn(8, 16), backward=True)
    kinds = [g.kind for g in report.graphs]
    assert kinds == ["forward", "backward"]
    forward, backward = report.graphs
    # The forward is all fuser: two linears (cuBLAS segments inside the fusions), the
    # decomposed GELU, layer norm and softmax.
    assert "aten.addmm.default" in forward.fuser_ops and "aten.var_mean.correction" in forward.fuser_ops
    assert "aten.tanh.default" in forward.fuser_ops and "aten.amax.default" in forward.fuser_ops
    assert forward.torch_ops == [] and forward.fallbacks == []
    assert "aten.mm.default" in backward.fuser_ops
    text = str(report)
    assert text.startswith("graph 0 (forward: ") and "fuser partition 0: " in text


def test_unsupported_ops_stay_in_torch_with_a_reason() -> None:
    def f(x: Any, idx: Any) -> Any:
        return torch.nn.functional.embedding(idx, x).sum(-1) * 2.0

    x, idx = torch.randn(10, 4), torch.tensor([[1, 2], [3, 9]])
    report = fuser.explain(f, x, idx)
    (graph,) = report.graphs
    assert ("aten.embedding.default", "no fuser equivalent") in graph.torch_ops
    assert graph.partitions and "aten.sum.dim_IntList" in graph.fuser_ops
    compiled = torch.compile(f, backend="fuser")
    torch.testing.assert_close(compiled(x, idx), f(x, idx))


@pytest.mark.parametrize("case", sorted(cases.OP_CASES))
def test_ops_of_real_models_run_in_fuser(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The ATen ops that most often stayed in torch in tiny Hugging Face models (rotary
    halves' backward, GPT-J's step-2 slices, masks, ``split``, new tensors, SDPA's
    safe softmax, boolean masks): each runs in a fuser partition, whose every output
    (``FUSER_BACKEND_CHECK``) and every gradient match torch."""
    monkeypatch.setenv("FUSER_BACKEND_CHECK", "1")
    cases.run_op_case(case, "cpu")


def test_a_partition_of_new_tensors_only_runs_where_its_trace_is() -> None:
    """A partition without inputs (``torch.ones`` feeding an op fuser does not run)
    runs in fuser on the device of its traced values: here the CPU, torch tensors out."""

    def f(x: Any) -> Any:
        return torch.cumsum(torch.ones(4, 8) * 2.0, 0) + x

    x = torch.randn(4, 8)
    report = fuser.explain(f, x)
    (graph,) = report.graphs
    assert ["aten.ones.default", "aten.mul.Tensor"] in graph.partitions
    assert not [op for op, why in graph.torch_ops if why == torch_backend.NEW_TENSORS_ONLY]
    torch.testing.assert_close(torch.compile(f, backend="fuser")(x), f(x))


def test_a_partition_without_inputs_takes_its_traced_device() -> None:
    """The device a partition without inputs runs on is its nodes' traced device: a
    graph traced on the ``meta`` device (standing for a GPU: no GPU needed) gives its
    ``FuserPartition`` ``device = "meta:0"``; the GPU case runs in
    tests/gpu/test_gpu_torch_backend.py (the ``positions`` op case, T5)."""
    aten = torch.ops.aten
    g = torch.fx.Graph()
    xn = g.placeholder("x")
    ones = g.call_function(aten.ones.default, ([4, 8],), {"device": torch.device("meta")})
    twos = g.call_function(aten.mul.Tensor, (ones, 2.0))
    g.output(g.call_function(aten.add.Tensor, (g.call_function(aten.cumsum.default, (twos, 0)), xn)))
    gm = torch.fx.GraphModule(torch.nn.Module(), g)
    x = torch.empty(4, 8, device="meta")
    for node in gm.graph.nodes:
        if node.op != "output":
            node.meta["val"] = x
    with torch_backend.recording() as report:
        fused = torch_backend.compile_graph(gm, [x])
    (graph,) = report.graphs
    assert ["aten.ones.default", "aten.mul.Tensor"] in graph.partitions
    devices = {m.partition.device for m in fused.modules() if hasattr(m, "partition")}
    assert devices == {"meta:0", None}


def test_cpu_tensors_of_a_gpu_graph_stay_in_torch() -> None:
    """A node making a CPU tensor (a model's ``torch.tensor(0.0)``) in a graph whose
    other tensors are on an accelerator stays in torch, so that no partition mixes
    devices (the partitioner may join nodes that share no data). The graph is built
    by hand, its accelerator tensors on the ``meta`` device: no GPU needed."""
    aten = torch.ops.aten

    def f(x: Any, c: Any) -> Any:
        return aten.mul.Tensor(x, 2.0), aten.clone.default(c)

    gm = torch.fx.symbolic_trace(f)
    x, c = torch.empty(4, 8, device="meta"), torch.tensor(3.0)
    vals = iter([x, c, x * 2.0, c.clone()])
    for node in gm.graph.nodes:
        if node.op != "output":
            node.meta["val"] = next(vals)
    with torch_backend.recording() as report:
        torch_backend.compile_graph(gm, [x, c])
    (graph,) = report.graphs
    assert graph.partitions == [["aten.mul.Tensor"]]
    assert graph.torch_ops == [("aten.clone.default", "a CPU tensor in a graph on the GPU")]


def test_a_partition_that_does_not_translate_runs_in_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    """A translation error (here: every handler of mul fails) leaves the partition's
    torch submodule in place, and the report names the error."""
    mul = torch.ops.aten.mul.Tensor
    table = dict(torch_graph.ops())

    def broken(fd: Any, node: Any, *args: Any) -> Any:
        raise torch_graph.TranslationError("no mul today")

    table[mul] = broken
    monkeypatch.setattr(torch_graph, "_OPS", table)

    def f(x: Any) -> Any:
        return torch.exp(x * x) + 1.0

    x = torch.randn(4, 8)
    report = fuser.explain(f, x)
    (graph,) = report.graphs
    assert graph.partitions == [] and len(graph.fallbacks) == 1
    assert "no mul today" in graph.fallbacks[0][1]
    torch.testing.assert_close(torch.compile(f, backend="fuser")(x), f(x))


@pytest.fixture
def restrided_calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, ...]]:
    """The strides of every copy of a partition output into a traced layout."""
    calls: list[tuple[int, ...]] = []
    restrided = torch_backend._restrided  # noqa: SLF001

    def counting(t: Any, want: Any) -> Any:
        calls.append(tuple(want))
        return restrided(t, want)

    monkeypatch.setattr(torch_backend, "_restrided", counting)
    return calls


def test_outputs_keep_the_strides_torch_traced(restrided_calls: list[tuple[int, ...]]) -> None:
    """A partition output that fuser lays out otherwise than torch's trace is copied
    into the traced strides. Torch keeps the column-major layout of ``x.t() * 2``, so
    ``.t().view(8, 4)`` is row-major (strides (4, 1)); fuser writes the product
    row-major and returns the view transposed: the embedding lookup after it (in
    torch) reads the traced layout either way."""
    def f(x: Any) -> Any:
        y = x.t() * 2.0  # [4, 8] with strides (1, 4), as x.t()
        return torch.nn.functional.embedding(torch.tensor([0, 1]), y.t().view(8, 4))

    x = torch.randn(8, 4)
    torch.testing.assert_close(torch.compile(f, backend="fuser")(x), f(x))
    assert restrided_calls == [(4, 1)]


def test_outputs_keep_a_padded_layout_torch_traced(restrided_calls: list[tuple[int, ...]]) -> None:
    """A partition output that torch laid out with gaps (a slice of a padded tensor:
    what SDPA's memory-efficient kernel needs of its bias, rows padded to a multiple of
    16 bytes) is copied into those strides, not returned dense: T5's position bias,
    rows of 6 floats, failed that kernel's alignment check on CUDA."""
    def f(x: Any) -> Any:
        bias = torch.nn.functional.pad(x * 2.0, (0, 2))[..., :6]
        return torch.cumsum(bias, -1), bias.stride()

    def g(x: Any) -> Any:  # the same, expanded over a batch (SDPA's mask)
        bias = torch.nn.functional.pad(x * 2.0, (0, 2))[..., :6].expand(2, 3, 4, 6)
        return torch.cumsum(bias, -1), bias.stride()

    x = torch.randn(3, 4, 6)
    for fn, traced in ((f, (32, 8, 1)), (g, (0, 32, 8, 1))):
        restrided_calls.clear()
        (got, _), (want, strides) = torch.compile(fn, backend="fuser")(x), fn(x)
        torch.testing.assert_close(got, want)
        assert strides == traced and restrided_calls == [traced]


@pytest.mark.parametrize(
    "build",
    [cases.tiny_gpt2, cases.tiny_gpt2_odd_vocabulary, cases.tiny_llama, cases.family("bert"), cases.family("gptj"),
     cases.family("t5"), cases.family("vit")],
    ids=["gpt2", "gpt2-vocab1001", "llama", "bert", "gptj", "t5", "vit"],
)
def test_transformer_training_step_matches_eager(build: Any) -> None:
    torch.manual_seed(0)
    ref = build()
    step = model_families.train_step(ref, cases.batch(ref))
    report = step.report
    torch.testing.assert_close(step.loss, step.loss_eager, rtol=1e-5, atol=1e-6)
    cases.grads_match(ref, step.ours)
    # Most of the step ran in fuser: the matmuls, norms, activations and their
    # backwards; attention and the embedding lookups stay in torch.
    assert len(report.fuser_ops) > 4 * len(report.torch_ops)
    assert any(g.kind == "backward" and g.partitions for g in report.graphs)
    # Every partition translated (one that did not would run in torch whole).
    failed = [f for g in report.graphs for f in g.fallbacks]
    assert not failed, failed
    # The loss too: its pick and gradient are fuser ops (``loss_decompositions``).
    assert not [op for op in report.torch_ops if "nll_loss" in op], report.torch_ops


def test_a_sum_into_a_wider_dtype_is_not_rounded_to_the_input_dtype() -> None:
    """``x.sum(dtype=torch.float32)`` of bf16 values: torch accumulates and returns
    float32; so does the translation (the input is cast first, not the bf16 sum)."""

    def f(x: Any) -> Any:
        return x.sum(dim=1, dtype=torch.float32), x.mean(dim=1, dtype=torch.float32)

    x = (torch.randn(4, 4096) * 100).to(torch.bfloat16)
    got, want = torch.compile(f, backend="fuser")(x), f(x)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == torch.float32
        torch.testing.assert_close(g, w, rtol=1e-5, atol=1e-3)


def test_a_partition_fuser_cannot_run_warns_and_runs_in_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    """The first run of a partition compiles it; when fuser cannot (here: every
    execute raises), the partition warns once and runs torch's submodule from then on."""
    from fuser.frontend.fusion_definition import FusionDefinition

    def refuse(self: Any, inputs: Any, **kwargs: Any) -> Any:
        raise ValueError("no kernel for you")

    monkeypatch.setattr(FusionDefinition, "execute", refuse)

    def f(x: Any) -> Any:
        return torch.tanh(x) * 3.0

    compiled = torch.compile(f, backend="fuser")
    x = torch.randn(4, 8)
    with pytest.warns(RuntimeWarning, match=r"runs in torch: fuser could not run it \(ValueError: no kernel for you\)"):
        torch.testing.assert_close(compiled(x), f(x))
    torch.testing.assert_close(compiled(x + 1), f(x + 1))  # no second warning, still torch


def test_a_graph_compiles_once_per_set_of_sizes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Dynamo caches the compiled graph per guard set: a repeated call does not
    compile again; with ``dynamic=False`` a new size compiles a new fuser graph."""
    compiled_graphs: list[Any] = []
    compile_graph = torch_backend.compile_graph

    def counting(gm: Any, example_inputs: Any, kind: str = "inference") -> Any:
        compiled_graphs.append(kind)
        return compile_graph(gm, example_inputs, kind)

    monkeypatch.setattr(torch_backend, "compile_graph", counting)

    def f(x: Any) -> Any:
        return torch.tanh(x) * 2.0

    compiled = torch.compile(f, backend="fuser", dynamic=False)
    with torch_backend.recording() as report:
        for shape in [(4, 8), (4, 8), (6, 8), (6, 8)]:
            x = torch.randn(*shape)
            torch.testing.assert_close(compiled(x), f(x))
    assert len(compiled_graphs) == 2
    assert all(g.partitions and not g.torch_ops for g in report.graphs)


def test_symbolic_sizes_stay_in_torch_with_a_reason() -> None:
    """torch.compile's automatic dynamic shapes trace a second size symbolically;
    fuser's partitions need concrete sizes, so that graph runs in torch and the report
    says why (``dynamic=False`` keeps every size in fuser, one graph each)."""

    def f(x: Any) -> Any:
        return torch.tanh(x) * 2.0

    compiled = torch.compile(f, backend="fuser")
    with torch_backend.recording() as report:
        for rows in (4, 6):
            x = torch.randn(rows, 8)
            torch.testing.assert_close(compiled(x), f(x))
    first, second = report.graphs
    assert first.partitions and not first.torch_ops
    assert ("aten.tanh.default", "a symbolic size") in second.torch_ops and not second.partitions


def _backward_like(g0: Any, a0: Any, a1: Any) -> Any:
    """Two layers of a backward: each layer's input gradient goes through a torch op
    (``sin`` standing for attention's backward) before the next layer uses it, and
    each layer's weight gradient needs only what is already there."""
    dx1 = g0 * 2.0
    u1 = torch.sin(dx1)  # torch, needs layer 1's partition
    dw1 = g0 * a1
    c = torch.cos(a0)  # torch, needs no partition: does not close one
    dx0 = u1 * c
    u0 = torch.sin(dx0)
    dw0 = dx1 * a0  # layer 0's weight gradient: joins layer 0's partition, not layer 1's
    return u0, dw1, dw0


def test_partitions_keep_the_graph_order() -> None:
    """A partition closes where a node needs a torch node that needs it; a node that
    could run earlier joins the open partition, not the first one it could (torch's
    CapabilityBasedPartitioner put GPT-2's twelve weight-gradient GEMMs in one
    partition at the end of the backward, holding every layer's gradients until
    then). Fusing the partitions makes no cycle and computes the same."""
    import operator

    gm = torch.fx.symbolic_trace(_backward_like)
    supported = {operator.mul}
    parts = torch_backend.ordered_partitions(gm, lambda n: n.op == "call_function" and n.target in supported)
    names = [sorted(n.name for n in p.nodes) for p in parts]
    # fx names the products in order: mul = dx1, mul_1 = dw1, mul_2 = dx0, mul_3 = dw0
    assert names == [["mul", "mul_1"], ["mul_2", "mul_3"]]
    from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
    from torch.fx.passes.operator_support import OperatorSupport

    class Muls(OperatorSupport):
        def is_node_supported(self, submodules: Any, node: Any) -> bool:
            return node.op == "call_function" and node.target in supported

    fused = CapabilityBasedPartitioner(gm, Muls()).fuse_partitions(parts)
    args = [torch.randn(4, 3) for _ in range(3)]
    for got, want in zip(fused(*args), _backward_like(*args), strict=True):
        torch.testing.assert_close(got, want)
    calls = [n.target for n in fused.graph.nodes if n.op in ("call_module", "call_function")]
    first, second = (i for i, t in enumerate(calls) if isinstance(t, str))
    assert calls.index(torch.sin) < second  # layer 1's torch op runs between the partitions


def test_a_getitem_goes_with_its_tuple() -> None:
    """A ``getitem`` of a torch op's tuple stays in torch; of a partition's, joins it."""
    import operator

    def f(x: Any) -> Any:
        a, b = torch.split(x, 2)
        m = torch.var_mean(a * b)
        return m[0] + m[1]

    gm = torch.fx.symbolic_trace(f)
    ops = {operator.mul, operator.add, operator.getitem, torch.var_mean}
    parts = torch_backend.ordered_partitions(gm, lambda n: n.op == "call_function" and n.target in ops)
    (part,) = parts
    got = {n.name for n in part.nodes}
    assert {"mul", "var_mean", "getitem_2", "getitem_3", "add"} <= got
    assert not got & {"split", "getitem", "getitem_1"}


def test_ordered_partitioning_is_chosen_by_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """``FUSER_PARTITIONS=ordered`` runs a tiny GPT-2's step with the ordered
    partitions (the weight-gradient products stay in their layer's partition) and the
    same gradients; another value is a ValueError naming the variable."""
    torch.manual_seed(0)
    ref = cases.tiny_gpt2()
    ours = copy.deepcopy(ref)
    ids = torch.randint(0, 64, (2, 8))
    monkeypatch.setenv("FUSER_PARTITIONS", "ordered")
    with torch_backend.recording() as report:
        torch.compile(ours, backend="fuser")(input_ids=ids, labels=ids).loss.backward()
    ref(input_ids=ids, labels=ids).loss.backward()
    cases.grads_match(ref, ours)
    backward = [g for g in report.graphs if g.kind == "backward"][-1]
    products = [sum(op == "aten.mm.default" for op in ops) for ops in backward.partitions]
    assert max(products) <= 8, products  # maximal grouping puts every layer's weight products in one
    monkeypatch.setenv("FUSER_PARTITIONS", "greedy")
    with pytest.raises(ValueError, match="FUSER_PARTITIONS"):
        torch_backend.partitioning()


@pytest.mark.parametrize("setting", [None, "min_cut", "default"], ids=["unset", "min_cut", "default"])
@pytest.mark.parametrize("build", [cases.tiny_gpt2, cases.tiny_llama], ids=["gpt2", "llama"])
def test_aot_partitioners_match_eager(build: Any, setting: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    """The min-cut partitioner (inductor's forward/backward split: fewer saved tensors,
    cheap ones recomputed in the backward partitions) is the default; with
    ``FUSER_AOT_PARTITIONER=default`` AOTAutograd's own runs instead. Both give the
    same loss and gradients as eager; a bad value is a ValueError naming the variable."""
    if setting is None:
        monkeypatch.delenv("FUSER_AOT_PARTITIONER", raising=False)
    else:
        monkeypatch.setenv("FUSER_AOT_PARTITIONER", setting)
    import functorch.compile

    calls: list[int] = []
    original = functorch.compile.min_cut_rematerialization_partition

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(functorch.compile, "min_cut_rematerialization_partition", counted)
    torch.manual_seed(0)
    ref = build()
    ours = copy.deepcopy(ref)
    ids = torch.randint(0, 64, (2, 8))
    with torch_backend.recording() as report:
        loss = torch.compile(ours, backend="fuser")(input_ids=ids, labels=ids).loss
        loss.backward()
    loss_ref = ref(input_ids=ids, labels=ids).loss
    loss_ref.backward()
    torch.testing.assert_close(loss, loss_ref, rtol=1e-5, atol=1e-6)
    cases.grads_match(ref, ours)
    assert any(g.kind == "backward" and g.partitions for g in report.graphs)
    assert bool(calls) == (setting != "default"), calls
    monkeypatch.setenv("FUSER_AOT_PARTITIONER", "greedy")
    with pytest.raises(ValueError, match="FUSER_AOT_PARTITIONER"):
        torch_backend.aot_partitioner()


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["f32", "bf16"])
def test_a_cube_is_computed_as_torch_computes_it(dtype: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """``pow(x, 3)`` is ATen's ``x * x * x`` in the tensor's type (each product of
    bfloat16 rounded), not a rounded ``powf``: bit for bit eager's when every op
    rounds (``FUSER_HALF_IN_FLOAT=0``), and a product in the kernel instead of a
    ``powf`` call."""
    monkeypatch.setenv("FUSER_HALF_IN_FLOAT", "0")
    torch.manual_seed(0)
    x = torch.randn(4096).to(dtype)

    def f(x: Any) -> Any:
        return torch.pow(x, 3.0) * 0.5

    with torch_backend.recording() as report:
        got = torch.compile(f, backend="fuser")(x)
    torch.testing.assert_close(got, f(x), rtol=0, atol=0)
    assert report.fuser_ops and not report.torch_ops


def test_half_chains_are_computed_in_float_and_rounded_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """By default a partition computes a bf16 elementwise chain in float32 and rounds
    its result once (``compute-half-in-float``, as inductor): ``tanh(x * x * 0.5)``
    equals the float32 chain rounded to bf16, and differs from eager's op-by-op
    rounding by at most one bf16 step."""
    monkeypatch.delenv("FUSER_HALF_IN_FLOAT", raising=False)
    assert torch_backend.half_in_float()
    assert "compute-half-in-float" in torch_backend.backend_pipeline()
    torch.manual_seed(0)
    x = torch.randn(4096).to(torch.bfloat16)

    def f(x: Any) -> Any:
        return torch.tanh(x * x * 0.5)

    torch._dynamo.reset()
    got = torch.compile(f, backend="fuser")(x)
    xf = x.float()
    torch.testing.assert_close(got, torch.tanh(xf * xf * 0.5).to(torch.bfloat16), rtol=0, atol=0)
    torch.testing.assert_close(got.float(), f(x).float(), rtol=2**-7, atol=0)
    monkeypatch.setenv("FUSER_HALF_IN_FLOAT", "maybe")
    with pytest.raises(ValueError, match="FUSER_HALF_IN_FLOAT"):
        torch_backend.half_in_float()

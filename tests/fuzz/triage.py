"""Run many random fusions through the frontend and group the failures by cause.

    python -m tests.fuzz.triage 0 2000            # seeds [0, 2000), numpy inputs
    python -m tests.fuzz.triage 0 2000 --torch    # torch CPU tensors as inputs
    python -m tests.fuzz.triage 17 18 -v          # one seed: its source and the traceback
    python -m tests.fuzz.triage 0 2000 --cuda --workers 14 --stages execute,segment,resize,replay
                                                  # on the GPU, 14 processes at once

Stages per fusion: ``fd.plan``, ``fd.generate_cuda_code``, ``fd.execute`` (outputs against
torch: dtype and values), ``fd.segment`` then ``fd.execute`` of the segments, and
``kernels``: the seed's small case (extents above 33 made small) through the GPU's
plan with every generated kernel run by the CPU kernel interpreter, against the
reference and torch (``--stages kernels`` runs only it; ``-v`` prints the small case),
and ``resize``: after the seed's case, its small case through the same definition (one
fusion-cache entry, so kernels compiled for one size meet another), against torch;
``replay`` (only with ``--cuda``): the case and its small case in turn,
``REPLAY_ROUNDS`` calls each on the same tensors, so that their launchers' CUDA graphs
replay back to back with the other size's kernels (how seed 12891's
programmatic-dependent-launch race showed on every call); and
``kernels-4sm``: the small case planned for a GPU of 4 SMs (``SMALL_GPU``: the
inner-outer kind and one-block-an-SM grids at small sizes) must compile, its kernels
run in the CPU kernel interpreter when its plan differs from the default target's.

``--cuda`` gives the stages torch CUDA tensors (``fd.execute`` runs the generated
kernels), ``--workers N`` runs the seeds in N processes; the exit status is 1 when a
seed fails.
"""

from __future__ import annotations

import argparse
import collections
import re
import traceback
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

from fuser.schedulers.target import H100
from tests.fuzz.fusion_gen import TOL, Case, random_case

REPLAY_ROUNDS = 3
"""Calls of each size in the ``replay`` stage: a plain launch, then the launchers
capture a CUDA graph on the second call that brings the same pointers, and replay it
on the third. With the old dependent-launch prologue seed 12891 failed on the first
call already (H200)."""

KERNEL = re.compile(r'extern "C" __global__ void (?:__launch_bounds__\(\d+\) )?(\w+)')


def as_torch(x: Any) -> torch.Tensor:
    if isinstance(x, torch.Tensor):
        return x.cpu()
    import ml_dtypes

    a = np.asarray(x)
    if a.dtype == ml_dtypes.bfloat16:
        return torch.from_numpy(a.view(np.int16).copy()).view(torch.bfloat16)
    # np.ascontiguousarray would turn a 0-dim array into shape (1,)
    return torch.from_numpy(a.copy(order="C"))


def compare(
    outs: list[Any], case: Case, expected: list[Any] | None = None, oracle: str = "torch",
    skip: frozenset[int] = frozenset(),
) -> str | None:
    """None when ``outs`` match torch's outputs (or ``expected``, named ``oracle`` in
    the message) in dtype, shape and value, within the case's tolerances; outputs in
    ``skip`` are not compared."""
    want = case.expected if expected is None else [as_torch(e) for e in expected]
    if len(outs) != len(want):
        return f"{len(outs)} outputs, {oracle} has {len(want)}"
    tols = case.tolerances or [TOL.get(e.dtype, 1e-4) for e in case.expected]
    for i, (o, e, tol) in enumerate(zip(outs, want, tols, strict=True)):
        if i in skip:
            continue
        msg = _mismatch(f"output #{i}", as_torch(o), e, tol, oracle)
        if msg:
            return msg
    return None


def _mismatch(what: str, t: torch.Tensor, e: torch.Tensor, tol: float, oracle: str) -> str | None:
    """How ``t`` differs from ``oracle``'s ``e`` in dtype, shape or value (``tol``)."""
    if t.dtype != e.dtype:
        return f"{what} is {t.dtype}, {oracle} gives {e.dtype}"
    if tuple(t.shape) != tuple(e.shape):
        return f"{what} has shape {tuple(t.shape)}, {oracle} gives {tuple(e.shape)}"
    if not torch.allclose(t.double(), e.double(), rtol=tol, atol=tol, equal_nan=True):
        err = (t.double() - e.double()).abs().nan_to_num(float("inf")).max().item()
        return f"{what} differs from {oracle} (max |err| {err:.3g})"
    return None


def compare_updates(ins: list[Any], case: Case, expected: list[Any] | None = None, oracle: str = "torch") -> str | None:
    """None when the inputs ``case`` updates in place hold, after a call on ``ins``,
    torch's values (or those of ``expected``, the inputs of another call, named
    ``oracle``)."""
    for i, want, tol in case.updates:
        w = want if expected is None else as_torch(expected[i])
        msg = _mismatch(f"input #{i}, updated in place,", as_torch(ins[i]), w, tol, oracle)
        if msg:
            return msg
    return None


def _same_storage(a: Any, b: Any) -> bool:
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return a.device == b.device and a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()
    return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and np.may_share_memory(a, b)


def views_of_updates(outs: list[Any], ins: list[Any], case: Case) -> frozenset[int]:
    """The outputs that are views of an input the call updated in place: they show
    the update, as nvFuser's aliased outputs do (its test_returning_aliased_outputs),
    which torch's functional values do not model; they are not compared."""
    return frozenset(k for k, o in enumerate(outs) for i, _, _ in case.updates if _same_storage(o, ins[i]))


def check_call(outs: list[Any], ins: list[Any], case: Case) -> str | None:
    """``compare`` of a call's outputs, then ``compare_updates`` of its inputs."""
    return compare(outs, case, skip=views_of_updates(outs, ins, case)) or compare_updates(ins, case)


def kernel_stage(seed: int, nvrtc: bool = False) -> tuple[Case, Callable[[], None]]:
    """The ``kernels`` stage of ``seed``: its small case (``random_case(seed,
    small=True)``: the seed's fusion with the extents above 33 made small) run as the
    GPU would run it (scheduler decision, segmentation, lowering of every segment) with
    every kernel executed by the CPU kernel interpreter
    (``execute_kernels_on_cpu``); the outputs must match the reference interpreter
    (``fd.execute`` on numpy inputs) and torch. ``nvrtc``: the kernels also compile."""
    from fuser.frontend.execution import execute_kernels_on_cpu

    case = random_case(seed, small=True)

    def kernels() -> None:
        ins = case.numpy_inputs()
        _check_kernels("kernels", case, ins, execute_kernels_on_cpu(case.fd._ensure_defined(), ins, nvrtc=nvrtc))

    return case, kernels


SMALL_GPU = H100.with_(name="h100-4sm", sm_count=4)
"""A GPU of 4 SMs: planned for it, the small cases get the decisions a real GPU takes
only for large ones (the inner-outer kind at 4 rows and more, one block an SM)."""


def small_gpu_stage(seed: int, nvrtc: bool = False) -> tuple[Case, Callable[[], None]]:
    """The ``kernels-4sm`` stage of ``seed``: its small case planned for ``SMALL_GPU``
    must compile, and when the plan differs from the default target's (another
    scheduler or other parameters: the ``kernels`` stage ran the default's kernels),
    its kernels run in the CPU kernel interpreter and must match the reference and
    torch."""
    from fuser.frontend.execution import execute_kernels_on_cpu

    case = random_case(seed, small=True)

    def kernels_4sm() -> None:
        ins = case.numpy_inputs()
        plan = case.fd.plan(ins, target=SMALL_GPU)
        if plan.error is not None:
            raise AssertionError(f"kernels-4sm: the plan for a GPU of 4 SMs fails: {plan.error}")
        if _launches(plan) == _launches(case.fd.plan(ins)):
            return
        outs = execute_kernels_on_cpu(case.fd._ensure_defined(), ins, nvrtc=nvrtc, target=SMALL_GPU)
        _check_kernels("kernels-4sm", case, ins, outs)

    return case, kernels_4sm


def _check_kernels(stage: str, case: Case, ins: list[Any], outs: list[Any]) -> None:
    """The kernels' outputs ``outs`` (and the inputs ``ins`` they updated in place)
    match the reference interpreter (a call on fresh inputs) and torch."""
    ref_ins = case.numpy_inputs()
    ref = case.fd.execute(ref_ins)
    msg = (
        compare(outs, case, ref, "the reference", views_of_updates(outs, ins, case))
        or compare_updates(ins, case, ref_ins, "the reference")
        or check_call(outs, ins, case)
    )
    if msg:
        raise AssertionError(f"{stage}: {msg}")


def _launches(plan: Any) -> list[tuple[Any, Any]]:
    return [(s.scheduler, s.params) for s in plan.segments]


def inputs_of(case: Case, use_torch: bool, device: str | None = None) -> list[Any]:
    """``case``'s inputs: torch tensors on ``device``, torch CPU tensors (``use_torch``)
    or numpy arrays."""
    if device:
        return [t.to(device) for t in case.inputs]
    return [t.clone() for t in case.inputs] if use_torch else case.numpy_inputs()


def stages(case: Case, use_torch: bool, device: str | None = None) -> list[tuple[str, Callable[[], Any]]]:
    """The stages of ``case`` on numpy inputs, torch CPU tensors (``use_torch``) or
    torch tensors on ``device``."""
    ins = inputs_of(case, use_torch, device)
    fd = case.fd

    def execute() -> None:
        call = inputs_of(case, use_torch, device)  # a call may update its inputs
        msg = check_call(fd.execute(call), call, case)
        if msg:
            raise AssertionError(msg)

    def segmented() -> None:
        fd.segment(ins)
        try:
            call = inputs_of(case, use_torch, device)
            msg = check_call(fd.execute(call), call, case)
        finally:
            fd.clear_segmentation()
        if msg:
            raise AssertionError(msg)

    state: dict[str, Any] = {}

    def plan() -> None:
        p = state["plan"] = fd.plan(ins)
        if not p.is_complete:
            raise AssertionError(f"a segment has no scheduler:\n{p}")

    def cuda() -> None:
        code = fd.generate_cuda_code(ins)
        p = state.get("plan") or fd.plan(ins)
        kernels = KERNEL.findall(code)
        if (p.segmented or p.segments[0].launches_kernel) and len(kernels) != p.num_kernels:
            raise AssertionError(
                f"generate_cuda_code prints {len(kernels)} kernels, the plan counts {p.num_kernels}"
            )

    def small_case() -> Case:
        """The seed's small case, made once for the stages that run it."""
        if "small" not in state:
            state["small"] = random_case(case.seed, small=True)
        return state["small"]

    def resized() -> None:
        small = small_case()
        call = inputs_of(small, use_torch, device)
        msg = check_call(small.fd.execute(call), call, small)
        if msg:
            raise AssertionError(f"the small case after this one: {msg}")

    def replayed() -> None:
        small = small_case()
        small_ins = inputs_of(small, use_torch, device)
        first = {id(c): {i: _copy(c_ins[i]) for i, _, _ in c.updates} for c, c_ins in ((case, ins), (small, small_ins))}
        for r in range(REPLAY_ROUNDS):
            for c, c_ins in ((case, ins), (small, small_ins)):
                for i, value in first[id(c)].items():  # the same arrays (graphs replay), their first values
                    _restore(c_ins[i], value)
                msg = check_call(c.fd.execute(c_ins), c_ins, c)
                if msg:
                    which = "the small case" if c is small else "the case"
                    raise AssertionError(f"call {r + 1} of {which}, the two sizes in turn: {msg}")

    return [
        ("plan", plan),
        ("cuda", cuda),
        ("execute", execute),
        ("segment", segmented),
        ("resize", resized),
        *([("replay", replayed)] if device else []),
    ]


def _copy(x: Any) -> Any:
    return x.clone() if isinstance(x, torch.Tensor) else np.array(x, copy=True)


def _restore(x: Any, value: Any) -> None:
    """``x`` holds ``value`` again, in its own storage (its pointer is kept)."""
    if isinstance(x, torch.Tensor):
        x.copy_(value)
    else:
        np.copyto(x, value)


def compile_with_nvrtc(case: Case) -> None:
    """Every kernel of ``case`` compiled by NVRTC for sm_90 (no GPU needed)."""
    from fuser.codegen.cuda_printer import print_cuda
    from fuser.codegen.nvrtc import compile_cuda
    from fuser.frontend.execution import lowered_segments

    entry = case.fd._ensure_defined()
    for _, lowered in lowered_segments(entry, case.numpy_inputs()):
        for k in lowered.kernels:
            compile_cuda(print_cuda(k.module), name=k.name)


def failure_key(stage: str, e: BaseException) -> str:
    tb = traceback.extract_tb(e.__traceback__)
    where = f"{tb[-1].filename.split('/')[-1]}:{tb[-1].lineno}" if tb else "?"
    msg = re.sub(r"\d+", "N", str(e).splitlines()[0] if str(e) else "")[:100]
    return f"{stage} {type(e).__name__} {where}: {msg}"


def run(
    seeds: Sequence[int], use_torch: bool = False, only: frozenset[str] | None = None, device: str | None = None
) -> dict[str, list[int]]:
    """Failures grouped by key, each with the seeds that hit it (``only``: these stages)."""
    failures: dict[str, list[int]] = collections.defaultdict(list)
    for seed in seeds:
        case = random_case(seed)
        for stage, fn in [
            *stages(case, use_torch, device),
            ("kernels", lambda s=seed: kernel_stage(s)[1]()),
            ("kernels-4sm", lambda s=seed: small_gpu_stage(s)[1]()),
        ]:
            if only is not None and stage not in only:
                continue
            try:
                fn()
            except Exception as e:  # noqa: BLE001 - grouping every failure is the point
                key = failure_key(stage, e)
                failures[key].append(seed)
                # At once, so that a run cut short by a time limit still names it.
                print(f"seed {seed}: {key}", flush=True)
    return failures


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("start", type=int)
    p.add_argument("stop", type=int)
    p.add_argument("--torch", action="store_true", help="torch CPU tensors as inputs")
    p.add_argument("-v", action="store_true", help="print each failing seed's source and traceback")
    p.add_argument("--stages", help="comma-separated stages to run (default: all)")
    p.add_argument("--cuda", action="store_true", help="torch CUDA tensors as inputs (the GPU runs the kernels)")
    p.add_argument("--workers", type=int, default=1, help="processes to run the seeds in (default 1)")
    a = p.parse_args()
    only = frozenset(a.stages.split(",")) if a.stages else None
    if a.v:
        for seed in range(a.start, a.stop):
            case = random_case(seed)
            print(f"# seed {seed}\n{case.source}")
            for stage, fn in stages(case, a.torch, "cuda" if a.cuda else None):
                if only is not None and stage not in only:
                    continue
                try:
                    fn()
                except Exception:  # noqa: BLE001
                    print(f"## {stage}")
                    traceback.print_exc()
            for name, make in (("kernels", kernel_stage), ("kernels-4sm", small_gpu_stage)):
                if only is not None and name not in only:
                    continue
                small, fn = make(seed)
                try:
                    fn()
                except Exception:  # noqa: BLE001
                    print(f"## {name} (the small case)\n{small.source}")
                    traceback.print_exc()
        return
    device = "cuda" if a.cuda else None
    seeds = range(a.start, a.stop)
    failures = (
        run_in_workers(seeds, a.workers, a.torch, only, device) if a.workers > 1 else run(seeds, a.torch, only, device)
    )
    total = sum(len(v) for v in failures.values())
    print(f"{a.stop - a.start} fusions, {total} failures")
    for key, hit in sorted(failures.items(), key=lambda kv: -len(kv[1])):
        print(f"{len(hit):5d}  {key}  seeds {sorted(hit)[:6]}")
    if total:
        raise SystemExit(1)


def run_in_workers(
    seeds: range, workers: int, use_torch: bool, only: frozenset[str] | None, device: str | None
) -> dict[str, list[int]]:
    """``run`` over ``seeds`` in ``workers`` fresh processes (spawned: a forked CUDA
    context is unusable), each taking every ``workers``-th seed; failures merged."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    parts = [list(seeds[k::workers]) for k in range(workers)]
    merged: dict[str, list[int]] = collections.defaultdict(list)
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        for part in pool.map(run, parts, [use_torch] * workers, [only] * workers, [device] * workers):
            for key, hit in part.items():
                merged[key].extend(hit)
    return merged


if __name__ == "__main__":
    main()

"""An Adam step written in place, side by side with torch.

    python3 benchmarks/adam_step.py [--numel N ...] [--clip MAX_NORM ...] [--json FILE]   # on the GPU machine

The step of one float32 parameter tensor ``p`` with gradient ``g`` and moments ``m``,
``v``, as one fusion that writes ``m``, ``v`` and ``p`` back into their inputs
(``fd.add_output(..., alias_input=...)``)::

    m' = b1 m + (1 - b1) g
    v' = b2 v + (1 - b2) g^2
    p' = p - lr (m' / c1) / (sqrt(v' / c2) + eps)

Each parameter is computed from the new moments, so the kernel stores the moments
into buffers that the parameter's update also loads from. Per size, median
microseconds (``benchmarks.run.bench``: CUDA events, L2 flushed) of:

* ``fuser``: ``fd.execute`` of the fusion (one kernel: its outputs are stored
  together, after every load, ``loop_nest.pointwise_kernel``);
* ``fuser_cut``: the same fusion with the moments behind ``segment_set``, compiled
  without ``fold-in-place-copies``: a kernel into temporaries and copy kernels into
  ``m`` and ``v``, which is what every such update cost before store groups
  (``mark-aliases`` cut it);
* ``torch_fused``: ``torch.optim.Adam(fused=True).step()``;
* ``eager``: the same formulas as in-place torch ops (``torch.optim``'s
  single-tensor loop);
* ``compile``: ``torch.compile`` of that function;
* ``copy``: a copy of the step's bytes (4 tensors read, 3 written).

With ``--clip MAX_NORM``, each size runs a second time with the gradient first
clipped to that global norm (torch's ``clip_grad_norm_``): the fusion reduces ``g``,
then updates; ``fuser_cut`` is then the same fusion compiled without
``fold-in-place-copies`` (the moments computed into temporaries and copied, as
``mark-aliases`` cuts an update beside a reduction), and ``torch_fused`` is
``clip_grad_norm_`` then the fused step. The copy still moves the step's 7 tensors
(the norm reads ``g`` once more).

Every variant starts from the same tensors and its result is compared with the
float64 formulas before timing; the exit status is 1 when one is off by more than
``MAX_REL_ERR``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.run import bench  # noqa: E402

LR, B1, B2, EPS, STEP = 1e-3, 0.9, 0.999, 1e-8, 3
MAX_REL_ERR = 1e-5
"""The largest error (max |x - ref| / max |ref| of any updated tensor, float32 against
float64) a variant may have; exit status 1 otherwise."""


def adam_fusion(cut: bool = False, clip: bool = False) -> Any:
    """The fusion: inputs ``p, g, m, v`` (float32, 1-D) and the scalars ``lr, c1, c2``;
    ``cut``: the cost of an update cut behind a copy: the new moments behind
    ``segment_set``, and the driver's ``fold-in-place-copies`` left out (it would
    write them in place again). ``clip``: the gradient is first scaled by
    ``min(1, max_norm / (|g| + 1e-6))`` (torch's ``clip_grad_norm_``), ``max_norm``
    a fourth scalar; ``mark-aliases`` cuts that update itself (it is beside a
    reduction), so ``cut`` then only leaves the fold out."""
    from fuser import DataType, FusionDefinition
    from fuser.runtime.driver import PASSES

    with FusionDefinition() as fd:
        p, g, m, v = (fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float) for _ in range(4))
        lr, c1, c2 = (fd.define_scalar(dtype=DataType.Double) for _ in range(3))
        if clip:
            max_norm = fd.define_scalar(dtype=DataType.Double)
            norm = fd.ops.sqrt(fd.ops.sum(fd.ops.mul(g, g), dims=[0]))
            coef = fd.ops.div(max_norm, fd.ops.add(norm, 1e-6))
            # The cut variant swaps minimum's operands: a definition of its own, so
            # that its pipeline (below) is not the other's (a pipeline belongs to
            # every definition of the same fusion).
            g = fd.ops.mul(g, fd.ops.minimum(1.0, coef) if cut else fd.ops.minimum(coef, 1.0))
        m_new = fd.ops.add(fd.ops.mul(m, B1), fd.ops.mul(g, 1.0 - B1))
        v_new = fd.ops.add(fd.ops.mul(v, B2), fd.ops.mul(fd.ops.mul(g, g), 1.0 - B2))
        denom = fd.ops.add(fd.ops.sqrt(fd.ops.div(v_new, c2)), EPS)
        p_new = fd.ops.sub(p, fd.ops.mul(fd.ops.div(fd.ops.div(m_new, c1), denom), lr))
        if cut and not clip:
            m_new, v_new = fd.ops.segment_set(m_new), fd.ops.segment_set(v_new)
        fd.add_output(m_new, alias_input=m)
        fd.add_output(v_new, alias_input=v)
        fd.add_output(p_new, alias_input=p)
    if cut:  # fold-in-place-copies would write the cut moments in place again
        fd.pipeline = [name for name in PASSES if name != "fold-in-place-copies"]
    return fd


def scalars() -> tuple[float, float, float]:
    return LR, 1.0 - B1**STEP, 1.0 - B2**STEP


def reference(p: Any, g: Any, m: Any, v: Any, clip: float | None = None) -> tuple[Any, Any, Any]:
    """The step in float64 (numpy or torch tensors); ``clip``: the gradient's max norm."""
    lr, c1, c2 = scalars()
    if clip is not None:
        g = g * min(clip / (float((g * g).sum()) ** 0.5 + 1e-6), 1.0)
    m2 = B1 * m + (1.0 - B1) * g
    v2 = B2 * v + (1.0 - B2) * g * g
    return m2, v2, p - lr * (m2 / c1) / ((v2 / c2) ** 0.5 + EPS)


def eager_step(p: Any, g: Any, m: Any, v: Any, lr: float, c1: float, c2: float, clip: float | None = None) -> None:
    if clip is not None:  # torch.nn.utils.clip_grad_norm_'s formula, on the gradient in place
        g.mul_((clip / (g.norm() + 1e-6)).clamp(max=1.0))
    m.mul_(B1).add_(g, alpha=1.0 - B1)
    v.mul_(B2).addcmul_(g, g, value=1.0 - B2)
    denom = (v / c2).sqrt_().add_(EPS)
    p.addcdiv_(m, denom, value=-lr / c1)


def run_size(n: int, clip: float | None = None) -> dict[str, Any]:
    import torch

    gen = torch.Generator(device="cuda").manual_seed(n)
    p0, g0, m0 = (torch.randn(n, device="cuda", generator=gen) for _ in range(3))
    v0 = torch.rand(n, device="cuda", generator=gen)
    want = reference(*(t.double() for t in (p0, g0, m0, v0)), clip=clip)
    lr, c1, c2 = scalars()
    extra = (lr, c1, c2) if clip is None else (lr, c1, c2, clip)
    row: dict[str, Any] = {"numel": n, "bytes": 7 * 4 * n, "clip": clip}

    def fresh() -> list[Any]:
        return [t.clone() for t in (p0, g0, m0, v0)]

    def err(p: Any, m: Any, v: Any) -> float:
        return max(float(((a.double() - b).abs().max() / b.abs().max()).item()) for a, b in zip((m, v, p), want, strict=True))

    fd, fd_cut = adam_fusion(clip=clip is not None), adam_fusion(cut=True, clip=clip is not None)
    compiled = torch.compile(eager_step)
    variants: dict[str, Any] = {
        "fuser": lambda t: fd.execute([*t, *extra]),
        "fuser_cut": lambda t: fd_cut.execute([*t, *extra]),
        "eager": lambda t: eager_step(*t, lr, c1, c2, clip),
        "compile": lambda t: compiled(*t, lr, c1, c2, clip),
    }
    for name, fn in variants.items():
        t = fresh()
        fn(t)
        torch.cuda.synchronize()
        row[f"{name}_err"] = err(t[0], t[2], t[3])
        t = fresh()  # timed on its own tensors (the step keeps updating them)
        row[f"{name}_us"] = bench(lambda fn=fn, t=t: fn(t))

    t = fresh()
    param = torch.nn.Parameter(t[0])
    param.grad = t[1]
    opt = torch.optim.Adam([param], lr=LR, betas=(B1, B2), eps=EPS, fused=True)
    opt.step()
    st = opt.state[param]
    st["exp_avg"].copy_(m0)
    st["exp_avg_sq"].copy_(v0)
    st["step"].fill_(STEP - 1)
    param.data.copy_(p0)

    def torch_step() -> None:
        if clip is not None:
            torch.nn.utils.clip_grad_norm_([param], clip)
        opt.step()

    torch_step()  # step STEP from the same state as the others
    torch.cuda.synchronize()
    row["torch_fused_err"] = err(param.data, st["exp_avg"], st["exp_avg_sq"])
    row["torch_fused_us"] = bench(torch_step)

    src = torch.empty(7 * n // 2, device="cuda")
    dst = torch.empty_like(src)
    row["copy_us"] = bench(lambda: dst.copy_(src))
    row["copy_over_fuser"] = row["copy_us"] / row["fuser_us"]
    row["launches"] = {"fuser": _launches(fd, fresh(), extra), "fuser_cut": _launches(fd_cut, fresh(), extra)}
    return row


def _launches(fd: Any, tensors: list[Any], extra: tuple[float, ...]) -> int:
    """The kernels ``fd.execute`` launches for these inputs (its segments' kernels)."""
    from fuser.frontend import execution

    segs = execution.lowered_segments(fd._ensure_defined(), [*tensors, *extra])  # noqa: SLF001
    return sum(len(lowered.kernels) for _, lowered in segs)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--numel", type=int, nargs="*", default=[1 << 20, 1 << 24, 7 * (1 << 22) + 3])
    ap.add_argument("--json", type=Path)
    ap.add_argument("--clip", type=float, nargs="*", default=[],
                    help="also run the step with the gradient clipped to these max norms")
    args = ap.parse_args(argv)
    rows = [run_size(n, clip) for clip in (None, *args.clip) for n in args.numel]
    names = ["fuser", "fuser_cut", "torch_fused", "eager", "compile", "copy"]
    print(f"{'numel':>10} {'clip':>6} " + " ".join(f"{n + '_us':>15}" for n in names)
          + f" {'copy/fuser':>10} {'kernels':>8} {'max_rel_err':>11}")
    for r in rows:
        errs = max(r[f"{n}_err"] for n in names if n != "copy")
        kernels = f"{r['launches']['fuser']}/{r['launches']['fuser_cut']}"
        print(f"{r['numel']:>10} {r['clip'] or '-':>6} " + " ".join(f"{r[n + '_us']:>15.1f}" for n in names)
              + f" {r['copy_over_fuser']:>10.2f} {kernels:>8} {errs:>11.2e}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    wrong = [(r["numel"], r["clip"], n) for r in rows for n in names if n != "copy" and not r[f"{n}_err"] <= MAX_REL_ERR]
    if wrong:
        print(f"wrong results (relative error above {MAX_REL_ERR}): {wrong}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

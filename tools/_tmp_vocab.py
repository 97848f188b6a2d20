import sys, json
sys.path.insert(0, ".")
import torch
import fuser.schedulers.persistent as P
P.MIN_ROWS_FRACTION = int(sys.argv[1])
from benchmarks.workloads import softmax, build, Workload
from benchmarks.run import bench, rel_error
from fuser import FusionDefinition, DataType
res = {}
for rows, cols in [(32, 50257), (64, 50257), (16, 131072), (8, 32000), (100, 32000), (24, 65536)]:
    for dt, tdt in ((DataType.Float, torch.float32), (DataType.BFloat16, torch.bfloat16)):
        with FusionDefinition() as fd:
            softmax(fd, dt)
        x = torch.randn(rows, cols, device="cuda", dtype=tdt)
        (out,) = fd.execute([x])
        err = rel_error(out, torch.softmax(x.double(), -1))
        us = bench(lambda: fd.execute([x]))
        n = fd._entry.last_run.num_kernels
        buf = torch.empty(2 * x.numel() * x.element_size() // 4, device="cuda")
        dst = torch.empty_like(buf)
        cp = bench(lambda: dst.copy_(buf))
        eager = bench(lambda: torch.softmax(x, -1))
        res[f"{rows}x{cols} {tdt}"] = (round(us, 1), round(cp, 1), round(eager, 1), n, f"{err:.1e}")
print("fraction", sys.argv[1], json.dumps(res))

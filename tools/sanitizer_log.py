"""Attribute the errors of a compute-sanitizer log to fuser's kernels or to others.

The GPU tests launch two kinds of kernel: fuser's, compiled with NVRTC and launched
through the driver API (``cuLaunchKernel`` from ``cuda.bindings``), and torch's, which
the tests call to compute expected values, launched through the CUDA runtime
(``cudaLaunchKernel`` in ``libcudart``, from ``libtorch_cuda``). A sanitizer reports
errors in both; only fuser's are fuser's to fix. Each report is a block::

    ========= Error: Potential RAW hazard detected at __shared__ 0x1210 in block (2,4,0) :
    =========     Write Thread (96,1,0) at void at::native::reduce_kernel<...>(T3)+0xe800
    =========     ...
    =========     Saved host backtrace up to driver entry point at kernel launch time
    =========         Host Frame: cudaLaunchKernel [0x745b7] in libcudart.so.13

A block whose host backtrace passes through ``libcudart``, ``libtorch`` or
``libcublas`` is another library's kernel. A block without a host backtrace is
another library's when every block of the same kernel that has one is; every other
block (fuser's launches, a kernel seen only without a backtrace) counts against
fuser. ``--print-limit 0`` must be given to the sanitizer:
a block it did not print cannot be attributed, so a summary that counts more errors
than the log shows is a failure.

Usage::

    python tools/sanitizer_log.py LOG     # prints one line; exit 1 when fuser has errors
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

PREFIX = "========= "
# Top-level lines that are not error reports.
NOT_ERRORS = re.compile(
    r"COMPUTE-SANITIZER|ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY|Target application"
)
OTHER_LIBRARIES = re.compile(r"Host Frame:.* in (libcudart|libtorch|libc10_cuda|libcublas)")
KERNEL_AT = re.compile(r" at (.+?)\+0x[0-9a-f]+")
SUMMARY_COUNT = re.compile(
    r"(?:ERROR SUMMARY: (\d+) error|RACECHECK SUMMARY: \d+ hazards displayed \((\d+) errors)"
)


@dataclass
class Attribution:
    """The error reports of one log, by whose kernel they are in."""

    fuser: Counter[str] = field(default_factory=Counter)
    other: Counter[str] = field(default_factory=Counter)
    summary_errors: int = 0  # the errors the sanitizer's summary counts

    @property
    def shown(self) -> int:
        return sum(self.fuser.values()) + sum(self.other.values())

    @property
    def ok(self) -> bool:
        """No error in fuser's kernels, and every counted error was shown."""
        return not self.fuser and self.summary_errors <= self.shown

    def line(self) -> str:
        def names(c: Counter[str]) -> str:
            return "; ".join(f"{n} x{k}" for n, k in c.most_common(3))

        text = f"fuser kernels: {sum(self.fuser.values())} errors"
        if self.fuser:
            text += f" ({names(self.fuser)})"
        text += f"; other libraries' kernels: {sum(self.other.values())} errors"
        if self.other:
            text += f" ({names(self.other)})"
        if self.summary_errors > self.shown:
            text += f"; {self.summary_errors - self.shown} counted but not shown (--print-limit 0?)"
        return text


def attribute(text: str) -> Attribution:
    """Split the error reports of a sanitizer log (``text``) by whose kernel they hit."""
    result = Attribution()
    blocks: list[list[str]] = []
    for raw in text.splitlines():
        # the sanitizer's lines may follow the test runner's output on the same line
        at = raw.find("=========")
        if at < 0:
            continue
        line = raw[at:]
        if not line[len(PREFIX) :].strip():
            blocks.append([])  # a blank report line ends the previous block
            continue
        if line.startswith(PREFIX) and not line.startswith(PREFIX + " "):
            header = line[len(PREFIX) :]
            m = SUMMARY_COUNT.search(header)
            if m:
                result.summary_errors += int(m.group(1) or m.group(2))
            if NOT_ERRORS.search(header):
                blocks.append([])  # ends the previous block; not an error itself
                continue
            blocks.append([header])
        elif blocks and blocks[-1]:
            blocks[-1].append(line)
    reports: list[tuple[str, bool | None]] = []  # (kernel, another library's? None: no backtrace)
    for block in blocks:
        if not block:
            continue
        kernel = "?"
        for line in block[1:]:
            m = KERNEL_AT.search(line)
            if m and "Host Frame" not in line:
                kernel = m.group(1)[:80]
                break
        if not any("Host Frame" in line for line in block[1:]):
            reports.append((kernel, None))
        else:
            reports.append((kernel, any(OTHER_LIBRARIES.search(line) for line in block[1:])))
    # A report without a host backtrace is another library's when that kernel's reports
    # with one all are (racecheck printed some of cuBLASLt's and torch's attention
    # kernels' hazards without one, H200); otherwise it counts against fuser.
    by_kernel: dict[str, set[bool]] = {}
    for kernel, other in reports:
        if other is not None:
            by_kernel.setdefault(kernel, set()).add(other)
    for kernel, other in reports:
        if other is None:
            other = kernel != "?" and by_kernel.get(kernel) == {True}
        (result.other if other else result.fuser)[kernel] += 1
    return result


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python tools/sanitizer_log.py LOG", file=sys.stderr)
        return 2
    try:
        text = Path(argv[0]).read_text(errors="replace")
    except OSError as e:
        print(f"sanitizer_log: cannot read {argv[0]}: {e.strerror}", file=sys.stderr)
        return 2
    result = attribute(text)
    print(result.line())
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Two-level caching like nvFuser's ``FusionCache``.

Level one maps a definition to a fusion id: the key is the printed body of the
definition (records with their constants), so identical definitions share one
fusion and a different constant or structure gets a new id. Level two, per fusion,
maps an input signature (rank, dtype, contiguity and size-1 axes of each tensor;
sizes and scalar values only for fusions with dynamic reshapes, which are
concretized per size) to a ``Runtime``, the fusion actually run. Changing the size
of a symbolic axis never creates a new fusion id.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar

from xdsl.ir import BlockArgument, SSAValue

from fuser.frontend.state import InputSpec, Record
from fuser.ir.dialects.fuser import DynamicPadOp, DynamicSliceOp, FusionOp, ReshapeOp, TensorType

_SERIAL_FORMAT = "fuser-fusion-cache-1"


@dataclass
class Runtime:
    """What runs for one input signature: the (possibly concretized) fusion."""

    fusion: FusionOp
    runs: int = 0
    executables: dict[tuple, Any] = field(default_factory=dict)
    """(``driver.Signature``, target, passes) -> the ``driver.Executable`` compiled
    for it: the only thing ``fd.execute`` caches on the CPU, and what the GPU
    programs of ``CacheEntry.gpu_plans`` run."""
    aliased: list[tuple[int, int]] | None = None
    """(output position, input position) of every returned output that is written
    in place into an input (``fuser.frontend.execution.with_aliased_inputs``);
    None until the first run reads it from ``fusion``."""
    in_place: tuple[tuple[int, ...], frozenset[int]] | None = None
    """The inputs each output is written into (-1: none) and the inputs the fusion
    reads only element by element, when some output is written in place (else
    ``()``); None until the first run reads them (``check_in_place_inputs``)."""


@dataclass
class CacheEntry:
    id: int
    key: str
    records: list[Record]
    fusion: FusionOp
    inputs: list[InputSpec]
    runtimes: dict[tuple, Runtime] = field(default_factory=dict)
    gpu_plans: dict[tuple, tuple[Any, Runtime]] = field(default_factory=dict)
    """GPU input signature (``gpu_key``) -> (``fuser.runtime.gpu_program.GpuProgram``,
    runtime): the compiled program and its kernels for that signature."""
    hot: dict[tuple, Any] = field(default_factory=dict)
    """``gpu_key`` -> ``fuser.runtime.hot_launch.HotLauncher``: the cache-hit launchers
    of the ``gpu_plans`` that have one (``fuser.frontend.execution.hot_execute``)."""
    passes: tuple[str, ...] = ()
    """The pipeline ``fd.execute`` compiles with (``fd.pipeline``); empty: the
    driver's ``PASSES``."""
    last_run: Any = None
    """What the last ``execute`` ran: ``"cpu"`` (the host program on the CPU), or the
    ``GpuProgram`` (whose ``cuda_sources()`` are the kernels it launched); None
    before the first run. ``fd.last_cuda_code`` reads it."""
    compiled: dict[tuple, list[Any]] = field(default_factory=dict)
    """``layouts.layout_key`` of every input layout this fusion ran with -> the
    inputs' metadata (shape/stride/dtype-only arrays and scalars): what
    ``fd.cuda_code_for``/``fd.scheduled_fusion_ir_for`` answer for (nvFuser's compiled
    kernels)."""
    last_layout: tuple | None = None
    """The ``layout_key`` of the last run (``fd.last_cuda_code`` and
    ``fd.last_scheduled_fusion_ir``)."""
    user_schedules: dict[tuple, Any] = field(default_factory=dict)
    """``layout_key`` -> ``user_schedule.UserSchedule`` made by a ``schedule()`` hook."""
    last_user_schedule: Any = None
    """The user schedule that ran last (never cleared, as nvFuser's
    ``last_user_def_executor``): the kernel strings prefer it."""

    @cached_property
    def concrete(self) -> bool:
        """``needs_concretization``, computed once (the fusion never changes)."""
        return self.needs_concretization

    @property
    def needs_concretization(self) -> bool:
        """A reshape without a static keep/merge/split view must be decided per size; a
        slice or pad whose bounds or widths are run-time scalars per their values."""
        return any(
            (isinstance(op, ReshapeOp) and op.view is None)
            or isinstance(op, DynamicSliceOp | DynamicPadOp)
            for op in self.fusion.walk()
        )

    @cached_property
    def scalar_extents(self) -> bool:
        """Whether an extent of the fusion is the value of a scalar input (the
        ``sizes`` of ``fuser.full`` and the like, ``fuser.iota``'s length, traced back
        through scalar arithmetic to a block argument). A GPU plan holds its output
        shapes, so the GPU plans of such a fusion are keyed by the scalars' values."""
        from fuser.schedulers.analysis.sizes import size_operands

        seen: set[SSAValue] = set()

        def from_scalar_input(v: SSAValue) -> bool:
            if v in seen:
                return False
            seen.add(v)
            if isinstance(v, BlockArgument):
                return not isinstance(v.type, TensorType)
            return any(from_scalar_input(o) for o in v.owner.operands if not isinstance(o.type, TensorType))

        return any(from_scalar_input(v) for op in self.fusion.walk() for v in size_operands(op))

    def release(self) -> None:
        """Drop what the entry compiled (host runtimes, GPU programs, cache-hit
        launchers and their CUDA graphs); a definition that runs again compiles
        again."""
        self.runtimes.clear()
        self.gpu_plans.clear()
        self.hot.clear()

    def gpu_key(self, inputs: Any) -> tuple:
        """The key of ``gpu_plans`` for these inputs (``fuser.runtime.gpu_executor.fast_key``
        of each): scalars by value when they decide shapes (``concrete``,
        ``scalar_extents``), else by type."""
        from fuser.runtime.gpu_executor import fast_key

        by_value = self.concrete or self.scalar_extents
        return tuple(fast_key(x, by_value) for x in inputs)


class FusionCache:
    """The process-wide cache of fusions (``FusionCache.get()``)."""

    _instance: ClassVar[FusionCache | None] = None
    definition_class: ClassVar[type | None] = None
    """``FusionDefinition``, set by ``fuser.frontend.fusion_definition`` (above this
    module): the class that defines fusions again (``deserialize``, concretization)."""

    @classmethod
    def definition(cls) -> Any:
        if cls.definition_class is None:
            raise RuntimeError("FusionCache: import fuser.frontend.fusion_definition first")
        return cls.definition_class

    def __init__(self) -> None:
        self._entries: list[CacheEntry] = []
        self._by_key: dict[str, int] = {}

    @classmethod
    def get(cls) -> FusionCache:
        if cls._instance is None:
            cls._instance = FusionCache()
        return cls._instance

    @classmethod
    def reset(cls) -> None:
        """A new, empty cache. The old entries give up what they compiled
        (``CacheEntry.release``): something outside fuser may still hold their
        definitions (AOTAutograd's compiled functions keep the torch backend's
        partitions after ``torch._dynamo.reset()``), and each would otherwise keep its
        GPU programs, launchers and CUDA graphs' memory pools alive."""
        old = cls._instance
        cls._instance = FusionCache()
        if old is not None:
            for entry in old._entries:
                entry.release()

    def num_fusions(self) -> int:
        return len(self._entries)

    def lookup(self, key: str) -> CacheEntry | None:
        i = self._by_key.get(key)
        return None if i is None else self._entries[i]

    def next_id(self) -> int:
        return len(self._entries)

    def add(self, key: str, records: list[Record], fusion: FusionOp, inputs: list[InputSpec]) -> CacheEntry:
        entry = CacheEntry(len(self._entries), key, records, fusion, inputs)
        self._entries.append(entry)
        self._by_key[key] = entry.id
        return entry

    def serialize(self, path: Any) -> None:
        """Write the cached definitions (level one, in fusion-id order) to ``path`` as
        JSON holding their printed Python; ``deserialize`` rebuilds them. Runtimes are
        not written: they are rebuilt on the next ``execute`` (compiled kernels have
        their own disk cache)."""
        from fuser.frontend.printing import definition_text

        texts = [definition_text(e.records, e.id) for e in self._entries]
        with open(path, "w", encoding="utf-8") as f:
            json.dump({"format": _SERIAL_FORMAT, "fusions": texts}, f)

    def deserialize(self, path: Any) -> None:
        """Define again, in order, the fusions ``serialize`` wrote to ``path`` (into an
        empty cache, so that they keep their ids). The file holds Python definitions
        that are executed: load only files you wrote."""
        from fuser.frontend.datatype import DataType

        FusionDefinition = self.definition()  # noqa: N806 - the name the texts use
        if self._entries:
            raise ValueError(f"deserialize: the cache already holds {len(self._entries)} fusions")
        try:
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, ValueError) as e:
            raise ValueError(f"deserialize: cannot read {path}: {e}") from None
        if not isinstance(data, dict) or data.get("format") != _SERIAL_FORMAT:
            raise ValueError(f"deserialize: {path} is not a serialized fuser FusionCache")
        texts = data.get("fusions")
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            raise ValueError(f"deserialize: {path} has no list of definitions")
        for i, text in enumerate(texts):
            scope: dict[str, Any] = {"FusionDefinition": FusionDefinition, "DataType": DataType,
                                     "__builtins__": {"float": float, "complex": complex}}
            try:
                exec(text, scope)  # noqa: S102 - fuser's own printed definitions
                with FusionDefinition() as fd:
                    scope[f"nvfuser_fusion_id{i}"](fd)
            except Exception as e:  # noqa: BLE001 - reported as a bad file
                raise ValueError(f"deserialize: definition {i} in {path} does not load: {e}") from None
            if fd.id() != i:
                raise ValueError(f"deserialize: definition {i} in {path} repeats definition {fd.id()}")

    def entry(self, fusion_id: Any) -> CacheEntry:
        if isinstance(fusion_id, bool) or not isinstance(fusion_id, int) or not 0 <= fusion_id < len(self._entries):
            raise ValueError(f"no cached fusion with id {fusion_id!r} ({len(self._entries)} fusions are cached)")
        return self._entries[fusion_id]

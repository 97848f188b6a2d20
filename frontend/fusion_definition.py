"""``FusionDefinition``: nvFuser's legacy Python API on top of the ``fuser`` dialect.

::

    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        t1 = fd.ops.sum(t0, dims=[1])
        fd.add_output(t1)
    (out,) = fd.execute([np.ones((2, 3), np.float32)])

or by subclassing with ``definition(self)``. Leaving the ``with`` block finalizes the
definition: its printed text is looked up in the ``FusionCache`` (identical
definitions share one fusion id) and the ``fuser.fusion`` op is built.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Region

from fuser.frontend import execution, multidevice, printing, profiling, user_schedule
from fuser.frontend.building import (
    as_int,
    as_ints,
    check_mine,
    is_number,
    new_scalar,
    new_tensor,
    new_vector,
    record,
)
from fuser.frontend.cache import CacheEntry, FusionCache
from fuser.frontend.datatype import DataType, as_datatype, python_scalar_datatype
from fuser.frontend.layouts import allocation_axes, logical_contiguity
from fuser.frontend.ops import Operators
from fuser.frontend.state import (
    DefinitionState,
    InputSpec,
    OutputSpec,
    Record,
    Scalar,
    State,
    Tensor,
    Vector,
)
from fuser.frontend.user_schedule import ScheduleOperators
from fuser.frontend.validation import is_torch_tensor
from fuser.ir.dialects.fuser import ConstantOp, FusionOp, OutputOp, TensorType


class FusionDefinition:
    """Define a fusion with ``fd.define_*`` and ``fd.ops.*``, then ``execute`` it."""

    def __init__(self, fusion_id: Any = None, max_length: int = 9999) -> None:
        self._state = DefinitionState()
        self.ops = Operators(self)
        self._entry: CacheEntry | None = None
        self._defining = False
        self._legacy_fusion: Fusion | None = None
        self.sched = ScheduleOperators(self)
        self.profiled = False
        if isinstance(fusion_id, Fusion):
            self._legacy_fusion = fusion_id
        elif fusion_id is not None:
            entry = FusionCache.get().entry(fusion_id)
            self._replay(entry.records)
            self._entry = entry

    # ---- definition lifecycle -------------------------------------------------------
    def __enter__(self) -> FusionDefinition:
        if self._entry is not None:
            raise ValueError(f"fusion {self._entry.id} is already defined")
        self._defining = True
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        self._defining = False
        if exc_type is None:
            self._finalize()

    def definition(self) -> None:
        """Override in a subclass to define the fusion."""
        raise NotImplementedError

    def _ensure_defined(self) -> CacheEntry:
        if self._entry is None:
            if type(self).definition is not FusionDefinition.definition and not self._state.records:
                with self:
                    self.definition()
            elif not self._state.records and not self._defining:
                # nvFuser: the base class's definition() raises NotImplementedError.
                raise NotImplementedError(
                    "FusionDefinition has no definition: define it in a `with fd:` block "
                    "or override definition() in a subclass"
                )
            else:
                self._finalize()
        assert self._entry is not None
        return self._entry

    def _finalize(self) -> None:
        _check_cpu_tensors(self._state.records)
        cache = FusionCache.get()
        key = printing.definition_body(self._state.records)
        entry = cache.lookup(key)
        if entry is None:
            fusion = self._state_fusion(f"nvfuser_fusion_id{cache.next_id()}")
            rng = self._state.rng_spec(self)  # hidden Philox seed/offset inputs, last
            inputs = list(self._state.inputs) + ([rng] if rng is not None else [])
            entry = cache.add(key, list(self._state.records), fusion, inputs)
        self._entry = entry
        if self._legacy_fusion is not None:
            self._legacy_fusion._fd = self

    def _state_fusion(self, name: str) -> FusionOp:
        """Close the block with ``fuser.output`` and wrap it in a ``fuser.fusion``."""
        s = self._state
        block = s.block
        block.add_op(OutputOp([o.value for o in s.outputs], [o.alias for o in s.outputs]))
        out_types = []
        for o in s.outputs:
            if o.alias >= 0:
                continue
            t = o.value.type
            if isinstance(t, TensorType) and o.stride_order is not None:
                t = TensorType(t.get_shape(), t.element_type, stride_order=o.stride_order)
            out_types.append(t)
        fusion = FusionOp(name, [a.type for a in block.args], out_types, Region(block))
        try:
            fusion.verify()
        except Exception as e:  # noqa: BLE001 - reported as a definition error
            raise ValueError(f"invalid fusion definition: {e}") from None
        # The block now belongs to the fusion: later definitions start a fresh one.
        return fusion

    @classmethod
    def _replayed(cls, records: Sequence[Record], bindings: dict[int, Any] | None) -> FusionDefinition:
        fd = FusionDefinition()
        fd._state = DefinitionState(bindings=bindings)
        fd._replay(records)
        return fd

    def _replay(self, records: Sequence[Record]) -> None:
        """Call the API again with each record's canonical arguments."""
        states = self._state.states

        def resolve(v: Any) -> Any:
            if isinstance(v, State):
                return states[v.index]
            if isinstance(v, list | tuple):
                return [resolve(x) for x in v]
            return v

        for r in records:
            obj: Any = self
            for part in r.target.split("."):
                obj = getattr(obj, part)
            before = len(states)
            obj(*[resolve(a) for a in r.args], **{k: resolve(v) for k, v in r.kwargs})
            got = [s.index for s in states[before:]]
            if got != [o.index for o in r.outputs]:
                raise ValueError(f"replaying '{printing.format_record(r)}' defined {got}")

    # ---- inputs and constants -------------------------------------------------------
    def _check_open(self, what: str) -> None:
        if self._entry is not None:
            from fuser.frontend.building import CompletedDefinitionError

            raise CompletedDefinitionError(
                f"Attempting to add to a completed definition! ({what}: fusion {self._entry.id} is already defined)"
            )

    def define_tensor(
        self,
        shape: Sequence[int] | None = None,
        contiguity: Any = None,
        dtype: Any = DataType.Float,
        is_cpu: bool = False,
        stride_order: Sequence[int] | None = None,
        *,
        sizes: Sequence[int] | None = None,
        strides: Sequence[int] | None = None,
        static_sizes: bool = False,
        symbolic_sizes: Sequence[int] | None = None,
        contiguous: Any = None,
    ) -> Tensor:
        """A tensor input. ``shape`` entries: -1 symbolic, 1 broadcast, n static.
        Also ``define_tensor(sizes=, strides=)`` and the legacy
        ``define_tensor(symbolic_sizes=, contiguous=)``."""
        name = "define_tensor"
        self._check_open(name)
        if symbolic_sizes is not None:
            shape = symbolic_sizes
        if contiguous is not None:
            contiguity = contiguous
        dt = as_datatype(dtype, f"{name}: dtype")
        if dt.is_null:
            raise ValueError(f"{name}: dtype must not be DataType.Null")
        dt.to_dtype()
        if sizes is not None:
            shape, contiguity, stride_order = _descriptor(sizes, strides, static_sizes, name)
        if shape is None:
            raise ValueError(f"{name}: shape (or sizes) is required")
        shp = as_ints(list(shape) if isinstance(shape, tuple) else shape, name, "shape")
        if any(d < -1 for d in shp):
            raise ValueError(f"{name}: shape {shp} has an extent below -1")
        rank = len(shp)
        order = None
        given = None  # nvFuser records (and prints) the stride order given, even row-major
        if stride_order is not None and len(stride_order) > 0:
            order = given = as_ints(list(stride_order), name, "stride_order")
            if sorted(order) != list(range(rank)):
                raise ValueError(f"{name}: stride_order {order} is not a permutation of 0..{rank - 1}")
            if order == list(range(rank - 1, -1, -1)):
                order = None
        # nvFuser: contiguity[p] describes the p-th axis in allocation order (outermost
        # first); the IR type keeps it per logical axis.
        contig, logical = _contiguity(contiguity, shp, order, name)
        kwargs: list[tuple[str, Any]] = [("shape", shp), ("contiguity", contig), ("dtype", dt), ("is_cpu", bool(is_cpu))]
        if given is not None:
            kwargs.append(("stride_order", given))
        declared = TensorType(shp, dt.to_dtype(), logical, order)
        bound = self._state.binding()
        ir_type = declared if bound is None else TensorType(bound, dt.to_dtype(), logical, order)
        arg = self._state.add_arg(ir_type)
        t = new_tensor(self, arg)
        self._state.inputs.append(InputSpec("tensor", t, [arg.index], declared))
        record(self, name, [], kwargs, [t])
        return t

    def from_pytorch(self, tensor: Any, static_sizes: bool = False) -> Tensor:
        """A tensor input shaped like ``tensor`` (a torch tensor or a numpy array)."""
        if is_torch_tensor(tensor):
            from fuser.frontend.devices import check_from_pytorch_device

            check_from_pytorch_device(tensor)  # nvFuser's device model only (devices.py)
            if tensor.device.type != "cpu" and not hasattr(tensor, "numpy"):  # pragma: no cover
                raise ValueError("from_pytorch: unsupported tensor")
            sizes = list(tensor.shape)
            strides = list(tensor.stride())
            dtype = as_datatype(tensor.dtype, "from_pytorch: dtype")
        elif isinstance(tensor, np.ndarray):
            sizes = list(tensor.shape)
            strides = [s // tensor.itemsize for s in tensor.strides]
            dtype = as_datatype(tensor.dtype, "from_pytorch: dtype")
        else:
            raise ValueError(f"from_pytorch: expected a torch tensor or numpy array, got {type(tensor).__name__}")
        return self.define_tensor(sizes=sizes, strides=strides, dtype=dtype, static_sizes=static_sizes)

    def define_scalar(self, value: Any = None, dtype: Any = DataType.Null) -> Scalar:
        """``define_scalar(value, dtype=)`` is a constant, ``define_scalar(dtype=)`` an input."""
        name = "define_scalar"
        self._check_open(name)
        if isinstance(value, DataType) and dtype is DataType.Null:
            value, dtype = None, value
        if isinstance(value, np.generic):
            value = value.item()
        dt = as_datatype(dtype, f"{name}: dtype")
        if value is None:
            dt = DataType.Double if dt.is_null else dt
            ours = dt.to_dtype()
            bound = self._state.binding()
            arg = self._state.add_arg(ours.to_xdsl())
            s = new_scalar(self, arg, bound)
            self._state.inputs.append(InputSpec("scalar", s, [arg.index], ours.to_xdsl()))
        else:
            if not is_number(value):
                raise ValueError(f"{name}: value must be a number, got {value!r} ({type(value).__name__})")
            dt = python_scalar_datatype(value) if dt.is_null else dt
            ours = dt.to_dtype()
            from fuser.frontend.building import convert_scalar

            try:
                value = convert_scalar(value, ours)
            except (OverflowError, ValueError):
                raise ValueError(f"{name}: {value!r} cannot be a {dt!r}") from None
            op = self._state.insert(ConstantOp(value, ours))
            s = new_scalar(self, op.results[0], value)
        record(self, name, [value], [("dtype", dt)], [s])
        return s

    def define_constant(self, value: Any, dtype: Any = DataType.Null) -> Scalar:
        """The legacy spelling of ``define_scalar(value)``."""
        if value is None:
            raise ValueError("define_constant: value is required")
        return self.define_scalar(value, dtype=dtype)

    def define_vector(self, arg: Any, dtype: Any = DataType.Int) -> Vector:
        """``define_vector(n)``: n scalar inputs of ``dtype`` (each is one input of
        ``execute``, as in nvFuser; a list or tuple of n ints passed there is spread
        over them) and the vector of them; ``define_vector([..])``: a vector of ints and
        scalars. A scalar that is not an integer (a Double, a Bool) is cast to Int,
        truncating, where the vector is used as sizes or indices (nvFuser casts them to
        its index type)."""
        name = "define_vector"
        self._check_open(name)
        dt = as_datatype(dtype, f"{name}: dtype")
        if dt not in (DataType.Int, DataType.Int32):
            raise ValueError(f"{name}: dtype must be DataType.Int or DataType.Int32, got {dt!r}")
        if isinstance(arg, int | np.integer) and not isinstance(arg, bool):
            n = as_int(arg, name, "size")
            if n < 0:
                raise ValueError(f"{name}: size {n} is negative")
            arg = [self.define_scalar(dtype=dt) for _ in range(n)]
        from fuser.frontend.building import shape_elems

        if isinstance(arg, Vector):
            raise ValueError(f"{name}: expected a size or a list, got vector {arg.name}")
        canon, elems = shape_elems(self, arg, name, "values")
        v = new_vector(self, elems)
        record(self, name, [canon], [("dtype", dt)], [v])
        return v

    # ---- outputs --------------------------------------------------------------------
    def add_output(self, output: Any, alias_input: Any = None, stride_order: Sequence[int] | None = None) -> None:
        """nvFuser's overloads: ``add_output(t)``, ``add_output(t, alias_input)`` (``t``
        written in place into the input tensor) and ``add_output(t, stride_order)`` (a
        list of ints given second is the stride order, as in nvFuser's bindings). A
        tensor from ``fd.ops.stride_order`` keeps its order unless one is given here."""
        name = "add_output"
        self._check_open(name)
        if not isinstance(output, Tensor | Scalar):
            raise ValueError(f"{name}: expected a tensor or scalar, got {output!r}")
        check_mine(self, output, name)
        if isinstance(alias_input, list | tuple):  # the stride_order overload, positional
            if stride_order is not None:
                raise ValueError(
                    f"{name}: stride_order given twice ({list(alias_input)} and {list(stride_order)})"
                )
            alias_input, stride_order = None, alias_input
        if alias_input is not None and stride_order is not None and len(stride_order) > 0:
            raise ValueError(f"{name}: stride_order can't be dictated for aliased outputs")
        if alias_input is None and stride_order is None and isinstance(output, Tensor):
            stride_order = output.stride_order
        kwargs: list[tuple[str, Any]] = []
        alias = -1
        if alias_input is not None:
            spec = next((s for s in self._state.inputs if s.state is alias_input), None)
            if spec is None or spec.kind != "tensor":
                raise ValueError(f"{name}: alias_input must be a tensor input of this fusion, got {alias_input!r}")
            if not isinstance(output, Tensor) or not output.type.same_value_type(alias_input.value.type):
                raise ValueError(
                    f"{name}: {output.name} of type {output.value.type} cannot be written in place "
                    f"into {alias_input.name} of type {alias_input.value.type}"
                )
            alias = spec.args[0]
            kwargs.append(("alias_input", alias_input))
        order = None
        if stride_order is not None and len(stride_order) > 0:
            if not isinstance(output, Tensor):
                raise ValueError(f"{name}: stride_order needs a tensor output")
            order = tuple(as_ints(list(stride_order), name, "stride_order"))
            if sorted(order) != list(range(output.ndim)):
                raise ValueError(f"{name}: stride_order {list(order)} is not a permutation of 0..{output.ndim - 1}")
            kwargs.append(("stride_order", list(order)))
        self._state.outputs.append(OutputSpec(output.value, output, alias, order))
        record(self, name, [output], kwargs, [])

    def permute(self, t: Any, dims: Sequence[int] | None = None) -> Tensor:
        """Legacy ``fd.permute(t)`` (seed 002): reverse the axes when no dims are given."""
        if dims is None:
            if not isinstance(t, Tensor):
                raise ValueError(f"permute: expected a tensor, got {t!r}")
            dims = list(range(t.ndim - 1, -1, -1))
        return self.ops.permute(t, dims)

    # ---- queries ----------------------------------------------------------------------
    def id(self) -> int | None:
        return None if self._entry is None else self._entry.id

    def __repr__(self) -> str:
        """nvFuser's print: a blank line, ``def nvfuser_fusion_idN(fd : ...) -> None :``,
        the records, a blank line (check_captured_python_definition reads line 2)."""
        return "\n" + printing.definition_text(self._state.records, self.id()) + "\n"

    def last_repro_script(self) -> str:
        """The repro script kept by ``execute(inputs, save_repro_inputs=True)``."""
        script = self.__dict__.get("_last_repro_script")
        if script is None:
            raise ValueError("last_repro_script: execute with save_repro_inputs=True first")
        return script

    __str__ = __repr__

    def inputs(self) -> list[int]:
        """The state indices of the fusion's inputs, in order (nvFuser's ``fd.inputs()``)."""
        return [s.state.index for s in self._state.inputs]

    def outputs(self) -> list[int]:
        """The state indices of the fusion's outputs, in order (nvFuser's ``fd.outputs()``)."""
        return [o.state.index for o in self._state.outputs]

    def extents(self) -> list[int]:
        """nvFuser's indices of the input tensors' extents: one per axis of every tensor
        input, in order, numbered -1, -2, ... (they are not states of the definition)."""
        n = sum(s.state.ndim for s in self._state.inputs if isinstance(s.state, Tensor))
        return list(range(-1, -n - 1, -1))

    def fusion(self) -> FusionOp:
        """The cached (symbolic) ``fuser.fusion`` op."""
        return self._ensure_defined().fusion

    def fusion_ir(self) -> str:
        """The ``fuser`` IR: a module with one ``fuser.fusion``."""
        return str(ModuleOp([self.fusion().clone()]))

    to_mlir = fusion_ir

    @classmethod
    def from_mlir(cls, text: str) -> FusionDefinition:
        from fuser.frontend.mlir import definition_from_mlir

        return definition_from_mlir(text, cls)

    def repro_script_for(self, inputs: Sequence[Any]) -> str:
        """A script that defines this fusion and runs it with inputs like ``inputs``:
        nvFuser's form for torch inputs (``fuser.frontend.repro``), fuser's numpy
        form otherwise (``printing.repro_script``)."""
        from fuser.frontend.repro import nvfuser_repro_script, wants_nvfuser_form

        fid = self._ensure_defined().id
        if wants_nvfuser_form(inputs):
            return nvfuser_repro_script(repr(self), f"nvfuser_fusion_id{fid}", inputs)
        text = printing.definition_text(self._state.records, fid)
        return printing.repro_script(text, f"nvfuser_fusion_id{fid}", inputs)

    def _repro_error_str(self, section: str, inputs: Sequence[Any]) -> str:
        """nvFuser's message for an error while ``section`` (e.g. "executing"): what
        failed and a script that reproduces it with ``inputs``."""
        try:
            script = self.repro_script_for(inputs)
        except Exception as e:  # noqa: BLE001 - the message must not hide the original error
            script = f"# (no repro script: {type(e).__name__}: {e})"
        return (
            f"An error occurred while {section} the fusion definition. "
            "A script that reproduces it:\n" + script
        )

    def num_runtimes(self) -> int:
        """How many input signatures have a runtime in the second-level cache."""
        return len(self._ensure_defined().runtimes)

    # ---- segmentation (seed 000) and streams (seed 001) -----------------------------------
    def segment(self, inputs: Sequence[Any]) -> list[FusionDefinition]:
        """Segment the fusion for ``inputs`` (the scheduler registry decides, for
        their sizes) and store the segmentation: later ``execute`` calls run the
        segments in order with this definition as argument manager. Returns one
        definition per segment, in execution order; ``segment_index_space_maps``
        maps each one's state indices to this definition's (see
        ``fuser.frontend.segmentation``)."""
        from fuser.frontend.segmentation import segment_definition

        self._segmentation = segment_definition(self, inputs)
        return self._segmentation.definitions

    @property
    def segmentation(self) -> Any:
        """The stored ``segmentation.Segmentation`` (None before ``segment``)."""
        return self.__dict__.get("_segmentation")

    @property
    def segments(self) -> list[FusionDefinition]:
        seg = self.segmentation
        return [] if seg is None else seg.definitions

    @property
    def segment_index_space_maps(self) -> dict[FusionDefinition, dict[int, int]]:
        """Segment definition -> {segment state index: original state index}."""
        seg = self.segmentation
        return {} if seg is None else {s.definition: s.index_map for s in seg.steps}

    def clear_segmentation(self) -> None:
        self.__dict__.pop("_segmentation", None)

    def parallelize_stream(self, tensor: Any, axis: int = 0) -> None:
        """Mark axis ``axis`` of ``tensor`` stream-parallel (seed 001): ``execute``
        then lowers the fusion with ``lower-stream-loops`` and runs the host program
        (``fuser.frontend.streams``)."""
        from fuser.frontend.streams import parallelize_stream

        parallelize_stream(self, tensor, axis)

    def stream_program(self, num_streams: int = 4) -> Any:
        """The module ``lower-stream-loops{num-streams=n}`` makes of the stream marks."""
        from fuser.frontend.streams import stream_program

        return stream_program(self, num_streams)

    # ---- execution --------------------------------------------------------------------
    def execute(
        self,
        inputs: Sequence[Any],
        *,
        executor: execution.Executor | None = None,
        num_streams: int | None = None,
        device: Any = None,
        override_user_schedule: bool = False,
        capture_debug_output: bool = False,
        print_repro: bool = False,
        profile: bool = False,
        save_repro_inputs: bool = False,
        _enable_options: Sequence[str] = (),
        _disable_options: Sequence[str] = (),
    ) -> list[Any]:
        """Run the fusion; returns the outputs (aliased outputs are written in place).

        numpy arrays and CPU torch tensors run on the CPU through the reference
        interpreter (a fusion no single scheduler accepts at these sizes runs its
        segmented host program); GPU arrays (torch CUDA tensors,
        ``__cuda_array_interface__`` or DLPack objects) run as generated CUDA kernels
        and return the caller's array type on the same device. After ``segment``,
        the stored segments run in order (nvFuser's ``_execute_segments``). With
        stream-parallel axes (``parallelize_stream``), the stream-loop program runs
        on ``num_streams`` streams (default 4). A subclass defining ``schedule()``
        gets a user schedule on its first run (``fuser.frontend.user_schedule``;
        ``override_user_schedule=True`` runs the automatic schedulers instead).
        ``profile=True`` keeps a ``fd.profile()`` of the run
        (``fuser.frontend.profiling``); ``capture_debug_output=True`` keeps what
        fuser printed during the run (Python's ``sys.stdout``/``sys.stderr``; C-level
        output is not captured) for
        ``fd.debug_output()``. nvFuser's other keywords are checked by
        ``execute_options.check_execute_options`` (``device``, ``print_repro``, the
        NVFUSER_ENABLE/DISABLE option lists, ...). A cache hit on torch CUDA tensors
        with every keyword at its default goes through the signature's generated
        launcher when it has one (``execution.hot_execute``). A subclass defining
        ``multidevice_schedule()`` runs on every device of its mesh: each rank's shards
        in, its output shards out (``fuser.frontend.multidevice``)."""
        if multidevice.defines_multidevice_schedule(self):
            given = {
                "executor": executor, "num_streams": num_streams, "device": device,
                "override_user_schedule": override_user_schedule or None,
                "capture_debug_output": capture_debug_output or None, "print_repro": print_repro or None,
                "profile": profile or None, "save_repro_inputs": save_repro_inputs or None,
                "_enable_options": list(_enable_options) or None, "_disable_options": list(_disable_options) or None,
            }
            unsupported = sorted(k for k, v in given.items() if v is not None)
            if unsupported:
                raise ValueError(
                    f"execute: {', '.join(unsupported)} is not supported for a definition with "
                    "multidevice_schedule (each rank runs its shards)"
                )
            self._ensure_defined()
            return multidevice.execute(self, inputs)
        entry = self._entry
        if (  # a cache hit with every keyword at its default: the hot launcher, if any
            entry is not None and entry.hot and executor is None and num_streams is None and device is None
            and override_user_schedule is False and capture_debug_output is False and print_repro is False
            and profile is False and save_repro_inputs is False and not _enable_options and not _disable_options
        ):
            outs = execution.hot_execute(self, entry, inputs)
            if outs is not None:
                return outs
        from fuser.frontend.execute_options import check_execute_options

        check_execute_options(
            self, inputs, device=device, override_user_schedule=override_user_schedule,
            capture_debug_output=capture_debug_output, print_repro=print_repro,
            profile=profile, save_repro_inputs=save_repro_inputs,
            enable_options=_enable_options, disable_options=_disable_options,
        )
        self.profiled = profile
        state = self.__dict__
        state["_debug_output"] = None
        state.pop("_profile", None)
        first = self._entry is None
        entry = self._ensure_defined()
        # nvFuser: the definition's first execute (and every profiled one) schedules it.
        if first and user_schedule.defines_schedule(self):
            if profile or user_schedule.find(entry, inputs) is None:
                user_schedule.make(self, inputs)
        sched = None if override_user_schedule else user_schedule.find(entry, inputs)
        if profile or capture_debug_output:
            outs = self._execute_observed(entry, sched, inputs, executor, num_streams, profile, capture_debug_output)
        elif sched is not None:
            outs = user_schedule.run(entry, sched, inputs)
        else:
            outs = self._execute_auto(entry, inputs, executor, num_streams)
        if entry.last_run == "cpu" and executor is None and self.segmentation is None:
            from fuser.frontend.kernel_strings import record_run

            record_run(entry, inputs)  # GPU runs: the plans execute keeps (kernel_strings)
        return outs

    def _execute_observed(
        self,
        entry: CacheEntry,
        sched: Any,
        inputs: Sequence[Any],
        executor: execution.Executor | None,
        num_streams: int | None,
        profile: bool,
        capture_debug_output: bool,
    ) -> list[Any]:
        """``execute`` with ``profile`` and/or ``capture_debug_output``."""
        import contextlib
        import io
        import time

        buffer = io.StringIO()
        capture = _redirected(buffer) if capture_debug_output else contextlib.ExitStack()
        on_gpu = profile and execution._any_gpu_input(inputs)
        if on_gpu:
            _synchronize(inputs)
        start = time.perf_counter()
        with capture, profiling.recording(profile) as rec:
            if sched is not None:
                outs = user_schedule.run(entry, sched, inputs)
            else:
                outs = self._execute_auto(entry, inputs, executor, num_streams)
            if on_gpu:
                _synchronize(inputs)
        host_ms = (time.perf_counter() - start) * 1e3
        if capture_debug_output:
            self.__dict__["_debug_output"] = buffer.getvalue()
        if rec is not None:
            self.__dict__["_profile"] = self._make_profile(entry, rec, inputs, outs, host_ms, sched is not None)
        return outs

    def _execute_auto(
        self, entry: CacheEntry, inputs: Sequence[Any], executor: execution.Executor | None, num_streams: int | None
    ) -> list[Any]:
        """The run without a user schedule (see ``execute``)."""
        if executor is None:
            from fuser.frontend.streams import execute_streams, stream_axes_of

            if stream_axes_of(self):
                return execute_streams(self, inputs, 4 if num_streams is None else num_streams)
            seg = self.segmentation
            if seg is not None:
                from fuser.frontend.segmentation import execute_segments

                return execute_segments(self, seg, inputs)
        rec = profiling.active()
        if rec is None or execution._any_gpu_input(inputs):
            return execution.execute(entry, inputs, executor)
        import time

        before = len(rec.kernels)
        start = time.perf_counter()
        outs = execution.execute(entry, inputs, executor)
        if len(rec.kernels) == before:  # one segment: the whole fusion on the reference path
            rec.add(
                f"nvfuser_fusion_id{entry.id}", "cpu", self._scheduler_of(entry, inputs),
                (time.perf_counter() - start) * 1e3, inputs, outs,
            )
        return outs

    def _scheduler_of(self, entry: CacheEntry, inputs: Sequence[Any]) -> str:
        """The scheduler the registry picks for the whole fusion at these inputs."""
        from fuser.frontend.layouts import layout_key
        from fuser.frontend.validation import flatten_inputs, plain_inputs
        from fuser.schedulers.analysis.sizes import bind_sizes
        from fuser.schedulers.registry import select
        from fuser.schedulers.target import DEFAULT_TARGET

        _, metas = layout_key(entry, inputs)
        plain = plain_inputs(metas)
        rt = execution.runtime_for(entry, plain)
        flat = flatten_inputs(entry.inputs, plain)
        shape_args = [x.shape if isinstance(x, np.ndarray) else x for x in flat]
        sel = select(rt.fusion, bind_sizes(rt.fusion, shape_args), DEFAULT_TARGET)
        return str(sel.kind)

    def _make_profile(
        self, entry: CacheEntry, rec: Any, inputs: Sequence[Any], outs: Sequence[Any], host_ms: float, user: bool
    ) -> Any:
        """The ``FusionProfile`` of a finished profiled run (GPU runs: the plan's
        segments, timed as a whole between two device synchronizations)."""
        if not execution._any_gpu_input(inputs):
            return profiling.make_profile(entry.id, rec, "cpu", "host wall clock", host_ms, inputs, outs)
        rec.kernels.clear()  # GPU runs record nothing on their own: the plan's segments
        plan = entry.last_run
        device = f"cuda:{getattr(plan, 'device', 0)}"
        exe = getattr(plan, "exe", None)  # a GpuProgram: its compiled program
        if exe is not None and len(exe.launches) > 1:
            kinds = profiling.segment_schedulers(exe)
            for launch in exe.launches:
                name = launch.callee.root_reference.data
                rec.add(name, device, kinds.get(name, "unknown"), None, [], [])
        else:
            if user:
                kind = "user"
            elif exe is not None and exe.launches:
                (kind,) = profiling.segment_schedulers(exe).values()  # the one launch's
            else:
                kind = self._scheduler_of(entry, inputs)
            rec.add(f"nvfuser_fusion_id{entry.id}", device, kind, host_ms, inputs, outs)
        return profiling.make_profile(
            entry.id, rec, device, "host wall clock, device synchronized", host_ms, inputs, outs
        )

    def profile(self) -> Any:
        """The ``profiling.FusionProfile`` of the last ``execute(inputs, profile=True)``;
        ``ValueError`` (nvFuser's) when the last run was not profiled."""
        prof = self.__dict__.get("_profile")
        if not getattr(self, "profiled", False) or prof is None:
            raise ValueError("The execute() method was not previously called with profiling enabled!")
        return prof

    def debug_output(self) -> str | None:
        """What the last ``execute(inputs, capture_debug_output=True)`` printed (a
        string, possibly empty); None when the last run did not capture it."""
        return self.__dict__.get("_debug_output")

    # ---- kernel strings (fuser.frontend.kernel_strings) --------------------------------
    def last_cuda_code(self, intrinsic_code: bool = False, **kwargs: Any) -> str:
        """The CUDA C of the kernels of this fusion's last run: after a GPU run the
        kernels it launched; after a CPU run (the reference interpreter; nothing is
        compiled) the kernels fuser's GPU path generates for the same input layouts;
        a user ``schedule()``'s serial kernel when one ran. ``intrinsic_code=True``
        includes the helper preamble. After ``segment``, the segments' own last code.
        Raises nvFuser's ``RuntimeError`` when the fusion is not defined or never ran
        (``fuser.frontend.kernel_strings``)."""
        from fuser.frontend import kernel_strings

        override = bool(kwargs.pop("override_user_schedule", False))
        _no_more_kwargs("last_cuda_code", kwargs)
        seg = self.segmentation
        if seg is not None:  # after fd.segment: the segments' own last runs
            return "\n".join(d.last_cuda_code(intrinsic_code) for d in self.segments)
        return kernel_strings.last_cuda_code(self, intrinsic_code, override)

    def cuda_code_for(self, inputs: Sequence[Any], intrinsic_code: bool = False, **kwargs: Any) -> str:
        """The CUDA C of this fusion for ``inputs``, whose layout must have run (nvFuser
        answers for compiled kernels; ``RuntimeError`` "... is not compiled ..."
        otherwise). ``generate_cuda_code(inputs)`` generates it for any inputs."""
        from fuser.frontend import kernel_strings

        override = bool(kwargs.pop("override_user_schedule", False))
        _no_more_kwargs("cuda_code_for", kwargs)
        return kernel_strings.cuda_code_for(self, inputs, intrinsic_code, override)

    def last_scheduled_fusion_ir(self, tensor_transforms: bool = False, **kwargs: Any) -> str:
        """The scheduled fusion IR of the last run (see ``last_cuda_code``);
        ``tensor_transforms=True`` includes the ``iterdomain`` transforms."""
        from fuser.frontend import kernel_strings

        override = bool(kwargs.pop("override_user_schedule", False))
        _no_more_kwargs("last_scheduled_fusion_ir", kwargs)
        return kernel_strings.last_scheduled_fusion_ir(self, tensor_transforms, override)

    def scheduled_fusion_ir_for(self, inputs: Sequence[Any], tensor_transforms: bool = False, **kwargs: Any) -> str:
        """The scheduled fusion IR for ``inputs``, whose layout must have run (as
        ``cuda_code_for``); ``generate_scheduled_fusion_ir(inputs)`` for any inputs."""
        from fuser.frontend import kernel_strings

        override = bool(kwargs.pop("override_user_schedule", False))
        _no_more_kwargs("scheduled_fusion_ir_for", kwargs)
        return kernel_strings.scheduled_fusion_ir_for(self, inputs, tensor_transforms, override)

    def generate_cuda_code(self, inputs: Sequence[Any], intrinsic_code: bool = True) -> str:
        """The CUDA C fuser generates for ``inputs`` without running them (host or GPU
        arrays: only their shapes, dtypes and strides are used; no GPU is needed): the
        kernels of each segment, under a ``// segment k`` header when it is segmented."""
        from fuser.frontend import kernel_strings

        return kernel_strings.generate_cuda_code(self._ensure_defined(), inputs, intrinsic_code)

    def generate_scheduled_fusion_ir(self, inputs: Sequence[Any], tensor_transforms: bool = True) -> str:
        """The fusion IR scheduled for ``inputs`` (select-schedulers + schedule-fusions)
        without running them."""
        from fuser.frontend.scheduled_ir import scheduled_fusion_ir_for

        return scheduled_fusion_ir_for(self, inputs, tensor_transforms=tensor_transforms)

    @property
    def pipeline(self) -> tuple[str, ...]:
        """The passes the compiler driver runs after ``bind-sizes`` when this fusion
        is compiled for ``fd.execute``, ``fd.plan`` and the kernel strings
        (``fuser.runtime.driver.PASSES`` unless set; ``fuser-opt --print-pipeline``
        prints the default)."""
        from fuser.runtime.driver import PASSES

        return self._ensure_defined().passes or PASSES

    @pipeline.setter
    def pipeline(self, passes: Sequence[str]) -> None:
        """Compile this fusion with ``passes`` from now on (a pass name that does not
        exist is a ``ValueError``). The fusion's compiled programs are dropped; like
        them, the pipeline belongs to the fusion, so every definition of the same
        fusion shares it."""
        from fuser.passes import all_passes

        known = all_passes()
        bad = [p for p in passes if p.split("{", 1)[0] not in known]
        if bad:
            raise ValueError(f"pipeline: unknown pass '{bad[0]}'; passes are {', '.join(sorted(known))}")
        entry = self._ensure_defined()
        entry.passes = tuple(passes)
        entry.gpu_plans.clear()
        entry.hot.clear()

    def plan(self, inputs: Sequence[Any], target: Any = None) -> Any:
        """The plan of what ``fd.execute`` compiles for these inputs (host or GPU
        arrays: only their shapes are used; ``fuser.runtime.plan.executable_plan``):
        every kernel launch of the compiled program with its scheduler and
        parameters, the host views, ``num_kernels``; ``str(plan)`` lists the
        rejections. A fusion the pipeline cannot compile gives the registry's answer
        for the whole fusion with the error."""
        from dataclasses import replace

        from fuser.frontend.validation import flatten_inputs, plain_inputs, validate_inputs
        from fuser.runtime import gpu_arrays as ga
        from fuser.runtime.driver import CompileError
        from fuser.runtime.gpu_executor import meta_array
        from fuser.runtime.plan import executable_plan, make_plan

        entry = self._ensure_defined()
        plain = plain_inputs([meta_array(ga.array_info(x)) if ga.is_gpu_array(x) else x for x in inputs])
        validate_inputs(entry.inputs, plain)
        rt = execution.runtime_for(entry, plain)
        flat = flatten_inputs(entry.inputs, plain)
        if target is None:
            target = execution.device_target(inputs) if any(ga.is_gpu_array(x) for x in inputs) else execution._default_target()
        try:
            exe = execution.executable_for(entry, rt, flat, 0, target)
        except CompileError as e:
            return replace(make_plan(rt.fusion, flat, target), error=str(e))
        plan = executable_plan(exe, rt.fusion, flat)
        if not plan.is_complete:
            return plan
        # Kernels per launch, as the lowering launches them (what cuda_code_for prints).
        counts = {seg.sym_name.data: len(low.kernels) for seg, low in execution.lowered_segments(entry, inputs, target)}
        segments = tuple(
            replace(s, kernels=counts.get(s.fusion.sym_name.data)) if s.fusion is not None else s
            for s in plan.segments
        )
        return replace(plan, segments=segments)


class Fusion:
    """Legacy ``fs = Fusion(); with FusionDefinition(fs) as fd: ...; fs.execute(inputs)``."""

    def __init__(self) -> None:
        self._fd: FusionDefinition | None = None

    def execute(self, inputs: Sequence[Any]) -> list[Any]:
        if self._fd is None:
            raise ValueError("Fusion.execute: the fusion has no definition yet")
        return self._fd.execute(inputs)

    def id(self) -> int | None:
        return None if self._fd is None else self._fd.id()


def _redirected(buffer: Any) -> Any:
    """A context writing ``sys.stdout`` and ``sys.stderr`` into ``buffer``."""
    import contextlib

    stack = contextlib.ExitStack()
    stack.enter_context(contextlib.redirect_stdout(buffer))
    stack.enter_context(contextlib.redirect_stderr(buffer))
    return stack


def _synchronize(inputs: Sequence[Any]) -> None:
    """Wait for the devices of the GPU arrays among ``inputs``."""
    from fuser.runtime import gpu_arrays as ga
    from fuser.runtime.cuda_driver import synchronize

    for device in sorted({ga.array_info(x).device for x in inputs if ga.is_gpu_array(x)}):
        synchronize(device)


def _no_more_kwargs(name: str, kwargs: dict[str, Any]) -> None:
    if kwargs:
        raise TypeError(f"{name}() got unexpected keyword arguments {sorted(kwargs)}")


def _check_cpu_tensors(records: Sequence[Record]) -> None:
    """nvFuser's rule for ``define_tensor(is_cpu=True)``, checked as it builds the fusion
    (``TensorRecord``): only a 0-d tensor (a CPU scalar) may be on the CPU. The flag
    is about the tensor, not about where fuser runs (on the CPU every input is a CPU
    array, and ``is_cpu=False`` is right for them)."""
    for r in records:
        if r.target != "define_tensor":
            continue
        kw = dict(r.kwargs)
        if kw.get("is_cpu") and len(kw.get("shape", [])) > 0:
            raise ValueError(
                f"define_tensor {r.outputs[0].name}: CPU non-scalar tensor is not supported! "
                f"(is_cpu=True is for 0-d CPU scalar tensors; shape {list(kw['shape'])} has rank "
                f"{len(kw['shape'])})"
            )


def _contiguity(
    contiguity: Any, shape: list[int], order: Sequence[int] | None, name: str
) -> tuple[list[bool | None], list[bool | None]]:
    """(contiguity in allocation order, contiguity per logical axis), as nvFuser reads
    ``define_tensor``'s ``contiguity``: entry ``p`` is the ``p``-th axis in allocation
    order (``stride_order``; row-major without it). ``None`` on broadcast axes:
    extent-1 ones, and expanded ones (stride 0, any extent) where the caller says
    ``None``. A single bool applies to every axis; the default is False."""
    rank = len(shape)
    if contiguity is None:
        vals: list[Any] = [False] * rank
    elif isinstance(contiguity, bool | np.bool_):
        vals = [bool(contiguity)] * rank
    elif isinstance(contiguity, list | tuple):
        if len(contiguity) != rank:
            raise ValueError(f"{name}: contiguity has {len(contiguity)} entries for shape {shape} of rank {rank}")
        vals = list(contiguity)
    else:
        raise ValueError(f"{name}: contiguity must be a list of True/False/None, got {contiguity!r}")
    axes = allocation_axes(rank, order)
    out: list[bool | None] = []
    for p, c in enumerate(vals):
        if c is not None and not isinstance(c, bool | np.bool_):
            raise ValueError(f"{name}: contiguity entry {p} must be True, False or None, got {c!r}")
        if shape[axes[p]] == 1 or c is None:
            out.append(None)
        else:
            out.append(bool(c))
    return out, logical_contiguity(out, order)


def _descriptor(sizes: Any, strides: Any, static_sizes: bool, name: str) -> tuple[list[int], list[bool | None], list[int] | None]:
    """nvFuser's tensor descriptor from sizes and strides (in elements): the shape,
    the contiguity in allocation order and the stride order (``computeTensorDescriptor``:
    axes of non-zero stride sorted by decreasing stride, stride-0 axes kept at their
    logical position)."""
    from fuser.frontend.nvfuser_api import compute_tensor_descriptor

    szs = as_ints(list(sizes), name, "sizes")
    if strides is None:
        arr = np.empty(szs, dtype=np.int8)
        sts = [s // arr.itemsize for s in arr.strides]
    else:
        sts = as_ints(list(strides), name, "strides")
    if len(sts) != len(szs):
        raise ValueError(f"{name}: {len(szs)} sizes but {len(sts)} strides")
    if any(d < 0 for d in szs):
        raise ValueError(f"{name}: sizes {szs} has a negative extent")
    try:
        contig, order = compute_tensor_descriptor(szs, sts)
    except ValueError as e:
        raise ValueError(f"{name}: {str(e).removeprefix('compute_tensor_descriptor: ')}") from None
    shape = [d if static_sizes or d == 1 else -1 for d in szs]
    return shape, contig, order


def clone(src: Any, dst: Any) -> None:
    """Copy ``src``'s definition into the empty definition ``dst`` (nvFuser's ``clone``)."""
    if not isinstance(src, FusionDefinition) or not isinstance(dst, FusionDefinition):
        raise ValueError(
            f"clone: expected two FusionDefinitions, got {type(src).__name__} and {type(dst).__name__}"
        )
    if dst._state.records or dst._entry is not None:
        raise ValueError("clone: the destination FusionDefinition must be new and empty")
    src_entry = src._ensure_defined()
    dst._replay(src_entry.records)
    dst._entry = src_entry


# The cache replays definitions (deserialize, concretization) with this class; it sits
# below this module (which registers its definitions there), so it is told rather than
# importing it back. The frontend package imports this module before anything runs.
FusionCache.definition_class = FusionDefinition

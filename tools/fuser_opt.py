"""``fuser-opt``: xDSL's opt driver with fuser's dialects, passes and targets.

Passes are given either as an xDSL pipeline, ``-p name{opt=v},other``, or as one
MLIR-style flag per pass, ``--name`` or ``--name=opt=v other=w`` (the options of
``name{...}``). Both kinds may be mixed and repeated; the passes run in the order
they appear on the command line::

    fuser-opt --canonicalize -p cse,dce --canonicalize input.mlir
    # runs canonicalize, cse, dce, canonicalize

Dialects, passes and targets of third-party packages with an ``xdsl.universe`` entry
point (as for ``xdsl-opt``) are added too: a plugin pass is a flag and a ``-p`` name
(``tools/plugins.py``).

Errors in the input (parse errors, verifier errors, pass failures) print a
diagnostic to stderr and exit with status 1, without a Python traceback (set
``FUSER_TRACEBACK=1`` to get one). With ``--verify-diagnostics`` (resp.
``--parsing-diagnostics``) verifier (resp. parse) errors are printed to stdout and
the exit status is 0, as in ``xdsl-opt``, so that lit tests can check them.

``--print-pipeline[=SIZES]`` prints the pass pipeline of the compiler driver
(``fuser.runtime.driver.PASSES``, what ``driver.compile`` runs after
``bind-sizes``) as a ``-p`` spec, so that ``fuser-opt -p "$(fuser-opt
--print-pipeline=0=4x1024)" f.mlir`` runs exactly what the driver runs.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from xdsl.dialects import get_all_dialects
from xdsl.passes import ModulePass
from xdsl.targets import get_all_targets
from xdsl.transforms import get_all_passes
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ParseError
from xdsl.xdsl_opt_main import xDSLOptMain

import fuser.schedulers.params  # noqa: F401 - installs fuser.fusion's fuser.schedule check
from fuser.ir import xdsl_fixes
from fuser.ir.dialects import available_dialects
from fuser.tools.plugins import Plugins, discover

PassFactory = Callable[[], type[ModulePass]]

_PASS_SEQUENCE = "fuser_pass_sequence"
"""Namespace attribute holding the pipeline pieces in command-line order."""


def _builtin_pass_table() -> dict[str, PassFactory]:
    """xDSL's passes, then fuser's (fuser's win on a name clash, e.g. ``canonicalize``)."""
    from fuser.passes import all_passes

    table: dict[str, PassFactory] = dict(get_all_passes())
    table.update(all_passes())
    return table


def find_plugins() -> Plugins:
    """The dialects, passes and targets of third-party ``xdsl.universe`` plugins."""
    return discover(
        [*get_all_dialects(), *available_dialects()],
        _builtin_pass_table(),
        [*get_all_targets(), "cuda"],
    )


def pass_table(plugins: Plugins | None = None) -> dict[str, PassFactory]:
    """Every pass fuser-opt knows: xDSL's, fuser's, then the plugins'."""
    table = _builtin_pass_table()
    for name, (_, factory) in (plugins or find_plugins()).passes.items():
        table[name] = factory
    return table



def _cuda_target() -> type:
    """The ``cuda`` target, imported when ``-t cuda`` asks for it: the CUDA printer
    loads the kernel dialects (a third of a run's start-up)."""
    from fuser.codegen.cuda_target import CudaTarget

    return CudaTarget

class _OrderedPipeline(argparse.Action):
    """``-p/--passes SPEC``: append a pipeline piece, keeping command-line order."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        pieces: list[str] = list(getattr(namespace, _PASS_SEQUENCE, None) or [])
        if values:
            pieces.append(str(values))
        setattr(namespace, _PASS_SEQUENCE, pieces)
        setattr(namespace, self.dest, ",".join(pieces))


class _PassFlag(argparse.Action):
    """``--name``: append the pass ``name`` (without options) to the pipeline."""

    def __init__(self, option_strings: list[str], dest: str, pass_name: str, **kwargs: Any):
        super().__init__(option_strings, dest, nargs=0, **kwargs)
        self.pass_name = pass_name

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        pieces: list[str] = list(getattr(namespace, _PASS_SEQUENCE, None) or [])
        pieces.append(self.pass_name)
        setattr(namespace, _PASS_SEQUENCE, pieces)
        namespace.passes = ",".join(pieces)


class _PipelineArgs:
    """Forwards to an ``ArgumentParser``, giving ``-p/--passes`` the ordered action."""

    def __init__(self, parser: argparse.ArgumentParser) -> None:
        self._parser = parser

    def add_argument(self, *names: str, **kwargs: Any) -> argparse.Action:
        if "--passes" in names:
            kwargs.pop("type", None)
            kwargs["action"] = _OrderedPipeline
        return self._parser.add_argument(*names, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._parser, name)


def rewrite_pass_flags(argv: Sequence[str], pass_names: Sequence[str]) -> list[str]:
    """``--name=opts`` (``name`` a pass) becomes ``--passes=name{opts}``, so that
    options reach the pass and the flag keeps its place in the pipeline."""
    names = set(pass_names)
    out: list[str] = []
    after_dashdash = False
    for arg in argv:
        if arg == "--":
            after_dashdash = True
        if not after_dashdash and arg.startswith("--") and "=" in arg:
            name, opts = arg[2:].split("=", 1)
            if name in names:
                opts = opts.strip()
                if opts.startswith("{") and opts.endswith("}"):
                    opts = opts[1:-1]
                out.append(f"--passes={name}{{{opts}}}" if opts else f"--passes={name}")
                continue
        out.append(arg)
    return out


class FuserOptMain(xDSLOptMain):
    """xDSL's opt driver with fuser's dialects and passes, and one flag per pass."""

    def __init__(
        self,
        description: str = "fuser modular optimizer driver",
        args: Sequence[str] | None = None,
    ) -> None:
        xdsl_fixes.install()
        self.plugins = find_plugins()
        argv = list(sys.argv[1:] if args is None else args)
        super().__init__(description, rewrite_pass_flags(argv, list(pass_table(self.plugins))))

    # ---- registration -----------------------------------------------------------
    def register_all_dialects(self) -> None:
        # Not the xdsl.universe multiverse: fuser's own universe entry point would be
        # seen twice. Upstream dialects first, fuser's on top, then the plugins'.
        for name, factory in get_all_dialects().items():
            self.ctx.register_dialect(name, factory)
        for name, factory in available_dialects().items():
            if name not in self.ctx.registered_dialect_names:
                self.ctx.register_dialect(name, factory)
        for name, (_, factory) in self.plugins.dialects.items():
            self.ctx.register_dialect(name, factory)

    def register_all_passes(self) -> None:
        for name, factory in pass_table(self.plugins).items():
            self.register_pass(name, factory)

    def register_all_targets(self) -> None:
        """Targets by name (``-t NAME``); codegen adds its own here (``cuda``)."""
        for name, factory in get_all_targets().items():
            self.available_targets.setdefault(name, factory)
        self.available_targets["cuda"] = _cuda_target
        for name, (_, factory) in self.plugins.targets.items():
            self.available_targets[name] = factory

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        super().register_all_arguments(_PipelineArgs(arg_parser))  # type: ignore[arg-type]
        group = arg_parser.add_argument_group(
            "passes as flags",
            "Every pass is also a flag: --NAME or --NAME=OPTIONS (the options of "
            "-p 'NAME{OPTIONS}'). Flags and -p pipelines run in command-line order.",
        )
        arg_parser.add_argument(
            "--print-pipeline",
            nargs="?",
            const="",
            default=None,
            metavar="SIZES",
            help="print the pipeline the compiler driver (fuser.runtime.driver) runs, as a "
            "-p spec, and exit; with SIZES (bind-sizes' option, '0=4x1024'), bind-sizes first",
        )
        arg_parser.add_argument(
            "--debug-schedulers",
            action="store_true",
            help="record why each scheduler rejected a fusion (select-schedulers)",
        )
        ours = _fuser_pass_names()
        for name in self.available_passes:
            if name in ours:
                help_text = f"run the {name} pass"
            elif name in self.plugins.passes:
                help_text = f"run the {name} pass (plugin {self.plugins.passes[name][0]})"
            else:
                help_text = argparse.SUPPRESS
            try:
                group.add_argument(
                    f"--{name}",
                    action=_PassFlag,
                    pass_name=name,
                    dest=argparse.SUPPRESS,
                    default=argparse.SUPPRESS,
                    help=help_text,
                )
            except argparse.ArgumentError:
                continue  # the name of a driver option: reachable through -p only

    def setup_pipeline(self) -> None:
        pieces = getattr(self.args, _PASS_SEQUENCE, None)
        if pieces is not None:
            self.args.passes = ",".join(pieces)
        super().setup_pipeline()
        if getattr(self.args, "debug_schedulers", False):
            # every select-schedulers of the pipeline records each scheduler's rejection
            # reason: its own `debug` option, set here (no environment variable)
            from fuser.passes.select_schedulers import SelectSchedulers

            self.pipeline = replace(
                self.pipeline,
                passes=tuple(
                    replace(p, debug=True) if isinstance(p, SelectSchedulers) else p
                    for p in self.pipeline.passes
                ),
            )


def _fuser_pass_names() -> set[str]:
    from fuser.passes import all_passes

    return set(all_passes())


def _error(message: str) -> None:
    sys.stderr.write(f"fuser-opt: error: {message.rstrip()}\n")


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of ``fuser-opt``; exits 1 with a diagnostic on bad input."""
    if os.environ.get("FUSER_TRACEBACK"):
        FuserOptMain(args=argv).run()
        return
    try:
        tool = FuserOptMain(args=argv)
    except (ValueError, DiagnosticException) as e:
        # An unknown pass, a malformed pass option, an unknown target.
        _error(str(e))
        if '["sizes"] not found' in str(e):
            sys.stderr.write(
                "fuser-opt: note: input sizes are bound once, by bind-sizes, before the "
                "passes that need them: -p 'bind-sizes{sizes=\"0=...\"},PASS'\n"
            )
        sys.exit(1)
    except ArgSpecParseError as e:
        # A malformed pipeline or target spec (xDSL raises a BaseException here).
        _error(str(e))
        if "Malformed pass arguments" in str(e):
            sys.stderr.write(
                "fuser-opt: note: quote option values holding '=', ',' or spaces: "
                "--NAME='opt=\"v\"' or -p 'NAME{opt=\"v\"}'\n"
            )
        sys.exit(1)
    except SystemExit as e:
        # argparse's usage errors exit 2; every bad command line exits 1 here.
        sys.exit(1 if e.code == 2 else e.code)
    if tool.args.print_pipeline is not None:
        from fuser.runtime.driver import pipeline_spec

        print(pipeline_spec(tool.args.print_pipeline))
        return
    if tool.args.input_file is not None and not os.path.isfile(tool.args.input_file):
        _error(f"cannot open input file '{tool.args.input_file}': no such file")
        sys.exit(1)
    # A short-lived process over one large IR graph: no cyclic collections
    # (fuser.ir.gc_pause: 30% of a 10,000-op pipeline).
    gc.disable()
    try:
        tool.run()
    except ParseError as e:
        _error(f"parse error at {e}")
        sys.exit(1)
    except DiagnosticException as e:
        # Verifier errors and PassFailedException.
        _error(str(e))
        for note in getattr(e, "__notes__", ()):
            sys.stderr.write(f"{note}\n")
        sys.exit(1)
    except BrokenPipeError:
        sys.stderr.close()  # the reader went away (``| head``): not an error
    except (ValueError, OSError) as e:
        _error(str(e))
        sys.exit(1)
    except Exception as e:  # a pass that crashed: report it, not the traceback
        _error(f"internal error ({type(e).__name__}): {e}")
        sys.stderr.write("fuser-opt: set FUSER_TRACEBACK=1 for the Python traceback\n")
        sys.exit(1)


if __name__ == "__main__":
    main(sys.argv[1:])

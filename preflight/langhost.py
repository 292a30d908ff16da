"""The stack program, served to the Pulumi CLI from this process.

The CLI runs a program through a language runtime. This process serves one on a loopback port, the way
Pulumi's Automation API serves an inline program (pulumi/automation/_stack.py `Stack.preview` / `up`:
`--client <address> --exec-kind auto.inline`, the LanguageRuntime server of
`pulumi.automation._server.LanguageServer`): its `Run` executes the program's `__main__.py` in this process,
with the engine's monitor address, config and dry-run flag. Nothing else differs from a `pulumi preview` in
the
program's folder: the engine, the plan, the policy analyzers and the state are the CLI's own. It also needs no
`pulumi-language-python` host (which the Go module proxy does not serve: docs/engine.md), and the program's
imports (pulumi_azure_native's type modules) are paid once for every CLI run of a gate.

The program runs with its own folder as working directory and first on `sys.path`, as the Python language
host runs it. One difference: the SDK's debug-level log lines (`pulumi.log.debug`, two or more per resource:
"registering resource ...", "resource registration successful ...") are not sent. The SDK sends each as a
blocking `Log` call to the engine, which shows debug lines only under `--debug`/`-v`, never in the gate's
report; they were about a tenth of the gate process's CPU time (py-spy, docs/benchmarks.md). Info, warning
and error lines are sent as the SDK sends them.

Warm-up (`warm`): the gate starts importing what the program imports while it checks its input and starts
the CLI, instead of inside the first `Run`: the modules `__main__.py` imports at its top level, then each
pulumi_azure_native submodule those modules hold, loaded (they are lazy: the load happens on first use, in
the program, otherwise). About 1 s of a gate's single Python thread on prod (docs/benchmarks.md, "The gate on
the real engine"). A failed warm-up import is left to the program's own run to report, as the engine shows it.
"""

from __future__ import annotations

import ast
import importlib
import os
import runpy
import sys
import threading
import types
from collections.abc import Iterator
from concurrent import futures
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import pulumi.log
import pulumi.runtime
from pulumi.automation._server import LanguageServer
from pulumi.runtime.proto import language_pb2_grpc


@dataclass
class Host:
    """`address`: for `--client`. Runs may overlap (the SDK keeps its settings in context variables, and each
    `Run` is its own context), except while the program's modules are first imported: pulumi_azure_native
    loads its submodules lazily (pulumi/_utils.py `_LazyModule.__getattribute__` turns the module into a plain
    one, then executes it), so a second thread that reaches the module meanwhile finds it empty
    (`module 'pulumi_azure_native.authorization' has no attribute 'get_client_config'`, seen here). So the
    first
    run goes alone until the program has returned (`imported`), and a later run waits for that."""

    address: str
    imported: threading.Event = field(default_factory=threading.Event)
    _first: threading.Lock = field(default_factory=threading.Lock)


@dataclass
class Warm:
    """A warm-up of one program's imports under way (`warm`); `done` is set when it has ended."""

    program_dir: Path
    done: threading.Event = field(default_factory=threading.Event)
    added_path: bool = False


def _top_level_imports(main: Path) -> list[str]:
    """The absolute module names `main` imports at its top level (not inside functions)."""
    try:
        tree = ast.parse(main.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return []
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
    return names


def _load_lazy_modules(program_dir: Path) -> None:
    """Load each lazily imported module (pulumi/_utils.py `_LazyModule`) a module of the program holds."""
    own = [m for m in list(sys.modules.values()) if _is_own(getattr(m, "__file__", None), program_dir)]
    for module in own:
        for value in list(vars(module).values()):
            if isinstance(value, types.ModuleType) and type(value).__name__ == "_LazyModule":
                getattr(value, "__all__", None)  # any attribute but the introspection ones loads it


def _is_own(file: object, folder: Path) -> bool:
    """A module of the program's folder, not of an interpreter's (a virtualenv inside the folder)."""
    if not isinstance(file, str):
        return False
    prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix}
    return file.startswith(f"{folder}{os.sep}") and not any(file.startswith(f"{p}{os.sep}") for p in prefixes)


def warm(program_dir: Path) -> Warm:
    """Start importing `<program_dir>/__main__.py`'s imports in a background thread (module docstring)."""
    state = Warm(program_dir.resolve())
    if str(state.program_dir) not in sys.path:
        sys.path.insert(0, str(state.program_dir))
        state.added_path = True

    def run() -> None:
        try:
            for name in _top_level_imports(state.program_dir / "__main__.py"):
                try:
                    importlib.import_module(name)
                except Exception:  # noqa: BLE001 (the program's run reports it)
                    continue
            _load_lazy_modules(state.program_dir)
        except Exception:  # noqa: BLE001
            pass
        finally:
            state.done.set()

    threading.Thread(target=run, name="langhost-warm", daemon=True).start()
    return state


def _no_debug(*_args: object, **_kwargs: object) -> None:
    return None


@contextmanager
def serve(program_dir: Path, warming: Warm | None = None, up_first: bool = False) -> Iterator[Host]:
    """Serve `<program_dir>/__main__.py` (module docstring); `warming`: its warm-up, which runs wait for;
    `up_first`: the first run is an update's (`pulumi up`), previews wait for it to import."""
    program_dir = program_dir.resolve()
    host = Host("")
    pulumi.log.debug = _no_debug  # type: ignore[assignment]  # (module docstring)

    def program() -> None:
        if warming is not None:
            warming.done.wait()
        if up_first and pulumi.runtime.is_dry_run():
            host.imported.wait()
        first = host._first.acquire(blocking=False)  # never released: only one run is the first
        if not first:
            host.imported.wait()
        try:
            runpy.run_path(str(program_dir / "__main__.py"), run_name="__main__")
        finally:
            host.imported.set()

    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=4),
        options=[("grpc.max_receive_message_length", 400 * 1024 * 1024)],
    )
    language_pb2_grpc.add_LanguageRuntimeServicer_to_server(LanguageServer(program), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    host.address = f"127.0.0.1:{port}"
    cwd, path = os.getcwd(), list(sys.path)
    if warming is not None and warming.added_path and str(program_dir) in path:
        path.remove(str(program_dir))  # the warm-up's entry goes when the server does
    os.chdir(program_dir)
    sys.path.insert(0, str(program_dir))
    try:
        yield host
    finally:
        os.chdir(cwd)
        sys.path[:] = path
        server.stop(0)

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
"""

from __future__ import annotations

import os
import runpy
import sys
import threading
from collections.abc import Iterator
from concurrent import futures
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import pulumi.log
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


def _no_debug(*_args: object, **_kwargs: object) -> None:
    return None


@contextmanager
def serve(program_dir: Path) -> Iterator[Host]:
    """Serve `<program_dir>/__main__.py` (module docstring)."""
    program_dir = program_dir.resolve()
    host = Host("")
    pulumi.log.debug = _no_debug  # type: ignore[assignment]  # (module docstring)

    def program() -> None:
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
    os.chdir(program_dir)
    sys.path.insert(0, str(program_dir))
    try:
        yield host
    finally:
        os.chdir(cwd)
        sys.path[:] = path
        server.stop(0)

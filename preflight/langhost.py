"""The stack program, served to the Pulumi CLI from this process.

The CLI runs a program through a language runtime. This process serves one on a loopback port, the way
Pulumi's Automation API serves an inline program (pulumi/automation/_stack.py `Stack.preview` / `up`:
`--client <address> --exec-kind auto.inline`, the LanguageRuntime server of
`pulumi.automation._server.LanguageServer`): its `Run` executes the program's `__main__.py` in this process,
with the engine's monitor address, config and dry-run flag. Nothing else differs from a `pulumi preview` in the
program's folder: the engine, the plan, the policy analyzers and the state are the CLI's own. It also needs no
`pulumi-language-python` host (which the Go module proxy does not serve: docs/engine.md), and the program's
imports (pulumi_azure_native's type modules) are paid once for every CLI run of a gate.

The program runs with its own folder as working directory and first on `sys.path`, as the Python language
host runs it.
"""

from __future__ import annotations

import os
import runpy
import sys
import threading
from collections.abc import Iterator
from concurrent import futures
from contextlib import contextmanager
from pathlib import Path

import grpc
from pulumi.automation._server import LanguageServer
from pulumi.runtime.proto import language_pb2_grpc

# One program run at a time in this process: the Python SDK keeps its settings process-wide.
_RUN = threading.Lock()


@contextmanager
def serve(program_dir: Path) -> Iterator[str]:
    """Serve `<program_dir>/__main__.py`; yields the address for `--client`."""
    program_dir = program_dir.resolve()

    def program() -> None:
        runpy.run_path(str(program_dir / "__main__.py"), run_name="__main__")

    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=4),
        options=[("grpc.max_receive_message_length", 400 * 1024 * 1024)],
    )
    language_pb2_grpc.add_LanguageRuntimeServicer_to_server(LanguageServer(program), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    cwd, path = os.getcwd(), list(sys.path)
    os.chdir(program_dir)
    sys.path.insert(0, str(program_dir))
    try:
        yield f"127.0.0.1:{port}"
    finally:
        os.chdir(cwd)
        sys.path[:] = path
        server.stop(0)

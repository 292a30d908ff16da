"""Run the real CLI on a scratch workspace: `pulumi preview`, `pulumi up`, `pulumi destroy`, with the
project's program served by the Python SDK's own language runtime.

No `pulumi-language-python` host is built: the Go module proxy refuses its module
(github.com/pulumi/pulumi/sdk/python/cmd/pulumi-language-python/v3, any version: docs/engine.md quotes the go
command and its answer). The CLI runs the program the way Pulumi's Automation API runs an inline program
(pulumi/automation/_stack.py `Stack.preview` / `up`: `--client <address> --exec-kind auto.inline`): the
engine connects to a LanguageRuntime server that `pulumi.automation._server.LanguageServer` (SDK 3.272.0)
implements, and its `Run` executes `__main__.py` in this process with the engine's monitor, config and
dry-run flag, as `pulumi-language-python-exec` does for the Go host. Everything else (the engine, the plan,
the policy analyzers, plugin loading, the state) is the CLI's own.
"""

from __future__ import annotations

import os
import runpy
import subprocess
import sys
from collections.abc import Iterator
from concurrent import futures
from contextlib import contextmanager
from pathlib import Path

import grpc
from pulumi.automation._server import LanguageServer
from pulumi.runtime.proto import language_pb2_grpc

from preflight.workspace import Workspace


@contextmanager
def language_runtime(project: Path) -> Iterator[str]:
    """Serve the stack program on a loopback port: yields the address for `--client`."""

    def program() -> None:
        runpy.run_path(str(project / "__main__.py"), run_name="__main__")

    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=4),
        options=[("grpc.max_receive_message_length", 400 * 1024 * 1024)],
    )
    language_pb2_grpc.add_LanguageRuntimeServicer_to_server(LanguageServer(program), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    cwd, path = os.getcwd(), list(sys.path)
    os.chdir(project)
    sys.path.insert(0, str(project))
    try:
        yield f"127.0.0.1:{port}"
    finally:
        os.chdir(cwd)
        sys.path[:] = path
        server.stop(0)


def policy_args(ws: Workspace, policy_config: Path | None) -> list[str]:
    config = policy_config or ws.project / "policies" / "config" / f"{ws.stack}.json"
    args = ["--policy-pack", str(ws.policy_pack)]
    if config.exists():
        args += ["--policy-pack-config", str(config)]
    return args


def pulumi(
    ws: Workspace,
    command: str,
    *args: str,
    events: Path | None = None,
    capture: bool = False,
    env: dict[str, str] | None = None,
    timeout: float = 900,
) -> subprocess.CompletedProcess:
    """`pulumi <command> <args> --stack S --client ...` with the program served in-process; output streams
    to this process's stdout/stderr unless `capture`."""
    with language_runtime(ws.project) as address:
        argv = [str(ws.pulumi), command, *args, "--stack", ws.stack, "--non-interactive"]
        argv += ["--client", address, "--exec-kind", "auto.inline"]
        if events is not None:
            argv += ["--event-log", str(events)]
        return subprocess.run(
            argv,
            cwd=ws.project,
            env={**ws.env, **(env or {})},
            timeout=timeout,
            text=True,
            capture_output=capture,
        )


def preview(ws: Workspace, policy_config: Path | None = None, **kw) -> subprocess.CompletedProcess:
    return pulumi(ws, "preview", "--diff", *policy_args(ws, policy_config), **kw)


def up(ws: Workspace, policy_config: Path | None = None, **kw) -> subprocess.CompletedProcess:
    return pulumi(ws, "up", "--yes", "--diff", *policy_args(ws, policy_config), **kw)


def destroy(ws: Workspace, **kw) -> subprocess.CompletedProcess:
    return pulumi(ws, "destroy", "--yes", **kw)

"""Client side of the analyzer gRPC protocol: start the policy pack as the Pulumi engine does and talk to it.

How the CLI starts a Python policy pack (pulumi/policy/__main__.py in the pulumi package, platform-notes.md):
in the pack folder, with the pack's virtualenv python, `python -u -m pulumi.policy <engine-address> .` and
PULUMI_PROJECT, PULUMI_STACK, PULUMI_DRY_RUN, PULUMI_CONFIG in the environment. The pack prints its port on
the first stdout line and serves `pulumirpc.Analyzer` (GetAnalyzerInfo, Configure, ConfigureStack, Analyze,
AnalyzeStack). The engine address is a real `pulumirpc.Engine` server here (EngineLog records its Log calls),
so anything the pack logs through pulumi.log is kept rather than lost.

Requests carry what the engine sends (pulumi/pulumi pkg/resource/plugin/analyzer_plugin.go, read at v3.259):
Analyze gets a resource's checked inputs and AnalyzeStack its outputs, both marshalled with `KeepUnknowns`,
`KeepSecrets` and `SkipInternalKeys` (top-level `__` keys dropped; unknowns as the sentinel string, secrets as
secret objects, nulls kept; every number a protobuf double), plus the resource's provider (its inputs) and
options; AnalyzeStack also parent, dependencies and the non-empty property dependencies.

The policy config sent with Configure is read and checked by preflight.policyconfig; the resources sent
are preflight.resource records.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
from collections import deque
from collections.abc import Iterable, Mapping
from concurrent import futures
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import empty_pb2, struct_pb2
from pulumi.runtime.proto import analyzer_pb2, analyzer_pb2_grpc, engine_pb2_grpc

from preflight.policyconfig import LEVEL_NAMES, LEVELS, resolve_config
from preflight.resource import Provider, Resource

ROOT = Path(__file__).resolve().parent.parent
PACK_DIR = ROOT / "policies"
PACK_PYTHON = PACK_DIR / ".venv" / "bin" / "python"
_MAX_MESSAGE = 1024 * 1024 * 400  # what pulumi_policy allows (policy.py _MAX_RPC_MESSAGE_SIZE)


class PackError(Exception):
    """The policy pack could not be started or answered with an error."""


@dataclass(frozen=True)
class Violation:
    policy: str
    enforcement: str  # advisory | mandatory | remediate | disabled
    urn: str
    message: str  # the pack's message without the policy description prefix
    description: str

    def as_json(self) -> dict[str, str]:
        return {
            "policy": self.policy,
            "enforcement": self.enforcement,
            "urn": self.urn,
            "message": self.message,
        }


class EngineLog(engine_pb2_grpc.EngineServicer):
    """A minimal `pulumirpc.Engine`: records Log requests (severity, message, urn)."""

    def __init__(self) -> None:
        self.messages: list[tuple[int, str, str]] = []

    def Log(self, request, context):  # noqa: N802 (gRPC method name)
        self.messages.append((request.severity, request.message, request.urn))
        return empty_pb2.Empty()


def _struct(values: Mapping[str, Any], skip_internal: bool = False) -> struct_pb2.Struct:
    """Properties as a protobuf Struct (every number a double); `skip_internal` drops top-level `__` keys
    (MarshalOptions.SkipInternalKeys, as the engine marshals Analyze and AnalyzeStack properties)."""
    s = struct_pb2.Struct()
    kept = {k: v for k, v in values.items() if not (skip_internal and k.startswith("__"))}
    s.update(json.loads(json.dumps(kept, default=str)))
    return s


def _provider(provider: Provider | None) -> analyzer_pb2.AnalyzerProviderResource | None:
    if provider is None:
        return None
    return analyzer_pb2.AnalyzerProviderResource(
        type=provider.type, name=provider.name, urn=provider.urn, properties=_struct(provider.inputs, True)
    )


def _options(options: Mapping[str, Any], parent: str) -> analyzer_pb2.AnalyzerResourceOptions:
    timeouts = options.get("customTimeouts") or {}
    return analyzer_pb2.AnalyzerResourceOptions(
        protect=bool(options.get("protect", False)),
        ignoreChanges=list(options.get("ignoreChanges", [])),
        deleteBeforeReplace=bool(options.get("deleteBeforeReplace", False)),
        deleteBeforeReplaceDefined=bool(options.get("deleteBeforeReplaceDefined", False)),
        customTimeouts=analyzer_pb2.AnalyzerResourceOptions.CustomTimeouts(
            create=float(timeouts.get("create") or 0),
            update=float(timeouts.get("update") or 0),
            delete=float(timeouts.get("delete") or 0),
        ),
        parent=parent,
    )


def _violations(response: analyzer_pb2.AnalyzeResponse, urn: str = "") -> list[Violation]:
    found = []
    for d in response.diagnostics:
        message = d.message
        prefix = d.description + "\n"
        if message.startswith(prefix):  # pulumi_policy sends "<description>\n<message>"
            message = message[len(prefix) :]
        found.append(
            Violation(d.policyName, LEVEL_NAMES[d.enforcementLevel], d.urn or urn, message, d.description)
        )
    return found


class PolicyPack:
    """One running policy pack process and a gRPC channel to it. Use as a context manager."""

    def __init__(
        self,
        project: str,
        stack: str,
        pack_dir: Path = PACK_DIR,
        python: Path = PACK_PYTHON,
        stack_config: Mapping[str, Any] | None = None,
        env: Mapping[str, str] | None = None,
        start_timeout: float = 60.0,
    ) -> None:
        self.project, self.stack = project, stack
        self.pack_dir, self.python = pack_dir, python
        self.stack_config = dict(stack_config or {})
        self.extra_env = dict(env or {})
        self.start_timeout = start_timeout
        self.engine = EngineLog()
        self._stderr: deque[str] = deque(maxlen=50)
        self._proc: subprocess.Popen[bytes] | None = None
        self._server: grpc.Server | None = None
        self._channel: grpc.Channel | None = None
        self.stub: analyzer_pb2_grpc.AnalyzerStub | None = None
        self.info: analyzer_pb2.AnalyzerInfo | None = None

    # -- lifecycle ---------------------------------------------------------------------------------
    def spawn(self) -> PolicyPack:
        """Start the engine service and the pack process (returns at once; connect() waits for the port)."""
        if not self.python.exists():
            raise PackError(
                f"the policy pack's virtualenv is missing ({self.python}); create it with "
                f"`make policies/.venv/.installed`"
            )
        self._server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
        engine_pb2_grpc.add_EngineServicer_to_server(self.engine, self._server)
        engine_port = self._server.add_insecure_port("127.0.0.1:0")
        self._server.start()
        inherited = os.environ.items()
        env = {k: v for k, v in inherited if not k.startswith(("PULUMI_", "VIRTUAL_ENV", "PYTHONPATH"))}
        env.update(self.extra_env)
        env.update(PULUMI_PROJECT=self.project, PULUMI_STACK=self.stack, PULUMI_DRY_RUN="true")
        self._env = env
        self._engine_port = engine_port
        self._proc = subprocess.Popen(
            [str(self.python), "-u", "-m", "pulumi.policy", f"127.0.0.1:{engine_port}", "."],
            cwd=self.pack_dir,
            env={**env, "PULUMI_CONFIG": json.dumps(self.stack_config)},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        threading.Thread(target=self._drain_stderr, daemon=True).start()
        return self

    def connect(self) -> PolicyPack:
        """Read the port from the pack's first stdout line, open the channel, GetAnalyzerInfo."""
        port = self._read_port()
        self._channel = grpc.insecure_channel(
            f"127.0.0.1:{port}", options=[("grpc.max_receive_message_length", _MAX_MESSAGE)]
        )
        self.stub = analyzer_pb2_grpc.AnalyzerStub(self._channel)
        # The first call waits for the channel to be ready (wait_for_ready) rather than
        # grpc.channel_ready_future: that one subscribes a connectivity-polling thread which wakes every
        # 0.2 s, and channel.close() waits for its next wake-up (0.2 s of every run, measured).
        self.info = self._call(
            self.stub.GetAnalyzerInfo, empty_pb2.Empty(), timeout=self.start_timeout, wait_for_ready=True
        )
        return self

    def start(self) -> PolicyPack:
        return self.spawn().connect()

    def _drain_stderr(self) -> None:
        assert self._proc is not None and self._proc.stderr is not None
        for line in self._proc.stderr:
            self._stderr.append(line.decode(errors="replace").rstrip())

    def _read_port(self) -> int:
        assert self._proc is not None and self._proc.stdout is not None
        box: list[bytes] = []
        reader = threading.Thread(target=lambda: box.append(self._proc.stdout.readline()), daemon=True)
        reader.start()
        reader.join(self.start_timeout)
        line = box[0].decode(errors="replace").strip() if box else ""
        if not line.isdigit():
            self.close()
            tail = "\n".join(self._stderr) or "(no output)"
            raise PackError(
                f"the policy pack did not print its port (first stdout line {line!r}); stderr:\n{tail}"
            )
        return int(line)

    def close(self) -> None:
        if self._channel is not None:
            self._channel.close()
            self._channel = None
        if self._proc is not None:
            if self._proc.poll() is None:
                self._proc.terminate()
                try:
                    self._proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self._proc.kill()
                    self._proc.wait()
            for stream in (self._proc.stdout, self._proc.stderr):
                if stream is not None:
                    stream.close()
            self._proc = None
        if self._server is not None:
            self._server.stop(0)
            self._server = None

    def __enter__(self) -> PolicyPack:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def stderr_tail(self) -> str:
        return "\n".join(self._stderr)

    def _call(self, method, request, timeout: float = 300, wait_for_ready: bool | None = None):
        try:
            return method(request, timeout=timeout, wait_for_ready=wait_for_ready)
        except grpc.RpcError as e:
            detail = e.details() if hasattr(e, "details") else str(e)
            raise PackError(f"policy pack error: {detail}\n{self.stderr_tail}".rstrip()) from None

    # -- protocol ----------------------------------------------------------------------------------
    def policies(self) -> dict[str, analyzer_pb2.PolicyInfo]:
        assert self.info is not None
        return {p.name: p for p in self.info.policies}

    def configure(
        self,
        config: Mapping[str, Any],
        gate_checks: Mapping[str, Mapping[str, Any]] | None = None,
        notes: list[str] | None = None,
    ) -> dict[str, dict[str, Any]]:
        """Validate a `--policy-pack-config` object against the pack, send it; returns the effective
        config (the gate's own checks included, but not sent to the pack). `notes`: what the CLI accepts but
        no policy reads (policyconfig.resolve_config)."""
        effective = resolve_config(config, self.policies(), gate_checks, notes)
        request = analyzer_pb2.ConfigureAnalyzerRequest()
        for name, (level, props) in effective.items():
            if gate_checks and name in gate_checks:
                continue
            entry = request.policyConfig[name]
            entry.enforcementLevel = LEVELS[level]
            entry.properties.CopyFrom(_struct(props))
        assert self.stub is not None
        self._call(self.stub.Configure, request)
        self._call(
            self.stub.ConfigureStack,
            analyzer_pb2.AnalyzerStackConfigureRequest(
                stack=self.stack,
                project=self.project,
                organization="organization",
                dry_run=True,
                config={
                    k: json.dumps(v) if not isinstance(v, str) else v for k, v in self.stack_config.items()
                },
            ),
        )
        return {name: {"enforcementLevel": level, **props} for name, (level, props) in effective.items()}

    def analyze(self, r: Resource) -> list[Violation]:
        assert self.stub is not None
        request = analyzer_pb2.AnalyzeRequest(
            type=r.type,
            properties=_struct(r.inputs, skip_internal=True),
            urn=r.urn,
            name=r.name,
            options=_options(r.options, r.parent or ""),
            provider=_provider(r.provider),
        )
        return _violations(self._call(self.stub.Analyze, request), r.urn)

    def analyze_stack(self, resources: Iterable[Resource]) -> list[Violation]:
        """AnalyzeStack over every resource. A violation that names no resource of the stack is the root
        stack's, as the engine reports it (pkg/resource/deploy/analyze_snapshot.go
        `resolveStackPolicyViolationURN`, called from step_generator.go with `DefaultRootStackURN`)."""
        assert self.stub is not None
        resources = list(resources)
        in_stack = {r.urn for r in resources}
        root = next((r.urn for r in resources if r.type == "pulumi:pulumi:Stack"), "")
        request = analyzer_pb2.AnalyzeStackRequest()
        for r in resources:
            item = request.resources.add(
                type=r.type,
                properties=_struct(r.inputs if r.outputs is None else r.outputs, skip_internal=True),
                urn=r.urn,
                name=r.name,
                options=_options(r.options, r.parent or ""),
                parent=r.parent or "",
                dependencies=list(r.dependencies),
                provider=_provider(r.provider),
            )
            for key, urns in r.property_dependencies.items():
                if urns:  # the engine skips empty lists (analyzer_plugin.go AnalyzeStack)
                    item.propertyDependencies[key].urns.extend(urns)
        found = _violations(self._call(self.stub.AnalyzeStack, request))
        return [v if v.urn in in_stack else replace(v, urn=root) for v in found]


__all__ = [
    "PACK_DIR",
    "PACK_PYTHON",
    "EngineLog",
    "PackError",
    "PolicyPack",
    "Violation",
]

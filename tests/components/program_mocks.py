"""The stack program (`__main__.py`) run on Pulumi's own unit-test path: `pulumi.runtime.set_mocks` with a
`pulumi.runtime.Mocks` that answers as Azure does ("Unit testing Pulumi programs", Python).

- `AzureMocks.new_resource`: the ARM id Azure gives the resource (`preflight.provider.armids.arm_identity`,
  from the inputs the program sent; `<name>_id` while one of them is unknown) and the inputs echoed as state,
  with `name` (the Azure name) and `id`, as ARM's PUT response returns them, and a managed identity as ARM
  returns it (a system-assigned identity's principal, which the grants of the workspace's and the clusters'
  identities read; user-assigned identities by id).
- `AzureMocks.call`: the provider functions the program calls (`preflight.provider.invokes.answer`:
  getClientConfig, getResourceGroup, getUserAssignedIdentity, getVault from `existing`); a GET that ARM
  answers 404 is the invoke's failure, as the engine reports it to the program.
- `Recorder`: Pulumi's `MockMonitor`, which also keeps what `MockResourceArgs` leaves out: each registration's
  parent, dependencies and options (replaceOnChanges, deleteBeforeReplace, protect, ignoreChanges), and the
  outputs components and the stack register.

`run_program(stack)` evaluates the real `__main__.py` as the Python language host does under `pulumi preview`
(config as the CLI passes it, `run_in_stack(lambda: runpy.run_path(program, run_name="__main__"))`), each
run in a copied context on its own event loop, so runs in one process do not see each other.
`stack_run(stack)` caches the run of a shipped stack file for the session.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import gc
import json
import runpy
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pulumi
from google.protobuf import json_format
from pulumi.output import Unknown
from pulumi.runtime import mocks as pulumi_mocks
from pulumi.runtime import rpc
from pulumi.runtime import settings as pulumi_settings
from pulumi.runtime.stack import run_in_stack

from preflight.provider import armids, invokes, model
from preflight.wire import UNKNOWN
from stackconfig.loader import read_config_block

REPO = Path(__file__).resolve().parents[2]
PROJECT = "azml-gpu"  # Pulumi.yaml `name:`: keys without a namespace belong to it (Pulumi's rule)
STACK_TYPE = "pulumi:pulumi:Stack"


def read_stack(stack: str, root: Path = REPO) -> dict[str, Any]:
    """The `config:` block of `<root>/Pulumi.<stack>.yaml`, every namespace."""
    return read_config_block(root / f"Pulumi.{stack}.yaml")


def cli_config(config: Mapping[str, Any]) -> dict[str, str]:
    """The config as the CLI hands it to the program: `namespace:key` -> text, non-strings as JSON."""
    return {
        (key if ":" in key else f"{PROJECT}:{key}"): value if isinstance(value, str) else json.dumps(value)
        for key, value in config.items()
    }


def plain(value: Any) -> Any:
    """Deserialized values as the engine's JSON writes them: unknowns (a preview's values from resources not
    yet created) as the engine's sentinel string, whole numbers as ints (protobuf carries every number as a
    double; `pulumi stack output --json` prints 4.0 as 4)."""
    if isinstance(value, Unknown):
        return UNKNOWN
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def _principal(arm_id: str) -> str:
    """A stable Entra object id for an identity (the one `invokes.answer` gives a user-assigned identity)."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, arm_id.lower()))


def _identity_response(identity: dict[str, Any], arm_id: str) -> dict[str, Any]:
    """A managed identity as ARM returns it: a system-assigned one with its principal and tenant, the list
    of user-assigned identity ids the SDK sends as the map id -> {principalId, clientId} the SDK reads."""
    out = dict(identity)
    if "SystemAssigned" in str(out.get("type", "")):
        out.update(principalId=_principal(arm_id), tenantId=model.FAKE_TENANT_ID)
    if isinstance(ids := out.get("userAssignedIdentities"), list):
        out["userAssignedIdentities"] = {
            i: {
                "principalId": _principal(i),
                "clientId": str(uuid.uuid5(uuid.NAMESPACE_URL, "client:" + i.lower())),
            }
            for i in ids
        }
    return out


@dataclass
class AzureMocks(pulumi.runtime.Mocks):
    """Azure's answers. `existing`: resources outside the stack the program reads (lower-case ARM id ->
    {"id", "outputs"}), e.g. a customer-managed key's vault."""

    subscription_id: str = armids.DEFAULT_SUBSCRIPTION_ID
    existing: Mapping[str, dict[str, Any]] = field(default_factory=dict)
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str | None, dict[str, Any]]:
        if not args.custom:  # a component: its outputs are the ones it registers
            return None, {}
        found = armids.arm_identity(self.subscription_id, args.typ, args.name, args.inputs)
        arm_id, azure_name = (found[0], found[1]) if found else (f"{args.name}_id", args.name)
        state = {**args.inputs, "name": azure_name, "id": arm_id}
        if isinstance(identity := state.get("identity"), dict):
            state["identity"] = _identity_response(identity, arm_id)
        return arm_id, state

    def call(self, args: pulumi.runtime.MockCallArgs) -> Any:
        """The answer (a dict), or `({}, failures)` for ARM's 404: MockMonitor.Invoke makes the first failure
        the invoke's error, which the program can catch (`invoke of <token> failed: <reason> ()`)."""
        self.calls.append((args.token, dict(args.args)))
        try:
            return invokes.answer(args.token, args.args, self.subscription_id, self.existing)
        except model.ResourceNotFound as e:
            return {}, [("", str(e))]


@dataclass
class Resource:
    """One registration as the engine received it. `inputs`: what the program sent (the SDK drops None);
    `state`: what the mocks answered (custom resources); `outputs`: a component's registered outputs, a
    custom resource's state."""

    type: str
    name: str
    urn: str
    custom: bool
    parent: str | None
    inputs: dict[str, Any]
    dependencies: tuple[str, ...]
    options: dict[str, Any]
    id: str | None = None
    state: dict[str, Any] = field(default_factory=dict)
    outputs: dict[str, Any] = field(default_factory=dict)

    @property
    def replace_on_changes(self) -> list[str]:
        return self.options["replaceOnChanges"]

    @property
    def delete_before_replace(self) -> bool:
        return self.options["deleteBeforeReplace"]


class Recorder(pulumi_mocks.MockMonitor):
    """Pulumi's MockMonitor, keeping every registration with its parent, dependencies and options."""

    def __init__(self, mocks: AzureMocks) -> None:
        super().__init__(mocks)
        self.recorded: list[Resource] = []
        self.by_urn: dict[str, Resource] = {}

    def RegisterResource(self, request):  # noqa: N802 (the gRPC method's name)
        response = super().RegisterResource(request)
        pulumi_mocks._ensure_event_loop()
        record = Resource(
            type=request.type,
            name=request.name,
            urn=response.urn,
            custom=bool(request.custom),
            parent=request.parent or None,
            inputs=plain(rpc.deserialize_properties(request.object)),
            dependencies=tuple(request.dependencies),
            options={
                "replaceOnChanges": list(request.replaceOnChanges),
                "deleteBeforeReplace": bool(request.deleteBeforeReplace),
                "deleteBeforeReplaceDefined": bool(request.deleteBeforeReplaceDefined),
                "protect": bool(request.protect),
                "ignoreChanges": list(request.ignoreChanges),
                "retainOnDelete": bool(request.retainOnDelete),
                "beforeDelete": list(request.hooks.before_delete),
                "replacementTrigger": (
                    json.loads(json_format.MessageToJson(request.replacement_trigger))
                    if request.HasField("replacement_trigger")
                    else None
                ),
            },
        )
        if record.custom:
            registered = self.resources[response.urn]
            record.id, record.state = registered.id, plain(dict(registered.state))
            record.outputs = record.state
        self.recorded.append(record)
        self.by_urn[record.urn] = record
        return response

    def RegisterResourceOutputs(self, request):  # noqa: N802 (the gRPC method's name)
        pulumi_mocks._ensure_event_loop()
        self.by_urn[request.urn].outputs = plain(rpc.deserialize_properties(request.outputs))
        return super().RegisterResourceOutputs(request)


@dataclass
class Run:
    """One evaluation of the program. `resources`: in registration order, the root stack first; `outputs`:
    the stack's exports (empty when the program failed); `error`: the RunError message the CLI prints;
    `problems`: the ConfigError problems behind it, when the config is invalid."""

    stack: str
    config: dict[str, str]
    resources: list[Resource]
    invokes: list[tuple[str, dict[str, Any]]]
    outputs: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def declared(self) -> list[Resource]:
        return [r for r in self.resources if r.type != STACK_TYPE]

    def of_type(self, typ: str) -> list[Resource]:
        return [r for r in self.resources if r.type == typ]

    def by_urn(self, urn: str) -> Resource:
        (found,) = [r for r in self.resources if r.urn == urn]
        return found

    def children(self, parent: Resource) -> list[Resource]:
        return [r for r in self.resources if r.parent == parent.urn]


# set_mocks makes a root Stack when none is set; run_in_stack makes the one the program runs in (and
# registers the exports when the program ends), so a placeholder keeps set_mocks from making a second.
_PLACEHOLDER = object()


def _evaluate(
    program: Path, stack: str, config: dict[str, str], mocks: AzureMocks, preview: bool, project: str
) -> Any:
    """Run the program in this (copied) context on a fresh event loop; the RunError it raised, if any."""
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        pulumi.runtime.set_all_config(config, [])
        pulumi_settings.ROOT.set(_PLACEHOLDER)  # type: ignore[arg-type]
        recorder = Recorder(mocks)
        pulumi.runtime.set_mocks(mocks, project=project, stack=stack, preview=preview, monitor=recorder)
        pulumi_settings.ROOT.set(None)
        pulumi_settings.SETTINGS.outputs.clear()
        try:
            loop.run_until_complete(run_in_stack(lambda: runpy.run_path(str(program), run_name="__main__")))
        except pulumi.RunError as exc:
            return recorder, exc
        return recorder, None
    finally:
        loop.close()
        asyncio.set_event_loop(None)


def run_program(
    stack: str,
    config: Mapping[str, Any] | None = None,
    *,
    program: Path = REPO / "__main__.py",
    preview: bool = True,
    existing: Mapping[str, dict[str, Any]] | None = None,
    project: str = PROJECT,
) -> Run:
    """Run `program` for `stack` with `config` (`namespace:key` -> value as in the stack file; default: the
    shipped `Pulumi.<stack>.yaml`); `project`: the Pulumi.yaml `name:` of another program. A RunError (an
    invalid config, a customer key Azure ML would refuse) is
    the result's `error`; any other exception is a bug and propagates."""
    flat = cli_config(read_stack(stack) if config is None else config)
    mocks = AzureMocks(
        subscription_id=flat.get("azure-native:subscriptionId") or armids.DEFAULT_SUBSCRIPTION_ID,
        existing={k.lower(): dict(v) for k, v in (existing or {}).items()},
    )
    # No full (generation-2) garbage collection during the run: each would walk the whole heap, which
    # pulumi_azure_native makes large, to free next to nothing (the program's objects live until it ends).
    thresholds = gc.get_threshold()
    gc.set_threshold(thresholds[0], thresholds[1], 1_000_000)
    try:
        recorder, failure = contextvars.copy_context().run(
            _evaluate, program, stack, flat, mocks, preview, project
        )
    finally:
        gc.set_threshold(*thresholds)
    run = Run(stack=stack, config=flat, resources=list(recorder.recorded), invokes=list(mocks.calls))
    if failure is not None:
        run.error = str(failure)
        cause = failure.__cause__
        run.problems = list(getattr(cause, "problems", []))
    else:
        (root,) = run.of_type(STACK_TYPE)
        run.outputs = root.outputs
    return run


@functools.cache
def stack_run(stack: str) -> Run:
    """The shipped stack file's run, once per session (tests read it, never change it)."""
    run = run_program(stack)
    assert run.ok, f"{stack}: {run.error}"
    return run

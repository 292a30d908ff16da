"""Evaluate `__main__.py` offline under Pulumi's test mode (`pulumi.runtime.set_mocks`).

`run_program(stack)` runs the real program, unchanged, the way the Python language host runs it
under `pulumi preview` (pulumi/pulumi sdk/python/cmd/pulumi-language-python-exec: config from the
stack, `run_in_stack(lambda: runpy.run_path(program, run_name="__main__"))`, `pulumi.RunError`
printed without a stack trace), with the resource monitor replaced by `preflight.mocks`.

The resource monitor answers every registration as the engine would in one evaluation
(`preflight.engine.Deployment`): `first-deploy` (every resource created: no ids, preview outputs, so
the values that come from other resources are unknown, as in the first `pulumi preview` of a new stack) or
`update` (against a `pulumi stack export` state, or a synthetic state of the stack deployed as declared:
the default, in which every value is known).

What it returns (`ProgramResult`): every registered resource with its type, name, URN, the engine's step
(create / same / update / replace, and why a replacement), the program's inputs and the checked inputs
Analyze receives (wire format: camelCase, unknowns as the engine's sentinel string), the outputs
AnalyzeStack receives, the physical id ("" while unknown), parent URN, dependencies, property
dependencies, provider and options (replaceOnChanges, deleteBeforeReplace, protect, ignoreChanges, ...),
the exported stack outputs, and, when the config is invalid, the ConfigError problems (no exception).

Isolation between runs (choice: in-process, one fresh runtime per run). Pulumi keeps its runtime
state in context variables (pulumi/runtime/settings.py, config.py: the settings bag, the root
Stack resource, the config map). Each run happens inside `contextvars.copy_context()` on its own
event loop, with the config map, settings and root resource set afresh, so two runs in one process
do not see each other and the caller's context is left as it was. In-process keeps a 500-cluster
benchmark free of a second interpreter start and of re-importing pulumi_azure_native. Runs are not
thread-safe with each other (the pulumi runtime's defaults are process-wide); run them one at a time.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import runpy
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pulumi
from pulumi.runtime import settings as pulumi_settings
from pulumi.runtime.stack import run_in_stack

from preflight.engine import UPDATE, Deployment
from preflight.gctuning import postponed_full_collections
from preflight.mocks import DEFAULT_SUBSCRIPTION_ID, AzureMocks, RecordingMonitor, Registration
from preflight.resource import Resource

REPO_ROOT = Path(__file__).resolve().parent.parent
PROJECT = "azml-gpu"  # Pulumi.yaml `name:`; bare config keys belong to this namespace (Pulumi's rule).
SUBSCRIPTION_KEY = "azure-native:subscriptionId"
LOCATION_KEY = "azure-native:location"


@dataclass
class ProgramResult:
    """The outcome of one mocked run of the program.

    - `resources`: in registration order; the first is the root `pulumi:pulumi:Stack`.
    - `outputs`: the exported stack outputs, resolved (empty when the program failed).
    - `problems`: the ConfigError problems when the stack config is invalid (then nothing else is
      declared); empty otherwise.
    - `error`: the message the engine would print for a `pulumi.RunError` (None on success).
    - `config`: the flat config map (`namespace:key` -> string) the program ran with.
    - `invokes`: the provider functions the program called, as (token, arguments), in order.
    """

    stack: str
    project: str
    resources: list[Resource] = field(default_factory=list)
    outputs: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    error: str | None = None
    config: dict[str, str] = field(default_factory=dict)
    invokes: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.error is None and not self.problems

    @property
    def declared(self) -> list[Resource]:
        """Every resource except the root stack."""
        return [r for r in self.resources if r.type != "pulumi:pulumi:Stack"]

    def of_type(self, typ: str) -> list[Resource]:
        return [r for r in self.resources if r.type == typ]

    def by_urn(self, urn: str) -> Resource:
        for r in self.resources:
            if r.urn == urn:
                return r
        raise KeyError(urn)

    def children(self, parent: Resource) -> list[Resource]:
        return [r for r in self.resources if r.parent == parent.urn]


def exported_state(result: ProgramResult) -> dict[str, Any]:
    """A run (of a deployed stack: the default synthetic state) as `pulumi stack export` writes it
    (apitype.UntypedDeployment version 3, ResourceV3: urn, custom, type, id, inputs, outputs, parent,
    dependencies, propertyDependencies, provider, protect, replaceOnChanges; empty fields omitted as the CLI
    omits them), for `python -m preflight STACK --export-state FILE` and `--state`. Providers are the
    engine's: the default provider is written first, as the engine registers it before its resources."""
    resources: list[dict[str, Any]] = []
    for r in result.resources:
        entry: dict[str, Any] = {"urn": r.urn, "custom": r.custom, "type": r.type}
        if r.id:
            entry["id"] = r.id
        entry["inputs"] = dict(r.inputs)
        entry["outputs"] = dict(r.outputs or {})
        if r.parent:
            entry["parent"] = r.parent
        if r.protect:
            entry["protect"] = True
        if r.dependencies:
            entry["dependencies"] = list(r.dependencies)
        if r.provider_ref:
            entry["provider"] = r.provider_ref
        deps = {k: list(v) for k, v in sorted(r.property_dependencies.items()) if v}
        if deps:
            entry["propertyDependencies"] = deps
        if r.replace_on_changes:
            entry["replaceOnChanges"] = r.replace_on_changes
        resources.append(entry)
    return {"version": 3, "deployment": {"manifest": {"magic": "", "version": ""}, "resources": resources}}


def _wire_value(value: Any) -> str:
    """A config value as the CLI hands it to the program: strings as-is, everything else JSON
    (`pulumi.Config.get_object` parses JSON; booleans and numbers arrive as their JSON text)."""
    return value if isinstance(value, str) else json.dumps(value)


def flatten_config(config: Mapping[str, Any], project: str = PROJECT) -> dict[str, str]:
    """`{"azml-gpu:clusters": [...], "workspace": {...}}` ->
    `{"azml-gpu:clusters": "[...]", "azml-gpu:workspace": "{...}"}`.
    Keys without a namespace belong to the project (Pulumi's rule for stack config)."""
    flat: dict[str, str] = {}
    for key, value in config.items():
        full = key if ":" in key else f"{project}:{key}"
        flat[full] = _wire_value(value)
    return flat


def read_stack_config(stack: str, root: Path = REPO_ROOT) -> dict[str, Any]:
    """The `config:` block of `<root>/Pulumi.<stack>.yaml`, all namespaces (stackconfig.loader's reader).
    Raises stackconfig.loader.StackFileError, one line naming the file and the fix."""
    from stackconfig.loader import read_config_block

    return read_config_block(Path(root) / f"Pulumi.{stack}.yaml")


def plain_numbers(value: Any) -> Any:
    """Integral floats -> int, deeply. Protobuf Structs carry every number as a double; the CLI prints
    stack outputs as JSON, where 4.0 is written 4, so the resolved outputs read like that JSON."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: plain_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain_numbers(v) for v in value]
    return value


def _to_resource(reg: Registration, registered: Mapping[str, Any] | None) -> Resource:
    step = reg.step
    outputs = step.outputs if reg.custom else (registered or {})
    return Resource(
        type=reg.type,
        name=reg.name,
        urn=reg.urn,
        id=step.id or None,
        custom=reg.custom,
        parent=reg.parent or None,
        dependencies=tuple(reg.dependencies),
        property_dependencies={k: tuple(v) for k, v in reg.property_dependencies.items()},
        provider_ref=reg.provider or None,
        inputs=step.inputs,
        state=step.outputs if reg.custom else reg.inputs,
        options=reg.options,
        outputs=plain_numbers(dict(outputs)),
        program_inputs=reg.inputs,
        op=step.op,
        replacement=step.replacement,
        old_id=step.old_id or None,
    )


def _stack_resource(monitor: RecordingMonitor) -> Resource | None:
    """The root `pulumi:pulumi:Stack`: no inputs, its exports as outputs (what Analyze, AnalyzeStack get)."""
    if monitor.stack_urn is None:
        return None
    exports = plain_numbers(dict(monitor.stack_outputs or {}))
    return Resource(
        type="pulumi:pulumi:Stack",
        name=monitor.stack_urn.split("::")[-1],
        urn=monitor.stack_urn,
        id=None,
        custom=False,
        parent=None,
        dependencies=(),
        property_dependencies={},
        inputs={},
        state={},
        options={},
        outputs=exports,
        op="same" if monitor.deployment.kind == UPDATE else "create",
    )


# set_mocks creates a root Stack when none is set; the language host's run_in_stack creates its own
# (and registers the stack's outputs when the program ends), so a placeholder keeps set_mocks from
# making a second one.
_NO_STACK_YET = object()


def _execute(
    program: Path, stack: str, project: str, flat: dict[str, str], monitor: RecordingMonitor, preview: bool
) -> BaseException | None:
    """Run the program in this (copied) context on a fresh event loop; the RunError it raised, if any."""
    previous = _current_event_loop()
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        pulumi.runtime.set_all_config(flat, [])
        pulumi_settings.ROOT.set(_NO_STACK_YET)  # type: ignore[arg-type]
        pulumi.runtime.set_mocks(
            monitor.mocks, project=project, stack=stack, preview=preview, monitor=monitor
        )
        pulumi_settings.ROOT.set(None)
        pulumi_settings.SETTINGS.outputs.clear()
        loop.run_until_complete(run_in_stack(lambda: runpy.run_path(str(program), run_name="__main__")))
        return None
    except pulumi.RunError as exc:
        return exc
    finally:
        loop.close()
        asyncio.set_event_loop(previous)  # the caller's event loop state stays as it was


def _current_event_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_event_loop_policy().get_event_loop()
    except RuntimeError:  # none set in this thread
        return None


def run_program(
    stack: str,
    root: Path = REPO_ROOT,
    config: Mapping[str, Any] | None = None,
    *,
    preview: bool = True,
    project: str = PROJECT,
    deployment: Deployment | None = None,
    existing: Mapping[str, Mapping[str, Any]] | None = None,
) -> ProgramResult:
    """Run `<root>/__main__.py` for `stack` under mocks.

    - `stack`: stack name (`dev`, `prod`); also the stack in every URN.
    - `root`: the project folder holding `__main__.py` and `Pulumi.<stack>.yaml` (default: this repo).
    - `config`: the stack config as a mapping (`namespace:key` -> value, values as in the YAML);
      None reads `Pulumi.<stack>.yaml`. An explicit mapping lets a benchmark run synthetic stacks.
    - `preview` (default True): Pulumi's dry-run flag, as under `pulumi preview`.
    - `deployment`: the evaluation (preflight.engine.Deployment); default: an update against the synthetic
      state of the stack deployed as declared, where every value is known.
    - `existing`: resources outside the stack that the program reads (a customer-managed key's vault), as
      ARM store records (`preflight/provider/store.py`: {"id", "type", "inputs", "outputs"}) by ARM id; default
      none: such a lookup answers ARM's 404 (`preflight.mocks.AzureMocks`).

    Returns a ProgramResult. An invalid config gives `problems` (nothing declared), never an
    exception; an unreadable stack file gives one problem naming the file. Any other exception from
    the program (a bug, not bad input) propagates with its traceback.
    """
    from stackconfig import ConfigError
    from stackconfig.loader import StackFileError

    root = Path(root)
    result = ProgramResult(stack=stack, project=project)
    if config is None:
        try:
            config = read_stack_config(stack, root)
        except StackFileError as exc:  # unreadable, not UTF-8, not YAML, no config: (names the file)
            result.problems = [f"azml-gpu: {exc}"]
            result.error = result.problems[0]
            return result
    flat = flatten_config(config, project)
    result.config = flat

    mocks = AzureMocks(
        subscription_id=flat.get(SUBSCRIPTION_KEY) or DEFAULT_SUBSCRIPTION_ID,
        existing={str(k).lower(): dict(v) for k, v in (existing or {}).items()},
    )
    if deployment is None:
        deployment = Deployment(UPDATE, provider_location=flat.get(LOCATION_KEY))
    monitor = RecordingMonitor(mocks, deployment)
    with postponed_full_collections():  # also while the result is built from the (large) heap
        failure = contextvars.copy_context().run(
            _execute, root / "__main__.py", stack, project, flat, monitor, preview
        )
        stack = [r for r in [_stack_resource(monitor)] if r is not None]
        result.resources = stack + [
            _to_resource(reg, monitor.registered_outputs.get(reg.urn)) for reg in monitor.registrations
        ]
    result.invokes = list(mocks.calls)
    if failure is not None:
        result.error = str(failure)
        cause = failure.__cause__
        if isinstance(cause, ConfigError):
            result.problems = list(cause.problems)
    else:
        result.outputs = plain_numbers(dict(monitor.stack_outputs or {}))
    return result

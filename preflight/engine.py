"""The engine's side of a preview, replayed for each resource the program registers.

What pulumi/pulumi does between a RegisterResource and the answer the program gets back, for the two
evaluations of the gate (read at 1b5949891b, v3.259; cited per behaviour):

- `pkg/resource/deploy/step_generator.go (*stepGenerator).continueStepsFromImport`: ignoreChanges applied
  to the new inputs against the old ones (`processIgnoreChanges`), then the provider's Check (olds only
  when the resource has state), then Analyze on the checked inputs, then the Diff that decides the step.
- `continueStepsFromDiff` + `applyReplaceOnChanges`: a DetailedDiff key contained (propertypath.contains)
  in a replaceOnChanges path becomes a replacement, as do the provider's own replace keys; the user's
  deleteBeforeReplace overrides the provider's; a replacement is checked again without olds.
- `step.go` CreateStep / UpdateStep / SameStep `Apply` with preview: a create (or the create half of a
  replacement) gets the provider's `Create(preview)` outputs and no id (the program sees the id as
  unknown); an update gets `Update(preview)` outputs and keeps the old id; a same keeps the old id and
  outputs. Those outputs are what the program's Outputs resolve to, so unknowns flow into the inputs of
  the resources that use them, and what AnalyzeStack receives (`AnalyzeResources`: "Unlike Analyze,
  AnalyzeStack is called on the final outputs of each resource").
- Components have no provider: no Check, and their outputs are what `register_outputs` sent.
- Read at v3.274.1 (the engine version the project runs, pkg/v3 in the Go module cache): `generateURN` -> a
  URN registered twice is `Duplicate resource URN '<urn>'; try giving it a unique name` (sdk/go/common/diag/
  errors.go, code 2001) and the deployment stops; `isTargetedReplace`: a `taint`ed old resource is replaced
  (Check without olds, replace key `id`); `old.PendingReplacement`: replaced even with no diff; an `external`
  old resource is created (its old inputs are not Pulumi's); resources marked `delete` in the state are
  pending deletes, never matched by URN and deleted by the update; a delete-before-replace replacement first
  deletes the dependents it would replace (`calculateDependentReplacements`: walk the old state's dependents
  in order; a custom, non-external dependent is replaced when its provider is, or when the provider's Diff
  with every input that depends on a replaced resource made unknown, after its recorded replaceOnChanges,
  replaces).

The provider half (Check, Diff, preview outputs) is `preflight.provider.model`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from preflight import propertypath
from preflight.provider import model as azure_native

Kind = Literal["first-deploy", "update"]
Op = Literal["create", "same", "update", "replace"]
FIRST_DEPLOY: Kind = "first-deploy"
UPDATE: Kind = "update"


@dataclass(frozen=True)
class StateResource:
    """One resource of a deployed stack's state (`pulumi stack export`, deployment.resources[]: apitype
    ResourceV3, the fields the step generator reads)."""

    urn: str
    type: str
    custom: bool
    id: str | None
    inputs: Mapping[str, Any]
    outputs: Mapping[str, Any]
    parent: str = ""
    dependencies: tuple[str, ...] = ()
    property_dependencies: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    provider: str = ""
    protect: bool = False
    external: bool = False
    delete: bool = False
    pending_replacement: bool = False
    taint: bool = False
    replace_on_changes: tuple[str, ...] = ()
    retain_on_delete: bool = False


@dataclass(frozen=True)
class StateFile:
    """A `pulumi stack export` document: live resources by URN (snapshot order), pending deletes (`delete:
    true`, never matched), and the project and stack its URNs name."""

    resources: Mapping[str, StateResource]
    pending_deletes: tuple[StateResource, ...] = ()
    project: str | None = None
    stack: str | None = None


@dataclass(frozen=True)
class Replacement:
    """Why the engine replaces a resource: the diff keys that trigger it and how."""

    fields: tuple[str, ...]  # DetailedDiff keys that are *_REPLACE, e.g. properties.properties.vmSize
    by_replace_on_changes: bool  # True: the program's replaceOnChanges matched; False: the provider's keys
    delete_before_replace: bool
    # "replaceOnChanges" | "provider" | "dependent" (deleted first with `because`) | "taint" |
    # "pendingReplacement"
    trigger: str = ""
    because: str | None = None  # the replaced resource a delete-before-replace dependent goes with

    @property
    def how(self) -> str:
        return self.trigger or ("replaceOnChanges" if self.by_replace_on_changes else "provider")


@dataclass
class Step:
    """The engine's decision for one registered resource."""

    urn: str
    type: str
    custom: bool
    op: Op
    inputs: dict[str, Any]  # what Analyze receives (checked inputs for custom resources)
    outputs: dict[str, Any]  # what the program gets back and AnalyzeStack receives
    id: str  # "" = unknown during the preview
    replacement: Replacement | None = None
    old_id: str = ""  # the state's id of a replaced resource


def replace_on_changes_match(paths: list[str], diff_keys: Mapping[str, str]) -> list[str]:
    """The DetailedDiff keys a replaceOnChanges path contains (step_generator.go applyReplaceOnChanges)."""
    parsed = [propertypath.parse(p) for p in paths]
    return sorted(
        k for k in diff_keys if any(propertypath.contains(p, propertypath.parse(k)) for p in parsed)
    )


def _ignore_changes(news: dict[str, Any], olds: Mapping[str, Any], paths: list[str]) -> dict[str, Any]:
    """step_generator.go processIgnoreChanges, for top-level and dotted object paths: the ignored paths take
    their old values."""
    out = json.loads(json.dumps(news))
    for path in paths:
        parsed = propertypath.parse(path)
        old: Any = olds
        for segment in parsed:
            old = old.get(segment) if isinstance(old, Mapping) and isinstance(segment, str) else None
        node: Any = out
        for segment in parsed[:-1]:
            if not isinstance(node, dict) or not isinstance(segment, str):
                node = None
                break
            node = node.setdefault(segment, {})
        if isinstance(node, dict) and isinstance(parsed[-1], str):
            if old is None:
                node.pop(parsed[-1], None)
            else:
                node[parsed[-1]] = old
    return out


@dataclass
class Deployment:
    """One evaluation: what the engine knows before the run and what it decides for each registration.

    - `first-deploy`: no state; every resource is created.
    - `update` with `state`: the resources of a `pulumi stack export` file, matched by URN.
    - `update` without `state`: the synthetic state of a stack deployed exactly as the program declares it
      (every custom resource's old inputs are its new checked inputs, its outputs those a real create leaves:
      `azure_native.deployed_outputs`), so every resource is a same.
    """

    kind: Kind
    provider_location: str | None = None
    state: Mapping[str, StateResource] | None = None
    steps: dict[str, Step] = field(default_factory=dict)
    group_locations: dict[str, str] = field(default_factory=dict)
    pending_deletes: tuple[StateResource, ...] = ()
    # URNs registered more than once (the engine's "Duplicate resource URN"), in the order seen
    duplicates: list[str] = field(default_factory=list)
    # delete-before-replace dependents already condemned: urn -> (the replaced resource, its replace keys)
    condemned: dict[str, tuple[str, tuple[str, ...]]] = field(default_factory=dict)

    @property
    def synthetic(self) -> bool:
        return self.kind == UPDATE and self.state is None

    def register(
        self,
        urn: str,
        typ: str,
        custom: bool,
        inputs: dict[str, Any],
        options: Mapping[str, Any],
        identify: Callable[[Mapping[str, Any]], tuple[str, str, str] | None],
    ) -> Step:
        """The step for one RegisterResource. `identify(checked inputs)`: (ARM id, Azure name, ARM type) of
        the resource, None while the inputs that name it are unknown."""
        if urn in self.steps:
            # step_generator.go generateURN: the engine stops the deployment; the gate records it (the
            # program goes on, so every duplicate is reported at once) and answers with the first one.
            self.duplicates.append(urn)
            return self.steps[urn]
        old = self.state.get(urn) if self.state is not None else None
        if not custom:
            op: Op = "same" if (old is not None or self.synthetic) else "create"
            step = Step(urn, typ, False, op, dict(inputs), dict(inputs), "")
            self.steps[urn] = step
            return step
        ignore = list(options.get("ignoreChanges", []))
        news = _ignore_changes(inputs, old.inputs, ignore) if (old is not None and ignore) else dict(inputs)
        if typ == "azure-native:resources:ResourceGroup" and isinstance(news.get("location"), str):
            self.group_locations[str(news.get("resourceGroupName", "")).lower()] = news["location"]
        group = self.group_locations.get(str(news.get("resourceGroupName", "")).lower())
        fresh = old is not None and (old.external or old.taint)
        checked = azure_native.check(
            typ, news, old.inputs if (old and not fresh) else None, self.provider_location, group
        )
        if self.synthetic:
            arm_id, azure_name, arm_type = identify(checked) or ("", "", "")
            outputs = azure_native.deployed_outputs(typ, checked, azure_name, arm_type)
            step = Step(urn, typ, True, "same", checked, outputs, arm_id)
        elif old is None or old.external:
            step = Step(urn, typ, True, "create", checked, azure_native.preview_outputs(typ, checked), "")
        else:
            step = self._against_state(urn, typ, checked, news, old, options, group)
        if urn in self.condemned and step.op != "replace":
            root, keys = self.condemned[urn]
            replacement = Replacement(keys, False, True, "dependent", root)
            step = self._replace(urn, typ, checked, news, group, replacement, (old.id or "") if old else "")
        elif urn in self.condemned and step.replacement is not None:
            root, _keys = self.condemned[urn]
            r = step.replacement
            step.replacement = Replacement(r.fields, r.by_replace_on_changes, True, r.trigger, root)
        self.steps[urn] = step
        return step

    def _replace(
        self,
        urn: str,
        typ: str,
        checked: dict[str, Any],
        news: dict[str, Any],
        group: str | None,
        replacement: Replacement,
        old_id: str,
    ) -> Step:
        # The replacement is checked again without olds (continueStepsFromDiff) and created in preview.
        rechecked = azure_native.check(typ, news, None, self.provider_location, group)
        outputs = azure_native.preview_outputs(typ, rechecked)
        return Step(urn, typ, True, "replace", checked, outputs, "", replacement=replacement, old_id=old_id)

    def _against_state(
        self,
        urn: str,
        typ: str,
        checked: dict[str, Any],
        news: dict[str, Any],
        old: StateResource,
        options: Mapping[str, Any],
        group: str | None,
    ) -> Step:
        if old.taint:
            diff = azure_native.Diff({}, (), ("id",), False, ("id",), ("id",))
            matched: list[str] = []
            provider_fields = ["id"]
            trigger = "taint"
        else:
            diff = azure_native.detailed_diff(typ, old.inputs, checked, old.outputs)
            if not diff.changed and not old.pending_replacement:
                return Step(urn, typ, True, "same", checked, dict(old.outputs), old.id or "")
            matched = replace_on_changes_match(list(options.get("replaceOnChanges", [])), diff.detailed)
            provider_fields = sorted(k for k, kind in diff.detailed.items() if kind.endswith("_REPLACE"))
            trigger = "replaceOnChanges" if matched else "provider"
            if not (matched or provider_fields) and old.pending_replacement:
                trigger = "pendingReplacement"
        if matched or provider_fields or old.pending_replacement:
            dbr = diff.delete_before_replace
            if options.get("deleteBeforeReplaceDefined") or options.get("deleteBeforeReplace"):
                dbr = bool(options.get("deleteBeforeReplace"))
            if dbr:
                for dependent, keys in self._dependent_replacements(old):
                    self.condemned.setdefault(dependent.urn, (urn, keys))
            fields = tuple(sorted(set(matched) | set(provider_fields)))
            replacement = Replacement(fields, bool(matched), dbr, trigger)
            return self._replace(urn, typ, checked, news, group, replacement, old.id or "")
        outputs = azure_native.preview_outputs(typ, checked, old.outputs)
        return Step(urn, typ, True, "update", checked, outputs, old.id or "")

    def _dependent_replacements(self, root: StateResource) -> list[tuple[StateResource, tuple[str, ...]]]:
        """step_generator.go calculateDependentReplacements for a delete-before-replace of `root`: the old
        state's transitive dependents (dependencies, property dependencies, provider), in snapshot order,
        skipping those already registered; each custom, non-external one that a change of its
        dependencies would replace."""
        assert self.state is not None
        order = list(self.state.values())
        if root.urn not in self.state:
            return []
        dependents = {root.urn}
        replaced = {root.urn}
        found: list[tuple[StateResource, tuple[str, ...]]] = []
        for r in order[order.index(self.state[root.urn]) + 1 :]:
            if r.urn in self.steps:
                continue  # already registered: it cannot depend on root any more
            deps = set(r.dependencies) | {u for us in r.property_dependencies.values() for u in us}
            provider = r.provider.rsplit("::", 1)[0]  # a provider reference is `<urn>::<id>`
            if not (deps & dependents or provider in dependents):
                continue
            dependents.add(r.urn)
            if not r.custom or r.external:
                continue
            if provider in replaced:
                replaced.add(r.urn)
                found.append((r, ()))
                continue
            inputs = {
                k: (azure_native.UNKNOWN if set(r.property_dependencies.get(k, ())) & replaced else v)
                for k, v in r.inputs.items()
            }
            if inputs == dict(r.inputs):
                continue
            diff = azure_native.detailed_diff(r.type, r.inputs, inputs, r.outputs)
            if not diff.changed:
                continue
            matched = replace_on_changes_match(list(r.replace_on_changes), diff.detailed)
            keys = sorted(
                set(matched) | {k for k, kind in diff.detailed.items() if kind.endswith("_REPLACE")}
            )
            if keys:
                replaced.add(r.urn)
                found.append((r, tuple(keys)))
        return found


class StateFileError(ValueError):
    """A --state file that is not a `pulumi stack export` document."""


def _secret_plaintext(value: Any) -> Any:
    """`pulumi stack export --show-secrets` writes a secret as {sig: secret, "plaintext": "<JSON>"}; on the
    wire (and in the program's inputs) it is {sig: secret, "value": <value>}. Ciphertext stays as exported
    (it compares as changed)."""
    if isinstance(value, dict):
        if value.get(azure_native.SIG_KEY) == azure_native.SECRET_SIG and isinstance(
            value.get("plaintext"), str
        ):
            try:
                inner = json.loads(value["plaintext"])
            except json.JSONDecodeError:
                inner = value["plaintext"]
            return {azure_native.SIG_KEY: azure_native.SECRET_SIG, "value": _secret_plaintext(inner)}
        return {k: _secret_plaintext(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_secret_plaintext(v) for v in value]
    return value


def _urn_parts(urn: str) -> tuple[str, str] | None:
    """(stack, project) of `urn:pulumi:<stack>::<project>::<type>::<name>`."""
    if not urn.startswith("urn:pulumi:"):
        return None
    parts = urn[len("urn:pulumi:") :].split("::")
    return (parts[0], parts[1]) if len(parts) >= 4 else None


def read_state_file(path: Path) -> StateFile:
    """The resources of a `pulumi stack export` file (apitype.UntypedDeployment, version 3: {"version": 3,
    "deployment": {"resources": [{urn, custom, id, type, inputs, outputs, parent, dependencies,
    propertyDependencies, provider, delete, taint, external, pendingReplacement, ...}]}}). Secrets exported
    with --show-secrets are read as the program sends them; without it they are ciphertext and compare as
    changed (docs/preflight.md)."""
    from stackconfig.loader import read_text

    try:
        document = json.loads(read_text(path))
    except json.JSONDecodeError as e:
        raise StateFileError(f"{path}: invalid JSON at line {e.lineno} column {e.colno}: {e.msg}") from None
    deployment = document.get("deployment") if isinstance(document, dict) else None
    resources = deployment.get("resources") if isinstance(deployment, dict) else None
    if isinstance(deployment, dict) and "resources" not in deployment:
        resources = []  # an export of a stack with no resources omits the list
    if not isinstance(resources, list):
        raise StateFileError(
            f"{path}: not a `pulumi stack export` document (no deployment.resources list); create it with "
            "`pulumi stack export --show-secrets --file FILE`"
        )
    live: dict[str, StateResource] = {}
    pending: list[StateResource] = []
    names: set[tuple[str, str]] = set()
    for index, r in enumerate(resources):
        if not isinstance(r, dict) or not isinstance(r.get("urn"), str) or not isinstance(r.get("type"), str):
            raise StateFileError(f"{path}: deployment.resources[{index}] has no urn and type")
        parts = _urn_parts(r["urn"])
        if parts is not None:
            names.add(parts)
        prop_deps = r.get("propertyDependencies") or {}
        resource = StateResource(
            urn=r["urn"],
            type=r["type"],
            custom=bool(r.get("custom", False)),
            id=r.get("id"),
            inputs=_secret_plaintext(r.get("inputs") or {}),
            outputs=_secret_plaintext(r.get("outputs") or {}),
            parent=str(r.get("parent") or ""),
            dependencies=tuple(r.get("dependencies") or ()),
            property_dependencies={str(k): tuple(v or ()) for k, v in prop_deps.items()},
            provider=str(r.get("provider") or ""),
            protect=bool(r.get("protect", False)),
            external=bool(r.get("external", False)),
            delete=bool(r.get("delete", False)),
            pending_replacement=bool(r.get("pendingReplacement", False)),
            taint=bool(r.get("taint", False)),
            replace_on_changes=tuple(r.get("replaceOnChanges") or ()),
            retain_on_delete=bool(r.get("retainOnDelete", False)),
        )
        if resource.delete:
            pending.append(resource)
        else:
            live[resource.urn] = resource
    stack, project = sorted(names)[0] if len(names) == 1 else (None, None)
    return StateFile(live, tuple(pending), project, stack)


def state_names(path: Path) -> set[tuple[str, str]]:
    """Every (stack, project) the URNs of a state file name (more than one: a hand-merged file)."""
    state = read_state_file(path)
    everything = list(state.resources.values()) + list(state.pending_deletes)
    return {p for p in (_urn_parts(r.urn) for r in everything) if p is not None}


def read_state(path: Path) -> dict[str, StateResource]:
    """The live resources of a `pulumi stack export` file by URN (read_state_file)."""
    return dict(read_state_file(path).resources)

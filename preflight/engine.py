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

The provider half (Check, Diff, preview outputs) is `preflight.azure_native`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from preflight import azure_native, propertypath

Kind = Literal["first-deploy", "update"]
Op = Literal["create", "same", "update", "replace"]
FIRST_DEPLOY: Kind = "first-deploy"
UPDATE: Kind = "update"


@dataclass(frozen=True)
class StateResource:
    """One resource of a deployed stack's state (`pulumi stack export`, deployment.resources[])."""

    urn: str
    type: str
    custom: bool
    id: str | None
    inputs: Mapping[str, Any]
    outputs: Mapping[str, Any]


@dataclass(frozen=True)
class Replacement:
    """Why the engine replaces a resource: the diff keys that trigger it and how."""

    fields: tuple[str, ...]  # DetailedDiff keys that are *_REPLACE, e.g. properties.properties.vmSize
    by_replace_on_changes: bool  # True: the program's replaceOnChanges matched; False: the provider's keys
    delete_before_replace: bool


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
        checked = azure_native.check(typ, news, old.inputs if old else None, self.provider_location, group)
        if self.synthetic:
            arm_id, azure_name, arm_type = identify(checked) or ("", "", "")
            outputs = azure_native.deployed_outputs(typ, checked, azure_name, arm_type)
            step = Step(urn, typ, True, "same", checked, outputs, arm_id)
        elif old is None:
            step = Step(urn, typ, True, "create", checked, azure_native.preview_outputs(typ, checked), "")
        else:
            step = self._against_state(urn, typ, checked, news, old, options, group)
        self.steps[urn] = step
        return step

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
        diff = azure_native.detailed_diff(typ, old.inputs, checked)
        if not diff.changed:
            return Step(urn, typ, True, "same", checked, dict(old.outputs), old.id or "")
        matched = replace_on_changes_match(list(options.get("replaceOnChanges", [])), diff.detailed)
        provider_fields = sorted(k for k, kind in diff.detailed.items() if kind.endswith("_REPLACE"))
        if matched or provider_fields:
            dbr = diff.delete_before_replace
            if options.get("deleteBeforeReplaceDefined") or options.get("deleteBeforeReplace"):
                dbr = bool(options.get("deleteBeforeReplace"))
            # The replacement is checked again without olds (continueStepsFromDiff) and created in preview.
            rechecked = azure_native.check(typ, news, None, self.provider_location, group)
            return Step(
                urn,
                typ,
                True,
                "replace",
                checked,
                azure_native.preview_outputs(typ, rechecked),
                "",
                replacement=Replacement(
                    tuple(sorted(set(matched) | set(provider_fields))), bool(matched), dbr
                ),
            )
        outputs = azure_native.preview_outputs(typ, checked, old.outputs)
        return Step(urn, typ, True, "update", checked, outputs, old.id or "")


class StateFileError(ValueError):
    """A --state file that is not a `pulumi stack export` document."""


def read_state(path: Path) -> dict[str, StateResource]:
    """The resources of a `pulumi stack export` file (apitype.UntypedDeployment, version 3: {"version": 3,
    "deployment": {"resources": [{urn, custom, id, type, inputs, outputs, ...}]}}). Secret values exported
    without --show-secrets are ciphertext objects: they compare as changed, so export with
    `pulumi stack export --show-secrets` for an exact diff (docs/preflight.md)."""
    from stackconfig.loader import read_text

    try:
        document = json.loads(read_text(path))
    except json.JSONDecodeError as e:
        raise StateFileError(f"{path}: invalid JSON at line {e.lineno} column {e.colno}: {e.msg}") from None
    deployment = document.get("deployment") if isinstance(document, dict) else None
    resources = deployment.get("resources") if isinstance(deployment, dict) else None
    if not isinstance(resources, list):
        raise StateFileError(
            f"{path}: not a `pulumi stack export` document (no deployment.resources list); create it with "
            "`pulumi stack export --show-secrets --file FILE`"
        )
    state: dict[str, StateResource] = {}
    for index, r in enumerate(resources):
        if not isinstance(r, dict) or not isinstance(r.get("urn"), str) or not isinstance(r.get("type"), str):
            raise StateFileError(f"{path}: deployment.resources[{index}] has no urn and type")
        state[r["urn"]] = StateResource(
            urn=r["urn"],
            type=r["type"],
            custom=bool(r.get("custom", False)),
            id=r.get("id"),
            inputs=r.get("inputs") or {},
            outputs=r.get("outputs") or {},
        )
    return state

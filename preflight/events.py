"""The real engine's account of one CLI run, read from its event log (`pulumi preview|up --event-log FILE`:
one
JSON `apitype.EngineEvent` a line, pulumi/pulumi sdk/go/common/apitype/events.go). This is the one reader of
the engine's events; the gate's report, its own checks and the tests read `Run`.

- Steps: `resourcePreEvent.metadata` (`StepEventMetadata`: op, urn, type, old and new state with inputs and
  outputs, replace keys, diffs, detailed diff), with the outputs of its `resOutputsEvent`. The ops of one
  replacement (pkg/resource/deploy/step.go `StepOp`: `replace`, `create-replacement`, `delete-replaced`,
  `discard-replaced`) are folded into one step whose op is `replace`; `delete` is a delete, and so is a URN
  whose only ops are `delete-replaced` (a resource the program no longer declares, deleted ahead of a
  replacement).
- Violations: `policyEvent` (policy, pack, level, resource URN, message). pulumi-policy sends
  "<description>\\n<message>" (pulumi_policy/policy.py `_create_diagnostic`), split here. A `remediate` level
  is a mandatory one to the engine (pkg/resource/deploy/step_generator.go: "Stack policies cannot be
  remediated, so treat the level as mandatory"; analyze_snapshot.go downgrades a remediation still violating).
- Diagnostics: `diagnosticEvent` by severity (an `error` fails the run: a Check failure, a program error, a
  duplicate URN, a bad policy config).
- The summary: `summaryEvent` (result, resource changes, policy packs that ran).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPLACE_OPS = {"replace", "create-replacement", "delete-replaced", "discard-replaced"}
DELETE_OPS = {"delete", "discard"}
REPLACEMENT_OPS = {"replace", "create-replacement"}  # the ops that (re)create a resource in a replacement
BLOCKING = ("mandatory", "remediate")
STACK_TYPE = "pulumi:pulumi:Stack"
_ANSI = re.compile(r"\x1b\[[0-9;]*m|<\{%[a-z]+%\}>")


def urn_name(urn: str) -> str:
    return urn.rsplit("::", 1)[-1] if urn else ""


def urn_type(urn: str) -> str:
    """The resource's own type token (the last of the qualified type `parent$...$type`)."""
    return urn.split("::")[2].split("$")[-1] if urn.count("::") >= 3 else ""


@dataclass(frozen=True)
class Violation:
    policy: str
    enforcement: str  # advisory | mandatory | remediate | disabled
    urn: str
    message: str  # the pack's message without the policy description before it
    description: str = ""

    @property
    def blocking(self) -> bool:
        return self.enforcement in BLOCKING

    def as_json(self) -> dict[str, str]:
        return {
            "policy": self.policy,
            "enforcement": self.enforcement,
            "urn": self.urn,
            "message": self.message,
        }


@dataclass
class Step:
    """The engine's step for one resource: what it registered and decided."""

    op: str  # create | same | update | replace | delete | read | ...
    urn: str
    type: str
    custom: bool
    parent: str
    old: dict[str, Any] | None  # StepEventStateMetadata of the state (None for a create)
    new: dict[str, Any] | None  # ... of the registration (None for a delete)
    keys: list[str] = field(default_factory=list)  # the replace keys
    diffs: list[str] = field(default_factory=list)
    detailed_diff: dict[str, Any] = field(default_factory=dict)
    outputs: dict[str, Any] | None = None  # from its resOutputsEvent
    ops: list[str] = field(default_factory=list)  # the engine's own ops for this URN, in order

    @property
    def name(self) -> str:
        return urn_name(self.urn)

    @property
    def inputs(self) -> dict[str, Any]:
        """The checked inputs (what Analyze received); the old ones for a delete."""
        return dict((self.new or self.old or {}).get("inputs") or {})

    @property
    def old_inputs(self) -> dict[str, Any]:
        return dict((self.old or {}).get("inputs") or {})

    @property
    def state_outputs(self) -> dict[str, Any]:
        """The outputs after the step (preview outputs in a preview), else those of the state."""
        if self.outputs is not None:
            return self.outputs
        return dict((self.new or self.old or {}).get("outputs") or {})

    @property
    def id(self) -> str:
        return str((self.new or {}).get("id") or (self.old or {}).get("id") or "")

    @property
    def old_id(self) -> str:
        return str((self.old or {}).get("id") or "")

    @property
    def options(self) -> dict[str, Any]:
        state = self.new or self.old or {}
        return {k: state[k] for k in ("protect", "retainOnDelete", "taint") if state.get(k)}


@dataclass(frozen=True)
class Diagnostic:
    severity: str
    message: str
    urn: str = ""


@dataclass
class Run:
    """One CLI run: its exit code, steps in the engine's order, violations, diagnostics and summary."""

    exit_code: int
    steps: list[Step] = field(default_factory=list)
    violations: list[Violation] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)
    stderr: str = ""

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]

    def step(self, urn: str) -> Step | None:
        return next((s for s in self.steps if s.urn == urn), None)

    @property
    def stack_outputs(self) -> dict[str, Any]:
        root = next((s for s in self.steps if s.type == STACK_TYPE), None)
        return root.state_outputs if root is not None else {}

    @property
    def ops(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for s in self.steps:
            counts[s.op] = counts.get(s.op, 0) + 1
        return dict(sorted(counts.items()))


def _plain(message: str) -> str:
    return _ANSI.sub("", message).strip()


def _violation(event: dict[str, Any]) -> Violation:
    message = _plain(str(event.get("message", "")))
    description = ""
    head, sep, rest = message.partition("\n")
    if sep:
        description, message = head, rest.strip()
    return Violation(
        str(event.get("policyName", "")),
        str(event.get("enforcementLevel", "")),
        str(event.get("resourceUrn", "")),
        message,
        description,
    )


def parse(exit_code: int, events: list[dict[str, Any]], stderr: str = "") -> Run:
    run = Run(exit_code, stderr=stderr)
    by_urn: dict[str, Step] = {}
    for ev in events:
        if pre := ev.get("resourcePreEvent"):
            meta = pre.get("metadata") or {}
            urn, op = str(meta.get("urn", "")), str(meta.get("op", ""))
            state = meta.get("new") or meta.get("old") or {}
            folded = "replace" if op in REPLACE_OPS else op
            step = by_urn.get(urn)
            if step is None:
                step = Step(
                    folded,
                    urn,
                    str(meta.get("type") or urn_type(urn)),
                    bool(state.get("custom")),
                    str(state.get("parent") or ""),
                    meta.get("old"),
                    meta.get("new"),
                    list(meta.get("keys") or []),
                    list(meta.get("diffs") or []),
                    dict(meta.get("detailedDiff") or {}),
                )
                by_urn[urn] = step
                run.steps.append(step)
            step.ops.append(op)
            if len(step.ops) > 1 and folded == "replace":
                step.op = "replace"
                step.old = step.old or meta.get("old")
                step.new = step.new or meta.get("new")
                step.keys = step.keys or list(meta.get("keys") or [])
                step.detailed_diff = step.detailed_diff or dict(meta.get("detailedDiff") or {})
        elif out := ev.get("resOutputsEvent"):
            meta = out.get("metadata") or {}
            step = by_urn.get(str(meta.get("urn", "")))
            new = meta.get("new") or {}
            if step is not None and new:
                step.outputs = dict(new.get("outputs") or {})
        elif policy := ev.get("policyEvent"):
            run.violations.append(_violation(policy))
        elif diag := ev.get("diagnosticEvent"):
            severity = str(diag.get("severity", ""))
            if severity in ("error", "warning"):
                run.diagnostics.append(
                    Diagnostic(severity, _plain(str(diag.get("message", ""))), diag.get("urn", ""))
                )
        elif summary := ev.get("summaryEvent"):
            run.summary = summary
    for step in run.steps:
        if step.op == "replace" and not REPLACEMENT_OPS & set(step.ops):
            # only `delete-replaced` (then `remove-pending-replace`): the engine deletes the old resource of a
            # URN the program no longer declares, ahead of a replacement it depends on; the CLI prints
            # `delete original` and nothing recreates it (pkg/resource/deploy/step_generator.go
            # `calculateDependentReplacements`, pkg/display/rows.go)
            step.op = "delete"
    return run


def read(path: Path) -> list[dict[str, Any]]:
    """The events of an event log file (none when the CLI stopped before writing it)."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]

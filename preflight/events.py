"""The real engine's verdict, read from its event log (`pulumi preview --event-log FILE`: one JSON
`apitype.EngineEvent` a line, pulumi/pulumi sdk/go/common/apitype/events.go): the policy violations by level,
policy and resource, the steps that replace or delete, and the engine's own errors.

Levels: `remediate` counts as mandatory (pkg/engine/events.go and the analyzer host fail the update on both).
Steps (`resourcePreEvent.metadata.op`, pkg/resource/deploy/step.go `StepOp`): `replace`, `create-replacement`
and `delete-replaced` are one replacement; `delete` is a delete.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

REPLACE_OPS = {"replace", "create-replacement", "delete-replaced", "discard-replaced"}
MANDATORY = {"mandatory", "remediate"}


def urn_name(urn: str) -> str:
    return urn.rsplit("::", 1)[-1] if urn else ""


def urn_type(urn: str) -> str:
    return urn.split("::")[2].split("$")[-1] if urn.count("::") >= 3 else ""


@dataclass
class Verdict:
    exit_code: int
    mandatory: list[tuple[str, str]] = field(default_factory=list)  # (policy, resource URN)
    advisory: list[tuple[str, str]] = field(default_factory=list)
    replacements: list[tuple[str, str]] = field(default_factory=list)  # (type, URN)
    deletes: list[tuple[str, str]] = field(default_factory=list)
    creates: int = 0
    errors: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def read(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def verdict(exit_code: int, events: Iterable[dict[str, Any]]) -> Verdict:
    mandatory, advisory, replaced, deleted, errors = set(), set(), set(), set(), []
    creates = 0
    for ev in events:
        if pe := ev.get("policyEvent"):
            key = (pe["policyName"], pe.get("resourceUrn", ""))
            (mandatory if pe.get("enforcementLevel") in MANDATORY else advisory).add(key)
        elif pre := ev.get("resourcePreEvent"):
            meta = pre.get("metadata", {})
            op, urn = meta.get("op"), meta.get("urn", "")
            if op in REPLACE_OPS:
                replaced.add((meta.get("type") or urn_type(urn), urn))
            elif op == "delete":
                deleted.add((meta.get("type") or urn_type(urn), urn))
            elif op == "create":
                creates += 1
        elif (diag := ev.get("diagnosticEvent")) and diag.get("severity") == "error":
            errors.append(diag.get("message", "").strip())
    return Verdict(
        exit_code,
        sorted(mandatory),
        sorted(advisory),
        sorted(replaced),
        sorted(deleted),
        creates,
        errors,
    )

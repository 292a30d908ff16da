"""cluster-replacement: the gate's own check of what an update would replace.

The engine never tells a policy pack which resources a change replaces: Analyze runs after the provider's
Check and before its Diff (pulumi/pulumi pkg/resource/deploy/step_generator.go continueStepsFromImport), and
for a replacement AnalyzeStack gets the create-preview outputs (step.go CreateStep.Apply), the same as for a
new resource. The gate has the state (`--state`), replays the diff (preflight.engine, preflight.azure_native)
and reports each cluster the change would delete and recreate: with the prod policy config, that is a
mandatory violation unless `cluster-replacement.acknowledged` lists the cluster.

Configured in the policy config file like a policy, and the Pulumi CLI accepts the entry as long as it
carries an enforcementLevel (an unknown policy name with a level is passed through to Configure and ignored
by the pack: pkg/resource/analyzer/config.go applyConfig; without a level it fails with `invalid enforcement
level ""`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from preflight.analyzer import Violation
from preflight.resource import Resource

NAME = "cluster-replacement"
COMPUTE = "azure-native:machinelearningservices:Compute"
DESCRIPTION = "A change must not delete and recreate an AmlCompute cluster unless the config acknowledges it."
GATE_CHECKS: dict[str, dict[str, Any]] = {
    NAME: {
        "enforcementLevel": "advisory",
        "configSchema": {
            "properties": {
                "acknowledged": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "Cluster names whose replacement by this change is intended.",
                }
            }
        },
    }
}


def field_name(path: str) -> str:
    """`properties.properties.vmSize` -> `vmSize`; `properties.computeLocation` -> `computeLocation`."""
    for prefix in ("properties.properties.", "properties."):
        if path.startswith(prefix):
            return path[len(prefix) :]
    return path


def summary(resource: Resource) -> str:
    """'h100-x4 will be deleted and recreated (vmSize)', for a resource the update replaces."""
    replacement = resource.replacement
    assert replacement is not None
    fields = ", ".join(sorted({field_name(f) for f in replacement.fields}))
    how = (
        "deleted and recreated"
        if replacement.delete_before_replace
        else "recreated (new one first, then the old deleted)"
    )
    name = resource.outputs.get("name") if isinstance(resource.outputs.get("name"), str) else None
    return f"{resource.program_inputs.get('computeName') or name or resource.name} will be {how} ({fields})"


def replacement_rows(resources: Iterable[Resource]) -> list[dict[str, Any]]:
    """Every resource the update replaces, with the diff keys that trigger it."""
    rows = []
    for r in resources:
        if r.op != "replace" or r.replacement is None:
            continue
        rows.append(
            {
                "urn": r.urn,
                "type": r.type,
                "name": r.name,
                "fields": list(r.replacement.fields),
                "trigger": r.replacement.how,
                "because": r.replacement.because,
                "delete_before_replace": r.replacement.delete_before_replace,
                "summary": summary(r),
            }
        )
    return rows


def findings(resources: Iterable[Resource], config: Mapping[str, Any]) -> list[Violation]:
    """One violation per replaced cluster not in `acknowledged`, at the configured level."""
    level = str(config.get("enforcementLevel", GATE_CHECKS[NAME]["enforcementLevel"]))
    if level == "disabled":
        return []
    acknowledged = set(config.get("acknowledged", []))
    found = []
    for r in resources:
        if r.type != COMPUTE or r.op != "replace" or r.replacement is None:
            continue
        cluster = str(r.program_inputs.get("computeName") or r.name)
        if cluster in acknowledged:
            continue
        found.append(
            Violation(
                NAME,
                level,
                r.urn,
                f"{summary(r)}: the cluster is deleted with every job running on it, and Azure fixes these "
                "settings at creation. Fix: revert the change, or schedule it and add "
                f"'{cluster}' to cluster-replacement.acknowledged in the policy config; after `pulumi up`, "
                "run `python -m jobs check-deploy` (a cluster recreated under the same name has come back "
                "with its old size: docs/azure-behaviour.md).",
                DESCRIPTION,
            )
        )
    return found

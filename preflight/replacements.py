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
from dataclasses import dataclass
from typing import Any

from preflight.analyzer import Violation
from preflight.resource import Resource
from preflight.wire import is_unknown

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
    # outputs None: "the inputs, for a resource built by hand" (preflight/resource.py). A replacement's
    # preview outputs hold the unknown sentinel where the new resource's values are not known yet.
    seen = resource.outputs if resource.outputs is not None else resource.inputs
    name = seen.get("name")
    name = name if isinstance(name, str) and not is_unknown(name) else None
    return f"{resource.program_inputs.get('computeName') or name or resource.name} will be {how} ({fields})"


def replacement_rows(resources: Iterable[Resource]) -> list[dict[str, Any]]:
    """Every resource the update replaces, with the diff keys that trigger it."""
    rows = []
    for r in sorted(resources, key=lambda r: (r.name, r.urn)):
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


LOCK_TYPES = (
    "azure-native:authorization:ManagementLockByScope",
    "azure-native:authorization:ManagementLockAtResourceLevel",
    "azure-native:authorization:ManagementLockAtResourceGroupLevel",
    "azure-native:authorization:ManagementLockAtSubscriptionLevel",
)


@dataclass(frozen=True)
class Deleted:
    """A cluster in the state that the update deletes: gone from the program, or a pending delete."""

    urn: str
    name: str
    arm_id: str
    pending: bool = False


def deleted_clusters(state: Iterable[Any], registered: set[str]) -> list[Deleted]:
    """The AmlCompute clusters of the state (engine.StateResource) the update deletes (not registered, or a
    pending delete). Deleting a cluster kills its running jobs as a replacement does."""
    out = []
    for s in state:
        if s.type != COMPUTE or s.external or (s.urn in registered and not s.delete):
            continue
        name = s.inputs.get("computeName") or s.outputs.get("name") or s.urn.split("::")[-1]
        out.append(Deleted(s.urn, str(name), str(s.id or ""), bool(s.delete)))
    return sorted(out, key=lambda d: (d.name, d.urn, d.pending))


def _lock_scopes(locks: Iterable[Any]) -> list[tuple[str, str, str]]:
    """(scope, lock name, level) of each lock whose scope is known: a ManagementLockByScope's `scope`, or the
    scope in its ARM id (`<scope>/providers/Microsoft.Authorization/locks/<name>`)."""
    found = []
    for lock in locks:
        if lock.type not in LOCK_TYPES:
            continue
        inputs = dict(getattr(lock, "inputs", {}) or {})
        scope = inputs.get("scope")
        lock_id = str(getattr(lock, "id", "") or "")
        marker = "/providers/Microsoft.Authorization/locks/"
        if not (isinstance(scope, str) and scope.startswith("/")) and marker in lock_id:
            scope = lock_id.split(marker)[0]
        if isinstance(scope, str) and scope.startswith("/"):
            name = str(inputs.get("lockName") or lock.urn.split("::")[-1])
            found.append((scope, name, str(inputs.get("level", "CanNotDelete"))))
    return sorted(set(found))


def blocking_locks(arm_id: str, locks: Iterable[Any]) -> list[tuple[str, str, str]]:
    """The locks that block deleting the resource `arm_id`: every lock at its scope or a parent scope ("When
    you apply a lock at a parent scope, all resources within that scope inherit the same lock",
    learn.microsoft.com/azure/azure-resource-manager/management/lock-resources); CanNotDelete and ReadOnly
    both forbid a delete."""
    target = arm_id.lower().rstrip("/")
    return [
        lock
        for lock in _lock_scopes(locks)
        if target == lock[0].lower().rstrip("/") or target.startswith(lock[0].lower().rstrip("/") + "/")
    ]


def _cluster_name(r: Resource) -> str:
    return str(r.program_inputs.get("computeName") or r.name)


def findings(
    resources: Iterable[Resource],
    config: Mapping[str, Any],
    deleted: Iterable[Deleted] = (),
    locks: Iterable[Any] = (),
) -> list[Violation]:
    """One violation per replaced or deleted cluster not in `acknowledged`, at the configured level; and, for
    an acknowledged one, a mandatory violation per lock that blocks its delete (`pulumi up` would fail).
    `locks`: the lock resources of the old state and of the program (what `blocking_locks` reads)."""
    level = str(config.get("enforcementLevel", GATE_CHECKS[NAME]["enforcementLevel"]))
    if level == "disabled":
        return []
    acknowledged = set(config.get("acknowledged", []))
    lock_list = list(locks)
    found = []
    targets: list[tuple[str, str, str, str]] = []  # (cluster, urn, arm id, what happens)
    for r in resources:
        if r.type != COMPUTE or r.op != "replace" or r.replacement is None:
            continue
        targets.append((_cluster_name(r), r.urn, str(r.old_id or ""), summary(r)))
    for d in deleted:
        why = "a pending delete in the state" if d.pending else "no longer in the stack config"
        targets.append((d.name, d.urn, d.arm_id, f"{d.name} will be deleted ({why})"))
    for cluster, urn, arm_id, what in sorted(targets):
        if cluster not in acknowledged:
            found.append(
                Violation(
                    NAME,
                    level,
                    urn,
                    f"{what}: the cluster is deleted with every job running on it, and Azure fixes "
                    "these settings at creation. Fix: revert the change, or schedule it and add "
                    f"'{cluster}' to cluster-replacement.acknowledged in the policy config; after "
                    "`pulumi up`, run `python -m jobs check-deploy` (a cluster recreated under the same "
                    "name has come back with its old size: docs/azure-behaviour.md).",
                    DESCRIPTION,
                )
            )
            continue
        for scope, lock, lock_level in blocking_locks(arm_id, lock_list) if arm_id else []:
            found.append(
                Violation(
                    NAME,
                    "mandatory",
                    urn,
                    f"cluster-replacement.acknowledged: '{cluster}' is acknowledged, but the {lock_level} "
                    f"lock '{lock}' on {scope} blocks deleting it (a lock applies to every resource "
                    "below its scope), so `pulumi up` fails at the delete. Fix: remove the lock for this "
                    "change (azml-gpu:locks.workspace: false, or the lock's own key), deploy, then lock "
                    "again.",
                    DESCRIPTION,
                )
            )
    return found

"""cluster-replacement: the gate's own check of what an update replaces or deletes.

The engine never tells a policy pack which resources a change replaces: Analyze runs after the provider's
Check and before its Diff (pulumi/pulumi pkg/resource/deploy/step_generator.go continueStepsFromImport), and
for a replacement AnalyzeStack gets the create-preview outputs (step.go CreateStep.Apply), the same as for a
new resource. The engine's steps say it (`preflight.events`: a `replace` step with its replace keys and
detailed diff, a `delete` step), and the gate reports each cluster the change would delete and recreate or
delete: with the prod policy config, that is a mandatory violation unless `cluster-replacement.acknowledged`
lists the cluster.

Configured in the policy config file like a policy, and the Pulumi CLI accepts the entry as long as it
carries an enforcementLevel (an unknown policy name with a level is passed through to Configure and ignored
by the pack: pkg/resource/analyzer/config.go applyConfig; without a level it fails with `invalid enforcement
level ""`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from preflight.events import DELETE_OPS, Step, Violation
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


def _value_at(inputs: Mapping[str, Any], path: str) -> Any:
    node: Any = inputs
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def _shown(value: Any) -> str:
    if value is None:
        return "(none)"
    if is_unknown(value):
        return "(known after the update)"
    return str(value) if isinstance(value, str | int | float | bool) else "(a structure)"


def replace_fields(step: Step) -> list[str]:
    """The inputs that force the replacement: the detailed diff's `*-replace` keys (apitype.PropertyDiff
    `diffKind`: add-replace, delete-replace, update-replace), else the replace keys."""
    kinds = {k: str(v.get("diffKind", "")) for k, v in step.detailed_diff.items() if isinstance(v, Mapping)}
    forced = sorted(k for k, kind in kinds.items() if kind.endswith("-replace"))
    return forced or sorted(step.keys)


def delete_before_replace(step: Step) -> bool:
    """Whether the engine deletes the old resource before creating the new one: its `delete-replaced` step
    comes
    before its `create-replacement` (pkg/resource/deploy/step_generator.go: delete-before-replace)."""
    ops = step.ops
    if "delete-replaced" in ops and "create-replacement" in ops:
        return ops.index("delete-replaced") < ops.index("create-replacement")
    return False


def _cluster_name(step: Step) -> str:
    return str(step.inputs.get("computeName") or step.name)


def summary(step: Step, steps: Iterable[Step] = ()) -> str:
    """'h100-x4 will be deleted and recreated (vmSize: Standard_ND96isr_H100_v5 ->
    Standard_ND96is_H100_v5)'."""
    changes = []
    for path in replace_fields(step):
        old, new = _value_at(step.old_inputs, path), _value_at(step.inputs, path)
        changes.append(f"{field_name(path)}: {_shown(old)} -> {_shown(new)}")
    how = (
        "deleted and recreated"
        if delete_before_replace(step)
        else "recreated (new one first, then the old deleted)"
    )
    name = _cluster_name(step) if step.type == COMPUTE else step.name
    text = f"{name} will be {how} ({'; '.join(changes) or 'no input named'})"
    if preview_only(step, steps):
        text += (
            "; preview only: every input that forces it is unknown until the update, so `pulumi up` replaces "
            "it only if the value then differs"
        )
    return text


def preview_only(step: Step, steps: Iterable[Step]) -> bool:
    """A replacement the preview shows only because the new value of every input that forces it is unknown,
    and each of those values comes from a resource the update changes in place: azure-native's `Update`
    preview leaves its outputs unknown but for `name` and `location` (`stableOutputs`; preflight.provider.
    model `preview_outputs`), e.g. a cluster's identity principalId during a scale change, while the real
    update keeps them. A value from a resource the update replaces (a new cluster, a new identity) does
    change: that replacement is real. The source of an unknown value is the step whose old outputs hold the
    input's old value (the engine's events carry no dependencies); with no such step it is not labelled."""
    fields = replace_fields(step)
    if not fields or not all(is_unknown(_value_at(step.inputs, f)) for f in fields):
        return False
    others = [s for s in steps if s.urn != step.urn and s.old is not None]
    for f in fields:
        old = _value_at(step.old_inputs, f)
        if old is None or isinstance(old, Mapping | list):
            return False
        sources = [s for s in others if _holds(dict(s.old.get("outputs") or {}), old)]  # type: ignore[union-attr]
        if not sources or any(s.op != "update" for s in sources):
            return False
    return True


def _holds(node: Any, value: Any) -> bool:
    """Whether `value` is a leaf of `node` (outputs: nested mappings and lists)."""
    if isinstance(node, Mapping):
        return any(_holds(v, value) for v in node.values())
    if isinstance(node, list):
        return any(_holds(v, value) for v in node)
    return node == value


def replacement_rows(steps: Iterable[Step]) -> list[dict[str, Any]]:
    """Every resource the update replaces, with the inputs that force it (old -> new)."""
    rows = []
    steps = list(steps)
    for s in sorted(steps, key=lambda s: (s.name, s.urn)):
        if s.op != "replace":
            continue
        rows.append(
            {
                "urn": s.urn,
                "type": s.type,
                "name": s.name,
                "fields": replace_fields(s),
                "changes": [
                    {"field": f, "old": _value_at(s.old_inputs, f), "new": _value_at(s.inputs, f)}
                    for f in replace_fields(s)
                ],
                "delete_before_replace": delete_before_replace(s),
                "preview_only": preview_only(s, steps),
                "summary": summary(s, steps),
            }
        )
    return rows


LOCK_TYPES = (
    "azure-native:authorization:ManagementLockByScope",
    "azure-native:authorization:ManagementLockAtResourceLevel",
    "azure-native:authorization:ManagementLockAtResourceGroupLevel",
    "azure-native:authorization:ManagementLockAtSubscriptionLevel",
)


def _lock_scopes(steps: Iterable[Step]) -> list[tuple[str, str, str]]:
    """(scope, lock name, level) of each lock of the state whose scope is known: a ManagementLockByScope's
    `scope`, or the scope in its ARM id (`<scope>/providers/Microsoft.Authorization/locks/<name>`)."""
    found = []
    marker = "/providers/Microsoft.Authorization/locks/"
    for lock in steps:
        if lock.type not in LOCK_TYPES or lock.old is None:
            continue
        inputs = lock.old_inputs
        scope = inputs.get("scope")
        if not (isinstance(scope, str) and scope.startswith("/")) and marker in lock.old_id:
            scope = lock.old_id.split(marker)[0]
        if isinstance(scope, str) and scope.startswith("/"):
            name = str(inputs.get("lockName") or lock.name)
            found.append((scope, name, str(inputs.get("level", "CanNotDelete"))))
    return sorted(set(found))


def blocking_locks(arm_id: str, locks: Iterable[Step]) -> list[tuple[str, str, str]]:
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


def findings(steps: Iterable[Step], config: Mapping[str, Any]) -> list[Violation]:
    """One violation per replaced or deleted cluster not in `acknowledged`, at the configured level; and, for
    an acknowledged one, a mandatory violation per lock of the state that blocks its delete (`pulumi up` would
    fail)."""
    level = str(config.get("enforcementLevel", GATE_CHECKS[NAME]["enforcementLevel"]))
    if level == "disabled":
        return []
    steps = list(steps)
    acknowledged = set(config.get("acknowledged", []))
    found = []
    targets: list[tuple[str, str, str, str]] = []  # (cluster, urn, arm id, what happens)
    for s in steps:
        if s.type != COMPUTE:
            continue
        if s.op == "replace":
            targets.append((_cluster_name(s), s.urn, s.old_id, summary(s, steps)))
        elif s.op in DELETE_OPS:
            targets.append((_cluster_name(s), s.urn, s.old_id, f"{_cluster_name(s)} will be deleted"))
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
        for scope, lock, lock_level in blocking_locks(arm_id, steps) if arm_id else []:
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

"""Shared reading of azure-native wire-format properties for the policies (camelCase names, numbers as
floats), safe for what the engine does not know during a preview.

During a preview the engine sends unknown values as a sentinel (pulumi/pulumi pkg/resource/plugin/
analyzer_plugin.go marshals Analyze and AnalyzeStack properties with `KeepUnknowns: true`), and reading one
through pulumi-policy's proxy raises UnknownValueError, which the servicer turns into an ADVISORY "can't run
policy ... during preview" for the whole policy (pulumi_policy/policy.py, Analyze). A mandatory policy that
reads an unknown therefore lets the pull request through and fails half-way through `pulumi up`. So the
policies read each field with `read`, which returns UNKNOWN instead of raising, read only the fields their
verdict needs, and say so in their message when one of those is unknown (`undecided`; for a cluster
`Cluster.undecided`, policies/clusters.py).

In the first preview of a new stack the values that come from other resources' outputs are unknown: a
Compute's `workspaceName` and `resourceGroupName`, every id-derived value such as a lock's `scope`. The
fields that decide a cluster (size, scale settings, priority, credentials, SSH port) are literals in the
program and known.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import date
from typing import Any

from pulumi_policy.proxy import UnknownValueError

from vmsizes.regions import normalize_region

COMPUTE = "azure-native:machinelearningservices:Compute"
WORKSPACE = "azure-native:machinelearningservices:Workspace"
STORAGE_ACCOUNT = "azure-native:storage:StorageAccount"
KEY_VAULT = "azure-native:keyvault:Vault"
RESOURCE_GROUP = "azure-native:resources:ResourceGroup"
LOCK_AT_RESOURCE = "azure-native:authorization:ManagementLockAtResourceLevel"
LOCK_BY_SCOPE = "azure-native:authorization:ManagementLockByScope"
LOCK_AT_RESOURCE_GROUP = "azure-native:authorization:ManagementLockAtResourceGroupLevel"
LOCK_AT_SUBSCRIPTION = "azure-native:authorization:ManagementLockAtSubscriptionLevel"
LOCK_TYPES = (LOCK_AT_RESOURCE, LOCK_BY_SCOPE, LOCK_AT_RESOURCE_GROUP, LOCK_AT_SUBSCRIPTION)

# Environment variable read when the policy config gives no `evaluation_date` (works under the real CLI, whose
# policy pack process inherits the environment of `pulumi preview`).
DATE_ENV = "AZML_GPU_POLICY_DATE"
# The `evaluation_date` config property of the policies that compare dates (`evaluation_date` below).
EVALUATION_DATE_SCHEMA = {
    "type": "string",
    "pattern": r"^\d{4}-\d{2}-\d{2}$",
    "description": "Day to evaluate retirement on (YYYY-MM-DD); default $AZML_GPU_POLICY_DATE, else today.",
}


class _Unknown:
    """A value the engine does not know during this preview."""

    _instance: _Unknown | None = None

    def __new__(cls) -> _Unknown:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNKNOWN"

    def __bool__(self) -> bool:
        raise TypeError("an UNKNOWN value has no truth value; test `value is UNKNOWN` first")


UNKNOWN: Any = _Unknown()


def read(props: Mapping[str, Any] | None, *path: str, default: Any = None) -> Any:
    """props[path[0]][path[1]]...; `default` when a key is missing or null; UNKNOWN for a value the engine
    does not know yet (pulumi-policy's proxy raises UnknownValueError on reading one, which the servicer
    would turn into an advisory "can't run policy during preview")."""
    cur: Any = props
    try:
        for key in path:
            if not isinstance(cur, Mapping) or key not in cur:
                return default
            cur = cur[key]
    except UnknownValueError:
        return UNKNOWN
    return default if cur is None else cur


def as_int(value: Any) -> int | None:
    """Struct numbers arrive as floats (protobuf Struct has one number type)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)) and float(value).is_integer():
        return int(value)
    return None


def norm_region(region: Any) -> str | None:
    """ARM accepts "East US" and "eastus" alike; compare the short lower-case form
    (vmsizes.regions.normalize_region, the one rule). None for anything that is not a string."""
    return normalize_region(region) if isinstance(region, str) else None


def undecided(**values: Any) -> str | None:
    """The message when any of these values (by the path shown for it) is unknown in this preview, else None:
    `undecided(minimumTlsVersion=tls, allowBlobPublicAccess=public)`."""
    unknown = [path for path, value in values.items() if value is UNKNOWN]
    return undecided_message(unknown) if unknown else None


def undecided_message(paths: list[str]) -> str:
    """What a policy reports when the values its verdict needs are unknown in this preview."""
    verb = "is" if len(paths) == 1 else "are"
    return (
        f"cannot decide during preview: {', '.join(paths)} {verb} not known until deployment (computed "
        f"from another resource's output), so this check would first run during `pulumi up`, after "
        f"resources were already created. Fix: give {'it' if len(paths) == 1 else 'them'} a literal "
        f"value in the program (the stack config)."
    )


def depends_on(resource: Any, key: str) -> list[Any]:
    """The PolicyResources a property's value comes from (AnalyzeStack's propertyDependencies: the engine
    sends them for every resource, pulumi/pulumi step_generator.go AnalyzeResources)."""
    return list((getattr(resource, "property_dependencies", None) or {}).get(key, []))


def evaluation_date(config: Mapping[str, Any]) -> date:
    """The day retirement is evaluated on: config `evaluation_date`, else $AZML_GPU_POLICY_DATE, else
    today."""
    raw = config.get("evaluation_date") or os.environ.get(DATE_ENV)
    if not raw:
        return date.today()
    try:
        return date.fromisoformat(str(raw))
    except ValueError as e:
        source = "evaluation_date" if config.get("evaluation_date") else DATE_ENV
        raise ValueError(f"{source}: {raw!r} is not a date; use YYYY-MM-DD") from e

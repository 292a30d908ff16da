"""The gate's resource check: every custom azure-native resource's checked inputs against the Azure REST spec
of the API version they carry (`preflight.provider.schema.check_resource`), as the provider's Check does
before any
create (pulumi/pulumi-azure-native `provider.go` `Check` -> `validateType`; the engine fails the preview on a
Check failure).

A failure is an invalid-config error of the evaluation (exit 2): resource, property, constraint, where the
constraint is written, and the stack config key that produced the value (`config_key`). Resource types or
API versions with no vendored spec, and paths the vendored extract does not reach, are reported as **not
checked** in `coverage` (the report's "Resource inputs checked against the Azure REST specs" table and the
JSON's `resource_check`), never passed silently.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from preflight.provider import schema

CONFIG = "azml-gpu"

# Which stack config key sets which input (components/workspace.py, gpu_cluster.py, locks.py; names derived
# by components/naming.py): resource type -> input path -> key under `azml-gpu:`; `{i}` is the cluster index.
_WS = "workspace.name"
_CLUSTER = "clusters[{i}]."
_AML = "properties.properties."
_CONFIG_KEYS: dict[str, dict[str, str]] = {
    "azure-native:storage:StorageAccount": {"accountName": _WS},
    "azure-native:keyvault:Vault": {
        "vaultName": _WS,
        "properties.softDeleteRetentionInDays": "workspace.key_vault_soft_delete_days",
    },
    "azure-native:containerregistry:Registry": {"registryName": _WS},
    "azure-native:operationalinsights:Workspace": {"workspaceName": _WS},
    "azure-native:applicationinsights:Component": {"resourceName": _WS},
    "azure-native:machinelearningservices:Workspace": {
        "workspaceName": _WS,
        "friendlyName": "workspace.friendly_name",
        "description": "workspace.description",
    },
    "azure-native:machinelearningservices:Compute": {
        "workspaceName": _WS,
        "computeName": _CLUSTER + "name",
        "properties.computeLocation": _CLUSTER + "region",
        _AML + "vmSize": _CLUSTER + "size",
        _AML + "vmPriority": _CLUSTER + "tier",
        _AML + "scaleSettings.minNodeCount": _CLUSTER + "min_instances",
        _AML + "scaleSettings.maxNodeCount": _CLUSTER + "max_instances",
        _AML + "scaleSettings.nodeIdleTimeBeforeScaleDown": _CLUSTER + "idle_time_before_scale_down",
        _AML + "userAccountCredentials.adminUserName": _CLUSTER + "ssh.admin_user",
        _AML + "subnet.id": _CLUSTER + "subnet_id",
    },
}
# Inputs every resource takes from the same key.
_COMMON_KEYS = {
    "resourceGroupName": "workspace.resource_group.name",
    "location": "workspace.region",
    "tags": "workspace.tags",
}


@dataclass(frozen=True)
class Problem:
    """One spec failure of one resource, with the config key that produced the value."""

    urn: str
    name: str
    type: str
    api_version: str
    failure: schema.Failure
    config_key: str | None

    @property
    def message(self) -> str:
        where = (
            f"set by config key {self.config_key}"
            if self.config_key
            else "not set by a config key (the program sets it)"
        )
        api = f", API {self.api_version}" if self.api_version else ""
        constraint = (
            f" [constraint {self.failure.constraint} from {self.failure.source}]"
            if self.failure.constraint
            else ""
        )
        what = f"{self.name} ({self.type}{api}): {self.failure.reason}{constraint}"
        return f"{what}; {where}: use a value Azure accepts"

    def as_json(self) -> dict[str, Any]:
        return {
            "urn": self.urn,
            "type": self.type,
            "api_version": self.api_version,
            "property": self.failure.path,
            "constraint": self.failure.constraint,
            "reason": self.failure.reason,
            "source": self.failure.source,
            "config_key": self.config_key,
        }


@dataclass
class Outcome:
    """Every failure, and per (type, API version) what was checked and what was not."""

    problems: list[Problem] = field(default_factory=list)
    coverage: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)

    def coverage_rows(self) -> list[dict[str, Any]]:
        return [self.coverage[k] for k in sorted(self.coverage)]


def _cluster_index(name: str, config: Mapping[str, Any]) -> int | None:
    clusters = config.get(f"{CONFIG}:clusters", [])
    if isinstance(clusters, str):  # the flat form the CLI hands a program: JSON text
        try:
            clusters = json.loads(clusters)
        except ValueError:
            return None
    for i, cluster in enumerate(clusters if isinstance(clusters, list) else []):
        if isinstance(cluster, Mapping) and cluster.get("name") == name:
            return i
    return None


def config_key(typ: str, path: str, inputs: Mapping[str, Any], config: Mapping[str, Any]) -> str | None:
    """The stack config key whose value produced input `path` of a resource, when one does."""
    key = _CONFIG_KEYS.get(typ, {}).get(path) or _COMMON_KEYS.get(path.split(".", 1)[0])
    if key is None:
        return None
    if "{i}" in key:
        index = _cluster_index(str(inputs.get("computeName", "")), config)
        key = key.format(i=index) if index is not None else key.replace("[{i}]", "[?]")
    return f"{CONFIG}:{key}"


def check(resources: Iterable[Any], config: Mapping[str, Any]) -> Outcome:
    """Check the custom azure-native resources of one evaluation (the engine's steps: type, name, urn, custom,
    inputs, the checked inputs Analyze received) for the report's coverage table; `config`: the stack file's
    `config:` block."""
    outcome = Outcome()
    for r in resources:
        if not (r.custom and r.type.startswith("azure-native:")):
            continue
        api = str(r.inputs.get("azureApiVersion", ""))
        result = schema.check_resource(r.type, r.inputs)
        row = outcome.coverage.setdefault(
            (r.type, api),
            {
                "type": r.type,
                "api_version": api,
                "spec": result.spec,
                "checked": result.checked,
                "why_not": result.why or None,
                "spec_note": result.note or None,
                "resources": 0,
                "not_checked": [],
            },
        )
        row["resources"] += 1
        row["not_checked"] = sorted(set(row["not_checked"]) | set(result.unchecked))
        for failure in result.failures:
            key = config_key(r.type, failure.path, r.inputs, config)
            outcome.problems.append(Problem(r.urn, r.name, r.type, api, failure, key))
    return outcome


# The engine's error for a Check failure (pulumi/pulumi pkg/resource/deploy/step_generator.go
# `issueCheckErrors` -> sdk/go/common/diag/errors.go): "<type> resource '<name>': property <path> value
# <value> has a problem: <reason>"; the offline provider puts the constraint and where it is written at the
# end of its reason (preflight/provider/server.py `Check`).
_CHECK_ERROR = re.compile(
    r"^(?P<type>\S+) resource '(?P<name>[^']*)': property (?P<path>\S+) value (?P<value>.*?) has a problem: "
    r"(?P<reason>.*?)(?: \[constraint (?P<constraint>.*) from (?P<source>.*)\])?$",
    re.S,
)


def from_diagnostic(urn: str, message: str, config: Mapping[str, Any]) -> Problem | None:
    """The Check failure an engine error reports, with the config key that set the value; None for another
    error."""
    found = _CHECK_ERROR.match(message.strip())
    if found is None:
        return None
    typ, name, path = found["type"], found["name"], found["path"]
    inputs = {"computeName": name} if typ.endswith(":Compute") else {}
    failure = schema.Failure(path, found["constraint"] or "", found["reason"].strip(), found["source"] or "")
    return Problem(urn, name, typ, "", failure, config_key(typ, path, inputs, config))

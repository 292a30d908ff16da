"""The gate's resource check (preflight/resource_check.py): the report's coverage of every resource the
update evaluation checked, the stack config key behind a rejected value, and the engine's Check-failure
diagnostics read back into resource, property, constraint, where it is written and config key.

The resources are the engine's checked inputs of the prod stack, recorded from the gate's real run
(tests/fixtures/provider/, through `preflight.events.Step`, the type the gate passes). The engine's message
for a Check failure is pulumi/pulumi 3.274.1 sdk/go/common/diag/errors.go
`GetResourcePropertyInvalidValueError` ("%v resource '%v': property %v value %v has a problem: %v"), issued by
pkg/resource/deploy/step_generator.go
`issueCheckFailures` with the input rendered by `PropertyValue.String` ("{%v}") of `inputs[failure.Property]`:
a nested path names no top-level input, so its value reads `{<nil>}`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import struct_pb2
from pulumi.runtime.proto import provider_pb2

from components import naming
from preflight import resource_check
from preflight.events import Step
from preflight.provider import schema
from preflight.provider.server import AzureNativeStandIn
from stackconfig.loader import namespace_config
from stackconfig.validation import validate
from tests.preflight.provider import recorded

ROOT = Path(__file__).resolve().parents[2]
COMPUTE = "azure-native:machinelearningservices:Compute"
STORAGE = "azure-native:storage:StorageAccount"
ROLE = "azure-native:authorization:RoleAssignment"
GROUP = "azure-native:resources:ResourceGroup"
LOCK = "azure-native:authorization:ManagementLockByScope"


def _step(resource: dict[str, Any]) -> Step:
    return Step(
        "same",
        resource["urn"],
        resource["type"],
        resource["custom"],
        "",
        None,
        {"inputs": resource["inputs"]},
    )


def _steps(resources: list[dict[str, Any]]) -> list[Step]:
    return [_step(r) for r in resources]


def _urn(typ: str) -> str:
    return next(r["urn"] for r in recorded.prod_resources() if r["custom"] and r["type"] == typ)


# --- the coverage table -------------------------------------------------------------------------------------


def test_prod_passes_and_every_azure_native_type_is_checked_with_its_body() -> None:
    resources = recorded.prod_resources()
    outcome = resource_check.check(_steps(resources), recorded.prod_config())
    assert outcome.problems == []
    rows = {row["type"]: row for row in outcome.coverage_rows()}
    declared = {r["type"] for r in resources if r["custom"] and r["type"].startswith("azure-native:")}
    # the components and the provider resource are not Azure resources: no row
    assert set(rows) == declared
    # Every type prod declares has its PUT operation, body and common-types vendored: nothing unchecked.
    assert {t: (row["checked"], row["not_checked"]) for t, row in rows.items()} == {
        t: (True, []) for t in declared
    }
    compute = rows[COMPUTE]
    clusters = [r for r in resources if r["custom"] and r["type"] == COMPUTE]
    assert compute["api_version"] == "2025-12-01" and compute["resources"] == len(clusters) == 2
    # The network types' spec was read at a neighbouring API version: the row says so.
    endpoint = rows["azure-native:network:PrivateEndpoint"]
    assert endpoint["api_version"] == "2024-05-01" and "2024-07-01" in endpoint["spec_note"]
    assert rows[STORAGE]["spec_note"] is None
    assert [row["type"] for row in outcome.coverage_rows()] == sorted(rows)  # the table's order


def test_a_type_or_version_without_a_spec_is_a_row_that_says_not_checked() -> None:
    cluster = next(r for r in recorded.prod_resources() if r["type"] == COMPUTE)
    future = {**cluster, "inputs": {**cluster["inputs"], "azureApiVersion": "2099-01-01"}}
    deployment = {
        **cluster,
        "type": "azure-native:resources:Deployment",
        "inputs": {"azureApiVersion": "2024-03-01"},
    }
    outcome = resource_check.check(_steps([cluster, future, deployment]), {})
    rows = {(row["type"], row["api_version"]): row for row in outcome.coverage_rows()}
    assert rows[(COMPUTE, "2025-12-01")]["checked"] is True
    assert rows[(COMPUTE, "2099-01-01")]["checked"] is False
    assert "API version 2099-01-01" in rows[(COMPUTE, "2099-01-01")]["why_not"]
    assert "no spec vendored" in rows[("azure-native:resources:Deployment", "2024-03-01")]["why_not"]
    assert outcome.problems == []


def test_a_rejected_value_is_a_problem_naming_the_resource_constraint_and_config_key() -> None:
    """What the report prints for an invalid value the stack config set (prod's storage account name,
    derived from `azml-gpu:workspace.name`): resource, type and API, the provider's reason, the constraint and
    where it is written, the config key, and what to do."""
    resources = recorded.prod_resources()
    storage = next(r for r in resources if r["type"] == STORAGE)
    storage["inputs"]["accountName"] = "st" + "a" * 23
    outcome = resource_check.check(_steps(resources), recorded.prod_config())
    (problem,) = outcome.problems
    source = "storage/resource-manager/Microsoft.Storage/stable/2024-01-01/storage.json#/parameters/"
    assert problem.message.startswith(
        "ws-llm-st (azure-native:storage:StorageAccount, API 2024-01-01): 'accountName' is too long (25): "
        f"at most 24 characters allowed [constraint maxLength 24 from {source}"
    )
    assert problem.message.endswith("; set by config key azml-gpu:workspace.name: use a value Azure accepts")
    assert problem.as_json() == {
        "urn": storage["urn"],
        "type": STORAGE,
        "api_version": "2024-01-01",
        "property": "accountName",
        "constraint": "maxLength 24",
        "reason": "'accountName' is too long (25): at most 24 characters allowed",
        "source": problem.failure.source,
        "config_key": "azml-gpu:workspace.name",
    }
    assert problem.failure.source.startswith(source)


def test_a_value_the_program_sets_says_so() -> None:
    resources = [r for r in recorded.prod_resources() if r["type"] in (ROLE, GROUP)]
    for r in resources:
        r["inputs"].pop("principalId" if r["type"] == ROLE else "location")
    problems = {p.type: p for p in resource_check.check(_steps(resources), recorded.prod_config()).problems}
    assert problems[ROLE].config_key is None
    assert problems[ROLE].message.endswith(
        "; not set by a config key (the program sets it): use a value Azure accepts"
    )
    assert problems[GROUP].config_key == "azml-gpu:workspace.region"


# --- config keys -------------------------------------------------------------------------------------------


def _clusters(*names: str) -> dict[str, Any]:
    return {"azml-gpu:clusters": [{"name": n} for n in names]}


@pytest.mark.parametrize(
    ("typ", "path", "inputs", "config", "key"),
    [
        (
            COMPUTE,
            "properties.properties.vmSize",
            {"computeName": "h100-x4"},
            _clusters("a", "h100-x4"),
            "clusters[1].size",
        ),
        (
            COMPUTE,
            "properties.properties.vmSize",
            {"computeName": "a"},
            _clusters("a", "h100-x4"),
            "clusters[0].size",
        ),
        # the flat form the CLI hands a program: the list as JSON text
        (
            COMPUTE,
            "computeName",
            {"computeName": "h100-x4"},
            {"azml-gpu:clusters": json.dumps([{"name": "a"}, {"name": "h100-x4"}])},
            "clusters[1].name",
        ),
        (
            COMPUTE,
            "properties.properties.vmPriority",
            {"computeName": "zz"},
            _clusters("a"),
            "clusters[?].tier",
        ),
        (
            COMPUTE,
            "properties.properties.vmSize",
            {"computeName": "a"},
            {"azml-gpu:clusters": "[not json"},
            "clusters[?].size",
        ),
        (COMPUTE, "workspaceName", {}, {}, "workspace.name"),
        (STORAGE, "accountName", {}, {}, "workspace.name"),
        (
            "azure-native:keyvault:Vault",
            "properties.softDeleteRetentionInDays",
            {},
            {},
            "workspace.key_vault_soft_delete_days",
        ),
        # every resource takes its group, region and tags from the workspace's keys
        (ROLE, "resourceGroupName", {}, {}, "workspace.resource_group.name"),
        (STORAGE, "location", {}, {}, "workspace.region"),
        (STORAGE, "tags.env", {}, {}, "workspace.tags"),
    ],
)
def test_config_key_names_the_key_that_set_the_value(
    typ: str, path: str, inputs: dict, config: dict, key: str
) -> None:
    assert resource_check.config_key(typ, path, inputs, config) == f"azml-gpu:{key}"


@pytest.mark.parametrize(
    ("typ", "path"),
    [
        (ROLE, "principalId"),
        (STORAGE, "kind"),
        (COMPUTE, "properties.properties.osType"),
        ("example:x:Y", "name"),
    ],
)
def test_config_key_is_none_for_what_the_program_sets(typ: str, path: str) -> None:
    assert resource_check.config_key(typ, path, {"computeName": "a"}, _clusters("a")) is None


def test_config_key_of_a_prod_cluster_names_its_entry() -> None:
    config = recorded.prod_config()
    for cluster in recorded.of_type(COMPUTE):
        index = [c["name"] for c in config["azml-gpu:clusters"]].index(cluster["inputs"]["computeName"])
        key = resource_check.config_key(COMPUTE, "properties.properties.vmSize", cluster["inputs"], config)
        assert key == f"azml-gpu:clusters[{index}].size"


# --- the engine's Check-failure diagnostics ---------------------------------------------------------------


class _Aborted(Exception):
    pass


class _Context:
    def abort(self, code: grpc.StatusCode, details: str) -> None:
        raise _Aborted(code, details)


def _struct(value: dict[str, Any]) -> struct_pb2.Struct:
    out = struct_pb2.Struct()
    out.update(value)
    return out


def _engine_messages(urn: str, typ: str, inputs: dict[str, Any]) -> list[tuple[str, str]]:
    """(urn, message) of each error the engine issues for the offline provider's Check failures of a resource:
    the servicer's CheckFailures, rendered as step_generator.go `issueCheckFailures` renders them."""
    provider = AzureNativeStandIn(existing={})
    response = provider.Check(provider_pb2.CheckRequest(urn=urn, news=_struct(inputs)), _Context())
    out = []
    for failure in response.failures:
        value = inputs.get(failure.property)
        rendered = "{<nil>}" if value is None else f"{{{value}}}"
        name = urn.rsplit("::", 1)[-1]
        message = f"{typ} resource '{name}': property {failure.property} value {rendered} has a problem: "
        out.append((urn, message + failure.reason))
    return out


def test_a_check_failure_of_a_clusters_vm_size_is_read_back_with_its_config_key() -> None:
    config = recorded.prod_config()
    second = config["azml-gpu:clusters"][1]["name"]  # the entry's index, not the first cluster's
    cluster = next(c for c in recorded.of_type(COMPUTE) if c["inputs"]["computeName"] == second)
    inputs = cluster["inputs"]
    inputs["properties"]["properties"]["vmSize"] = 8
    ((urn, message),) = _engine_messages(cluster["urn"], COMPUTE, inputs)
    assert message.startswith(
        f"{COMPUTE} resource '{second}': property properties.properties.vmSize value {{<nil>}} has a "
        "problem: 'properties.properties.vmSize' should be of type 'string' but got a number "
        "[constraint type string from machinelearningservices/"
    )
    problem = resource_check.from_diagnostic(urn, message, config)
    assert problem is not None
    assert problem.config_key == "azml-gpu:clusters[1].size"
    assert (problem.urn, problem.name, problem.type) == (urn, inputs["computeName"], COMPUTE)
    assert problem.failure.path == "properties.properties.vmSize"
    assert problem.failure.constraint == "type string"
    assert (
        problem.failure.reason == "'properties.properties.vmSize' should be of type 'string' but got a number"
    )
    assert problem.failure.source.startswith("machinelearningservices/resource-manager/")
    assert problem.failure.source.endswith("#/definitions/AmlComputeProperties/properties/vmSize")


def test_a_check_failure_of_a_top_level_name_is_read_back() -> None:
    inputs = recorded.inputs(STORAGE) | {"accountName": "st" + "a" * 23}
    ((urn, message),) = _engine_messages(_urn(STORAGE), STORAGE, inputs)
    assert "property accountName value {st" + "a" * 23 + "} has a problem: " in message
    problem = resource_check.from_diagnostic(urn, message, recorded.prod_config())
    assert problem is not None
    assert (problem.failure.path, problem.failure.constraint) == ("accountName", "maxLength 24")
    assert problem.failure.reason == "'accountName' is too long (25): at most 24 characters allowed"
    assert problem.config_key == "azml-gpu:workspace.name"
    # read back, it is reported as the gate's own check reports it
    assert problem.message.endswith("; set by config key azml-gpu:workspace.name: use a value Azure accepts")


# Failures whose constraint or source hold brackets, parentheses, colons and backslashes (the patterns and
# the naming rules' sources): each is read back whole.
ROUND_TRIPS = [
    ("azure-native:keyvault:Vault", {"vaultName": "kv--ws"}),
    (COMPUTE, {"computeName": "t4-dev-a-name-far-too-long"}),
    (COMPUTE, {"computeName": "gpu-cluster-1"}),
    ("azure-native:applicationinsights:Component", {"resourceName": "appi?x"}),
    (GROUP, {"resourceGroupName": "rg/train"}),
]


@pytest.mark.parametrize(
    ("typ", "change"), ROUND_TRIPS, ids=[f"{t.rsplit(':', 1)[-1]}-{c}" for t, c in ROUND_TRIPS]
)
def test_every_failure_the_provider_reports_is_read_back_whole(typ: str, change: dict[str, str]) -> None:
    inputs = recorded.inputs(typ) | change
    expected = schema.check_resource(typ, inputs).failures
    assert expected
    read = [
        resource_check.from_diagnostic(urn, m, recorded.prod_config())
        for urn, m in _engine_messages(_urn(typ), typ, inputs)
    ]
    assert [p.failure if p else None for p in read] == expected


def test_a_reason_without_a_constraint_is_read_as_given() -> None:
    """Another provider's Check failure (no "[constraint ... from ...]"): the reason whole, no constraint."""
    message = (
        f"{STORAGE} resource 'ws-llm-st': property accountName value {{x}} has a problem: "
        "name is taken [by another subscription]"
    )
    problem = resource_check.from_diagnostic("urn", message, {})
    assert problem is not None
    assert problem.failure.reason == "name is taken [by another subscription]"
    assert (problem.failure.constraint, problem.failure.source) == ("", "")
    assert problem.message == (
        "ws-llm-st (azure-native:storage:StorageAccount): name is taken [by another subscription]; set by "
        "config key azml-gpu:workspace.name: use a value Azure accepts"
    )


@pytest.mark.parametrize(
    "message",
    [
        "preview failed",
        "Duplicate resource URN 'urn:pulumi:dev::azml-gpu::azure-native:storage:StorageAccount::st'; try "
        "giving it a unique name",
        # GetResourceInvalidError: a failure without a property is not a value's problem
        f"{STORAGE} resource 'ws-llm-st' has a problem: something",
        "an unhandled error occurred: Program exited with non-zero exit code: 1",
    ],
)
def test_any_other_engine_error_is_not_a_check_failure(message: str) -> None:
    assert resource_check.from_diagnostic("urn", message, {}) is None


# --- configs stackconfig accepts, at the name length and character limits -------------------------------

_RSA = (ROOT / "tests/fixtures/sshkeys/rsa3072.pub").read_text().strip()
SUB = "00000000-0000-0000-0000-000000000000"


def _config(workspace: str, group: str, clusters: list[str], admin: str = "azureuser") -> dict[str, Any]:
    return {
        "azure-native:location": "eastus",
        "azure-native:subscriptionId": SUB,
        "azml-gpu:workspace": {
            "name": workspace,
            "resource_group": {"name": group, "create": True},
            "region": "eastus",
            "container_registry": True,
            "key_vault_purge_protection": True,
        },
        "azml-gpu:clusters": [
            {
                "name": name,
                "size": "Standard_NC24ads_A100_v4",
                "max_instances": 1,
                "idle_time_before_scale_down": 120,
                "tier": "dedicated",
                "ssh": {"admin_user": admin, "public_key": _RSA} if i == 0 else "disabled",
            }
            for i, name in enumerate(clusters)
        ],
        "azml-gpu:locks": {
            "storage": True,
            "key_vault": False,  # the workspace identity's Key Vault Administrator: never locked
            "container_registry": True,
            "application_insights": True,
            "workspace": True,
        },
    }


# Exhaustive over the limits stackconfig/names.py enforces: shortest and longest names, every allowed
# character class in first, middle and last position (digits first, hyphen runs, underscores, parentheses,
# periods), and cluster names with a letter after the last '-'.
LIMIT_CONFIGS = [
    _config("abc", "r", ["abc"], admin="a_"),
    _config("a" * 33, "r" * 90, ["a" * 24, "b" * 23 + "c"]),
    _config("0ws", "0-rg", ["a-b", "a1-2b"]),
    _config("9" * 33, "(rg)", ["z" + "9" * 23]),
    _config("w--s", "rg.a_b-(c)", ["a--b", "x-1-y"]),
    _config("WS-UPPER-Case-33-characters-long1"[:33], "RG_Upper.Case", ["Ab-C"]),
    _config("ws-", "_", ["abc-d"]),
    _config("w-s-", "a.b", ["q" * 3]),
    _config("x" * 3, "r" * 89 + "s", ["a" + "-" * 22 + "b"]),
    _config("1-2", "1", ["a" + "1" * 22 + "z"]),
]


def _derived(config: dict[str, Any]) -> list[dict[str, Any]]:
    """Prod's checked inputs with every name a config decides replaced by the one the program derives from
    it: the typed config (stackconfig), `naming.workspace_names` (components/workspace.py) and
    `naming.lock_name` of each locked resource's Azure name (components/locks.py). When written, the real
    gate's run of each config in LIMIT_CONFIGS (`python -m preflight --config-file`) gave the same names."""
    raw, problems = namespace_config(config)
    assert problems == []
    typed = validate(raw)  # ConfigError: the table must hold configs stackconfig accepts
    ws, group = typed.workspace.name, typed.workspace.resource_group.name
    names = naming.workspace_names(ws, SUB, group)
    by_type = {
        GROUP: {"resourceGroupName": group},
        STORAGE: {"accountName": names.storage_account},
        "azure-native:keyvault:Vault": {"vaultName": names.key_vault},
        "azure-native:containerregistry:Registry": {"registryName": names.container_registry},
        "azure-native:operationalinsights:Workspace": {"workspaceName": names.log_analytics},
        "azure-native:applicationinsights:Component": {"resourceName": names.app_insights},
        "azure-native:machinelearningservices:Workspace": {"workspaceName": ws},
    }
    out = []
    for typ, changes in by_type.items():
        inputs = recorded.inputs(typ) | changes
        if typ != GROUP:
            inputs["resourceGroupName"] = group
        out.append({"type": typ, "inputs": inputs})
    for i, cluster in enumerate(typed.clusters):
        inputs = recorded.inputs(COMPUTE) | {
            "computeName": cluster.name,
            "workspaceName": ws,
            "resourceGroupName": group,
        }
        if i == 0:
            inputs["properties"]["properties"]["userAccountCredentials"] = {
                "adminUserName": cluster.ssh.admin_user,
                "adminUserSshPublicKey": _RSA,
            }
        out.append({"type": COMPUTE, "inputs": inputs})
    locked = [names.storage_account, names.container_registry, names.app_insights, ws]
    for target in locked:
        out.append({"type": LOCK, "inputs": recorded.inputs(LOCK) | {"lockName": naming.lock_name(target)}})
    return [
        {**r, "urn": f"urn:pulumi:limits::azml-gpu::{r['type']}::{i}", "custom": True}
        for i, r in enumerate(out)
    ]


@pytest.mark.parametrize("config", LIMIT_CONFIGS, ids=lambda c: c["azml-gpu:workspace"]["name"])
def test_configs_at_the_limits_pass_the_resource_check(config: dict[str, Any]) -> None:
    resources = _derived(config)
    outcome = resource_check.check(_steps(resources), config)
    assert [p.message for p in outcome.problems] == []
    assert all(row["checked"] for row in outcome.coverage_rows())
    (storage,) = [r["inputs"] for r in resources if r["type"] == STORAGE]
    assert len(storage["accountName"]) <= 24


def test_the_derived_names_are_checked_at_all() -> None:
    """The limit table proves something only if a derived name the spec refuses fails it: a workspace name of
    34 characters (one over stackconfig's limit) gives an ML workspace name the spec rejects."""
    config = _config("a" * 33, "r", ["abc"])
    resources = _derived(config)
    for r in resources:
        if r["type"] == "azure-native:machinelearningservices:Workspace":
            r["inputs"]["workspaceName"] += "a"
    problems = resource_check.check(_steps(resources), config).problems
    assert [(p.failure.path, p.config_key) for p in problems] == [
        ("workspaceName", "azml-gpu:workspace.name")
    ]
    assert schema.check_resource(
        STORAGE, next(r["inputs"] for r in resources if r["type"] == STORAGE)
    ).checked

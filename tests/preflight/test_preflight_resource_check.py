"""The gate's Azure REST spec check (preflight.schema, preflight.resource_check): each vendored constraint
rejects what it should with azure-native Check's message, every resource of the program is covered or listed
as not checked, a stricter spec fails the gate with exit 2 naming the config key, and every config
stackconfig accepts at the name length and character limits passes the check (config validation is at least
as strict as Azure for every derived name)."""

from __future__ import annotations

import copy
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from preflight import resource_check
from preflight.engine import UPDATE, Deployment
from preflight.gate import EXIT_INVALID, evaluate
from preflight.program import REPO_ROOT, flatten_config, read_stack_config, run_program
from preflight.provider import schema

COMPUTE = "azure-native:machinelearningservices:Compute"
ROLE = "azure-native:authorization:RoleAssignment"
ENDPOINT = "azure-native:network:PrivateEndpoint"
DNS_GROUP = "azure-native:network:PrivateDnsZoneGroup"
DIAGNOSTICS = "azure-native:monitor:DiagnosticSetting"


@pytest.fixture(scope="module")
def prod() -> dict[str, Any]:
    """The prod stack's resources as the update evaluation checks them (every value known)."""
    config = read_stack_config("prod")
    program = run_program("prod", config=config, deployment=Deployment(UPDATE))
    assert program.ok, program.problems or program.error
    # Prod has no locks (a managed network asks for none); the capacity stack's locks stand in for them.
    capacity = run_program("capacity", deployment=Deployment(UPDATE))
    assert capacity.ok, capacity.problems or capacity.error
    locks = [r for r in capacity.resources if r.type == "azure-native:authorization:ManagementLockByScope"]
    return {"resources": program.resources, "flat": flatten_config(config), "locks": locks}


def _inputs(prod: dict[str, Any], typ: str) -> dict[str, Any]:
    found = next(r for r in [*prod["resources"], *prod["locks"]] if r.type == typ and r.custom)
    return copy.deepcopy(dict(found.inputs))


def test_prod_passes_and_every_azure_native_type_is_checked_with_its_body(prod: dict[str, Any]) -> None:
    outcome = resource_check.check(prod["resources"], prod["flat"])
    assert outcome.problems == []
    rows = {row["type"]: row for row in outcome.coverage_rows()}
    declared = {r.type for r in prod["resources"] if r.custom and r.type.startswith("azure-native:")}
    assert set(rows) == declared
    # Every type prod declares has its PUT operation, body and common-types vendored: nothing unchecked.
    assert {t: (row["checked"], row["not_checked"]) for t, row in rows.items()} == {
        t: (True, []) for t in declared
    }
    compute = rows[COMPUTE]
    clusters = [r for r in prod["resources"] if r.custom and r.type == COMPUTE]
    assert compute["api_version"] == "2025-12-01" and compute["resources"] == len(clusters) >= 2
    # The network types' spec was read at a neighbouring API version: the row says so.
    endpoint = rows["azure-native:network:PrivateEndpoint"]
    assert endpoint["api_version"] == "2024-05-01" and "2024-07-01" in endpoint["spec_note"]
    assert rows["azure-native:storage:StorageAccount"]["spec_note"] is None


def test_a_type_without_a_vendored_spec_is_listed_as_not_checked(prod: dict[str, Any]) -> None:
    inputs = _inputs(prod, "azure-native:resources:ResourceGroup")
    result = schema.check_resource("azure-native:resources:Deployment", inputs)
    assert not result.checked and result.failures == []
    assert "no spec vendored for azure-native:resources:Deployment" in result.why


# (resource type, change to the prod inputs, failing path, constraint, provider-style reason fragment)
CASES: list[tuple[str, Callable[[dict[str, Any]], None], str, str, str]] = [
    (
        "azure-native:storage:StorageAccount",
        lambda i: i.update(accountName="st" + "a" * 23),
        "accountName",
        "maxLength 24",
        "'accountName' is too long (25): at most 24 characters allowed",
    ),
    (
        "azure-native:storage:StorageAccount",
        lambda i: i.update(accountName="stWsLlm"),
        "accountName",
        "pattern ^[a-z0-9]+$",
        "'accountName' does not match expression '^[a-z0-9]+$'",
    ),
    (
        "azure-native:keyvault:Vault",
        lambda i: i.update(vaultName="kv_ws"),
        "vaultName",
        "pattern ^[a-zA-Z0-9-]{3,24}$",
        "does not match expression",
    ),
    (
        "azure-native:keyvault:Vault",
        lambda i: i.update(vaultName="kv--ws"),
        "vaultName",
        "pattern ^[a-zA-Z](?!.*--)[a-zA-Z0-9-]*[a-zA-Z0-9]$",
        "does not match expression",
    ),
    (
        "azure-native:containerregistry:Registry",
        lambda i: i.update(registryName="cr1"),
        "registryName",
        "minLength 5",
        "'registryName' is too short (3): at least 5 characters required",
    ),
    (
        "azure-native:operationalinsights:Workspace",
        lambda i: i.update(workspaceName="log-ws-"),
        "workspaceName",
        "pattern ^[A-Za-z0-9][A-Za-z0-9-]+[A-Za-z0-9]$",
        "does not match expression",
    ),
    (
        "azure-native:operationalinsights:Workspace",
        lambda i: i.update(sku={}),
        "sku.name",
        "required",
        "missing required property 'sku.name'",
    ),
    (
        "azure-native:operationalinsights:Workspace",
        lambda i: i.update(retentionInDays=30.5),
        "retentionInDays",
        "integer",
        "'retentionInDays' must be an integer",
    ),
    (
        "azure-native:applicationinsights:Component",
        lambda i: i.pop("kind"),
        "kind",
        "required",
        "missing required property 'kind'",
    ),
    (
        "azure-native:applicationinsights:Component",
        lambda i: i.update(resourceName="appi?x"),
        "resourceName",
        "pattern",
        "does not match expression",
    ),
    (
        "azure-native:authorization:ManagementLockByScope",
        lambda i: i.pop("level"),
        "level",
        "required",
        "missing required property 'level'",
    ),
    (
        "azure-native:authorization:ManagementLockByScope",
        lambda i: i.update(lockName="lock/st"),
        "lockName",
        "pattern",
        "does not match expression",
    ),
    (
        "azure-native:machinelearningservices:Workspace",
        lambda i: i.update(workspaceName="-ws"),
        "workspaceName",
        "pattern ^[a-zA-Z0-9][a-zA-Z0-9_-]{2,32}$",
        "does not match expression",
    ),
    (
        COMPUTE,
        lambda i: i.update(computeName="cpu-cluster-1"),
        "computeName",
        "pattern",
        "does not match expression",
    ),
    (
        COMPUTE,
        lambda i: i["properties"]["properties"]["scaleSettings"].pop("maxNodeCount"),
        "properties.properties.scaleSettings.maxNodeCount",
        "required",
        "missing required property",
    ),
    (
        COMPUTE,
        lambda i: i["properties"]["properties"]["scaleSettings"].update(maxNodeCount=2.5),
        "properties.properties.scaleSettings.maxNodeCount",
        "integer",
        "must be an integer but got 2.500000",
    ),
    (
        COMPUTE,
        lambda i: i["properties"]["properties"].update(vmSize=8),
        "properties.properties.vmSize",
        "type string",
        "'properties.properties.vmSize' should be of type 'string' but got a number",
    ),
    (
        COMPUTE,
        lambda i: i["properties"]["properties"].update(userAccountCredentials={"adminUserSshPublicKey": "k"}),
        "properties.properties.userAccountCredentials.adminUserName",
        "required",
        "missing required property",
    ),
    (
        COMPUTE,
        lambda i: i["properties"].update(computeType="AmlComputeV2"),
        "properties.computeType",
        "one of",
        "not one of the values the spec defines",
    ),
    (
        COMPUTE,
        lambda i: i["identity"].pop("type"),
        "identity.type",
        "required",
        "missing required property 'identity.type'",
    ),
    # Role assignments, diagnostic settings, private endpoints, DNS zone groups, resource groups and the
    # request bodies of storage, key vault, registry and workspace (vendored for issue 16's second pass).
    (
        ROLE,
        lambda i: i.pop("principalId"),
        "principalId",
        "required",
        "missing required property 'principalId'",
    ),
    (
        ROLE,
        lambda i: i.update(principalType=["Group"]),
        "principalType",
        "type string",
        "'principalType' should be of type 'string' but got an array",
    ),
    (
        ENDPOINT,
        lambda i: i["privateLinkServiceConnections"][0].update(groupIds="file"),
        "privateLinkServiceConnections[0].groupIds",
        "type array",
        "'privateLinkServiceConnections[0].groupIds' should be of type 'array' but got a string",
    ),
    (
        DNS_GROUP,
        lambda i: i["privateDnsZoneConfigs"][0].update(privateDnsZoneId=7),
        "privateDnsZoneConfigs[0].privateDnsZoneId",
        "type string",
        "should be of type 'string' but got a number",
    ),
    (
        DIAGNOSTICS,
        lambda i: i["logs"][0].pop("enabled"),
        "logs[0].enabled",
        "required",
        "missing required property 'logs[0].enabled'",
    ),
    (
        DIAGNOSTICS,
        lambda i: i["logs"][0].update(retentionPolicy={"enabled": True, "days": -1}),
        "logs[0].retentionPolicy.days",
        "minimum 0",
        "'logs[0].retentionPolicy.days' is too low",
    ),
    (
        "azure-native:resources:ResourceGroup",
        lambda i: i.pop("location"),
        "location",
        "required",
        "missing required property 'location'",
    ),
    (
        "azure-native:resources:ResourceGroup",
        lambda i: i.update(resourceGroupName="rg/train"),
        "resourceGroupName",
        "pattern ^[-\\w\\._\\(\\)]+$",
        "does not match expression",
    ),
    (
        "azure-native:storage:StorageAccount",
        lambda i: i.pop("kind"),
        "kind",
        "required",
        "missing required property 'kind'",
    ),
    (
        "azure-native:storage:StorageAccount",
        lambda i: i.update(accessTier="Archive"),
        "accessTier",
        "one of Hot, Cool, Premium, Cold",
        "'accessTier' is 'Archive', not one of Hot, Cool, Premium, Cold",
    ),
    (
        "azure-native:keyvault:Vault",
        lambda i: i["properties"]["sku"].update(name="gold"),
        "properties.sku.name",
        "one of standard, premium",
        "'properties.sku.name' is 'gold', not one of standard, premium",
    ),
    (
        "azure-native:keyvault:Vault",
        lambda i: i["properties"].pop("tenantId"),
        "properties.tenantId",
        "required",
        "missing required property 'properties.tenantId'",
    ),
    (
        "azure-native:containerregistry:Registry",
        lambda i: i.pop("sku"),
        "sku",
        "required",
        "missing required property 'sku'",
    ),
    (
        "azure-native:containerregistry:Registry",
        lambda i: i.update(networkRuleSet={"ipRules": []}),
        "networkRuleSet.defaultAction",
        "required",
        "missing required property 'networkRuleSet.defaultAction'",
    ),
    (
        "azure-native:machinelearningservices:Workspace",
        lambda i: i["sku"].update(tier="Gold"),
        "sku.tier",
        "one of Free, Basic, Standard, Premium",
        "'sku.tier' is 'Gold', not one of Free, Basic, Standard, Premium",
    ),
    (
        "azure-native:machinelearningservices:Workspace",
        lambda i: i["managedNetwork"].update(outboundRules={"pypi": {"category": "UserDefined"}}),
        "managedNetwork.outboundRules.pypi.type",
        "required",
        "missing required property 'managedNetwork.outboundRules.pypi.type'",
    ),
    (
        "azure-native:operationalinsights:Workspace",
        lambda i: i.pop("location"),
        "location",
        "required",
        "missing required property 'location'",
    ),
    (
        "azure-native:applicationinsights:Component",
        lambda i: i.update(resourceGroupName="r" * 91),
        "resourceGroupName",
        "maxLength 90",
        "'resourceGroupName' is too long (91): at most 90 characters allowed",
    ),
]


@pytest.mark.parametrize(("typ", "change", "path", "constraint", "reason"), CASES)
def test_each_vendored_constraint_rejects(
    prod: dict[str, Any],
    typ: str,
    change: Callable[[dict[str, Any]], None],
    path: str,
    constraint: str,
    reason: str,
) -> None:
    inputs = _inputs(prod, typ)
    assert schema.check_resource(typ, inputs).failures == []  # SHOULD PASS: prod as declared
    change(inputs)
    failures = schema.check_resource(typ, inputs).failures
    assert {f.path for f in failures} == {path}
    matching = [f for f in failures if f.constraint.startswith(constraint)]
    assert matching, failures
    assert reason in matching[0].reason
    assert matching[0].source  # where the constraint is written


def test_unknown_values_are_skipped_like_the_provider(prod: dict[str, Any]) -> None:
    """First preview: a Compute's workspaceName is the engine's unknown sentinel; Check skips it."""
    inputs = _inputs(prod, COMPUTE)
    inputs["workspaceName"] = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"
    assert schema.check_resource(COMPUTE, inputs).failures == []


def test_an_api_version_without_a_vendored_spec_is_not_checked(prod: dict[str, Any]) -> None:
    inputs = _inputs(prod, COMPUTE) | {"azureApiVersion": "2099-01-01", "computeName": "x"}
    result = schema.check_resource(COMPUTE, inputs)
    assert not result.checked and result.failures == []
    assert "API version 2099-01-01" in result.why and "vendored: 2025-12-01" in result.why


def test_config_key_names_the_cluster(prod: dict[str, Any]) -> None:
    inputs = _inputs(prod, COMPUTE)
    index = [c["name"] for c in json.loads(prod["flat"]["azml-gpu:clusters"])].index(inputs["computeName"])
    key = resource_check.config_key(COMPUTE, "properties.properties.vmSize", inputs, prod["flat"])
    assert key == f"azml-gpu:clusters[{index}].size"
    assert resource_check.config_key("azure-native:storage:StorageAccount", "accountName", {}, {}) == (
        "azml-gpu:workspace.name"
    )


def test_a_stricter_spec_fails_the_gate_with_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pack: Any
) -> None:
    """The gate wiring, end to end: with a vendored storage spec that allows 10 characters, dev's derived
    storage account name fails like the provider's Check (exit 2; Analyze runs on that resource only, as the
    engine runs it before stopping) and names the resource, property, constraint and config key."""
    specs = tmp_path / "azure_specs"
    shutil.copytree(schema.SPECS, specs)
    storage = specs / "storage/resource-manager/Microsoft.Storage/stable/2024-01-01/storage.json"
    document = json.loads(storage.read_text())
    document["parameters"]["StorageAccountName"]["maxLength"] = 10
    storage.write_text(json.dumps(document))
    monkeypatch.setattr(schema, "SPECS", specs)
    schema._load.cache_clear()
    schema.index.cache_clear()
    try:
        result = evaluate("dev", pack=pack)
    finally:
        schema._load.cache_clear()
        schema.index.cache_clear()
    assert result.exit_code == EXIT_INVALID
    assert len(result.errors) == 1, result.errors
    error = result.errors[0]
    assert error.startswith("first-deploy preview: the Azure REST spec rejects ")
    assert "azure-native:storage:StorageAccount" in error and "'accountName' is too long" in error
    assert "maxLength 10" in error and "set by config key azml-gpu:workspace.name" in error
    assert result.resource_problems[0]["config_key"] == "azml-gpu:workspace.name"
    # as the engine does, Analyze still ran on the resource whose Check failed (and nothing after it)
    assert [(e.kind, [r.name for r in e.resources]) for e in result.evaluations] == [
        ("first-deploy", ["ws-llm-dev-st"])
    ]


# One real constraint per type vendored in the second pass, broken in the resources the program declares:
# (type, change, property, constraint, where the constraint is written).
GATE_BREAKS: list[tuple[str, Callable[[dict[str, Any]], None], str, str, str]] = [
    (
        ROLE,
        lambda i: i.pop("principalId"),
        "'principalId'",
        "constraint required",
        "authorization-RoleAssignmentsCalls.json#/definitions/RoleAssignmentCreateParameters",
    ),
    (
        ENDPOINT,
        lambda i: i["privateLinkServiceConnections"][0].update(groupIds="vault"),
        "'privateLinkServiceConnections[0].groupIds'",
        "constraint type array",
        "2024-07-01/privateEndpoint.json#/definitions/PrivateLinkServiceConnectionProperties/properties/groupIds",
    ),
    (
        DNS_GROUP,
        lambda i: i.update(privateDnsZoneConfigs={"name": "privatelink"}),
        "'privateDnsZoneConfigs'",
        "constraint type array",
        "privateEndpoint.json#/definitions/PrivateDnsZoneGroupPropertiesFormat/properties/privateDnsZoneConfigs",
    ),
    (
        DIAGNOSTICS,
        lambda i: i["metrics"][0].pop("enabled"),
        "'metrics[0].enabled'",
        "constraint required",
        "diagnosticsSettings_API.json#/definitions/MetricSettings",
    ),
    (
        "azure-native:resources:ResourceGroup",
        lambda i: i.pop("location"),
        "'location'",
        "constraint required",
        "Microsoft.Resources/stable/2024-03-01/resources.json#/definitions/ResourceGroup",
    ),
    (
        "azure-native:storage:StorageAccount",
        lambda i: i.update(sku={}),
        "'sku.name'",
        "constraint required",
        "2024-01-01/common.json#/definitions/Sku",
    ),
    (
        "azure-native:keyvault:Vault",
        lambda i: i["properties"]["sku"].update(name="gold"),
        "'properties.sku.name'",
        "constraint one of standard, premium",
        "keyvault.json#/definitions/Sku/properties/name",
    ),
    (
        "azure-native:containerregistry:Registry",
        lambda i: i.pop("sku"),
        "'sku'",
        "constraint required",
        "containerregistry.json#/definitions/Registry",
    ),
    (
        "azure-native:machinelearningservices:Workspace",
        lambda i: i["sku"].update(tier="Gold"),
        "'sku.tier'",
        "constraint one of Free, Basic, Standard, Premium",
        "common-types/resource-management/v3/types.json#/definitions/SkuTier",
    ),
]


def test_each_newly_vendored_type_fails_the_gate_with_exit_2(
    monkeypatch: pytest.MonkeyPatch, pack: Any
) -> None:
    """End to end through the gate: the program runs for real, then one resource of each type carries an
    input its spec rejects (as a component bug would produce it); the gate gives exit 2 (Analyze only on
    those resources) and one line per resource naming the resource, its type, the property, the constraint
    and the vendored file and pointer it comes from."""
    import dataclasses

    from preflight import gate

    breaks = {typ: change for typ, change, *_ in GATE_BREAKS}
    real_run = gate._run

    def broken_run(*args: Any, **kwargs: Any) -> Any:
        program = real_run(*args, **kwargs)
        seen: set[str] = set()
        changed = []
        for r in program.resources:
            if r.custom and r.type in breaks and r.type not in seen:
                seen.add(r.type)
                inputs = copy.deepcopy(dict(r.inputs))
                breaks[r.type](inputs)
                r = dataclasses.replace(r, inputs=inputs)
            changed.append(r)
        assert seen == set(breaks), set(breaks) - seen
        program.resources = changed
        return program

    monkeypatch.setattr(gate, "_run", broken_run)
    result = evaluate("prod", pack=pack)
    assert result.exit_code == EXIT_INVALID
    # as the engine does, Analyze still ran on each resource whose Check failed, and on nothing else
    [analyzed] = result.evaluations
    assert analyzed.kind == "first-deploy"
    assert sorted(r.type for r in analyzed.resources) == sorted(breaks)
    assert len(result.errors) == len(GATE_BREAKS), result.errors
    for typ, _, prop, constraint, source in GATE_BREAKS:
        [line] = [e for e in result.errors if f"({typ}, API " in e]
        assert line.startswith("first-deploy preview: the Azure REST spec rejects ")
        assert prop in line and f"[{constraint} from " in line and source in line, line
    problems = {p["type"]: p for p in result.resource_problems}
    assert problems[ROLE]["property"] == "principalId" and problems[ROLE]["config_key"] is None
    assert problems["azure-native:resources:ResourceGroup"]["config_key"] == "azml-gpu:workspace.region"


# --- configs stackconfig accepts, at the name length and character limits -------------------------------

_RSA = (REPO_ROOT / "tests/fixtures/sshkeys/rsa3072.pub").read_text().strip()


def _config(workspace: str, group: str, clusters: list[str], admin: str = "azureuser") -> dict[str, Any]:
    return {
        "azure-native:location": "eastus",
        "azure-native:subscriptionId": "00000000-0000-0000-0000-000000000000",
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


@pytest.mark.parametrize("config", LIMIT_CONFIGS, ids=lambda c: c["azml-gpu:workspace"]["name"])
def test_configs_at_the_limits_pass_the_resource_check(config: dict[str, Any]) -> None:
    program = run_program("limits", config=config, deployment=Deployment(UPDATE))
    if program.problems:  # stackconfig refuses it: nothing to deploy, nothing for Azure to reject
        pytest.fail(f"the table must hold configs stackconfig accepts: {program.problems}")
    assert program.error is None, program.error
    outcome = resource_check.check(program.resources, flatten_config(config))
    assert [p.message for p in outcome.problems] == []
    names = {r.type: r.inputs for r in program.resources if r.custom}
    assert len(names["azure-native:storage:StorageAccount"]["accountName"]) <= 24


# --- REST bodies (doubles/localml/validation.py uses the same checker) ----------------------------------------------

WS_ID = (
    "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg/providers/"
    "Microsoft.MachineLearningServices/workspaces/ws"
)
JOB = {
    "properties": {
        "jobType": "Command",
        "command": "python train.py --steps ${{inputs.steps}}",
        "environmentId": "azureml://registries/azureml/environments/acpt-pytorch-2.2-cuda12.1/versions/1",
        "codeId": f"{WS_ID}/codes/c/versions/1",
        "inputs": {"steps": {"jobInputType": "literal", "value": "10"}},
        "outputs": {"ckpt": {"jobOutputType": "uri_folder", "mode": "ReadWriteMount"}},
        "resources": {"instanceCount": 2, "shmSize": "2g"},
        "distribution": {"distributionType": "PyTorch", "processCountPerInstance": 2},
    }
}


def _job(change: Callable[[dict[str, Any]], None]) -> list[tuple[str, str]]:
    body = copy.deepcopy(JOB)
    change(body["properties"])
    result = schema.check_request("Jobs_CreateOrUpdate", "2025-01-01-preview", {"id": "j"}, body)
    assert result.checked
    return [(f.path, f.constraint) for f in result.failures]


def test_a_command_job_body_as_azure_ai_ml_sends_it_passes() -> None:
    assert _job(lambda p: None) == []


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda p: p.pop("environmentId"), [("properties.environmentId", "required")]),
        (
            lambda p: p.update(command=""),
            [("properties.command", "minLength 1"), ("properties.command", "pattern [a-zA-Z0-9_]")],
        ),
        (
            lambda p: p.update(jobType="Batch"),
            [("properties.jobType", "one of AutoML, Command, Sweep, Pipeline, Spark, FineTuning")],
        ),
        (
            lambda p: p["outputs"]["ckpt"].pop("jobOutputType"),
            [("properties.outputs.ckpt.jobOutputType", "required")],
        ),
        (
            lambda p: p["resources"].update(shmSize="lots"),
            [("properties.resources.shmSize", "pattern \\d+[bBkKmMgG]")],
        ),
        (lambda p: p.update(experimentName=7), [("properties.experimentName", "type string")]),
    ],
)
def test_job_bodies_the_spec_rejects(change: Callable[[dict[str, Any]], None], expected: list) -> None:
    assert _job(change) == expected


def test_request_at_an_api_version_with_no_extract_is_not_checked() -> None:
    result = schema.check_request("Jobs_CreateOrUpdate", "2023-04-01-preview", {}, {"properties": {}})
    assert not result.checked and result.failures == []
    assert "2023-04-01-preview" in result.why


def test_the_400_is_the_arm_error_envelope() -> None:
    from doubles.localml.validation import MESSAGE, answer

    params = {"name": "c", "version": "1"}
    result = schema.check_request("CodeVersions_CreateOrUpdate", "2023-04-01", params, {"name": "1"})
    reply = answer(result)
    assert reply.status == 400
    assert reply.body == {
        "error": {
            "code": "UserError",
            "message": MESSAGE,
            "target": "properties",
            "details": [
                {
                    "code": "UserError",
                    "message": "missing required property 'properties' (constraint required)",
                    "target": "properties",
                }
            ],
        }
    }


def test_a_compute_put_needs_its_resource_group_path_parameter(prod: dict[str, Any]) -> None:
    """Compute_CreateOrUpdate's route takes common-types v3 ResourceGroupNameParameter (now vendored, with
    its pattern): checked without it, the request misses a required path parameter, so localml passes its
    `{rg}` route parameter (doubles/localml/computes.py); with it, the AmlCompute body azure-native sends passes."""
    inputs = _inputs(prod, COMPUTE)
    body = {"location": inputs["location"], "properties": inputs["properties"]}
    params = {"workspaceName": "ws-llm", "computeName": inputs["computeName"]}
    without = schema.check_request("Compute_CreateOrUpdate", "2025-12-01", params, body)
    assert [(f.path, f.constraint) for f in without.failures] == [("resourceGroupName", "required")]
    bad = schema.check_request(
        "Compute_CreateOrUpdate", "2025-12-01", params | {"resourceGroupName": "rg/x"}, body
    )
    assert [f.path for f in bad.failures] == ["resourceGroupName"]
    ok = schema.check_request(
        "Compute_CreateOrUpdate", "2025-12-01", params | {"resourceGroupName": "rg"}, body
    )
    assert ok.failures == [] and ok.checked

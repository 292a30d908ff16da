"""The offline azure-native provider's gRPC servicer (preflight/provider/server.py `AzureNativeStandIn`), its
RPCs called as the engine calls them, without the engine: the answers the real Pulumi CLI gets in the gate.

Each RPC's contract is pulumi/pulumi-azure-native `provider/pkg/provider/provider.go` (`azureNativeProvider`)
and the engine's side of the protocol (pulumi/pulumi 3.274.1 `proto/pulumi/provider.proto`,
pkg/resource/deploy/step_generator.go): `Configure` refuses an engine that does not send old inputs
(pulumi-azure-native#2686: "Azure Native provider requires Pulumi CLI v3.74.0 or later") and accepts no
secrets; `Check` returns the checked inputs and a CheckFailure per value the REST spec rejects, its reason
ending in "[constraint X from SOURCE]" (what preflight.resource_check reads back); `Diff` compares the old
inputs (`old_inputs`) with the new ones; `Create`/`Update` with `preview` make nothing; `Invoke` answers the
functions the stacks call, a vault outside the stack failing as ARM's 404 fails azure-native's invoke.

With an ARM endpoint (the last sections: localml's ARM handlers called in-process through the provider's own
ARM client, `stand_in.py`), every create, read, update and delete, and the `getResourceGroup`/`getVault`
invokes, go to ARM as azure-native sends them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import empty_pb2, json_format, struct_pb2
from pulumi.runtime.proto import plugin_pb2, provider_pb2

from doubles.localml.http import Request
from preflight.provider import EXISTING_ENV, JOURNAL_ENV, arm, schema, server
from preflight.provider import model as azure_native
from preflight.provider.armids import DEFAULT_SUBSCRIPTION_ID
from preflight.provider.server import AzureNativeStandIn
from preflight.wire import UNKNOWN
from tests.preflight.provider import recorded, stand_in
from tests.preflight.provider.stand_in import configured, localml

ROOT = Path(__file__).resolve().parents[3]
SUB = "6f1c0e5a-1111-4222-8333-944445555666"
COMPUTE = "azure-native:machinelearningservices:Compute"
CLUSTER = f"urn:pulumi:dev::azml-gpu::azml-gpu:components:GpuCluster${COMPUTE}::t4-dev"
GET_VAULT = "azure-native:keyvault:getVault"
KV = f"/subscriptions/{SUB}/resourceGroups/rg-keys/providers/Microsoft.KeyVault/vaults/kv-cmk"
VAULT_ARGS = {"resourceGroupName": "rg-keys", "vaultName": "kv-cmk"}


class Aborted(Exception):
    """What `context.abort` raises: the engine sees the call fail with this status and text."""


class Context:
    def abort(self, code: grpc.StatusCode, details: str) -> None:
        raise Aborted(code, details)


def struct(value: dict[str, Any]) -> struct_pb2.Struct:
    out = struct_pb2.Struct()
    out.update(value)
    return out


def plain(message: struct_pb2.Struct) -> dict[str, Any]:
    return json_format.MessageToDict(message)


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """No ARM endpoint, no `--existing` file, no journal: the gate's preview setting."""
    for name in (arm.METADATA_ENV, EXISTING_ENV, JOURNAL_ENV):
        monkeypatch.delenv(name, raising=False)


def configure(provider: AzureNativeStandIn, **variables: str) -> provider_pb2.ConfigureResponse:
    return provider.Configure(
        provider_pb2.ConfigureRequest(
            variables={f"azure-native:config:{k}": v for k, v in variables.items()},
            sends_old_inputs=True,
            sends_old_inputs_to_delete=True,
        ),
        Context(),
    )


@pytest.fixture
def provider() -> AzureNativeStandIn:
    """Configured as the engine configures it for a stack with subscription SUB in eastus."""
    p = AzureNativeStandIn(existing={})
    configure(p, subscriptionId=SUB, location="eastus")
    return p


def _compute(**props: Any) -> dict[str, Any]:
    return {
        "computeName": "t4-dev",
        "resourceGroupName": "rg-train-dev",
        "workspaceName": "ws-llm-dev",
        "properties": {
            "computeType": "AmlCompute",
            "properties": {"vmSize": "Standard_NC4as_T4_v3", **props},
        },
    }


# --- plugin info and configuration ---------------------------------------------------------------------


def test_the_plugin_is_the_version_the_program_asks_for() -> None:
    """The engine runs the provider of the version the SDK registers (the pinned pulumi-azure-native)."""
    pinned = next(
        line.split("==", 1)[1].strip()
        for line in (ROOT / "requirements.txt").read_text().splitlines()
        if line.startswith("pulumi-azure-native==")
    )
    info = AzureNativeStandIn(existing={}).GetPluginInfo(empty_pb2.Empty(), Context())
    assert info.version == pinned == "3.29.0"


@pytest.mark.parametrize(("old_inputs", "to_delete"), [(True, False), (False, True), (False, False)])
def test_configure_refuses_an_engine_that_does_not_send_old_inputs(old_inputs: bool, to_delete: bool) -> None:
    request = provider_pb2.ConfigureRequest(sends_old_inputs=old_inputs, sends_old_inputs_to_delete=to_delete)
    with pytest.raises(Aborted) as info:
        AzureNativeStandIn(existing={}).Configure(request, Context())
    assert info.value.args == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "Azure Native provider requires Pulumi CLI v3.74.0 or later",
    )


def test_configure_supports_preview_and_does_not_accept_secrets() -> None:
    r = configure(AzureNativeStandIn(existing={}), subscriptionId=SUB)
    assert (r.supportsPreview, r.acceptSecrets, r.supports_autonaming_configuration) == (True, False, True)


def test_the_provider_config_passes_through_and_never_asks_for_a_replacement(provider) -> None:
    news = struct({"location": "eastus", "subscriptionId": SUB})
    assert provider.CheckConfig(provider_pb2.CheckRequest(news=news), Context()).inputs == news
    diff = provider.DiffConfig(provider_pb2.DiffRequest(news=news), Context())
    assert (diff.changes, list(diff.replaces)) == (provider_pb2.DiffResponse.DIFF_UNKNOWN, [])


def test_attach_is_answered_and_no_schema_is_served(provider) -> None:
    """The gate's one provider process is attached by every CLI run (PULUMI_DEBUG_PROVIDERS)."""
    assert provider.Attach(plugin_pb2.PluginAttach(address="127.0.0.1:1"), Context()) == empty_pb2.Empty()
    with pytest.raises(Aborted) as info:
        provider.GetSchema(provider_pb2.GetSchemaRequest(), Context())
    assert info.value.args[0] == grpc.StatusCode.UNIMPLEMENTED


# --- Check ------------------------------------------------------------------------------------------------


def _check(provider: AzureNativeStandIn, news: dict, olds: dict | None = None, urn: str = CLUSTER):
    request = provider_pb2.CheckRequest(urn=urn, news=struct(news), olds=struct(olds or {}))
    return provider.Check(request, Context())


def test_check_takes_the_provider_location_and_the_api_version(provider) -> None:
    r = _check(provider, _compute())
    inputs = plain(r.inputs)
    assert (inputs["location"], inputs["azureApiVersion"]) == ("eastus", "2025-12-01")
    assert inputs["properties"] == _compute()["properties"]
    assert list(r.failures) == []
    # on an update the deployed location stays, whatever the provider config says now
    assert plain(_check(provider, _compute(), {"location": "westus3"}).inputs)["location"] == "westus3"


def test_check_of_every_prod_resource_gives_back_what_the_engine_recorded(provider) -> None:
    """The engine's checked inputs are Check's fixed point: each resource of prod, checked again, comes back
    unchanged and without a failure (every type the stacks declare)."""
    configure(provider, subscriptionId="00000000-0000-0000-0000-000000000000", location="eastus")
    resources = [
        r for r in recorded.prod_resources() if r["custom"] and r["type"].startswith("azure-native:")
    ]
    assert len({r["type"] for r in resources}) == 12
    for r in resources:
        response = _check(provider, r["inputs"], r["inputs"], urn=r["urn"])
        assert list(response.failures) == [], r["urn"]
        assert plain(response.inputs) == r["inputs"], r["urn"]


def test_check_reports_a_value_the_rest_spec_refuses_with_its_constraint_and_source(provider) -> None:
    bad = {**_compute(), "computeName": "t4-dev-a-name-far-too-long"}
    r = _check(provider, bad)
    assert [f.property for f in r.failures] == ["computeName"]
    (failure,) = schema.check_resource(COMPUTE, plain(r.inputs)).failures
    assert r.failures[0].reason == (
        "'computeName' is too long (26): at most 24 characters allowed "
        f"[constraint maxLength 24 from {failure.source}]"
    )
    assert failure.source.startswith("docs/reference/azure-notes.md section 3.1")
    # the checked inputs come back too: the engine shows the value next to the failure
    assert plain(r.inputs)["computeName"] == "t4-dev-a-name-far-too-long"


def test_check_skips_what_is_unknown_on_a_first_preview(provider) -> None:
    r = _check(provider, {**_compute(), "workspaceName": UNKNOWN, "resourceGroupName": UNKNOWN})
    assert list(r.failures) == []
    assert plain(r.inputs)["location"] == "eastus"  # the provider config, before the group's


# One real constraint per type, broken in the resource as prod declares it: (type, change, property,
# constraint, where the constraint is written).
BREAKS: list[tuple[str, Any, str, str, str]] = [
    (
        "azure-native:authorization:RoleAssignment",
        lambda i: i.pop("principalId"),
        "principalId",
        "required",
        "authorization-RoleAssignmentsCalls.json#/definitions/RoleAssignmentCreateParameters",
    ),
    (
        "azure-native:network:PrivateEndpoint",
        lambda i: i["privateLinkServiceConnections"][0].update(groupIds="vault"),
        "privateLinkServiceConnections[0].groupIds",
        "type array",
        "2024-07-01/privateEndpoint.json#/definitions/PrivateLinkServiceConnectionProperties/properties/groupIds",
    ),
    (
        "azure-native:network:PrivateDnsZoneGroup",
        lambda i: i.update(privateDnsZoneConfigs={"name": "privatelink"}),
        "privateDnsZoneConfigs",
        "type array",
        "privateEndpoint.json#/definitions/PrivateDnsZoneGroupPropertiesFormat/properties/privateDnsZoneConfigs",
    ),
    (
        "azure-native:monitor:DiagnosticSetting",
        lambda i: i["metrics"][0].pop("enabled"),
        "metrics[0].enabled",
        "required",
        "diagnosticsSettings_API.json#/definitions/MetricSettings",
    ),
    (
        "azure-native:resources:ResourceGroup",
        lambda i: i.pop("location"),
        "location",
        "required",
        "Microsoft.Resources/stable/2024-03-01/resources.json#/definitions/ResourceGroup",
    ),
    (
        "azure-native:storage:StorageAccount",
        lambda i: i.update(sku={}),
        "sku.name",
        "required",
        "2024-01-01/common.json#/definitions/Sku",
    ),
    (
        "azure-native:keyvault:Vault",
        lambda i: i["properties"]["sku"].update(name="gold"),
        "properties.sku.name",
        "one of standard, premium",
        "keyvault.json#/definitions/Sku/properties/name",
    ),
    (
        "azure-native:containerregistry:Registry",
        lambda i: i.pop("sku"),
        "sku",
        "required",
        "containerregistry.json#/definitions/Registry",
    ),
    (
        "azure-native:machinelearningservices:Workspace",
        lambda i: i["sku"].update(tier="Gold"),
        "sku.tier",
        "one of Free, Basic, Standard, Premium",
        "common-types/resource-management/v3/types.json#/definitions/SkuTier",
    ),
]


@pytest.mark.parametrize(
    ("typ", "change", "prop", "constraint", "source"), BREAKS, ids=[b[0].rsplit(":", 1)[-1] for b in BREAKS]
)
def test_each_types_check_failure_names_the_constraint_and_where_it_is_written(
    typ: str, change: Any, prop: str, constraint: str, source: str
) -> None:
    """A first create (no old inputs) in a stack without `azure-native:location`, so that nothing fills a
    location the resource lacks."""
    provider = AzureNativeStandIn(existing={})
    configure(provider, subscriptionId=SUB)
    resource = recorded.of_type(typ)[0]
    inputs = resource["inputs"]
    change(inputs)
    r = _check(provider, inputs, urn=resource["urn"])
    assert [f.property for f in r.failures] == [prop]
    reason = r.failures[0].reason
    assert f"'{prop}'" in reason
    head, _, tail = reason.partition(f" [constraint {constraint} from ")
    assert head and tail.endswith("]") and source in tail, reason


# --- Diff -------------------------------------------------------------------------------------------------


def _diff(provider: AzureNativeStandIn, old_inputs: dict, news: dict, olds: dict | None = None):
    request = provider_pb2.DiffRequest(
        urn=CLUSTER, old_inputs=struct(old_inputs), news=struct(news), olds=struct(olds or {})
    )
    return provider.Diff(request, Context())


def test_diff_of_a_path_parameter_is_a_delete_before_replace(provider) -> None:
    r = _diff(provider, _compute(), {**_compute(), "workspaceName": "ws-llm-dev-2"})
    assert r.changes == provider_pb2.DiffResponse.DIFF_SOME
    assert (list(r.replaces), list(r.diffs)) == (["workspaceName"], ["workspaceName"])
    assert r.deleteBeforeReplace is True and r.hasDetailedDiff is True
    assert dict(r.detailedDiff) == {
        "workspaceName": provider_pb2.PropertyDiff(
            kind=provider_pb2.PropertyDiff.UPDATE_REPLACE, inputDiff=True
        )
    }


def test_diff_of_a_resize_is_an_update_in_place(provider) -> None:
    r = _diff(provider, _compute(), _compute(vmSize="Standard_NC24ads_A100_v4"))
    assert r.changes == provider_pb2.DiffResponse.DIFF_SOME
    assert (list(r.replaces), list(r.diffs), r.deleteBeforeReplace) == ([], ["properties"], False)
    assert r.detailedDiff["properties.properties.vmSize"].kind == provider_pb2.PropertyDiff.UPDATE


def test_diff_of_equal_inputs_is_none_whatever_the_outputs(provider) -> None:
    """The old inputs are compared, not the state's outputs (which hold what Azure added)."""
    outputs = {**_compute(), "provisioningState": "Succeeded", "name": "t4-dev"}
    r = _diff(provider, _compute(), _compute(), olds=outputs)
    assert r.changes == provider_pb2.DiffResponse.DIFF_NONE
    assert (list(r.replaces), list(r.diffs), dict(r.detailedDiff)) == ([], [], {})


def test_a_create_before_delete_resource_is_replaced_create_first(provider) -> None:
    old = {**_compute(), "__createBeforeDelete": True}
    r = _diff(provider, old, {**_compute(), "computeName": "t4-dev-2"})
    assert (list(r.replaces), r.deleteBeforeReplace) == (["computeName"], False)


# --- Create and Update previews -----------------------------------------------------------------------------


def test_preview_create_leaves_outputs_it_cannot_know_unknown_and_makes_nothing(provider) -> None:
    inputs = plain(_check(provider, _compute()).inputs)
    r = provider.Create(
        provider_pb2.CreateRequest(urn=CLUSTER, properties=struct(inputs), preview=True), Context()
    )
    assert r.id == ""  # nothing was made
    outputs = plain(r.properties)
    assert outputs["name"] == outputs["systemData"] == UNKNOWN
    assert (outputs["location"], outputs["properties"]) == ("eastus", inputs["properties"])
    assert "computeName" not in outputs  # a path parameter: an input only


def test_preview_update_keeps_the_deployed_name_and_location(provider) -> None:
    news = plain(_check(provider, _compute(vmSize="Standard_NC24ads_A100_v4")).inputs)
    olds = {"name": "t4-dev", "location": "eastus2", "provisioningState": "Succeeded"}
    r = provider.Update(
        provider_pb2.UpdateRequest(urn=CLUSTER, news=struct(news), olds=struct(olds), preview=True), Context()
    )
    outputs = plain(r.properties)
    assert (outputs["name"], outputs["location"]) == ("t4-dev", "eastus2")
    assert outputs["properties"]["properties"]["vmSize"] == "Standard_NC24ads_A100_v4"


# --- Invoke -----------------------------------------------------------------------------------------------


def _invoke(provider: AzureNativeStandIn, token: str, args: dict | None = None) -> dict[str, Any]:
    r = provider.Invoke(provider_pb2.InvokeRequest(tok=token, args=struct(args or {})), Context())
    return plain(getattr(r, "return"))


def test_get_client_config_names_the_configured_subscription(provider) -> None:
    assert _invoke(provider, "azure-native:authorization:getClientConfig")["subscriptionId"] == SUB
    unconfigured = AzureNativeStandIn(existing={})
    configure(unconfigured, location="eastus")
    assert _invoke(unconfigured, "azure-native:authorization:getClientConfig")["subscriptionId"] == (
        DEFAULT_SUBSCRIPTION_ID
    )


def test_an_unknown_function_is_refused(provider) -> None:
    with pytest.raises(Aborted) as info:
        _invoke(provider, "azure-native:foo:getBar")
    code, details = info.value.args
    assert code == grpc.StatusCode.UNKNOWN
    assert details.startswith("Invoke type azure-native:foo:getBar not found")


def _vault(purge: bool) -> dict[str, Any]:
    outputs = {"id": KV, "name": "kv-cmk", "properties": {"enablePurgeProtection": purge}}
    return {KV.lower(): {"id": KV, "type": "Microsoft.KeyVault/vaults", "inputs": {}, "outputs": outputs}}


def test_a_vault_given_as_existing_is_found() -> None:
    p = AzureNativeStandIn(existing=_vault(True))
    configure(p, subscriptionId=SUB)
    got = _invoke(p, GET_VAULT, VAULT_ARGS)
    assert got["id"] == KV and got["properties"]["enablePurgeProtection"] is True
    assert got["properties"]["enableSoftDelete"] is True  # the spec's default, stored at creation


def test_a_missing_vault_fails_the_invoke_with_arms_404(provider) -> None:
    with pytest.raises(Aborted) as info:
        _invoke(provider, GET_VAULT, VAULT_ARGS)
    assert info.value.args == (
        grpc.StatusCode.UNKNOWN,
        'Status=404 Code="ResourceNotFound" Message="The Resource \'Microsoft.KeyVault/vaults/kv-cmk\' under '
        "resource group 'rg-keys' was not found.\"",
    )


def test_the_existing_file_and_the_journal_come_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The gate starts the provider process with `--existing F` and a journal in its environment; the journal
    lists each function the program called (the gate's permission list reads it)."""
    existing = tmp_path / "vault.json"
    existing.write_text(
        json.dumps({"id": KV, "name": "kv-cmk", "properties": {"enablePurgeProtection": True}})
    )
    journal = tmp_path / "invokes.jsonl"
    monkeypatch.setenv(EXISTING_ENV, str(existing))
    monkeypatch.setenv(JOURNAL_ENV, str(journal))
    p = AzureNativeStandIn()
    configure(p, subscriptionId=SUB)
    assert _invoke(p, GET_VAULT, VAULT_ARGS)["id"] == KV
    _invoke(p, "azure-native:authorization:getClientConfig")
    with pytest.raises(Aborted):
        _invoke(p, GET_VAULT, {**VAULT_ARGS, "vaultName": "kv-other"})
    lines = [json.loads(line) for line in journal.read_text().splitlines()]
    assert lines == [
        {"token": GET_VAULT, "args": VAULT_ARGS},
        {"token": "azure-native:authorization:getClientConfig", "args": {}},
        {"token": GET_VAULT, "args": {**VAULT_ARGS, "vaultName": "kv-other"}},  # a failed look-up too
    ]


# --- warm-up ------------------------------------------------------------------------------------------------


def test_warm_leaves_every_vendored_types_shape_read() -> None:
    """The provider process warms up while the gate sets up: afterwards a Check of any type with a vendored
    spec finds its SDK shape read (no cache miss)."""
    tokens = sorted(schema.index()["resources"])
    azure_native.shape.cache_clear()
    server.warm()
    after_warm = azure_native.shape.cache_info()
    assert after_warm.currsize >= len(tokens)
    shapes = [azure_native.shape(t) for t in tokens]
    now = azure_native.shape.cache_info()
    assert (now.misses, now.hits - after_warm.hits) == (after_warm.misses, len(tokens))
    assert all(s is not None and s.api_version for s in shapes)


# -- with an ARM endpoint (localml's ARM handlers in-process), and offline creates ---------------------------
# What the provider sends to ARM, and reads back, when `ARM_CLOUD_METADATA_URL` names one
# (preflight/provider/arm.py, after pulumi-azure-native `provider/pkg/provider/crud/crud.go` and
# `provider/pkg/azure/client_azcore.go`): CanCreate GET, PUT, readAfterWrite GET; Read = GET (404: gone), with
# the inputs refreshed; Delete = DELETE; `getResourceGroup`/`getVault` and Check's group location are GETs.
# The provider keeps no store of its own.

ARM_SUB = stand_in.SUB
RG_ID = f"/subscriptions/{ARM_SUB}/resourceGroups/rg-train-dev"
WS_ID = f"{RG_ID}/providers/Microsoft.MachineLearningServices/workspaces/ws-llm-dev"
COMPUTE_ID = f"{WS_ID}/computes/t4-dev"
SA_ID = f"{RG_ID}/providers/Microsoft.Storage/storageAccounts/stdev"
ARM_CLUSTER = (
    "urn:pulumi:dev::azml-gpu::azml-gpu:components:GpuCluster$azure-native:machinelearningservices:Compute::c"
)
GROUP = "urn:pulumi:dev::azml-gpu::azml-gpu:components:Workspace$azure-native:resources:ResourceGroup::rg"
ACCOUNT = "urn:pulumi:dev::azml-gpu::azml-gpu:components:Workspace$azure-native:storage:StorageAccount::st"
WORKSPACE = (
    "urn:pulumi:dev::azml-gpu::azml-gpu:components:Workspace$azure-native:machinelearningservices:"
    "Workspace::w"
)


def _arm_compute(**props) -> dict:
    return {
        "computeName": "t4-dev",
        "resourceGroupName": "rg-train-dev",
        "workspaceName": "ws-llm-dev",
        "location": "eastus",
        "azureApiVersion": "2025-12-01",
        "properties": {
            "computeType": "AmlCompute",
            "properties": {
                "vmSize": "Standard_NC4as_T4_v3",
                "scaleSettings": {"maxNodeCount": 1, "minNodeCount": 0},
                **props,
            },
        },
    }


GROUP_INPUTS = {"resourceGroupName": "rg-train-dev", "location": "eastus", "azureApiVersion": "2024-03-01"}
ACCOUNT_INPUTS = {
    "accountName": "stdev",
    "resourceGroupName": "rg-train-dev",
    "location": "eastus",
    "azureApiVersion": "2024-01-01",
    "kind": "StorageV2",
    "sku": {"name": "Standard_LRS"},
    "minimumTlsVersion": "TLS1_2",
}
WORKSPACE_INPUTS = {
    "workspaceName": "ws-llm-dev",
    "resourceGroupName": "rg-train-dev",
    "location": "eastus",
    "azureApiVersion": "2025-12-01",
    "identity": {"type": "SystemAssigned"},
}


def _arm_create(provider: AzureNativeStandIn, urn: str, inputs: dict) -> provider_pb2.CreateResponse:
    return provider.Create(provider_pb2.CreateRequest(urn=urn, properties=struct(inputs)), Context())


# -- offline creates (the gate) ------------------------------------------------------------------------------


@pytest.fixture
def offline_provider(monkeypatch: pytest.MonkeyPatch) -> AzureNativeStandIn:
    return configured(monkeypatch)


def test_offline_create_gives_the_arm_id_and_read_answers_the_state_as_given(offline_provider) -> None:
    r = _arm_create(offline_provider, ARM_CLUSTER, _arm_compute())
    assert r.id == COMPUTE_ID
    outputs = plain(r.properties)
    assert outputs["name"] == "t4-dev"
    assert outputs["properties"]["provisioningState"] == "Succeeded"
    found = offline_provider.Read(
        provider_pb2.ReadRequest(
            id=COMPUTE_ID, urn=ARM_CLUSTER, properties=r.properties, inputs=struct(_arm_compute())
        ),
        Context(),
    )
    assert found.id == COMPUTE_ID and plain(found.properties) == outputs
    offline_provider.Delete(
        provider_pb2.DeleteRequest(id=COMPUTE_ID, urn=ARM_CLUSTER), Context()
    )  # nothing to reach


def test_offline_the_group_location_is_the_existing_record(monkeypatch: pytest.MonkeyPatch) -> None:
    existing = {RG_ID.lower(): {"id": RG_ID, "type": "", "inputs": {}, "outputs": {"location": "westus3"}}}
    p = AzureNativeStandIn(existing=existing)
    p.Configure(
        provider_pb2.ConfigureRequest(sends_old_inputs=True, sends_old_inputs_to_delete=True), Context()
    )
    monkeypatch.delenv(arm.METADATA_ENV, raising=False)
    news = {"accountName": "stdev", "resourceGroupName": "rg-train-dev"}
    r = p.Check(provider_pb2.CheckRequest(urn=ACCOUNT, news=struct(news)), Context())
    assert dict(r.inputs)["location"] == "westus3"


# -- with an ARM endpoint -----------------------------------------------------------------------------------


@pytest.fixture
def plane(tmp_path: Path):
    return localml(tmp_path)


@pytest.fixture
def live(monkeypatch: pytest.MonkeyPatch, plane) -> AzureNativeStandIn:
    return configured(monkeypatch, plane)


def _sent(live: AzureNativeStandIn) -> list[tuple[str, str, str]]:
    return [(m, path, q.get("api-version", "")) for m, path, q, _ in live.arm.client.sent]


def test_create_is_can_create_then_put_then_read_after_write(live, plane) -> None:
    _arm_create(live, GROUP, GROUP_INPUTS)
    live.arm.client.sent.clear()
    r = _arm_create(live, ACCOUNT, ACCOUNT_INPUTS)
    assert r.id == SA_ID
    assert _sent(live) == [
        ("GET", SA_ID, "2024-01-01"),
        ("PUT", SA_ID, "2024-01-01"),
        ("GET", SA_ID, "2024-01-01"),
    ]
    # localml holds what azure-native sends, and the outputs are its answer in the SDK shape.
    stored = plane.store.arm(SA_ID)
    assert stored is not None and stored.sent == arm.request_body(
        "azure-native:storage:StorageAccount", ACCOUNT_INPUTS
    )
    outputs = plain(r.properties)
    assert outputs["minimumTlsVersion"] == "TLS1_2" and outputs["provisioningState"] == "Succeeded"
    assert outputs["azureApiVersion"] == "2024-01-01" and outputs["name"] == "stdev"


def test_create_of_an_existing_resource_fails_as_azure_natives_can_create(live) -> None:
    _arm_create(live, GROUP, GROUP_INPUTS)
    with pytest.raises(Aborted) as info:
        _arm_create(live, GROUP, GROUP_INPUTS)
    assert info.value.args == (
        grpc.StatusCode.UNKNOWN,
        f"Status=409 Message=\"cannot create already existing resource '{RG_ID}'\"",
    )


def test_a_refused_put_fails_the_create_with_arms_error(live) -> None:
    with pytest.raises(Aborted) as info:
        _arm_create(live, ACCOUNT, ACCOUNT_INPUTS)  # no resource group yet
    assert info.value.args[1] == (
        'Status=404 Code="ResourceGroupNotFound" '
        "Message=\"Resource group 'rg-train-dev' could not be found.\""
    )


def test_the_workspace_identity_is_the_one_arm_answers(live, plane) -> None:
    _arm_create(live, GROUP, GROUP_INPUTS)
    r = _arm_create(live, WORKSPACE, WORKSPACE_INPUTS)
    principal = plain(r.properties)["identity"]["principalId"]
    assert principal == plane.store.arm(WS_ID).resource["identity"]["principalId"]


def test_update_puts_without_can_create_and_read_refreshes_from_arm(live, plane) -> None:
    _arm_create(live, GROUP, GROUP_INPUTS)
    created = _arm_create(live, ACCOUNT, ACCOUNT_INPUTS)
    changed = {**ACCOUNT_INPUTS, "minimumTlsVersion": "TLS1_1"}
    live.arm.client.sent.clear()
    live.Update(
        provider_pb2.UpdateRequest(urn=ACCOUNT, id=SA_ID, olds=created.properties, news=struct(changed)),
        Context(),
    )
    assert [m for m, *_ in _sent(live)] == ["PUT", "GET"]
    # Someone changes it outside Pulumi: a refresh shows it in the outputs and in the inputs.
    body = json.loads(json.dumps(plane.store.arm(SA_ID).sent))
    body["properties"]["minimumTlsVersion"] = "TLS1_2"
    body["tags"] = {"owner": "portal"}
    plane.router.dispatch(Request("PUT", SA_ID, {"api-version": "2024-01-01"}, {}, json.dumps(body).encode()))
    olds = arm.response_outputs(
        "azure-native:storage:StorageAccount", plane.store.arm(SA_ID).resource, "2024-01-01"
    )
    olds["minimumTlsVersion"] = "TLS1_1"
    olds.pop("tags", None)
    r = live.Read(
        provider_pb2.ReadRequest(id=SA_ID, urn=ACCOUNT, properties=struct(olds), inputs=struct(changed)),
        Context(),
    )
    assert r.id == SA_ID
    assert plain(r.properties)["minimumTlsVersion"] == "TLS1_2"
    inputs = plain(r.inputs)
    assert inputs["minimumTlsVersion"] == "TLS1_2" and inputs["tags"] == {"owner": "portal"}
    assert inputs["accountName"] == "stdev"


def test_delete_sends_what_azure_natives_provider_go_builds_and_localml_refuses_a_compute_without_action(
    live, plane
) -> None:
    """pulumi-azure-native provider/pkg/provider/provider.go `Delete` (default case):
    `k.azureClient.Delete(ctx, id, apiVersion, res.DeleteAsyncStyle, nil)`, and client_azcore.go `Delete`
    starts its query from `{"api-version": apiVersion}` and adds only the (nil) queryParams: a plain DELETE
    for every resource, a compute included. Compute_Delete 2025-12-01 requires `underlyingResourceAction`
    (azure-rest-api-specs machinelearningservices stable/2025-12-01 `UnderlyingResourceActionParameter`,
    required): localml answers 400, and the provider shows ARM's error as azure-native does."""
    _arm_create(live, GROUP, GROUP_INPUTS)
    _arm_create(live, ACCOUNT, ACCOUNT_INPUTS)
    _arm_create(live, WORKSPACE, WORKSPACE_INPUTS)
    r = _arm_create(live, ARM_CLUSTER, _arm_compute())
    live.arm.client.sent.clear()
    with pytest.raises(Aborted) as info:
        live.Delete(
            provider_pb2.DeleteRequest(id=COMPUTE_ID, urn=ARM_CLUSTER, properties=r.properties), Context()
        )
    assert info.value.args[1] == (
        'Status=400 Code="UserError" Message="underlyingResourceAction must be one of Delete, Detach '
        '(got None); it is a required query parameter of Compute_Delete"'
    )
    assert plane.store.arm(COMPUTE_ID) is not None  # nothing deleted
    live.Delete(provider_pb2.DeleteRequest(id=SA_ID, urn=ACCOUNT), Context())
    assert plane.store.arm(SA_ID) is None
    deletes = [(path, q) for m, path, q, _ in live.arm.client.sent if m == "DELETE"]
    assert deletes == [
        (COMPUTE_ID, {"api-version": "2025-12-01"}),
        (SA_ID, {"api-version": "2024-01-01"}),
    ]


def test_read_of_a_deleted_resource_is_an_empty_id_and_deleting_it_again_is_done(live, plane) -> None:
    _arm_create(live, GROUP, GROUP_INPUTS)
    r = _arm_create(live, ACCOUNT, ACCOUNT_INPUTS)
    live.Delete(provider_pb2.DeleteRequest(id=SA_ID, urn=ACCOUNT, properties=r.properties), Context())
    assert plane.store.arm(SA_ID) is None
    gone = live.Read(provider_pb2.ReadRequest(id=SA_ID, urn=ACCOUNT, properties=r.properties), Context())
    assert gone.id == ""
    # Deleting what is already gone succeeds: ARM's 404 is taken as done (client_azcore.go `Delete`: "If the
    # resource is already deleted, we don't want to return an error").
    live.arm.client.sent.clear()
    live.Delete(provider_pb2.DeleteRequest(id=SA_ID, urn=ACCOUNT), Context())
    assert [(m, path) for m, path, *_ in live.arm.client.sent] == [("DELETE", SA_ID)]


def test_deleting_a_group_polls_until_arm_is_done(live, plane) -> None:
    _arm_create(live, GROUP, GROUP_INPUTS)
    _arm_create(live, ACCOUNT, ACCOUNT_INPUTS)
    live.Delete(provider_pb2.DeleteRequest(id=RG_ID, urn=GROUP), Context())
    assert plane.store.resources == {}
    assert [m for m, path, *_ in live.arm.client.sent if "/operationResults/" in path] == ["GET"]


def test_the_group_location_and_get_resource_group_read_arm(live) -> None:
    invoke = provider_pb2.InvokeRequest(
        tok="azure-native:resources:getResourceGroup", args=struct({"resourceGroupName": "rg-train-dev"})
    )
    with pytest.raises(Aborted) as info:
        live.Invoke(invoke, Context())
    assert "ResourceGroupNotFound" in info.value.args[1]
    _arm_create(live, GROUP, {**GROUP_INPUTS, "location": "westus3"})
    answer = plain(getattr(live.Invoke(invoke, Context()), "return"))
    assert (answer["id"], answer["location"]) == (RG_ID, "westus3")
    news = {"accountName": "stdev", "resourceGroupName": "rg-train-dev"}
    live.config.pop("location")
    r = live.Check(provider_pb2.CheckRequest(urn=ACCOUNT, news=struct(news)), Context())
    assert dict(r.inputs)["location"] == "westus3"


# -- getVault from ARM --------------------------------------------------------------------------------------

ARM_KV = f"/subscriptions/{ARM_SUB}/resourceGroups/rg-keys/providers/Microsoft.KeyVault/vaults/kv-cmk"
ARM_VAULT_ARGS = {"resourceGroupName": "rg-keys", "vaultName": "kv-cmk"}
ARM_MISSING = (
    'Status=404 Code="ResourceNotFound" Message="The Resource \'Microsoft.KeyVault/vaults/kv-cmk\' under '
    "resource group 'rg-keys' was not found.\""
)
VAULT_URN = "urn:pulumi:dev::azml-gpu::azml-gpu:components:Workspace$azure-native:keyvault:Vault::ws-kv"
GROUP_URN = "urn:pulumi:dev::azml-gpu::azml-gpu:components:Workspace$azure-native:resources:ResourceGroup::rg"
VAULT_GROUP_INPUTS = {"resourceGroupName": "rg-keys", "location": "eastus", "azureApiVersion": "2024-03-01"}
VAULT_INPUTS = {
    "vaultName": "kv-cmk",
    "resourceGroupName": "rg-keys",
    "location": "eastus",
    "azureApiVersion": "2024-11-01",
    "properties": {
        "tenantId": "11111111-1111-1111-1111-111111111111",
        "sku": {"family": "A", "name": "standard"},
        "enablePurgeProtection": True,
    },
}


def _arm_get_vault(provider: AzureNativeStandIn) -> dict:
    r = provider.Invoke(provider_pb2.InvokeRequest(tok=GET_VAULT, args=struct(ARM_VAULT_ARGS)), Context())
    return plain(getattr(r, "return"))


def test_a_missing_vault_is_the_same_404_offline_and_from_arm(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with pytest.raises(Aborted) as info:
        _arm_get_vault(configured(monkeypatch))
    assert info.value.args == (grpc.StatusCode.UNKNOWN, ARM_MISSING)
    provider = configured(monkeypatch, localml(tmp_path))
    with pytest.raises(Aborted) as info:  # ARM's own answer: here, the group is missing too
        _arm_get_vault(provider)
    assert info.value.args[1] == (
        'Status=404 Code="ResourceGroupNotFound" Message="Resource group \'rg-keys\' could not be found."'
    )
    provider.Create(
        provider_pb2.CreateRequest(urn=GROUP_URN, properties=struct(VAULT_GROUP_INPUTS)), Context()
    )
    with pytest.raises(Aborted) as info:
        _arm_get_vault(provider)
    assert info.value.args == (grpc.StatusCode.UNKNOWN, ARM_MISSING)


def test_with_arm_the_vault_an_earlier_up_made_is_read(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    plane = localml(tmp_path)
    provider = configured(monkeypatch, plane)
    provider.Create(
        provider_pb2.CreateRequest(urn=GROUP_URN, properties=struct(VAULT_GROUP_INPUTS)), Context()
    )
    created = provider.Create(
        provider_pb2.CreateRequest(urn=VAULT_URN, properties=struct(VAULT_INPUTS)), Context()
    )
    assert created.id == ARM_KV
    answer = _arm_get_vault(provider)
    assert answer["properties"]["enablePurgeProtection"] is True
    assert answer["properties"]["enableSoftDelete"] is True and answer["location"] == "eastus"
    # It is read from ARM, not remembered: gone there, it is gone for the invoke too.
    provider.Delete(provider_pb2.DeleteRequest(id=ARM_KV, urn=VAULT_URN), Context())
    with pytest.raises(Aborted):
        _arm_get_vault(provider)

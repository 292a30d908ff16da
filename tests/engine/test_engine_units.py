"""The engine driver's own parts, without the CLI: the verdict read from an event log, the stand-in provider's
RPC answers (called as the engine calls them), the REST bodies it sends, its store, the build cache key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pulumi.runtime.proto import provider_pb2
from stand_in_provider import SUB, Aborted, Context, configured, struct

from doubles.pulumicli import build
from preflight import events
from preflight.provider import arm, store
from preflight.provider.model import UNKNOWN
from preflight.provider.server import AzureNativeStandIn

STACK = "urn:pulumi:dev::azml-gpu::pulumi:pulumi:Stack::azml-gpu-dev"
CLUSTER = (
    "urn:pulumi:dev::azml-gpu::azml-gpu:components:GpuCluster$azure-native:machinelearningservices:Compute::c"
)
VAULT = "urn:pulumi:dev::azml-gpu::azml-gpu:components:Workspace$azure-native:keyvault:Vault::kv"


def _policy(name: str, urn: str, level: str) -> dict:
    # sdk/go/common/apitype/events.go PolicyEvent
    return {
        "policyEvent": {"resourceUrn": urn, "message": "m", "policyName": name, "enforcementLevel": level}
    }


def _step(op: str, urn: str, typ: str) -> dict:
    return {"resourcePreEvent": {"metadata": {"op": op, "urn": urn, "type": typ}}}


class TestVerdict:
    def test_remediate_counts_as_mandatory_and_advisory_does_not(self) -> None:
        v = events.verdict(
            255,
            [
                _policy("a", CLUSTER, "remediate"),
                _policy("b", CLUSTER, "mandatory"),
                _policy("c", VAULT, "advisory"),
            ],
        )
        assert v.mandatory == [("a", CLUSTER), ("b", CLUSTER)]
        assert v.advisory == [("c", VAULT)]

    def test_each_replacement_op_is_one_replacement_and_delete_is_a_delete(self) -> None:
        typ = "azure-native:machinelearningservices:Compute"
        v = events.verdict(
            0,
            [
                _step("create-replacement", CLUSTER, typ),
                _step("replace", CLUSTER, typ),
                _step("delete-replaced", CLUSTER, typ),
                _step("delete", VAULT, "azure-native:keyvault:Vault"),
                _step("same", STACK, "pulumi:pulumi:Stack"),
                _step("create", STACK, "pulumi:pulumi:Stack"),
            ],
        )
        assert v.replacements == [(typ, CLUSTER)]
        assert v.deletes == [("azure-native:keyvault:Vault", VAULT)]
        assert v.creates == 1

    def test_only_error_diagnostics_are_errors(self) -> None:
        v = events.verdict(
            255,
            [
                {"diagnosticEvent": {"severity": "warning", "message": "w"}},
                {"diagnosticEvent": {"severity": "error", "message": "preview failed\n"}},
            ],
        )
        assert v.errors == ["preview failed"]

    def test_read_skips_blank_lines_and_a_missing_log_is_empty(self, tmp_path: Path) -> None:
        log = tmp_path / "e.jsonl"
        assert events.read(log) == []
        log.write_text(json.dumps({"sequence": 1}) + "\n\n" + json.dumps({"sequence": 2}) + "\n")
        assert [e["sequence"] for e in events.read(log)] == [1, 2]


@pytest.fixture
def provider(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AzureNativeStandIn:
    return configured(tmp_path, monkeypatch)


def _compute(**props) -> dict:
    return {
        "computeName": "t4-dev",
        "resourceGroupName": "rg-train-dev",
        "workspaceName": "ws-llm-dev",
        "properties": {
            "computeType": "AmlCompute",
            "properties": {"vmSize": "Standard_NC4as_T4_v3", **props},
        },
    }


class TestProvider:
    def test_configure_refuses_an_engine_that_does_not_send_old_inputs(self) -> None:
        with pytest.raises(Aborted, match="v3.74.0 or later"):
            AzureNativeStandIn().Configure(provider_pb2.ConfigureRequest(sends_old_inputs=True), Context())

    def test_configure_supports_preview_and_does_not_accept_secrets(self, provider) -> None:
        r = provider.Configure(
            provider_pb2.ConfigureRequest(sends_old_inputs=True, sends_old_inputs_to_delete=True), Context()
        )
        assert (r.supportsPreview, r.acceptSecrets) == (True, False)

    def test_check_takes_the_provider_location_and_the_api_version(self, provider) -> None:
        r = provider.Check(provider_pb2.CheckRequest(urn=CLUSTER, news=struct(_compute())), Context())
        inputs = dict(r.inputs)
        assert inputs["location"] == "eastus"
        assert inputs["azureApiVersion"] == "2025-12-01"
        assert list(r.failures) == []

    def test_check_reports_a_value_the_rest_spec_refuses(self, provider) -> None:
        bad = {**_compute(), "computeName": "t4-dev-a-name-far-too-long"}
        r = provider.Check(provider_pb2.CheckRequest(urn=CLUSTER, news=struct(bad)), Context())
        assert [f.property for f in r.failures] == ["computeName"]
        assert r.failures[0].reason == "'computeName' is too long (26): at most 24 characters allowed"

    def test_diff_of_a_path_parameter_is_a_delete_before_replace(self, provider) -> None:
        olds, news = _compute(), {**_compute(), "workspaceName": "ws-llm-dev-2"}
        r = provider.Diff(
            provider_pb2.DiffRequest(urn=CLUSTER, old_inputs=struct(olds), news=struct(news)), Context()
        )
        assert r.changes == provider_pb2.DiffResponse.DIFF_SOME
        assert list(r.replaces) == ["workspaceName"]
        assert r.deleteBeforeReplace is True
        assert r.detailedDiff["workspaceName"].kind == provider_pb2.PropertyDiff.UPDATE_REPLACE

    def test_diff_of_equal_inputs_is_none(self, provider) -> None:
        r = provider.Diff(
            provider_pb2.DiffRequest(urn=CLUSTER, old_inputs=struct(_compute()), news=struct(_compute())),
            Context(),
        )
        assert r.changes == provider_pb2.DiffResponse.DIFF_NONE

    def test_preview_create_leaves_outputs_it_cannot_know_unknown_and_makes_nothing(self, provider) -> None:
        r = provider.Create(
            provider_pb2.CreateRequest(urn=CLUSTER, properties=struct(_compute()), preview=True), Context()
        )
        assert r.id == ""
        outputs = dict(r.properties)
        assert outputs["name"] == outputs["systemData"] == UNKNOWN
        assert provider.store.all() == []

    def test_create_gives_the_arm_id_and_delete_removes_it(self, provider) -> None:
        r = provider.Create(provider_pb2.CreateRequest(urn=CLUSTER, properties=struct(_compute())), Context())
        ws = f"/subscriptions/{SUB}/resourceGroups/rg-train-dev/providers/Microsoft.MachineLearningServices"
        want = f"{ws}/workspaces/ws-llm-dev/computes/t4-dev"
        assert r.id == want
        outputs = json.loads(json.dumps(dict(r.properties), default=dict))
        assert outputs["name"] == "t4-dev"
        assert outputs["properties"]["provisioningState"] == "Succeeded"
        found = provider.Read(provider_pb2.ReadRequest(id=want.upper(), urn=CLUSTER), Context())
        assert found.id == want.upper()
        provider.Delete(provider_pb2.DeleteRequest(id=want, urn=CLUSTER), Context())
        gone = provider.Read(provider_pb2.ReadRequest(id=want, urn=CLUSTER), Context())
        assert gone.id == ""  # what the provider answers for a 404

    def test_get_client_config_names_the_configured_subscription(self, provider) -> None:
        r = provider.Invoke(
            provider_pb2.InvokeRequest(tok="azure-native:authorization:getClientConfig"), Context()
        )
        assert dict(getattr(r, "return"))["subscriptionId"] == SUB

    def test_an_unknown_function_is_refused(self, provider) -> None:
        with pytest.raises(Aborted, match="Invoke type azure-native:foo:getBar not found"):
            provider.Invoke(provider_pb2.InvokeRequest(tok="azure-native:foo:getBar"), Context())


class TestRequestBody:
    def test_a_workspace_puts_its_flattened_properties_back_under_properties(self) -> None:
        body = arm.request_body(
            arm.WORKSPACE,
            {
                "workspaceName": "ws",
                "resourceGroupName": "rg",
                "azureApiVersion": "2025-12-01",
                "location": "eastus",
                "tags": {"env": "dev"},
                "identity": {"type": "SystemAssigned"},
                "storageAccount": "/subscriptions/s/x",
                "publicNetworkAccess": "Enabled",
            },
        )
        assert body == {
            "location": "eastus",
            "tags": {"env": "dev"},
            "identity": {"type": "SystemAssigned"},
            "properties": {"storageAccount": "/subscriptions/s/x", "publicNetworkAccess": "Enabled"},
        }

    def test_a_compute_body_keeps_its_own_properties_and_integers(self) -> None:
        body = arm.request_body(
            arm.COMPUTE,
            {
                **_compute(scaleSettings={"maxNodeCount": 4.0}),
                "identity": {"type": "UserAssigned", "userAssignedIdentities": ["/id/a"]},
            },
        )
        assert body["properties"]["properties"]["scaleSettings"]["maxNodeCount"] == 4
        assert isinstance(body["properties"]["properties"]["scaleSettings"]["maxNodeCount"], int)
        assert body["identity"]["userAssignedIdentities"] == {"/id/a": {}}
        assert "computeName" not in body and "workspaceName" not in body

    def test_the_control_plane_is_used_only_when_one_runs(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.delenv(arm.METADATA_ENV, raising=False)
        assert not arm.live(arm.COMPUTE)
        monkeypatch.setenv(arm.METADATA_ENV, "https://127.0.0.1:1/metadata")
        assert arm.live(arm.COMPUTE) and arm.live(arm.WORKSPACE)
        assert not arm.live("azure-native:keyvault:Vault")


def test_store_survives_the_plugin_process(tmp_path: Path) -> None:
    path = tmp_path / "arm.json"
    store.ArmStore(path).put("/Sub/RG/x", "t", {"a": 1}, {"b": 2})
    again = store.ArmStore(path)
    assert again.get("/sub/rg/X") == {"id": "/Sub/RG/x", "type": "t", "inputs": {"a": 1}, "outputs": {"b": 2}}


def test_build_cache_is_keyed_by_version_and_module_checksums(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("AZML_ENGINE_CACHE", str(tmp_path))
    key = build.cache_key()
    assert key.startswith("pulumi-v3.274.1-")
    assert build.pulumi_path() == tmp_path / key / "bin" / "pulumi"
    go = tmp_path / "go"
    go.mkdir()
    for name in ("go.mod", "go.sum"):
        (go / name).write_bytes((build.GO_MODULE / name).read_bytes())
    (go / "go.sum").write_text((go / "go.sum").read_text() + "example.com/x v1.0.0 h1:x\n")
    monkeypatch.setattr(build, "GO_MODULE", go)
    assert build.cache_key() != key

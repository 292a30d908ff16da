"""Preview-shaped requests over the analyzer gRPC protocol, built by hand from what the upstream code sends,
not from what this project's mocks produce.

What the engine sends (pulumi/pulumi, read at v3.259; docs/preflight.md cites each):
- Analyze, for every registered resource: its inputs after the provider's Check (azure-native v3 adds
  `azureApiVersion`), marshalled with KeepUnknowns: a value that comes from a resource not created yet is the
  sentinel "04da6b54-80e4-46f7-96ec-b56ff0331ba9" (pkg/resource/plugin/analyzer_plugin.go, rpc.go).
- AnalyzeStack, once, after every Analyze: each resource's OUTPUTS ("Unlike Analyze, AnalyzeStack is called
  on the final outputs", step_generator.go AnalyzeResources), with parent, dependencies and property
  dependencies. For a create in preview the outputs are azure-native's `PreviewOutputs`: the response shape,
  inputs copied where an output has the same name, everything else unknown; path parameters (computeName,
  workspaceName, resourceGroupName, a lock's scope) are not outputs (provider/pkg/convert/previewOutputs.go).
- In an update preview of a deployed stack the values are known: a same keeps its stored outputs.
"""

from __future__ import annotations

from typing import Any

import pytest

from preflight.analyzer import PolicyPack, Violation
from preflight.engine import FIRST_DEPLOY, Deployment
from preflight.program import run_program
from preflight.provider.model import UNKNOWN
from preflight.resource import Provider, Resource

SUB = "/subscriptions/00000000-0000-0000-0000-000000000000"
RG_ID = f"{SUB}/resourceGroups/rg-train"
ML_WORKSPACES = "Microsoft.MachineLearningServices/workspaces"
WS_ID = f"{RG_ID}/providers/Microsoft.MachineLearningServices/workspaces/ws-llm"
PROVIDER = Provider(
    "pulumi:providers:azure-native",
    "default_3_29_0",
    "urn:pulumi:preview::azml-gpu::pulumi:providers:azure-native::default_3_29_0",
    {"location": "eastus", "subscriptionId": SUB.rsplit("/", 1)[1], "version": "3.29.0"},
)


def urn(stack: str, type_: str, name: str) -> str:
    return f"urn:pulumi:{stack}::azml-gpu::{type_}::{name}"


def aml(**inner: Any) -> dict[str, Any]:
    """A Compute's `properties` (the AmlCompute union) as the program sends it: literals from the config."""
    props = {
        "vmSize": "Standard_ND96isr_H100_v5",
        "vmPriority": "Dedicated",
        "osType": "Linux",
        "enableNodePublicIp": True,
        "remoteLoginPortPublicAccess": "Disabled",
        "scaleSettings": {"minNodeCount": 0, "maxNodeCount": 4, "nodeIdleTimeBeforeScaleDown": "PT5M"},
        **inner,
    }
    return {
        "computeType": "AmlCompute",
        "computeLocation": "eastus",
        "disableLocalAuth": True,
        "properties": props,
    }


class Stack:
    """The resources of one preview, as the engine sends them."""

    def __init__(self, stack: str, deployed: bool) -> None:
        self.stack, self.deployed = stack, deployed
        self.resources: list[Resource] = []

    def add(self, type_: str, name: str, inputs: dict, outputs: dict, deps: dict | None = None) -> Resource:
        r = Resource(
            type_,
            name,
            urn(self.stack, type_, name),
            inputs,
            property_dependencies=deps or {},
            outputs=outputs,
            provider=PROVIDER,
        )
        self.resources.append(r)
        return r

    def known(self, value: Any) -> Any:
        """`value` in an update preview; the unknown sentinel in the first preview of a new stack."""
        return value if self.deployed else UNKNOWN

    def resource_group(self) -> Resource:
        inputs = {"resourceGroupName": "rg-train", "location": "eastus", "azureApiVersion": "2024-03-01"}
        outputs = {
            "azureApiVersion": "2024-03-01",
            "location": "eastus",
            "managedBy": UNKNOWN,
            "name": self.known("rg-train"),
            "properties": self.known({"provisioningState": "Succeeded"}),
            "tags": {},
            "type": self.known("Microsoft.Resources/resourceGroups"),
        }
        return self.add("azure-native:resources:ResourceGroup", "ws-llm-rg", inputs, outputs)

    def workspace(self, rg: Resource) -> Resource:
        inputs = {
            "workspaceName": "ws-llm",
            "resourceGroupName": self.known("rg-train"),
            "location": "eastus",
            "publicNetworkAccess": "Disabled",
            "azureApiVersion": "2025-12-01",
        }
        outputs = {
            "location": "eastus",
            "publicNetworkAccess": "Disabled",
            "azureApiVersion": "2025-12-01",
            "name": self.known("ws-llm"),
            "type": self.known("Microsoft.MachineLearningServices/workspaces"),
        }
        ws = self.add(
            "azure-native:machinelearningservices:Workspace",
            "ws-llm-mlw",
            inputs,
            outputs,
            {"resourceGroupName": [rg.urn]},
        )
        self.endpoint(rg, ws)
        return ws

    def endpoint(self, rg: Resource, ws: Resource) -> Resource:
        """The private workspace's private endpoint (else private-network: nobody could reach it)."""
        connection = {
            "name": "pe-ws-llm-amlworkspace",
            "privateLinkServiceId": self.known(f"{RG_ID}/providers/{ML_WORKSPACES}/ws-llm"),
            "groupIds": ["amlworkspace"],
        }
        inputs = {
            "privateEndpointName": "pe-ws-llm-amlworkspace",
            "resourceGroupName": self.known("rg-train"),
            "location": "eastus",
            "subnet": {"id": f"{RG_ID}/providers/Microsoft.Network/virtualNetworks/vnet/subnets/snet-pe"},
            "privateLinkServiceConnections": [connection],
            "azureApiVersion": "2024-05-01",
        }
        outputs = {
            "azureApiVersion": "2024-05-01",
            "location": "eastus",
            "name": self.known("pe-ws-llm-amlworkspace"),
            "privateLinkServiceConnections": [connection],
            "type": self.known("Microsoft.Network/privateEndpoints"),
        }
        deps = {"privateLinkServiceConnections": [ws.urn], "resourceGroupName": [rg.urn]}
        return self.add("azure-native:network:PrivateEndpoint", "ws-llm-pe", inputs, outputs, deps)

    def compute(self, name: str, rg: Resource, ws: Resource, **inner: Any) -> Resource:
        body = aml(**inner)
        inputs = {
            "computeName": name,
            "workspaceName": self.known("ws-llm"),
            "resourceGroupName": self.known("rg-train"),
            "location": "eastus",
            "properties": body,
            "azureApiVersion": "2025-12-01",
        }
        outputs = {
            "azureApiVersion": "2025-12-01",
            "identity": UNKNOWN,
            "location": "eastus",
            "name": self.known(name),
            "properties": body,
            "sku": UNKNOWN,
            "systemData": UNKNOWN,
            "tags": UNKNOWN,
            "type": self.known("Microsoft.MachineLearningServices/workspaces/computes"),
        }
        deps = {"workspaceName": [ws.urn], "resourceGroupName": [rg.urn]}
        return self.add("azure-native:machinelearningservices:Compute", name, inputs, outputs, deps)

    def lock(self, name: str, scope: Any, deps: dict | None = None) -> Resource:
        inputs = {"lockName": name, "level": "CanNotDelete", "scope": scope, "azureApiVersion": "2020-05-01"}
        outputs = {
            "azureApiVersion": "2020-05-01",
            "level": "CanNotDelete",
            "name": self.known(name),
            "notes": UNKNOWN,
            "owners": UNKNOWN,
            "systemData": UNKNOWN,
            "type": self.known("Microsoft.Authorization/locks"),
        }
        return self.add("azure-native:authorization:ManagementLockByScope", name, inputs, outputs, deps)


QUOTAS = {"quota-reservation": {"quotas": {"eastus": {"standardNDSH100v5Family": 384, "total": 500}}}}
# The PSRule-counterpart advisories (judged in tests/policies/test_policies_peer_rules.py) would report on
# every hand-built workspace and public cluster here; these previews pin the other policies' verdicts.
PEER_RULES_OFF = {"workspace-user-assigned-identity": "disabled", "compute-in-virtual-network": "disabled"}


def preview(pack: PolicyPack, stack: Stack, config: dict | None = None) -> list[Violation]:
    """One preview: Configure, Analyze every resource, then AnalyzeStack. None of the pack's answers may be
    pulumi-policy's "can't run policy ... during preview" (a policy that read an unknown value)."""
    pack.configure({**QUOTAS, **PEER_RULES_OFF, **(config or {})})
    found: list[Violation] = []
    for r in stack.resources:
        found.extend(pack.analyze(r))
    found.extend(pack.analyze_stack(stack.resources))
    assert not [v.message for v in found if v.message.startswith("can't run policy")]
    return found


def verdicts(found: list[Violation]) -> list[tuple[str, str, str]]:
    return [(v.policy, v.enforcement, v.urn.split("::")[-1]) for v in found]


def new_and_deployed(stack: str) -> list[Stack]:
    return [Stack(f"{stack}-new", deployed=False), Stack(f"{stack}-deployed", deployed=True)]


@pytest.mark.parametrize("deployed", [False, True], ids=["first-deploy", "update"])
def test_a_compliant_stack_passes_both_previews_without_a_cant_run_advisory(
    pack: PolicyPack, deployed: bool
) -> None:
    s = Stack("ok", deployed)
    rg = s.resource_group()
    ws = s.workspace(rg)
    s.compute("h100-x4", rg, ws)
    storage = s.add(
        "azure-native:storage:StorageAccount",
        "ws-llm-st",
        {
            "accountName": "st",
            "resourceGroupName": s.known("rg-train"),
            "minimumTlsVersion": "TLS1_2",
            "allowBlobPublicAccess": False,
        },
        {"minimumTlsVersion": "TLS1_2", "allowBlobPublicAccess": False, "name": s.known("st")},
        {"resourceGroupName": [rg.urn]},
    )
    s.lock(
        "lock-st",
        s.known(f"{RG_ID}/providers/Microsoft.Storage/storageAccounts/st"),
        {"scope": [storage.urn]},
    )
    assert verdicts(preview(pack, s)) == []


@pytest.mark.parametrize(
    ("inner", "policy"),
    [
        ({"vmSize": "Standard_NC24ads_A100_v4"}, "multi-node-requires-rdma"),  # no InfiniBand, max 4 nodes
        (
            {
                "vmSize": "Standard_NC6s_v3",
                "scaleSettings": {"maxNodeCount": 1, "nodeIdleTimeBeforeScaleDown": "PT5M"},
            },
            "no-retired-vm-series",
        ),  # NCv3 retired 2025-09-30
        (
            {
                "remoteLoginPortPublicAccess": "Enabled",
                "userAccountCredentials": {"adminUserName": "azureuser", "adminUserPassword": "Secr3t!"},
            },
            "ssh-decided-at-creation",
        ),
    ],
    ids=["non-RDMA multi-node", "retired size", "SSH password"],
)
def test_cluster_violations_are_mandatory_in_the_first_preview_too(
    pack: PolicyPack, inner: dict, policy: str
) -> None:
    for s in new_and_deployed(policy):
        rg = s.resource_group()
        ws = s.workspace(rg)
        s.compute("bad", rg, ws, **inner)
        found = verdicts(preview(pack, s, {"no-retired-vm-series": {"evaluation_date": "2026-11-30"}}))
        assert (policy, "mandatory", "bad") in found, (s.stack, found)


def test_a_lock_on_a_resource_group_created_in_the_stack_fails_the_first_preview(pack: PolicyPack) -> None:
    """The scope is the group's id: unknown until it is created. AnalyzeStack's property dependencies name
    the group; no-resource-group-locks-by-dependency decides from them."""
    new, deployed = new_and_deployed("rg-in-stack")
    for s in (new, deployed):
        rg = s.resource_group()
        s.workspace(rg)
        s.lock("rg-lock", s.known(RG_ID), {"scope": [rg.urn]})
    assert verdicts(preview(pack, new)) == [("no-resource-group-locks-by-dependency", "mandatory", "rg-lock")]
    assert verdicts(preview(pack, deployed)) == [("no-resource-group-locks", "mandatory", "rg-lock")]


def test_a_lock_on_an_adopted_resource_group_fails_both_previews(pack: PolicyPack) -> None:
    """An existing group: its id is a literal, known in every preview, and only Analyze sees it (a lock's
    outputs have no scope)."""
    for s in new_and_deployed("adopted"):
        rg = s.resource_group()
        s.workspace(rg)
        s.lock("rg-lock", RG_ID)
        assert verdicts(preview(pack, s)) == [("no-resource-group-locks", "mandatory", "rg-lock")], s.stack


def test_the_replayed_first_preview_matches_the_upstream_shape() -> None:
    """The gate's replay (preflight.engine + azure_native under Pulumi mocks) sends the prod Compute as the
    engine does in the first preview: unknown exactly where a value comes from a resource not created yet."""
    program = run_program("prod", deployment=Deployment(FIRST_DEPLOY, provider_location="eastus"))
    compute = next(r for r in program.resources if r.name == "h100-x4" and r.custom)
    unknown_inputs = sorted(k for k, v in compute.inputs.items() if v == UNKNOWN)
    assert unknown_inputs == ["resourceGroupName", "workspaceName"]
    assert compute.inputs["azureApiVersion"] == "2025-12-01"
    assert sorted(compute.outputs) == [
        "azureApiVersion",
        "identity",
        "location",
        "name",
        "properties",
        "sku",
        "systemData",
        "tags",
        "type",
    ]
    # no input of those names: unknown (the program sets no sku)
    assert {k for k, v in compute.outputs.items() if v == UNKNOWN} == {"name", "sku", "systemData", "type"}
    assert compute.outputs["properties"] == compute.inputs["properties"]  # the union is echoed
    assert compute.property_dependencies["workspaceName"] and compute.id is None
    # Prod has no locks (a managed network asks for none): the capacity stack's show the lock shape.
    locked = run_program("capacity", deployment=Deployment(FIRST_DEPLOY, provider_location="eastus"))
    lock = next(r for r in locked.resources if r.type == "azure-native:authorization:ManagementLockByScope")
    assert lock.inputs["scope"] == UNKNOWN and "scope" not in lock.outputs
    assert lock.property_dependencies["scope"]


def test_a_secret_input_reaches_the_policies_as_its_value(pack: PolicyPack) -> None:
    """The engine marshals secrets with KeepSecrets (a `{sig: secret, value}` object); pulumi-policy unwraps
    them for Analyze (pulumi_policy/deserialize.py, proxy_secrets=False): an admin password the program marked
    secret is still caught."""
    s = Stack("secret", deployed=False)
    rg = s.resource_group()
    ws = s.workspace(rg)
    secret = {"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", "value": "Secr3t!"}
    s.compute(
        "pw",
        rg,
        ws,
        remoteLoginPortPublicAccess="Enabled",
        userAccountCredentials={"adminUserName": "azureuser", "adminUserPassword": secret},
    )
    found = preview(pack, s)
    assert ("ssh-decided-at-creation", "mandatory", "pw") in verdicts(found)
    assert any("an admin password is set on the nodes" in v.message for v in found)

"""The whole gate path over the analyzer gRPC protocol: fixture stacks (tests/fixtures/stacks/<name>/:
Pulumi.<name>.yaml + policy.json) through the real program under mocks and the real pack process."""

from __future__ import annotations

from dataclasses import replace
from datetime import date
from pathlib import Path

import pytest

from preflight.analyzer import PolicyPack
from preflight.engine import FIRST_DEPLOY, UPDATE, Deployment
from preflight.gate import (
    GateResult,
    _cluster_rows,
    _clusters,
    _quota_rows,
    _resources,
    default_provider,
    evaluate,
)
from preflight.program import flatten_config, read_stack_config, run_program
from preflight.provider.model import UNKNOWN
from preflight.resource import Resource

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "stacks"
ON = date(2026, 11, 30)
STACK_URN = ""  # stack policies report against the stack, not a resource


def gate(name: str, pack: PolicyPack, on: date = ON) -> GateResult:
    folder = FIXTURES / name
    return evaluate(
        name,
        config=read_stack_config(name, folder),
        policy_config_path=folder / "policy.json",
        on=on,
        pack=pack,
    )


def found(result: GateResult, kind: str | None = None) -> list[tuple[str, str, str]]:
    """(policy, enforcement, resource name or '' for the stack) of every violation, in pack order: of one
    evaluation (`kind`), or every distinct one. A stack-level finding carries the root stack's URN, as the
    engine reports it."""
    if kind is None:
        violations = result.violations
    else:
        violations = next(e.violations for e in result.evaluations if e.kind == kind)
    return [
        (v.policy, v.enforcement, "" if ":pulumi:Stack::" in v.urn else v.urn.split("::")[-1])
        for v in violations
    ]


# (fixture, exit code, violations)
CASES = [
    ("clean", 0, []),
    ("clean-vnet", 0, []),
    ("no-rdma", 1, [("multi-node-requires-rdma", "mandatory", "a100-x2")]),
    ("retired", 1, [("no-retired-vm-series", "mandatory", "v100")]),
    ("over-quota", 1, [("quota-reservation", "mandatory", "")]),
    (
        "quota-unknown",
        0,
        [("quota-reservation-unknown", "advisory", ""), ("quota-reservation-unknown", "advisory", "")],
    ),
    (
        "warm-nodes",
        0,
        [("min-nodes-zero", "advisory", "h100-x2"), ("idle-timer-bounds", "advisory", "h100-x2")],
    ),
    ("lowpri-multi", 0, [("low-priority-multi-node", "advisory", "h100-spot")]),
    ("cross-region", 0, [("cross-region-compute", "advisory", "h100-wus3")]),
    ("private-unreachable", 1, [("private-network", "mandatory", "ws-private-unreachable-mlw")]),
    (
        "public-workspace",
        1,
        [
            ("secure-defaults", "mandatory", "ws-public-workspace-mlw"),
            ("secure-defaults", "mandatory", "h100-x2"),
        ],
    ),
]


@pytest.mark.parametrize(("name", "exit_code", "violations"), CASES, ids=[c[0] for c in CASES])
def test_fixture_stack(pack: PolicyPack, name: str, exit_code: int, violations: list[tuple]) -> None:
    """Both previews reach the same verdict: the first of a new stack (unknowns wherever the engine has
    them) and the update against the stack deployed as declared; no policy answers "can't run"."""
    result = gate(name, pack)
    assert result.errors == []
    assert [e.kind for e in result.evaluations] == ["first-deploy", "update"]
    assert found(result, "first-deploy") == violations
    assert found(result, "update") == violations
    # merged: each once, sorted by level, policy, resource and message (the same bytes every run)
    assert sorted(found(result)) == sorted(violations)
    assert result.violations == sorted(
        result.violations, key=lambda v: (v.enforcement != "mandatory", v.policy, v.urn, v.message)
    )
    assert not [v for v in result.violations if v.message.startswith("can't run policy")]
    assert [e.exit_code for e in result.evaluations] == [exit_code, exit_code]
    assert result.exit_code == exit_code
    document = result.as_json()
    assert document["stack"] == name
    assert document["summary"]["exit_code"] == exit_code
    assert document["summary"]["violations"] == {
        "mandatory": sum(v[1] == "mandatory" for v in violations),
        "advisory": sum(v[1] == "advisory" for v in violations),
    }
    assert sorted((v["policy"], v["enforcement"]) for v in document["violations"]) == sorted(
        v[:2] for v in violations
    )


def test_retired_fixture_messages_follow_the_date(pack: PolicyPack) -> None:
    """--date moves the evaluation: retired on 2026-11-30, announced (advisory) on 2025-06-01, fine in
    2024."""
    late, soon, early = (
        gate("retired", pack),
        gate("retired", pack, date(2025, 6, 1)),
        gate("retired", pack, date(2024, 1, 1)),
    )
    assert [v.message for v in late.violations] == [
        "Standard_NC6s_v3 (NCv3) was retired on 2025-09-30 in eastus (evaluated on 2026-11-30): Azure cannot "
        "provision it and deallocates remaining VMs, so the cluster never gets a node. Fix: recreate the "
        "cluster on "
        "a current size (e.g. Standard_NC40ads_H100_v5 or Standard_ND96isr_H100_v5)."
    ]
    assert found(soon) == [("vm-series-retiring-soon", "advisory", "v100")]
    assert soon.violations[0].message == (
        "Standard_NC6s_v3 (NCv3) retires on 2025-09-30 in eastus, 121 days after 2025-06-01: from then the "
        "cluster "
        "cannot get nodes and must be recreated (size cannot be changed in place). Fix: plan the move to a "
        "current "
        "size now."
    )
    assert (late.exit_code, soon.exit_code, early.exit_code, found(early)) == (1, 0, 0, [])
    assert soon.as_json()["summary"]["evaluation_date"] == "2025-06-01"


def test_over_quota_message_and_plan(pack: PolicyPack) -> None:
    result = gate("over-quota", pack)
    assert [v.message for v in result.violations] == [
        "eastus standardNDSH100v5Family: h100-x4 (4 x 96 vCPUs of Standard_ND96isr_H100_v5) reserves 384 "
        "vCPUs, "
        "quota is 192: clusters hold quota even at zero nodes, so jobs queue for hours once the pool is "
        "exhausted. "
        "Fix: lower max_instances, delete unused clusters, or request 192 more vCPUs of quota."
    ]
    assert [
        (q["region"], q["label"], q["reserved_vcpus"], q["quota"], q["status"]) for q in result.quota
    ] == [
        ("eastus", "standardNDSH100v5Family", 384, 192, "over"),
        ("eastus", "total regional dedicated vCPUs", 384, 500, "ok"),
    ]
    (row,) = result.clusters
    assert {
        k: row[k]
        for k in ("name", "size", "gpus_per_node", "max_nodes", "region", "tier", "idle_seconds", "ssh")
    } == {
        "name": "h100-x4",
        "size": "Standard_ND96isr_H100_v5",
        "gpus_per_node": 8,
        "max_nodes": 4,
        "region": "eastus",
        "tier": "dedicated",
        "idle_seconds": 300,
        "ssh": "Disabled",
    }


def test_invalid_stack_config_lists_every_problem(pack: PolicyPack) -> None:
    result = gate("invalid-config", pack)
    assert result.exit_code == 2
    assert sorted(result.errors) == sorted(
        [
            "azml-gpu:clusters[0].max_instances: 0 is below 1; use at least 1 (min_instances: 0 still scales "
            "to zero)",
            "azml-gpu:clusters[1].name: 'h100-x2' is already the name of clusters[0]; give each cluster its "
            "own name",
            "azml-gpu:clusters[1].size: 'Standard_Bogus' is neither in the size catalog nor a valid Azure "
            "size name; "
            "did you mean Standard_ND40rs_v2?",
        ]
    )
    assert result.violations == []


def test_invalid_policy_config_lists_every_problem(pack: PolicyPack) -> None:
    folder = FIXTURES / "clean"
    result = evaluate(
        "clean",
        config=read_stack_config("clean", folder),
        policy_config={
            "no-such-policy": "mandatory",
            "min-nodes-zero": {"allow": "h100-x2"},
            "idle-timer-bounds": {"max_secs": 60},
            "secure-defaults": "strict",
        },
        pack=pack,
    )
    # What the CLI refuses is refused (config.go parsePolicyConfigs: a level string must be a level; the
    # schema's type); what it accepts but no policy reads is a note (an unknown name with a level is passed
    # on to Configure; an unknown property passes JSON-schema validation).
    assert result.exit_code == 2
    assert result.errors == [
        "policy config: secure-defaults: 'strict' is not an enforcement level; use one of advisory, "
        "mandatory, remediate, disabled",
        "policy config: min-nodes-zero.allow: expected a list, got 'h100-x2'; write it as a list: "
        '["h100-x2"]',
    ]
    assert result.notes == [
        "idle-timer-bounds.max_secs: unknown property, accepted by the Pulumi CLI but read by no policy; did "
        "you mean max_seconds?",
        "no-such-policy: no such policy in the pack; the Pulumi CLI passes it on unused; remove it",
    ]


@pytest.mark.parametrize(
    ("quotas", "expected"),
    [
        (
            {"eastuss": {"standardNDSH100v5Family": 384, "total": 500}},
            [
                "policy config: quota-reservation.quotas.eastuss: 'eastuss' is not a known Azure region, so "
                "it checks no cluster's quota; did you mean eastus?"
            ],
        ),
        (
            {"eastus": {"standardNDSH100v5Famly": 384, "Total": 500, "lowPriority": 100}},
            [
                "policy config: quota-reservation.quotas.eastus.standardNDSH100v5Famly: not a quota family "
                "the size catalog knows, nor total or lowPriority, so it checks no cluster's quota; did you "
                "mean standardNDSH100v5Family?"
            ],
        ),
        ({"East US": {"standard ndsh100v5 family": 384, "TOTAL": 500, "lowpriority": 100}}, []),
    ],
    ids=["region-typo", "family-typo", "any-spelling-ok"],
)
def test_quota_config_typos_are_config_errors(pack: PolicyPack, quotas: dict, expected: list[str]) -> None:
    """A misspelt region or quota family matches no pool: exit 2 rather than advisories and exit 0."""
    result = evaluate(
        "clean",
        config=read_stack_config("clean", FIXTURES / "clean"),
        policy_config={"quota-reservation": {"quotas": quotas}},
        pack=pack,
    )
    assert result.errors == expected
    if expected:
        assert (result.exit_code, result.violations) == (2, [])
    else:  # the keys reach their pools: the family row is checked against 384
        assert ("standardNDSH100v5Family", 384) in [(q["label"], q["quota"]) for q in result.quota]


def test_analyzer_info_lists_the_registry(pack: PolicyPack) -> None:
    """GetAnalyzerInfo: the registry's policies, in order, with their enforcement levels and config
    schemas."""
    from pulumi.runtime.proto import analyzer_pb2

    levels = {analyzer_pb2.ADVISORY: "advisory", analyzer_pb2.MANDATORY: "mandatory"}
    assert pack.info is not None and pack.info.name == "azml-gpu"
    assert [(p.name, levels[p.enforcementLevel]) for p in pack.info.policies] == [
        ("multi-node-requires-rdma", "mandatory"),
        ("no-retired-vm-series", "mandatory"),
        ("vm-series-retiring-soon", "advisory"),
        ("no-resource-group-locks", "mandatory"),
        ("no-resource-group-locks-by-dependency", "mandatory"),
        ("no-locks-on-cluster-network", "mandatory"),
        ("no-locks-on-granted-resources", "mandatory"),
        ("ssh-decided-at-creation", "mandatory"),
        ("quota-reservation", "mandatory"),
        ("quota-reservation-unknown", "advisory"),
        ("min-nodes-zero", "advisory"),
        ("idle-timer-bounds", "advisory"),
        ("idle-timer-parseable", "mandatory"),
        ("low-priority-multi-node", "advisory"),
        ("cross-region-compute", "advisory"),
        ("secure-defaults", "advisory"),
        ("no-privileged-role-assignments", "mandatory"),
        ("no-privileged-role-assignments-by-dependency", "mandatory"),
        ("private-network-inputs", "advisory"),
        ("private-network", "mandatory"),
        ("private-network-cost", "advisory"),
        ("compute-in-virtual-network", "advisory"),
        ("workspace-user-assigned-identity", "advisory"),
    ]
    schemas = {
        p.name: sorted(p.configSchema.properties) for p in pack.info.policies if p.configSchema.properties
    }
    assert schemas == {
        "no-retired-vm-series": ["evaluation_date"],
        "vm-series-retiring-soon": ["evaluation_date", "warn_days"],
        "quota-reservation": ["quotas"],
        "min-nodes-zero": ["allow"],
        "idle-timer-bounds": ["max_seconds", "min_seconds"],
        "cross-region-compute": ["acknowledged"],
        "secure-defaults": ["public_workspaces", "ssh_clusters"],
        "private-network": ["external_endpoints"],
        "compute-in-virtual-network": ["acknowledged"],
    }


def _clean_resources(kind: str = UPDATE) -> list[Resource]:
    """clean-vnet's resources as the engine sends them in one preview (the gate's own replay)."""
    folder = FIXTURES / "clean-vnet"
    config = read_stack_config("clean-vnet", folder)
    deployment = Deployment(kind, provider_location="eastus")
    program = run_program("clean-vnet", config=config, deployment=deployment)
    assert program.ok, program.error
    return _resources(program, default_provider("clean-vnet", "azml-gpu", flatten_config(config)))


def _stack_urn(resources: list[Resource]) -> str:
    return next(r.urn for r in resources if r.type == "pulumi:pulumi:Stack")


@pytest.mark.parametrize("kind", [FIRST_DEPLOY, UPDATE])
def test_locks_the_program_cannot_declare_are_caught_over_grpc(pack: PolicyPack, kind: str) -> None:
    """components/ only locks individual resources; a hand-written resource-group lock or a lock on the
    cluster's subnet (added next to the real program's resources, with literal scopes: known in every
    preview) is caught, in the first preview of a new stack as in an update."""
    pack.configure({"secure-defaults": {"ssh_clusters": ["h100-x2"]}})
    resources = _clean_resources(kind)
    subnet = next(
        r.inputs["properties"]["properties"]["subnet"]["id"]
        for r in resources
        if r.type == "azure-native:machinelearningservices:Compute"
    )
    stack = _stack_urn(resources)
    extra = [
        Resource(
            "azure-native:authorization:ManagementLockAtResourceGroupLevel",
            "rg-lock",
            f"{stack}::rg-lock",
            {"resourceGroupName": "rg-clean-vnet", "level": "CanNotDelete", "azureApiVersion": "2020-05-01"},
            parent=stack,
            outputs={"level": "CanNotDelete", "name": UNKNOWN if kind == FIRST_DEPLOY else "rg-lock"},
        ),
        Resource(
            "azure-native:authorization:ManagementLockByScope",
            "subnet-lock",
            f"{stack}::subnet-lock",
            {"scope": subnet, "level": "ReadOnly", "azureApiVersion": "2020-05-01"},
            parent=stack,
            outputs={"level": "ReadOnly", "name": UNKNOWN if kind == FIRST_DEPLOY else "subnet-lock"},
        ),
    ]
    violations = []
    for r in resources + extra:
        violations.extend(pack.analyze(r))
    violations.extend(pack.analyze_stack(resources + extra))
    assert [(v.policy, v.enforcement, v.urn) for v in violations if v.enforcement == "mandatory"] == [
        ("no-resource-group-locks", "mandatory", f"{stack}::rg-lock"),
        ("no-locks-on-cluster-network", "mandatory", f"{stack}::subnet-lock"),
    ]
    subnet_lock = next(v for v in violations if v.policy == "no-locks-on-cluster-network")
    assert subnet_lock.message == (
        f"ReadOnly lock 'subnet-lock' on the subnet ({subnet}) used by cluster(s) h100-x2: Azure ML creates, "
        "updates and deletes these network resources as it scales, so scaling fails and the cluster sticks "
        "at 'resizing'. Fix: remove the lock; lock the storage, key vault and registry instead."
    )


@pytest.mark.parametrize("kind", [FIRST_DEPLOY, UPDATE])
def test_privileged_role_assignments_the_program_cannot_declare_are_caught_over_grpc(
    pack: PolicyPack, kind: str
) -> None:
    """components/ grants roles on single resources only; a hand-written Owner on the stack's resource group
    (scope computed from the group: unknown in the first preview of a new stack, known in an update) is caught
    in both evaluations, by the companion in the first and on the inputs in the update."""
    import azroles

    pack.configure({"secure-defaults": {"ssh_clusters": ["h100-x2"]}})
    resources = _clean_resources(kind)
    stack = _stack_urn(resources)
    group = next(r for r in resources if r.type == "azure-native:resources:ResourceGroup")
    scope = UNKNOWN if kind == FIRST_DEPLOY else group.id
    owner = Resource(
        "azure-native:authorization:RoleAssignment",
        "owner-on-rg",
        f"{stack}::owner-on-rg",
        {
            "roleAssignmentName": "9c1e8f6a-0000-4000-8000-000000000001",
            "scope": scope,
            "principalId": "00000000-0000-0000-0000-00000000a001",
            "principalType": "Group",
            "roleDefinitionId": azroles.definition_id("Owner", "00000000-0000-0000-0000-000000000000"),
            "azureApiVersion": "2022-04-01",
        },
        parent=stack,
        outputs={"name": UNKNOWN if kind == FIRST_DEPLOY else "9c1e8f6a-0000-4000-8000-000000000001"},
        property_dependencies={"scope": (group.urn,)},
    )
    violations = []
    for r in [*resources, owner]:
        violations.extend(pack.analyze(r))
    violations.extend(pack.analyze_stack([*resources, owner]))
    expected = "no-privileged-role-assignments" + ("-by-dependency" if kind == FIRST_DEPLOY else "")
    assert [(v.policy, v.urn) for v in violations if v.enforcement == "mandatory"] == [
        (expected, f"{stack}::owner-on-rg")
    ]


def test_cluster_settings_the_program_cannot_declare_are_caught_over_grpc(pack: PolicyPack) -> None:
    """A cluster edited by hand (SSH left NotSpecified, an admin password, a free-text idle timer) through
    Analyze: ssh-decided-at-creation and idle-timer-parseable are mandatory."""
    pack.configure({"secure-defaults": {"ssh_clusters": ["h100-x2"]}})  # clean-vnet's SSH is intended
    compute = next(
        r for r in _clean_resources(FIRST_DEPLOY) if r.type == "azure-native:machinelearningservices:Compute"
    )
    inner = compute.inputs["properties"]["properties"]
    edited = {
        **compute.inputs,
        "properties": {
            **compute.inputs["properties"],
            "properties": {
                **inner,
                "remoteLoginPortPublicAccess": "NotSpecified",
                "userAccountCredentials": {"adminUserName": "azureuser", "adminUserPassword": "Secr3t!"},
                "scaleSettings": {**inner["scaleSettings"], "nodeIdleTimeBeforeScaleDown": "half an hour"},
            },
        },
    }
    hand_edited = Resource(compute.type, compute.name, compute.urn, edited, parent=compute.parent)
    assert [(v.policy, v.enforcement) for v in pack.analyze(hand_edited)] == [
        ("ssh-decided-at-creation", "mandatory"),
        ("ssh-decided-at-creation", "mandatory"),
        ("idle-timer-parseable", "mandatory"),
    ]
    assert pack.analyze(compute) == []


def test_report_groups_violations_by_level_plain_and_rich(pack: PolicyPack) -> None:
    import io

    from preflight.report import render

    result = gate("warm-nodes", pack)
    plain, rich = io.StringIO(), io.StringIO()
    render(result, plain, rich_output=False)
    render(result, rich, rich_output=True)
    text = plain.getvalue()
    assert "Policy gate for stack warm-nodes (retirement evaluated on 2026-11-30)" in text
    assert (
        "  h100-x2  Standard_ND96isr_H100_v5  8          2          eastus  dedicated  7200 s  Disabled"
        in text
    )
    assert "Evaluation: first deploy: every resource created (20 create; 23 input values unknown" in text
    assert "Evaluation: update against the stack deployed as declared (synthetic state) (20 same; 0" in text
    assert text.count("  ADVISORY (2)\n    idle-timer-bounds ") == 2  # sorted by policy, then resource
    assert text.count("  PASS (0 mandatory, 2 advisory)\n") == 2
    assert "MANDATORY" not in text
    assert text.endswith("PASS: no mandatory violation in either evaluation (2 advisory).\n")
    fancy = rich.getvalue()
    assert "ADVISORY (2)" in fancy and "h100-x2" in fancy and "┏" in fancy
    assert "PASS: no mandatory violation in either evaluation (2 advisory)." in fancy


def test_plan_rows_read_clusters_as_the_policies_do() -> None:
    """The gate's cluster and quota rows come from policies.clusters.aml_cluster and the quota-reservation
    policy's reservation: priority in any case, region in any spelling, the idle timer by the one parser."""
    compute = "azure-native:machinelearningservices:Compute"
    inputs = {
        "computeName": "spot-a100",
        "location": "East US",
        "properties": {
            "computeType": "AmlCompute",
            "properties": {
                "vmSize": "Standard_NC24ads_A100_v4",
                "vmPriority": "lowpriority",
                "scaleSettings": {
                    "minNodeCount": 0.0,
                    "maxNodeCount": 3.0,
                    "nodeIdleTimeBeforeScaleDown": "P1M",
                },
            },
        },
    }
    workspace = Resource(
        "azure-native:machinelearningservices:Workspace", "ws", "urn:ws", {"location": "eastus"}
    )
    clusters = _clusters([workspace, Resource(compute, "spot", "urn:spot", inputs)])
    (row,) = _cluster_rows(clusters)
    assert row == {
        "name": "spot-a100",
        "urn": "urn:spot",
        "size": "Standard_NC24ads_A100_v4",
        "gpus_per_node": 1,
        "vcpus_per_node": 24,
        "quota_family": "StandardNCADSA100v4Family",
        "min_nodes": 0,
        "max_nodes": 3,
        "region": "eastus",
        "tier": "low_priority",
        "idle": "P1M",
        "idle_seconds": None,
        "ssh": "NotSpecified",
    }
    assert [
        (q["region"], q["kind"], q["reserved_vcpus"], q["quota"], q["status"], q["clusters"])
        for q in _quota_rows(clusters, {"East US": {"lowPriority": 48}})
    ] == [("eastus", "low-priority", 72, 48, "over", ["spot-a100"])]


def test_update_against_a_state_lists_the_resources_the_change_deletes(
    pack: PolicyPack, tmp_path: Path
) -> None:
    """A cluster removed from the config is a delete in the update evaluation (deletes are never analyzed);
    the state's provider entry is the engine's, not a delete of the stack."""
    import copy
    import json

    from preflight.program import exported_state

    state = exported_state(run_program("prod"))
    state["deployment"]["resources"].append(
        {
            "urn": "urn:pulumi:prod::azml-gpu::pulumi:providers:azure-native::default_3_28_0",
            "type": "pulumi:providers:azure-native",
            "custom": True,
            "id": "x",
            "inputs": {},
            "outputs": {},
        }
    )
    path = tmp_path / "state.json"
    path.write_text(json.dumps(state))
    config = copy.deepcopy(read_stack_config("prod"))
    config["azml-gpu:clusters"] = [c for c in config["azml-gpu:clusters"] if c["name"] != "a100-spot"]
    result = evaluate("prod", config=config, state_path=path, pack=pack)
    assert result.errors == []
    update = result.evaluations[1]
    # component and compute, and the cluster identity's role assignment (storage; no AcrPull: Azure grants it)
    assert sorted(u.split("::")[-1] for u in update.deletes) == [
        "a100-spot",
        "a100-spot",
        "ws-llm-access-a100-spot-st-blob-contributor",
    ]
    assert update.replacements == []


def test_the_program_record_is_the_record_the_pack_is_sent() -> None:
    """One analyzed-resource record (preflight.resource.Resource): the gate sends run_program's resources
    unchanged but for the provider the engine attaches to custom azure-native resources."""
    result = run_program("prod")
    provider = default_provider("prod", result.project, result.config)
    sent = _resources(result, provider)
    assert all(type(r) is Resource for r in sent)
    custom = [r for r in sent if r.custom and r.type.startswith("azure-native:")]
    assert custom and all(r.provider == provider for r in custom)
    assert [replace(r, provider=None) for r in sent if r.urn != provider.urn] == result.resources

"""The fixture stacks (tests/fixtures/stacks/<name>/: Pulumi.<name>.yaml and policy.json) through the real
gate: each gives the verdict its first line documents, in both evaluations; retirement follows --date; the
plan rows and messages; invalid stack and policy configs list every problem at once (exit 2)."""

from __future__ import annotations

import json

import pytest

from tests.integration.gate.runner import Command, Gates, Outcome, Spec
from tests.integration.gate.specs import FIXTURE_RUNS, FIXTURE_VERDICTS, FIXTURES, fixture

CLEAN = FIXTURES / "clean"


def clean_with(name: str, policy: dict) -> Spec:
    """The clean fixture stack with another policy config."""
    return Spec(name, "clean", config_path=str(CLEAN / "Pulumi.clean.yaml"), policy_text=json.dumps(policy))


INVALID_CONFIG = fixture("invalid-config", judge=())
INVALID_POLICY = clean_with(
    "clean-invalid-policy-config",
    {
        "no-such-policy": "mandatory",
        "min-nodes-zero": {"allow": "h100-x2"},
        "idle-timer-bounds": {"max_secs": 60},
        "secure-defaults": "strict",
    },
)
QUOTA_REGION_TYPO = clean_with(
    "clean-quota-region-typo",
    {"quota-reservation": {"quotas": {"eastuss": {"standardNDSH100v5Family": 384}}}},
)
QUOTA_FAMILY_TYPO = clean_with(
    "clean-quota-family-typo",
    {"quota-reservation": {"quotas": {"eastus": {"standardNDSH100v5Famly": 384, "Total": 500}}}},
)
QUOTA_ANY_SPELLING = clean_with(
    "clean-quota-any-spelling",
    {"quota-reservation": {"quotas": {"East US": {"standard ndsh100v5 family": 384, "TOTAL": 500}}}},
)
ALLOW_LIST_TYPO = clean_with(
    "clean-allow-list-typo",
    {"secure-defaults": {"ssh_clusters": ["h100-x3"]}, "min-nodes-zero": {"allow": ["h100-x2"]}},
)
RETIRED = FIXTURES / "retired"
RETIRING_SOON = Command(
    "retired-on-2025-06-01",
    (
        "retired",
        "--json",
        "--date",
        "2025-06-01",
        "--config-file",
        str(RETIRED / "Pulumi.retired.yaml"),
        "--policy-config",
        str(RETIRED / "policy.json"),
    ),
)
RUNS = [
    *FIXTURE_RUNS.values(),
    INVALID_CONFIG,
    INVALID_POLICY,
    QUOTA_REGION_TYPO,
    QUOTA_FAMILY_TYPO,
    QUOTA_ANY_SPELLING,
    ALLOW_LIST_TYPO,
    RETIRING_SOON,
]


@pytest.fixture(scope="module")
def runs(gates: Gates) -> dict[str, Outcome]:
    return {o.name: o for o in gates.run(*RUNS)}


def found(violations: list[dict]) -> list[tuple[str, str, str]]:
    """(policy, enforcement, resource name, or '' for the stack: the engine reports a stack policy's finding
    against the root stack)."""
    return [
        (v["policy"], v["enforcement"], "" if ":pulumi:Stack::" in v["urn"] else v["urn"].split("::")[-1])
        for v in violations
    ]


def test_every_fixture_stack_has_a_documented_verdict() -> None:
    """A fixture added to tests/fixtures/stacks (a folder with its stack file and policy.json) is gated
    here."""
    folders = {p.parent.name for p in FIXTURES.glob("*/policy.json")}
    assert folders == set(FIXTURE_VERDICTS) | {"invalid-config"}


@pytest.mark.parametrize("name", sorted(FIXTURE_VERDICTS))
def test_fixture_stack_verdict_in_both_evaluations(runs: dict[str, Outcome], name: str) -> None:
    exit_code, expected = FIXTURE_VERDICTS[name]
    outcome = runs[FIXTURE_RUNS[name].name]
    document = outcome.document
    assert outcome.errors == []
    assert [e["kind"] for e in document["evaluations"]] == ["first-deploy", "update"]
    for evaluation in document["evaluations"]:
        assert sorted(found(evaluation["violations"])) == sorted(expected), evaluation["kind"]
        assert evaluation["exit_code"] == exit_code
    assert document["evaluations"][1]["steps"] == {"same": sum(document["evaluations"][0]["steps"].values())}
    # merged: each once, with the evaluations it was found in, mandatory first, then by policy and resource
    assert sorted(found(document["violations"])) == sorted(expected)
    assert all(v["evaluations"] == ["first-deploy", "update"] for v in document["violations"])
    order = [
        (v["enforcement"] != "mandatory", v["policy"], v["urn"], v["message"]) for v in document["violations"]
    ]
    assert order == sorted(order)
    # no policy read an unknown value the engine sent (pulumi-policy's "can't run policy ... during preview")
    assert not [v for v in document["violations"] if v["message"].startswith("can't run policy")]
    assert outcome.exit_code == document["summary"]["exit_code"] == exit_code
    assert document["summary"]["evaluation_date"] == "2026-11-30"
    assert document["summary"]["violations"] == {
        "mandatory": sum(v[1] == "mandatory" for v in expected),
        "advisory": sum(v[1] == "advisory" for v in expected),
    }


def test_retirement_follows_the_date(runs: dict[str, Outcome]) -> None:
    """Standard_NC6s_v3 (NCv3) retired on 2025-09-30: mandatory on 2026-11-30; announced, advisory, with
    the days left, on 2025-06-01 (`--date`)."""
    late = runs[FIXTURE_RUNS["retired"].name].document
    assert [v["message"] for v in late["violations"]] == [
        "Standard_NC6s_v3 (NCv3) was retired on 2025-09-30 in eastus (evaluated on 2026-11-30): Azure cannot "
        "provision it and deallocates remaining VMs, so the cluster never gets a node. Fix: recreate the "
        "cluster on a current size (e.g. Standard_NC40ads_H100_v5 or Standard_ND96isr_H100_v5)."
    ]
    soon = runs[RETIRING_SOON.name]
    assert soon.exit_code == 0, soon.stderr[-2000:]
    document = soon.json
    assert found(document["violations"]) == [("vm-series-retiring-soon", "advisory", "v100")]
    assert document["violations"][0]["message"] == (
        "Standard_NC6s_v3 (NCv3) retires on 2025-09-30 in eastus, 121 days after 2025-06-01: from then the "
        "cluster cannot get nodes and must be recreated (size cannot be changed in place). Fix: plan the "
        "move "
        "to a current size now."
    )
    assert document["summary"]["evaluation_date"] == "2025-06-01"


def test_over_quota_message_and_plan(runs: dict[str, Outcome]) -> None:
    document = runs[FIXTURE_RUNS["over-quota"].name].document
    assert [v["message"] for v in document["violations"]] == [
        "eastus standardNDSH100v5Family: h100-x4 (4 x 96 vCPUs of Standard_ND96isr_H100_v5) reserves 384 "
        "vCPUs, quota is 192: clusters hold quota even at zero nodes, so jobs queue for hours once the pool "
        "is "
        "exhausted. Fix: lower max_instances (scaleSettings.maxNodeCount), delete unused clusters, or "
        "request 192 more vCPUs of quota."
    ]
    summary = document["summary"]
    assert [
        (q["region"], q["label"], q["reserved_vcpus"], q["quota"], q["status"]) for q in summary["quota"]
    ] == [
        ("eastus", "standardNDSH100v5Family", 384, 192, "over"),
        ("eastus", "total regional dedicated vCPUs", 384, 500, "ok"),
    ]
    (row,) = summary["clusters"]
    keys = ("name", "size", "gpus_per_node", "max_nodes", "region", "tier", "idle_seconds", "ssh")
    assert {k: row[k] for k in keys} == {
        "name": "h100-x4",
        "size": "Standard_ND96isr_H100_v5",
        "gpus_per_node": 8,
        "max_nodes": 4,
        "region": "eastus",
        "tier": "dedicated",
        "idle_seconds": 300,
        "ssh": "Disabled",
    }


def test_the_report_groups_violations_by_level(runs: dict[str, Outcome]) -> None:
    """The plain report (not a terminal) and the rich one of warm-nodes: the plan, each evaluation's
    advisories sorted by policy, the verdict."""
    outcome = runs[FIXTURE_RUNS["warm-nodes"].name]
    text = outcome.text
    assert text.startswith("Policy gate for stack warm-nodes (retirement evaluated on 2026-11-30)\n")
    assert (
        "  h100-x2  Standard_ND96isr_H100_v5  8          2          eastus  dedicated  7200 s  Disabled"
        in text
    )
    first, update = outcome.document["evaluations"]
    creates, unknown = first["steps"]["create"], first["unknown_inputs"]
    assert unknown > 0 and update["unknown_inputs"] == 0
    assert (
        f"Evaluation: first deploy: every resource created ({creates} create; {unknown} input values unknown "
        "until deployment)\n" in text
    )
    assert "Evaluation: update against the stack deployed as declared (pulumi up, " in text
    assert f" s) ({creates} same; 0 input values unknown until deployment)\n" in text
    assert text.count("  ADVISORY (2)\n    idle-timer-bounds ") == 2
    assert text.count("  PASS (0 mandatory, 2 advisory)\n") == 2
    assert "MANDATORY" not in text
    assert text.endswith("PASS: no mandatory violation in either evaluation (2 advisory).\n")
    rich = outcome.rich
    assert "ADVISORY (2)" in rich and "h100-x2" in rich and "┏" in rich
    assert "PASS: no mandatory violation in either evaluation (2 advisory)." in rich


def test_an_invalid_stack_config_lists_every_problem(runs: dict[str, Outcome]) -> None:
    outcome = runs[INVALID_CONFIG.name]
    assert outcome.exit_code == 2
    assert sorted(outcome.errors) == [
        "azml-gpu:clusters[0].max_instances: 0 is below 1; use at least 1 (min_instances: 0 still scales to "
        "zero)",
        "azml-gpu:clusters[1].name: 'h100-x2' is already the name of clusters[0]; give each cluster its own "
        "name",
        "azml-gpu:clusters[1].size: 'Standard_Bogus' is neither in the size catalog nor a valid Azure size "
        "name; did you mean Standard_ND40rs_v2?",
    ]
    assert outcome.document["evaluations"] == [] and outcome.document["violations"] == []


def test_an_invalid_policy_config_lists_every_problem(runs: dict[str, Outcome]) -> None:
    """What the CLI refuses is refused, every problem at once (a level string must be a level; the schema's
    types); what it accepts but no policy reads is a note."""
    outcome = runs[INVALID_POLICY.name]
    assert outcome.exit_code == 2
    assert outcome.errors == [
        "--policy-config: secure-defaults: 'strict' is not an enforcement level; use one of advisory, "
        "mandatory, remediate, disabled",
        "--policy-config: min-nodes-zero.allow: expected a list, got 'h100-x2'; write it as a list: "
        '["h100-x2"]',
    ]
    assert outcome.notes == [
        "idle-timer-bounds.max_secs: unknown property, accepted by the Pulumi CLI but read by no policy; did "
        "you mean max_seconds?",
        "no-such-policy: no such policy in the pack; the Pulumi CLI passes it on unused; remove it",
    ]
    assert outcome.document["evaluations"] == []


def test_quota_keys_that_match_no_pool_are_config_errors(runs: dict[str, Outcome]) -> None:
    """A misspelt region or quota family checks no cluster's quota: exit 2, not advisories and exit 0."""
    assert runs[QUOTA_REGION_TYPO.name].errors == [
        "--policy-config: quota-reservation.quotas.eastuss: 'eastuss' is not a known Azure region, so it "
        "checks "
        "no cluster's quota; did you mean eastus?"
    ]
    assert runs[QUOTA_FAMILY_TYPO.name].errors == [
        "--policy-config: quota-reservation.quotas.eastus.standardNDSH100v5Famly: not a quota family the "
        "size "
        "catalog knows, nor total or lowPriority, so it checks no cluster's quota; did you mean "
        "standardNDSH100v5Family?"
    ]
    for typo in (QUOTA_REGION_TYPO, QUOTA_FAMILY_TYPO):
        assert runs[typo.name].exit_code == 2 and runs[typo.name].document["violations"] == []


def test_quota_keys_in_any_spelling_reach_their_pools(runs: dict[str, Outcome]) -> None:
    outcome = runs[QUOTA_ANY_SPELLING.name]
    assert outcome.exit_code == 0, outcome.errors
    quota = [(q["region"], q["label"], q["quota"], q["status"]) for q in outcome.document["summary"]["quota"]]
    assert quota == [
        ("eastus", "standardNDSH100v5Family", 384, "ok"),
        ("eastus", "total regional dedicated vCPUs", 500, "ok"),
    ]
    assert "quota-reservation-unknown" not in {v["policy"] for v in outcome.document["violations"]}


def test_an_allow_list_naming_no_cluster_is_a_config_error(runs: dict[str, Outcome]) -> None:
    """A typo in an allow-list would leave the policy enforced (or acknowledge nothing): exit 2 naming the
    entry, the stack's clusters and the likely name; a name that is a cluster of the stack is fine."""
    outcome = runs[ALLOW_LIST_TYPO.name]
    assert outcome.exit_code == 2
    assert outcome.errors == [
        "policy config: secure-defaults.ssh_clusters[0]: 'h100-x3' names no cluster of stack 'clean' (its "
        "clusters: h100-x2), so it allows or acknowledges nothing; did you mean h100-x2?"
    ]

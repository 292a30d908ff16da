"""preflight/report.py: the gate's report for people (plain text off a terminal, rich tables on one) and for
PR
review (markdown), built from a result of the engine's recorded events."""

from __future__ import annotations

import io

import pytest

from preflight import gate, report
from preflight.events import Violation

from .recorded import run


@pytest.fixture(scope="module")
def resized() -> gate.GateResult:
    """prod after the h100-x4 cluster's size changed, judged with prod's mandatory cluster-replacement."""
    result = gate.GateResult(
        "prod",
        evaluation_date="2026-12-05",
        policy_config={"cluster-replacement": {"enforcementLevel": "mandatory"}},
        policy_config_file=str(gate.REPO_ROOT / "policies/config/prod.json"),
    )
    first = gate.Evaluation(gate.FIRST_DEPLOY, "none (a new stack)", run("prod-size-change", "first-deploy"))
    first.violations = list(first.run.violations)
    update = gate.Evaluation(gate.UPDATE, "prod-state.json", run("prod-size-change", "update"))
    gate._findings(update, result)
    result.evaluations = [first, update]
    result.clusters = gate._cluster_rows(update.resources)
    result.quota = gate._quota_rows(update.resources, {"eastus": {"standardNDISRH200V5Family": 384}})
    result.permissions = []
    return result


def test_plain_text_has_the_plan_each_evaluation_and_the_verdict(resized: gate.GateResult) -> None:
    out = io.StringIO()
    report.render(resized, out, rich_output=False)
    text = out.getvalue()
    assert text.startswith("Policy gate for stack prod (retirement evaluated on 2026-12-05)\n")
    assert (
        "  h100-x4    Standard_ND96isr_H200_v5  8          4          eastus  dedicated     300 s  Disabled"
        in text
    )
    assert "Evaluation: first deploy: every resource created (35 create; " in text
    assert "Evaluation: update against prod-state.json (2 replace, 33 same; 1 input values unknown" in text
    assert (
        "  replace: h100-x4 will be deleted and recreated (vmSize: Standard_ND96isr_H100_v5 -> "
        "Standard_ND96isr_H200_v5)\n" in text
    )
    assert "  MANDATORY (1)\n    cluster-replacement urn:pulumi:prod::azml-gpu::" in text
    assert text.endswith("`pulumi up` would be blocked.\n")
    assert "FAIL: 1 mandatory violation(s)" in text and "(failed: update)" in text


def test_rich_tables_on_a_terminal(resized: gate.GateResult) -> None:
    out = io.StringIO()
    report.render(resized, out, rich_output=True)
    fancy = out.getvalue()
    assert "┏" in fancy and "Standard_ND96isr_H200_v5" in fancy and "MANDATORY (1)" in fancy


def test_markdown_leads_with_the_verdict_and_names_resources_not_urns(resized: gate.GateResult) -> None:
    text = report.markdown(resized)
    assert text.startswith("## Policy gate: FAIL for stack `prod`\n\n1 mandatory, ")
    assert "policy config `policies/config/prod.json`" in text
    assert "- first-deploy preview passes (35 create)" in text
    assert "- update preview fails (2 replace, 33 same)" in text
    assert "- **cluster-replacement** on h100-x4 (Compute) (update):" in text
    assert "### What the update replaces or deletes" in text
    assert "| h100-x4 | Standard_ND96isr_H200_v5 | 8 | 4 | eastus | dedicated | 300 s | Disabled |" in text


def test_a_stack_level_finding_is_the_stacks() -> None:
    result = gate.GateResult("prod", evaluation_date="2026-12-05")
    evaluation = gate.Evaluation(gate.UPDATE, "s", run("prod", "update"))
    evaluation.violations = [
        Violation(
            "quota-reservation",
            "mandatory",
            "urn:pulumi:prod::azml-gpu::pulumi:pulumi:Stack::azml-gpu-prod",
            "m",
        ),
        Violation("p", "advisory", "", "n"),
    ]
    result.evaluations = [evaluation]
    text = report.markdown(result)
    assert (
        "- **quota-reservation** on the stack (update):" in text and "- **p** on the stack (update):" in text
    )


def test_markdown_has_the_quota_table_with_headroom(resized: gate.GateResult) -> None:
    text = report.markdown(resized)
    assert "| region | pool | reserved vCPUs | quota | headroom | used | status |" in text
    # prod after the resize: 4 x 96 vCPUs of the H200 family against the 384 given: exactly the quota
    assert (
        "| eastus | standardNDISRH200V5Family | 384 | 384 | 0 | 100% | at quota: no headroom (warning) |"
        in text
    )
    assert "| eastus | low-priority vCPUs (all families) | 24 | - | - | - | quota unknown |" in text


def test_markdown_never_breaks_a_key_or_a_long_word_across_lines() -> None:
    key = "compute-in-virtual-network.acknowledged"
    result = gate.GateResult("prod", evaluation_date="2026-12-05")
    evaluation = gate.Evaluation(gate.UPDATE, "s", run("prod", "update"))
    words = "cluster h100-x4 is in no virtual network and its nodes take public IPs; Fix: add it to"
    evaluation.violations = [
        Violation("p", "advisory", "", f"{words} {key} if the cluster is public on purpose")
    ]
    result.evaluations = [evaluation]
    lines = report.markdown(result).splitlines()
    assert any(key in line for line in lines)
    assert all(len(line) <= 100 or line.startswith("|") for line in lines)


def test_permissions_are_one_line_unless_asked(resized: gate.GateResult) -> None:
    resized.permissions = [
        {
            "action": "Microsoft.MachineLearningServices/workspaces/computes/write",
            "granted_by": "Contributor",
        },
        {
            "action": "Microsoft.MachineLearningServices/workspaces/computes/delete",
            "granted_by": "Contributor",
        },
    ]
    try:
        short, full = io.StringIO(), io.StringIO()
        report.render(resized, short, rich_output=False)
        report.render(resized, full, rich_output=False, permissions_shown=True)
    finally:
        resized.permissions = []
    assert "computes/write" not in short.getvalue()
    assert "(--permissions lists the 2 actions)" in short.getvalue()
    assert "  Microsoft.MachineLearningServices/workspaces/computes/write  (Contributor)" in full.getvalue()


@pytest.mark.parametrize(
    "environment, shown",
    [
        (
            "production",
            "environment: production (azml-gpu:environment: secure-defaults and cluster-replacement "
            "enforced)",
        ),
        ("development", "environment: development (azml-gpu:environment)"),
        (None, "environment: not set (azml-gpu:environment; init-config needs it)"),
    ],
)
def test_the_report_shows_what_the_stack_is(environment: str | None, shown: str) -> None:
    """issue 33 item 7: the stack's `azml-gpu:environment`, in every form of the report."""
    result = gate.GateResult("staging", evaluation_date="2026-12-05", environment=environment)
    out = io.StringIO()
    report.render(result, out, rich_output=False)
    assert out.getvalue().splitlines()[1] == shown
    assert f"{shown.replace('environment: ', 'environment ', 1)}." in report.markdown(result).splitlines()
    assert result.as_json()["environment"] == environment

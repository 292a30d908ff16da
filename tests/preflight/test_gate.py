"""preflight/gate.py without the CLI: reading the input (every problem at once), the engine's errors as the
gate reports them, the allow-list check, the report's clusters and quota rows, and the verdict, on the
engine's
recorded events (tests/fixtures/engine). The gate against the CLI itself: tests/integration/gate."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from preflight import gate
from preflight.events import Diagnostic, Run, Violation

from .recorded import run

ROOT = Path(__file__).resolve().parents[2]


# -- which program, which pack -------------------------------------------------------------------------------


def test_the_program_is_the_current_folders_when_it_has_one(tmp_path: Path) -> None:
    assert gate.program_root(tmp_path) == gate.REPO_ROOT  # no Pulumi.yaml: this checkout's program
    (tmp_path / "Pulumi.yaml").write_text("name: team-ml\nruntime: python\n")
    assert gate.program_root(tmp_path) == tmp_path.resolve()
    assert gate.project_name(tmp_path) == "team-ml"


@pytest.mark.parametrize("text", [None, "runtime: python\n", "[not: yaml", "- a list\n"])
def test_a_program_without_a_readable_name_is_this_projects(tmp_path: Path, text: str | None) -> None:
    if text is not None:
        (tmp_path / "Pulumi.yaml").write_text(text)
    assert gate.project_name(tmp_path) == "azml-gpu"


def test_the_pack_is_the_programs_own_copy_else_the_installed_one(tmp_path: Path) -> None:
    installed = gate.pack_dir(tmp_path)
    assert (installed / "PulumiPolicy.yaml").is_file() and installed.name == "policies"
    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "PulumiPolicy.yaml").write_text("runtime: python\n")
    assert gate.pack_dir(tmp_path) == tmp_path / "policies"


# -- the input -----------------------------------------------------------------------------------------------


def test_the_shipped_stacks_have_no_config_problem() -> None:
    from stackconfig.loader import read_config_block

    for stack in ("dev", "prod", "prod-westus3", "capacity"):
        assert gate._stack_config_problems(read_config_block(ROOT / f"Pulumi.{stack}.yaml")) == [], stack


def test_config_problems_are_all_listed_with_their_keys() -> None:
    from stackconfig.loader import read_config_block

    block = read_config_block(ROOT / "tests/fixtures/stacks/invalid-config/Pulumi.invalid-config.yaml")
    problems = gate._stack_config_problems(block)
    assert len(problems) == 3 and all(p.startswith("azml-gpu:clusters[") for p in problems)


# -- azml-gpu:environment: enforcement by what the stack is (issue 33 item 7) --------------------------------


@pytest.mark.parametrize(
    "stack, environment",
    [
        ("dev", "development"),
        ("prod", "production"),
        ("prod-westus3", "production"),
        ("capacity", "production"),
    ],
)
def test_each_shipped_stack_says_what_it_is(stack: str, environment: str) -> None:
    from stackconfig.loader import read_config_block

    assert gate.stack_environment(read_config_block(ROOT / f"Pulumi.{stack}.yaml")) == environment


@pytest.mark.parametrize("value", [None, "prod", "Production", 1])
def test_an_unset_or_invalid_environment_is_none(value: object) -> None:
    block = {} if value is None else {"azml-gpu:environment": value}
    assert gate.stack_environment(block) is None


def _levels(secure: str, replacement: str) -> dict:
    return {"secure-defaults": (secure, {}), "cluster-replacement": (replacement, {})}


@pytest.mark.parametrize(
    "secure, replacement",
    [("mandatory", "mandatory"), ("remediate", "mandatory"), ("mandatory", "remediate")],
)
def test_a_production_stack_passes_with_both_blocking(secure: str, replacement: str) -> None:
    assert gate.environment_problems("production", _levels(secure, replacement), "p.json") == []


def test_a_production_stack_with_either_advisory_is_refused_naming_each_and_both_fixes() -> None:
    problems = gate.environment_problems(
        "production", _levels("advisory", "disabled"), "policies/config/x.json"
    )
    assert problems == [
        "policies/config/x.json: secure-defaults is advisory, but the stack's azml-gpu:environment is "
        'production, which enforces it; set "secure-defaults": {"enforcementLevel": "mandatory", ...}, '
        "or set azml-gpu:environment: development if the stack is not production",
        "policies/config/x.json: cluster-replacement is disabled, but the stack's azml-gpu:environment is "
        'production, which enforces it; set "cluster-replacement": {"enforcementLevel": "mandatory", '
        "...}, or set azml-gpu:environment: development if the stack is not production",
    ]


@pytest.mark.parametrize("environment", ["development", None])
def test_development_or_unset_leaves_the_levels_to_the_policy_config(environment: str | None) -> None:
    assert gate.environment_problems(environment, _levels("advisory", "advisory"), "p.json") == []


def test_the_shipped_policy_configs_enforce_what_their_stacks_are() -> None:
    from preflight import replacements
    from preflight.policyconfig import load_policy_config, pack_policies, resolve_config
    from stackconfig.loader import read_config_block

    for stack in ("dev", "prod", "prod-westus3", "capacity"):
        environment = gate.stack_environment(read_config_block(ROOT / f"Pulumi.{stack}.yaml"))
        loaded = load_policy_config(ROOT / "policies" / "config" / f"{stack}.json")
        effective = resolve_config(loaded, pack_policies(), replacements.GATE_CHECKS, [])
        assert gate.environment_problems(environment, effective, f"{stack}.json") == [], stack


def _state(tmp_path: Path, urns: list[str]) -> Path:
    document = {"version": 3, "deployment": {"resources": [{"urn": u, "type": "t"} for u in urns]}}
    path = tmp_path / "state.json"
    path.write_text(json.dumps(document))
    return path


def test_a_state_of_this_stack_is_accepted(tmp_path: Path) -> None:
    path = _state(tmp_path, ["urn:pulumi:prod::azml-gpu::pulumi:pulumi:Stack::azml-gpu-prod"])
    assert gate._state_problems(path, "prod", "azml-gpu") == []
    assert gate._state_problems(_state(tmp_path, []), "prod", "azml-gpu") == []  # an empty stack's export


@pytest.mark.parametrize(
    ("urns", "named"),
    [
        (
            ["urn:pulumi:dev::azml-gpu::pulumi:pulumi:Stack::azml-gpu-dev"],
            "stack 'dev' of project 'azml-gpu'",
        ),
        (["urn:pulumi:prod::other::pulumi:pulumi:Stack::other-prod"], "stack 'prod' of project 'other'"),
    ],
)
def test_a_state_of_another_stack_or_project_is_refused_with_the_export_command(
    tmp_path: Path, urns: list[str], named: str
) -> None:
    path = _state(tmp_path, urns)
    [problem] = gate._state_problems(path, "prod", "azml-gpu")
    assert problem.startswith(
        f"--state: {path} is the state of {named}, not of stack 'prod' of project 'azml-gpu'"
    )
    assert "pulumi stack export --stack prod --show-secrets --file FILE" in problem


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("{", "invalid JSON at line 1 column 2"),
        ('{"version": 3}', "not a `pulumi stack export` document (no deployment.resources list)"),
        ('{"deployment": {"resources": [{"type": "t"}]}}', "deployment.resources[0] has no urn and type"),
    ],
)
def test_a_state_file_that_is_not_an_export_names_what_is_wrong(
    tmp_path: Path, content: str, expected: str
) -> None:
    path = tmp_path / "state.json"
    path.write_text(content)
    [problem] = gate._state_problems(path, "prod", "azml-gpu")
    assert problem.startswith(f"--state: {path}: {expected}")


def test_a_missing_state_file_or_a_folder_is_named(tmp_path: Path) -> None:
    assert gate._state_problems(tmp_path / "nope.json", "prod", "azml-gpu")[0].startswith(
        f"--state: {tmp_path / 'nope.json'} does not exist;"
    )
    assert gate._state_problems(tmp_path, "prod", "azml-gpu")[0].startswith(
        f"--state: {tmp_path} is a directory;"
    )


def test_date_goes_to_every_policy_that_takes_one_and_nothing_else() -> None:
    sent = gate._with_date(
        {"no-retired-vm-series": "mandatory", "min-nodes-zero": {"allow": []}}, date(2027, 1, 31)
    )
    dated = {name for name, entry in sent.items() if isinstance(entry, dict) and "evaluation_date" in entry}
    assert dated == {"no-retired-vm-series", "vm-series-retiring-soon"}
    assert sent["no-retired-vm-series"] == {"enforcementLevel": "mandatory", "evaluation_date": "2027-01-31"}
    assert sent["min-nodes-zero"] == {"allow": []}
    assert gate._with_date({"a": "advisory"}, None) == {"a": "advisory"}


# -- the engine's errors -------------------------------------------------------------------------------------


def test_a_duplicate_urn_names_the_config_entries_behind_it() -> None:
    from stackconfig.loader import read_config_block

    block = read_config_block(ROOT / "Pulumi.dev.yaml")
    store = "/subscriptions/x/resourceGroups/rg-data/providers/Microsoft.Storage/storageAccounts/stcorpus01"
    block["azml-gpu:identity"] = {"data_stores": [store, store]}
    result = gate.GateResult("dev")
    [line] = gate._engine_errors("first-deploy", run("dev-duplicate-urn", "first-deploy"), block, result)
    assert line.startswith(
        "Duplicate resource URN 'urn:pulumi:dev::azml-gpu::azml-gpu:components:RoleAssignments$"
    )
    assert (
        "azml-gpu:identity.data_stores[0] and azml-gpu:identity.data_stores[1] derive the same resource name"
        in line
    )


def test_the_closing_errors_are_dropped_when_the_reason_is_reported() -> None:
    failed = Run(
        255,
        violations=[Violation("p", "mandatory", "u", "m")],
        diagnostics=[Diagnostic("error", "preview failed")],
    )
    assert gate._engine_errors("update", failed, {}, gate.GateResult("s")) == []
    echoed = Run(
        255,
        diagnostics=[
            Diagnostic("error", "customer-managed key: cannot read the key vault X"),
            Diagnostic(
                "error", "an unhandled error occurred: customer-managed key: cannot read the key vault X"
            ),
            Diagnostic("error", "Resource monitor has terminated, shutting down"),
            Diagnostic("error", "preview failed"),
        ],
    )
    assert gate._engine_errors("first-deploy", echoed, {}, gate.GateResult("s")) == [
        "first-deploy preview: customer-managed key: cannot read the key vault X"
    ]


def test_a_failed_run_with_nothing_said_shows_the_clis_last_lines() -> None:
    silent = Run(255, diagnostics=[Diagnostic("error", "preview failed")], stderr="a\nb\nerror: boom\n")
    assert gate._engine_errors("update", silent, {}, gate.GateResult("s")) == [
        "update preview: preview failed",
        "update preview: the Pulumi CLI's last lines: a / b / error: boom",
    ]
    empty = Run(1, stderr="x\nerror: no stack named 'dev'\n")
    assert gate._engine_errors("update", empty, {}, gate.GateResult("s")) == [
        "update preview: the Pulumi CLI exited 1 with no error event: x / error: no stack named 'dev'"
    ]


def test_a_check_failure_names_the_config_key_and_is_kept_for_the_json() -> None:
    message = (
        "azure-native:machinelearningservices:Compute resource 'h100-x4': property "
        "properties.properties.vmSize "
        "value {Standard_Bogus} has a problem: 'vmSize' is not an allowed value [constraint enum from "
        "machinelearningservices.json#/definitions/X]"
    )
    block = {"azml-gpu:clusters": [{"name": "a100"}, {"name": "h100-x4"}]}
    result = gate.GateResult("s")
    [line] = gate._engine_errors(
        "first-deploy", Run(255, diagnostics=[Diagnostic("error", message, "urn:x")]), block, result
    )
    assert line.startswith(
        "first-deploy preview: the Azure REST spec rejects h100-x4 "
        "(azure-native:machinelearningservices:Compute)"
    )
    assert "set by config key azml-gpu:clusters[1].size" in line
    assert result.resource_problems[0]["config_key"] == "azml-gpu:clusters[1].size"


def test_a_vault_outside_the_stack_gets_the_existing_hint_once() -> None:
    error = Diagnostic(
        "error", 'invoke of azure-native:keyvault:getVault failed: Status=404 Code="ResourceNotFound"'
    )
    lines = gate._engine_errors(
        "first-deploy", Run(255, diagnostics=[error, error]), {}, gate.GateResult("s")
    )
    assert len(lines) == 2 and lines[1].startswith(
        "offline, the gate knows a vault outside the stack only from --existing F"
    )


# -- the gate's findings and report rows on the engine's steps -----------------------------------------------


def test_allow_lists_must_name_a_cluster_of_the_stack_or_of_its_state() -> None:
    program = run("prod-cluster-removed", "update").steps
    kept = [s for s in program if s.op != "delete"]
    state = [s for s in program if s.old is not None]
    given = {
        "min-nodes-zero": {"allow": ["h100-x4", "h100x4"]},
        "cluster-replacement": {"enforcementLevel": "mandatory", "acknowledged": ["a100-spot", "zzz"]},
    }
    problems = gate._allow_list_problems(given, kept, state, "prod")
    assert problems == [
        "cluster-replacement.acknowledged[1]: 'zzz' names no cluster of stack 'prod' (its clusters: "
        "a100-spot, h100-x4), "
        "so it allows or acknowledges nothing; fix the name or remove it",
        "min-nodes-zero.allow[1]: 'h100x4' names no cluster of stack 'prod' (its clusters: h100-x4), so it "
        "allows or "
        "acknowledges nothing; did you mean h100-x4?",
    ]


def test_a_cluster_budget_must_name_a_cluster_of_the_stack() -> None:
    kept = [s for s in run("prod", "update").steps if s.op != "delete"]
    given = {"cluster-cost-budget": {"max_per_hour": 400, "clusters": {"h100-x4": 300, "h100x4": 1}}}
    assert gate._allow_list_problems(given, kept, [], "prod") == [
        "cluster-cost-budget.clusters.h100x4: 'h100x4' names no cluster of stack 'prod' (its clusters: "
        "a100-spot, h100-x4), so it allows or acknowledges nothing; did you mean h100-x4?"
    ]


def test_cluster_and_quota_rows_are_read_as_the_policies_read_them() -> None:
    steps = run("prod", "update").steps
    rows = {r["name"]: r for r in gate._cluster_rows(steps)}
    assert rows["h100-x4"] | {"urn": ""} == {
        "name": "h100-x4", "urn": "", "size": "Standard_ND96isr_H100_v5", "gpus_per_node": 8,
        "vcpus_per_node": 96,
        "quota_family": "standardNDSH100v5Family", "min_nodes": 0, "max_nodes": 4, "region": "eastus",
        "tier": "dedicated", "idle": "PT5M", "idle_seconds": 300, "ssh": "Disabled",
    }  # fmt: skip
    quotas = {"eastus": {"standardNDSH100v5Family": 384, "total": 383}}
    quota = {(q["kind"], q["family"]): q for q in gate._quota_rows(steps, quotas)}
    family = quota[("family", "standardNDSH100v5Family")]  # 4 x 96 = 384: exactly the quota
    assert (family["status"], family["headroom_vcpus"], family["used_percent"]) == ("full", 0, 100.0)
    assert (
        quota[("regional-total", None)]["reserved_vcpus"] == 384
        and quota[("regional-total", None)]["status"] == "over"
    )
    assert (
        quota[("low-priority", None)]["status"] == "unknown"
        and quota[("low-priority", None)]["quota"] is None
    )


def test_deletes_are_the_custom_resources_the_update_removes_and_never_the_engines_providers() -> None:
    update = gate.Evaluation(gate.UPDATE, "state", run("prod-cluster-removed", "update"))
    gate._findings(
        update,
        gate.GateResult("prod", policy_config={"cluster-replacement": {"enforcementLevel": "mandatory"}}),
    )
    assert [u.rsplit("::", 1)[1] for u in update.deletes] == [
        "a100-spot",
        "ws-llm-access-a100-spot-st-blob-contributor",
    ]
    assert [(v.policy, v.enforcement) for v in update.violations if v.policy == "cluster-replacement"] == [
        ("cluster-replacement", "mandatory")
    ]


def test_the_verdict_is_the_worse_evaluation_and_violations_merge_at_their_worst_level() -> None:
    first = gate.Evaluation(gate.FIRST_DEPLOY, "none", run("prod", "first-deploy"))
    update = gate.Evaluation(gate.UPDATE, "state", run("prod", "update"))
    first.violations = [Violation("p", "advisory", "u", "m")]
    update.violations = [Violation("p", "mandatory", "u", "m"), Violation("q", "advisory", "u", "m")]
    result = gate.GateResult("prod", evaluations=[first, update])
    assert (first.exit_code, update.exit_code, result.exit_code) == (0, 1, 1)
    assert [(v.policy, v.enforcement) for v in result.violations] == [("p", "mandatory"), ("q", "advisory")]
    assert result.evaluations_of(result.violations[0]) == ["first-deploy", "update"]
    result.errors = ["x"]
    assert result.exit_code == 2


def test_unknown_inputs_are_counted_as_the_engine_sent_them() -> None:
    first = gate.Evaluation(gate.FIRST_DEPLOY, "none", run("prod", "first-deploy"))
    update = gate.Evaluation(gate.UPDATE, "state", run("prod", "update"))
    assert update.unknown_inputs == 0
    assert (
        first.unknown_inputs
        == sum(json.dumps(s.inputs).count("04da6b54-80e4-46f7-96ec-b56ff0331ba9") for s in first.resources)
        > 0
    )


def test_the_json_names_the_cli_and_each_evaluations_engine_exit() -> None:
    update = gate.Evaluation(gate.UPDATE, "state", run("prod", "update"), seconds=1.234)
    result = gate.GateResult("prod", evaluations=[update], engine={"version": "3.274.1", "source": "PATH"})
    document = result.as_json()
    assert document["engine"] == {"version": "3.274.1", "source": "PATH"}
    assert document["evaluations"][0] | {"violations": [], "steps": {}} == {
        "kind": "update", "state": "state", "exit_code": 0, "engine_exit_code": 0, "seconds": 1.23,
        "steps": {}, "unknown_inputs": 0, "violations": [], "replacements": [], "deletes": [],
    }  # fmt: skip
    assert document["summary"]["resources"] == 35
    assert {r["op"] for r in document["resources"]} == {"same"}


@pytest.mark.parametrize(
    ("reserved", "quota", "status"),
    [
        (345, 384, "ok"),  # 89.8%
        (346, 384, "near"),  # 90.1%: at least 90% is a warning
        (383, 384, "near"),
        (384, 384, "full"),  # fits, with no headroom
        (385, 384, "over"),  # quota-reservation's mandatory violation
        (96, None, "unknown"),
        (0, 0, "full"),
    ],
)
def test_quota_status_at_and_around_its_bounds(reserved: int, quota: int | None, status: str) -> None:
    assert gate.quota_status(reserved, quota) == status

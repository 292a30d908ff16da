"""Forms of the input the gate reads as the Pulumi CLI reads it: stack files as YAML 1.2 (go-yaml v3: `no` is
a string, `30:00` is not 1800, a repeated key is an error), the policy config's level forms
(pkg/resource/analyzer/config.go: a level string alone, `remediate`, `"all"`, `disabled`), and names the
engine refuses twice (duplicate URNs, traced to the config entries behind them)."""

from __future__ import annotations

import pytest

from tests.integration.gate.runner import ROOT, Gates, Outcome, Spec
from tests.integration.gate.specs import DUPLICATE_GRANTS, PERSON, POLICY_FORMS, recorded

DEV = (ROOT / "Pulumi.dev.yaml").read_text()


def dev_with(name: str, old: str, new: str) -> Spec:
    assert old in DEV
    return Spec(name, "dev", stack_text=DEV.replace(old, new))


NO = dev_with("dev-yaml-no", "env: dev", "env: no")
SEXAGESIMAL = dev_with(
    "dev-yaml-sexagesimal", "idle_time_before_scale_down: 1800", "idle_time_before_scale_down: 30:00"
)
REPEATED_KEY = dev_with("dev-yaml-repeated-key", "      max_instances: 1\n", "      max_instances: 1\n" * 2)
DUPLICATE_STORES = recorded("dev-duplicate-urn")
RUNS = [NO, SEXAGESIMAL, REPEATED_KEY, *POLICY_FORMS.values(), DUPLICATE_STORES, DUPLICATE_GRANTS]
ROLE_ASSIGNMENT = (
    "urn:pulumi:dev::azml-gpu::azml-gpu:components:RoleAssignments"
    "$azure-native:authorization:RoleAssignment::"
)


@pytest.fixture(scope="module")
def runs(gates: Gates) -> dict[str, Outcome]:
    return {o.name: o for o in gates.run(*RUNS)}


def levels(outcome: Outcome) -> list[tuple[str, str, str]]:
    return sorted(
        (v["policy"], v["enforcement"], v["urn"].split("::")[-1]) for v in outcome.document["violations"]
    )


def test_yaml_no_is_a_string(runs: dict[str, Outcome]) -> None:
    outcome = runs[NO.name]
    assert outcome.exit_code == 0, outcome.errors
    workspace = next(r for r in outcome.document["resources"] if r["name"] == "ws-llm-dev-mlw")
    assert workspace["inputs"]["tags"] == {"env": "no", "project": "azml-gpu"}


def test_yaml_sexagesimal_is_not_a_number_of_seconds(runs: dict[str, Outcome]) -> None:
    outcome = runs[SEXAGESIMAL.name]
    assert outcome.exit_code == 2
    assert outcome.errors == [
        "azml-gpu:clusters[0].idle_time_before_scale_down: '30:00' is not a number of seconds; give seconds "
        "as "
        "a whole number, e.g. 300"
    ]


def test_a_repeated_yaml_key_is_refused_as_the_cli_refuses_it(runs: dict[str, Outcome]) -> None:
    outcome = runs[REPEATED_KEY.name]
    assert outcome.exit_code == 2
    path = f"{outcome.folder}/Pulumi.dev.yaml"
    line = DEV.splitlines().index("      max_instances: 1") + 1
    assert outcome.errors == [
        f"--config-file: {path}: mapping key 'max_instances' at line {line + 1} is already defined at line "
        f"{line}; keep one of them (the Pulumi CLI refuses a repeated key)"
    ]


DEV_ADVISORIES = [
    ("secure-defaults", "ws-llm-dev-kv"),
    ("secure-defaults", "ws-llm-dev-mlw"),
    ("workspace-user-assigned-identity", "ws-llm-dev-mlw"),
]


def test_remediate_as_a_level_string_blocks_like_mandatory(runs: dict[str, Outcome]) -> None:
    """`"secure-defaults": "remediate"`: the engine treats a stack policy's remediate as mandatory; the
    policy keeps its default properties (dev's own ssh_clusters acknowledgement is gone with the object, so
    t4-dev's SSH is reported too)."""
    outcome = runs[POLICY_FORMS["remediate-shorthand"].name]
    assert outcome.exit_code == 1
    assert levels(outcome) == [
        ("secure-defaults", "mandatory", "t4-dev"),
        ("secure-defaults", "mandatory", "ws-llm-dev-kv"),
        ("secure-defaults", "mandatory", "ws-llm-dev-mlw"),
        ("workspace-user-assigned-identity", "advisory", "ws-llm-dev-mlw"),
    ]


def test_all_applies_its_level_to_every_policy(runs: dict[str, Outcome]) -> None:
    outcome = runs[POLICY_FORMS["all-mandatory"].name]
    assert outcome.exit_code == 1
    assert levels(outcome) == sorted((p, "mandatory", r) for p, r in DEV_ADVISORIES)


def test_a_disabled_policy_reports_nothing(runs: dict[str, Outcome]) -> None:
    outcome = runs[POLICY_FORMS["disabled"].name]
    assert outcome.exit_code == 0
    assert levels(outcome) == [("workspace-user-assigned-identity", "advisory", "ws-llm-dev-mlw")]
    assert outcome.document["policy_config"]["notes"] == []


def test_two_identical_data_stores_name_both_config_entries(runs: dict[str, Outcome]) -> None:
    """The engine stops at the second registration of one URN; the gate names the two entries behind it."""
    outcome = runs[DUPLICATE_STORES.name]
    assert outcome.exit_code == 2
    name = "ws-llm-dev-access-t4-dev-stcorpus01-blob-reader"
    assert outcome.errors == [
        f"Duplicate resource URN '{ROLE_ASSIGNMENT}{name}'; try giving it a unique name (the engine stops "
        f"the "
        "preview here): azml-gpu:identity.data_stores[0] and azml-gpu:identity.data_stores[1] derive the "
        "same "
        f"resource name '{name}'; remove the repeated entry, or make the entries differ in what names the "
        "resource"
    ]


def test_a_grant_given_twice_names_both_config_entries(runs: dict[str, Outcome]) -> None:
    outcome = runs[DUPLICATE_GRANTS.name]
    assert outcome.exit_code == 2
    (error,) = outcome.errors
    assert error.startswith(
        f"Duplicate resource URN '{ROLE_ASSIGNMENT}ws-llm-dev-access-people-{PERSON}-reader'"
    )
    assert (
        ": azml-gpu:identity.role_assignments[0] and azml-gpu:identity.role_assignments[1] derive the same "
        f"resource name 'ws-llm-dev-access-people-{PERSON}-reader'; remove the repeated entry" in error
    )

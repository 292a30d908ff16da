"""preflight/policyconfig.py: policy-config files read as the Pulumi CLI reads them (pulumi/pulumi v3.274.1
pkg/resource/analyzer/
config.go parsePolicyPackConfig, parsePolicyConfigs, extractEnforcementLevel, applyConfig,
validatePolicyPackConfig; pkg/resource/plugin/analyzer_plugin.go Configure): what it refuses is refused, what
it accepts is accepted (with a note when no policy reads it), and problems are worded as stack-config ones;
a `remediate` violation blocks like a mandatory one (pkg/resource/deploy/step_generator.go AnalyzeResources,
analyze_snapshot.go)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from preflight.events import Run, Violation
from preflight.gate import Evaluation, GateResult
from preflight.policyconfig import PolicyConfigError, load_policy_config, pack_policies, resolve_config

SCHEMA = {
    "max_seconds": {"type": "integer", "minimum": 60, "default": 1800},
    "allow": {"type": "array", "items": {"type": "string"}, "description": "Cluster names allowed."},
    "evaluation_date": {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}$"},
}
GATE_CHECKS = {"cluster-replacement": {"enforcementLevel": "advisory", "configSchema": {"properties": {}}}}


def _policies() -> dict[str, tuple[str, dict]]:
    return {"idle-timer-bounds": ("advisory", {"properties": SCHEMA}), "min-nodes-zero": ("mandatory", {})}


def resolve(config: dict, notes: list[str] | None = None) -> dict:
    return resolve_config(config, _policies(), GATE_CHECKS, notes)


def problems(config: dict) -> list[str]:
    with pytest.raises(PolicyConfigError) as raised:
        resolve(config)
    return raised.value.problems


def test_defaults_all_and_entries_apply_in_the_clis_order() -> None:
    effective = resolve({"all": "disabled", "idle-timer-bounds": {"enforcementLevel": "mandatory"}})
    assert effective["idle-timer-bounds"] == ("mandatory", {"max_seconds": 1800})
    assert effective["min-nodes-zero"] == ("disabled", {})
    assert effective["cluster-replacement"] == ("disabled", {})
    assert resolve({"idle-timer-bounds": {}})["idle-timer-bounds"] == ("advisory", {"max_seconds": 1800})


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        (
            {"min-nodes-zero": "strict"},
            "min-nodes-zero: 'strict' is not an enforcement level; use one of advisory, mandatory, "
            "remediate, "
            "disabled",
        ),
        (
            {"min-nodes-zero": {"enforcementLevel": 1}},
            "min-nodes-zero.enforcementLevel: expected text, got 1; use one of advisory, mandatory, "
            "remediate, "
            "disabled",
        ),
        (
            {"min-nodes-zero": 3},
            "min-nodes-zero: expected an enforcement level or a mapping of keys, got 3; write "
            '"min-nodes-zero": '
            '"mandatory" or "min-nodes-zero": {"enforcementLevel": "mandatory", ...}',
        ),
        (
            {"idle-timer-bounds": {"max_seconds": "900"}},
            "idle-timer-bounds.max_seconds: expected a whole number, got the string '900'; write 900 without "
            "quotes",
        ),
        (
            {"idle-timer-bounds": {"max_seconds": 30}},
            "idle-timer-bounds.max_seconds: 30 is below 60; use 60 or more",
        ),
        (
            {"idle-timer-bounds": {"allow": "h100-x4"}},
            "idle-timer-bounds.allow: expected a list, got 'h100-x4'; write it as a list: [\"h100-x4\"]",
        ),
        (
            {"idle-timer-bounds": {"allow": [4]}},
            "idle-timer-bounds.allow[0]: expected text, got 4; write text",
        ),
        (
            {"idle-timer-bounds": {"evaluation_date": "31/12/2026"}},
            "idle-timer-bounds.evaluation_date: '31/12/2026' does not have the expected form; write "
            "YYYY-MM-DD, e.g. 2027-01-31",
        ),
        (
            {"no-such-policy": {"x": 1}},
            "no-such-policy: no such policy in the pack and no enforcementLevel, which the Pulumi CLI "
            "refuses "
            '(`invalid enforcement level ""`); fix the name (known: cluster-replacement, idle-timer-bounds, '
            "min-nodes-zero) or remove it",
        ),
        (
            {"cluster-replacement": {"acknowledged": []}},
            "cluster-replacement: give an enforcementLevel; it is the gate's own check, not a pack policy, "
            "and "
            "the Pulumi CLI passes an entry for it to the pack only with a level (`invalid enforcement level "
            '""` otherwise)',
        ),
        (
            {"all": {"max_seconds": 1}},
            'all: no enforcementLevel, which the Pulumi CLI refuses (`invalid enforcement level ""`); add '
            '"enforcementLevel": "mandatory" (or advisory, disabled) or remove all',
        ),
    ],
    ids=[
        "bad level",
        "level not text",
        "neither",
        "quoted number",
        "below minimum",
        "text for a list",
        "list item type",
        "date form",
        "unknown without level",
        "gate check without level",
        "all without level",
    ],
)
def test_what_the_cli_refuses_is_refused_in_the_stack_config_wording(config: dict, expected: str) -> None:
    assert expected in problems(config)


def test_what_the_cli_accepts_is_accepted_with_a_note() -> None:
    notes: list[str] = []
    effective = resolve(
        {
            "no-such-policy": "mandatory",
            "idle-timer-bounds": {"max_secs": 60},
            "all": {"enforcementLevel": "advisory", "allow": []},
        },
        notes,
    )
    assert effective["no-such-policy"] == ("mandatory", {})  # passed on to Configure, as the CLI does
    assert notes == [
        "all.allow: only enforcementLevel under all applies to every policy (the Pulumi CLI passes the other "
        "keys to a policy named 'all', which this pack does not have); move it under the policy it is for",
        "idle-timer-bounds.max_secs: unknown property, accepted by the Pulumi CLI but read by no policy; did "
        "you mean max_seconds?",
        "no-such-policy: no such policy in the pack; the Pulumi CLI passes it on unused; remove it",
    ]


@pytest.mark.parametrize(
    ("text", "result"),
    [
        ("  \n", {}),  # "Gracefully allow empty content"
        ('{"version": 2, "policies": {"min-nodes-zero": "advisory"}}', {"min-nodes-zero": "advisory"}),
        ('{"version": "x", "min-nodes-zero": "advisory"}', {"version": "x", "min-nodes-zero": "advisory"}),
    ],
    ids=["empty", "version 2", "version is a policy name"],
)
def test_files_the_cli_reads(tmp_path: Path, text: str, result: dict) -> None:
    path = tmp_path / "p.json"
    path.write_text(text)
    assert load_policy_config(path) == result


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        ({"version": 3}, "version: policy pack config version 3 isn't supported; use version 2"),
        ({"version": 1}, "version: must be 2 (or leave version out)"),
        ({"environments": "prod"}, 'environments: "environments" must be an array of strings'),
        (
            {"environments": ["team/prod"]},
            "environments: Pulumi ESC environments need Pulumi Cloud, which the offline gate does not reach; "
            "put the values in the file instead",
        ),
        ([], "the policy config must be a JSON object keyed by policy name"),
        (
            {"version": 2, "policies": {}, "exceptions": [{"policy": "min-nodes-zero"}]},
            "exceptions: policy exceptions are not supported by the offline gate; remove them",
        ),
    ],
    ids=["version 3", "version 1", "environments type", "environments", "not an object", "exceptions"],
)
def test_files_refused(tmp_path: Path, document: object, expected: str) -> None:
    path = tmp_path / "p.json"
    path.write_text(json.dumps(document))
    with pytest.raises(PolicyConfigError) as raised:
        load_policy_config(path)
    assert raised.value.problems == [f"{path}: {expected}"]


def test_remediate_blocks_like_mandatory() -> None:
    """Issue 22: a remediate level was not counted as a failure; the engine treats it as mandatory."""
    evaluation = Evaluation("update", "s", Run(0))
    evaluation.violations = [Violation("idle-timer-bounds", "remediate", "urn:x", "m", "d")]
    assert evaluation.exit_code == 1
    result = GateResult("s", evaluations=[evaluation])
    assert (result.exit_code, len(result.by_level("mandatory"))) == (1, 1)


def test_the_packs_own_levels_and_schemas_are_the_registrys() -> None:
    """What the gate checks a config against is what the pack reports to the engine (GetAnalyzerInfo): each
    registered policy's level and config properties (policies/registry.py), and nothing else."""
    from policies import registry

    found = pack_policies()
    assert list(found) == [m.NAME for m in registry.MODULES]
    assert found["idle-timer-bounds"][0] == "advisory"
    assert found["no-retired-vm-series"][0] == "mandatory"
    assert set(found["idle-timer-bounds"][1]["properties"]) >= {"min_seconds", "max_seconds"}
    assert found["multi-node-requires-rdma"][1] == {}

"""stackconfig/validation.py: `validate(raw)` reports every problem of the config at once, each at its exact
key path with a fix after "; ": the table of one-change invalid configs (stackconfig_factory.INVALID_CASES),
rules of the clusters after one that failed its own checks or is not a mapping, and combinations once every
key parses. Compute names are unique per workspace and compared case-insensitively like every ARM name
(learn.microsoft.com/azure/azure-resource-manager/management/resource-name-rules: "Always perform a
case-insensitive comparison of names")."""

from __future__ import annotations

import copy

import pytest

from stackconfig import ConfigError, validate

from .stackconfig_factory import INVALID_CASES, Mutate, bad, good_raw


def test_table_is_large_enough() -> None:
    assert len(INVALID_CASES) >= 30
    assert len({case[0] for case in INVALID_CASES}) == len(INVALID_CASES)


@pytest.mark.parametrize(
    ("change", "path", "fragment"), [c[1:] for c in INVALID_CASES], ids=[c[0] for c in INVALID_CASES]
)
def test_validate_reports_exactly_this_problem(change: Mutate, path: str, fragment: str) -> None:
    with pytest.raises(ConfigError) as info:
        validate(bad(change))
    problems = info.value.problems
    assert len(problems) == 1, problems
    assert problems[0].startswith(f"azml-gpu:{path}: "), problems
    assert fragment in problems[0]
    assert "; " in problems[0].removeprefix(f"azml-gpu:{path}: "), "every problem carries a fix after '; '"


def test_every_problem_is_reported_at_once() -> None:
    raw = good_raw()
    raw["workspce"] = {}
    raw["workspace"]["region"] = "mars"
    raw["clusters"][0].update(name="cpu-cluster-1", min_instances=2, max_instances=1, tier="spot")
    raw["clusters"][0]["ssh"]["password"] = "x"
    raw["clusters"][1].update(idle_time_before_scale_down="30m", node_public_ip=False, size="nonsense")
    with pytest.raises(ConfigError) as info:
        validate(raw)
    paths = sorted(p.split(": ", 1)[0].removeprefix("azml-gpu:") for p in info.value.problems)
    assert paths == sorted(
        [
            "workspce",
            "workspace.region",
            "clusters[0].name",
            "clusters[0].max_instances",
            "clusters[0].tier",
            "clusters[0].ssh.password",
            "clusters[1].idle_time_before_scale_down",
            "clusters[1].node_public_ip",
            "clusters[1].size",
        ]
    )


def test_not_a_mapping_is_one_clear_problem() -> None:
    with pytest.raises(ConfigError) as info:
        validate(["workspace"])
    assert info.value.problems == [
        "azml-gpu: expected a mapping of keys, got list; write workspace, clusters and locks as keys"
    ]


def _three_clusters(first_name: str, second: str, third: str) -> dict:
    raw = good_raw()
    extra = copy.deepcopy(raw["clusters"][1])
    raw["clusters"].append(extra)
    for cluster, name in zip(raw["clusters"], (first_name, second, third), strict=True):
        cluster["name"] = name
    return raw


def test_a_duplicate_after_an_invalid_name_is_still_reported() -> None:
    raw = _three_clusters("1bad", "a100-spot", "A100-SPOT")
    with pytest.raises(ConfigError) as info:
        validate(raw)
    problems = info.value.problems
    assert len(problems) == 2, problems
    assert problems[0].startswith("azml-gpu:clusters[0].name: '1bad' must start with a letter")
    assert problems[1] == (
        "azml-gpu:clusters[2].name: 'A100-SPOT' is already the name of clusters[1]; give each cluster its own"
        " name"
    )


def test_a_duplicate_of_the_first_cluster_after_an_invalid_one_names_the_first() -> None:
    raw = _three_clusters("h100-x4", "x", "H100-x4")
    with pytest.raises(ConfigError) as info:
        validate(raw)
    assert [p.split(": ", 1)[0] for p in info.value.problems] == [
        "azml-gpu:clusters[1].name",
        "azml-gpu:clusters[2].name",
    ]
    assert "already the name of clusters[0]" in info.value.problems[1]


@pytest.mark.parametrize("entry", ["name", "h100-x4", 3])
def test_rules_of_the_clusters_after_a_non_mapping_entry_are_reported(entry: object) -> None:
    raw = good_raw()
    second = raw["clusters"][1]
    second.update(min_instances=3, max_instances=2)
    raw["clusters"] = [entry, second, dict(second, name="A100-SPOT", min_instances=0)]
    with pytest.raises(ConfigError) as info:
        validate(raw)
    problems = info.value.problems
    assert [p.split(": ", 1)[0] for p in problems] == [
        "azml-gpu:clusters[0]",
        "azml-gpu:clusters[1].max_instances",
        "azml-gpu:clusters[2].name",
    ], problems
    assert problems[1].endswith("2 is below min_instances (3); use at least 3")
    assert "'A100-SPOT' is already the name of clusters[1]" in problems[2]


def _raw(**network) -> dict:
    return {
        "workspace": {"name": "ws-a", "resource_group": {"name": "rg-a"}, "region": "eastus"},
        "clusters": [
            {
                "name": "h100-x2",
                "size": "Standard_ND96isr_H100_v5",
                "max_instances": 2,
                "idle_time_before_scale_down": 300,
                "tier": "dedicated",
                "ssh": "disabled",
                "region": "westus3",
            }
        ],
        **({"network": network} if network else {}),
    }


def test_combination_problems_come_with_the_other_problems_fixed_first() -> None:
    """A combination needs the whole config typed: it is reported once the keys themselves parse."""
    raw = _raw(managed={"isolation_mode": "AllowOnlyApprovedOutbound"})
    raw["clusters"][0]["max_instances"] = 0
    with pytest.raises(ConfigError) as info:
        validate(raw)
    assert [p.split(": ")[0] for p in info.value.problems] == ["azml-gpu:clusters[0].max_instances"]


def test_node_public_ip_without_subnet_is_reported_with_other_problems() -> None:
    raw = _raw()
    raw["clusters"][0].update(node_public_ip=False, max_instances=0)
    with pytest.raises(ConfigError) as info:
        validate(raw)
    paths = sorted(p.split(": ")[0] for p in info.value.problems)
    assert paths == ["azml-gpu:clusters[0].max_instances", "azml-gpu:clusters[0].node_public_ip"]

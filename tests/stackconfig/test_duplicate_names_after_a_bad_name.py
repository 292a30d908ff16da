"""Every duplicate cluster name is reported, also when an earlier cluster's name failed its own check: the
config's problems come all at once (stackconfig/validation.py), so a user fixes the file in one pass.

Compute names are unique per workspace and compared case-insensitively like every ARM name
(learn.microsoft.com/azure/azure-resource-manager/management/resource-name-rules: "Always perform a
case-insensitive comparison of names")."""

from __future__ import annotations

import copy

import pytest
from stackconfig_factory import good_raw

from stackconfig import ConfigError, validate


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

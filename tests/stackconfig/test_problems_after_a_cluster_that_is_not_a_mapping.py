"""A cluster entry that is not a mapping (a name written where the cluster's keys belong) is reported, and the
clusters after it are still judged: every problem of the file comes at once (stackconfig/validation.py)."""

from __future__ import annotations

import pytest
from stackconfig_factory import good_raw

from stackconfig import ConfigError, validate


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

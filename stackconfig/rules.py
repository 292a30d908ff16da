"""Rules that involve more than one field. Each returns (key, "<what is wrong>; <fix>") pairs.

They take plain values so `validate()` can apply them to the fields that passed their own checks even when
other fields of the same cluster failed, and so every problem is reported at once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def cluster_rules(values: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Rules of one cluster. `values` holds only the fields that passed their own checks (defaults filled).
    Rules that depend on the network (node public IP, subnet, region) are in `stackconfig.combinations`."""
    problems: list[tuple[str, str]] = []
    low, high = values.get("min_instances"), values.get("max_instances")
    if high is not None:
        if low is not None and high < low:
            problems.append(("max_instances", f"{high} is below min_instances ({low}); use at least {low}"))
        elif high < 1:
            problems.append(
                (
                    "max_instances",
                    f"{high} is below 1; use at least 1 (min_instances: 0 still scales to zero)",
                )
            )
    return problems


def stack_rules(cluster_names: Sequence[str | None]) -> list[tuple[str, str]]:
    """Rules across clusters. `cluster_names[i]` is None when that cluster's name failed its own check."""
    problems: list[tuple[str, str]] = []
    first: dict[str, int] = {}
    for index, name in enumerate(cluster_names):
        if name is None:
            continue
        # Compute names are unique per workspace, compared case-insensitively like every ARM name
        # (resource-name-rules.md: "Always perform a case-insensitive comparison of names").
        key = name.lower()
        if key in first:
            problems.append(
                (
                    f"clusters[{index}].name",
                    f"'{name}' is already the name of clusters[{first[key]}]; give each cluster its own name",
                )
            )
        else:
            first[key] = index
    return problems

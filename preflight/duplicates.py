"""Duplicate resource URNs, reported as the engine reports them and traced back to the stack config.

The engine refuses a second registration of a URN and stops the deployment: `Duplicate resource URN '<urn>';
try giving it a unique name` (pulumi/pulumi v3.274.1 pkg/resource/deploy/step_generator.go `generateURN` ->
sdk/go/common/diag/errors.go `GetDuplicateResourceURNError`, error 2001; `pulumi preview` then exits
non-zero), at the first duplicate. In this program a duplicate
comes from two entries of a config list that derive the same resource name (two `identity.data_stores` ids
ending in the same account name, the same person and role twice in `identity.role_assignments`):
`config_entries` finds the list entries whose values appear in the resource's name, and keeps a list where
two or more do.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

NAMESPACE = "azml-gpu"


def _tokens(value: Any) -> set[str]:
    """The strings an entry could put into a resource name: each string value, its last path segment (an
    ARM id's name) and its slug (`AzureML Data Scientist` -> `azureml-data-scientist`), lower case."""
    if isinstance(value, Mapping):
        return set().union(*(_tokens(v) for v in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(_tokens(v) for v in value)) if value else set()
    if not isinstance(value, str) or not value.strip():
        return set()
    text = value.strip().lower()
    return {t for t in {text, text.rstrip("/").rsplit("/", 1)[-1], re.sub(r"\s+", "-", text)} if len(t) > 1}


def _lists(value: Any, path: str) -> Iterator[tuple[str, list[Any]]]:
    if isinstance(value, Mapping):
        for key, item in value.items():
            yield from _lists(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        yield path, value
        for i, item in enumerate(value):
            yield from _lists(item, f"{path}[{i}]")


def _score(tokens: set[str], name: str) -> int:
    padded = f"-{name.lower().replace('/', '-')}-"
    return sum(1 for t in tokens if f"-{t.replace('/', '-')}-" in padded)


def config_entries(resource_name: str, config: Mapping[str, Any]) -> list[str]:
    """`azml-gpu:<path>[i]` of the config list entries that derive `resource_name` (two or more of one list,
    best match first; empty when no list has two)."""
    block = {k.split(":", 1)[1]: v for k, v in config.items() if k.startswith(f"{NAMESPACE}:")}
    block |= {k: v for k, v in config.items() if ":" not in k}
    best: tuple[int, str, list[int]] | None = None
    for path, items in _lists(block, ""):
        scores = [_score(_tokens(item), resource_name) for item in items]
        top = max(scores, default=0)
        hits = [i for i, s in enumerate(scores) if s == top]
        if top > 0 and len(hits) >= 2 and (best is None or top > best[0]):
            best = (top, path, hits)
    if best is None:
        return []
    return [f"{NAMESPACE}:{best[1]}[{i}]" for i in best[2]]


def problems(urns: list[str], config: Mapping[str, Any]) -> list[str]:
    """One line per duplicated URN: the engine's error, the config entries behind it, the fix."""
    out = []
    for urn in sorted(set(urns)):
        name = urn.split("::")[-1]
        entries = config_entries(name, config)
        where = (
            f"{' and '.join(entries)} derive the same resource name '{name}'"
            if entries
            else f"two resources of the program are named '{name}' (no config list entry explains it)"
        )
        fix = (
            "remove the repeated entry, or make the entries differ in what names the resource"
            if entries
            else "give each resource a unique name in the program"
        )
        out.append(
            f"Duplicate resource URN '{urn}'; try giving it a unique name (the engine stops the preview "
            f"here): {where}; {fix}"
        )
    return out

"""validate(raw) -> StackConfig: every problem at once, or ConfigError."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from stackconfig import combinations, rules
from stackconfig.errors import NAMESPACE, ConfigError, key_path, problem, translate
from stackconfig.models import SKIP_CROSS_RULES, SSH_TAGS, ClusterConfig, StackConfig, WorkspaceConfig


def _failed(errors: list[Any]) -> set[tuple[str | int, ...]]:
    """Every location prefix that has an error under it."""
    out: set[tuple[str | int, ...]] = set()
    for error in errors:
        loc = tuple(part for part in error["loc"] if part not in SSH_TAGS)
        for end in range(1, len(loc) + 1):
            out.add(loc[:end])
    return out


def _clean_values(raw: Mapping[str, Any], prefix: tuple[str | int, ...], failed: set) -> dict[str, Any]:
    """A cluster's fields that passed their own checks, with defaults for the absent ones."""
    values: dict[str, Any] = {}
    for name, field in ClusterConfig.model_fields.items():
        if prefix + (name,) in failed:
            continue
        if name in raw:
            values[name] = raw[name]
        elif not field.is_required():
            values[name] = field.get_default(call_default_factory=True)
    return values


def _cross_problems(raw: Mapping[str, Any], failed: set) -> list[str]:
    clusters = raw.get("clusters")
    if not isinstance(clusters, list):
        return []
    out: list[str] = []
    names: list[str | None] = []
    network = raw.get("network")
    managed = network.get("managed") if isinstance(network, Mapping) else None
    mode = managed.get("isolation_mode") if isinstance(managed, Mapping) else None
    managed_network = mode in ("AllowInternetOutbound", "AllowOnlyApprovedOutbound")
    for index, cluster in enumerate(clusters):
        if not isinstance(cluster, Mapping):
            names.append(None)
            continue
        prefix = ("clusters", index)
        values = _clean_values(cluster, prefix, failed)
        names.append(values.get("name") if isinstance(values.get("name"), str) else None)
        for key, message in rules.cluster_rules(values, managed_network):
            out.append(problem(key_path(prefix + (key,)), message))
    out.extend(problem(path, message) for path, message in rules.stack_rules(names))
    return out


def validate(raw: Any) -> StackConfig:
    """Validate the namespace's keys (without the `azml-gpu:` prefix); ConfigError lists every problem."""
    if not isinstance(raw, Mapping):
        raise ConfigError(
            [
                problem(
                    "",
                    f"expected a mapping of keys, got {type(raw).__name__}; "
                    "write workspace, clusters and locks as keys",
                )
            ]
        )
    try:
        config = StackConfig.model_validate(dict(raw), context={SKIP_CROSS_RULES: True})
        errors: list[Any] = []
    except ValidationError as exc:
        config, errors = None, exc.errors()
    problems = [translate(StackConfig, error, strip=SSH_TAGS) for error in errors]
    problems += _cross_problems(raw, _failed(errors))
    if config is not None and not problems:
        # Network and identity combinations need the whole config typed (stackconfig.combinations).
        problems += [problem(path, message) for path, message in combinations.problems(config)]
    problems = list(dict.fromkeys(problems))
    if problems or config is None:
        raise ConfigError(problems)
    return config


def _relative(line: str) -> str:
    """`azml-gpu:max_instances: ...` -> `max_instances: ...` (a model validated alone, not in a stack)."""
    prefix = f"{NAMESPACE}:"
    return line[len(prefix) :] if line.startswith(prefix) else line


def cluster_problems(raw: Mapping[str, Any]) -> list[str]:
    """One cluster's problems by the rules `validate` applies to each of `clusters` (the same checks and
    messages), each `<key>: <what>; <fix>`: for a cluster described outside a stack file (the GpuCluster
    component's arguments). Network combinations need the workspace and stay with `validate`."""
    try:
        ClusterConfig.model_validate(dict(raw), context={SKIP_CROSS_RULES: True})
        errors: list[Any] = []
    except ValidationError as exc:
        errors = exc.errors()
    problems = [_relative(translate(ClusterConfig, error, strip=SSH_TAGS)) for error in errors]
    values = _clean_values(raw, (), _failed(errors))
    problems += [f"{key}: {message}" for key, message in rules.cluster_rules(values, managed_network=None)]
    return list(dict.fromkeys(problems))


def workspace_problems(raw: Mapping[str, Any]) -> list[str]:
    """The workspace's own problems by `validate`'s rules (the Workspace component's arguments), each
    `<key>: <what>; <fix>`."""
    try:
        WorkspaceConfig.model_validate(dict(raw))
    except ValidationError as exc:
        return list(dict.fromkeys(_relative(translate(WorkspaceConfig, e)) for e in exc.errors()))
    return []

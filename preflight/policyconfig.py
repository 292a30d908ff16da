"""Policy-config handling: read a `--policy-pack-config` file and reconcile it with the pack's policies.

Config (`--policy-pack-config FILE.json`) is read as the CLI reads it (pkg/resource/analyzer/config.go
`ReconcilePolicyPackConfig`): schema defaults and each policy's own level first, then `"all"` (a level
string, or an object whose `enforcementLevel` applies to every policy; other keys under `all` are not
applied by the CLI, and are an error here), then each policy's entry (a level string, or an object with an
optional `enforcementLevel` and properties merged over the defaults key by key), then JSON-schema
validation. Unknown policy names and unknown properties are errors here (stricter than the CLI), except the
gate's own checks (`GATE_CHECKS`, e.g. cluster-replacement), which the CLI passes through when they carry an
enforcementLevel.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jsonschema
from google.protobuf import json_format
from pulumi.runtime.proto import analyzer_pb2

from policies import quota_reservation
from stackconfig.regions import region_problem

LEVELS = {
    "advisory": analyzer_pb2.ADVISORY,
    "mandatory": analyzer_pb2.MANDATORY,
    "remediate": analyzer_pb2.REMEDIATE,
    "disabled": analyzer_pb2.DISABLED,
}
LEVEL_NAMES = {v: k for k, v in LEVELS.items()}


class PolicyConfigError(Exception):
    """The policy config is invalid; `problems` lists each one with its key path."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


def _levels() -> str:
    return ", ".join(LEVELS)


def resolve_config(
    config: Mapping[str, Any],
    policies: Mapping[str, analyzer_pb2.PolicyInfo],
    gate_checks: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, tuple[str, dict[str, Any]]]:
    """Per policy (and per gate check): (enforcement level, properties), or PolicyConfigError listing every
    problem. Mirrors the CLI's reading of --policy-pack-config (module docstring). `gate_checks`: name ->
    {"enforcementLevel": default level, "configSchema": JSON schema} of the gate's own checks."""
    problems: list[str] = []
    if not isinstance(config, Mapping):
        raise PolicyConfigError(["the policy config must be a JSON object keyed by policy name"])
    checks = dict(gate_checks or {})
    infos: dict[str, tuple[str, dict[str, Any]]] = {
        name: (
            LEVEL_NAMES[info.enforcementLevel],
            json_format.MessageToDict(info.configSchema) if info.HasField("configSchema") else {},
        )
        for name, info in policies.items()
    }
    infos |= {name: (spec["enforcementLevel"], spec.get("configSchema", {})) for name, spec in checks.items()}
    all_level = None
    if "all" in config:
        raw_all = config["all"]
        level = raw_all.get("enforcementLevel") if isinstance(raw_all, Mapping) else raw_all
        extra = sorted(k for k in raw_all if k != "enforcementLevel") if isinstance(raw_all, Mapping) else []
        if level not in LEVELS:
            problems.append(f"all: {level!r} is not an enforcement level; use one of {_levels()}")
        else:
            all_level = level
        if extra:
            problems.append(
                f"all.{extra[0]}: only enforcementLevel under all applies to every policy (the Pulumi CLI "
                "ignores other keys there); move it under the policy it is for"
            )
    for name in config:
        if name != "all" and name not in infos:
            problems.append(f"{name}: no such policy in the pack; known: {', '.join(sorted(infos))}")
    effective: dict[str, tuple[str, dict[str, Any]]] = {}
    for name, (own_level, schema) in infos.items():
        level = all_level or own_level
        raw = config.get(name, {})
        props: dict[str, Any] = {}
        known = schema.get("properties", {})
        if isinstance(raw, str):
            if raw not in LEVELS:
                problems.append(f"{name}: {raw!r} is not an enforcement level; use one of {_levels()}")
            else:
                level = raw
        elif isinstance(raw, Mapping):
            props = {k: v for k, v in raw.items() if k != "enforcementLevel"}
            if "enforcementLevel" in raw:
                if raw["enforcementLevel"] not in LEVELS:
                    problems.append(
                        f"{name}.enforcementLevel: {raw['enforcementLevel']!r} is not an enforcement level; "
                        f"use one of {', '.join(LEVELS)}"
                    )
                else:
                    level = raw["enforcementLevel"]
            elif name in checks and name in config:
                problems.append(
                    f"{name}: give an enforcementLevel; it is the gate's own check, not a pack policy, and "
                    "the Pulumi CLI accepts an entry for it only with a level"
                )
            for key in props:
                if key not in known:
                    hint = f"known: {', '.join(sorted(known))}" if known else "it takes no properties"
                    problems.append(f"{name}.{key}: unknown property; {hint}")
            full = {"type": "object", "properties": known, "required": schema.get("required", [])}
            schema_problems = [
                f"{name}{'.' + '.'.join(str(p) for p in err.absolute_path) if err.absolute_path else ''}: "
                f"{err.message}"
                for err in jsonschema.Draft7Validator(full).iter_errors(props)
            ]
            problems.extend(schema_problems)
            if name == quota_reservation.NAME and not schema_problems:
                # Stricter than the CLI, as for unknown properties: a misspelt region or quota family
                # matches no pool, which would turn the mandatory check into advisories.
                problems.extend(
                    f"{name}.{p}"
                    for p in quota_reservation.config_problems(props.get("quotas", {}), region_problem)
                )
        else:
            problems.append(f"{name}: expected an enforcement level or an object, got {type(raw).__name__}")
        # Schema defaults are filled in first, and the given properties merged over them key by key.
        defaults = {key: spec["default"] for key, spec in known.items() if "default" in spec}
        effective[name] = (level, {**defaults, **props})
    if problems:
        raise PolicyConfigError(problems)
    return effective


def load_policy_config(path: Path) -> dict[str, Any]:
    """Read a --policy-pack-config file; PolicyConfigError with the file name on bad JSON."""
    from stackconfig.loader import read_text

    try:
        data = json.loads(read_text(path))
    except FileNotFoundError:
        problem = f"{path}: no such policy config file; create it (see docs/policies.md)"
        raise PolicyConfigError([problem]) from None
    except IsADirectoryError:
        problem = f"{path} is a directory; give the policy config JSON file, e.g. policies/config/STACK.json"
        raise PolicyConfigError([problem]) from None
    except OSError as e:
        problem = f"cannot read {path}: {e.strerror or e}; check the file's path and permissions"
        raise PolicyConfigError([problem]) from None
    except json.JSONDecodeError as e:
        problem = f"{path}: invalid JSON at line {e.lineno} column {e.colno}: {e.msg}; fix the JSON syntax"
        raise PolicyConfigError([problem]) from None
    except ValueError as e:  # not UTF-8 (the message names the file and the fix)
        raise PolicyConfigError([str(e)]) from None
    if not isinstance(data, dict):
        raise PolicyConfigError([f"{path}: the policy config must be a JSON object keyed by policy name"])
    return data

"""The gate's check of a `--policy-pack-config` file, before the CLI runs: every problem at once, worded as
stack-config problems are, where the CLI would stop at its first with its own wording. The CLI still reads the
file itself and decides the verdict with it; this check refuses only what the CLI refuses, plus the pack's own
stricter checks (below), and notes what the CLI accepts but no policy reads.

Read as the CLI reads it (pulumi/pulumi v3.274.1 pkg/resource/analyzer/config.go: `parsePolicyPackConfig`,
`parsePolicyConfigs`, `extractEnforcementLevel`, `ReconcilePolicyPackConfig`, `applyConfig`,
`validatePolicyPackConfig`; pkg/resource/plugin/analyzer_plugin.go `Configure`), accepting and refusing the
same files:
- an empty (whitespace) file is an empty config; otherwise a JSON object. A numeric `version` makes it the
  versioned form (`version` 2 only: `{"version": 2, "policies": {...}}`); `environments` (Pulumi ESC) and v2
  `exceptions` are refused here because the gate cannot resolve them offline (the CLI would);
- each entry is a level string (`advisory`, `mandatory`, `remediate`, `disabled`) or an object with an
  optional string `enforcementLevel`; anything else is refused; an empty object is dropped;
- schema defaults and each policy's own level first, then `"all"` (its level, when valid, applies to every
  policy), then each entry (its level, and its properties merged over the defaults key by key), then
  JSON-schema validation of every policy's properties;
- an entry for a name the pack does not have is passed through to Configure, which refuses one without a level
  (`invalid enforcement level ""`); with a level the CLI accepts it, and so does the gate, with a note (no
  policy reads it). Unknown properties and keys under `all` other than `enforcementLevel` are accepted the
  same way, with a note.
Stricter than the CLI, by the pack's own checks: `quota-reservation` quota keys that match no pool
(`registry.config_problems`) are errors. Problems are worded as stack-config problems are
(stackconfig.errors): `<policy>.<key path>: what is wrong; the fix`, all at once.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema

LEVELS = ("advisory", "mandatory", "remediate", "disabled")


class PolicyConfigError(Exception):
    """The policy config is invalid; `problems` lists each one with its key path."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


def _levels() -> str:
    return ", ".join(LEVELS)


def _show(value: Any) -> str:
    """A value as stack-config problems show it (stackconfig.errors); integral floats (every number in a
    protobuf Struct is a double) as integers."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, Mapping):
        return "a mapping"
    return repr(value) if isinstance(value, str) else str(value)


_TYPE_WORDS = {
    "array": ("a list", 'write a list, e.g. ["h100-x4"]'),
    "integer": ("a whole number", "use a whole number"),
    "number": ("a number", "use a number"),
    "string": ("text", "write text"),
    "boolean": ("true or false", "write true or false"),
    "object": ("a mapping of keys", "write it as keys under this name"),
}


def _key_path(name: str, parts: Any) -> str:
    path = name
    for part in parts:
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return path


def _schema_problem(name: str, err: jsonschema.ValidationError) -> str:
    """One JSON-schema error in the stack-config wording: key path, what is wrong, the fix."""
    path = _key_path(name, err.absolute_path)
    value = err.instance
    if err.validator == "type":
        wanted = err.validator_value if isinstance(err.validator_value, str) else str(err.validator_value)
        noun, fix = _TYPE_WORDS.get(wanted, (wanted, f"use a {wanted}"))
        if wanted in ("integer", "number") and isinstance(value, str) and value.strip().lstrip("-").isdigit():
            return f"{path}: expected {noun}, got the string {value!r}; write {value.strip()} without quotes"
        if wanted == "array" and isinstance(value, str):
            return f"{path}: expected {noun}, got {_show(value)}; write it as a list: [{json.dumps(value)}]"
        return f"{path}: expected {noun}, got {_show(value)}; {fix}"
    bound = _show(err.validator_value)
    if err.validator == "minimum":
        return f"{path}: {_show(value)} is below {bound}; use {bound} or more"
    if err.validator == "maximum":
        return f"{path}: {_show(value)} is above {bound}; use {bound} or less"
    if err.validator == "enum":
        allowed = ", ".join(str(v) for v in err.validator_value)
        return f"{path}: {_show(value)} is not allowed; use one of {allowed}"
    if err.validator == "pattern":
        hint = (
            "YYYY-MM-DD, e.g. 2027-01-31" if "\\d{4}" in str(err.validator_value) else "the documented form"
        )
        return f"{path}: {_show(value)} does not have the expected form; write {hint}"
    if err.validator == "required":
        missing = str(err.message).split("'")[1] if "'" in str(err.message) else "it"
        return f"{path}.{missing}: required key is missing; add {missing}"
    return f"{path}: {err.message}; fix the value"


@cache
def pack_policies() -> dict[str, tuple[str, dict[str, Any]]]:
    """Each policy of the pack (`policies.registry`): its own enforcement level and its config schema, as the
    pack reports them to the engine (GetAnalyzerInfo)."""
    from policies import registry  # the pack's modules (and pulumi_policy): only when a config is checked

    return {
        m.NAME: (str(m.ENFORCEMENT.value), {"properties": dict(m.CONFIG)} if m.CONFIG else {})
        for m in registry.MODULES
    }


def resolve_config(
    config: Mapping[str, Any],
    policies: Mapping[str, tuple[str, dict[str, Any]]],
    gate_checks: Mapping[str, Mapping[str, Any]] | None = None,
    notes: list[str] | None = None,
) -> dict[str, tuple[str, dict[str, Any]]]:
    """Per policy (and per gate check, and per unknown name the CLI passes through): (enforcement level,
    properties), or PolicyConfigError listing every problem. Mirrors the CLI (module docstring).
    `gate_checks`: name -> {"enforcementLevel": default level, "configSchema": JSON schema} of the gate's own
    checks; `notes` collects what the CLI accepts but no policy reads."""
    problems: list[str] = []
    said = notes if notes is not None else []
    if not isinstance(config, Mapping):
        raise PolicyConfigError(["the policy config must be a JSON object keyed by policy name"])
    checks = dict(gate_checks or {})
    infos: dict[str, tuple[str, dict[str, Any]]] = dict(policies)
    infos |= {name: (spec["enforcementLevel"], spec.get("configSchema", {})) for name, spec in checks.items()}
    # parsePolicyConfigs: each entry's level and properties ("" = none given); empty entries dropped.
    given: dict[str, tuple[str, dict[str, Any]]] = {}
    for name in sorted(config):
        raw = config[name]
        if isinstance(raw, str):
            if raw not in LEVELS:
                problems.append(f"{name}: {raw!r} is not an enforcement level; use one of {_levels()}")
                continue
            given[name] = (raw, {})
        elif isinstance(raw, Mapping):
            props = {k: v for k, v in raw.items() if k != "enforcementLevel"}
            level = raw.get("enforcementLevel", "")
            if "enforcementLevel" in raw and not isinstance(level, str):
                problems.append(
                    f"{name}.enforcementLevel: expected text, got {_show(level)}; use one of {_levels()}"
                )
                continue
            if level and level not in LEVELS:
                problems.append(
                    f"{name}.enforcementLevel: {level!r} is not an enforcement level; use one of {_levels()}"
                )
                continue
            if level or props:
                given[name] = (level, props)
        else:
            problems.append(
                f"{name}: expected an enforcement level or a mapping of keys, got {_show(raw)}; write "
                f'"{name}": "mandatory" or "{name}": {{"enforcementLevel": "mandatory", ...}}'
            )
    # applyConfig: `all` first (its valid level for every policy), then every entry, `all` included.
    all_level = given.get("all", ("", {}))[0]
    effective: dict[str, tuple[str, dict[str, Any]]] = {}
    for name, (own_level, schema) in infos.items():
        known = schema.get("properties", {})
        defaults = {key: spec["default"] for key, spec in known.items() if "default" in spec}
        effective[name] = (all_level or own_level, defaults)
    for name, (level, props) in given.items():
        before_level, before_props = effective.get(name, ("", {}))
        effective[name] = (level or before_level, {**before_props, **props})
        if name == "all":
            if props:
                said.append(
                    f"all.{sorted(props)[0]}: only enforcementLevel under all applies to every policy (the "
                    "Pulumi CLI passes the other keys to a policy named 'all', which this pack does not "
                    "have); move it under the policy it is for"
                )
            continue
        if name in checks and not level:
            problems.append(
                f"{name}: give an enforcementLevel; it is the gate's own check, not a pack policy, and the "
                "Pulumi CLI passes an entry for it to the pack only with a level (`invalid enforcement level "
                '""` otherwise)'
            )
            continue
        if name not in infos:
            if not (level or before_level):
                problems.append(
                    f"{name}: no such policy in the pack and no enforcementLevel, which the Pulumi CLI "
                    'refuses (`invalid enforcement level ""`); fix the name (known: '
                    f"{', '.join(sorted(infos))}) or remove it"
                )
            else:
                close = difflib.get_close_matches(name, list(infos), n=1, cutoff=0.6)
                hint = f"did you mean {close[0]}?" if close else "remove it"
                said.append(f"{name}: no such policy in the pack; the Pulumi CLI passes it on unused; {hint}")
            continue
        known = infos[name][1].get("properties", {})
        for key in sorted(props):
            if key not in known:
                close = difflib.get_close_matches(key, list(known), n=1, cutoff=0.6)
                hint = (
                    f"did you mean {close[0]}?"
                    if close
                    else (f"known: {', '.join(sorted(known))}" if known else "it takes no properties")
                )
                said.append(
                    f"{name}.{key}: unknown property, accepted by the Pulumi CLI but read by no "
                    f"policy; {hint}"
                )
    if "all" in effective and "all" not in given:
        effective.pop("all")
    if all_level == "" and "all" in given:
        problems.append(
            'all: no enforcementLevel, which the Pulumi CLI refuses (`invalid enforcement level ""`); add '
            '"enforcementLevel": "mandatory" (or advisory, disabled) or remove all'
        )
    # validatePolicyPackConfig: every policy with a schema, its resulting properties.
    for name, (_own, schema) in infos.items():
        known = schema.get("properties", {})
        props = effective[name][1]
        full = {"type": "object", "properties": known, "required": schema.get("required", [])}
        errors = sorted(
            jsonschema.Draft7Validator(full).iter_errors(props),
            key=lambda e: [str(p) for p in e.absolute_path],
        )
        problems.extend(_schema_problem(name, err) for err in errors)
        if not errors and name in given:
            # Stricter than the CLI: the policy's own config check (quota-reservation: a misspelt region or
            # quota family matches no pool).
            from policies import registry

            problems.extend(f"{name}.{p}" for p in registry.config_problems(name, given[name][1]))
    if problems:
        raise PolicyConfigError(problems)
    return effective


def load_policy_config(path: Path) -> dict[str, Any]:
    """Read a --policy-pack-config file as the CLI does (module docstring); PolicyConfigError naming the file
    and the fix."""
    from stackconfig.loader import read_text

    try:
        text = read_text(path)
        data = json.loads(text) if text.strip() else {}
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
    version = data.get("version")
    if isinstance(version, int | float) and not isinstance(version, bool):
        if version > 2:
            raise PolicyConfigError(
                [f"{path}: version: policy pack config version {version} isn't supported; use version 2"]
            )
        if version != 2:
            raise PolicyConfigError([f"{path}: version: must be 2 (or leave version out)"])
        if data.get("exceptions") is not None:
            raise PolicyConfigError(
                [f"{path}: exceptions: policy exceptions are not supported by the offline gate; remove them"]
            )
        policies = data.get("policies") or {}
        if not isinstance(policies, dict):
            raise PolicyConfigError(
                [f"{path}: policies: expected a mapping of policy names, got {_show(policies)}"]
            )
        data = dict(policies) | ({"environments": data["environments"]} if "environments" in data else {})
    if "environments" in data:
        envs = data["environments"]
        if not isinstance(envs, list) or not all(isinstance(e, str) for e in envs):
            raise PolicyConfigError([f'{path}: environments: "environments" must be an array of strings'])
        raise PolicyConfigError(
            [
                f"{path}: environments: Pulumi ESC environments need Pulumi Cloud, which the offline gate "
                "does not reach; "
                "put the values in the file instead"
            ]
        )
    return data

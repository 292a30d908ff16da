"""ConfigError and the translation of pydantic errors into `azml-gpu:<key path>: <what is wrong>; <fix>`."""

from __future__ import annotations

import difflib
import typing
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel
from pydantic_core import ErrorDetails

NAMESPACE = "azml-gpu"


class ConfigError(Exception):
    """Invalid stack config. `problems` lists every problem, each `azml-gpu:<key path>: <what>; <fix>`."""

    def __init__(self, problems: Sequence[str]):
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


def key_path(loc: Sequence[str | int]) -> str:
    """`('clusters', 1, 'max_instances')` -> `clusters[1].max_instances`."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else part
    return out


def problem(path: str, message: str) -> str:
    """One problem line."""
    return f"{NAMESPACE}:{path}: {message}" if path else f"{NAMESPACE}: {message}"


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The pydantic model inside an annotation such as `list[X]`, `X | None` or `Annotated[X, ...]`."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        if (found := _model_in(arg)) is not None:
            return found
    return None


def _model_at(root: type[BaseModel], loc: Sequence[str | int]) -> type[BaseModel] | None:
    """The model that the mapping at `loc` is validated against (None when the path leaves the schema)."""
    model: type[BaseModel] | None = root
    for part in loc:
        if isinstance(part, int):
            continue
        if model is None or part not in model.model_fields:
            return None
        model = _model_in(model.model_fields[part].annotation)
    return model


def _example(root: type[BaseModel], loc: Sequence[str | int]) -> Any:
    owner = _model_at(root, loc[:-1]) if loc else None
    key = loc[-1] if loc else None
    if owner is None or not isinstance(key, str) or key not in owner.model_fields:
        return None
    examples = owner.model_fields[key].examples
    return examples[0] if examples else None


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if value is None:
        return "null"
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return str(value)


def _yaml(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_yaml(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_yaml(v) for v in value) + "]"
    return "null" if value is None else str(value)


# Keys that existed once and were removed on purpose: the reason replaces "unknown key".
REMOVED_KEYS = {
    "local_auth": (
        "removed: on Azure ML computes local authentication is SSH, so it follows ssh (on exactly when ssh "
        "is set; azure-ai-ml sends disableLocalAuth = not ssh_settings); remove local_auth and choose "
        "ssh: disabled or ssh: {admin_user, public_key}"
    ),
}


def _unknown_key(root: type[BaseModel], loc: Sequence[str | int]) -> str:
    key = str(loc[-1])
    if key in REMOVED_KEYS:
        return REMOVED_KEYS[key]
    if "password" in key.lower():
        return (
            "passwords are not accepted (SSH by key only); "
            f"remove {key} and set public_key to your SSH public key"
        )
    owner = _model_at(root, loc[:-1])
    valid = list(owner.model_fields) if owner is not None else []
    close = difflib.get_close_matches(key, valid, n=1, cutoff=0.6)
    if close:
        return f"unknown key; did you mean {close[0]}?"
    return f"unknown key; remove it (valid keys here: {', '.join(valid)})"


def translate(root: type[BaseModel], error: ErrorDetails, strip: Sequence[str] = ()) -> str:
    """One pydantic error as a problem line, with the key path and a fix."""
    loc = [part for part in error["loc"] if part not in strip]
    path = key_path(loc)
    kind, value, ctx = error["type"], error.get("input"), error.get("ctx") or {}
    example = _example(root, loc)
    if kind == "string_type" and loc[-1:] == ["[key]"]:
        # pydantic's location of a mapping's key is (..., <the key itself>, '[key]'): name the mapping
        return problem(key_path(loc[:-2]), f"the key {_show(value)} is not text; quote it: '{_yaml(value)}'")
    if kind == "missing" and loc and loc[-1] == "ssh":
        return problem(
            path,
            "required key is missing; say it explicitly: ssh: disabled, or ssh: {admin_user, "
            "public_key} (SSH can't be enabled after the cluster is created)",
        )
    if kind == "missing":
        sub = _model_at(root, loc)
        if sub is not None:
            required = [name for name, field in sub.model_fields.items() if field.is_required()]
            hint = f"add {loc[-1]} with the keys {', '.join(required)} (see docs/config.md)"
        elif example is not None:
            hint = f"add {loc[-1]}: {_yaml(example)}"
        else:
            hint = f"add {loc[-1] if loc else 'it'}"
        return problem(path, f"required key is missing; {hint}")
    if kind == "extra_forbidden":
        return problem(path, _unknown_key(root, loc))
    if kind == "value_error":
        return problem(path, str(ctx.get("error", error["msg"])))
    if kind in ("int_type", "int_from_float", "int_parsing"):
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            return problem(
                path,
                f"expected a whole number, got the string {value!r}; write {value.strip()} without quotes",
            )
        fix = f"use a whole number, e.g. {_yaml(example)}" if example is not None else "use a whole number"
        return problem(path, f"expected a whole number, got {_show(value)}; {fix}")
    if kind == "bool_type":
        if isinstance(value, str) and value.strip().lower() in ("true", "false", "yes", "no", "on", "off"):
            fixed = "true" if value.strip().lower() in ("true", "yes", "on") else "false"
            return problem(
                path, f"expected true or false, got the string {value!r}; write {fixed} without quotes"
            )
        return problem(path, f"expected true or false, got {_show(value)}; write true or false")
    if kind == "string_type":
        if isinstance(value, int | float):
            return problem(path, f"expected text, got {_show(value)}; quote it: '{_yaml(value)}'")
        fix = f"write text, e.g. {example}" if isinstance(example, str) else "write text"
        return problem(path, f"expected text, got {_show(value)}; {fix}")
    if kind == "literal_error" and loc and loc[-1] == "ssh":
        return problem(
            path,
            f"{_show(value)} is not allowed; ssh is either 'disabled' or a mapping "
            "{admin_user, public_key} (passwords are not accepted)",
        )
    if kind == "literal_error":
        allowed = [
            a.strip().strip("'") for a in str(ctx.get("expected", "")).replace(" or ", ", ").split(",")
        ]
        allowed = [a for a in allowed if a]
        close = difflib.get_close_matches(str(value), allowed, n=1, cutoff=0.5)
        fix = f"did you mean {close[0]}?" if close else f"use one of {', '.join(allowed)}"
        return problem(path, f"{_show(value)} is not allowed; {fix}")
    if kind == "greater_than_equal":
        return problem(path, f"{_show(value)} is below {ctx['ge']}; use {ctx['ge']} or more")
    if kind == "greater_than":  # a strict bound: the bound itself is refused too
        return problem(path, f"{_show(value)} is not above {ctx['gt']}; use more than {ctx['gt']}")
    if kind == "less_than_equal":
        return problem(path, f"{_show(value)} is above {ctx['le']}; use {ctx['le']} or less")
    if kind == "less_than":
        return problem(path, f"{_show(value)} is not below {ctx['lt']}; use less than {ctx['lt']}")
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        return problem(
            path,
            f"expected a mapping of keys, got {_show(value)}; write it as keys under {path or 'config'}",
        )
    if kind == "list_type":
        return problem(path, f"expected a list, got {_show(value)}; write one '- ' entry per item")
    if kind == "too_short":
        return problem(path, "the list is empty; add at least one entry")
    if kind == "ssh_setting":
        if value is False or value is None:
            fix = "write ssh: disabled (SSH can't be enabled after creation)"
        else:
            fix = "write ssh: disabled, or ssh: {admin_user: azureuser, public_key: 'ssh-rsa AAAA...'}"
        return problem(
            path, f"expected 'disabled' or a mapping {{admin_user, public_key}}, got {_show(value)}; {fix}"
        )
    return problem(path, f"{error['msg']}; fix the value")

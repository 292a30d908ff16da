"""Where the raw namespace comes from: a Pulumi.<stack>.yaml file, or the running Pulumi program's config.

`read_config_block` is the one reader of stack files (stackconfig's CLI and `load_stack_file`, and
preflight's `run_program` and `--config-file`), so a bad file gets the same message everywhere.
"""

from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import Any

import yaml

from stackconfig.errors import NAMESPACE, ConfigError, problem
from stackconfig.models import StackConfig
from stackconfig.validation import validate

KNOWN_KEYS = tuple(StackConfig.model_fields)


def stack_file(stack_or_file: str) -> Path:
    """`dev` -> ./Pulumi.dev.yaml; anything that looks like a path is used as given."""
    if stack_or_file.endswith((".yaml", ".yml")) or "/" in stack_or_file or "\\" in stack_or_file:
        return Path(stack_or_file)
    return Path(f"Pulumi.{stack_or_file}.yaml")


def _split(full_key: str) -> tuple[str, str]:
    """`azml-gpu:clusters` -> (`azml-gpu`, `clusters`); a bare key is in the project's namespace (Pulumi)."""
    namespace, sep, key = full_key.partition(":")
    return (namespace, key) if sep else (NAMESPACE, full_key)


def namespace_config(config: dict[Any, Any]) -> tuple[dict[str, Any], list[str]]:
    """The `azml-gpu:` keys of a stack `config:` block (prefix removed) and problems with the block itself."""
    raw: dict[str, Any] = {}
    problems: list[str] = []
    for full_key, value in config.items():
        namespace, key = _split(str(full_key))
        if namespace == NAMESPACE:
            if isinstance(value, dict) and set(value) == {"secure"}:
                problems.append(
                    problem(
                        key,
                        "is an encrypted (secure) value, which this namespace does not use: nothing in "
                        "it is secret (SSH takes a public key); set it as plain config",
                    )
                )
                continue
            raw[key] = value
        elif difflib.SequenceMatcher(None, namespace, NAMESPACE).ratio() >= 0.8:
            problems.append(
                problem(
                    "",
                    f"config key '{full_key}' is in namespace '{namespace}'; did you mean {NAMESPACE}:{key}?",
                )
            )
    return raw, problems


def read_text(path: Path) -> str:
    """The UTF-8 text of `path`. Raises OSError (unreadable) or ValueError (not UTF-8), one line naming it."""
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        byte = exc.object[exc.start]
        raise ValueError(
            f"{path} is not UTF-8 text (byte 0x{byte:02x} at offset {exc.start}); save it as UTF-8"
        ) from None


def read_yaml(path: Path) -> Any:
    """The YAML document in `path`. Raises OSError (unreadable) or ValueError (not UTF-8, not YAML) with one
    line: `<path> is not valid YAML at line L, column C: <problem>; fix the YAML syntax`."""
    text = read_text(path)
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        reason = getattr(exc, "problem", None) or "invalid YAML"
        raise ValueError(f"{path} is not valid YAML{where}: {reason}; fix the YAML syntax") from None


class StackFileError(ValueError):
    """A stack file that cannot be used; the message is one line naming the file and the fix."""


def read_config_block(path: str | Path) -> dict[str, Any]:
    """The `config:` block of the stack file at exactly `path` (any name), every namespace.

    Raises StackFileError when the file cannot be read, is not UTF-8 or not YAML, or has no `config:`
    mapping (Pulumi allows a stack file without one, but this project's stacks cannot be valid without it).
    """
    path = Path(path)
    try:
        document = read_yaml(path)
    except OSError as exc:
        raise StackFileError(
            f"cannot read {path}: {exc.strerror or exc}; check the stack name or path "
            "(STACK means ./Pulumi.STACK.yaml)"
        ) from None
    except ValueError as exc:  # not UTF-8, not YAML: the message names the file and the fix
        raise StackFileError(str(exc)) from None
    if not isinstance(document, dict) or not isinstance(document.get("config"), dict):
        raise StackFileError(
            f"{path} has no 'config:' mapping; a stack file holds its settings under config:, "
            f"e.g. config: {{{NAMESPACE}:workspace: ...}} (docs/config.md)"
        )
    return dict(document["config"])


def load_stack_file(path: str | Path) -> StackConfig:
    """Validate the `azml-gpu:` keys of a Pulumi stack file. Raises ConfigError (also for unreadable files)"""
    try:
        block = read_config_block(path)
    except StackFileError as exc:
        raise ConfigError([problem("", str(exc))]) from None
    raw, problems = namespace_config(block)
    try:
        config = validate(raw)
    except ConfigError as exc:
        raise ConfigError(problems + exc.problems) from None
    if problems:
        raise ConfigError(problems)
    return config


def _pulumi_keys() -> set[str]:
    """Every key of the namespace the running program can see, so unknown (mistyped) keys are reported too.

    pulumi.Config only answers for keys you name. The full set is the union of the runtime's config map
    (`pulumi.runtime.config.CONFIG`, filled by `set_all_config`) and the `PULUMI_CONFIG` JSON that the
    language host passes to the program (`pulumi.runtime.config.get_config_env`); see
    pulumi/runtime/config.py.
    """
    from pulumi.runtime import config as runtime_config

    keys = set(runtime_config.CONFIG.get()) | set(runtime_config.get_config_env())
    return {_split(k)[1] for k in keys if _split(k)[0] == NAMESPACE} | set(KNOWN_KEYS)


def from_pulumi_config() -> StackConfig:
    """Validate the `azml-gpu:` namespace inside a Pulumi program (pulumi.Config). Raises ConfigError."""
    import pulumi

    config = pulumi.Config(NAMESPACE)
    raw: dict[str, Any] = {}
    for key in sorted(_pulumi_keys()):
        value = config.get(key)
        if value is None:
            continue
        try:
            raw[key] = json.loads(
                value
            )  # structured values arrive as JSON text (Config.get_object does the same)
        except json.JSONDecodeError:
            raw[key] = value
    return validate(raw)

"""Where the raw namespace comes from: a Pulumi.<stack>.yaml file, or the running Pulumi program's config.

`read_config_block` is the one reader of stack files (stackconfig's CLI and `load_stack_file`, and the
gate's stack and `--config-file` checks), so a bad file gets the same message everywhere.

Stack files are read as the Pulumi CLI reads them: `gopkg.in/yaml.v3` (pulumi/pulumi sdk/go/common/encoding/
marshal.go `yamlMarshaler`, used by sdk/go/common/workspace/loaders.go `LoadProjectStack`, which strips a
UTF-8 BOM first), i.e. YAML 1.2 into untyped values: `no`, `on`, `yes` stay strings; `30:00` stays a string
(no base-60 numbers); a timestamp-looking scalar stays a string ("for backward compatibility reasons we set it
as a string", yaml.v3 decode.go); integers as Go's `strconv.ParseInt(s, 0, 64)` reads them after dropping `_`
(`0x1F`, `0o17`, `0b101`, and the 1.1-style octal `0777` = 511, which yaml.v3 still decodes); and a key
repeated in one mapping is an error (`mapping key "a" already defined at line 1`, yaml.v3 decode.go). In
Python that is ruamel.yaml's safe loader in YAML 1.2 mode (duplicate keys refused by default), with the
timestamp and integer rules above.
"""

from __future__ import annotations

import difflib
import json
import re
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.constructor import ConstructorError, DuplicateKeyError, SafeConstructor
from ruamel.yaml.error import MarkedYAMLError, YAMLError

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


class _YamlV3Constructor(SafeConstructor):
    """YAML 1.2 values as gopkg.in/yaml.v3 decodes them into `interface{}` (module docstring)."""


def _timestamp_as_text(loader: SafeConstructor, node: Any) -> str:
    return str(node.value)


_GO_INT = re.compile(r"^[-+]?(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]+|[0-9]+)$")


def _go_int(loader: SafeConstructor, node: Any) -> int | float | str:
    """`strconv.ParseInt(strings.Replace(s, "_", "", -1), 0, 64)` (yaml.v3 resolve.go); where that fails on
    a leading-zero decimal (`08`, `09`), yaml.v3 `resolve` falls back to `strconv.ParseFloat` because the text
    matches its `yamlStyleFloat`: the value is the float 8.0."""
    text = str(node.value)
    plain = text.replace("_", "")
    if not _GO_INT.match(plain):
        try:
            return SafeConstructor.construct_yaml_int(loader, node)
        except ValueError:  # e.g. `!!int abc`: yaml.v3 "cannot decode !!str `abc` as a !!int"
            raise ConstructorError(
                problem=f"cannot decode {text!r} as an integer", problem_mark=node.start_mark
            ) from None
    sign = -1 if plain.startswith("-") else 1
    digits = plain.lstrip("+-")
    if len(digits) > 1 and digits[0] == "0" and digits[1].isdigit():
        if digits.strip("01234567"):
            return sign * float(digits)
        return sign * int(digits, 8)
    return sign * int(digits, 0)


_YamlV3Constructor.add_constructor("tag:yaml.org,2002:timestamp", _timestamp_as_text)
_YamlV3Constructor.add_constructor("tag:yaml.org,2002:int", _go_int)


def _yaml() -> YAML:
    reader = YAML(typ="safe", pure=True)
    reader.version = (1, 2)
    reader.Constructor = _YamlV3Constructor
    reader.allow_duplicate_keys = False
    return reader


def parse_yaml(text: str, name: str) -> Any:
    """The YAML document in `text` (from `name`), read as the Pulumi CLI reads stack files (module
    docstring). Raises ValueError with one line: `<name> is not valid YAML at line L, column C: <problem>;
    fix the YAML syntax`, or for a repeated key `<name>: mapping key 'K' at line L is already defined at
    line M; keep one of them`."""
    try:
        return _yaml().load(text.removeprefix("\ufeff"))
    except DuplicateKeyError as exc:
        first, again = exc.context_mark, exc.problem_mark
        key = re.search(r'found duplicate key "(.*?)"', str(exc.problem or ""))
        shown = key.group(1) if key else "?"
        raise ValueError(
            f"{name}: mapping key '{shown}' at line {again.line + 1} is already defined at line "
            f"{_key_line(text, shown, first.line, again.line)}; keep one of them (the Pulumi CLI refuses a "
            "repeated key)"
        ) from None
    except MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        reason = exc.problem or "invalid YAML"
        raise ValueError(f"{name} is not valid YAML{where}: {reason}; fix the YAML syntax") from None
    except YAMLError as exc:
        raise ValueError(f"{name} is not valid YAML: {exc}; fix the YAML syntax") from None


def _key_line(text: str, key: str, mapping_line: int, again_line: int) -> int:
    """The line (1-based) of the first `key:` of the mapping that starts at `mapping_line` (0-based)."""
    lines = text.splitlines()
    indent = len(lines[again_line]) - len(lines[again_line].lstrip(" -")) if again_line < len(lines) else 0
    pattern = re.compile(rf"^[ -]*['\"]?{re.escape(key)}['\"]?\s*:")
    for number in range(mapping_line, min(again_line, len(lines))):
        line = lines[number]
        if pattern.match(line) and len(line) - len(line.lstrip(" -")) == indent:
            return number + 1
    return mapping_line + 1


def read_yaml(path: Path) -> Any:
    """The YAML document in `path` (parse_yaml's reading). Raises OSError (unreadable) or ValueError (not
    UTF-8, not YAML, a repeated key), one line naming the file and the fix."""
    return parse_yaml(read_text(path), str(path))


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

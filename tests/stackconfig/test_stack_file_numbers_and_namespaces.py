"""Stack-file numbers yaml.v3 reads in ways Python's YAML readers do not, and the `config:` keys of the
namespace that are set wrongly (encrypted, or under a near-miss namespace).

Expected values are written from gopkg.in/yaml.v3 resolve.go (`resolve`: `strconv.ParseInt(plain, 0, 64)`,
then `ParseUint`, then `strconv.ParseFloat` when the text matches `yamlStyleFloat`
`^[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?$`; an explicit `!!int` that does not resolve to an int
fails "cannot decode ... as a !!int") and Go's strconv (base 0: a leading "0" is octal)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from stackconfig_factory import good_raw

from stackconfig import ConfigError, load_stack_file
from stackconfig.loader import StackFileError, parse_yaml, read_config_block


@pytest.mark.parametrize(
    ("written", "decoded"),
    [
        ("07", 7),  # two digits, leading zero: octal 7
        ("00", 0),
        ("017", 15),
        ("-07", -7),
        ("08", 8.0),  # not octal: ParseInt fails, yamlStyleFloat matches -> float 8
        ("09", 9.0),
        ("-08", -8.0),
        ("0_9", 9.0),  # '_' dropped first
        ("0", 0),
        ("8", 8),
    ],
)
def test_leading_zero_numbers_decode_as_yaml_v3_does(written: str, decoded: object) -> None:
    value = parse_yaml(f"value: {written}\n", "Pulumi.x.yaml")["value"]
    assert (value, type(value)) == (decoded, type(decoded))


def test_a_leading_zero_decimal_in_a_stack_file_is_a_config_error_naming_the_key(tmp_path: Path) -> None:
    raw = good_raw()
    text = yaml.safe_dump({"config": {f"azml-gpu:{k}": v for k, v in raw.items()}}, sort_keys=False)
    path = tmp_path / "Pulumi.dev.yaml"
    path.write_text(text.replace("max_instances: 4", "max_instances: 08"))
    # yaml.v3 reads 08 as the float 8.0 (the Pulumi CLI passes that on): a config error naming the key, where
    # the reader used to stop at "invalid literal for int() with base 8: '08'", naming neither file nor key
    with pytest.raises(ConfigError) as info:
        load_stack_file(path)
    assert info.value.problems == [
        "azml-gpu:clusters[0].max_instances: expected a whole number, got 8.0; use a whole number, e.g. 4"
    ]


def test_an_explicit_int_tag_on_text_is_a_yaml_error_naming_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "Pulumi.dev.yaml"
    path.write_text("config:\n  azml-gpu:clusters:\n    - max_instances: !!int four\n")
    with pytest.raises(StackFileError) as info:
        read_config_block(path)
    message = str(info.value)
    assert message.startswith(f"{path} is not valid YAML at line 3, column 22: ")
    assert "'four'" in message and message.endswith("; fix the YAML syntax")


def _stack(tmp_path: Path, config: dict[str, Any]) -> Path:
    path = tmp_path / "Pulumi.dev.yaml"
    path.write_text(yaml.safe_dump({"config": config}, sort_keys=False))
    return path


def test_a_secure_key_is_reported_alone_and_the_keys_after_it_are_read(tmp_path: Path) -> None:
    raw = good_raw()
    config = {"azml-gpu:locks": {"secure": "AAABADZ1bW15"}} | {
        f"azml-gpu:{k}": v for k, v in raw.items() if k != "locks"
    }
    with pytest.raises(ConfigError) as info:
        load_stack_file(_stack(tmp_path, config))
    assert info.value.problems == [
        "azml-gpu:locks: is an encrypted (secure) value, which this namespace does not use: nothing in it is "
        "secret (SSH takes a public key); set it as plain config"
    ]


@pytest.mark.parametrize(
    ("namespace", "hinted"),
    [
        ("azml-gpu-dev", True),  # SequenceMatcher ratio 16/20 = 0.8 exactly
        ("azmlgpu", True),
        ("azml-gpu-devx", False),  # 16/21, below 0.8
        ("azure-native", False),
        ("azml", False),
    ],
)
def test_a_near_miss_namespace_gets_a_did_you_mean(tmp_path: Path, namespace: str, hinted: bool) -> None:
    config = {f"azml-gpu:{k}": v for k, v in good_raw().items()} | {f"{namespace}:tags": "x"}
    path = _stack(tmp_path, config)
    if hinted:
        with pytest.raises(ConfigError) as info:
            load_stack_file(path)
        assert info.value.problems == [
            f"azml-gpu: config key '{namespace}:tags' is in namespace '{namespace}'; did you mean "
            "azml-gpu:tags?"
        ]
    else:
        assert load_stack_file(path).workspace.name == "ws-llm"


@pytest.mark.parametrize(
    ("text", "first", "again"),
    [
        # the same key one level deeper comes first: the message names the key of the same mapping
        (
            "config:\n  azml-gpu:workspace:\n    resource_group:\n      name: rg\n    name: a\n    name: b\n",
            5,
            6,
        ),
        # in a list item, the key after '- ' counts at the item's indent
        ("config:\n  azml-gpu:clusters:\n    - ssh:\n        name: x\n      name: a\n      name: b\n", 5, 6),
    ],
)
def test_a_repeated_key_names_the_first_line_of_its_own_mapping(
    tmp_path: Path, text: str, first: int, again: int
) -> None:
    path = tmp_path / "Pulumi.dev.yaml"
    path.write_text(text)
    with pytest.raises(StackFileError) as info:
        read_config_block(path)
    assert str(info.value) == (
        f"{path}: mapping key 'name' at line {again} is already defined at line {first}; keep one of them "
        "(the Pulumi CLI refuses a repeated key)"
    )


def test_a_repeated_key_in_a_flow_mapping_names_the_mappings_line(tmp_path: Path) -> None:
    # no `name:` line to point at (both keys sit on one line): the line where the mapping starts, never a
    # `name:` line after the repeated key (line 4, another mapping's)
    path = tmp_path / "Pulumi.dev.yaml"
    path.write_text("config:\n  azml-gpu:locks: {}\n  azml-gpu:workspace: {name: a, name: b}\n  name: c\n")
    with pytest.raises(StackFileError) as info:
        read_config_block(path)
    assert str(info.value).startswith(f"{path}: mapping key 'name' at line 3 is already defined at line 3; ")

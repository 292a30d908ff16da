"""The one stack-file reader reads YAML as the Pulumi CLI does: gopkg.in/yaml.v3 into untyped values
(pulumi/pulumi sdk/go/common/encoding/marshal.go, workspace/loaders.go; yaml.v3 resolve.go and decode.go).
Expected values are written from yaml.v3's resolve table and decode rules, not from the reader."""

from __future__ import annotations

from pathlib import Path

import pytest

from stackconfig.loader import StackFileError, parse_yaml, read_config_block

# (scalar as written, what yaml.v3 decodes it to into interface{})
YAML_12 = [
    ("no", "no"),  # YAML 1.1 bool, a string in 1.2 (resolve table: only true/True/TRUE, false/...)
    ("yes", "yes"),
    ("on", "on"),
    ("off", "off"),
    ("y", "y"),
    ("True", True),
    ("FALSE", False),
    ("30:00", "30:00"),  # base 60 "dropped in YAML 1.2, and purposefully unsupported"
    ("1:20:00", "1:20:00"),
    ("2026-01-01", "2026-01-01"),  # a timestamp into interface{} stays a string
    ("0o17", 15),
    ("0x1F", 31),
    ("0777", 511),  # 1.1-style octal, "still decoded by default in v3"
    ("1_800", 1800),
    ("-12", -12),
    ("1.5", 1.5),
    ("~", None),
    ("null", None),
    ("'0777'", "0777"),
]


@pytest.mark.parametrize(("written", "decoded"), YAML_12)
def test_scalars_decode_as_yaml_v3_does(written: str, decoded: object) -> None:
    assert parse_yaml(f"value: {written}\n", "Pulumi.x.yaml") == {"value": decoded}


def test_a_utf8_bom_is_stripped_as_the_cli_does() -> None:
    assert parse_yaml("\ufeffconfig: {a: 1}\n", "f") == {"config": {"a": 1}}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "config:\n  azml-gpu:workspace:\n    name: a\n    name: b\n",
            "Pulumi.dev.yaml: mapping key 'name' at line 4 is already defined at line 3; keep one of them "
            "(the Pulumi CLI refuses a repeated key)",
        ),
        (
            "config:\n  azml-gpu:clusters: []\n  azml-gpu:clusters: []\n",
            "Pulumi.dev.yaml: mapping key 'azml-gpu:clusters' at line 3 is already defined at line 2; keep "
            "one of them (the Pulumi CLI refuses a repeated key)",
        ),
    ],
)
def test_a_repeated_key_is_refused_naming_both_lines(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "Pulumi.dev.yaml"
    path.write_text(text)
    with pytest.raises(StackFileError) as raised:
        read_config_block(path)
    assert str(raised.value) == message.replace("Pulumi.dev.yaml", str(path))


def test_the_same_key_in_two_mappings_is_fine() -> None:
    assert parse_yaml("a: {name: x}\nb: {name: y}\n", "f") == {"a": {"name": "x"}, "b": {"name": "y"}}


def test_a_tag_value_no_reaches_the_config_as_a_string(tmp_path: Path) -> None:
    path = tmp_path / "Pulumi.s.yaml"
    path.write_text("config:\n  azml-gpu:workspace:\n    tags:\n      env: no\n      window: 30:00\n")
    assert read_config_block(path) == {"azml-gpu:workspace": {"tags": {"env": "no", "window": "30:00"}}}


def test_syntax_errors_keep_the_one_line_form() -> None:
    with pytest.raises(ValueError) as raised:
        parse_yaml("a: [1\n", "F.yaml")
    assert str(raised.value) == (
        "F.yaml is not valid YAML at line 2, column 1: expected ',' or ']', but got '<stream end>'; fix the "
        "YAML syntax"
    )

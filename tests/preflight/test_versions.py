"""preflight/versions.py: the Pulumi CLI versions the gate accepts, at and around the bounds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from preflight import versions

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("v3.274.1", (3, 274, 1)),
        ("3.274.1\n", (3, 274, 1)),
        ("v3.290.0-dev.0", (3, 290, 0)),
        ("v3.274.1+dirty", (3, 274, 1)),
        ("v3.274", None),
        ("pulumi 3.274.1", None),
        ("", None),
    ],
)
def test_parse_version(text: str, parsed: tuple[int, int, int] | None) -> None:
    assert versions.parse_version(text) == parsed


@pytest.mark.parametrize(
    ("version", "ok"),
    [
        ((3, 274, 0), False),  # below the tested version
        ((3, 274, 1), True),  # the tested one
        ((3, 274, 2), True),
        ((3, 300, 0), True),
        ((3, 99999, 0), True),
        ((4, 0, 0), False),  # a new major may change what the gate relies on
        ((2, 300, 0), False),
    ],
)
def test_supported_range(version: tuple[int, int, int], ok: bool) -> None:
    assert versions.supported(version) is ok


def test_the_tested_cli_is_the_one_the_builder_pins() -> None:
    go_mod = (ROOT / "doubles" / "pulumicli" / "go" / "go.mod").read_text()
    assert f"github.com/pulumi/pulumi/pkg/v3 v{versions.PULUMI_VERSION}" in go_mod
    assert versions.parse_version(versions.PULUMI_VERSION) == versions.MIN_CLI


def test_the_provider_version_is_the_sdks_own() -> None:
    import pulumi_azure_native

    plugin = Path(pulumi_azure_native.__file__).parent / "pulumi-plugin.json"
    assert versions.azure_native_version() == json.loads(plugin.read_text())["version"] == "3.29.0"

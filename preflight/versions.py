"""The versions the gate runs with, each read once: the Pulumi CLI it supports and the azure-native provider
version the program asks for."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources

#: The Pulumi CLI the project is tested with (CI builds exactly this one from github.com/pulumi/pulumi/pkg/v3,
#: doubles/pulumicli/go/go.mod pins it). The Python SDK is pulumi 3.272.0 (requirements.txt); pkg/v3 3.272.0
#: and 3.273.0 are not served by the Go module proxy, so the CLI is the nearest served release above it (a
#: newer CLI runs older SDKs: the engine protocol is versioned by feature flags, `SupportsFeature`).
PULUMI_VERSION = "3.274.1"

#: The CLIs the gate accepts on PATH: 3.x from the tested version on. What the gate relies on is there since
#: before it: `--event-log` (apitype.EngineEvent JSON lines), `--client`/`--exec-kind auto.inline` (the
#: Automation API's inline programs), `PULUMI_DEBUG_PROVIDERS` (attach to a running provider) and policy
#: packs run as a binary analyzer; a 4.x CLI may change any of them, so it is refused until tested.
MIN_CLI = (3, 274, 1)
MAX_CLI_EXCLUSIVE = (4, 0, 0)


def parse_version(text: str) -> tuple[int, int, int] | None:
    """`v3.274.1` or `3.274.1-dev.0` -> (3, 274, 1); None when it is not a version."""
    core = text.strip().lstrip("v").split("-", 1)[0].split("+", 1)[0]
    parts = core.split(".")
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        return None
    return int(parts[0]), int(parts[1]), int(parts[2])


def supported(version: tuple[int, int, int]) -> bool:
    return MIN_CLI <= version < MAX_CLI_EXCLUSIVE


@cache
def azure_native_version() -> str:
    """The provider version the program asks for: the SDK's own pulumi-plugin.json (3.29.0)."""
    text = resources.files("pulumi_azure_native").joinpath("pulumi-plugin.json").read_text()
    return str(json.loads(text)["version"])

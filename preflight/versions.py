"""The versions the engine is built and run at, each read once."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources

#: The Pulumi CLI built from github.com/pulumi/pulumi/pkg/v3 (doubles/pulumicli/go/go.mod pins it). The Python SDK is
#: pulumi 3.272.0 (requirements.txt); pkg/v3 3.272.0 and 3.273.0 are not served by the Go module proxy, so
#: the CLI is the nearest served release above it (a newer CLI runs older SDKs: the engine protocol is
#: versioned by feature flags, `SupportsFeature`).
PULUMI_VERSION = "3.274.1"


@cache
def azure_native_version() -> str:
    """The provider version the program asks for: the SDK's own pulumi-plugin.json (3.29.0)."""
    text = resources.files("pulumi_azure_native").joinpath("pulumi-plugin.json").read_text()
    return str(json.loads(text)["version"])


AZURE_NATIVE_VERSION = azure_native_version()

"""How the engine writes values on the wire to providers and analyzers: the unknown sentinel and secrets.

Shared by the provider model (`preflight.provider.model`, which re-exports these names) and the spec check
(`preflight.provider.schema`), so neither imports the other's module for them.
"""

from __future__ import annotations

from typing import Any

# pulumi/pulumi sdk/go/common/resource/plugin/rpc.go UnknownStringValue; since pulumi v3.249 every unknown
# reaches an analyzer as this string (pkg/resource/plugin/analyzer_plugin.go, property.Map round trip).
UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"
# pulumi sdk/go/common/resource/properties.go SigKey / SecretSig: a secret on the wire.
SIG_KEY = "4dabf18193072939515e22adb298388d"
SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270"


def is_unknown(value: Any) -> bool:
    return isinstance(value, str) and value == UNKNOWN


def plain_numbers(value: Any) -> Any:
    """Integral floats -> int, deeply. Protobuf Structs carry every number as a double; JSON (the CLI's stack
    outputs, an ARM request body) writes 4, not 4.0, where the schema says integer."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: plain_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain_numbers(v) for v in value]
    return value

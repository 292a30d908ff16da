"""The one error type for names that are not Azure VM sizes."""

from __future__ import annotations

EXAMPLE = (
    "a valid name looks like Standard_<family letters><vCPUs>[-<active vCPUs>]<feature letters>"
    "[_<accelerator>][_v<version>], e.g. Standard_ND96isr_H100_v5 or Standard_HB120-16rs_v3"
)


class UnknownSize(ValueError):
    """A name that does not follow Azure's VM size naming convention (a ValueError: catch either)."""

    def __init__(self, name: object, reason: str) -> None:
        self.name = name
        self.reason = reason
        super().__init__(f"{name!r} is not an Azure VM size name: {reason}; {EXAMPLE}")

"""The happy-path raw config factory shared by the stackconfig tests (a unique module name: every test
folder has its own conftest.py, so tests import helpers from here, never from `conftest`)."""

from __future__ import annotations

import copy
from typing import Any

# Example key generated for these tests (ssh-keygen -t ed25519 -N ""); public half only.
ED25519_KEY = (
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKGFhOzGyF2XKRqEfe/0knkptcVgohsiJWXckNZ/vnUc example-dev-key"
)

_GOOD: dict[str, Any] = {
    "workspace": {
        "name": "ws-llm",
        "resource_group": {"name": "rg-train"},
        "region": "eastus",
        "tags": {"env": "test"},
    },
    "clusters": [
        {
            "name": "h100-x4",
            "size": "Standard_ND96isr_H100_v5",
            "min_instances": 0,
            "max_instances": 4,
            "idle_time_before_scale_down": 300,
            "tier": "dedicated",
            "ssh": {"admin_user": "azureuser", "public_key": ED25519_KEY},
        },
        {
            "name": "a100-spot",
            "size": "Standard_NC24ads_A100_v4",
            "region": "westus3",
            "max_instances": 1,
            "idle_time_before_scale_down": 120,
            "tier": "low_priority",
            "ssh": "disabled",
        },
    ],
    "locks": {"workspace": False},
}


def good_raw() -> dict[str, Any]:
    """A fresh, valid raw namespace (keys without the `azml-gpu:` prefix); each test changes one thing."""
    return copy.deepcopy(_GOOD)



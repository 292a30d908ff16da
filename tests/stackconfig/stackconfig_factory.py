"""The happy-path raw config factory shared by the stackconfig tests (a unique module name: every test
folder has its own conftest.py, so tests import helpers from here, never from `conftest`)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

# Throw-away public keys made for the tests (tests/fixtures/sshkeys/README.md): Azure ML takes the RSA one;
# the ed25519 one is there to be refused.
_KEYS = Path(__file__).resolve().parent.parent / "fixtures" / "sshkeys"
RSA_KEY = (_KEYS / "rsa3072.pub").read_text().strip()
ED25519_KEY = (_KEYS / "ed25519.pub").read_text().strip()

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
            "ssh": {"admin_user": "azureuser", "public_key": RSA_KEY},
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

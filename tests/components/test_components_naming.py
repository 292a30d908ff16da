"""Derived Azure names: valid, deterministic, unique per resource group and subscription; idle timer."""

from __future__ import annotations

import re

import isodate
import pytest

from components import idle_duration
from components.naming import lock_name, workspace_names

SUB_A = "00000000-0000-0000-0000-000000000000"
SUB_B = "9b2c5e4a-1111-4c3d-8e9f-0123456789ab"


@pytest.mark.parametrize(
    "workspace", ["ws-llm", "ws", "WS_Very-Long_workspace-name-for-training-2026", "a--b__c"]
)
def test_names_follow_azure_rules(workspace):
    names = workspace_names(workspace, SUB_A, "rg-train")
    assert re.fullmatch(r"[a-z0-9]{3,24}", names.storage_account)
    assert re.fullmatch(r"[a-z][a-z0-9-]{1,22}[a-z0-9]", names.key_vault) and "--" not in names.key_vault
    assert re.fullmatch(r"[a-zA-Z0-9]{5,50}", names.container_registry)
    assert re.fullmatch(r"[a-z0-9][a-z0-9-]{2,61}[a-z0-9]", names.log_analytics)
    assert 1 <= len(names.app_insights) <= 260 and not re.search(r"[%&\\?/]", names.app_insights)


def test_names_are_deterministic_and_unique_per_group_and_subscription():
    a = workspace_names("ws-llm", SUB_A, "rg-train")
    assert a == workspace_names("ws-llm", SUB_A, "RG-Train")  # group names are case-insensitive
    for other in (workspace_names("ws-llm", SUB_A, "rg-other"), workspace_names("ws-llm", SUB_B, "rg-train")):
        assert other.storage_account != a.storage_account
        assert other.key_vault != a.key_vault
        assert other.container_registry != a.container_registry


def test_lock_names():
    assert lock_name("kv-ws-llm-9916a8") == "lock-kv-ws-llm-9916a8"
    assert len(lock_name("x" * 200)) == 90


@pytest.mark.parametrize(
    ("seconds", "wire"), [(300, "PT5M"), (1800, "PT30M"), (120, "PT2M"), (3700, "PT1H1M40S")]
)
def test_idle_duration_round_trips(seconds, wire):
    assert idle_duration(seconds) == wire
    assert isodate.parse_duration(wire).total_seconds() == seconds

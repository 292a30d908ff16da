"""components/naming.py: the derived Azure names are valid, deterministic and unique per resource group and
subscription, and exactly as docs/components.md ("Derived names") documents them: the suffix is the first 6
hex digits of SHA-256 of the lower-cased resource group id, and the globally unique names fill their length
limits (resource-name-rules: storage 24, key vault 24) exactly for the longest workspace name Azure ML takes
(33 characters). A change renames the storage account, vault and registry of every deployed stack, which
Pulumi then replaces."""

from __future__ import annotations

import hashlib
import re

import pytest

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


def documented_suffix(sub: str, rg: str) -> str:
    rg_id = f"/subscriptions/{sub}/resourceGroups/{rg}".lower()
    return hashlib.sha256(rg_id.encode()).hexdigest()[:6]


def test_a_short_workspace_name_keeps_all_of_it_with_the_documented_suffix():
    suffix = documented_suffix(SUB_A, "rg-train")
    assert len(suffix) == 6
    names = workspace_names("ws-llm", SUB_A, "rg-train")
    assert names.storage_account == f"stwsllm{suffix}"
    assert names.key_vault == f"kv-ws-llm-{suffix}"
    assert names.container_registry == f"crwsllm{suffix}"
    assert names.log_analytics == "log-ws-llm"
    assert names.app_insights == "appi-ws-llm"


# 33 characters: the longest workspace name (stackconfig.names.workspace_name_problem: 3 to 33)
LONGEST = "abcdefghijklmnopqrstuvwxyz0123456"


@pytest.mark.parametrize(
    ("workspace", "storage", "vault"),
    [
        (LONGEST, "st" + LONGEST[:16], "kv-" + LONGEST[:14] + "-"),  # cut to the limit exactly
        (LONGEST[:16], "st" + LONGEST[:16], "kv-" + LONGEST[:14] + "-"),  # storage: fits exactly
        (LONGEST[:14], "st" + LONGEST[:14], "kv-" + LONGEST[:14] + "-"),  # vault: fits exactly
        (LONGEST[:15], "st" + LONGEST[:15], "kv-" + LONGEST[:14] + "-"),  # vault: one over, cut
    ],
)
def test_global_names_are_cut_to_their_limits_and_the_suffix_kept_whole(workspace, storage, vault):
    suffix = documented_suffix(SUB_A, "rg-train")
    names = workspace_names(workspace, SUB_A, "rg-train")
    assert names.storage_account == storage + suffix and len(names.storage_account) <= 24
    assert names.key_vault == vault + suffix and len(names.key_vault) <= 24
    assert names.container_registry == f"cr{workspace}{suffix}"  # 2 + 33 + 6 <= 50: never cut
    if len(workspace) >= 16:
        assert len(names.storage_account) == 24
    if len(workspace) >= 14:
        assert len(names.key_vault) == 24

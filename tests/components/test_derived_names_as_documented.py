"""The derived names exactly as docs/components.md ("Derived names") documents them: the suffix is the first 6
hex digits of SHA-256 of the lower-cased resource group id, and the globally unique names fill their
length limits (resource-name-rules: storage 24, key vault 24) exactly for the longest workspace name
Azure ML takes (33 characters). A change renames the storage account, vault and registry of every deployed
stack, which Pulumi then replaces."""

from __future__ import annotations

import hashlib

import pytest

from components.naming import workspace_names

SUB = "00000000-0000-0000-0000-000000000000"


def documented_suffix(sub: str, rg: str) -> str:
    rg_id = f"/subscriptions/{sub}/resourceGroups/{rg}".lower()
    return hashlib.sha256(rg_id.encode()).hexdigest()[:6]


def test_a_short_workspace_name_keeps_all_of_it_with_the_documented_suffix():
    suffix = documented_suffix(SUB, "rg-train")
    assert len(suffix) == 6
    names = workspace_names("ws-llm", SUB, "rg-train")
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
    suffix = documented_suffix(SUB, "rg-train")
    names = workspace_names(workspace, SUB, "rg-train")
    assert names.storage_account == storage + suffix and len(names.storage_account) <= 24
    assert names.key_vault == vault + suffix and len(names.key_vault) <= 24
    assert names.container_registry == f"cr{workspace}{suffix}"  # 2 + 33 + 6 <= 50: never cut
    if len(workspace) >= 16:
        assert len(names.storage_account) == 24
    if len(workspace) >= 14:
        assert len(names.key_vault) == 24

"""A cluster's `user_assigned_identity_id` is the ARM id of a user-assigned identity
(`/subscriptions/<id>/resourceGroups/<rg>/providers/Microsoft.ManagedIdentity/userAssignedIdentities/<name>`,
ARM ids compared case-insensitively: resource-name-rules.md), and anything else is a config error naming the
key and the form to use."""

from __future__ import annotations

import pytest
from stackconfig_factory import good_raw

from stackconfig import ConfigError, validate

SUB = "00000000-0000-0000-0000-000000000000"
UAI = (
    f"/subscriptions/{SUB}/resourceGroups/rg-train/providers/Microsoft.ManagedIdentity/"
    "userAssignedIdentities/id-train"
)


@pytest.mark.parametrize("value", [UAI, UAI.lower()])
def test_a_user_assigned_identity_id_is_taken(value: str) -> None:
    raw = good_raw()
    raw["clusters"][0]["user_assigned_identity_id"] = value
    assert validate(raw).clusters[0].user_assigned_identity_id == value


@pytest.mark.parametrize(
    "value",
    [
        "id-train",
        UAI.replace("Microsoft.ManagedIdentity/userAssignedIdentities", "Microsoft.Storage/storageAccounts"),
        UAI.removesuffix("/id-train"),
    ],
)
def test_anything_else_names_the_key_and_the_form(value: str) -> None:
    raw = good_raw()
    raw["clusters"][0]["user_assigned_identity_id"] = value
    with pytest.raises(ConfigError) as info:
        validate(raw)
    assert info.value.problems == [
        f"azml-gpu:clusters[0].user_assigned_identity_id: '{value}' is not the ARM id of a "
        "Microsoft.ManagedIdentity/userAssignedIdentities resource; use /subscriptions/<subscription-id>/"
        "resourceGroups/<rg>/providers/Microsoft.ManagedIdentity/userAssignedIdentities/<name>"
    ]

"""stackconfig/models.py: every optional key left out of a stack file takes the default docs/config.md
documents (the tables of `azml-gpu:workspace`, `azml-gpu:clusters` and `azml-gpu:locks`), the idle time's fix
messages for the values users write instead of whole seconds, the documented ranges, a cluster's user-assigned
identity id, and the models built directly (StackConfig.model_validate) enforcing what validate() does.

A cluster's `user_assigned_identity_id` is the ARM id of a user-assigned identity
(`/subscriptions/<id>/resourceGroups/<rg>/providers/Microsoft.ManagedIdentity/userAssignedIdentities/<name>`,
ARM ids compared case-insensitively: resource-name-rules.md)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from stackconfig import ClusterConfig, ConfigError, StackConfig, validate

from .stackconfig_factory import good_raw, problems

SUB = "00000000-0000-0000-0000-000000000000"
UAI = (
    f"/subscriptions/{SUB}/resourceGroups/rg-train/providers/Microsoft.ManagedIdentity/"
    "userAssignedIdentities/id-train"
)


# --- defaults -----------------------------------------------------------------------------------------------


def _minimal() -> dict:
    raw = good_raw()
    raw["workspace"] = {"name": "ws-llm", "resource_group": {"name": "rg-train"}, "region": "eastus"}
    raw["clusters"] = [raw["clusters"][1]]
    raw["clusters"][0].pop("region")
    raw.pop("locks")
    return raw


def test_workspace_defaults_as_documented() -> None:
    ws = validate(_minimal()).workspace
    assert ws.resource_group.create is True
    assert ws.public_network_access == "Enabled"  # "Enabled is Azure's default"
    assert ws.container_registry is False
    assert ws.key_vault_purge_protection is True
    assert ws.key_vault_soft_delete_days == 90  # Key Vault's own default retention, 90 days
    assert (ws.friendly_name, ws.description) == (None, None)  # "the name" / "none": nothing sent
    assert ws.tags == {}


def test_cluster_defaults_as_documented() -> None:
    config = validate(_minimal())
    (cluster,) = config.clusters
    assert cluster.region == "eastus"  # the workspace region
    assert cluster.min_instances == 0
    assert cluster.subnet_id is None
    assert cluster.node_public_ip is True
    assert cluster.user_assigned_identity_id is None  # system-assigned
    assert config.locks.workspace is False


def test_a_good_stack_built_directly_is_the_one_validate_returns() -> None:
    """StackConfig.model_validate runs the cross rules and combinations itself (no problem: no error), with
    the same defaults filled."""
    assert StackConfig.model_validate(_minimal()) == validate(_minimal())
    assert StackConfig.model_validate(good_raw()) == validate(good_raw())


def test_defaults_are_filled() -> None:
    config = validate(good_raw())
    spot = config.cluster("a100-spot")
    assert (spot.min_instances, spot.node_public_ip, spot.subnet_id) == (0, True, None)
    assert spot.ssh == "disabled" and not spot.ssh_enabled
    assert config.workspace.resource_group.create is True
    assert config.workspace.public_network_access == "Enabled"
    assert (config.locks.storage, config.locks.workspace) == (True, False)


def test_clusters_default_to_the_workspace_region_and_keep_their_own() -> None:
    config = validate(good_raw())  # the first cluster names no region, the second westus3
    assert config.clusters[0].region == "eastus"
    assert config.clusters[1].region == "westus3"


def test_local_auth_follows_ssh() -> None:
    """On Azure ML computes local authentication is SSH (azure-ai-ml: disableLocalAuth = not ssh_settings)."""
    config = validate(good_raw())
    assert (config.cluster("h100-x4").local_auth, config.cluster("a100-spot").local_auth) == (True, False)


def test_cluster_model_exposes_ssh_enabled() -> None:
    cluster = validate(good_raw()).clusters[0]
    assert isinstance(cluster, ClusterConfig) and cluster.ssh_enabled


# --- values -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (300.0, "300.0 is not a whole number; write 300"),
        (299.6, "299.6 is not a whole number of seconds; use 300"),
        ("soon", "'soon' is not a number of seconds; give seconds as a whole number, e.g. 300"),
        ("300", "'300' is a string; give seconds as a whole number without quotes: 300"),
        ("5 min", "'5 min' is a string; give seconds as a whole number without quotes: 300"),
        ("2h", "'2h' is a string; give seconds as a whole number without quotes: 7200"),
        ("PT1H", "'PT1H' is a string; give seconds as a whole number without quotes: 3600"),
    ],
)
def test_idle_time_fix_messages(value: object, message: str) -> None:
    raw = good_raw()
    raw["clusters"][0]["idle_time_before_scale_down"] = value
    with pytest.raises(ConfigError) as info:
        validate(raw)
    assert info.value.problems == [f"azml-gpu:clusters[0].idle_time_before_scale_down: {message}"]


@pytest.mark.parametrize("days", [6, 91])
def test_key_vault_soft_delete_days_outside_azures_range(days: int) -> None:
    raw = good_raw()
    raw["workspace"]["key_vault_soft_delete_days"] = days
    with pytest.raises(ConfigError) as info:
        validate(raw)
    bound = "7" if days < 7 else "90"
    assert info.value.problems[0].startswith(f"azml-gpu:workspace.key_vault_soft_delete_days: {days} is ")
    assert bound in info.value.problems[0]


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


def test_models_built_directly_still_enforce_the_cross_field_rules() -> None:
    raw = good_raw()
    raw["clusters"][0].update(min_instances=3, max_instances=2)
    with pytest.raises(ValidationError, match=r"max_instances: 2 is below min_instances \(3\)"):
        StackConfig.model_validate(raw)
    raw = good_raw()
    raw["clusters"][1]["name"] = "h100-x4"
    with pytest.raises(ValidationError, match=r"already the name of clusters\[0\]"):
        StackConfig.model_validate(raw)


# --- azml-gpu:environment (issue 33 item 7) -----------------------------------------------------------------


@pytest.mark.parametrize("value", ["production", "development"])
def test_the_environment_is_production_or_development(value: str) -> None:
    raw = good_raw()
    raw["environment"] = value
    assert validate(raw).environment == value


def test_the_environment_is_unset_by_default() -> None:
    assert validate(good_raw()).environment is None


@pytest.mark.parametrize(
    "value, message",
    [
        ("prod", "'prod' is not allowed; did you mean production?"),
        ("dev", "'dev' is not allowed; use one of production, development"),
        ("staging", "'staging' is not allowed; use one of production, development"),
        (True, "true is not allowed; use one of production, development"),
    ],
)
def test_another_environment_is_refused_with_the_two_values(value: object, message: str) -> None:
    raw = good_raw()
    raw["environment"] = value
    assert problems(raw) == [f"azml-gpu:environment: {message}"]

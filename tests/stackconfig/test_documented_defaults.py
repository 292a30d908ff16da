"""Every optional key left out of a stack file takes the default docs/config.md documents (the tables of
`azml-gpu:workspace`, `azml-gpu:clusters` and `azml-gpu:locks`), and the idle time's fix messages for the
values users write instead of whole seconds."""

from __future__ import annotations

import pytest
from stackconfig_factory import good_raw

from stackconfig import ConfigError, validate
from stackconfig.models import SKIP_CROSS_RULES, ClusterConfig, StackConfig
from stackconfig.outputs import cluster_output


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


def test_a_cluster_built_outside_validate_has_no_region_for_its_outputs() -> None:
    cluster = ClusterConfig.model_validate(good_raw()["clusters"][0], context={SKIP_CROSS_RULES: True})
    with pytest.raises(ValueError, match=r"^cluster h100-x4 has no region; build it through"):
        cluster_output(cluster, None)  # type: ignore[arg-type]


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


def test_a_good_stack_built_directly_is_the_one_validate_returns() -> None:
    """StackConfig.model_validate runs the cross rules and combinations itself (no problem: no error), with
    the same defaults filled."""
    assert StackConfig.model_validate(_minimal()) == validate(_minimal())
    assert StackConfig.model_validate(good_raw()) == validate(good_raw())

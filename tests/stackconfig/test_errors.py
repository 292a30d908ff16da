"""stackconfig/errors.py: the exact problem line a user reads for each kind of mistake the schema catches
(stackconfig/errors.py turns pydantic's error types into `azml-gpu:<key path>: <what is wrong>; <fix>`).

One table, one change of the happy-path config per row, the whole line asserted: which branch answers (a
missing mapping names its required keys, a missing value shows its documented example, a quoted number or
boolean is told to drop the quotes, a near-miss gets "did you mean"), what the value is shown as (text quoted,
true/false/null as YAML writes them, a mapping or a list by its kind) and the key path (list indexes in
brackets, the SSH union's branch tag left out). The examples come from the `examples` each key documents in
docs/config.md; the bounds from the keys' documented ranges."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from stackconfig import ConfigError, validate
from stackconfig.errors import translate

from .stackconfig_factory import good_raw

Change = Callable[[dict[str, Any]], None]
SUB = "00000000-0000-0000-0000-000000000000"
KV = f"/subscriptions/{SUB}/resourceGroups/rg-keys/providers/Microsoft.KeyVault/vaults/kv-cmk"
UAI = (
    f"/subscriptions/{SUB}/resourceGroups/rg-ids/providers/Microsoft.ManagedIdentity/userAssignedIdentities/"
    "uai-cmk"
)
KEY_URI = "https://kv-cmk.vault.azure.net/keys/ws-key/0123456789abcdef0123456789abcdef"


def c(index: int) -> Callable[[dict[str, Any]], dict[str, Any]]:
    return lambda raw: raw["clusters"][index]


c0, c1 = c(0), c(1)


def ws(raw: dict[str, Any]) -> dict[str, Any]:
    return raw["workspace"]


def with_key(**drop_or_set: Any) -> Change:
    """A customer-managed key block, with keys set (a value) or dropped (None)."""

    def change(raw: dict[str, Any]) -> None:
        cmk: dict[str, Any] = {
            "key_vault_id": KV,
            "key_uri": KEY_URI,
            "user_assigned_identity_id": UAI,
            "acknowledged": ["cosmos_db_key_access", "providers_registered"],
        }
        for name, value in drop_or_set.items():
            if value is None:
                cmk.pop(name)
            else:
                cmk[name] = value
        raw["identity"] = {"customer_managed_key": cmk}

    return change


P = "azml-gpu:"
SSH_ONE_OF = "ssh is either 'disabled' or a mapping {admin_user, public_key} (passwords are not accepted)"
SSH_UNION = "expected 'disabled' or a mapping {admin_user, public_key}"
CLUSTER_KEYS = (
    "name, size, region, min_instances, max_instances, idle_time_before_scale_down, tier, ssh, subnet_id, "
    "node_public_ip, user_assigned_identity_id"
)


# (id, change, the one problem line)
CASES: list[tuple[str, Change, str]] = [
    # a required key that is missing
    (
        "missing-ssh-says-decide-now",
        lambda r: c0(r).pop("ssh"),
        P + "clusters[0].ssh: required key is missing; say it explicitly: ssh: disabled, or ssh: "
        "{admin_user, public_key} (SSH can't be enabled after the cluster is created)",
    ),
    (
        "missing-mapping-names-its-required-keys",
        lambda r: r.pop("workspace"),
        P + "workspace: required key is missing; add workspace with the keys name, resource_group, region "
        "(see docs/config.md)",
    ),
    (
        "missing-mapping-with-one-required-key",
        lambda r: ws(r).pop("resource_group"),
        P + "workspace.resource_group: required key is missing; add resource_group with the keys name "
        "(see docs/config.md)",
    ),
    (
        "missing-text-shows-its-example",
        lambda r: c1(r).pop("size"),
        P + "clusters[1].size: required key is missing; add size: Standard_ND96isr_H100_v5",
    ),
    (
        "missing-number-shows-its-example",
        lambda r: c0(r).pop("max_instances"),
        P + "clusters[0].max_instances: required key is missing; add max_instances: 4",
    ),
    (
        "missing-nested-key-shows-its-example",
        lambda r: c0(r)["ssh"].pop("admin_user"),
        P + "clusters[0].ssh.admin_user: required key is missing; add admin_user: azureuser",
    ),
    (
        "missing-key-without-an-example-names-the-key",
        with_key(key_vault_id=None),
        P + "identity.customer_managed_key.key_vault_id: required key is missing; add key_vault_id",
    ),
    # a key the schema does not have
    (
        "removed-key-gives-the-reason",
        lambda r: c0(r).update(local_auth=False),
        P + "clusters[0].local_auth: removed: on Azure ML computes local authentication is SSH, so it "
        "follows ssh (on exactly when ssh is set; azure-ai-ml sends disableLocalAuth = not ssh_settings); "
        "remove local_auth and choose ssh: disabled or ssh: {admin_user, public_key}",
    ),
    (
        "password-key-is-refused-for-ssh-keys",
        lambda r: c0(r)["ssh"].update(Admin_Password="hunter2"),
        P + "clusters[0].ssh.Admin_Password: passwords are not accepted (SSH by key only); remove "
        "Admin_Password and set public_key to your SSH public key",
    ),
    (
        "near-miss-key-gets-did-you-mean",
        lambda r: c1(r).update(max_instance=2),
        P + "clusters[1].max_instance: unknown key; did you mean max_instances?",
    ),
    (
        "unknown-key-lists-the-valid-keys",
        lambda r: c0(r).update(gpus=8),
        P + f"clusters[0].gpus: unknown key; remove it (valid keys here: {CLUSTER_KEYS})",
    ),
    (
        "unknown-top-level-key-lists-the-valid-keys",
        lambda r: r.update(zones=["1"]),
        P + "zones: unknown key; remove it (valid keys here: workspace, clusters, locks, network, identity, "
        "environment, deploy)",
    ),
    # whole numbers
    (
        "quoted-number-drop-the-quotes",
        lambda r: c0(r).update(max_instances=" -4 "),
        P + "clusters[0].max_instances: expected a whole number, got the string ' -4 '; write -4 without "
        "quotes",
    ),
    (
        "text-for-a-number-shows-the-example",
        lambda r: c0(r).update(max_instances="four"),
        P + "clusters[0].max_instances: expected a whole number, got 'four'; use a whole number, e.g. 4",
    ),
    (
        "fraction-for-a-number-shows-the-example",
        lambda r: c1(r).update(max_instances=2.5),
        P + "clusters[1].max_instances: expected a whole number, got 2.5; use a whole number, e.g. 4",
    ),
    (
        "number-whose-example-is-zero-still-shows-it",
        lambda r: c0(r).update(min_instances="none"),
        P + "clusters[0].min_instances: expected a whole number, got 'none'; use a whole number, e.g. 0",
    ),
    (
        "true-for-a-number",
        lambda r: c0(r).update(max_instances=True),
        P + "clusters[0].max_instances: expected a whole number, got true; use a whole number, e.g. 4",
    ),
    (
        "number-without-an-example",
        lambda r: ws(r).update(key_vault_soft_delete_days=[7]),
        P + "workspace.key_vault_soft_delete_days: expected a whole number, got a list; use a whole number",
    ),
    (
        "null-for-a-number",
        lambda r: c0(r).update(max_instances=None),
        P + "clusters[0].max_instances: expected a whole number, got null; use a whole number, e.g. 4",
    ),
    # booleans
    (
        "quoted-yes-is-true",
        lambda r: r["locks"].update(workspace="Yes"),
        P + "locks.workspace: expected true or false, got the string 'Yes'; write true without quotes",
    ),
    (
        "quoted-on-is-true",
        lambda r: r["locks"].update(workspace="on "),
        P + "locks.workspace: expected true or false, got the string 'on '; write true without quotes",
    ),
    (
        "quoted-true-is-true",
        lambda r: ws(r).update(container_registry="TRUE"),
        P + "workspace.container_registry: expected true or false, got the string 'TRUE'; write true "
        "without quotes",
    ),
    (
        "quoted-off-is-false",
        lambda r: r["locks"].update(workspace=" off"),
        P + "locks.workspace: expected true or false, got the string ' off'; write false without quotes",
    ),
    (
        "quoted-no-is-false",
        lambda r: c0(r).update(node_public_ip="no"),
        P + "clusters[0].node_public_ip: expected true or false, got the string 'no'; write false without "
        "quotes",
    ),
    (
        "quoted-false-is-false",
        lambda r: c0(r).update(node_public_ip="False"),
        P + "clusters[0].node_public_ip: expected true or false, got the string 'False'; write false "
        "without quotes",
    ),
    (
        "other-text-for-a-boolean",
        lambda r: r["locks"].update(workspace="always"),
        P + "locks.workspace: expected true or false, got 'always'; write true or false",
    ),
    (
        "number-for-a-boolean",
        lambda r: r["locks"].update(workspace=1),
        P + "locks.workspace: expected true or false, got 1; write true or false",
    ),
    # text
    (
        "number-for-text-quote-it",
        lambda r: c0(r).update(size=5),
        P + "clusters[0].size: expected text, got 5; quote it: '5'",
    ),
    (
        "fraction-for-text-quote-it",
        lambda r: ws(r)["tags"].update(version=1.5),
        P + "workspace.tags.version: expected text, got 1.5; quote it: '1.5'",
    ),
    (
        "boolean-for-text-quote-it-as-written",
        lambda r: ws(r)["tags"].update(env=False),
        P + "workspace.tags.env: expected text, got false; quote it: 'false'",
    ),
    (
        "list-for-text-shows-the-example",
        lambda r: c0(r).update(size=["Standard_ND96isr_H100_v5"]),
        P + "clusters[0].size: expected text, got a list; write text, e.g. Standard_ND96isr_H100_v5",
    ),
    (
        "mapping-for-text-without-an-example",
        lambda r: ws(r).update(description={"text": "llm"}),
        P + "workspace.description: expected text, got a mapping; write text",
    ),
    # a mapping's key that YAML read as another type than text: the mapping is named, not the key's type
    (
        "number-as-a-tag-name",
        lambda r: ws(r)["tags"].update({2026: "budget"}),
        P + "workspace.tags: the key 2026 is not text; quote it: '2026'",
    ),
    (
        "fraction-as-a-tag-name",
        lambda r: ws(r)["tags"].update({1.5: "version"}),
        P + "workspace.tags: the key 1.5 is not text; quote it: '1.5'",
    ),
    (
        "boolean-as-a-tag-name",
        lambda r: ws(r)["tags"].update({True: "on"}),
        P + "workspace.tags: the key true is not text; quote it: 'true'",
    ),
    (
        "null-as-a-tag-name",
        lambda r: ws(r)["tags"].update({None: "x"}),
        P + "workspace.tags: the key null is not text; quote it: 'null'",
    ),
    # one of a fixed set
    (
        "ssh-text-other-than-disabled",
        lambda r: c0(r).update(ssh="enabled"),
        P + f"clusters[0].ssh: 'enabled' is not allowed; {SSH_ONE_OF}",
    ),
    (
        "near-miss-choice-gets-did-you-mean",
        lambda r: c1(r).update(tier="lowpriority"),
        P + "clusters[1].tier: 'lowpriority' is not allowed; did you mean low_priority?",
    ),
    (
        "choice-differing-in-case-gets-did-you-mean",
        lambda r: ws(r).update(public_network_access="disabled"),
        P + "workspace.public_network_access: 'disabled' is not allowed; did you mean Disabled?",
    ),
    (
        "far-choice-lists-both",
        lambda r: c0(r).update(tier="spot"),
        P + "clusters[0].tier: 'spot' is not allowed; use one of dedicated, low_priority",
    ),
    (
        "far-choice-lists-all-three",
        lambda r: r.update(
            identity={
                "role_assignments": [{"principal_id": SUB, "principal_type": "Robot", "role": "Reader"}]
            }
        ),
        P + "identity.role_assignments[0].principal_type: 'Robot' is not allowed; use one of User, Group, "
        "ServicePrincipal",
    ),
    # bounds
    (
        "below-the-lower-bound",
        lambda r: c0(r).update(min_instances=-1),
        P + "clusters[0].min_instances: -1 is below 0; use 0 or more",
    ),
    (
        "below-the-documented-range",
        lambda r: ws(r).update(key_vault_soft_delete_days=6),
        P + "workspace.key_vault_soft_delete_days: 6 is below 7; use 7 or more",
    ),
    (
        "above-the-documented-range",
        lambda r: ws(r).update(key_vault_soft_delete_days=91),
        P + "workspace.key_vault_soft_delete_days: 91 is above 90; use 90 or less",
    ),
    # the shape: mapping, list, the SSH union
    (
        "text-for-a-mapping",
        lambda r: r.update(workspace="ws-llm"),
        P + "workspace: expected a mapping of keys, got 'ws-llm'; write it as keys under workspace",
    ),
    (
        "list-for-a-nested-mapping",
        lambda r: ws(r).update(tags=["env=test"]),
        P + "workspace.tags: expected a mapping of keys, got a list; write it as keys under workspace.tags",
    ),
    (
        "null-for-a-mapping-in-a-list",
        lambda r: r["clusters"].append(None),
        P + "clusters[2]: expected a mapping of keys, got null; write it as keys under clusters[2]",
    ),
    (
        "mapping-for-a-list",
        lambda r: r.update(clusters={"h100-x4": {}}),
        P + "clusters: expected a list, got a mapping; write one '- ' entry per item",
    ),
    (
        "text-for-a-list",
        lambda r: r.update(clusters="h100-x4"),
        P + "clusters: expected a list, got 'h100-x4'; write one '- ' entry per item",
    ),
    (
        "empty-list",
        lambda r: r.update(clusters=[]),
        P + "clusters: the list is empty; add at least one entry",
    ),
    (
        "ssh-null-means-disabled",
        lambda r: c0(r).update(ssh=None),
        P + f"clusters[0].ssh: {SSH_UNION}, got null; write ssh: disabled (SSH can't be enabled after "
        "creation)",
    ),
    (
        "ssh-false-means-disabled",
        lambda r: c1(r).update(ssh=False),
        P + f"clusters[1].ssh: {SSH_UNION}, got false; write ssh: disabled (SSH can't be enabled after "
        "creation)",
    ),
    (
        "ssh-true-needs-a-key",
        lambda r: c0(r).update(ssh=True),
        P + f"clusters[0].ssh: {SSH_UNION}, got true; write ssh: disabled, or ssh: {{admin_user: azureuser, "
        "public_key: 'ssh-rsa AAAA...'}",
    ),
    (
        "ssh-list-needs-a-mapping",
        lambda r: c0(r).update(ssh=["azureuser"]),
        P
        + f"clusters[0].ssh: {SSH_UNION}, got a list; write ssh: disabled, or ssh: {{admin_user: azureuser, "
        "public_key: 'ssh-rsa AAAA...'}",
    ),
]


@pytest.mark.parametrize(("change", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_the_problem_line_a_user_reads(change: Change, expected: str) -> None:
    raw = good_raw()
    change(raw)
    with pytest.raises(ConfigError) as caught:
        validate(raw)
    assert caught.value.problems == [expected]


def test_every_mistake_in_one_file_is_reported_each_on_its_own_line() -> None:
    raw = good_raw()
    c0(raw).update(max_instances="4", tier="dedicatd")
    c1(raw).update(ssh=None)
    raw["locks"].update(workspace="yes")
    with pytest.raises(ConfigError) as caught:
        validate(raw)
    assert sorted(caught.value.problems) == sorted(
        [
            P + "clusters[0].max_instances: expected a whole number, got the string '4'; write 4 without "
            "quotes",
            P + "clusters[0].tier: 'dedicatd' is not allowed; did you mean dedicated?",
            P + f"clusters[1].ssh: {SSH_UNION}, got null; write ssh: disabled (SSH can't be enabled after "
            "creation)",
            P + "locks.workspace: expected true or false, got the string 'yes'; write true without quotes",
        ]
    )
    assert str(caught.value) == "\n".join(caught.value.problems)


class _Stack(BaseModel):
    """A schema of another shape than the stack's (the translation takes any root model): required keys
    whose documented examples are a list, a mapping and a boolean."""

    model_config = ConfigDict(extra="forbid", strict=True)
    zones: list[int] = Field(examples=[[1, 2]])
    labels: dict[str, str] = Field(examples=[{"team": "llm", "tier": "gold"}])
    spot: bool = Field(examples=[False])
    retries: int = Field(gt=0, lt=10, examples=[[3]])


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (
            {"labels": {}, "spot": True, "retries": 1},
            "azml-gpu:zones: required key is missing; add zones: [1, 2]",
        ),
        (
            {"zones": [], "spot": True, "retries": 1},
            "azml-gpu:labels: required key is missing; add labels: {team: llm, tier: gold}",
        ),
        (
            {"zones": [], "labels": {}, "retries": 1},
            "azml-gpu:spot: required key is missing; add spot: false",
        ),
        (
            {"zones": [], "labels": {}, "spot": True, "retries": "x"},
            "azml-gpu:retries: expected a whole number, got 'x'; use a whole number, e.g. [3]",
        ),
        (
            {"zones": [], "labels": {}, "spot": True, "retries": 0},
            "azml-gpu:retries: 0 is not above 0; use more than 0",
        ),
        (
            {"zones": [], "labels": {}, "spot": True, "retries": 10},
            "azml-gpu:retries: 10 is not below 10; use less than 10",
        ),
    ],
    ids=["list-example", "mapping-example", "boolean-example", "list-example-in-a-fix", "gt", "lt"],
)
def test_examples_are_shown_as_yaml_and_strict_bounds_named(raw: dict[str, Any], expected: str) -> None:
    with pytest.raises(ValidationError) as caught:
        _Stack.model_validate(raw)
    assert [translate(_Stack, error) for error in caught.value.errors()] == [expected]


def _raw(**network) -> dict:
    return {
        "workspace": {"name": "ws-a", "resource_group": {"name": "rg-a"}, "region": "eastus"},
        "clusters": [
            {
                "name": "h100-x2",
                "size": "Standard_ND96isr_H100_v5",
                "max_instances": 2,
                "idle_time_before_scale_down": 300,
                "tier": "dedicated",
                "ssh": "disabled",
                "region": "westus3",
            }
        ],
        **({"network": network} if network else {}),
    }


def test_unknown_network_and_identity_keys_are_rejected_with_a_suggestion() -> None:
    raw = _raw(managed={"isolation_mod": "Disabled"})
    raw["identity"] = {"system_datastore_auth_mode": "identity"}
    with pytest.raises(ConfigError) as info:
        validate(raw)
    text = "\n".join(info.value.problems)
    assert "network.managed.isolation_mod: unknown key; did you mean isolation_mode?" in text
    assert (
        "identity.system_datastore_auth_mode: unknown key; did you mean system_datastores_auth_mode?" in text
    )

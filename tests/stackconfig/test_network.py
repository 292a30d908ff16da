"""stackconfig/network.py: the `azml-gpu:network` keys, each branch from the happy-path config: outbound rule
names at their length limits, the keys each rule type takes, host names, ARM ids, duplicate names, the private
endpoints' ids, and the defaults a user relies on. Each case changes one value and asserts the exact key path
and message (what `python -m stackconfig` prints)."""

from __future__ import annotations

import pytest

from stackconfig import ConfigError, validate

from .stackconfig_factory import good_raw, problems

SUB = "00000000-0000-0000-0000-000000000000"
DATA = f"/subscriptions/{SUB}/resourceGroups/rg-data/providers/Microsoft.Storage/storageAccounts/stdata"
VNET = f"/subscriptions/{SUB}/resourceGroups/rg-net/providers/Microsoft.Network/virtualNetworks/vnet-a"
SUBNET = f"{VNET}/subnets/snet-pe"
RULES = "azml-gpu:network.managed.outbound_rules"
#: A user-assigned workspace identity: a private-endpoint rule needs one (its approver grant precedes the
#: workspace; stackconfig.combinations).
WS_IDENTITY = (
    f"/subscriptions/{SUB}/resourceGroups/rg-id/providers/Microsoft.ManagedIdentity/userAssignedIdentities/id"
)


def with_rules(*rules: dict, mode: str = "AllowOnlyApprovedOutbound") -> dict:
    raw = good_raw()
    raw["clusters"][1].pop("region")  # same region as the workspace: no combination problem
    raw["network"] = {"managed": {"isolation_mode": mode, "outbound_rules": list(rules)}}
    if any(r.get("type") == "private_endpoint" for r in rules):
        raw["identity"] = {"workspace_identity_id": WS_IDENTITY}
    return raw


FQDN = {"name": "pypi", "type": "fqdn", "destination": "pypi.org"}
PE = {"name": "data", "type": "private_endpoint", "service_resource_id": DATA, "subresource_target": "blob"}


TAG = {
    "name": "mon",
    "type": "service_tag",
    "service_tag": "AzureMonitor",
    "protocol": "TCP",
    "port_ranges": "443",
}


def test_one_rule_of_each_type_is_accepted():
    config = validate(with_rules(FQDN, PE, TAG))
    assert [r.type for r in config.network.managed.outbound_rules] == [
        "fqdn",
        "private_endpoint",
        "service_tag",
    ]


@pytest.mark.parametrize(
    ("name", "ok"),
    [
        ("ab", True),
        ("a", False),
        ("a" * 63, True),
        ("a" * 64, False),
        ("-ab", False),
        ("_ab", False),
        ("a_b-c", True),
        ("a.b", False),
    ],
)
def test_rule_names_are_2_to_63_letters_digits_dash_underscore(name, ok):
    got = problems(with_rules(dict(FQDN, name=name)))
    if ok:
        assert got == []
    else:
        assert got == [
            f"{RULES}[0].name: '{name}' is not a valid outbound rule name; use 2-63 letters, digits, '-' or "
            "'_', starting with a letter or digit"
        ]


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ({"name": "f", "type": "fqdn"} | {"name": "ff"}, "a fqdn rule needs destination; add destination"),
        (
            {"name": "pe", "type": "private_endpoint", "subresource_target": "blob"},
            "a private_endpoint rule needs service_resource_id; add service_resource_id",
        ),
        (
            {"name": "pe", "type": "private_endpoint", "service_resource_id": DATA},
            "a private_endpoint rule needs subresource_target; add subresource_target",
        ),
        (
            {"name": "tg", "type": "service_tag", "protocol": "TCP"},
            "a service_tag rule needs service_tag, port_ranges; add service_tag",
        ),
        (
            dict(FQDN, port_ranges="443"),
            "port_ranges do not apply to a fqdn rule; remove them (a fqdn rule takes destination)",
        ),
        (
            dict(TAG, destination="x.org", subresource_target="blob"),
            "destination, subresource_target do not apply to a service_tag rule; remove them (a service_tag "
            "rule takes service_tag, protocol, port_ranges)",
        ),
        (
            dict(PE, service_tag="AzureMonitor"),
            "service_tag do not apply to a private_endpoint rule; remove them (a private_endpoint rule takes "
            "service_resource_id, subresource_target)",
        ),
    ],
)
def test_each_rule_type_takes_its_own_keys(rule, message):
    assert problems(with_rules(rule)) == [f"{RULES}[0]: {message}"]


@pytest.mark.parametrize(
    ("host", "ok"),
    [
        ("pypi.org", True),
        ("*.anaconda.org", True),
        ("files.pythonhosted.org", True),
        ("pypi", False),  # no domain
        ("https://pypi.org", False),
        ("pypi.org/simple", False),
        ("*.*.org", False),
        ("pypi.o", False),  # a one-letter top-level domain
    ],
)
def test_an_fqdn_rule_takes_a_host_name(host, ok):
    got = problems(with_rules(dict(FQDN, destination=host)))
    assert got == (
        [] if ok else [f"{RULES}[0]: destination '{host}' is not a host name; write e.g. pypi.org"]
    )


def test_a_host_name_is_only_checked_on_fqdn_rules():
    # a service_tag rule's keys are its own; no destination there to judge
    assert problems(with_rules(TAG)) == []


@pytest.mark.parametrize(
    ("rid", "ok"), [(DATA, True), (DATA.upper(), True), ("stdata", False), ("/resourceGroups/x", False)]
)
def test_a_private_endpoint_rule_takes_an_arm_id(rid, ok):
    got = problems(with_rules(dict(PE, service_resource_id=rid)))
    if ok:
        assert got == []
    else:
        assert got == [
            f"{RULES}[0]: service_resource_id '{rid}' is not an ARM id; use /subscriptions/<id>/"
            "resourceGroups/<rg>/providers/<namespace>/<type>/<name>"
        ]


def test_rule_names_are_unique_ignoring_case():
    got = problems(with_rules(FQDN, dict(TAG, name="PyPI")))
    assert got == [f"{RULES}: two outbound rules are named 'PyPI'; give each rule its own name"]
    assert problems(with_rules(FQDN, dict(TAG, name="pypi2"))) == []


def test_private_endpoint_ids_are_checked():
    raw = good_raw()
    raw["network"] = {
        "private_endpoints": {"subnet_id": "snet-pe", "private_dns_zones_resource_group_id": "rg-dns"}
    }
    got = problems(raw)
    assert got == [
        "azml-gpu:network.private_endpoints.subnet_id: 'snet-pe' is not an ARM subnet id; use the full id "
        "/subscriptions/<subscription-id>/resourceGroups/<rg>/providers/Microsoft.Network/virtualNetworks/"
        "<vnet>/subnets/<subnet>",
        "azml-gpu:network.private_endpoints.private_dns_zones_resource_group_id: 'rg-dns' is not an ARM "
        "resource group id; use /subscriptions/<subscription-id>/resourceGroups/<rg>",
    ]


def test_private_endpoints_default_to_every_target_and_no_dns_zones():
    raw = good_raw()
    raw["clusters"][1].pop("region")  # a private endpoint keeps clusters in the workspace's region
    raw["network"] = {"private_endpoints": {"subnet_id": SUBNET}}
    pe = validate(raw).network.private_endpoints
    assert (pe.subnet_id, pe.targets, pe.private_dns_zones_resource_group_id) == (SUBNET, None, None)


def test_managed_network_defaults_and_what_counts_as_on():
    config = validate(with_rules())
    m = config.network.managed
    assert (m.provision_at_creation, m.firewall_sku, m.outbound_rules) == (True, None, [])
    assert config.network.managed_enabled is True
    assert validate(with_rules(mode="AllowInternetOutbound")).network.managed_enabled is True
    assert validate(with_rules(mode="Disabled")).network.managed_enabled is False
    assert validate(good_raw()).network.managed_enabled is False  # no managed key at all


def test_an_omitted_rule_key_reads_as_none():
    rule = validate(with_rules(FQDN)).network.managed.outbound_rules[0]
    assert (
        rule.service_resource_id,
        rule.subresource_target,
        rule.service_tag,
        rule.protocol,
        rule.port_ranges,
    ) == (
        None,
        None,
        None,
        None,
        None,
    )


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
        "identity": {"workspace_identity_id": WS_IDENTITY},
    }


def test_disabled_managed_network_is_no_managed_network() -> None:
    raw = _raw(managed={"isolation_mode": "Disabled"})
    assert validate(raw).network.managed_enabled is False


def test_outbound_rules_are_typed() -> None:
    raw = _raw(
        managed={
            "isolation_mode": "AllowOnlyApprovedOutbound",
            "outbound_rules": [
                {"name": "pypi", "type": "fqdn", "destination": "pypi.org"},
                {
                    "name": "data",
                    "type": "private_endpoint",
                    "service_resource_id": "/subscriptions/00000000-0000-0000-0000-000000000000/"
                    "resourceGroups/rg-data/providers/Microsoft.Storage/storageAccounts/stdata",
                    "subresource_target": "blob",
                },
                {
                    "name": "mon",
                    "type": "service_tag",
                    "service_tag": "AzureMonitor",
                    "protocol": "TCP",
                    "port_ranges": "443",
                },
            ],
        }
    )
    raw["clusters"][0]["region"] = "eastus"
    rules = validate(raw).network.managed.outbound_rules
    assert [(r.name, r.type) for r in rules] == [
        ("pypi", "fqdn"),
        ("data", "private_endpoint"),
        ("mon", "service_tag"),
    ]
    raw["network"]["managed"]["outbound_rules"][0]["destination"] = "not a host"
    with pytest.raises(ConfigError, match=r"outbound_rules\[0\]: .*not a host name"):
        validate(raw)

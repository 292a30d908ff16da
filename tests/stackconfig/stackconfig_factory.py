"""The happy-path raw config factory and the table of one-change invalid configs, shared by the stackconfig
tests (a unique module name: every test folder has its own conftest.py, so tests import helpers from here,
never from `conftest`)."""

from __future__ import annotations

import base64
import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

from stackconfig import ConfigError, validate

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


def problems(raw: Any) -> list[str]:
    """The problems `validate(raw)` reports; empty when the config is valid."""
    try:
        validate(raw)
    except ConfigError as exc:
        return list(exc.problems)
    return []


Mutate = Callable[[dict[str, Any]], None]


def c0(raw: dict[str, Any]) -> dict[str, Any]:
    return raw["clusters"][0]


def ssh0(raw: dict[str, Any]) -> dict[str, Any]:
    return raw["clusters"][0]["ssh"]


ED25519_BODY = ED25519_KEY.split()[1]


# The table of invalid configs: each changes one thing of the happy-path config and must yield exactly one
# problem at the exact key path (tests/stackconfig/test_validation.py), also through `python -m stackconfig
# FILE` (exit 2, no traceback: test_cli.py). (id, change, key path, part of the message)
INVALID_CASES: list[tuple[str, Mutate, str, str]] = [
    (
        "name-digit-after-dash",
        lambda r: c0(r).update(name="cpu-cluster-1"),
        "clusters[0].name",
        "letter somewhere after the last '-'",
    ),
    ("name-too-short", lambda r: c0(r).update(name="ab"), "clusters[0].name", "has 2 characters"),
    ("name-too-long", lambda r: c0(r).update(name="g" * 25), "clusters[0].name", "has 25 characters"),
    (
        "name-starts-with-digit",
        lambda r: c0(r).update(name="1gpu"),
        "clusters[0].name",
        "must start with a letter",
    ),
    ("name-underscore", lambda r: c0(r).update(name="gpu_cluster"), "clusters[0].name", "contains '_'"),
    (
        "name-duplicate",
        lambda r: r["clusters"][1].update(name="H100-X4"),
        "clusters[1].name",
        "already the name of clusters[0]",
    ),
    (
        "cluster-region-unknown",
        lambda r: c0(r).update(region="eastuss"),
        "clusters[0].region",
        "not a known Azure region; did you mean eastus?",
    ),
    (
        "workspace-region-unknown",
        lambda r: r["workspace"].update(region="westeurop"),
        "workspace.region",
        "did you mean westeurope?",
    ),
    (
        "size-unparseable-near",
        lambda r: c0(r).update(size="Standard_NC24ads-A100_v4"),
        "clusters[0].size",
        "did you mean Standard_NC24ads_A100_v4?",
    ),
    (
        "size-no-prefix",
        lambda r: c0(r).update(size="ND96isr_H100_v5"),
        "clusters[0].size",
        "did you mean Standard_ND96isr_H100_v5?",
    ),
    (
        "size-garbage",
        lambda r: c0(r).update(size="H100 please"),
        "clusters[0].size",
        "neither in the size catalog nor a valid Azure size name",
    ),
    (
        "size-cpu-general-purpose",
        lambda r: c0(r).update(size="Standard_D4s_v5"),
        "clusters[0].size",
        "'Standard_D4s_v5' is not in the size catalog, so its GPU count is unknown; a cluster needs a GPU "
        "size from the size catalog",
    ),
    (
        "size-made-up-gpu",
        lambda r: c0(r).update(size="Standard_ND999isr_H900_v9"),
        "clusters[0].size",
        "so its GPU count is unknown; a cluster needs a GPU size from the size catalog "
        "(vmsizes/data/sizes.yaml), such as Standard_ND96isr_H200_v5",
    ),
    (
        "size-typo-suffix",
        lambda r: c0(r).update(size="Standard_NC4as_T4_v3x"),
        "clusters[0].size",
        "GPU count is unknown; a cluster needs a GPU size from the size catalog (vmsizes/data/sizes.yaml), "
        "such as Standard_NC4as_T4_v3",
    ),
    (
        "size-not-a-family",
        lambda r: c0(r).update(size="Standard_Bogus99"),
        "clusters[0].size",
        "'Standard_Bogus99' is not in the size catalog, so its GPU count is unknown",
    ),
    (
        "size-suggestion-is-not-retired",
        lambda r: c0(r).update(size="Standard_ND6s_x"),
        "clusters[0].size",
        # Standard_ND6s (retired 2023) is closer by spelling; a retired size is never suggested
        "such as Standard_ND96asr_v4",
    ),
    (
        "size-hpc-no-gpu",
        lambda r: c0(r).update(size="Standard_HB120rs_v3"),
        "clusters[0].size",
        "'Standard_HB120rs_v3' has no GPU (a CPU/HPC size)",
    ),
    (
        "size-hpc-constrained-no-gpu",
        lambda r: c0(r).update(size="Standard_HB120-16rs_v3"),
        "clusters[0].size",
        "has no GPU (a CPU/HPC size)",
    ),
    (
        "size-partial-gpu",
        lambda r: c0(r).update(size="Standard_NV18ads_A10_v5"),
        "clusters[0].size",
        "has a fraction of a GPU (1/2), not a whole GPU per node; a cluster needs a GPU size from the size "
        "catalog (vmsizes/data/sizes.yaml), such as Standard_NV72ads_A10_v5",
    ),
    (
        "size-catalog-gpu-count-unknown",
        lambda r: c0(r).update(size="Standard_NV12hs_v3"),
        "clusters[0].size",
        "is in the size catalog without a GPU count, so its GPU count is unknown",
    ),
    ("min-negative", lambda r: c0(r).update(min_instances=-1), "clusters[0].min_instances", "-1 is below 0"),
    (
        "max-zero",
        lambda r: c0(r).update(max_instances=0),
        "clusters[0].max_instances",
        "0 is below 1; use at least 1",
    ),
    (
        "max-below-min",
        lambda r: c0(r).update(min_instances=3, max_instances=2),
        "clusters[0].max_instances",
        "2 is below min_instances (3); use at least 3",
    ),
    (
        "max-quoted",
        lambda r: c0(r).update(max_instances="4"),
        "clusters[0].max_instances",
        "write 4 without quotes",
    ),
    (
        "max-float",
        lambda r: c0(r).update(max_instances=2.5),
        "clusters[0].max_instances",
        "expected a whole number, got 2.5",
    ),
    (
        "idle-30m",
        lambda r: c0(r).update(idle_time_before_scale_down="30m"),
        "clusters[0].idle_time_before_scale_down",
        "without quotes: 1800",
    ),
    (
        "idle-iso8601",
        lambda r: c0(r).update(idle_time_before_scale_down="PT2M"),
        "clusters[0].idle_time_before_scale_down",
        "without quotes: 120",
    ),
    (
        "idle-negative",
        lambda r: c0(r).update(idle_time_before_scale_down=-5),
        "clusters[0].idle_time_before_scale_down",
        "-5 is below 0",
    ),
    (
        "idle-bool",
        lambda r: c0(r).update(idle_time_before_scale_down=True),
        "clusters[0].idle_time_before_scale_down",
        "true is not a number of seconds",
    ),
    (
        "idle-float",
        lambda r: c0(r).update(idle_time_before_scale_down=1.5),
        "clusters[0].idle_time_before_scale_down",
        "not a whole number of seconds",
    ),
    (
        "idle-missing",
        lambda r: c0(r).pop("idle_time_before_scale_down"),
        "clusters[0].idle_time_before_scale_down",
        "required key is missing",
    ),
    (
        "tier-unknown",
        lambda r: c0(r).update(tier="spot"),
        "clusters[0].tier",
        "use one of dedicated, low_priority",
    ),
    (
        "tier-near",
        lambda r: c0(r).update(tier="lowpriority"),
        "clusters[0].tier",
        "did you mean low_priority?",
    ),
    ("ssh-missing", lambda r: c0(r).pop("ssh"), "clusters[0].ssh", "say it explicitly: ssh: disabled"),
    ("ssh-false", lambda r: c0(r).update(ssh=False), "clusters[0].ssh", "write ssh: disabled"),
    (
        "ssh-enabled-string",
        lambda r: c0(r).update(ssh="enabled"),
        "clusters[0].ssh",
        "ssh is either 'disabled' or a mapping",
    ),
    (
        "ssh-password",
        lambda r: ssh0(r).update(password="hunter2"),
        "clusters[0].ssh.password",
        "passwords are not accepted",
    ),
    (
        "ssh-admin-password",
        lambda r: ssh0(r).update(admin_password="hunter2"),
        "clusters[0].ssh.admin_password",
        "passwords are not accepted",
    ),
    (
        "ssh-key-missing",
        lambda r: ssh0(r).pop("public_key"),
        "clusters[0].ssh.public_key",
        "required key is missing",
    ),
    (
        "ssh-key-type-mismatch",
        lambda r: ssh0(r).update(public_key=f"ssh-rsa {ED25519_BODY} x"),
        "clusters[0].ssh.public_key",
        "the line says 'ssh-rsa' but the key inside is 'ssh-ed25519'",
    ),
    (
        "ssh-key-bad-base64",
        lambda r: ssh0(r).update(public_key="ssh-rsa AAAA!!!notbase64"),
        "clusters[0].ssh.public_key",
        "not valid base64",
    ),
    (
        "ssh-key-not-openssh",
        lambda r: ssh0(r).update(public_key="ssh-rsa " + base64.b64encode(b"hello world").decode()),
        "clusters[0].ssh.public_key",
        "not an OpenSSH public key",
    ),
    (
        "ssh-key-dss",
        lambda r: ssh0(r).update(public_key="ssh-dss AAAAB3NzaC1kc3M= x"),
        "clusters[0].ssh.public_key",
        "a ssh-dss key is not accepted: Azure ML compute takes RSA keys only",
    ),
    (
        "ssh-key-ed25519",
        lambda r: ssh0(r).update(public_key=ED25519_KEY),
        "clusters[0].ssh.public_key",
        "a ssh-ed25519 key is not accepted: Azure ML compute takes RSA keys only (docs: "
        "machine-learning-enable-ssh.md, 'starting with ssh-rsa'); generate one with "
        "`ssh-keygen -t rsa -b 3072`",
    ),
    (
        "ssh-key-unknown-type",
        lambda r: ssh0(r).update(public_key="ssh-foo AAAAB3NzaC1kc3M= x"),
        "clusters[0].ssh.public_key",
        "key type 'ssh-foo' is not accepted: Azure ML compute takes RSA keys only",
    ),
    (
        "local-auth-removed",
        lambda r: r["clusters"][0].update(local_auth=False),
        "clusters[0].local_auth",
        "removed: on Azure ML computes local authentication is SSH, so it follows ssh",
    ),
    (
        "ssh-key-private",
        lambda r: ssh0(r).update(public_key="-----BEGIN OPENSSH PRIVATE KEY-----\nb3Bl\n"),
        "clusters[0].ssh.public_key",
        "this is a private key",
    ),
    (
        "ssh-user-reserved",
        lambda r: ssh0(r).update(admin_user="root"),
        "clusters[0].ssh.admin_user",
        "does not allow",
    ),
    (
        "ssh-user-invalid",
        lambda r: ssh0(r).update(admin_user="9 lives"),
        "clusters[0].ssh.admin_user",
        "not a valid Linux user name",
    ),
    (
        "subnet-not-arm-id",
        lambda r: c0(r).update(subnet_id="subnet-1"),
        "clusters[0].subnet_id",
        "not an ARM subnet id",
    ),
    (
        "no-public-ip-without-subnet",
        lambda r: c0(r).update(node_public_ip=False),
        "clusters[0].node_public_ip",
        "false needs subnet_id",
    ),
    (
        "public-ip-quoted-bool",
        lambda r: c0(r).update(node_public_ip="false"),
        "clusters[0].node_public_ip",
        "write false without quotes",
    ),
    (
        "cluster-key-typo",
        lambda r: c0(r).update(max_instance=3),
        "clusters[0].max_instance",
        "unknown key; did you mean max_instances?",
    ),
    ("top-level-key-typo", lambda r: r.update(cluster=[]), "cluster", "unknown key; did you mean clusters?"),
    (
        "locks-unknown-key",
        lambda r: r["locks"].update(resource_group=True),
        "locks.resource_group",
        "unknown key; remove it (valid keys here: storage, key_vault",
    ),
    (
        "workspace-name",
        lambda r: r["workspace"].update(name="ws_llm"),
        "workspace.name",
        "not a valid workspace name",
    ),
    (
        "workspace-name-typo-key",
        lambda r: r["workspace"].update(nmae="x"),
        "workspace.nmae",
        "did you mean name?",
    ),
    (
        "resource-group-name",
        lambda r: r["workspace"]["resource_group"].update(name="rg."),
        "workspace.resource_group.name",
        "not a valid resource group name",
    ),
    (
        "resource-group-create-string",
        lambda r: r["workspace"]["resource_group"].update(create="yes"),
        "workspace.resource_group.create",
        "write true without quotes",
    ),
    (
        "public-network-access-case",
        lambda r: r["workspace"].update(public_network_access="enabled"),
        "workspace.public_network_access",
        "did you mean Enabled?",
    ),
    (
        "tag-value-not-text",
        lambda r: r["workspace"]["tags"].update(env=3),
        "workspace.tags.env",
        "expected text, got 3; quote it: '3'",
    ),
    ("clusters-empty", lambda r: r.update(clusters=[]), "clusters", "the list is empty"),
    ("clusters-mapping", lambda r: r.update(clusters={"h100-x4": {}}), "clusters", "expected a list"),
    (
        "cluster-not-a-mapping",
        lambda r: r["clusters"].__setitem__(1, "a100-spot"),
        "clusters[1]",
        "expected a mapping of keys, got 'a100-spot'",
    ),
    ("locks-not-a-mapping", lambda r: r.update(locks=True), "locks", "expected a mapping of keys, got true"),
    ("workspace-name-number", lambda r: r["workspace"].update(name=42), "workspace.name", "quote it: '42'"),
    (
        "workspace-missing",
        lambda r: r.pop("workspace"),
        "workspace",
        "add workspace with the keys name, resource_group, region",
    ),
]


def bad(change: Mutate) -> dict[str, Any]:
    raw = good_raw()
    change(raw)
    return raw

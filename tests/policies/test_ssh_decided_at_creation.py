"""ssh-decided-at-creation (mandatory): SHOULD PASS / SHOULD FAIL from the happy path (SSH Enabled with a
3072-bit RSA key, local auth on). Keys: tests/fixtures/sshkeys/README.md."""

from __future__ import annotations

from typing import Any

import pytest

from policies import ssh_decided_at_creation as policy

from .policies_helpers import (
    CREDENTIALS,
    DELETE,
    KEY_1024,
    KEY_2048,
    KEY_ED25519,
    LOCAL_AUTH,
    NO_SSH,
    PASSWORD,
    REMOTE,
    SSH_KEY,
    cluster,
    facts,
    verdict,
)

SHOULD_PASS: dict[str, dict[str, Any]] = {
    "happy path: Enabled with an RSA key": {},
    "Disabled, no credentials, local auth off": NO_SSH,
    "Disabled, no credentials, disableLocalAuth left out": {**NO_SSH, LOCAL_AUTH: DELETE},
    "a 2048-bit RSA key (Azure's minimum, boundary)": {SSH_KEY: KEY_2048},
    "disableLocalAuth left out with SSH (Azure's default: local auth on)": {LOCAL_AUTH: DELETE},
    "disableLocalAuth false with SSH": {LOCAL_AUTH: False},
}

SHOULD_FAIL: dict[str, tuple[dict[str, Any], list[tuple[str, ...]]]] = {
    "remoteLoginPortPublicAccess left out (Azure's default NotSpecified)": (
        {REMOTE: DELETE},
        [("remoteLoginPortPublicAccess is absent", "fixes it at creation")],
    ),
    "remoteLoginPortPublicAccess empty": ({REMOTE: ""}, [("remoteLoginPortPublicAccess is absent",)]),
    "NotSpecified": ({REMOTE: "NotSpecified"}, [("remoteLoginPortPublicAccess is 'NotSpecified'",)]),
    "Enabled without a key": ({SSH_KEY: DELETE}, [("SSH is Enabled without an SSH public key",)]),
    "Enabled, credentials left out": ({CREDENTIALS: DELETE}, [("SSH is Enabled without an SSH public key",)]),
    "an ed25519 key": ({SSH_KEY: KEY_ED25519}, [("adminUserSshPublicKey:", "ssh-ed25519", "RSA")]),
    "a 1024-bit RSA key": ({SSH_KEY: KEY_1024}, [("adminUserSshPublicKey:", "1024 bits", "2048")]),
    "SSH with local auth disabled": (
        {LOCAL_AUTH: True},
        [("SSH is configured but disableLocalAuth is true",)],
    ),
    "a key with SSH Disabled, local auth disabled": (
        {REMOTE: "Disabled", LOCAL_AUTH: True},
        [("SSH is configured but disableLocalAuth is true",)],
    ),
    "an admin password": ({PASSWORD: "Secr3t!"}, [("an admin password is set on the nodes",)]),
    "a password alone, port Disabled, local auth disabled": (
        {**NO_SSH, PASSWORD: "Secr3t!"},
        [("SSH is configured but disableLocalAuth is true",), ("an admin password is set",)],
    ),
}


@pytest.mark.parametrize("overrides", SHOULD_PASS.values(), ids=SHOULD_PASS)
def test_should_pass(overrides: dict[str, Any]) -> None:
    assert verdict(policy, cluster(**overrides)) == []


@pytest.mark.parametrize(("overrides", "expected"), SHOULD_FAIL.values(), ids=SHOULD_FAIL)
def test_should_fail(overrides: dict[str, Any], expected: list[tuple[str, ...]]) -> None:
    facts(verdict(policy, cluster(**overrides)), expected)


MESSAGES: dict[str, tuple[dict[str, Any], str]] = {
    "port left out": (
        {REMOTE: DELETE},
        "remoteLoginPortPublicAccess is absent: Azure then opens or closes the SSH port depending on the "
        "network and fixes it at creation, and it cannot be changed without recreating the cluster. Fix: set "
        "ssh to 'disabled' or to {admin_user, public_key} in the stack config (remoteLoginPortPublicAccess, "
        "userAccountCredentials).",
    ),
    "Enabled without a key": (
        {SSH_KEY: DELETE},
        "SSH is Enabled without an SSH public key: nobody can log in to debug a hung node, and adding a key "
        "later means recreating the cluster. Fix: give ssh.public_key "
        "(userAccountCredentials.adminUserSshPublicKey), an OpenSSH public key.",
    ),
    "a 1024-bit RSA key": (
        {SSH_KEY: KEY_1024},
        "adminUserSshPublicKey: this RSA key has 1024 bits, Azure needs at least 2048. The key is fixed at "
        "creation, so a key Azure refuses means recreating the cluster. Fix: generate a new one (`ssh-keygen "
        "-t rsa -b 3072`).",
    ),
    "an ed25519 key": (
        {SSH_KEY: KEY_ED25519},
        "adminUserSshPublicKey: a ssh-ed25519 key is not accepted: Azure ML compute takes RSA keys only "
        "(docs: machine-learning-enable-ssh.md, 'starting with ssh-rsa'). The key is fixed at creation, so "
        "a key Azure refuses means recreating the cluster. Fix: generate one with `ssh-keygen -t rsa -b "
        "3072`.",
    ),
    "SSH with local auth disabled": (
        {LOCAL_AUTH: True},
        "SSH is configured but disableLocalAuth is true: on Azure ML computes local authentication is SSH, "
        "so nobody could log in, and the setting is fixed at creation. Fix: send disableLocalAuth = not ssh "
        "(the program derives it from ssh), or set ssh: disabled.",
    ),
    "an admin password": (
        {PASSWORD: "Secr3t!"},
        "an admin password is set on the nodes: it ends up in the stack state and allows password logins on "
        "every node. Fix: remove the password and use ssh.public_key.",
    ),
}


@pytest.mark.parametrize(("overrides", "message"), MESSAGES.values(), ids=MESSAGES)
def test_the_messages_in_full(overrides: dict[str, Any], message: str) -> None:
    assert verdict(policy, cluster(**overrides)) == [message]

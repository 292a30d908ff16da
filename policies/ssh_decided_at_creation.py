"""ssh-decided-at-creation: the public SSH port is decided explicitly, with a key, never a password.

Sources: azure-notes.md 3.4 and the Azure ML docs (how-to-create-attach-compute-cluster.md: "SSH access can't
be changed after creation"); azure-native AmlComputePropertiesArgs.remote_login_port_public_access:
"NotSpecified - ... closed on all nodes of the cluster if VNet is defined, else is open ... It can be default
only during cluster creation time, after creation it will be either enabled or disabled" (the SDK sends
NotSpecified when the field is omitted).

The key must be RSA of at least 2048 bits (stackconfig/sshkeys.py, the check the config schema uses: Azure ML
takes "an RSA public key ... starting with ssh-rsa", MicrosoftDocs/azure-ai-docs
articles/machine-learning/includes/machine-learning-enable-ssh.md). Local authentication IS SSH on Azure ML
computes (azure-ai-ml sends `disableLocalAuth = not ssh_settings`, azure/ai/ml/entities/_compute/
aml_compute.py), so SSH with `disableLocalAuth: true` would be a cluster nobody can log in to, and it is
fixed at creation.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import EnforcementLevel

from policies._policy import RESOURCE, AnalyzedResource
from policies.clusters import Cluster, judge_cluster
from stackconfig.sshkeys import public_key_problem

NAME = "ssh-decided-at-creation"
DESCRIPTION = (
    "AmlCompute clusters must set SSH explicitly at creation (Enabled with a public key, or Disabled), "
    "never with an admin password."
)
ENFORCEMENT = EnforcementLevel.MANDATORY
KIND = RESOURCE
CONFIG: dict[str, Any] = {}


def validate(resource: AnalyzedResource, config: Mapping[str, Any]) -> list[str]:
    return judge_cluster(
        resource, ("remote_login", "ssh_public_key", "admin_password", "disable_local_auth"), _messages
    )


def _messages(cluster: Cluster) -> list[str]:
    found = []
    access = cluster.remote_login
    if access not in ("Enabled", "Disabled"):
        shown = "absent" if access in (None, "") else repr(access)
        found.append(
            f"remoteLoginPortPublicAccess is {shown}: "
            "Azure then opens or closes the SSH port depending on the network and fixes it at creation, "
            "and it cannot be changed without recreating the cluster. "
            "Fix: set ssh to 'disabled' or to {admin_user, public_key} in the stack config "
            "(remoteLoginPortPublicAccess, userAccountCredentials)."
        )
    elif access == "Enabled" and not cluster.ssh_public_key:
        found.append(
            "SSH is Enabled without an SSH public key: nobody can log in to debug a hung node, "
            "and adding a key later means recreating the cluster. "
            "Fix: give ssh.public_key (userAccountCredentials.adminUserSshPublicKey), an OpenSSH public key."
        )
    if cluster.ssh_public_key and (problem := public_key_problem(cluster.ssh_public_key)):
        what, _, fix = problem.partition("; ")
        found.append(
            f"adminUserSshPublicKey: {what}. "
            f"The key is fixed at creation, so a key Azure refuses means recreating the cluster. Fix: {fix}."
        )
    if cluster.ssh_enabled and cluster.disable_local_auth is True:
        found.append(
            "SSH is configured but disableLocalAuth is true: "
            "on Azure ML computes local authentication is SSH, so nobody could log in, "
            "and the setting is fixed at creation. "
            "Fix: send disableLocalAuth = not ssh (the program derives it from ssh), or set ssh: disabled."
        )
    if cluster.admin_password:
        found.append(
            "an admin password is set on the nodes: "
            "it ends up in the stack state and allows password logins on every node. "
            "Fix: remove the password and use ssh.public_key."
        )
    return found

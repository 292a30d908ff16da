"""Azure naming rules for the names this config sets. Each check returns "<what is wrong>; <fix>" or None."""

from __future__ import annotations

import re

# Compute (AmlCompute cluster) names. Source: azure-notes.md §3.1, from MicrosoftDocs/azure-ai-docs
# articles/machine-learning/how-to-create-attach-compute-cluster.md ("Advanced Settings" table):
# 3 to 24 characters; letters, digits and '-'; starts with a letter; a '-' must be followed later in the
# name by at least one letter (so `cpu-cluster-1` is rejected).
COMPUTE_NAME_MIN, COMPUTE_NAME_MAX = 3, 24
_COMPUTE_CHARS = re.compile(r"^[A-Za-z0-9-]+$")

# Workspace names. Source: MicrosoftDocs/azure-docs
# articles/azure-resource-manager/management/resource-name-rules.md, Microsoft.MachineLearningServices
# "workspaces | resource group | 3-33 | Alphanumerics and hyphens." Starting with a letter or digit is
# inferred (a leading '-' is not allowed by most ARM names), not stated there.
_WORKSPACE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]{2,32}$")

# Resource group names. Source: same page, Microsoft.Resources "resourcegroups | subscription | 1-90 |
# Alphanumerics, underscores, parentheses, hyphens, periods, and unicode characters ... Can't end with
# period."
_RESOURCE_GROUP = re.compile(r"^[\w().-]{1,90}$")

# Admin user of the nodes (Linux VMs). Source: the VM OSProfile.adminUsername reference
# (learn.microsoft.com javascript/api/@azure/arm-compute OSProfile): Linux 1 to 64 characters and the
# disallowed values below. Applying the VM rule to AmlCompute's adminUserName is inferred (the nodes are
# Linux VMs). The character set (letter or '_' first, then letters, digits, '.', '_', '-') is the usual
# Linux user-name rule, also inferred.
ADMIN_USER_DISALLOWED = frozenset(
    {
        *("administrator", "admin", "user", "user1", "test", "user2", "test1", "user3", "admin1", "1", "123"),
        *("a", "actuser", "adm", "admin2", "aspnet", "backup", "console", "david", "guest", "john", "owner"),
        *("root", "server", "sql", "support", "support_388945a0", "sys", "test2", "test3", "user4", "user5"),
    }
)
_ADMIN_USER = re.compile(r"^[A-Za-z_][A-Za-z0-9._-]{0,63}$")

# ARM subnet id: /subscriptions/<id>/resourceGroups/<rg>/providers/Microsoft.Network/virtualNetworks/<vnet>/
# subnets/<subnet>. ARM ids are case-insensitive (resource-name-rules.md: "Always perform a case-insensitive
# comparison of names"); virtual network 2-64 and subnet 1-80 characters of alphanumerics, '_', '.', '-'.
_SUBNET_ID = re.compile(
    r"^/subscriptions/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
    r"/resourceGroups/[\w().-]{1,90}"
    r"/providers/Microsoft\.Network/virtualNetworks/[\w.-]{2,64}"
    r"/subnets/[\w.-]{1,80}$",
    re.IGNORECASE,
)
SUBNET_ID_EXAMPLE = (
    "/subscriptions/<subscription-id>/resourceGroups/<rg>/providers/Microsoft.Network/"
    "virtualNetworks/<vnet>/subnets/<subnet>"
)


def compute_name_problem(name: str) -> str | None:
    """Check an AmlCompute cluster name."""
    if not COMPUTE_NAME_MIN <= len(name) <= COMPUTE_NAME_MAX:
        return (
            f"'{name}' has {len(name)} characters, Azure ML allows {COMPUTE_NAME_MIN} to {COMPUTE_NAME_MAX}; "
            "use a name of that length"
        )
    if not _COMPUTE_CHARS.match(name):
        bad = sorted({c for c in name if not (c.isascii() and (c.isalnum() or c == "-"))})
        return f"'{name}' contains {''.join(bad)!r}; use only letters, digits and '-'"
    if not name[0].isalpha():
        return f"'{name}' must start with a letter; put a letter first, e.g. 'c{name}'"
    last_dash = name.rfind("-")
    if last_dash >= 0 and not any(c.isalpha() for c in name[last_dash + 1 :]):
        return (
            f"'{name}': Azure ML requires a letter somewhere after the last '-' (so 'cpu-cluster-1' is "
            f"rejected); end with a letter after the '-', e.g. '{name.rstrip('-')}x' or drop the '-'"
        )
    return None


def workspace_name_problem(name: str) -> str | None:
    """Check an Azure ML workspace name."""
    if _WORKSPACE.match(name):
        return None
    return (
        f"'{name}' is not a valid workspace name; use 3 to 33 letters, digits or '-', "
        "starting with a letter or digit"
    )


def resource_group_name_problem(name: str) -> str | None:
    """Check a resource group name."""
    if _RESOURCE_GROUP.match(name) and not name.endswith("."):
        return None
    return (
        f"'{name}' is not a valid resource group name; use 1 to 90 letters, digits, '_', '-', '.', "
        "'(' or ')', not ending with '.'"
    )


def admin_user_problem(name: str) -> str | None:
    """Check the SSH admin user of the nodes."""
    if name.lower() in ADMIN_USER_DISALLOWED:
        return f"'{name}' is a user name Azure does not allow for VMs; choose another, e.g. 'azureuser'"
    if not _ADMIN_USER.match(name) or name.endswith("."):
        return (
            f"'{name}' is not a valid Linux user name; use 1 to 64 letters, digits, '.', '_' or '-', "
            "starting with a letter or '_', e.g. 'azureuser'"
        )
    return None


def subnet_id_problem(value: str) -> str | None:
    """Check that `value` is the ARM id of a subnet."""
    if _SUBNET_ID.match(value):
        return None
    return f"'{value}' is not an ARM subnet id; use the full id {SUBNET_ID_EXAMPLE}"


_GUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.IGNORECASE)
_RG_PREFIX = (
    r"^/subscriptions/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
    r"/resourceGroups/[\w().-]{1,90}"
)


def guid_problem(value: str, what: str) -> str | None:
    """Check that `value` is a GUID (Entra object ids, principal ids)."""
    if _GUID.match(value):
        return None
    return f"'{value}' is not a GUID; use the {what} (e.g. az ad group show --group <name> --query id)"


def resource_group_id_problem(value: str) -> str | None:
    """Check that `value` is the ARM id of a resource group."""
    if re.match(_RG_PREFIX + "$", value, re.IGNORECASE):
        return None
    return (
        f"'{value}' is not an ARM resource group id; use /subscriptions/<subscription-id>/resourceGroups/<rg>"
    )


def resource_id_problem(value: str, arm_type: str) -> str | None:
    """Check that `value` is the ARM id of one resource of `arm_type` (e.g.
    Microsoft.Storage/storageAccounts), compared case-insensitively like every ARM id
    (resource-name-rules.md)."""
    pattern = _RG_PREFIX + r"/providers/" + re.escape(arm_type) + r"/[\w().-]{1,260}$"
    if re.match(pattern, value, re.IGNORECASE):
        return None
    return (
        f"'{value}' is not the ARM id of a {arm_type} resource; use "
        f"/subscriptions/<subscription-id>/resourceGroups/<rg>/providers/{arm_type}/<name>"
    )

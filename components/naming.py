"""Deterministic, valid Azure resource names derived from the workspace name.

Every name is a pure function of (workspace name, resource group id), so `pulumi up` on a fresh
machine finds the same resources again, and two stacks in different subscriptions or resource
groups do not collide on the names Azure requires to be globally unique.

Naming rules (each cites its source):
- Storage account: 3-24 characters, lowercase letters and digits only, globally unique.
  Source: learn.microsoft.com/azure/azure-resource-manager/management/resource-name-rules
  (Microsoft.Storage/storageAccounts) and the azure-native StorageAccountArgs.account_name docstring.
- Key vault: 3-24 characters, letters, digits and hyphens, starting with a letter, ending with a
  letter or digit, no consecutive hyphens, globally unique. Source: resource-name-rules
  (Microsoft.KeyVault/vaults).
- Container registry: 5-50 characters, letters and digits only, globally unique. Source:
  resource-name-rules (Microsoft.ContainerRegistry/registries).
- Log Analytics workspace: 4-63 characters, letters, digits and hyphens, starting and ending with
  a letter or digit. Source: resource-name-rules (Microsoft.OperationalInsights/workspaces).
- Application Insights component: 1-260 characters; `%&\\?/` and control characters are not
  allowed. Source: resource-name-rules (Microsoft.Insights/components).

The uniqueness suffix follows Bicep's `uniqueString(resourceGroup().id)` idiom: a short hash of the
resource group's ARM id (subscription + resource group, lower-cased because Azure compares resource
group names case-insensitively).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

# Length of the uniqueness suffix: 6 hex digits = 16.7 million values per workspace name.
SUFFIX_LEN = 6


def resource_group_id(subscription_id: str, resource_group: str) -> str:
    """The ARM id of a resource group (the format ARM returns for `GET .../resourceGroups/<name>`)."""
    return f"/subscriptions/{subscription_id}/resourceGroups/{resource_group}"


def unique_suffix(subscription_id: str, resource_group: str) -> str:
    """Short, stable hash of the resource group id, lower-cased (group names are case-insensitive)."""
    rg_id = resource_group_id(subscription_id, resource_group).lower()
    return hashlib.sha256(rg_id.encode()).hexdigest()[:SUFFIX_LEN]


def _alnum(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def _hyphenated(text: str) -> str:
    """Lowercase letters, digits and single hyphens, no leading or trailing hyphen."""
    cleaned = re.sub(r"[^a-z0-9-]+", "-", text.lower())
    cleaned = re.sub(r"-{2,}", "-", cleaned)
    return cleaned.strip("-")


def storage_account_name(workspace: str, suffix: str) -> str:
    """`st` + alphanumeric workspace name (cut to fit) + suffix: 3-24 lowercase alphanumerics."""
    room = 24 - 2 - len(suffix)
    return f"st{_alnum(workspace)[:room]}{suffix}"


def key_vault_name(workspace: str, suffix: str) -> str:
    """`kv-` + hyphenated workspace name (cut to fit) + `-` + suffix: 3-24, starts with a letter."""
    room = 24 - 3 - 1 - len(suffix)
    base = _hyphenated(workspace)[:room].strip("-")
    return f"kv-{base}-{suffix}" if base else f"kv-{suffix}"


def container_registry_name(workspace: str, suffix: str) -> str:
    """`cr` + alphanumeric workspace name (cut to fit) + suffix: 5-50 alphanumerics."""
    room = 50 - 2 - len(suffix)
    return f"cr{_alnum(workspace)[:room]}{suffix}"


def log_analytics_name(workspace: str) -> str:
    """`log-` + hyphenated workspace name: 4-63 characters (unique within the resource group only)."""
    return f"log-{_hyphenated(workspace)}"[:63].rstrip("-")


def app_insights_name(workspace: str) -> str:
    """`appi-` + hyphenated workspace name (unique within the resource group only)."""
    return f"appi-{_hyphenated(workspace)}"[:260].rstrip("-")


@dataclass(frozen=True)
class WorkspaceNames:
    """All names the Workspace component gives its children."""

    storage_account: str
    key_vault: str
    container_registry: str
    log_analytics: str
    app_insights: str


def workspace_names(workspace: str, subscription_id: str, resource_group: str) -> WorkspaceNames:
    suffix = unique_suffix(subscription_id, resource_group)
    return WorkspaceNames(
        storage_account=storage_account_name(workspace, suffix),
        key_vault=key_vault_name(workspace, suffix),
        container_registry=container_registry_name(workspace, suffix),
        log_analytics=log_analytics_name(workspace),
        app_insights=app_insights_name(workspace),
    )


def lock_name(resource_name: str) -> str:
    """`lock-<resource name>`: lock names are 1-90 characters, no `<>*%&:\\?/+` (resource-name-rules,
    Microsoft.Authorization/locks)."""
    return re.sub(r"[<>*%&:\\?/+]", "-", f"lock-{resource_name}")[:90]

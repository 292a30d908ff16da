"""The spec check's name constraints (preflight/provider/schema.py over the vendored specs and naming-rules.json) at
each limit: the shortest and longest name Azure takes pass, one character fewer or more fails, and each
character rule fails on the first name that breaks it, with azure-native Check's message naming the property.

Limits written from Microsoft Learn, learn.microsoft.com/azure/azure-resource-manager/management/
resource-name-rules (and, for the compute name, how-to-create-attach-compute-cluster: "between 3 and 24
characters ... letters, digits and the - character ... start with a letter ... '-' must be followed by at
least one letter"):
- Microsoft.Storage/storageAccounts: 3-24, lowercase letters and numbers.
- Microsoft.KeyVault/vaults: 3-24, alphanumerics and hyphens; start with a letter; end with a letter or
  digit; no consecutive hyphens.
- Microsoft.MachineLearningServices/workspaces: 3-33, alphanumerics, hyphens and underscores; start with an
  alphanumeric.
- Microsoft.ContainerRegistry/registries: 5-50, alphanumerics.
- Microsoft.Authorization/locks: 1-90, can't use <>*%&:\\?/+.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from preflight.engine import UPDATE, Deployment
from preflight.program import read_stack_config, run_program
from preflight.provider import schema

STORAGE = "azure-native:storage:StorageAccount"
VAULT = "azure-native:keyvault:Vault"
COMPUTE = "azure-native:machinelearningservices:Compute"
WORKSPACE = "azure-native:machinelearningservices:Workspace"
REGISTRY = "azure-native:containerregistry:Registry"
LOCK = "azure-native:authorization:ManagementLockByScope"
NAME_OF = {
    STORAGE: "accountName",
    VAULT: "vaultName",
    COMPUTE: "computeName",
    WORKSPACE: "workspaceName",
    REGISTRY: "registryName",
    LOCK: "lockName",
}


@pytest.fixture(scope="module")
def prod_inputs() -> dict[str, dict[str, Any]]:
    """One resource's checked inputs per type, from the prod stack as an update evaluates it (locks from the
    capacity stack: prod's managed network takes none)."""
    out: dict[str, dict[str, Any]] = {}
    for stack in ("prod", "capacity"):
        program = run_program(stack, config=read_stack_config(stack), deployment=Deployment(UPDATE))
        assert program.ok, program.problems or program.error
        for r in program.resources:
            if r.custom and r.type in NAME_OF and r.type not in out:
                out[r.type] = dict(r.inputs)
    assert set(out) == set(NAME_OF)
    return out


def failures(prod_inputs, typ: str, name: str) -> list[schema.Failure]:
    inputs = copy.deepcopy(prod_inputs[typ])
    inputs[NAME_OF[typ]] = name
    return [f for f in schema.check_resource(typ, inputs).failures if f.path == NAME_OF[typ]]


CASES = [
    # (type, name, passes)
    (STORAGE, "abc", True),
    (STORAGE, "ab", False),
    (STORAGE, "a" * 24, True),
    (STORAGE, "a" * 25, False),
    (STORAGE, "st0train9", True),
    (STORAGE, "stTrain", False),  # uppercase
    (STORAGE, "st-train", False),  # hyphen
    (VAULT, "kva", True),
    (VAULT, "kv", False),
    (VAULT, "k" * 24, True),
    (VAULT, "k" * 25, False),
    (VAULT, "kv-train-01", True),
    (VAULT, "1kv", False),  # starts with a digit
    (VAULT, "kv-", False),  # ends with a hyphen
    (VAULT, "kv--train", False),  # consecutive hyphens
    (VAULT, "kv_train", False),
    (COMPUTE, "abc", True),
    (COMPUTE, "ab", False),
    (COMPUTE, "a" * 24, True),
    (COMPUTE, "a" * 25, False),
    (COMPUTE, "h100-x4", True),  # a letter after the last '-'
    (COMPUTE, "gpu-cluster-1", False),  # only digits after the last '-'
    (COMPUTE, "1gpu", False),  # starts with a digit
    (COMPUTE, "gpu_x", False),
    (WORKSPACE, "abc", True),
    (WORKSPACE, "ab", False),
    (WORKSPACE, "w" * 33, True),
    (WORKSPACE, "w" * 34, False),
    (WORKSPACE, "ws_llm-01", True),
    (WORKSPACE, "1ws", True),  # an alphanumeric start, digits included
    (WORKSPACE, "-ws", False),
    (WORKSPACE, "_ws", False),
    (WORKSPACE, "ws.llm", False),
    (REGISTRY, "acr01", True),
    (REGISTRY, "acr0", False),
    (REGISTRY, "r" * 50, True),
    (REGISTRY, "r" * 51, False),
    (REGISTRY, "acr-train", False),
    (LOCK, "x", True),
    (LOCK, "", False),
    (LOCK, "l" * 90, True),
    (LOCK, "l" * 91, False),
    (LOCK, "do not delete (prod)", True),
    *[(LOCK, f"lock{c}x", False) for c in "<>*%&:\\?/+"],
]


@pytest.mark.parametrize(
    ("typ", "name", "passes"), CASES, ids=[f"{t.rsplit(':', 1)[-1]}-{n[:12]!r}" for t, n, _ in CASES]
)
def test_name_limits(prod_inputs, typ, name, passes):
    got = failures(prod_inputs, typ, name)
    if passes:
        assert got == []
    else:
        assert got, f"{typ} {name!r} should be refused"
        prop = NAME_OF[typ]
        assert all(f.source for f in got)
        assert any(
            f.reason.startswith((f"'{prop}' does not match expression", f"'{prop}' is too")) for f in got
        ), got


def test_the_reason_says_how_long_the_name_is_and_the_limit():
    # azure-native Check's wording (provider.go validateProperty): too long (N): at most M characters
    inputs = {"accountName": "a" * 25}
    (f,) = [
        x
        for x in schema.check_resource(STORAGE, inputs | {"azureApiVersion": "2024-01-01"}).failures
        if x.path == "accountName"
    ]
    assert f.reason == "'accountName' is too long (25): at most 24 characters allowed"
    (g,) = [
        x
        for x in schema.check_resource(
            STORAGE, {"accountName": "ab", "azureApiVersion": "2024-01-01"}
        ).failures
        if x.path == "accountName"
    ]
    assert g.reason == "'accountName' is too short (2): at least 3 characters required"

"""stackconfig/deploy.py: `azml-gpu:deploy` and the smoke plan of the deploy pipeline (issue 33 item 4).

Facts from the sources, not the code: a workspace with public network access Disabled is reached only through
its private endpoint (how-to-configure-private-link.md), so a GitHub-hosted runner cannot run its smoke job;
with identity-based datastores the submitter needs "the Storage Blob Data Contributor and Storage File Data
Privileged Contributor roles ... for the storage account" (how-to-disable-local-auth-storage.md)."""

from __future__ import annotations

from typing import Any

import pytest

from stackconfig import validate
from stackconfig.combinations import plan
from stackconfig.deploy import smoke_plan

from .stackconfig_factory import good_raw, problems

CI = "00000000-0000-0000-0000-0000000000C1"
PE_SUBNET = (
    "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg-net/providers/Microsoft.Network/"
    "virtualNetworks/vnet/subnets/snet-pe"
)


def public(**deploy: Any) -> dict[str, Any]:
    raw = good_raw()
    raw["clusters"] = [dict(raw["clusters"][0], ssh="disabled")]
    if deploy:
        raw["deploy"] = deploy
    return raw


def private(**deploy: Any) -> dict[str, Any]:
    """A private workspace: managed network, no node public IPs, a workspace private endpoint."""
    raw = public(**deploy)
    raw["workspace"]["public_network_access"] = "Disabled"
    raw["clusters"][0]["node_public_ip"] = False
    raw["network"] = {
        "managed": {"isolation_mode": "AllowOnlyApprovedOutbound"},
        "private_endpoints": {"subnet_id": PE_SUBNET},
    }
    return raw


def test_defaults_run_the_smoke_job_with_no_runner_or_principal() -> None:
    deploy = validate(public()).deploy
    assert (deploy.smoke, deploy.smoke_runner, deploy.ci_principal_id) == (True, None, None)


def test_a_public_workspace_runs_on_a_github_hosted_runner() -> None:
    got = smoke_plan("s", validate(public())).as_json()
    assert got == {
        "stack": "s",
        "smoke": True,
        "runner": "ubuntu-latest",
        "cluster": "h100-x4",
        "reason": "public workspace: a GitHub-hosted runner reaches it",
    }


def test_a_private_workspace_without_a_runner_is_skipped_with_the_reason() -> None:
    got = smoke_plan("s", validate(private()))
    assert (got.run, got.runner) == (False, None)
    assert got.reason == (
        "workspace ws-llm is private (public_network_access: Disabled) and a GitHub-hosted runner cannot "
        "reach it; set azml-gpu:deploy.smoke_runner to the label of a self-hosted runner inside its network "
        "(docs/config.md, azml-gpu:deploy)"
    )


@pytest.mark.parametrize(
    "raw", [private(smoke_runner="azml-prod-vnet"), public(smoke_runner="azml-prod-vnet")]
)
def test_a_self_hosted_runner_runs_it_wherever_the_workspace_is(raw: dict[str, Any]) -> None:
    got = smoke_plan("s", validate(raw))
    assert (got.run, got.runner, got.cluster) == (True, "azml-prod-vnet", "h100-x4")


@pytest.mark.parametrize("raw", [public(smoke=False), private(smoke=False, smoke_runner="azml-prod-vnet")])
def test_smoke_false_skips_it_saying_so(raw: dict[str, Any]) -> None:
    got = smoke_plan("s", validate(raw))
    assert (got.run, got.reason) == (False, "azml-gpu:deploy.smoke is false in the stack file")


@pytest.mark.parametrize("label", ["", " vnet", "a,b"])
def test_a_runner_label_is_one_label(label: str) -> None:
    (problem,) = problems(public(smoke_runner=label))
    assert problem.startswith("azml-gpu:deploy.smoke_runner: ") and "is not a runner label" in problem


def test_the_ci_principal_is_an_object_id() -> None:
    (problem,) = problems(public(ci_principal_id="deploy-sp"))
    assert problem == (
        "azml-gpu:deploy.ci_principal_id: 'deploy-sp' is not a GUID; use the object id of the deploy "
        "pipeline's service principal (e.g. az ad sp show --id <AZURE_CLIENT_ID> --query id)"
    )


# --- identity-based datastores: the pipeline's principal needs the data roles -----------------------------


def identity(raw: dict[str, Any]) -> dict[str, Any]:
    raw["identity"] = {"system_datastores_auth_mode": "identity"}
    return raw


def test_a_smoke_job_with_identity_datastores_and_no_principal_names_the_missing_grants() -> None:
    assert problems(identity(public())) == [
        "azml-gpu:deploy.ci_principal_id: not set, and the deploy pipeline's smoke job (on ubuntu-latest) "
        "uploads its code with the pipeline's own identity, which with identity.system_datastores_auth_mode: "
        "identity needs Storage Blob Data Contributor and Storage File Data Privileged Contributor on the "
        "workspace storage (how-to-disable-local-auth-storage.md); set it to the object id of the pipeline's "
        "service principal (`az ad sp show --id <AZURE_CLIENT_ID> --query id -o tsv`) so the stack grants "
        "both, or set deploy.smoke: false"
    ]


@pytest.mark.parametrize(
    "raw",
    [
        identity(public(smoke=False)),  # no smoke job
        identity(private()),  # skipped: no runner inside the network
        public(),  # key-based datastores: the upload needs no data role
    ],
)
def test_no_principal_is_needed_when_no_smoke_job_uploads_with_identity(raw: dict[str, Any]) -> None:
    assert problems(raw) == []


def test_the_principal_gets_both_data_roles_on_the_workspace_storage() -> None:
    config = validate(identity(public(ci_principal_id=CI)))
    ci = CI.lower()
    assert sorted(
        (g.key, g.scope, g.principal, g.principal_type, g.role) for g in plan(config) if g.principal == ci
    ) == [
        ("ci/st/blob-contributor", "storage", ci, "ServicePrincipal", "Storage Blob Data Contributor"),
        (
            "ci/st/file-privileged",
            "storage",
            ci,
            "ServicePrincipal",
            "Storage File Data Privileged Contributor",
        ),
    ]


def test_with_key_based_datastores_the_principal_gets_nothing() -> None:
    config = validate(public(ci_principal_id=CI))
    assert [g for g in plan(config) if g.principal == CI.lower()] == []

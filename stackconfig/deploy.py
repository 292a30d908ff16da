"""`azml-gpu:deploy`: how the deploy pipeline (.github/workflows/deploy-stack.yml) reaches what it deployed,
and `smoke_plan`: whether its post-deploy smoke step runs, on which runner, or why it is skipped.

Sources:
- A workspace with public network access Disabled is reached only through its private endpoint, from inside
  the network (learn.microsoft.com/azure/machine-learning/how-to-configure-private-link, "Disable public
  access": "the workspace can only be accessed through a private endpoint"); GitHub-hosted runners are
  outside every customer network (docs.github.com, "About GitHub-hosted runners": they run on machines
  GitHub hosts, reached over the internet; a private network needs a self-hosted runner or Azure private
  networking for GitHub-hosted runners, "About self-hosted runners"). So the smoke job of a private
  workspace runs on a self-hosted runner inside the network (`smoke_runner`, its label), or is skipped with
  the reason.
- With identity-based datastores the code upload of a job is made with the submitter's own identity, which
  needs Storage Blob Data Contributor and Storage File Data Privileged Contributor on the workspace storage
  ("identify all the users that will use it ... These users must be assigned the Storage Blob Data
  Contributor and Storage File Data Privileged Contributor roles in Azure role-based access control for the
  storage account": learn.microsoft.com/azure/machine-learning/how-to-disable-local-auth-storage, "Create a
  new workspace"). The pipeline submits the smoke job as its own service principal, so the stack grants it
  those roles (`ci_principal_id`), or the config error says which grants are missing
  (`stackconfig.combinations`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import Field, field_validator

from stackconfig import names
from stackconfig.schema_base import Strict

GITHUB_HOSTED = "ubuntu-latest"
CI_DATA_ROLES = ("Storage Blob Data Contributor", "Storage File Data Privileged Contributor")


class DeployConfig(Strict):
    """`azml-gpu:deploy`. Every key is optional."""

    smoke: bool = Field(
        default=True,
        description="Optional, default true: the deploy pipeline runs the smoke job after `pulumi up`; "
        "false skips it (the pipeline says so).",
    )
    smoke_runner: str | None = Field(
        default=None,
        description="Optional: the label of a self-hosted GitHub Actions runner inside the workspace's "
        "network, where the smoke job of a private workspace runs; default none: GitHub-hosted "
        f"({GITHUB_HOSTED}), and a private workspace's smoke job is skipped with the reason.",
        examples=["azml-prod-vnet"],
    )
    ci_principal_id: str | None = Field(
        default=None,
        description="Optional: Entra object id of the deploy pipeline's service principal (the one "
        "AZURE_CLIENT_ID logs in as). With identity-based datastores the stack grants it Storage Blob Data "
        "Contributor and Storage File Data Privileged Contributor on the workspace storage, which the smoke "
        "job's code upload needs (how-to-disable-local-auth-storage.md); without it such a stack is a "
        "config error unless smoke is false.",
        examples=["00000000-0000-0000-0000-0000000000c1"],
    )

    @field_validator("smoke_runner")
    @classmethod
    def _runner(cls, value: str | None) -> str | None:
        if value is not None and (not value.strip() or value != value.strip() or "," in value):
            raise ValueError(
                f"{value!r} is not a runner label; use the one label of your self-hosted runner inside the "
                "network, e.g. azml-prod-vnet"
            )
        return value

    @field_validator("ci_principal_id")
    @classmethod
    def _principal(cls, value: str | None) -> str | None:
        if value is not None and (
            problem := names.guid_problem(value, "object id of the deploy pipeline's service principal")
        ):
            raise ValueError(
                problem.replace("az ad group show --group <name>", "az ad sp show --id <AZURE_CLIENT_ID>")
            )
        return None if value is None else value.lower()


@dataclass(frozen=True)
class SmokePlan:
    """What the deploy pipeline does after `pulumi up` of one stack."""

    stack: str
    run: bool
    runner: str | None  # the runs-on label when it runs
    cluster: str | None  # the stack's first cluster, where the smoke job runs
    reason: str  # why it runs there, or why it is skipped

    def as_json(self) -> dict[str, Any]:
        return {
            "stack": self.stack,
            "smoke": self.run,
            "runner": self.runner,
            "cluster": self.cluster,
            "reason": self.reason,
        }


def smoke_plan(stack: str, config: Any) -> SmokePlan:
    """The smoke step of a validated StackConfig `config` (module docstring)."""
    deploy: DeployConfig = config.deploy
    cluster = config.clusters[0].name
    if not deploy.smoke:
        return SmokePlan(stack, False, None, cluster, "azml-gpu:deploy.smoke is false in the stack file")
    private = config.workspace.public_network_access == "Disabled"
    if deploy.smoke_runner is not None:
        where = "inside the private workspace's network" if private else "named by deploy.smoke_runner"
        return SmokePlan(stack, True, deploy.smoke_runner, cluster, f"self-hosted runner {where}")
    if private:
        return SmokePlan(
            stack,
            False,
            None,
            cluster,
            f"workspace {config.workspace.name} is private (public_network_access: Disabled) and a "
            "GitHub-hosted runner cannot reach it; set azml-gpu:deploy.smoke_runner to the label of a "
            "self-hosted runner inside its network (docs/config.md, azml-gpu:deploy)",
        )
    return SmokePlan(
        stack, True, GITHUB_HOSTED, cluster, "public workspace: a GitHub-hosted runner reaches it"
    )

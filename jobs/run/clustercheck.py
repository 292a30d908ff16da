"""Before a job is built on Azure: does the workspace have the cluster the stack outputs name?

A cluster can be in the stack outputs and not in the workspace (the stack was not deployed yet, the cluster
was deleted in the portal or by `az ml compute delete`). Azure ML then refuses the job only at create, after
the quota check and the code upload, or queues it; `jobs run` asks first (`ComputeOperations.get`: a 404 is
azure-core's `ResourceNotFoundError`) and says so with the fix."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from azure.ai.ml import MLClient

    from stackconfig.outputs import StackOutputs


def absent(ml: MLClient, outputs: StackOutputs, cluster: str | None) -> str | None:
    """The message when the workspace has no cluster `cluster` (None: serverless, present, or the read failed
    for another reason, which the job's own calls then report)."""
    if not cluster:
        return None
    from azure.core.exceptions import ResourceNotFoundError

    try:
        ml.compute.get(cluster)
    except ResourceNotFoundError:
        return (
            f"--cluster {cluster}: the workspace {outputs.workspace_name} (resource group "
            f"{outputs.resource_group}) has no cluster {cluster}, though the stack outputs list it: the "
            "stack is not deployed or the cluster was deleted; run `pulumi up`, then `python -m jobs "
            "check-deploy`"
        )
    except Exception:  # informational: the job's own calls report anything else
        return None
    return None

"""The health job's shape (jobs/health/build.py `health`): what a user running `python -m jobs submit health`
gets by default: every node of a cluster, the size's levels named in the job, and the TCP refusal on a
size without RDMA (multi-node NCCL over sockets, docs/jobs.md)."""

from __future__ import annotations

import pytest

from jobs.builders import Target
from jobs.errors import UsageError
from jobs.health import build

H100 = Target(
    size="Standard_ND96isr_H100_v5", gpus_per_node=8, rdma_usable=True, compute="h100-x4", max_instances=4
)
NO_RDMA = Target(
    size="Standard_NC4as_T4_v3", gpus_per_node=1, rdma_usable=False, compute="a100", max_instances=2
)


def test_the_job_names_the_levels_it_was_built_with():
    built = build.health(H100)
    assert built.extra == {"mode": "quick", "levels": "Standard_ND96isr_H100_v5", "compute": "h100-x4"}
    assert build.health(NO_RDMA, nodes=1).extra["levels"] is None  # no published levels for that size


def test_two_nodes_without_rdma_are_refused_unless_tcp_is_allowed():
    with pytest.raises(UsageError, match="the size has no RDMA usable by NCCL"):
        build.health(NO_RDMA)  # every node of the cluster: 2
    assert build.health(NO_RDMA, allow_tcp=True).nodes == 2


def test_serverless_defaults_to_two_nodes_and_one_process_per_gpu():
    serverless = Target(size="Standard_ND96isr_H100_v5", gpus_per_node=8, rdma_usable=True)
    built = build.health(serverless)
    assert (built.nodes, built.processes_per_node) == (2, 8)

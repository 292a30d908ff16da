"""The REST spec's own example of an AmlCompute GET (azure-rest-api-specs machinelearningservices
stable/2025-12-01 examples/Compute/get/AmlCompute.json, copied to fixtures/compute-get-amlcompute.json) and
the stack cluster it describes, for the tests of `check-deploy` and of jobs/check_deploy/drift.py."""

from __future__ import annotations

import json

from .jobs_util import FIXTURES

EXAMPLE = json.loads((FIXTURES / "compute-get-amlcompute.json").read_text())

#: The stack cluster the spec example describes (what `stack_outputs` exports for it).
EXAMPLE_CLUSTER = {
    "name": "compute123", "size": "Standard_NC6", "region": "eastus2", "tier": "dedicated",
    "min_instances": 0, "max_instances": 1, "idle_seconds": 300, "gpus_per_node": 1, "vcpus_per_node": 6,
    "rdma_usable": False, "ssh_enabled": True, "subnet_id": "test-subnet-resource-id", "node_public_ip": True,
}  # fmt: skip

"""Per-size NCCL settings of a job (jobs/settings.py) pinned to what Azure publishes, from the sources:

- Azure/azhpc-images at 8e9d055fb9e1f7385da734969793861c447958a1 (2026-07-29):
  components/setup_sku_customizations.sh maps `standard_nd*v4` to ndv4.sh and `standard_nd96is*_h[1-2]00_v5`
  (ND H100 v5 and ND H200 v5) to ndv5.sh; each writes /etc/nccl.conf:
    ndv4.sh: NCCL_IB_PCI_RELAXED_ORDERING=1, NCCL_TOPO_FILE=/opt/microsoft/ndv4/topo.xml (a link to
             /opt/microsoft/ndv4-topo.xml), NCCL_IGNORE_CPU_AFFINITY=1 (there since the file's first version,
             2025-07-09, and in customizations/ndv4.sh before it since 2025-02-07, commit bf3b320e)
    ndv5.sh: NCCL_IB_PCI_RELAXED_ORDERING=1, NCCL_TOPO_FILE=/opt/microsoft/ndv5/topo.xml (a link to
             /opt/microsoft/ndv5-topo.xml), NCCL_IGNORE_CPU_AFFINITY=1
- Azure/azurehpc-health-checks at 0e0a1ac26a64b32ac4dd7632a529638505d3314a, customTests/
  azure_nccl_allreduce.nhc: mpirun -x UCX_IB_PCI_RELAXED_ORDERING=on -x CUDA_DEVICE_ORDER=PCI_BUS_ID
  -x NCCL_SOCKET_IFNAME=eth0 ...
- PyTorch torch_nccl_environment_variables: TORCH_NCCL_ASYNC_ERROR_HANDLING=3 tears the process down on a NCCL
  error (every GPU job).
"""

from __future__ import annotations

import pytest

from jobs import settings

HEALTH_CHECK = {
    "UCX_IB_PCI_RELAXED_ORDERING": "on",
    "CUDA_DEVICE_ORDER": "PCI_BUS_ID",
    "NCCL_SOCKET_IFNAME": "eth0",
}
NDV4_TOPO = {"/opt/microsoft/ndv4/topo.xml", "/opt/microsoft/ndv4-topo.xml"}  # the link and its target
NDV5_TOPO = {"/opt/microsoft/ndv5/topo.xml", "/opt/microsoft/ndv5-topo.xml"}


def env(size: str) -> dict[str, str]:
    return settings.defaults("train", size).env


@pytest.mark.parametrize(
    "size", ["Standard_ND96asr_v4", "Standard_ND96amsr_A100_v4", "Standard_ND96isr_H100_v5"]
)
def test_nd_sizes_get_relaxed_ordering_the_topology_file_and_the_health_check_env(size):
    got = env(size)
    assert got["NCCL_IB_PCI_RELAXED_ORDERING"] == "1"
    assert {k: got[k] for k in HEALTH_CHECK} == HEALTH_CHECK
    assert got["TORCH_NCCL_ASYNC_ERROR_HANDLING"] == "3"


def test_nd_h100_v5_ignores_cpu_affinity():
    assert env("Standard_ND96isr_H100_v5")["NCCL_IGNORE_CPU_AFFINITY"] == "1"


@pytest.mark.parametrize("size", ["Standard_ND96asr_v4", "Standard_ND96amsr_A100_v4"])
def test_nd_a100_v4_ignores_cpu_affinity_as_the_image_does(size):
    assert env(size).get("NCCL_IGNORE_CPU_AFFINITY") == "1"


def test_nd_h200_v5_gets_the_ndv5_settings():
    got = env("Standard_ND96isr_H200_v5")
    assert got.get("NCCL_IB_PCI_RELAXED_ORDERING") == "1"
    assert got.get("NCCL_IGNORE_CPU_AFFINITY") == "1"


def test_a_cpu_size_gets_no_gpu_environment():
    assert env("Standard_D4s_v5") == {}

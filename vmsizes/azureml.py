"""What Azure Machine Learning compute clusters (AmlCompute) can run, per size: the one home of that
statement.

Sources:
- [CCT] learn.microsoft.com/azure/machine-learning/concept-compute-target, "Supported VM series and sizes"
  (MicrosoftDocs/azure-ai-docs articles/machine-learning/concept-compute-target.md): "Some VM series aren't
  supported in Azure Machine Learning"; the table of supported series (its GPU rows: NC, NC Promo, NCv2,
  NCv3, ND, NDv2, NV, NVv3, NCasT4_v3, NDasrA100_v4, each "Compute clusters and instance"); "While Azure
  Machine Learning supports these VM series, they might not be available in all Azure regions"; and "Azure
  Machine Learning doesn't support all VM sizes that Azure Compute supports. To list the available VM sizes
  supported by specific compute VM types, use ... [REST API](/rest/api/azureml/virtual-machine-sizes/list)
  ... `az ml compute list-sizes`". The table predates the H100/H200/A100 v4 NC sizes Azure ML runs today, so
  it is a floor, not the list: which sizes a region offers is Azure's live answer (`offered_live`, read by
  `python -m jobs check-deploy` with credentials: azure-ai-ml `ComputeOperations.list_sizes(location=...,
  compute_type="amlcompute")`, the same REST call).
- [MQ] learn.microsoft.com/azure/machine-learning/how-to-manage-quotas, "Azure Machine Learning Compute"
  (articles/machine-learning/how-to-manage-quotas.md): "Nodes in a single Azure Machine Learning compute
  (AmlCompute) cluster set up as a communication-enabled pool on an RDMA enabled VM Family | 100 nodes" and
  "Nodes in a single MPI run on an Azure Machine Learning compute (AmlCompute) cluster | 100 nodes" (no
  "configurable up to", unlike the non-RDMA rows).
- [AMD] docs/reference/azure-notes.md 1.3 item 7: ND MI300X v5 "is RDMA/InfiniBand but AMD GPUs. Collectives
  use RCCL/ROCm, not NCCL/CUDA".
- [ARM] docs/reference/azure-notes.md 1.3 item 8: "ND GB200/GB300 v6 have Arm (Grace) host CPUs".
- The jobs' environment is the curated `acpt-pytorch-2.2-cuda12.1` (jobs/builders.py ENVIRONMENT_NAME, an
  NVIDIA CUDA image) and the health checks are NVIDIA's (vmsizes/health.py: nvidia-smi, NCCL, nvbandwidth).
  Azure ML documents no ROCm or Arm64 curated environment for it ([CCT]'s CUDA table names NVIDIA
  architectures only): conservative reading, unverified on a live workspace (docs/azure-behaviour.md,
  "Azure ML's own limits").
"""

from __future__ import annotations

from collections.abc import Iterable

from vmsizes.model import VmSize

SOURCE = "concept-compute-target.md, Supported VM series and sizes; az ml compute list-sizes"
RDMA_MAX_NODES = 100  # [MQ]
RDMA_MAX_NODES_SOURCE = (
    "how-to-manage-quotas.md: nodes in a single AmlCompute cluster set up as a communication-enabled pool on "
    "an RDMA enabled VM family: 100 nodes"
)

# [CCT]'s GPU series, as the catalog names them (vmsizes/data/sizes.yaml `series`).
DOCUMENTED_GPU_SERIES: frozenset[str] = frozenset(
    {
        "NC (v1)",  # NC
        "NC (v1) Promo",  # NC Promo
        "NCv2",
        "NCv3",
        "ND (v1)",  # ND
        "NDv2",
        "NV (v1)",  # NV
        "NVv3",
        "NCasT4_v3",
        "ND A100 v4 (NDasrA100_v4)",  # NDasrA100_v4
    }
)


def refusal(size: VmSize) -> str | None:
    """Why the project's jobs cannot run on an AmlCompute cluster of `size`, or None when they can."""
    if (size.gpu_vendor or "").upper() == "AMD":
        return (
            f"has AMD GPUs ({size.gpu_model or size.series}): its collectives are RCCL/ROCm, and the jobs' "
            "environment and health checks are NVIDIA CUDA/NCCL (no ROCm environment on Azure ML for them)"
        )
    if size.cpu_architecture.lower().startswith("arm"):
        return (
            f"has Arm (Grace) host CPUs ({size.series}): the jobs' CUDA environment is an x86-64 image and "
            "Azure ML documents no Arm64 one"
        )
    return None


def documented(size: VmSize) -> bool:
    """Whether [CCT]'s table of supported series lists the size's series (it does not list the newer ones
    Azure ML runs too: `offered_live` is the answer)."""
    return size.series in DOCUMENTED_GPU_SERIES


def offered_live(size_name: str, offered: Iterable[str]) -> bool:
    """Whether Azure ML's live list for a region (`az ml compute list-sizes --location R --type amlcompute`
    names) holds `size_name`; VM size names compare case-insensitively."""
    return size_name.lower() in {name.lower() for name in offered}

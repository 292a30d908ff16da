"""VmSize: one VM size, from the catalog or inferred from its name."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from fractions import Fraction


@dataclass(frozen=True, kw_only=True)
class VmSize:
    """A VM size. Fields follow docs/architecture.md "vmsizes"; the ones after ``inferred`` are extras.

    ``vcpus`` are the ACTIVE vCPUs (constrained sizes list fewer than their base; constrained-vcpu.md).
    ``gpus`` counts whole GPUs; 0 with ``gpu_fraction`` set ("1/8") means a GPU partition
    (azure-gpu-sizes.yaml schema_notes). ``infiniband_gbps``: sum of backend InfiniBand link rates per VM.
    """

    name: str
    series: str
    vcpus: int | None
    gpus: int | None
    gpu_fraction: str | None
    gpu_model: str | None
    gpu_vendor: str | None
    gpu_memory_gb: float | None
    rdma: bool
    infiniband_gbps: int | None
    rdma_usable: bool
    quota_family: str | None
    retirement_date: date | None
    retirement_extensions: dict[str, date] = field(default_factory=dict, hash=False)
    cpu_architecture: str = "x64"
    sources: tuple[str, ...] = ()
    inferred: bool = False
    # Extras beyond the contract.
    quota_vcpus: int | None = None
    base_size: str | None = None
    withdrawn: bool = False
    memory_gib: float | None = None
    quota_family_confidence: str | None = None
    status: str | None = None
    unconfirmed: tuple[str, ...] = ()
    notes: str | None = None

    @property
    def per_gpu_link_gbps(self) -> float | None:
        """InfiniBand Gb/s per GPU (per-VM rate / whole GPUs); None if either is unknown or no GPUs."""
        if self.infiniband_gbps is None or not self.gpus:
            return None
        return self.infiniband_gbps / self.gpus

    @property
    def gpu_share(self) -> Fraction | None:
        """GPUs per VM as a number: the partition fraction when set, else the whole-GPU count."""
        if self.gpu_fraction is not None:
            return Fraction(self.gpu_fraction)
        return Fraction(self.gpus) if self.gpus is not None else None

    @property
    def constrained(self) -> bool:
        """A constrained-vCPU size (``HB120-16rs_v3``): fewer active vCPUs than its base size."""
        return self.base_size is not None

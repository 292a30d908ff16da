"""The size catalog: vmsizes/data/sizes.yaml loaded once, indexed by lower-case name."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import date
from importlib import resources
from typing import Any

import yaml

from vmsizes.errors import UnknownSize
from vmsizes.model import VmSize
from vmsizes.naming import ParsedName, parse_name
from vmsizes.rdma_exceptions import rdma_usable_by_name
from vmsizes.regions import normalize_region

NAMING_SOURCE = (
    "inferred from the name: "
    "MicrosoftDocs/azure-compute-docs:articles/virtual-machines/vm-naming-conventions.md "
    "and constrained-vcpu.md (azure-notes.md 1.1-1.2)"
)
# ND GB200/GB300 v6 have Grace (Arm) host CPUs: azure-notes.md 1.3 item 8 (the nd-gb200-v6 and
# nd-gb300-v6 series summaries).
GRACE_ACCELERATORS = frozenset({"GB200", "GB300"})


class CatalogError(RuntimeError):
    """sizes.yaml is malformed: names the entry and the field."""


@dataclass(frozen=True)
class _Catalog:
    by_lower_name: dict[str, VmSize]
    ordered: tuple[VmSize, ...]
    vendor_by_accelerator: dict[str, str]


def lookup(name: str) -> VmSize | None:
    """The catalog entry for ``name`` (any case), or None when the catalog does not list it."""
    if not isinstance(name, str):
        return None
    return _catalog().by_lower_name.get(name.lower())


def all_sizes() -> tuple[VmSize, ...]:
    """Every catalog entry, in file order."""
    return _catalog().ordered


def describe(name: str) -> VmSize:
    """The catalog entry, else a VmSize inferred from the name (``inferred=True``); raises UnknownSize."""
    found = lookup(name)
    if found is not None:
        return found
    return _infer(parse_name(name))


def resolve(name_or_size: str | VmSize) -> VmSize:
    """A VmSize passed through, or ``describe(name)``."""
    return name_or_size if isinstance(name_or_size, VmSize) else describe(name_or_size)


def _infer(parsed: ParsedName) -> VmSize:
    """A VmSize from the naming convention alone; a constrained size borrows its catalog base's hardware."""
    catalog = _catalog()
    base = None
    if parsed.constrained:
        base = catalog.by_lower_name.get(_base_name(parsed).lower())
    arm = parsed.arm_cpu or parsed.accelerator in GRACE_ACCELERATORS
    if base is not None:
        # Constrained sizes keep the base size's memory, disks and I/O (azure-notes.md 1.2, from
        # MicrosoftDocs/azure-compute-docs:articles/virtual-machines/constrained-vcpu.md).
        return VmSize(
            name=parsed.canonical,
            series=base.series,
            vcpus=parsed.active_vcpus,
            gpus=base.gpus,
            gpu_fraction=base.gpu_fraction,
            gpu_model=base.gpu_model,
            gpu_vendor=base.gpu_vendor,
            gpu_memory_gb=base.gpu_memory_gb,
            rdma=parsed.rdma,
            infiniband_gbps=base.infiniband_gbps,
            rdma_usable=rdma_usable_by_name(parsed.canonical, parsed.rdma),
            quota_family=None,
            retirement_date=base.retirement_date,
            retirement_extensions=dict(base.retirement_extensions),
            cpu_architecture=base.cpu_architecture,
            sources=(NAMING_SOURCE, f"hardware of base size {base.name}", *base.sources),
            inferred=True,
            quota_vcpus=parsed.vcpus,
            base_size=base.name,
            withdrawn=base.withdrawn,
            memory_gib=base.memory_gib,
        )
    return VmSize(
        name=parsed.canonical,
        series=" ".join(p for p in (parsed.letters, parsed.accelerator, parsed.version) if p),
        vcpus=parsed.active_vcpus,
        gpus=None,
        gpu_fraction=None,
        gpu_model=None,
        gpu_vendor=catalog.vendor_by_accelerator.get(parsed.accelerator or ""),
        gpu_memory_gb=None,
        rdma=parsed.rdma,
        infiniband_gbps=None,
        rdma_usable=rdma_usable_by_name(parsed.canonical, parsed.rdma),
        quota_family=None,
        retirement_date=None,
        cpu_architecture="Arm64" if arm else "x64",
        sources=(NAMING_SOURCE,),
        inferred=True,
        quota_vcpus=parsed.vcpus,
        base_size=_base_name(parsed),
    )


def _base_name(parsed: ParsedName) -> str | None:
    """The unconstrained size a constrained name is cut from: HB120-16rs_v3 -> HB120rs_v3."""
    if not parsed.constrained:
        return None
    return parsed.canonical.replace(f"-{parsed.constrained_vcpus}", "", 1)


@functools.cache
def _catalog() -> _Catalog:
    text = (resources.files(__package__) / "data" / "sizes.yaml").read_text(encoding="utf-8")
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    raw = yaml.load(text, Loader=loader)  # noqa: S506 - a safe loader, chosen for speed
    sizes = tuple(_entry(item) for item in raw["sizes"])
    by_name: dict[str, VmSize] = {}
    for size in sizes:
        if size.name.lower() in by_name:
            raise CatalogError(f"sizes.yaml: {size.name} is listed twice")
        by_name[size.name.lower()] = size
    vendors: dict[str, set[str]] = {}
    for size in sizes:
        accelerator = parse_name(size.name).accelerator
        if accelerator and size.gpu_vendor:
            vendors.setdefault(accelerator, set()).add(size.gpu_vendor)
    vendor_by_accelerator = {acc: next(iter(v)) for acc, v in vendors.items() if len(v) == 1}
    return _Catalog(by_name, sizes, vendor_by_accelerator)


def _entry(item: dict[str, Any]) -> VmSize:
    name = item.get("name")
    if not isinstance(name, str):
        raise CatalogError(f"sizes.yaml: an entry has no name: {item!r:.120}")
    try:
        parsed = parse_name(name)
    except UnknownSize as err:
        raise CatalogError(f"sizes.yaml: {err}") from err
    try:
        extensions = {
            normalize_region(region): _date(value)
            for region, value in (item.get("retirement_extensions") or {}).items()
        }
        fraction = item.get("gpu_fraction")
        return VmSize(
            name=name,
            series=item["series"],
            vcpus=item["vcpus"],
            gpus=item["gpus"],
            gpu_fraction=str(fraction) if fraction is not None else None,
            gpu_model=item["gpu_model"],
            gpu_vendor=item.get("gpu_vendor"),
            gpu_memory_gb=item["gpu_memory_gb"],
            rdma=bool(item["rdma"]),
            infiniband_gbps=item["infiniband_gbps_total"],
            rdma_usable=bool(item.get("rdma_usable_for_nccl", item["rdma"])),
            quota_family=item["quota_family"],
            retirement_date=_date(item["retirement_date"]),
            retirement_extensions=extensions,
            cpu_architecture=item.get("cpu_architecture", "x64"),
            sources=tuple(item["source"]),
            inferred=False,
            quota_vcpus=parsed.vcpus,
            base_size=item.get("base_size"),
            withdrawn=bool(item.get("withdrawn", False)),
            memory_gib=item.get("memory_gib"),
            quota_family_confidence=item.get("quota_family_confidence"),
            status=item.get("status"),
            unconfirmed=tuple(item.get("unconfirmed") or ()),
            notes=item.get("notes"),
        )
    except (KeyError, TypeError, ValueError) as err:
        raise CatalogError(f"sizes.yaml: entry {name}: bad or missing field ({err})") from err


def _date(value: object) -> date | None:
    if value is None or isinstance(value, date):
        return value
    return date.fromisoformat(str(value))

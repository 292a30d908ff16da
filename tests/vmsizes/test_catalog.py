"""The catalog: every reference entry kept with its sources, lookups, the added fields, inferred sizes."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
import yaml

from vmsizes import UnknownSize, all_sizes, describe, lookup, parse_name
from vmsizes.catalog import CatalogError, _entry

REPO = Path(__file__).resolve().parents[2]
# The research catalog, copied into the repository with the other reference notes (docs/reference/README.md).
REFERENCE = REPO / "docs/reference/azure-gpu-sizes.yaml"
DATA = REPO / "vmsizes/data/sizes.yaml"


def _reference() -> list[dict]:
    return yaml.safe_load(REFERENCE.read_text())["sizes"]


def _data() -> list[dict]:
    return yaml.safe_load(DATA.read_text())["sizes"]


def test_every_reference_entry_is_kept_whole_in_the_data_file() -> None:
    data = {entry["name"]: entry for entry in _data()}
    reference = _reference()
    assert len(reference) == 113
    for entry in reference:
        kept = data[entry["name"]]
        assert {key: kept[key] for key in entry} == entry, entry["name"]


def test_every_reference_entry_is_in_the_catalog_with_its_sources() -> None:
    for entry in _reference():
        size = lookup(entry["name"])
        assert size is not None, entry["name"]
        assert size.sources == tuple(entry["source"])
        assert (size.vcpus, size.gpus, size.gpu_model, size.gpu_memory_gb) == (
            entry["vcpus"],
            entry["gpus"],
            entry["gpu_model"],
            entry["gpu_memory_gb"],
        )
        assert (size.rdma, size.infiniband_gbps, size.quota_family) == (
            entry["rdma"],
            entry["infiniband_gbps_total"],
            entry["quota_family"],
        )
        expected_date = date.fromisoformat(entry["retirement_date"]) if entry["retirement_date"] else None
        assert size.retirement_date == expected_date
        assert size.base_size == entry.get("base_size")
        assert size.unconfirmed == tuple(entry.get("unconfirmed", ()))
        assert size.notes == entry["notes"]
        fraction = entry.get("gpu_fraction")
        assert size.gpu_fraction == (str(fraction) if fraction is not None else None)
        assert not size.inferred


def test_catalog_has_113_unique_sizes_in_file_order() -> None:
    names = [size.name for size in all_sizes()]
    assert len(names) == len({name.lower() for name in names}) == 113
    assert names[0] == "Standard_NC6"
    assert names == [entry["name"] for entry in _data()]


@pytest.mark.parametrize(
    "spelling",
    [
        "Standard_ND96isr_H100_v5",
        "standard_nd96isr_h100_v5",
        "STANDARD_ND96ISR_H100_V5",
        "sTaNdArD_Nd96IsR_h100_V5",
    ],
)
def test_lookup_is_case_insensitive_and_returns_the_canonical_name(spelling: str) -> None:
    size = lookup(spelling)
    assert size is lookup("Standard_ND96isr_H100_v5")
    assert size.name == "Standard_ND96isr_H100_v5"
    assert (size.vcpus, size.gpus, size.quota_family) == (96, 8, "standardNDSH100v5Family")


@pytest.mark.parametrize("name", ["Standard_ND96is_noIB_H100_v5", "Standard_Foo", "", None, 42])
def test_lookup_of_names_outside_the_catalog_is_none(name: object) -> None:
    assert lookup(name) is None  # type: ignore[arg-type]


def test_every_entry_carries_the_added_fields_with_sources() -> None:
    added = ("gpu_vendor", "cpu_architecture", "rdma_usable_for_nccl")
    for entry in _data():
        sources = entry["added_sources"]
        for field in (*added, "retirement_extensions", "withdrawn"):
            if field in entry:
                assert sources.get(field), f"{entry['name']}: no source for {field}"
        assert all(field in entry for field in added), entry["name"]


@pytest.mark.parametrize(
    ("name", "vendor"),
    [
        ("Standard_ND96isr_H100_v5", "NVIDIA"),
        ("Standard_ND96isr_MI300X_v5", "AMD"),
        ("Standard_NV4as_v4", "AMD"),
        ("Standard_NV4ads_V710_v5", "AMD"),
        ("Standard_NG8ads_V620_v1", "AMD"),
        ("Standard_NV6ads_A10_v5", "NVIDIA"),
        ("Standard_NC128ds_xl_RTXPRO6000BSE_v6", "NVIDIA"),
        ("Standard_HB120rs_v3", None),
        ("Standard_HX176-24rs", None),
    ],
)
def test_gpu_vendor(name: str, vendor: str | None) -> None:
    assert lookup(name).gpu_vendor == vendor


def test_gpu_vendor_matches_the_printed_gpu_model_everywhere() -> None:
    for size in all_sizes():
        if size.gpu_model is None:
            assert size.gpu_vendor is None and size.gpus == 0, size.name
        else:
            assert size.gpu_model.startswith(size.gpu_vendor + " "), size.name


def test_only_grace_blackwell_sizes_are_arm() -> None:
    arm = {size.name for size in all_sizes() if size.cpu_architecture == "Arm64"}
    assert arm == {
        "Standard_ND128isr_NDR_GB200_v6",
        "Standard_ND128isr_GB300_v6",
        "Standard_ND128isrG5_GB300_v6",
    }
    assert {size.cpu_architecture for size in all_sizes()} == {"x64", "Arm64"}
    assert [
        size.name for size in all_sizes() if parse_name(size.name).arm_cpu
    ] == []  # no 'p' letter anywhere


def test_nc24r_has_rdma_that_nccl_cannot_use() -> None:
    for name in ("Standard_NC24r", "Standard_NC24r_Promo"):
        size = lookup(name)
        assert size.rdma and not size.rdma_usable
    assert lookup("Standard_NC24rs_v3").rdma_usable
    # MI300X: the fabric is usable; AMD (RCCL, not NCCL) is a separate check on gpu_vendor.
    assert lookup("Standard_ND96isr_MI300X_v5").rdma_usable


def test_constrained_sizes_charge_base_vcpus_and_name_their_base() -> None:
    size = lookup("Standard_HB120-16rs_v3")
    assert (size.vcpus, size.quota_vcpus, size.base_size, size.constrained) == (
        16,
        120,
        "Standard_HB120rs_v3",
        True,
    )
    # NV12hs_v3: catalog vcpus unconfirmed (null); the name's count is what quota is charged.
    assert lookup("Standard_NV12hs_v3").quota_vcpus == 12


def test_describe_returns_the_catalog_entry_in_any_case() -> None:
    assert describe("standard_nc24ads_a100_v4") is lookup("Standard_NC24ads_A100_v4")


@pytest.mark.parametrize(
    ("name", "canonical", "vcpus", "rdma", "rdma_usable", "vendor", "arch"),
    [
        ("Standard_ND96is_noIB_H100_v5", "Standard_ND96is_noIB_H100_v5", 96, False, False, "NVIDIA", "x64"),
        ("standard_nd96isr_mi300x_v6", "Standard_ND96isr_MI300X_v6", 96, True, True, "AMD", "x64"),
        ("Standard_ND144isr_GB200_v7", "Standard_ND144isr_GB200_v7", 144, True, True, "NVIDIA", "Arm64"),
        ("Standard_E64-32s_v5", "Standard_E64-32s_v5", 32, False, False, None, "x64"),
        ("Standard_D4pds_v5", "Standard_D4pds_v5", 4, False, False, None, "Arm64"),
        ("Standard_H16r", "Standard_H16r", 16, True, False, None, "x64"),  # non-SR-IOV (setup-infiniband.md)
        ("Standard_H16mr", "Standard_H16mr", 16, True, False, None, "x64"),
    ],
)
def test_describe_infers_sizes_outside_the_catalog(
    name: str, canonical: str, vcpus: int, rdma: bool, rdma_usable: bool, vendor: str | None, arch: str
) -> None:
    size = describe(name)
    assert size.inferred
    assert (size.name, size.vcpus, size.rdma, size.rdma_usable) == (canonical, vcpus, rdma, rdma_usable)
    assert (size.gpu_vendor, size.cpu_architecture) == (vendor, arch)
    assert size.gpus is None and size.quota_family is None and size.retirement_date is None
    assert any("vm-naming-conventions.md" in source for source in size.sources)


def test_describe_of_a_constrained_size_borrows_its_catalog_base_hardware() -> None:
    size = describe("Standard_HB120-8rs_v3")
    assert size.inferred and size.base_size == "Standard_HB120rs_v3"
    assert (size.vcpus, size.quota_vcpus, size.gpus, size.infiniband_gbps) == (8, 120, 0, 200)
    assert size.quota_family is None  # inferred sizes never claim a quota family


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("Standard_Foo", "'Standard_Foo' is not an Azure VM size name"),
        ("ND96", "'ND96' is not an Azure VM size name: it must start with 'Standard_'"),
        ("", "'' is not an Azure VM size name: the name is empty"),
    ],
)
def test_describe_raises_unknown_size_with_a_helpful_message(name: str, fragment: str) -> None:
    with pytest.raises(UnknownSize) as caught:
        describe(name)
    assert fragment in str(caught.value)
    assert "a valid name looks like Standard_" in str(caught.value)
    assert caught.value.name == name


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"series": "X"}, "an entry has no name"),
        ({"name": "NC6"}, "sizes.yaml: 'NC6' is not an Azure VM size name"),
        ({"name": "Standard_NC6", "series": "NC"}, "entry Standard_NC6: bad or missing field ('vcpus')"),
    ],
)
def test_malformed_catalog_entries_name_the_entry_and_field(entry: dict, message: str) -> None:
    with pytest.raises(CatalogError) as caught:
        _entry(entry)
    assert message in str(caught.value)

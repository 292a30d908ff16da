"""VmSize (vmsizes/model.py): the properties computed from its fields, and the value semantics."""

from __future__ import annotations

import dataclasses
from fractions import Fraction

import pytest

from vmsizes import VmSize, lookup


@pytest.mark.parametrize(
    ("name", "per_gpu"),
    [
        ("Standard_ND96isr_H100_v5", 400.0),  # 8 x 400 Gb/s NDR (platform-notes.md)
        ("Standard_ND128isrG5_GB300_v6", 800.0),
        ("Standard_ND128isr_NDR_GB200_v6", 400.0),
        ("Standard_ND40rs_v2", 12.5),
        ("Standard_NC24rs_v3", None),  # IB speed not stated
        ("Standard_NC6", None),
        ("Standard_HB120rs_v3", None),  # no GPUs
    ],
)
def test_per_gpu_link_gbps(name: str, per_gpu: float | None) -> None:
    assert lookup(name).per_gpu_link_gbps == per_gpu


def test_gpu_fraction_and_share() -> None:
    nv = lookup("Standard_NV4as_v4")
    assert (nv.gpus, nv.gpu_fraction, nv.gpu_share) == (0, "1/8", Fraction(1, 8))
    assert lookup("Standard_NV72ads_A10_v5").gpu_share == 2
    h100 = lookup("Standard_ND96isr_H100_v5")
    assert (h100.gpu_fraction, h100.gpu_share) == (None, 8)
    assert lookup("Standard_NV12hs_v3").gpu_share is None  # gpus unconfirmed


def test_vm_size_is_frozen_and_hashable() -> None:
    size = lookup("Standard_NC6s_v3")
    with pytest.raises(dataclasses.FrozenInstanceError):
        size.vcpus = 1  # type: ignore[misc]
    assert {size, lookup("standard_nc6s_v3")} == {size}
    assert isinstance(size, VmSize)

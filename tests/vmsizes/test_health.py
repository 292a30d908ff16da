"""Health levels of the sizes the stacks use, pinned to Azure/azurehpc-health-checks conf files (commit
0e0a1ac26a64b32ac4dd7632a529638505d3314a): `check_gpu_count N`, `check_gpu_bw H2D [P2P]`,
`check_nccl_allreduce BW REPEATS SIZE`, one `check_hw_ib RATE port` per backend port."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from vmsizes import health

ROOT = Path(__file__).resolve().parents[2]

# Values written from the conf files (AHC:conf/<size>.conf), not from health.yaml.
PUBLISHED = {
    # size: (gpus, allreduce GB/s, allreduce bytes, h2d, p2p, ib ports)
    "Standard_NC24ads_A100_v4": (1, None, 1 << 30, 21, 238, 0),
    "Standard_NC48ads_A100_v4": (2, 193.0, 16 << 30, 21, 238, 0),
    "Standard_NC96ads_A100_v4": (4, 25.0, 8 << 30, 21, 238, 0),
    "Standard_NC40ads_H100_v5": (1, None, 1 << 30, 48, 335, 0),
    "Standard_NC6s_v3": (1, None, 1 << 30, 10, None, 0),
    # issue 33 item 5: the two ND v5 sizes that had none (conf/nd96is_h100_v5.conf at 15f30159,
    # conf/nd96isrf_h200_v5.conf at 1f17ee75)
    "Standard_ND96is_H100_v5": (8, 460.0, 16 << 30, 48, 335, 0),
    "Standard_ND96isrf_H200_v5": (8, 432.0, 16 << 30, 48, 335, 8),
    "Standard_ND40rs_v2": (8, None, 1 << 30, 10, None, 1),  # conf/nd40rs_v2.conf at 120820b3
}

# Every NVIDIA conf of Azure/azurehpc-health-checks conf/ (the repository's listing, 2026): the sizes AHC
# publishes health levels for.
AHC_NVIDIA_CONFS = [
    "nc12s_v3",
    "nc24ads_a100_v4",
    "nc24rs_v3",
    "nc24s_v3",
    "nc40ads_h100_v5",
    "nc48ads_a100_v4",
    "nc6s_v3",
    "nc80adis_h100_v5",
    "nc96ads_a100_v4",
    "nd128isr_ndr_gb200_v6",
    "nd40rs_v2",
    "nd96amsr_a100_v4",
    "nd96amsr_v4",
    "nd96asr_v4",
    "nd96is_h100_v5",
    "nd96is_h200_v5",
    "nd96isr_h100_v5",
    "nd96isr_h200_v5",
    "nd96isr_v5",
    "nd96isrf_h200_v5",
]


@pytest.mark.parametrize("conf", AHC_NVIDIA_CONFS)
def test_every_size_a_cluster_may_use_with_a_published_conf_has_levels(conf: str) -> None:
    """issue 33 item 5: a size the stack config accepts (a catalog GPU size, not retired, not refused by
    vmsizes.azureml) and AHC publishes a conf for has health levels; the two ND v5 sizes of the issue too."""
    import datetime

    import vmsizes
    from stackconfig import sizes

    name = f"Standard_{conf}"
    found = vmsizes.lookup(name)
    try:
        sizes.canonical_size(name)
        usable = found is not None and not vmsizes.retired(found, datetime.date.today())
    except ValueError:
        usable = False
    if usable or conf in ("nd96is_h100_v5", "nd96isrf_h200_v5"):
        assert health.levels(name) is not None, name


@pytest.mark.parametrize("size", sorted(PUBLISHED))
def test_levels_match_the_published_conf(size: str) -> None:
    lv = health.levels(size)
    assert lv is not None
    assert (lv.gpus, lv.allreduce_gbs, lv.allreduce_bytes, lv.h2d_gbs, lv.p2p_gbs, lv.ib_ports) == PUBLISHED[
        size
    ]
    assert any(s.startswith(f"AHC:conf/{size.removeprefix('Standard_').lower()}.conf") for s in lv.sources)


def _stack_sizes() -> set[str]:
    files = [*ROOT.glob("Pulumi.*.yaml"), *ROOT.glob("tests/fixtures/stacks/*/Pulumi.*.yaml")]
    found: set[str] = set()
    for path in files:
        found |= set(re.findall(r"size: (Standard_\w+)", path.read_text()))
    return found


# Sizes the stacks use for which Azure/azurehpc-health-checks publishes no conf file (so no level).
NO_PUBLISHED_CONF = {"Standard_NC4as_T4_v3", "Standard_Bogus"}


def test_every_size_the_stacks_use_with_a_published_conf_has_levels() -> None:
    missing = sorted(s for s in _stack_sizes() - NO_PUBLISHED_CONF if health.levels(s) is None)
    assert missing == []


def test_health_yaml_entries_are_unique_and_sourced() -> None:
    raw = yaml.safe_load((ROOT / "vmsizes" / "data" / "health.yaml").read_text())
    names = [e["name"].lower() for e in raw["sizes"]]
    assert len(names) == len(set(names))
    assert all(e["source"] for e in raw["sizes"])

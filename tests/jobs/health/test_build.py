"""The health job as built (jobs/health/build.py): what a user running `python -m jobs submit health`
gets by default (every node of a cluster, one process per GPU, the size's levels named in the job, the TCP
refusal on a size without RDMA: multi-node NCCL over sockets, docs/jobs.md), and the levels it passes to
health.py, pinned to what Azure publishes.

Published values, written from Azure/azurehpc-health-checks (AzureHPC NHC) at commit
0e0a1ac26a64b32ac4dd7632a529638505d3314a (2026-05-01, the commit vmsizes/data/health.yaml cites):
- conf/nd96isr_h100_v5.conf: check_gpu_count 8, check_gpu_bw 48 335, check_nccl_allreduce 460.0 1 16G,
  check_hw_ib 400 mlx5_ib0:1 .. mlx5_ib7:1
- conf/nd96isr_h200_v5.conf: check_gpu_count 8, check_gpu_bw 48 335, check_nccl_allreduce 431.0 1 16G,
  check_hw_ib 400 mlx5_ib0:1 .. mlx5_ib7:1 (and check_hw_ib 100 mlx5_an0:1, the Ethernet front port)
- conf/nd96amsr_a100_v4.conf: check_gpu_count 8, check_gpu_bw 21 238, check_nccl_allreduce 228.0 1 16G,
  check_hw_ib 200 x 8
- conf/nd96asr_v4.conf: check_gpu_count 8, check_gpu_bw 21 235, check_nccl_allreduce 228.0 1 8G,
  check_hw_ib 200 x 8
- conf/nc80adis_h100_v5.conf: check_gpu_count 2, check_gpu_bw 48 335, check_nccl_allreduce 208.0 1 16G,
  no check_hw_ib
- every NVIDIA conf: check_gpu_ecc 20000000 10000 (customTests/azure_gpu_ecc.nhc: remapped rows `-gt 512`)
- customTests/azure_gpu_xid.nhc: XID_EC="48 56 57 58 62 63 64 65 68 69 73 74 79 80 81 92 119 120"

The size levels themselves (vmsizes/data/health.yaml, read by vmsizes.health) are checked here too, as the
values the job is built from."""

from __future__ import annotations

import health as job  # jobs/payload/health.py, as Azure ML runs it
import pytest

from jobs.builders import Target
from jobs.errors import UsageError
from jobs.health import build
from vmsizes import health as levels

from ..health_util import H100, XID_EC
from ..jobs_util import FIXTURES

# --- the job's shape --------------------------------------------------------------------------------------


H100_X4 = Target(
    size="Standard_ND96isr_H100_v5", gpus_per_node=8, rdma_usable=True, compute="h100-x4", max_instances=4
)
NO_RDMA = Target(
    size="Standard_NC4as_T4_v3", gpus_per_node=1, rdma_usable=False, compute="a100", max_instances=2
)


def test_the_job_names_the_levels_it_was_built_with():
    built = build.health(H100_X4)
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


# --- the published levels, in the catalog and in health.py's flags ---------------------------------------


G = 1 << 30


# size -> (gpus, allreduce GB/s, allreduce bytes, h2d GB/s, p2p GB/s, IB ports, IB Gb/s), from the confs above
PUBLISHED = {
    "Standard_ND96isr_H100_v5": (8, 460.0, 16 * G, 48, 335, 8, 400),
    "Standard_ND96isr_H200_v5": (8, 431.0, 16 * G, 48, 335, 8, 400),
    "Standard_ND96amsr_A100_v4": (8, 228.0, 16 * G, 21, 238, 8, 200),
    "Standard_ND96asr_v4": (8, 228.0, 8 * G, 21, 235, 8, 200),
    "Standard_NC80adis_H100_v5": (2, 208.0, 16 * G, 48, 335, 0, None),
}


@pytest.mark.parametrize("size", sorted(PUBLISHED))
def test_each_catalog_level_is_the_published_nhc_value(size):
    lv = levels.levels(size)
    assert lv is not None, size
    got = (
        lv.gpus,
        lv.allreduce_gbs,
        lv.allreduce_bytes,
        lv.h2d_gbs,
        lv.p2p_gbs,
        lv.ib_ports,
        lv.ib_rate_gbps,
    )
    assert got == PUBLISHED[size]


@pytest.mark.parametrize("size", sorted(PUBLISHED))
def test_the_job_passes_each_published_level_to_health_py(size):
    gpus, ar, ar_bytes, h2d, p2p, ports, rate = PUBLISHED[size]
    r = job.rules_of(job.parse_args(build.level_flags(size, gpus)))
    assert (r.gpus, r.allreduce_gbs, r.h2d_gbs, r.p2p_gbs, r.ib_ports, r.ib_rate_gbps) == (
        gpus,
        ar,
        h2d,
        p2p,
        ports,
        rate,
    )
    assert job.parse_args(build.level_flags(size, gpus)).allreduce_bytes == ar_bytes
    assert (r.dram_errors_max, r.sram_correctable_max, r.remapped_rows_max) == (20000000, 10000, 512)
    assert set(r.xid_fail) == XID_EC


def test_azures_node_rules_are_the_published_ones():
    r = levels.rules()
    assert set(r.xid_fail_codes) == XID_EC
    assert (r.dram_errors_max, r.sram_correctable_max, r.remap_uncorrectable_rows_max) == (
        20000000,
        10000,
        512,
    )


def test_a_size_without_levels_gets_its_gpu_count_and_azures_rules_only():
    args = job.parse_args(build.level_flags("Standard_NC4as_T4_v3", 1))
    r = job.rules_of(args)
    assert (r.gpus, r.allreduce_gbs, r.h2d_gbs, r.ib_ports, r.multi_node) == (1, None, None, None, None)
    assert set(r.xid_fail) == XID_EC and r.remapped_rows_max == 512
    assert job.parse_args(build.level_flags("Standard_NC4as_T4_v3", None)).gpus is None


# --- constrained sizes (constrained-vcpu.md: fewer active vCPUs, the base size's hardware) ---------------


@pytest.mark.parametrize("size", ["Standard_ND96-48isr_H100_v5", "standard_nd96-24isr_h100_v5"])
def test_a_constrained_size_is_judged_by_its_base_sizes_levels(size):
    gpus, ar, ar_bytes, h2d, p2p, ports, rate = PUBLISHED["Standard_ND96isr_H100_v5"]
    r = job.rules_of(job.parse_args(build.level_flags(size, gpus)))
    assert (r.gpus, r.allreduce_gbs, r.h2d_gbs, r.p2p_gbs, r.ib_ports, r.ib_rate_gbps) == (
        gpus,
        ar,
        h2d,
        p2p,
        ports,
        rate,
    )


def test_an_unknown_or_levelless_size_runs_with_the_gpu_count_only():
    for size in ("Standard_HB120-16rs_v3", "Standard_Nope_v9"):
        assert levels.levels(size) is None
    args = job.parse_args(build.level_flags("Standard_Nope_v9", 4))
    assert (args.gpus, args.allreduce_gbs, args.ib_ports, args.multi_node) == (4, None, None, None)


# --- the levels ------------------------------------------------------------------------------------------


def test_h100_levels_are_the_azure_health_check_values_with_their_sources():
    lv = levels.levels("standard_nd96isr_h100_v5")
    assert (lv.gpus, lv.allreduce_gbs, lv.allreduce_bytes) == (8, 460.0, 16 << 30)
    assert (lv.h2d_gbs, lv.p2p_gbs, lv.ib_ports, lv.ib_rate_gbps) == (48, 335, 8, 400)
    assert (lv.multi_node.expected, lv.multi_node.warn, lv.multi_node.fail) == (450, 400, 300)
    assert any(
        "conf/nd96isr_h100_v5.conf" in s and "check_nccl_allreduce 460.0 1 16G" in s for s in lv.sources
    )
    assert any(u.startswith("multi_node:") for u in lv.unconfirmed)  # no primary source: said so
    r = levels.rules()
    assert 79 in r.xid_fail_codes and 13 not in r.xid_fail_codes
    assert any("azure_gpu_xid.nhc" in s for s in r.sources)


def test_every_level_entry_matches_the_size_catalog():
    from vmsizes import lookup

    for lv in levels.all_levels():
        vm = lookup(lv.size)
        if lv.outside_catalog is not None:  # AHC's levels for a size Microsoft's size pages do not list
            assert vm is None and lv.sources, lv.size
            continue
        assert vm is not None and vm.gpus == lv.gpus, lv.size
        assert lv.sources
        if lv.ib_ports:  # the catalog's per-VM InfiniBand total is ports x rate
            assert vm.infiniband_gbps == lv.ib_ports * lv.ib_rate_gbps, lv.size
    assert levels.levels("Standard_NC6") is None  # no source, no levels


def test_job_flags_carry_the_levels_and_refuse_an_override():
    flags = build.level_flags(H100, 8)
    args = job.parse_args(flags)
    assert (args.gpus, args.allreduce_gbs, args.allreduce_bytes, args.multi_node) == (
        8,
        460.0,
        16 << 30,
        (450.0, 400.0, 300.0),
    )
    assert 79 in args.xid_codes and args.ecc_limits == (20000000.0, 10000.0, 512.0)
    # A size without levels still gets its GPU count and Azure's node rules.
    assert job.parse_args(build.level_flags("Standard_NC24ads_A100_v4", 1)).gpus == 1
    from jobs.builders import Target
    from jobs.errors import UsageError

    target = Target(size=H100, gpus_per_node=8, rdma_usable=True, compute="h100-x4", max_instances=4)
    built = build.health(target, mode="full")
    assert built.nodes == 4 and built.processes_per_node == 8  # every node of the cluster, one rank per GPU
    assert built.job.command.startswith("python health.py --full --xid-fail 48,")
    with pytest.raises(UsageError, match="--gpus"):
        build.health(target, script_args=("--gpus", "4"))


def test_render_health_yaml_and_the_mode_flags_belong_to_health(tmp_path, capsys):
    from jobs.cli import main

    outputs = str(FIXTURES / "outputs-prod.json")
    out = tmp_path / "health.yml"
    assert (
        main(["render", "health", "--outputs", outputs, "--cluster", "h100-x4", "--full", "--out", str(out)])
        == 0
    )
    from azure.ai.ml import load_job

    job = load_job(str(out))
    assert job.command.startswith("python health.py --full ") and "--multi-node 450,400,300" in job.command
    assert (job.resources.instance_count, job.distribution.process_count_per_instance) == (4, 8)
    capsys.readouterr()
    assert (
        main(["render", "smoke", "--outputs", outputs, "--cluster", "h100-x4", "--quick", "--out", str(out)])
        == 2
    )
    assert "--quick is for health jobs, not smoke" in capsys.readouterr().err

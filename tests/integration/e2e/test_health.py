"""`python -m jobs submit health` end to end offline: 2 nodes x 2 processes on a cluster of localml, the
report read from the downloaded logs, node ids from `compute.list_nodes` (REST Compute_ListNodes)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from doubles.localml import LocalAzureML

ROOT = Path(__file__).resolve().parents[3]
SIZE = "Standard_NC80adis_H100_v5"  # 2 GPUs per node in the catalog, health levels from its AHC conf
CLUSTER = "health-h100"

pytestmark = pytest.mark.slow


def test_submit_health_two_nodes_reports_every_node_and_never_passes_gpu_checks_on_cpu(
    local: LocalAzureML, outputs_file: Path, tmp_path: Path
) -> None:
    outs = json.loads(outputs_file.read_text())
    outs["clusters"][CLUSTER] = {
        "name": CLUSTER,
        "size": SIZE,
        "region": "eastus",
        "tier": "dedicated",
        "min_instances": 0,
        "max_instances": 2,
        "idle_seconds": 120,
        "gpus_per_node": 2,
        "vcpus_per_node": 80,
        "rdma_usable": False,
        "ssh_enabled": False,
        "node_public_ip": True,
    }
    path = tmp_path / "outputs.json"
    path.write_text(json.dumps(outs))
    env = local.subprocess_env()
    made = subprocess.run(
        [
            sys.executable,
            str(Path(__file__).parent / "sdk_calls.py"),
            str(path),
            "compute-create",
            CLUSTER,
            SIZE,
        ],
        cwd=ROOT,
        env=env | {"PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert made.returncode == 0, made.stderr[-3000:]

    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "jobs",
            "submit",
            "health",
            "--outputs",
            str(path),
            "--cluster",
            CLUSTER,
            "--nodes",
            "2",
            "--processes-per-node",
            "2",
            "--allow-tcp",
            "--quick",
            "--logs",
            str(tmp_path / "logs"),
            "--poll-seconds",
            "1",
            "--json",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    summary = json.loads(r.stdout)
    job, health = summary["jobs"][0], summary["health"]
    assert r.returncode == 0 and job["status"] == "Completed", (job, r.stderr[-3000:])
    assert health["summary"]["nodes"] == 2 and health["summary"]["world_size"] == 4
    assert health["summary"]["device"] == "cpu" and health["summary"]["fail"] == 0
    assert [n["node"] for n in health["nodes"]] == ["node-0", "node-1"]
    for node in health["nodes"]:
        checks = {f["check"]: f for f in node["findings"]}
        # GPU-only checks on a CPU run: "not applicable on CPU", never passed.
        for name in (
            "gpu count",
            "ecc / row remap",
            "xid",
            "copy h2d",
            "node all-reduce",
            "multi-node all-reduce",
        ):
            assert checks[name]["status"] == "n/a" and "not applicable on CPU" in checks[name]["detail"], (
                checks
            )
        assert checks["node all-reduce"]["measured"] > 0  # measured for real over gloo, only not judged
        assert node["status"] == "n/a"
        # list_nodes answered both of the job's nodes; localml runs them all on 127.0.0.1, so the report
        # names the candidates instead of picking one.
        assert node["node_id"] is None
        assert node["node_id_note"].startswith("2 listed nodes share private IP 127.0.0.1")
        assert f"{CLUSTER}-{job['name']}-n0" in node["node_id_note"]
    assert local.control_plane is not None
    assert any(
        c.method == "POST" and c.path.endswith(f"/computes/{CLUSTER}/listNodes") and c.status == 200
        for c in local.control_plane.server.log
    )

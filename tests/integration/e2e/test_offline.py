"""Offline end to end: the jobs package and azure-ai-ml against localml (control plane + Azurite).

Everything goes through the real SDK HTTP pipeline; the only wiring is the environment
(`LocalAzureML.subprocess_env()`). One control plane serves the whole module, so the datastore
folders (checkpoints) persist from one job to the next, as on a workspace. The checkpoint output is a
rw_mount: each node writes it through its own blobfuse2-like FUSE mount (doubles/localml/blobfs.py).
"""

from __future__ import annotations

import json
import re
import ssl
import subprocess
import sys
import time
from pathlib import Path

import pytest

from doubles.localml import LocalAzureML
from doubles.localml.mount import MountOptions
from jobs.verify.logchecks import verify

ROOT = Path(__file__).resolve().parents[3]
SIZE = "Standard_NC80adis_H100_v5"  # 2 GPUs per node in the catalog: 2 processes per node is one per GPU
STEPS = 400  # train.py checkpoints every 100 steps
FINGERPRINT = re.compile(r"final parameters sha256: ([0-9a-f]{64})")

pytestmark = pytest.mark.slow


def _jobs(
    local: LocalAzureML, outputs: Path, tmp: Path, *args: str, timeout: float = 240
) -> tuple[int, dict]:
    """`python -m jobs submit ARGS` on serverless 2-GPU nodes, 2 processes each: (exit code, summary)."""
    argv = [
        sys.executable,
        "-m",
        "jobs",
        "submit",
        *args,
        "--outputs",
        str(outputs),
        "--serverless",
        "--size",
        SIZE,
        "--processes-per-node",
        "2",
        "--logs",
        str(tmp / "job-logs"),
        "--poll-seconds",
        "1",
        "--allow-socket",
        "--json",
    ]
    r = subprocess.run(
        argv, cwd=ROOT, env=local.subprocess_env(), capture_output=True, text=True, timeout=timeout
    )
    try:
        return r.returncode, json.loads(r.stdout)
    except ValueError:
        pytest.fail(f"submit printed no JSON (exit {r.returncode}):\n{r.stdout}\n{r.stderr[-4000:]}")


def _sdk(local: LocalAzureML, outputs: Path, *args: str, timeout: float = 300) -> dict:
    env = local.subprocess_env() | {"PYTHONPATH": str(ROOT)}
    r = subprocess.run(
        [sys.executable, str(Path(__file__).parent / "sdk_calls.py"), str(outputs), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert r.returncode == 0, r.stdout + r.stderr[-4000:]
    return json.loads(r.stdout)


def _rank_log(job: dict, rank: int) -> str:
    return (Path(job["logs"]) / "artifacts" / "user_logs" / f"std_log_process_{rank}.txt").read_text()


def _calls(local: LocalAzureML) -> list[tuple[str, str, int]]:
    assert local.control_plane is not None
    return [(c.method, c.path, c.status) for c in local.control_plane.server.log]


def test_smoke_submit_completes_downloads_and_verifies(
    local: LocalAzureML, outputs_file: Path, tmp_path: Path
) -> None:
    code, summary = _jobs(local, outputs_file, tmp_path, "smoke", "--nodes", "2", "--allow-tcp")
    job = summary["jobs"][0]
    assert code == 0 and job["status"] == "Completed", job
    # The verdict: world size 4 over 2 nodes; a CPU (gloo) run shows no NCCL lines, reported as sockets.
    report = job["verify"]
    assert report["ok"] and report["world_size"] == 4 and report["rank_logs"] == 4, report
    assert report["processes_per_node"] == {"node 0": 2, "node 1": 2}
    assert report["transport"] == "none seen (sockets)"
    logs = sorted(p.name for p in (Path(job["logs"]) / "artifacts" / "user_logs").iterdir())
    assert logs == [f"std_log_process_{r}.txt" for r in range(4)]
    # Without --allow-socket the same downloaded logs are not accepted: the flag is what passes them.
    assert not verify(Path(job["logs"]), 4, size=SIZE).ok
    assert "rank=3 local_rank=1 node_rank=1 world_size=4" in _rank_log(job, 3)
    calls = _calls(local)
    ws = (
        "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg-train-dev/providers/"
        "Microsoft.MachineLearningServices/workspaces/ws-llm-dev"
    )
    for method, path in [
        ("POST", f"{ws}/codes/[^/]+/versions/1/startPendingUpload"),
        ("PUT", f"{ws}/codes/[^/]+/versions/1"),
        ("PUT", f"{ws}/jobs/{job['name']}"),
        ("GET", f"/history/v1.0{ws}/runs/{job['name']}/details"),
        ("POST", f"{ws}/datastores/workspaceartifactstore/listSecrets"),
    ]:
        assert any(m == method and re.fullmatch(path, p) and s < 300 for m, p, s in calls), (method, path)
    assert local.host is not None and local.host.tunnels > 0  # the artifact store was read through Azurite


@pytest.fixture(scope="module")
def reference(local: LocalAzureML, outputs_file: Path, tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """The final fingerprint of an uninterrupted train job of STEPS steps (as a one-item list)."""
    code, ref = _jobs(
        local,
        outputs_file,
        tmp_path_factory.mktemp("reference"),
        "train",
        "--run-name",
        "e2e-reference",
        "--steps",
        str(STEPS),
    )
    ref_job = ref["jobs"][0]
    assert code == 0 and ref_job["status"] == "Completed", ref_job
    expected = FINGERPRINT.findall(_rank_log(ref_job, 0))
    assert len(expected) == 1
    return expected


def test_train_cancelled_after_checkpoint_resumes_to_the_same_weights(
    local: LocalAzureML, outputs_file: Path, tmp_path: Path, reference: list[str]
) -> None:
    assert local.control_plane is not None
    uploads_before = _uploads(local)
    expected = reference

    # Interrupted: cancel through azure-ai-ml as soon as the first checkpoint is complete.
    code, first = _jobs(
        local, outputs_file, tmp_path, "train", "--run-name", "e2e-resume", "--steps", str(STEPS), "--no-wait"
    )
    name = first["jobs"][0]["name"]
    assert code == 0 and name
    ckpt = local.control_plane.store.datastore_path("workspaceblobstore", "ckpt/e2e-resume")
    cancelled = _sdk(local, outputs_file, "cancel-when", name, str(ckpt / "step_00000100" / "commit.json"))
    assert cancelled == {"status_at_cancel": "Running", "status": "Canceled"}
    done = local.control_plane.store.job(_ws_id(), name)
    assert done is not None and done.done.wait(60)
    rank0 = local.control_plane.store.root / "jobs" / name / "logs" / "user_logs" / "std_log_process_0.txt"
    assert "interrupted by signal" in rank0.read_text()
    assert not FINGERPRINT.search(rank0.read_text())

    # Resubmitted with the same run name: resumes from the checkpoint and ends on the same weights.
    code, second = _jobs(
        local, outputs_file, tmp_path, "train", "--run-name", "e2e-resume", "--steps", str(STEPS)
    )
    job = second["jobs"][0]
    assert code == 0 and job["status"] == "Completed" and job["name"] != name, job
    log0 = _rank_log(job, 0)
    resumed = re.search(r"resumed from \S+ at step (\d+)", log0)
    assert resumed and 100 <= int(resumed.group(1)) < STEPS, log0[-2000:]
    assert FINGERPRINT.findall(log0) == expected
    # Same code each time: azure-ai-ml found it by content hash after the first upload at most.
    assert _uploads(local) - uploads_before <= 1


def test_train_node_lost_mid_checkpoint_upload_resumes_to_the_same_weights(
    local: LocalAzureML, outputs_file: Path, tmp_path: Path, reference: list[str]
) -> None:
    """The node dies while its mount uploads step 200 (a VM loss: ranks and mount SIGKILLed together); the
    resubmitted job resumes from step 100 on fresh mounts and ends on the uninterrupted run's weights."""
    assert local.control_plane is not None
    runner = local.control_plane.runner
    runner.mount_options = MountOptions(upload_rate=300_000)  # ~1.6 MB checkpoints: ~5 s per upload
    try:
        code, first = _jobs(
            local,
            outputs_file,
            tmp_path,
            "train",
            "--run-name",
            "e2e-node-loss",
            "--steps",
            str(STEPS),
            "--no-wait",
        )
        name = first["jobs"][0]["name"]
        assert code == 0 and name
        deadline = time.monotonic() + 240

        def uploading_step_200() -> bool:
            mounts = runner.mounts.get(name, [])
            uploading = mounts[0][1].state().get("uploading", {}) if mounts else {}
            return any(path.startswith("/step_00000200/") for path in uploading)

        while not uploading_step_200():
            assert time.monotonic() < deadline, "the upload of step 200 never started"
            time.sleep(0.02)
        assert runner.lose_node(name, 0) == 2
    finally:
        runner.mount_options = MountOptions()
    job = local.control_plane.store.job(_ws_id(), name)
    assert job is not None and job.done.wait(120) and job.status == "Failed", job and job.status
    store = local.control_plane.store.datastore_path("workspaceblobstore", "ckpt/e2e-node-loss")
    names = sorted(p.name for p in store.iterdir() if not p.name.startswith("."))
    # Step 200 never committed: some of its DCP files may be complete, but the commit marker, written after
    # DCP's .metadata, is what commits a step (docs/job-scripts.md "Checkpoints"), and only step 100 has one.
    committed = [n for n in names if (store / n / "commit.json").exists()]
    assert committed == ["step_00000100"], names

    code, second = _jobs(
        local, outputs_file, tmp_path, "train", "--run-name", "e2e-node-loss", "--steps", str(STEPS)
    )
    job2 = second["jobs"][0]
    assert code == 0 and job2["status"] == "Completed", job2
    log0 = _rank_log(job2, 0)
    assert re.search(r"resumed from \S+/step_00000100 at step 100", log0), log0[-2000:]
    assert FINGERPRINT.findall(log0) == reference


def test_two_node_train_reads_the_checkpoint_through_each_nodes_own_mount(
    local: LocalAzureML, outputs_file: Path, tmp_path: Path
) -> None:
    """Every node mounts the output itself; a resumed 2-node job loads rank 0's choice on both nodes."""
    assert local.control_plane is not None
    runs = []
    for i in range(2):
        code, summary = _jobs(
            local,
            outputs_file,
            tmp_path / str(i),
            "train",
            "--run-name",
            "e2e-two-nodes",
            "--steps",
            "200",
            "--nodes",
            "2",
            "--allow-tcp",
        )
        job = summary["jobs"][0]
        assert code == 0 and job["status"] == "Completed", job
        runs.append(job)
    workdir = local.control_plane.store.root / "jobs" / runs[1]["name"] / "nodes"
    assert sorted(p.name for p in workdir.iterdir()) == ["node-0", "node-1"]
    for node in (0, 1):  # each node had its own blobfs daemon (its state) and its own ranks
        assert (workdir / f"node-{node}" / "blobfs-ckpt" / "state" / "state.json").exists()
        assert len(list((workdir / f"node-{node}" / "pids").iterdir())) == 2
    log0, log2 = _rank_log(runs[1], 0), _rank_log(runs[1], 2)
    assert re.search(r"resumed from \S+/nodes/node-0/outputs/ckpt/step_00000200 at step 200", log0), log0
    assert "Traceback" not in log2 and "error" not in log2.lower(), log2
    assert FINGERPRINT.findall(log0) == FINGERPRINT.findall(_rank_log(runs[0], 0)) != []


def test_failing_command_gives_exit_code_1(local: LocalAzureML, outputs_file: Path, tmp_path: Path) -> None:
    assert local.control_plane is not None
    empty = local.control_plane.store.datastore_path("workspaceblobstore", "e2e-empty-data")
    empty.mkdir(parents=True, exist_ok=True)
    code, summary = _jobs(
        local,
        outputs_file,
        tmp_path,
        "train",
        "--run-name",
        "e2e-fail",
        "--steps",
        "5",
        "--data",
        "azureml://datastores/workspaceblobstore/paths/e2e-empty-data/",
    )
    job = summary["jobs"][0]
    assert code == 1 and job["status"] == "Failed", job
    assert "no *.bin token shards there" in _rank_log(job, 0)
    assert _sdk(local, outputs_file, "status", job["name"]) == {"status": "Failed"}


def test_unimplemented_call_is_a_501_naming_the_path(local: LocalAzureML, outputs_file: Path) -> None:
    result = _sdk(local, outputs_file, "unimplemented")
    assert result["type"] == "HttpResponseError" and result["status_code"] == 501
    assert "localml does not implement GET /subscriptions/" in result["message"]
    assert "/environments/localml-e2e-env/versions/1" in result["message"]
    assert any(
        s == 501 and p.endswith("/environments/localml-e2e-env/versions/1") for _, p, s in _calls(local)
    )


def _uploads(local: LocalAzureML) -> int:
    return sum(p.endswith("/startPendingUpload") for _, p, _ in _calls(local))


def _ws_id() -> str:
    return (
        "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg-train-dev/providers/"
        "Microsoft.MachineLearningServices/workspaces/ws-llm-dev"
    )


def test_a_job_localml_cannot_run_is_refused_at_submission(
    local: LocalAzureML, outputs_file: Path, tmp_path: Path
) -> None:
    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "noop.py").write_text("pass\n")
    result = _sdk(local, outputs_file, "mpi", str(tmp_path / "code"))
    assert result["type"] == "HttpResponseError" and result["status_code"] == 400
    assert "localml runs PyTorch distribution only, not 'Mpi'" in result["message"]


def test_bodies_the_spec_rejects_get_azures_400(
    local: LocalAzureML, outputs_file: Path, tmp_path: Path
) -> None:
    """localml checks each job, code version and compute body against the Azure REST spec of the
    api-version the client sent (doubles/localml/validation.py) and answers as ARM does: 400, `UserError`, one
    detail per failure with the property as target, parsed by azure-core like any ARM error."""
    assert local.control_plane is not None
    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "a.py").write_text("pass\n")
    result = _sdk(local, outputs_file, "spec-rejected", str(tmp_path / "code"))
    sdk = result["sdk-job"]  # through azure-ai-ml's own jobs.create_or_update
    assert sdk["type"] == "HttpResponseError" and sdk["status_code"] == 400, sdk
    assert "Request is invalid and/or missing fields." in sdk["message"]
    assert "'properties.command' does not match expression '[a-zA-Z0-9_]'" in sdk["message"]
    expected = {
        "job-missing-environment": ["properties.environmentId"],
        "job-unknown-type": ["properties.jobType"],
        "code-without-properties": ["properties"],
        "compute-without-max-nodes": ["properties.properties.scaleSettings.maxNodeCount"],
        "compute-name": ["computeName"],
    }
    for key, targets in expected.items():
        answer = result[key]
        assert answer["status_code"] == 400 and answer["code"] == "UserError", (key, answer)
        assert answer["targets"] == targets, (key, answer)
    missing = result["job-missing-environment"]["message"]
    assert "missing required property 'properties.environmentId'" in missing
    assert "'properties.jobType' is 'Batch', not one of" in result["job-unknown-type"]["message"]
    # Nothing was created, and every body the flow sent was checked against a vendored spec.
    refused = [p for _, p, s in _calls(local) if s == 400]
    assert not any(local.control_plane.store.job(_ws_id(), n) for n in ("e2e-spec-1", "e2e-spec-2"))
    assert len(refused) >= 6
    assert local.control_plane.validation.not_checked == [], local.control_plane.validation.not_checked


def test_host_services_refuse_what_they_do_not_serve(local: LocalAzureML, outputs_file: Path) -> None:
    import http.client

    assert local.host is not None
    port = local.host.server.port
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("CONNECT", "example.com:443")
    assert conn.getresponse().status == 403  # the proxy tunnels only *.blob.core.localml.test:443
    conn.close()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", "/msi/token?resource=https://x", headers={"X-IDENTITY-HEADER": "wrong"})
    assert conn.getresponse().status == 401
    conn.close()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    secret = local.host.identity_header
    conn.request("GET", "/msi/token?resource=https://x", headers={"X-IDENTITY-HEADER": secret})
    resp = conn.getresponse()
    body = json.loads(resp.read())
    assert resp.status == 200 and body["resource"] == "https://x" and int(body["expires_on"]) > 0
    conn.close()
    # The control plane wants a token from that endpoint (any other gets a 401).
    assert local.control_plane is not None
    context = ssl.create_default_context(cafile=local.environ["REQUESTS_CA_BUNDLE"])
    for token, status in (("forged", 401), (body["access_token"], 200)):
        conn = http.client.HTTPSConnection(
            "127.0.0.1", local.control_plane.server.port, timeout=10, context=context
        )
        conn.request("GET", _ws_id(), headers={"Authorization": f"Bearer {token}"})
        assert conn.getresponse().status == status
        conn.close()

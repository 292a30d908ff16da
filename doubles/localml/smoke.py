"""``python -m doubles.localml smoke`` (``make smoke``): the smoke job end to end, offline.

1. start Azurite and the local control plane;
2. write the dev stack's outputs (``python -m preflight dev --outputs-file F``: the stack program under
   Pulumi mocks, as the policy gate evaluates it);
3. deploy the dev stack's clusters as ``pulumi up`` would (``python -m doubles.localml.deploy``: a PUT of each
   AmlCompute body the program declares), then ``python -m jobs check-deploy`` (the README's post-deploy
   flow: the live clusters against the stack outputs, through azure-ai-ml);
4. ``python -m jobs submit smoke`` through the real azure-ai-ml client: 2 nodes x 2 processes, on the
   shape of a 2-GPU size (serverless, since the dev cluster has one GPU and max_instances 1); the
   jobs package creates the job, follows it, streams rank 0 and downloads every rank's log;
   and verifies them with ``--allow-socket``: a CPU (gloo) run has no NCCL lines, so the transport is
   reported as sockets, and the verdict says so without failing;
5. stop everything; exit with submit's code: 0 only when the clusters match, the job completed and the verdict
   is OK.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from doubles.localml.env import LocalAzureML

ROOT = Path(__file__).resolve().parent.parent
NODES, PROCS = 2, 2
#: 2 GPUs per node (vmsizes catalog), so 2 processes per node is one per GPU; no RDMA, hence --allow-tcp.
SIZE = "Standard_NC80adis_H100_v5"


def say(msg: str) -> None:
    print(f"[localml smoke] {msg}", file=sys.stderr, flush=True)


def _run(argv: list[str], env: dict[str, str], timeout: float) -> subprocess.CompletedProcess[str]:
    say("$ " + " ".join(["python", *argv[1:]] if argv[0] == sys.executable else argv))
    return subprocess.run(argv, cwd=ROOT, env=env, timeout=timeout, stdout=subprocess.PIPE, text=True)


def main(work: Path | None = None, timeout: float = 600.0, as_json: bool = False) -> int:
    t0 = time.monotonic()
    work = work or Path(tempfile.mkdtemp(prefix="localml-smoke-"))
    logs = work / "job-logs"
    say(f"starting Azurite and the control plane (work folder {work})")
    with LocalAzureML() as local:
        env = local.subprocess_env()
        assert local.control_plane is not None
        say(
            f"control plane {local.control_plane.base_url}; SDKs pointed at it by "
            + ", ".join(sorted(local.environ))
        )
        from doubles.localml.deploy import deploy_stack

        try:
            outputs_file = deploy_stack("dev", env, work, say)
        except RuntimeError as exc:
            say(f"FAILED: {exc}")
            return 1
        r = _run([sys.executable, "-m", "jobs", "check-deploy", "--outputs", str(outputs_file)], env, 300)
        if r.returncode != 0:
            say(f"FAILED: the live clusters differ from the stack (check-deploy {r.returncode}):\n{r.stdout}")
            return r.returncode
        say("check-deploy: " + (r.stdout.strip().splitlines() or ["(no output)"])[-1])
        r = _run(
            [
                sys.executable,
                "-m",
                "jobs",
                "submit",
                "smoke",
                "--outputs",
                str(outputs_file),
                "--serverless",
                "--size",
                SIZE,
                "--nodes",
                str(NODES),
                "--processes-per-node",
                str(PROCS),
                "--allow-tcp",
                "--allow-socket",
                "--logs",
                str(logs),
                "--poll-seconds",
                "1",
                "--json",
            ],
            env,
            timeout,
        )
        try:
            job = json.loads(r.stdout)["jobs"][0]
        except (ValueError, KeyError, IndexError):
            say(f"FAILED: submit exited {r.returncode} without a JSON summary:\n{r.stdout}")
            return r.returncode or 1
        calls = len(local.control_plane.server.log)
    say(f"job {job['name']}: {job['status']} (submit exit {r.returncode}), logs {job['logs']}")
    report = job.get("verify") or {}
    if report:
        say(
            f"verify: {'OK' if report['ok'] else 'NOT OK'}, world size {report['world_size']} "
            f"(expected {NODES * PROCS}), processes per node {report['processes_per_node']}, "
            f"transport {report['transport']}"
        )
        for line in report.get("notes", []) + report.get("problems", []):
            say(f"  {line}")
    verdict = "OK" if r.returncode == 0 else f"FAILED ({job.get('error') or job['status']})"
    seconds = time.monotonic() - t0
    say(f"{verdict}; {calls} control-plane calls; {seconds:.0f} s; everything stopped")
    if as_json:
        print(
            json.dumps(
                {
                    "ok": r.returncode == 0,
                    "exit_code": r.returncode,
                    "job": job,
                    "control_plane_calls": calls,
                    "seconds": round(seconds, 1),
                    "work": str(work),
                },
                indent=2,
            )
        )
    return r.returncode

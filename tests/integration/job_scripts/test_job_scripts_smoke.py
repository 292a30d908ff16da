"""smoke.py for real: gloo on CPU, started by `python -m jobs local` as Azure ML would start it."""

from __future__ import annotations

import json
import re
import signal
import subprocess

from tests.jobs.jobs_util import PY, REPO, SRC, base_env

from .jobscripts_util import run_group, start_ranks, wait_for

RANK_LINE = re.compile(
    r"^smoke rank=(\d+) local_rank=(\d+) node_rank=(\d+) world_size=(\d+) host=(\S+) device=(\S+)$"
)
SWEEP_LINE = re.compile(
    r"^smoke all_reduce size=(\d+) count=(\d+) time_us=([\d.]+) algbw=([\d.]+) busbw=([\d.]+)$"
)
SMALL_SWEEP = ["--min-bytes", "4K", "--max-bytes", "256K", "--factor", "4", "--iters", "5", "--warmup", "1"]


def local(args: list[str], tmp_path) -> subprocess.CompletedProcess[str]:
    return run_group([PY, "-m", "jobs", "local", *args], timeout=150, cwd=REPO, env=base_env())


def test_two_nodes_of_two_report_world_size_four_and_busbw(tmp_path):
    p = local(
        [
            "smoke",
            "--nodes",
            "2",
            "--procs-per-node",
            "2",
            "--logs",
            str(tmp_path),
            "--",
            "--expect-world-size",
            "4",
            *SMALL_SWEEP,
        ],
        tmp_path,
    )
    assert p.returncode == 0, p.stdout + p.stderr
    assert "world size 4" in p.stdout.splitlines()
    logs = sorted((tmp_path / "user_logs").iterdir())
    assert [f.name for f in logs] == [f"std_log_process_{r}.txt" for r in range(4)]
    seen = set()
    for rank, log in enumerate(logs):
        # The rank's line, wherever it is: torch may warn first (ProcessGroupGloo.cpp: "Unable to resolve
        # hostname to a (local) address" on a machine whose name does not resolve).
        m = next(filter(None, map(RANK_LINE.match, log.read_text().splitlines())), None)
        assert m, log.read_text()
        r, local_rank, node, world, _, device = m.groups()
        assert (int(r), int(local_rank), int(node), int(world), device) == (
            rank,
            rank % 2,
            rank // 2,
            4,
            "cpu",
        )
        seen.add(int(r))
    assert seen == {0, 1, 2, 3}
    rows = [
        SWEEP_LINE.match(line) for line in p.stdout.splitlines() if line.startswith("smoke all_reduce size=")
    ]
    assert [int(m.group(1)) for m in rows] == [4096, 16384, 65536, 262144]
    for m in rows:  # the nccl-tests formulas, recomputed from the printed time
        size, t_us, algbw, busbw = int(m.group(1)), float(m.group(3)), float(m.group(4)), float(m.group(5))
        assert abs(algbw - size / (t_us * 1e-6) / 1e9) <= 0.01 + 0.01 * algbw
        assert abs(busbw - algbw * 2 * 3 / 4) <= 0.01 + 0.01 * busbw
    last = p.stdout.strip().splitlines()[-1]
    m = re.fullmatch(r"smoke peak busbw: (\d+\.\d\d) GB/s", last)
    assert m and float(m.group(1)) == max(float(r.group(5)) for r in rows)


def test_wrong_world_size_fails_with_the_process_count_message(tmp_path):
    p = local(
        [
            "smoke",
            "--nodes",
            "2",
            "--procs-per-node",
            "2",
            "--logs",
            str(tmp_path),
            "--json",
            "--",
            "--expect-world-size",
            "8",
            "--no-sweep",
        ],
        tmp_path,
    )
    assert p.returncode != 0
    summary = json.loads(p.stdout)
    assert summary["exit_code"] == p.returncode and summary["failed_rank"] is not None
    rank0 = (tmp_path / "user_logs" / "std_log_process_0.txt").read_text()
    assert "world size 4" in rank0
    assert "world size is 4 but --expect-world-size is 8" in rank0 and "process_count_per_instance" in rank0
    assert "Traceback" not in rank0
    assert f"see {tmp_path}/user_logs/std_log_process_" in p.stderr


def test_smoke_survivor_fails_fast_when_a_peer_dies(tmp_path):
    procs = start_ranks("smoke.py", ["--iters", "100000", "--timeout-min", "0.5"], 2, tmp_path)
    wait_for(lambda: "smoke all_reduce dtype" in (tmp_path / "rank0.txt").read_text(), 120, "the sweep")
    procs[1].kill()
    code = procs[0].wait(timeout=70)  # collective timeout (0.5 min) + 30 s, plus slack
    log = (tmp_path / "rank0.txt").read_text()
    assert code == 1 and "smoke.py: error: rank 0: lost a peer" in log and "Traceback" not in log


def test_smoke_survivor_fails_fast_when_a_peer_hangs(tmp_path):
    """A stopped rank (SIGSTOP: alive, sockets open, silent) trips gloo's collective timeout, a peer loss."""
    procs = start_ranks("smoke.py", ["--iters", "100000", "--timeout-min", "0.1"], 2, tmp_path)
    wait_for(lambda: "smoke all_reduce dtype" in (tmp_path / "rank0.txt").read_text(), 120, "the sweep")
    procs[1].send_signal(signal.SIGSTOP)  # the reaper's SIGKILL ends it after the test
    code = procs[0].wait(timeout=6 + 30)
    log = (tmp_path / "rank0.txt").read_text()
    assert code == 1 and "smoke.py: error: rank 0: lost a peer" in log and "Timed out waiting" in log, log
    assert "Traceback" not in log


def test_the_gpu_message_size_leaves_a_cpu_sweep_small(tmp_path):
    """The job builder passes the size's health-level message size (16G on ND H100 v5) as --gpu-max-bytes;
    on CPU (gloo) the sweep still stops at 4M."""
    p = local(
        [
            "smoke",
            "--nodes",
            "1",
            "--procs-per-node",
            "2",
            "--logs",
            str(tmp_path),
            "--",
            "--gpu-max-bytes",
            "16G",
            "--min-bytes",
            "1M",
            "--iters",
            "1",
            "--warmup",
            "0",
        ],
        tmp_path,
    )
    assert p.returncode == 0, p.stdout + p.stderr
    sizes = [int(m.group(1)) for line in p.stdout.splitlines() if (m := SWEEP_LINE.match(line))]
    assert sizes == [1 << 20, 2 << 20, 4 << 20]
    bad = subprocess.run([PY, str(SRC / "smoke.py"), "--gpu-max-bytes", "0"], capture_output=True, text=True)
    assert bad.returncode == 2 and "--gpu-max-bytes" in bad.stderr and "Traceback" not in bad.stderr

"""Run a distributed job on this machine the way Azure ML's PyTorch distribution runs it on a cluster.

    from jobs.local.launcher import launch, CANCELLED
    code = launch([sys.executable, "jobs/payload/smoke.py", "--expect-world-size", "4"],
                  nodes=2, procs_per_node=2, logs_dir=Path("out"))

`launch(argv, nodes, procs_per_node, logs_dir, env=None, cwd=None, stream_rank0=True, stop_event=None,
grace_s=10.0) -> int` starts nodes x procs_per_node copies of `argv` and returns the job's exit code:

- Environment: this process's environment, then `env` (the job's `environment_variables`), then exactly
  the variables Azure ML's PyTorch distribution sets (docs/reference/azure-notes.md §4, from
  how-to-train-distributed-gpu.md): per node MASTER_ADDR (127.0.0.1 here), MASTER_PORT (a free port),
  WORLD_SIZE (nodes x procs_per_node), NODE_RANK; per process RANK and LOCAL_RANK.
- Logs: each rank's stdout and stderr go to `<logs_dir>/user_logs/std_log_process_<rank>.txt`, Azure ML's
  layout (platform-notes.md, "Logs"), replacing any left there by an earlier run; `logs_dir=None` uses a
  new temporary folder. With `stream_rank0`,
  rank 0's output is also copied to this process's stdout, as `az ml job stream` shows rank 0 only.
  Progress lines (start, ranks still running every 30 s, the outcome) go to stderr.
- Failure: when a rank exits non-zero, the others get SIGTERM, then SIGKILL after `grace_s`; the return
  value is that rank's exit code (128 + signal when it was killed by one) and stderr names the rank and
  its log file. 0 only when every rank exited 0.
- Cancel: setting `stop_event` (a threading.Event) terminates every rank the same way and returns
  CANCELLED (130). Ranks share this process's process group, so a kill of the group takes them all.

`run(...)` takes the same arguments and returns a `Result` with per-rank exit codes and log paths
(`python -m jobs local --json` prints it).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

CANCELLED = 130
PROGRESS_EVERY_S = 30.0
POLL_S = 0.05


@dataclass
class Result:
    exit_code: int
    world_size: int
    logs_dir: Path
    logs: dict[int, Path]
    rank_exit_codes: dict[int, int | None]
    failed_rank: int | None = None
    cancelled: bool = False
    duration_s: float = 0.0
    env: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, object]:
        return {
            "exit_code": self.exit_code,
            "world_size": self.world_size,
            "logs_dir": str(self.logs_dir),
            "logs": {str(r): str(p) for r, p in self.logs.items()},
            "rank_exit_codes": {str(r): c for r, c in self.rank_exit_codes.items()},
            "failed_rank": self.failed_rank,
            "cancelled": self.cancelled,
            "duration_s": round(self.duration_s, 3),
        }


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def log_path(logs_dir: Path, rank: int) -> Path:
    return logs_dir / "user_logs" / f"std_log_process_{rank}.txt"


def _exit_code(returncode: int) -> int:
    return 128 - returncode if returncode < 0 else returncode  # -15 (SIGTERM) -> 143


def _tee(pipe: IO[bytes], log: IO[bytes], out: IO[str] | None) -> None:
    for line in iter(pipe.readline, b""):
        log.write(line)
        log.flush()
        if out is not None:
            out.write(line.decode(errors="replace"))
            out.flush()
    pipe.close()


def _say(msg: str) -> None:
    print(f"[jobs local] {msg}", file=sys.stderr, flush=True)


def run(
    argv: list[str],
    nodes: int,
    procs_per_node: int,
    logs_dir: Path | None,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    stream_rank0: bool = True,
    stop_event: threading.Event | None = None,
    grace_s: float = 10.0,
    on_start: Callable[[dict[int, subprocess.Popen[bytes]], dict[int, Path]], None] | None = None,
) -> Result:
    if nodes < 1 or procs_per_node < 1:
        raise ValueError(f"nodes ({nodes}) and procs_per_node ({procs_per_node}) must be at least 1")
    logs_dir = Path(logs_dir) if logs_dir is not None else Path(tempfile.mkdtemp(prefix="jobs-local-"))
    (logs_dir / "user_logs").mkdir(parents=True, exist_ok=True)
    for stale in (logs_dir / "user_logs").glob("std_log_process_*.txt"):  # a previous run's ranks
        stale.unlink()
    world = nodes * procs_per_node
    node_env = {"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(free_port()), "WORLD_SIZE": str(world)}
    t0 = time.monotonic()
    procs: dict[int, subprocess.Popen[bytes]] = {}
    logs: dict[int, Path] = {}
    files: list[IO[bytes]] = []
    tees: list[threading.Thread] = []
    try:
        _start(
            argv, nodes, procs_per_node, logs_dir, env, cwd, stream_rank0, node_env, procs, logs, files, tees
        )
    except OSError:
        _terminate(procs, dict.fromkeys(procs), 0.0)
        for f in files:
            f.close()
        raise
    _say(
        f"started {world} processes ({nodes} node(s) x {procs_per_node}), "
        f"MASTER_PORT={node_env['MASTER_PORT']}, logs in {logs_dir / 'user_logs'}"
    )
    if on_start is not None:  # a drill that watches the ranks (jobs/local/rankdrill.py)
        on_start(procs, logs)

    codes: dict[int, int | None] = dict.fromkeys(procs)
    failed: int | None = None
    cancelled = False
    next_progress = t0 + PROGRESS_EVERY_S
    while True:
        for rank, p in procs.items():
            if codes[rank] is None and (rc := p.poll()) is not None:
                codes[rank] = _exit_code(rc)
                if codes[rank] != 0 and failed is None:
                    failed = rank
        running = [r for r, c in codes.items() if c is None]
        # A cancel wins over a rank's exit: the ranks got the same signal and may stop before this loop
        # looks (a terminal's Ctrl-C reaches the whole process group).
        if stop_event is not None and stop_event.is_set():
            cancelled = True
            if running:
                _say(f"cancelled: stopping {len(running)} rank(s) (SIGTERM, SIGKILL after {grace_s:g} s)")
                _terminate(procs, codes, grace_s)
            else:
                _say("cancelled: every rank had already stopped")
            break
        if not running:
            break
        if failed is not None:
            _say(
                f"rank {failed} exited with code {codes[failed]} (log: {logs[failed]}); "
                f"stopping the other {len(running)} rank(s)"
            )
            _terminate(procs, codes, grace_s)
            break
        if time.monotonic() >= next_progress:
            _say(f"{len(running)}/{world} ranks running, {time.monotonic() - t0:.0f} s")
            next_progress += PROGRESS_EVERY_S
        time.sleep(POLL_S)
    for t in tees:
        t.join(timeout=5)
    for f in files:
        f.close()

    duration = time.monotonic() - t0
    if cancelled:
        code = CANCELLED
    elif failed is not None:
        code = codes[failed] or 1
        _say(f"FAILED: rank {failed} exited with code {code}; see {logs[failed]}")
    else:
        code = 0
        _say(f"all {world} ranks exited 0 in {duration:.1f} s")
    return Result(code, world, logs_dir, logs, codes, failed, cancelled, duration, node_env)


def _start(
    argv: list[str],
    nodes: int,
    procs_per_node: int,
    logs_dir: Path,
    env: dict[str, str] | None,
    cwd: Path | None,
    stream_rank0: bool,
    node_env: dict[str, str],
    procs: dict[int, subprocess.Popen[bytes]],
    logs: dict[int, Path],
    files: list[IO[bytes]],
    tees: list[threading.Thread],
) -> None:
    for node in range(nodes):
        for local in range(procs_per_node):
            rank = node * procs_per_node + local
            child_env = {
                **os.environ,
                **(env or {}),
                **node_env,
                "NODE_RANK": str(node),
                "RANK": str(rank),
                "LOCAL_RANK": str(local),
            }
            logs[rank] = log_path(logs_dir, rank)
            f = open(logs[rank], "wb")  # noqa: SIM115 (closed after the rank exits)
            files.append(f)
            if rank == 0 and stream_rank0:
                p = subprocess.Popen(
                    argv, env=child_env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
                )
                t = threading.Thread(target=_tee, args=(p.stdout, f, sys.stdout), daemon=True)
                t.start()
                tees.append(t)
            else:
                p = subprocess.Popen(argv, env=child_env, cwd=cwd, stdout=f, stderr=subprocess.STDOUT)
            procs[rank] = p


def _terminate(
    procs: dict[int, subprocess.Popen[bytes]], codes: dict[int, int | None], grace_s: float
) -> None:
    """SIGTERM every rank still running, SIGKILL whoever is left after grace_s."""
    for rank, p in procs.items():
        if codes[rank] is None and p.poll() is None:
            p.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    for rank, p in procs.items():
        if codes[rank] is not None:
            continue
        try:
            p.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        codes[rank] = _exit_code(p.returncode)


def launch(
    argv: list[str],
    nodes: int,
    procs_per_node: int,
    logs_dir: Path | None,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    stream_rank0: bool = True,
    stop_event: threading.Event | None = None,
    grace_s: float = 10.0,
) -> int:
    """The contract in docs/architecture.md: run the job, return its exit code (see the module docstring)."""
    return run(argv, nodes, procs_per_node, logs_dir, env, cwd, stream_rank0, stop_event, grace_s).exit_code

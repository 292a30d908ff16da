"""Shared helpers for the job-script tests: real processes, real gloo, real files. No mocks.

The paths and the environment a process starts with (REPO, SRC, PY, base_env, TRAIN_ARGS) are
tests/jobs/jobs_util.py's, shared with the unit tests of the job scripts."""

from __future__ import annotations

import contextlib
import os
import queue
import re
import signal
import subprocess
import threading
import time
from pathlib import Path

from tests.jobs.jobs_util import PY, REPO, SRC, base_env

FINGERPRINT = re.compile(r"^final parameters sha256: ([0-9a-f]{64})$")


# Every process the helpers below start, with whether it leads its own process group (a launcher whose
# ranks share its group). conftest.py's fixtures kill what a test leaves running: reap_started().
STARTED: list[tuple[subprocess.Popen, bool]] = []


def track(proc: subprocess.Popen, group: bool = False) -> subprocess.Popen:
    STARTED.append((proc, group))
    return proc


def reap(proc: subprocess.Popen, group: bool) -> None:
    """SIGKILL `proc` (and its whole process group if it leads one) if it is still running; wait for it.

    The group is signalled even when its leader has exited (ranks may outlive a launcher), but only while
    the leader has not been waited for: until then its pid, hence the group id, cannot be anyone else's.
    """
    if group and proc.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    elif proc.poll() is None:
        proc.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=30)


@contextlib.contextmanager
def reap_started():
    """Kill, on exit, what was started inside the block and is still running (used by conftest.py)."""
    mark = len(STARTED)
    try:
        yield
    finally:
        started, STARTED[mark:] = STARTED[mark:], []
        for proc, group in started:
            reap(proc, group)


def fingerprint(text: str) -> str:
    """The fingerprint on the last non-empty line, which must be exactly the documented line."""
    last = [line for line in text.splitlines() if line.strip()][-1]
    m = FINGERPRINT.match(last)
    assert m, f"last line is not the fingerprint line: {last!r}"
    return m.group(1)


def free_port() -> int:
    from jobs.local.launcher import free_port as fp

    return fp()


def start_ranks(script: str, args: list[str], world: int, logs: Path) -> list[subprocess.Popen[bytes]]:
    """Start `world` ranks directly with Azure ML's variables (one node), each logging to a file.

    Used where the test must signal individual ranks itself (the launcher would stop the others).
    """
    logs.mkdir(parents=True, exist_ok=True)
    port = str(free_port())
    procs = []
    for rank in range(world):
        env = base_env() | {
            "MASTER_ADDR": "127.0.0.1",
            "MASTER_PORT": port,
            "WORLD_SIZE": str(world),
            "NODE_RANK": "0",
            "RANK": str(rank),
            "LOCAL_RANK": str(rank),
        }
        out = open(logs / f"rank{rank}.txt", "wb")  # noqa: SIM115 (child owns it)
        proc = subprocess.Popen([PY, str(SRC / script), *args], env=env, stdout=out, stderr=subprocess.STDOUT)
        procs.append(track(proc))
        out.close()
    return procs


def run_group(cmd: list[str], timeout: float, **kwargs) -> subprocess.CompletedProcess[str]:
    """subprocess.run for a command that starts ranks (`jobs local`, torchrun): in its own session and
    tracked, so a timeout, which subprocess.run answers by killing only the direct child, takes the ranks too.
    """
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True, **kwargs
    )
    track(proc, group=True)
    out, err = proc.communicate(timeout=timeout)  # on timeout the test's reaper kills the group
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def wait_for(predicate, timeout: float, what: str, poll: float = 0.02) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(poll)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


def last_step(log: Path) -> int:
    steps = re.findall(r"^step (\d+)/", log.read_text(errors="replace"), flags=re.M) if log.exists() else []
    return int(steps[-1]) if steps else 0


class LocalRun:
    """`python -m jobs local train ...` in its own session, so a kill -9 of the group takes every rank."""

    def __init__(self, args: list[str], procs: int, logs: Path) -> None:
        self.proc = subprocess.Popen(
            [
                PY,
                "-m",
                "jobs",
                "local",
                "train",
                "--procs-per-node",
                str(procs),
                "--logs",
                str(logs),
                "--",
                *args,
            ],
            cwd=REPO,
            env=base_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        track(self.proc, group=True)
        self.lines: queue.Queue[str] = queue.Queue()
        self.out: list[str] = []
        self.err: list[str] = []
        self.readers = [
            threading.Thread(target=self._read, args=(self.proc.stdout, self.out, True), daemon=True),
            threading.Thread(target=self._read, args=(self.proc.stderr, self.err, False), daemon=True),
        ]
        for t in self.readers:
            t.start()

    def _read(self, pipe, sink: list[str], to_queue: bool) -> None:
        for raw in iter(pipe.readline, b""):
            line = raw.decode(errors="replace")
            sink.append(line)
            if to_queue:
                self.lines.put(line)

    def wait_step(self, step: int, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=0.5)
            except queue.Empty:
                if self.proc.poll() is not None:
                    raise AssertionError(
                        f"run ended before step {step}:\n{''.join(self.out + self.err)}"
                    ) from None
                continue
            if (m := re.match(r"step (\d+)/", line)) and int(m.group(1)) >= step:
                return
        raise AssertionError(f"step {step} not reached in {timeout} s")

    def kill9(self) -> int:
        os.killpg(self.proc.pid, signal.SIGKILL)
        rc = self.proc.wait(timeout=30)
        for t in self.readers:
            t.join(timeout=10)
        return rc

    def finish(self, timeout: float = 180) -> tuple[int, str, str]:
        rc = self.proc.wait(timeout=timeout)
        for t in self.readers:
            t.join(timeout=10)
        return rc, "".join(self.out), "".join(self.err)

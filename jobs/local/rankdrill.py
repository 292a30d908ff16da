"""`python -m jobs local ... --sigterm-at STEP|random [--sigterm-rank R] [--seed S]`: send SIGTERM to one
rank once training reaches a step, as a Spot eviction notice or a node drain would (Azure Scheduled Events
give a Preempt event up to 30 s ahead, docs/reference/azure-notes.md section 5).

The step comes from rank 0's log, train.py's metrics records (every `--log-every` steps; jobs/ranklogs.py),
so the signal goes at the first logged step at or after STEP. `random` picks STEP uniformly in [1, M-1]
with `random.Random(seed)` once the first record gives M (`steps`). Only that rank gets the signal; train.py's
`StopRequest.agreed()` then stops every rank at the same step with a checkpoint (docs/job-scripts.md).
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

from jobs.errors import UsageError
from jobs.ranklogs import read, records

POLL_S = 0.05


@dataclass
class SigtermAt:
    rank: int
    at: int | None  # None: random
    seed: int = 0
    sent_at_step: int | None = None
    target: int | None = None
    _stop: threading.Event = field(default_factory=threading.Event)

    def start(self, procs: dict[int, subprocess.Popen[bytes]], logs: dict[int, Path]) -> None:
        """The launcher's on_start hook: watch rank 0's log in a thread."""
        if self.rank not in procs:
            raise ValueError(f"--sigterm-rank {self.rank}: the job has ranks 0..{len(procs) - 1}")
        threading.Thread(
            target=self._watch, args=(procs[self.rank], logs[0]), daemon=True, name="jobs-sigterm-drill"
        ).start()

    def stop(self) -> None:
        self._stop.set()

    def _watch(self, proc: subprocess.Popen[bytes], log: Path) -> None:
        rng = random.Random(self.seed)
        while not self._stop.wait(POLL_S) and proc.poll() is None:
            try:
                recs = records(read(log), str(log))
            except (OSError, UsageError):
                continue
            if not recs:
                continue
            if self.target is None:
                total = recs[0].steps
                self.target = self.at if self.at is not None else rng.randint(1, max(1, total - 1))
            last = recs[-1].step
            if last >= self.target:
                self.sent_at_step = last
                print(
                    f"[jobs local] drill: SIGTERM to rank {self.rank} (pid {proc.pid}) at step {last} "
                    f"(target {self.target})",
                    file=sys.stderr,
                    flush=True,
                )
                os.kill(proc.pid, signal.SIGTERM)
                return


def parse_at(value: str) -> int | None:
    """`--sigterm-at`: a step >= 1, or `random`."""
    if value == "random":
        return None
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"--sigterm-at {value}: a step number of 1 or more, or `random`")
    return int(value)

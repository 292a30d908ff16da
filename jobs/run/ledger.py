"""The ledger of a managed run: one row per attempt (job name, cause, steps, time lost), written as JSON
beside the logs after every attempt, so a run that is killed still leaves its history.

Steps come from rank 0's log, as train.py prints them (docs/job-scripts.md): `resumed from <path> at step
K` (where the attempt started, `ranklogs.RESUMED`) and its metrics records (`jobs/ranklogs.py`: step,
steps, step_ms; the last one is where it got to).
Time lost by an attempt = its wall time (create to terminal state) minus the time of the steps the run
kept (kept steps x the attempt's mean ms/step), plus the backoff waited before the next attempt. Steps
kept = the next attempt's resume step minus this attempt's start step (all of them for the last attempt);
steps done beyond that were computed again (`steps_redone`).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from jobs.errors import UsageError
from jobs.ranklogs import RESUMED, records


@dataclass
class Progress:
    start_step: int = 0
    last_step: int | None = None
    total_steps: int | None = None
    ms_per_step: float | None = None  # mean over the attempt's logged intervals


def progress(rank0_log: str) -> Progress:
    """Where an attempt started and got to, from rank 0's log (empty for a job that logs no steps)."""
    p = Progress()
    if m := RESUMED.search(rank0_log):
        p.start_step = int(m.group(1))
    try:
        recs = records(rank0_log, "rank 0 log")
    except UsageError:  # a record of another version: the ledger goes without steps, the run goes on
        recs = []
    if recs:
        p.last_step, p.total_steps = recs[-1].step, recs[-1].steps
        p.ms_per_step = sum(r.step_ms for r in recs) / len(recs)
    return p


@dataclass
class Attempt:
    attempt: int
    job: str | None
    status: str | None
    cause: str
    evidence: str
    retry: bool
    exit_code: int
    elapsed_s: float
    start_step: int = 0
    last_step: int | None = None
    steps_done: int = 0
    steps_kept: int | None = None
    steps_redone: int | None = None
    backoff_s: float = 0.0
    time_lost_s: float | None = None
    logs: str | None = None
    ms_per_step: float | None = None
    canceled: str | None = (
        None  # an attempt not final when it ended (NotResponding), canceled before the next
    )
    failure: dict[str, Any] | None = None  # a Failed attempt's cause in its rank logs (causes.failure)


@dataclass
class Ledger:
    run: str
    kind: str
    max_restarts: int
    max_hours: float | None
    attempts: list[Attempt] = field(default_factory=list)
    # completed | gave-up | user-error | canceled | paused | time-limit | not-verified | cancel-failed
    outcome: str = "running"
    exit_code: int | None = None
    path: str | None = None

    @property
    def restarts(self) -> int:
        return max(0, len(self.attempts) - 1)

    def settle(self) -> None:
        """Fill steps kept/redone and time lost now that each attempt's successor is known."""
        for i, a in enumerate(self.attempts):
            nxt = self.attempts[i + 1] if i + 1 < len(self.attempts) else None
            a.steps_done = max(0, (a.last_step or a.start_step) - a.start_step)
            reached = a.last_step if a.last_step is not None else a.start_step
            if nxt is not None:
                kept_to = min(max(nxt.start_step, a.start_step), reached)
            else:
                kept_to = reached if a.cause == "completed" else a.start_step
            a.steps_kept = kept_to - a.start_step
            a.steps_redone = a.steps_done - a.steps_kept
            useful = a.steps_kept * (a.ms_per_step or 0.0) / 1000.0
            a.time_lost_s = round(max(0.0, a.elapsed_s - useful) + a.backoff_s, 3)

    def to_json(self) -> dict[str, Any]:
        self.settle()
        return asdict(self) | {
            "restarts": self.restarts,
            "time_lost_s": round(sum(a.time_lost_s or 0.0 for a in self.attempts), 3),
        }

    def write(self, path: Path) -> None:
        """Rewrite the ledger file whole (a reader never sees a half-written row list for long)."""
        self.path = str(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_json(), indent=2) + "\n")

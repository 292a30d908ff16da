"""A managed run's ledger (jobs/run/ledger.py): progress read from train.py's records, and the arithmetic of
each attempt's steps done, kept and redone and its time lost, settled against the attempt after it."""

from __future__ import annotations

import pytest

from jobs.run.ledger import Attempt, Ledger, progress


def test_progress_reads_train_py_records():
    from jobs.payload.metrics import StepMetrics

    lines = [StepMetrics(step, 400, 5.0, ms, 1.0, None, 2, 1e-3) for step, ms in ((110, 10.0), (120, 20.0))]
    log = "resumed from /ckpt/step_00000100.pt at step 100\n" + "".join(
        f"{m.text()}\n{m.to_line()}\n" for m in lines
    )
    p = progress(log)
    assert (p.start_step, p.last_step, p.total_steps, p.ms_per_step) == (100, 120, 400, 15.0)
    assert progress("no steps here").last_step is None


def test_ledger_counts_kept_redone_and_lost_time():
    ledger = Ledger("r", "train", 5, None)
    ledger.attempts = [
        Attempt(
            1,
            "j1",
            "Failed",
            "preempted",
            "",
            True,
            1,
            elapsed_s=30.0,
            start_step=0,
            last_step=150,
            ms_per_step=100.0,
            backoff_s=2.0,
        ),
        Attempt(
            2,
            "j2",
            "Completed",
            "completed",
            "",
            False,
            0,
            elapsed_s=40.0,
            start_step=100,
            last_step=400,
            ms_per_step=100.0,
        ),
    ]
    data = ledger.to_json()
    first, last = data["attempts"]
    assert (first["steps_done"], first["steps_kept"], first["steps_redone"]) == (150, 100, 50)
    assert first["time_lost_s"] == 30.0 - 10.0 + 2.0  # 100 kept steps x 0.1 s were useful; plus the backoff
    assert (last["steps_kept"], last["steps_redone"], last["time_lost_s"]) == (300, 0, 10.0)
    assert data["restarts"] == 1 and data["time_lost_s"] == 32.0


# --- ledger arithmetic ------------------------------------------------------------------------------------


def row(n: int, cause: str, start: int, last: int | None, elapsed: float = 100.0, ms: float | None = 100.0):
    return Attempt(
        n,
        f"j{n}",
        "Completed" if cause == "completed" else "Failed",
        cause,
        "",
        cause != "completed",
        0 if cause == "completed" else 1,
        elapsed_s=elapsed,
        start_step=start,
        last_step=last,
        ms_per_step=ms,
    )


def settled(*attempts: Attempt) -> list[dict]:
    ledger = Ledger("r", "train", 5, None)
    ledger.attempts = list(attempts)
    return ledger.to_json()["attempts"]


def kept(a: dict) -> tuple:
    return a["steps_done"], a["steps_kept"], a["steps_redone"]


def test_a_failed_last_attempt_keeps_no_steps():
    (last,) = settled(row(1, "interrupted", 100, 150, elapsed=30.0))
    assert kept(last) == (50, 0, 50)
    assert last["time_lost_s"] == 30.0  # all of its time


def test_a_completed_last_attempt_keeps_every_step():
    (last,) = settled(row(1, "completed", 100, 150, elapsed=30.0))
    assert kept(last) == (50, 50, 0)
    assert last["time_lost_s"] == pytest.approx(30.0 - 50 * 0.1)


def test_steps_kept_are_never_negative_when_the_next_attempt_starts_earlier():
    # the checkpoint at 100 was lost: attempt 2 starts over from step 0
    first, _ = settled(row(1, "node-lost", 100, 150), row(2, "completed", 0, 400))
    assert kept(first) == (50, 0, 50)


def test_steps_kept_stop_at_the_last_logged_step():
    # attempt 2 resumes at 160 (a checkpoint written after attempt 1's last logged step, 150)
    first, _ = settled(row(1, "preempted", 100, 150), row(2, "completed", 160, 400))
    assert kept(first) == (50, 50, 0)


def test_an_attempt_that_logged_no_step_did_none_and_lost_its_whole_time():
    first, _ = settled(row(1, "preempted", 100, None, elapsed=12.5), row(2, "completed", 100, 400))
    assert kept(first) == (0, 0, 0)
    assert first["time_lost_s"] == 12.5


def test_time_lost_is_never_negative_and_a_missing_step_time_counts_nothing_as_useful():
    # 300 kept steps at 100 ms = 30 s of useful work in a 10 s attempt (clocks disagree): lost 0, not -20
    (fast,) = settled(row(1, "completed", 0, 300, elapsed=10.0))
    assert fast["time_lost_s"] == 0.0
    (unknown,) = settled(row(1, "completed", 0, 300, elapsed=10.0, ms=None))
    assert unknown["time_lost_s"] == 10.0


def test_restarts_count_attempts_after_the_first():
    ledger = Ledger("r", "train", 5, None)
    assert ledger.to_json()["restarts"] == 0
    ledger.attempts = [row(1, "preempted", 0, 5), row(2, "preempted", 5, 9), row(3, "completed", 9, 20)]
    assert ledger.to_json()["restarts"] == 2


def test_each_attempt_is_settled_against_its_own_successor():
    # three attempts: 0->150 (resumed at 100), 100->250 (resumed at 200), 200->400 completed
    first, second, third = settled(
        row(1, "preempted", 0, 150), row(2, "node-lost", 100, 250), row(3, "completed", 200, 400)
    )
    assert [kept(a) for a in (first, second, third)] == [(150, 100, 50), (150, 100, 50), (200, 200, 0)]

"""CheckpointManager, what a user sees of it: the lines a resume logs (another --steps, another world size),
`latest()` asked twice, a rank that cannot read the chosen marker, and where and how long a save runs (the
default is DCP's async_save; --sync-ckpt and a stop's forced save write from the training thread).
"""

from __future__ import annotations

import json
import sys
import threading
import time

import pytest
import torch
from jobscripts_util import SRC

sys.path.insert(0, str(SRC))
import checkpointing as ck  # noqa: E402


def tracked(folder, total: int = 100, **kwargs):
    model = torch.nn.Linear(4, 4)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    mgr = ck.CheckpointManager(folder, interval=10, keep=3, total_steps=total, **kwargs)
    return mgr, model, opt


def saved(folder, step: int = 10, total: int = 100) -> None:
    mgr, model, opt = tracked(folder, total, async_=False)
    mgr.track(model, opt, config={"width": 4})
    mgr.maybe_save(step, force=True)


def resume(folder, total: int = 100) -> tuple[int, list[str]]:
    lines: list[str] = []
    mgr, model, opt = tracked(folder, total, log=lines.append)
    return mgr.restore(model, opt, config={"width": 4}), lines


def test_a_resume_with_the_same_steps_and_world_logs_only_where_it_resumed(tmp_path):
    saved(tmp_path)
    assert resume(tmp_path) == (10, [f"resumed from {tmp_path / 'step_00000010'} at step 10"])


def test_a_resume_with_other_steps_warns_that_the_schedule_differs(tmp_path):
    saved(tmp_path, total=100)
    start, lines = resume(tmp_path, total=200)
    assert start == 10 and lines[0] == (
        f"warning: {tmp_path / 'step_00000010'} belongs to a run of --steps 100, this one has --steps 200: "
        "the learning-rate schedule differs from an uninterrupted run"
    )
    assert len(lines) == 2


def test_a_resume_at_another_world_size_notes_the_resharding(tmp_path):
    """The marker records the world size of the run that wrote it (2 ranks here); this run has 1."""
    saved(tmp_path)
    marker = tmp_path / "step_00000010" / "commit.json"
    marker.write_text(json.dumps({**json.loads(marker.read_text()), "world_size": 2}))
    start, lines = resume(tmp_path)
    assert start == 10 and lines == [
        f"note: {tmp_path / 'step_00000010'} was written by 2 ranks, this run has 1: DCP reshards it; the "
        "global batch changes with the world size",
        f"resumed from {tmp_path / 'step_00000010'} at step 10",
    ]


def test_latest_asked_again_gives_the_same_record_without_looking_again(tmp_path, monkeypatch):
    saved(tmp_path)
    mgr, *_ = tracked(tmp_path)
    first = mgr.latest()
    monkeypatch.setattr(ck, "choose", lambda *a, **k: pytest.fail("looked again"))
    assert first["step"] == 10 and mgr.latest() == first and mgr.path == tmp_path / "step_00000010"


def test_a_rank_that_cannot_read_the_chosen_marker_says_which_file(tmp_path, monkeypatch):
    """Rank 0 chose step 10; this rank's view of its commit.json (its node's mount) does not read."""
    saved(tmp_path)
    real, calls = ck.read_commit, []

    def flaky(folder):
        calls.append(folder)
        return real(folder) if len(calls) == 1 else None  # rank 0's choice read it; the second read fails

    monkeypatch.setattr(ck, "read_commit", flaky)
    mgr, *_ = tracked(tmp_path)
    with pytest.raises(ck.CheckpointError) as err:
        mgr.latest()
    assert (
        str(err.value)
        == f"rank 0 cannot read {tmp_path / 'step_00000010' / 'commit.json'}, which rank 0 chose"
    )


def test_maybe_save_off_the_interval_returns_false(tmp_path):
    mgr, model, opt = tracked(tmp_path)
    mgr.track(model, opt, config={})
    assert mgr.maybe_save(5) is False and mgr.maybe_save(10) is True
    mgr.close()
    off = ck.CheckpointManager(None, interval=10, keep=3, total_steps=100)
    assert off.maybe_save(10) is False


def writer_threads(monkeypatch) -> list[str]:
    names: list[str] = []
    real = ck.BlobWriter.write_data

    def spy(self, plan, planner):
        names.append(threading.current_thread().name)
        return real(self, plan, planner)

    monkeypatch.setattr(ck.BlobWriter, "write_data", spy)
    return names


@pytest.mark.parametrize(
    ("kwargs", "force", "on_caller"),
    [
        ({}, False, False),
        ({}, True, True),
        ({"async_": False}, False, True),
        ({"async_": True}, False, False),
    ],
)
def test_saves_run_async_by_default_and_on_the_training_thread_when_sync_or_forced(
    tmp_path, monkeypatch, kwargs, force, on_caller
):
    """The default (train.py without --sync-ckpt) writes from DCP's thread; --sync-ckpt (async_=False) and
    a stop's forced save write from the caller's thread, with no staging copy, and are committed on return."""
    names = writer_threads(monkeypatch)
    mgr, model, opt = tracked(tmp_path, **kwargs)
    mgr.track(model, opt, config={})
    assert mgr.maybe_save(10, force=force)
    if on_caller:  # blocking: committed when the call returns (a stop exits right after it)
        assert ck.verify(tmp_path / "step_00000010") is None
    mgr.close()
    assert len(names) == 1 and (names[0] == threading.current_thread().name) == on_caller
    assert ck.verify(tmp_path / "step_00000010") is None


def test_last_blocked_s_is_the_time_the_call_took(tmp_path):
    mgr, model, opt = tracked(tmp_path, async_=False)
    mgr.track(model, opt, config={})
    t0 = time.perf_counter()
    mgr.maybe_save(10)
    took = time.perf_counter() - t0
    assert 0 < mgr.last_blocked_s <= took


@pytest.mark.parametrize(("kwargs", "force"), [({"async_": False}, False), ({}, True)])
def test_a_blocking_save_that_fails_raises_from_maybe_save_itself(tmp_path, monkeypatch, kwargs, force):
    """--sync-ckpt, or a stop's forced save: the failure is raised at that step, not one interval later
    (or never, for a stop: the process exits next)."""

    def broken(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(ck.BlobWriter, "write_data", broken)
    mgr, model, opt = tracked(tmp_path, **kwargs)
    mgr.track(model, opt, config={})
    with pytest.raises(ck.CheckpointError, match=r"step_00000010 failed: .*No space left on device"):
        mgr.maybe_save(10, force=force)
    assert not (tmp_path / "step_00000010" / "commit.json").exists()

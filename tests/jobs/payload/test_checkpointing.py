"""jobs/payload/checkpointing.py in this process (DCP without a process group): DCP's files, then our commit
marker last; incomplete steps skipped; retention; the reading side at its edges (a stale listing's hidden
steps found by name, a marker without a step, a shard short by one byte, the text of a failed rank); what a
user sees of CheckpointManager (the lines a resume logs, `latest()` asked twice, a rank that cannot read the
chosen marker, where and how long a save runs: DCP's async_save by default, the training thread for
--sync-ckpt and a stop's forced save); and StopRequest (the first SIGTERM or Ctrl-C is a stop at the next step
boundary; a launcher's SIGTERM forwarded after a Ctrl-C does not change the reason).

The multi-rank behaviour (one shard per rank, a rank whose write fails, resharding, a peer that never joins)
runs on real gloo ranks in tests/integration/job_scripts
(test_checkpoint_two_ranks_shards_failure_and_timeout.py, test_job_scripts_train.py), and on the FUSE blob
mount in test_job_scripts_blobmount.py."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import checkpointing as ck
import pytest
import torch
import torch.distributed.checkpoint as dcp
from torch.distributed.checkpoint.api import CheckpointException, _wrap_exception

from ..jobs_util import PY, SRC

# --- writes, the commit marker, incomplete steps, retention -------------------------------------------------


def manager(folder, keep: int = 3, interval: int = 10, total: int = 100, async_: bool = True):
    """A manager over a small model and AdamW, restored from `folder` (what train.py does at start)."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.Linear(64, 8))
    opt = torch.optim.AdamW(model.parameters(), lr=0.01)
    mgr = ck.CheckpointManager(folder, interval=interval, keep=keep, total_steps=total, async_=async_)
    start = mgr.restore(model, opt, config={"width": 64})
    return mgr, model, opt, start


def train_step(model, opt, value: float | None = None) -> None:
    model(torch.randn(4, 32)).sum().backward()
    opt.step()
    opt.zero_grad()
    if value is not None:
        with torch.no_grad():
            model[0].weight.fill_(value)


def steps_on_disk(folder: Path) -> dict[str, list[str]]:
    return {p.name: sorted(q.name for q in p.iterdir()) for p in sorted(folder.iterdir())}


FILES = [".metadata", "__0_0.distcp", "commit.json"]


def test_a_save_is_dcps_files_then_the_commit_marker_and_resumes_weights_optimizer_and_step(tmp_path):
    mgr, model, opt, start = manager(tmp_path, interval=5, total=20)
    assert start == 0 and not mgr.maybe_save(4)  # off the interval
    train_step(model, opt, 5.0)
    assert mgr.maybe_save(5)
    mgr.close()
    assert steps_on_disk(tmp_path) == {"step_00000005": FILES}
    record = ck.read_commit(tmp_path / "step_00000005")
    assert {k: record[k] for k in ("step", "world_size", "total_steps", "config")} == {
        "step": 5,
        "world_size": 1,
        "total_steps": 20,
        "config": {"width": 64},
    }
    saved_moments = opt.state_dict()["state"][0]["exp_avg"].clone()
    again, model2, opt2, start2 = manager(tmp_path, interval=5, total=20)
    assert start2 == 5 and again.path == tmp_path / "step_00000005"
    assert torch.all(model2[0].weight == 5.0)
    assert torch.equal(opt2.state_dict()["state"][0]["exp_avg"], saved_moments)


def test_saves_on_the_interval_the_last_step_and_when_forced(tmp_path):
    mgr, *_ = manager(tmp_path, interval=10, total=25)
    assert [s for s in range(1, 26) if mgr.should_save(s)] == [10, 20, 25]
    assert mgr.should_save(7, force=True)
    assert not ck.CheckpointManager(None, interval=10, keep=1, total_steps=25).should_save(10, force=True)


def test_async_save_returns_before_the_write_and_commits_when_it_finished(tmp_path, monkeypatch):
    """The training thread waits only for DCP's copy to CPU; the commit marker waits for the write."""
    release = threading.Event()
    real = ck.BlobWriter.finish

    def slow_finish(self, metadata, results):  # stands in for a slow upload of .metadata
        release.wait(20)
        return real(self, metadata, results)

    monkeypatch.setattr(ck.BlobWriter, "finish", slow_finish)
    mgr, model, opt, _ = manager(tmp_path)
    train_step(model, opt, 1.0)
    t0 = time.perf_counter()
    mgr.maybe_save(10)
    assert time.perf_counter() - t0 < 10
    train_step(model, opt, 2.0)  # training changes the weights while the write is in flight
    assert not (tmp_path / "step_00000010" / "commit.json").exists()
    release.set()
    mgr.close()
    assert ck.verify(tmp_path / "step_00000010") is None
    _, restored, _, _ = manager(tmp_path)
    assert torch.all(restored[0].weight == 1.0)  # the state at the save, not after


def test_a_failed_save_commits_nothing_deletes_nothing_and_is_raised(tmp_path, monkeypatch):
    """The save of step 20 fails (a shard write raises): close() raises naming the step, step 10 is still
    the newest complete checkpoint even with --keep 1, and a resume uses it."""
    mgr, model, opt, _ = manager(tmp_path, keep=1)
    train_step(model, opt, 10.0)
    mgr.maybe_save(10)
    mgr.close()

    def broken(*args, **kwargs):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(ck.BlobWriter, "write_data", broken)
    train_step(model, opt, 20.0)
    mgr.maybe_save(20)
    with pytest.raises(
        ck.CheckpointError, match=r"writing checkpoint .*step_00000020 failed: .*Input/output error"
    ):
        mgr.close()
    assert not (tmp_path / "step_00000020" / "commit.json").exists()
    assert ck.verify(tmp_path / "step_00000010") is None
    monkeypatch.undo()
    again, restored, _, start = manager(tmp_path, keep=1)
    assert start == 10 and torch.all(restored[0].weight == 10.0)


def test_metadata_is_written_under_its_final_name_without_rename_or_fsync(tmp_path, monkeypatch):
    """On the blob mount a rename is a copy and a delete, or fails (blobfuse2 block_blob.go RenameFile)."""
    calls: list[str] = []
    monkeypatch.setattr(Path, "rename", lambda *a: calls.append("rename"))
    monkeypatch.setattr(ck.os, "fsync", lambda *a: calls.append("fsync"))
    import os

    monkeypatch.setattr(os, "rename", lambda *a: calls.append("rename"))
    monkeypatch.setattr(os, "replace", lambda *a: calls.append("replace"))
    mgr, model, opt, _ = manager(tmp_path)
    train_step(model, opt)
    mgr.maybe_save(10, force=True)
    assert calls == [] and sorted(p.name for p in (tmp_path / "step_00000010").iterdir()) == FILES


@pytest.mark.parametrize(
    ("damage", "why"),
    [
        ("no-commit", "no commit.json marker (its save did not finish)"),
        ("bad-commit", "commit.json is unreadable"),
        ("no-metadata", "commit.json is there but DCP's .metadata is not"),
        ("bad-metadata", "DCP's .metadata is unreadable (UnpicklingError)"),
        ("no-shard", "shard __0_0.distcp is missing"),
        ("short-shard", "shard __0_0.distcp is truncated (1000 of "),
    ],
)
def test_an_incomplete_newest_step_is_skipped_with_a_warning_for_the_previous_one(tmp_path, damage, why):
    mgr, model, opt, _ = manager(tmp_path)
    for step in (10, 20):
        train_step(model, opt, float(step))
        mgr.maybe_save(step)
    mgr.close()
    newest = tmp_path / "step_00000020"
    if damage == "no-commit":
        (newest / "commit.json").unlink()
    elif damage == "bad-commit":
        (newest / "commit.json").write_text('{"step": 2')  # cut short
    elif damage == "no-metadata":
        (newest / ".metadata").unlink()
    elif damage == "bad-metadata":
        (newest / ".metadata").write_bytes(b"\x80\x04garbage")
    elif damage == "no-shard":
        (newest / "__0_0.distcp").unlink()
    else:
        shard = newest / "__0_0.distcp"
        shard.write_bytes(shard.read_bytes()[:1000])
    warnings: list[str] = []
    assert ck.choose(tmp_path, log=warnings.append) == tmp_path / "step_00000010"
    assert len(warnings) == 1 and warnings[0].startswith(
        f"warning: skipping incomplete checkpoint {newest}: {why}"
    )
    _, restored, _, start = manager(tmp_path)
    assert start == 10 and torch.all(restored[0].weight == 10.0)


def test_no_checkpoint_means_a_fresh_start(tmp_path):
    assert ck.choose(tmp_path / "missing") is None and ck.choose(tmp_path) is None
    mgr, _, _, start = manager(tmp_path / "new")
    assert start == 0 and mgr.latest() is None and mgr.path is None
    off = ck.CheckpointManager(None, interval=1, keep=1, total_steps=1)
    assert not off.enabled and off.latest() is None and not off.maybe_save(1, force=True)


def test_a_folder_of_the_format_before_dcp_is_refused_naming_it_and_the_fix(tmp_path):
    (tmp_path / "step_00000100.pt").write_bytes(b"x")
    (tmp_path / "step_00000100.pt.shard-00000-of-00002").write_bytes(b"x")
    with pytest.raises(
        ck.OldFormat, match=r"holds checkpoints of the format before DCP \(step_00000100.pt, \.\.\.\)"
    ):
        manager(tmp_path)
    assert ck.old_format(tmp_path / "missing") is None
    (tmp_path / "step_00000200").mkdir()  # a DCP step folder there: this run's own, so no refusal
    assert ck.old_format(tmp_path) is None


def make_steps(folder: Path, committed: list[int], leftovers: list[int] = ()) -> None:
    for s in committed:
        (folder / ck.step_name(s)).mkdir(parents=True)
        (folder / ck.step_name(s) / "__0_0.distcp").write_bytes(b"x")
        ck.write_commit(folder / ck.step_name(s), {"step": s})
    for s in leftovers:  # a save killed before its commit
        (folder / ck.step_name(s)).mkdir(parents=True)
        (folder / ck.step_name(s) / "__0_0.distcp").write_bytes(b"half")


def test_retention_counts_committed_steps_only_and_spares_newer_leftovers(tmp_path):
    """keep=2 after committing 30: 20 and 30 stay; 10 goes; leftovers 15, 25 (killed saves) older than 30
    go; 40 (newer: another run's, or hidden from a stale listing) stays."""
    make_steps(tmp_path, committed=[10, 20, 30], leftovers=[15, 25, 40])
    deleted = ck.prune(tmp_path, keep=2, newest=30)
    assert sorted(p.name for p in deleted) == ["step_00000010", "step_00000015", "step_00000025"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["step_00000020", "step_00000030", "step_00000040"]


@pytest.mark.parametrize(("keep", "kept"), [(1, [30]), (2, [20, 30]), (3, [10, 20, 30]), (4, [10, 20, 30])])
def test_retention_keeps_exactly_the_newest_keep_committed_ones(tmp_path, keep, kept):
    make_steps(tmp_path, committed=[10, 20, 30])
    ck.prune(tmp_path, keep=keep, newest=30)
    assert sorted(p.name for p in tmp_path.iterdir()) == [ck.step_name(s) for s in kept]


def test_retention_never_deletes_the_step_just_committed_even_if_the_listing_lacks_its_marker(tmp_path):
    make_steps(tmp_path, committed=[10], leftovers=[20])  # 20: committed, but this listing is stale
    ck.prune(tmp_path, keep=1, newest=20)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["step_00000020"]


def test_rewriting_a_step_drops_its_marker_before_dcp_writes(tmp_path, monkeypatch):
    """A resume from 10 rewrites step 20 (left committed by a run that then lost it): until the new save
    commits, step 20 must not count as complete."""
    mgr, model, opt, _ = manager(tmp_path)
    train_step(model, opt, 20.0)
    mgr.maybe_save(20, force=True)
    seen = []
    real = ck.BlobWriter.write_data

    def spy(self, plan, planner):
        seen.append((Path(self.path) / "commit.json").exists())
        return real(self, plan, planner)

    monkeypatch.setattr(ck.BlobWriter, "write_data", spy)
    mgr.maybe_save(20, force=True)
    assert seen == [False] and ck.verify(tmp_path / "step_00000020") is None


def test_a_rank_that_adopted_a_peers_stop_survives_the_launchers_sigterm_but_not_a_second():
    """The drill's race: rank 1 got SIGTERM, rank 0 adopted the stop (StopRequest.agreed) and is writing
    the checkpoint when the launcher, seeing rank 1 exit, sends rank 0 its first SIGTERM. That must not
    kill it mid-save; only a second signal it received itself ends it at once."""
    script = (
        "import os, signal, sys\n"
        f"sys.path.insert(0, {str(SRC)!r})\n"
        "from checkpointing import StopRequest\n"
        "stop = StopRequest((signal.SIGTERM,))\n"
        "stop.signum = signal.SIGTERM  # what agreed() does on a rank that got no signal\n"
        "os.kill(os.getpid(), signal.SIGTERM)\n"
        "print('alive after the first', stop.signum, flush=True)\n"
        "os.kill(os.getpid(), signal.SIGTERM)\n"
        "print('alive after the second', flush=True)\n"
    )
    p = subprocess.run([PY, "-c", script], capture_output=True, text=True, timeout=60)
    assert p.stdout.splitlines() == ["alive after the first 15"], p.stderr
    assert p.returncode == -signal.SIGTERM


# --- the reading side at its edges --------------------------------------------------------------------------


# A blob mount's listing on one node may lack the files another node wrote since it listed (blobfuse2
# component/attr_cache/attr_cache.go caches a directory's listing; a name never asked about goes to storage,
# GetAttr on a miss). tests/integration/job_scripts/test_job_scripts_blobmount.py shows both on the FUSE
# double; here a listing that hides given names stands for the cached one, so each boundary of the lookup
# is one fast case.


def committed(folder: Path, steps) -> None:
    for s in steps:
        (folder / ck.step_name(s)).mkdir(parents=True)
        ck.write_commit(folder / ck.step_name(s), {"step": s})


@pytest.fixture
def stale_listing(monkeypatch):
    """hide(folder, steps): listing `folder` omits those step folders; looking them up by name still works."""
    real = Path.iterdir
    hidden: dict[Path, set[str]] = {}

    def iterdir(self):
        return (p for p in real(self) if p.name not in hidden.get(self, set()))

    monkeypatch.setattr(Path, "iterdir", iterdir)

    def hide(folder: Path, steps) -> None:
        hidden.setdefault(folder, set()).update(ck.step_name(s) for s in steps)

    return hide


def found(folder: Path, probe) -> list[int]:
    return [s for s, _ in ck.list_steps(folder, probe)]


def test_hidden_steps_newer_than_the_listing_are_found_by_name_up_to_the_lookahead(tmp_path, stale_listing):
    """The listing shows step 10; the next PROBE_AHEAD scheduled steps are hidden and all found, the newest
    included (the lookup starts after the newest listed step, not at it)."""
    window = ck.PROBE_AHEAD
    hidden = [10 * (i + 2) for i in range(window)]  # 20, 30, ...
    committed(tmp_path, [10, *hidden])
    stale_listing(tmp_path, hidden)
    assert found(tmp_path, range(10, 10 * (window + 5), 10)) == sorted([10, *hidden], reverse=True)


def test_the_lookup_starts_after_the_newest_listed_step_not_the_oldest(tmp_path, stale_listing):
    """Listed 10..50, hidden 60..100: the scheduled steps after 50 are looked up, so 100 is found; starting
    after the oldest listed (10) would spend the lookups on 20..90 and miss 100."""
    committed(tmp_path, range(10, 101, 10))
    stale_listing(tmp_path, range(60, 101, 10))
    assert found(tmp_path, range(10, 101, 10)) == list(range(100, 9, -10))


def test_scheduled_steps_never_written_are_not_listed_and_give_no_warning(tmp_path):
    """A run of 100 steps saving every 10 was killed after step 20: 30..100 are looked up, none is there."""
    committed(tmp_path, [10, 20])
    assert found(tmp_path, range(10, 101, 10)) == [20, 10]
    warnings: list[str] = []
    assert ck.choose(tmp_path, log=warnings.append, probe=range(10, 101, 10)) is None  # no DCP files here
    assert warnings == [
        f"warning: skipping incomplete checkpoint {tmp_path / ck.step_name(s)}: "
        "commit.json is there but DCP's .metadata is not"
        for s in (20, 10)
    ]


def test_the_manager_looks_up_its_last_step_when_it_is_off_the_interval(tmp_path, stale_listing):
    """--steps 101, --ckpt-every 10: step 100 is scheduled (and 101, the last). The listing shows 90 only;
    the resume must find 100 by name."""
    for s in (90, 100):
        mgr = ck.CheckpointManager(tmp_path, interval=10, keep=5, total_steps=101, async_=False)
        model = torch.nn.Linear(2, 2)
        mgr.track(model, torch.optim.SGD(model.parameters(), lr=0.1), config={})
        assert mgr.maybe_save(s)
    stale_listing(tmp_path, [100])
    again = ck.CheckpointManager(tmp_path, interval=10, keep=5, total_steps=101)
    assert again.latest()["step"] == 100


@pytest.mark.parametrize("text", ['{"world_size": 2, "total_steps": 100}', '["step"]', "{}"])
def test_a_marker_without_a_step_is_unreadable_and_the_previous_step_is_used(tmp_path, text):
    committed(tmp_path, [10, 20])
    (tmp_path / "step_00000020" / "commit.json").write_text(text)
    assert ck.read_commit(tmp_path / "step_00000020") is None
    assert ck.verify(tmp_path / "step_00000020") == "commit.json is unreadable"


def save(folder: Path, state: dict) -> Path:
    """One committed step as CheckpointManager writes it: DCP through BlobWriter, then the marker."""
    dcp.save(state, storage_writer=ck.BlobWriter(folder), no_dist=True)
    ck.write_commit(folder, {"step": 1})
    return folder / "__0_0.distcp"


def test_a_shard_one_byte_short_is_truncated_and_a_whole_one_is_complete(tmp_path):
    """DCP's metadata records each item's byte range (offset, length); the shard must reach the end of
    the last one. Exactly that size is complete; one byte less is not."""
    shard = save(tmp_path / "s", {"w": torch.arange(1000, dtype=torch.float32), "b": torch.ones(7)})
    size = shard.stat().st_size
    assert size >= 1007 * 4 and ck.verify(tmp_path / "s") is None
    shard.write_bytes(shard.read_bytes()[:-1])
    assert ck.verify(tmp_path / "s") == f"shard __0_0.distcp is truncated ({size - 1} of {size} bytes)"


def test_a_failed_save_names_each_failed_rank_in_rank_order_without_stacks():
    """DCP's CheckpointException (torch/distributed/checkpoint/api.py) maps rank -> (exception, stack)."""
    try:
        raise OSError(5, "Input/output error")
    except OSError as e:
        io = _wrap_exception(e)
    e = CheckpointException("save failed", {3: (ValueError("bad plan"), None), 1: io})
    assert ck.failure_text(e) == "rank 1: OSError: [Errno 5] Input/output error; rank 3: ValueError: bad plan"


def test_a_failure_without_per_rank_failures_is_its_type_and_message():
    """No rank recorded (an empty mapping), or a `failures` of another shape: the exception itself."""
    empty = CheckpointException("save failed", {})
    assert ck.failure_text(empty) == f"CheckpointException: {empty}"
    other = RuntimeError("three writers failed")
    other.failures = ["w1", "w2", "w3"]  # type: ignore[attr-defined]
    assert ck.failure_text(other) == "RuntimeError: three writers failed"
    assert (
        ck.failure_text(OSError(28, "No space left on device"))
        == "OSError: [Errno 28] No space left on device"
    )


# --- what a user sees: resume lines, latest(), where and how long a save runs -------------------------------


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


# --- StopRequest in this process ----------------------------------------------------------------------------


@pytest.fixture
def handlers():
    """The SIGTERM and SIGINT handlers as they were before the test."""
    saved = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    yield
    for s, h in saved.items():
        signal.signal(s, h)


def test_no_signal_no_stop(handlers):
    stop = ck.StopRequest((signal.SIGTERM, signal.SIGINT))
    assert not stop.requested and stop.signum is None and not stop.agreed(None)


def test_one_sigterm_is_a_stop_request_naming_it(handlers):
    stop = ck.StopRequest((signal.SIGTERM, signal.SIGINT))
    os.kill(os.getpid(), signal.SIGTERM)
    assert stop.requested and stop.signum == signal.SIGTERM and stop.agreed(None)


def test_a_sigterm_forwarded_after_a_ctrl_c_keeps_the_ctrl_c_as_the_reason(handlers):
    stop = ck.StopRequest((signal.SIGTERM, signal.SIGINT))
    os.kill(os.getpid(), signal.SIGINT)
    os.kill(os.getpid(), signal.SIGTERM)  # another signal, not the same one twice: still alive
    assert stop.requested and stop.signum == signal.SIGINT

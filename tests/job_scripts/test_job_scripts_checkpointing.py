"""checkpointing.py in-process: DCP writes, our commit marker last, incomplete steps skipped, retention, stop.

One process (DCP without a process group); the multi-rank behaviour (shards, a rank whose write fails,
resharding) runs for real in test_job_scripts_train.py.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import torch
from jobscripts_util import PY, SRC

sys.path.insert(0, str(SRC))
import checkpointing as ck  # noqa: E402


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

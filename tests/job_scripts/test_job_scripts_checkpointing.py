"""checkpointing.py in-process: marker written last, damaged ones skipped, snapshots, RNG, retention."""

from __future__ import annotations

import random
import sys
import threading
import time

import numpy as np
import pytest
import torch
from jobscripts_util import SRC

sys.path.insert(0, str(SRC))
import checkpointing as ck  # noqa: E402


def state(step: int) -> dict:
    g = torch.Generator().manual_seed(step)
    return {"model": {"w": torch.randn(64, 64, generator=g)}, "step": step, "rng": [ck.rng_state()]}


def test_save_writes_the_file_under_its_name_then_a_matching_marker(tmp_path):
    path = tmp_path / ck.checkpoint_name(7)
    digest = ck.save_checkpoint(state(7), path)
    assert path.name == "step_00000007.pt"
    assert (tmp_path / "step_00000007.pt.sha256").read_text() == f"{digest}  step_00000007.pt\n"
    assert ck.verify(path) is None
    assert ck.load(path)["step"] == 7
    assert not list(tmp_path.glob("*.tmp"))


@pytest.mark.parametrize("damage", ["truncate", "flip", "no-marker"])
def test_damaged_newest_checkpoint_is_skipped_with_a_warning_naming_it(tmp_path, damage):
    for step in (10, 20, 30):
        ck.save_checkpoint(state(step), tmp_path / ck.checkpoint_name(step))
    newest = tmp_path / "step_00000030.pt"
    data = newest.read_bytes()
    if damage == "truncate":
        newest.write_bytes(data[: len(data) // 2])
    elif damage == "flip":  # one bit in the middle of the tensor data: a zip reader may not notice
        i = len(data) // 2
        newest.write_bytes(data[:i] + bytes([data[i] ^ 1]) + data[i + 1 :])
    else:
        (tmp_path / "step_00000030.pt.sha256").unlink()
    warnings: list[str] = []
    found = ck.resume_state(tmp_path, log=warnings.append)
    assert found is not None
    loaded, path = found
    assert path.name == "step_00000020.pt" and loaded["step"] == 20
    assert torch.equal(loaded["model"]["w"], state(20)["model"]["w"])
    assert (
        len(warnings) == 1
        and "step_00000030.pt" in warnings[0]
        and "skipping damaged checkpoint" in warnings[0]
    )
    assert ck.latest_complete(tmp_path, log=lambda m: None).name == "step_00000020.pt"


def test_no_checkpoint_means_fresh_start(tmp_path):
    assert ck.resume_state(tmp_path / "missing") is None
    assert ck.resume_state(tmp_path) is None
    assert ck.resume_state(None) is None


def test_async_save_snapshots_at_the_call_and_keeps_the_newest_k(tmp_path):
    saver = ck.AsyncCheckpointer(tmp_path, keep=2)
    w = torch.zeros(256, 256)
    for step in (1, 2, 3, 4):
        w.fill_(step)
        saver.save({"model": {"w": w}, "step": step}, step)
        w.fill_(-1.0)  # training goes on mutating in place while the write runs
    saver.close()
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == [
        "step_00000003.pt",
        "step_00000003.pt.sha256",
        "step_00000004.pt",
        "step_00000004.pt.sha256",
    ]
    for step in (3, 4):
        assert torch.all(ck.load(tmp_path / ck.checkpoint_name(step))["model"]["w"] == step)


def test_save_returns_before_the_write_finishes(tmp_path, monkeypatch):
    """The training thread is blocked only for the snapshot: hold the writer and time save()."""
    release = threading.Event()
    real = ck.save_checkpoint

    def slow_save(obj, path):  # stands in for slow storage (a blob mount)
        release.wait(10)
        return real(obj, path)

    monkeypatch.setattr(ck, "save_checkpoint", slow_save)
    saver = ck.AsyncCheckpointer(tmp_path, keep=3)
    t0 = time.perf_counter()
    blocked = saver.save(state(1), 1)
    assert time.perf_counter() - t0 < 2 and blocked < 2
    assert not (tmp_path / "step_00000001.pt").exists()  # still being written
    release.set()
    saver.close()
    assert ck.verify(tmp_path / "step_00000001.pt") is None


def test_failed_background_write_is_raised_on_the_training_thread(tmp_path):
    saver = ck.AsyncCheckpointer(tmp_path / "ckpt", keep=1)
    (tmp_path / "ckpt").rmdir()
    (tmp_path / "ckpt").write_text("a file where the folder was")
    saver.save(state(1), 1)
    with pytest.raises(ck.CheckpointError, match="writing a checkpoint to .*ckpt failed"):
        saver.wait()


def test_stale_temp_files_of_the_old_rename_protocol_are_removed(tmp_path):
    (tmp_path / "step_00000005.pt.tmp").write_bytes(b"half a checkpoint")
    ck.AsyncCheckpointer(tmp_path)
    assert not list(tmp_path.glob("*.tmp"))


def test_rng_state_round_trips_through_a_checkpoint(tmp_path):
    random.seed(1)
    np.random.seed(2)
    torch.manual_seed(3)
    ck.save_checkpoint({"rng": [ck.rng_state()]}, tmp_path / "step_00000001.pt")
    expected = (random.random(), float(np.random.rand()), torch.rand(3))
    random.seed(99)
    np.random.seed(99)
    torch.manual_seed(99)
    ck.set_rng_state(ck.load(tmp_path / "step_00000001.pt")["rng"][0])
    got = (random.random(), float(np.random.rand()), torch.rand(3))
    assert got[:2] == expected[:2] and torch.equal(got[2], expected[2])


def _names(folder) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_retention_counts_complete_checkpoints_only_and_spares_newer_leftovers(tmp_path):
    """keep=2: complete 10, 20, 30; incomplete 15 and 25 (killed writes); 40 a marker-less leftover of a
    run that got further; 30 just written. Only complete ones count; nothing newer than 30 goes."""
    for step in (10, 20, 30):
        ck.save_checkpoint(state(step), tmp_path / ck.checkpoint_name(step))
    (tmp_path / ck.checkpoint_name(15)).write_bytes(b"half")
    (tmp_path / ck.checkpoint_name(25)).write_bytes(b"half")
    (tmp_path / "step_00000005.pt.sha256").write_text("0  step_00000005.pt\n")  # marker whose .pt was deleted
    (tmp_path / ck.checkpoint_name(40)).write_bytes(b"half")
    deleted = ck.prune(tmp_path, keep=2, newest=30)
    assert sorted(p.name for p in deleted) == [
        "step_00000005.pt.sha256", "step_00000010.pt", "step_00000010.pt.sha256", "step_00000015.pt",
        "step_00000025.pt"]
    assert _names(tmp_path) == ["step_00000020.pt", "step_00000020.pt.sha256", "step_00000030.pt",
                                "step_00000030.pt.sha256", "step_00000040.pt"]


def test_retention_never_deletes_the_last_good_checkpoint(tmp_path):
    """The newest *files* are incomplete (keep=1): retention by file name would delete step 10, the only
    good one. Counting complete checkpoints keeps it; the incomplete ones older than it go."""
    ck.save_checkpoint(state(10), tmp_path / ck.checkpoint_name(10))
    (tmp_path / ck.checkpoint_name(4)).write_bytes(b"half")
    for step in (11, 12):
        (tmp_path / ck.checkpoint_name(step)).write_bytes(b"half")
    ck.prune(tmp_path, keep=1, newest=10)
    assert _names(tmp_path) == ["step_00000010.pt", "step_00000010.pt.sha256", "step_00000011.pt",
                                "step_00000012.pt"]
    assert ck.latest_complete(tmp_path, log=lambda m: None).name == "step_00000010.pt"


def test_rewriting_a_step_drops_its_marker_before_touching_the_file(tmp_path, monkeypatch):
    """A resume from an older checkpoint rewrites newer steps: mid-rewrite the step must read incomplete."""
    path = tmp_path / ck.checkpoint_name(3)
    ck.save_checkpoint(state(3), path)
    seen = []
    real_save = torch.save

    def spy(obj, f):
        seen.append(ck.verify(path))
        real_save(obj, f)

    monkeypatch.setattr(torch, "save", spy)
    ck.save_checkpoint(state(33), path)
    assert seen == ["no .sha256 completion marker (its write was interrupted)"]
    assert ck.verify(path) is None and ck.load(path)["step"] == 33

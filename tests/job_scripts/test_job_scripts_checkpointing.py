"""checkpointing.py in-process: marker written last, damaged ones skipped, snapshots, RNG, retention."""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
import torch
from jobscripts_util import PY, SRC

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
        "step_00000005.pt.sha256",
        "step_00000010.pt",
        "step_00000010.pt.sha256",
        "step_00000015.pt",
        "step_00000025.pt",
    ]
    assert _names(tmp_path) == [
        "step_00000020.pt",
        "step_00000020.pt.sha256",
        "step_00000030.pt",
        "step_00000030.pt.sha256",
        "step_00000040.pt",
    ]


def test_retention_never_deletes_the_last_good_checkpoint(tmp_path):
    """The newest *files* are incomplete (keep=1): retention by file name would delete step 10, the only
    good one. Counting complete checkpoints keeps it; the incomplete ones older than it go."""
    ck.save_checkpoint(state(10), tmp_path / ck.checkpoint_name(10))
    (tmp_path / ck.checkpoint_name(4)).write_bytes(b"half")
    for step in (11, 12):
        (tmp_path / ck.checkpoint_name(step)).write_bytes(b"half")
    ck.prune(tmp_path, keep=1, newest=10)
    assert _names(tmp_path) == [
        "step_00000010.pt",
        "step_00000010.pt.sha256",
        "step_00000011.pt",
        "step_00000012.pt",
    ]
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


# ----------------------------------------------------------------------------- CheckpointManager


def tiny() -> tuple[torch.nn.Module, torch.optim.Optimizer]:
    model = torch.nn.Linear(8, 8)
    return model, torch.optim.AdamW(model.parameters(), lr=0.1)


def train_step(model: torch.nn.Module, opt: torch.optim.Optimizer) -> None:
    model(torch.ones(2, 8)).sum().backward()
    opt.step()
    opt.zero_grad()


def test_manager_saves_on_the_interval_the_last_step_and_when_forced(tmp_path):
    m = ck.CheckpointManager(tmp_path, interval=3, keep=10, total_steps=10)
    assert [s for s in range(1, 11) if m.should_save(s)] == [3, 6, 9, 10]
    assert m.should_save(5, force=True) and not m.should_save(5)
    model, opt = tiny()
    assert m.restore(model, opt, config={"n_layer": 1}) == 0  # empty folder: a fresh start
    saved = [s for s in range(1, 11) if m.maybe_save(s, force=s == 4)]
    m.close()
    assert saved == [3, 4, 6, 9, 10]
    assert sorted(p.name for p in tmp_path.glob("*.pt")) == [ck.checkpoint_name(s) for s in saved]
    assert all(ck.verify(p) is None for p in tmp_path.glob("*.pt"))


def test_manager_restores_weights_optimizer_rng_and_step_and_keeps_the_newest_k(tmp_path):
    model, opt = tiny()
    m = ck.CheckpointManager(tmp_path, interval=2, keep=2, total_steps=6)
    m.restore(model, opt, config={"n_layer": 1})
    for step in range(1, 7):
        train_step(model, opt)
        m.fence()
        m.maybe_save(step)
    m.close()
    expected_rng = torch.rand(3)  # what the RNG draws next after step 6's checkpoint
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "step_00000004.pt",
        "step_00000004.pt.sha256",
        "step_00000006.pt",
        "step_00000006.pt.sha256",
    ]
    torch.manual_seed(99)
    logs: list[str] = []
    again, opt2 = tiny()
    m2 = ck.CheckpointManager(tmp_path, interval=2, keep=2, total_steps=8, log=logs.append)
    assert m2.latest()["config"] == {"n_layer": 1} and m2.path == tmp_path / "step_00000006.pt"
    assert m2.restore(again, opt2, config={"n_layer": 1}) == 6
    assert torch.equal(torch.rand(3), expected_rng)
    assert all(
        torch.equal(a, b)
        for a, b in zip(model.state_dict().values(), again.state_dict().values(), strict=True)
    )
    assert opt2.state_dict()["state"][0]["step"] == 6
    assert logs == [
        f"warning: {tmp_path / 'step_00000006.pt'} belongs to a run of --steps 6, this one has --steps 8: "
        "the learning-rate schedule differs from an uninterrupted run",
        f"resumed from {tmp_path / 'step_00000006.pt'} at step 6",
    ]


def test_manager_without_a_folder_does_nothing(tmp_path):
    m = ck.CheckpointManager(None, interval=1, keep=1, total_steps=3)
    model, opt = tiny()
    assert not m.enabled and m.latest() is None and m.restore(model, opt, config={}) == 0
    assert not m.should_save(1, force=True) and not m.maybe_save(1, force=True) and m.fence() == 0.0
    m.close()


def test_manager_refuses_to_save_before_restore_tracked_the_model(tmp_path):
    m = ck.CheckpointManager(tmp_path, interval=1, keep=1, total_steps=3)
    with pytest.raises(RuntimeError, match="maybe_save before restore"):
        m.maybe_save(1)


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


# ----------------------------------------------------------------------------- shards (W ranks write)


def big_state() -> dict:
    model, opt = tiny()
    train_step(model, opt)
    return {"model": model.state_dict(), "optimizer": opt.state_dict(), "step": 1, "rng": [ck.rng_state()]}


def write_sharded(state: dict, folder, step: int, world: int) -> None:
    """What W ranks' AsyncCheckpointer._write_shard do, one after another in this process."""
    path = folder / ck.checkpoint_name(step)
    for rank in range(world):
        skeleton, leaves = ck.shard_of(state, rank, world)
        ck.save_checkpoint({"leaves": leaves}, path.with_name(ck.shard_name(step, rank, world)))
    ck.save_manifest(ck.shard_of(state, 0, world)[0], path, world)


def assert_same(a, b) -> None:
    if isinstance(a, torch.Tensor):
        assert torch.equal(a, b)
    elif isinstance(a, dict):
        assert list(a) == list(b)
        for k in a:
            assert_same(a[k], b[k])
    elif isinstance(a, list | tuple):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            assert_same(x, y)
    else:
        assert a == b


def test_partition_balances_bytes_and_depends_only_on_sizes_and_count():
    assert ck.partition([100, 10, 60, 50], 2) == [0, 0, 1, 1]  # 100+10 | 60+50
    assert ck.partition([5, 5, 5], 3) == [0, 1, 2]
    assert ck.partition([7, 3], 1) == [0, 0]
    sizes = [random.Random(1).randrange(1, 1000) for _ in range(50)]
    owner = ck.partition(sizes, 4)
    load = [sum(s for s, o in zip(sizes, owner, strict=True) if o == r) for r in range(4)]
    assert max(load) - min(load) <= max(sizes) and owner == ck.partition(sizes, 4)


def test_shards_are_disjoint_their_union_is_the_state_and_load_joins_them(tmp_path):
    st = big_state()
    _, leaves = ck.split_state(st)
    parts = [ck.shard_of(st, r, 3)[1] for r in range(3)]
    assert all(parts) and sorted(i for p in parts for i in p) == list(range(len(leaves)))
    write_sharded(st, tmp_path, 5, 3)
    path = tmp_path / ck.checkpoint_name(5)
    assert ck.verify(path) is None
    assert (tmp_path / "step_00000005.pt.sha256").read_text().endswith("  step_00000005.pt  shards=3\n")
    assert_same(ck.load(path), st)
    single = tmp_path / "single" / ck.checkpoint_name(5)  # today's one-file format loads the same
    single.parent.mkdir()
    ck.save_checkpoint(st, single)
    assert_same(ck.load(single), ck.load(path))


@pytest.mark.parametrize("damage", ["marker", "file", "bytes"])
def test_a_step_with_an_incomplete_shard_is_skipped_for_the_previous_complete_one(tmp_path, damage):
    write_sharded(big_state(), tmp_path, 10, 2)
    write_sharded(big_state(), tmp_path, 20, 2)
    shard = tmp_path / ck.shard_name(20, 1, 2)
    if damage == "marker":
        ck.marker_of(shard).unlink()
    elif damage == "file":
        shard.unlink()
    else:
        shard.write_bytes(shard.read_bytes()[:100])
    warnings: list[str] = []
    state, path = ck.resume_state(tmp_path, log=warnings.append)
    assert path.name == "step_00000010.pt" and state["step"] == 1
    reason = {
        "marker": "no .sha256 completion marker (its write was interrupted)",
        "file": "its .sha256 marker is there but the .pt is not",
        "bytes": "sha256 mismatch (truncated or corrupt)",
    }[damage]
    assert warnings == [
        f"warning: skipping damaged checkpoint {tmp_path / 'step_00000020.pt'}: "
        f"shard step_00000020.pt.shard-00001-of-00002: {reason}"
    ]


def test_retention_deletes_whole_sharded_steps_manifest_first(tmp_path):
    for step in (10, 20, 30):
        write_sharded(big_state(), tmp_path, step, 2)
    (tmp_path / ck.shard_name(25, 0, 2)).write_bytes(b"a shard whose step never completed")
    deleted = ck.prune(tmp_path, keep=1, newest=30)
    assert [p.name for p in deleted][:2] == ["step_00000010.pt.sha256", "step_00000010.pt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "step_00000030.pt",
        "step_00000030.pt.sha256",
        "step_00000030.pt.shard-00000-of-00002",
        "step_00000030.pt.shard-00000-of-00002.sha256",
        "step_00000030.pt.shard-00001-of-00002",
        "step_00000030.pt.shard-00001-of-00002.sha256",
    ]

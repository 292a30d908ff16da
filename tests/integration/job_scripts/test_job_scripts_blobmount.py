"""The rw_mount double (localml.blobfs, a real FUSE mount) and the checkpoint protocol on it.

First what the double does, each as blobfuse2 does it (doubles/localml/blobfs.py cites the source of each);
then checkpointing.py (DCP with our commit marker) on it: no rename, no fsync, a stale listing, a writer
killed mid-write, a node lost mid-upload, the unmount timeout.
"""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import threading
import time

import checkpointing as ck
import pytest
import torch

from doubles.localml.mount import BlobMount, MountOptions
from tests.jobs.jobs_util import PY, REPO, SRC, base_env

from .jobscripts_util import track, wait_for


@pytest.fixture
def mounts(tmp_path):
    """mount(name, **options): a blobfs mount of tmp_path/store (one per 'node'); all gone after the test."""
    made: list[BlobMount] = []

    def mount(name: str, **options) -> BlobMount:
        m = BlobMount(tmp_path / "store", tmp_path / name, tmp_path / f"{name}-work", MountOptions(**options))
        made.append(m.start())
        return m

    yield mount
    for m in made:
        m.lose()


def _ls(folder) -> list[str]:
    return sorted(os.listdir(folder))


# --- the double ---------------------------------------------------------------------------------


def test_data_reaches_storage_at_close_and_fsync_does_not_upload(mounts, tmp_path):
    a = mounts("a")
    store = tmp_path / "store"
    with open(a.mountpoint / "f.bin", "wb") as f:
        f.write(b"x" * 100_000)
        f.flush()
        os.fsync(f.fileno())  # file_cache.go SyncFile without sync-to-flush: nothing reaches storage
        assert _ls(store) == [] and _ls(a.mountpoint) == ["f.bin"]  # but the writer sees its own file
        fd = os.open(a.mountpoint, os.O_RDONLY)
        os.fsync(fd)  # directory fsync: nothing
        os.close(fd)
        assert _ls(store) == []
    assert (store / "f.bin").read_bytes() == b"x" * 100_000
    counts = a.state()["counts"]
    assert counts["fsync"] == 1 and counts["fsyncdir"] == 1 and counts["upload"] == 1


def test_sync_to_flush_makes_fsync_upload(mounts, tmp_path):
    a = mounts("a", sync_to_flush=True)
    with open(a.mountpoint / "f.bin", "wb") as f:
        f.write(b"y" * 1000)
        f.flush()
        os.fsync(f.fileno())
        assert (tmp_path / "store" / "f.bin").read_bytes() == b"y" * 1000


def test_rename_is_a_copy_then_a_delete_that_a_node_loss_interrupts(mounts, tmp_path):
    a = mounts("a", rename_pause=30)
    store = tmp_path / "store"
    (a.mountpoint / "src.bin").write_bytes(b"z" * 50_000)
    renamer = track(
        subprocess.Popen(
            [
                PY,
                "-c",
                f"import os; os.rename({str(a.mountpoint / 'src.bin')!r}, {str(a.mountpoint / 'dst.bin')!r})",
            ]
        )
    )
    wait_for(lambda: a.state().get("renaming", {}).get("/src.bin") == "copied", 30, "the copy of the rename")
    a.lose()  # the node goes between the copy and the delete (block_blob.go RenameFile)
    renamer.wait(timeout=30)
    assert _ls(store) == ["dst.bin", "src.bin"]
    assert (store / "dst.bin").read_bytes() == (store / "src.bin").read_bytes()


def test_rename_can_fail_outright(mounts):
    a = mounts("a", rename="fail")
    (a.mountpoint / "src.bin").write_bytes(b"1")
    with pytest.raises(OSError) as err:
        os.rename(a.mountpoint / "src.bin", a.mountpoint / "dst.bin")
    assert err.value.errno == errno.EIO and _ls(a.mountpoint) == ["src.bin"]


def test_another_node_sees_a_stale_listing_and_stale_absence(mounts):
    writer, reader = mounts("writer"), mounts("reader", attr_timeout=3, list_timeout=3)
    assert _ls(reader.mountpoint) == [] and not (reader.mountpoint / "new.bin").exists()
    (writer.mountpoint / "new.bin").write_bytes(b"n")
    assert _ls(writer.mountpoint) == ["new.bin"]
    assert _ls(reader.mountpoint) == []  # cached listing
    assert not (reader.mountpoint / "new.bin").exists()  # cached "does not exist" (negative entry)
    (writer.mountpoint / "other.bin").write_bytes(b"o")
    assert (reader.mountpoint / "other.bin").exists()  # a name never asked about goes to storage
    time.sleep(3.5)
    assert _ls(reader.mountpoint) == ["new.bin", "other.bin"]


def _writer(folder, mb: int, step: int) -> subprocess.Popen:
    """A process that checkpoints `mb` MB of weights as step `step` in `folder`, through CheckpointManager
    (DCP's writer, then the commit marker), the way train.py does at a stop."""
    code = (
        f"import sys, torch; sys.path.insert(0, {str(SRC)!r}); import checkpointing as ck\n"
        f"m = torch.nn.Linear({mb} * 256, 1024, bias=False); opt = torch.optim.SGD(m.parameters(), lr=0.1)\n"
        f"c = ck.CheckpointManager({str(folder)!r}, interval=1000, keep=3, total_steps=1000)\n"
        f"c.track(m, opt, config={{}}); c.maybe_save({step}, force=True); c.close()\n"
    )
    return track(subprocess.Popen([PY, "-c", code], env=base_env()))


def _files(store) -> list[str]:
    """Every blob in the store (uploads not yet committed are hidden names, not blobs)."""
    return sorted(
        str(p.relative_to(store)) for p in store.rglob("*") if p.is_file() and ".blobfs-" not in p.name
    )


def test_a_writer_killed_mid_write_leaves_a_partial_file_without_marker(mounts, tmp_path):
    """The kernel closes a killed process's files, so blobfs uploads what it had: a partial shard, and
    no .metadata or commit marker after it."""
    a = mounts("a")
    assert _writer(a.mountpoint, mb=1, step=3).wait(timeout=120) == 0
    target = a.mountpoint / ck.step_name(7)
    proc = _writer(a.mountpoint, mb=400, step=7)
    cache = a.workdir / "cache" / target.name / "__0_0.distcp"
    wait_for(
        lambda: (
            "/step_00000007/__0_0.distcp" in a.state().get("writing", [])
            and cache.exists()
            and cache.stat().st_size > 10_000_000
        ),
        60,
        "the write under way",
    )
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    store = tmp_path / "store"
    wait_for(
        lambda: (store / target.name / "__0_0.distcp").exists() and not a.state().get("uploading"),
        60,
        "the partial upload",
    )
    assert 0 < (store / target.name / "__0_0.distcp").stat().st_size < 400 * 2**20
    assert sorted(os.listdir(store / target.name)) == ["__0_0.distcp"]
    warnings: list[str] = []
    assert ck.choose(a.mountpoint, log=warnings.append) == a.mountpoint / ck.step_name(3)
    assert warnings == [
        f"warning: skipping incomplete checkpoint {target}: no commit.json marker (its save did not finish)"
    ]


def test_a_node_lost_mid_upload_leaves_nothing_and_unmount_gives_pending_uploads_the_timeout(
    mounts, tmp_path
):
    store = tmp_path / "store"
    # Node lost during the upload inside close(): the blob never commits.
    a = mounts("a", upload_rate=20e6)
    proc = _writer(a.mountpoint, mb=40, step=1)
    shard = "/step_00000001/__0_0.distcp"
    wait_for(lambda: a.state().get("uploading", {}).get(shard, 0) > 0, 60, "the upload")
    a.lose()
    proc.kill()
    proc.wait(timeout=30)
    assert _files(store) == []
    # Job end while a close() is still uploading: unmount gives it at most the timeout, then stops the
    # mount, and the writer's close() fails. (A process killed inside close() is not gone: the kernel waits
    # for the FUSE flush, so the upload is still "pending" with a live writer.) 40 MB at 20 MB/s: 2 s.
    for timeout, finished in ((0.5, False), (30, True)):
        m = mounts(f"m{timeout}", upload_rate=20e6)
        target = m.mountpoint / f"raw{int(timeout)}.bin"
        code = f"with open({str(target)!r}, 'wb') as f: f.write(b'x' * 40_000_000)"  # close() reports errors
        proc = track(subprocess.Popen([PY, "-c", code], stderr=subprocess.PIPE))
        wait_for(
            lambda m=m, t=target: m.state().get("uploading", {}).get(f"/{t.name}", 0) > 0, 60, "the upload"
        )
        assert m.unmount(timeout_s=timeout) is finished
        assert (proc.wait(timeout=30) == 0) is finished
        assert (store / target.name).exists() is finished
        if finished:
            assert (store / target.name).stat().st_size == 40_000_000


# --- the checkpoint protocol on the mount -------------------------------------------------------


def _manager(root, keep: int = 5) -> tuple[ck.CheckpointManager, torch.nn.Module]:
    model = torch.nn.Linear(64, 8, bias=False)
    mgr = ck.CheckpointManager(root, interval=10, keep=keep, total_steps=100)
    mgr.restore(model, torch.optim.AdamW(model.parameters()), config={"n": 64})
    return mgr, model


def _save(mgr: ck.CheckpointManager, model: torch.nn.Module, step: int) -> None:
    with torch.no_grad():
        model.weight.fill_(float(step))
    assert mgr.maybe_save(step, force=True)


def test_checkpoints_never_rename_or_fsync_and_survive_a_mount_where_rename_fails(mounts, tmp_path):
    """DCP's own writer would write .metadata.tmp and rename it; ours does neither, nor fsync."""
    a = mounts("a", rename="fail")
    mgr, model = _manager(a.mountpoint, keep=2)
    for step in (1, 2, 3):
        _save(mgr, model, step)
    mgr.close()
    counts = a.state()["counts"]
    assert counts["rename"] == 0 and counts["fsync"] == 0 and counts["fsyncdir"] == 0
    assert _files(tmp_path / "store") == [
        f"{s}/{f}"
        for s in ("step_00000002", "step_00000003")
        for f in (".metadata", "__0_0.distcp", "commit.json")
    ]
    again, restored = _manager(a.mountpoint)
    assert again.path == a.mountpoint / "step_00000003" and torch.all(restored.weight == 3.0)


def test_resume_on_a_node_with_a_stale_listing_finds_the_newest_by_name(mounts):
    """The reader listed the folder before the newest checkpoints were written: its listing lacks them."""
    writer, reader = mounts("writer"), mounts("reader")
    mgr, model = _manager(writer.mountpoint)
    _save(mgr, model, 10)
    assert ck.choose(reader.mountpoint) == reader.mountpoint / "step_00000010"  # lists, caches the listing
    for step in (20, 30):
        _save(mgr, model, step)
    mgr.close()
    assert _ls(reader.mountpoint) == ["step_00000010"]  # stale
    assert ck.choose(reader.mountpoint) == reader.mountpoint / "step_00000010"  # tolerated: an older one
    found = ck.choose(reader.mountpoint, probe=range(10, 101, 10))  # the scheduled steps, by name
    assert found == reader.mountpoint / "step_00000030"
    _, restored = _manager(reader.mountpoint)  # the manager probes its own schedule: 10, 20, ..., 100
    assert torch.all(restored.weight == 30.0)


def test_train_killed_mid_checkpoint_on_the_mount_resumes_to_the_same_weights(mounts, tmp_path):
    """One process, synthetic data: a run killed during a checkpoint upload (node lost), resumed on a new
    node's mount, ends on the uninterrupted run's fingerprint."""
    args = [
        "--steps",
        "12",
        "--ckpt-every",
        "4",
        "--log-every",
        "1",
        "--n-embd",
        "128",
        "--vocab-size",
        "2048",
        "--block-size",
        "32",
        "--sync-ckpt",  # one write at a time, so "the upload of step 8" is a state the run passes through
    ]
    ref = subprocess.run(
        [PY, str(SRC / "train.py"), *args],
        env=base_env(),
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
    )
    assert ref.returncode == 0, ref.stderr
    node1 = mounts("node1", upload_rate=5e6)
    run = track(
        subprocess.Popen(
            [PY, str(SRC / "train.py"), *args, "--ckpt", str(node1.mountpoint)],
            env=base_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd=REPO,
        )
    )
    wait_for(
        lambda: node1.state().get("uploading", {}).get("/step_00000008/__0_0.distcp", 0) > 0,
        240,
        "the upload of step 8",
    )
    node1.lose()
    run.kill()
    run.wait(timeout=30)
    store = tmp_path / "store"
    assert "step_00000004/commit.json" in _files(store)
    assert not [f for f in _files(store) if f.startswith("step_00000008/")]
    node2 = mounts("node2")
    out = subprocess.run(
        [PY, str(SRC / "train.py"), *args, "--ckpt", str(node2.mountpoint)],
        env=base_env(),
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"resumed from {node2.mountpoint / 'step_00000004'} at step 4" in out.stdout
    assert out.stdout.splitlines()[-1] == ref.stdout.splitlines()[-1]
    assert out.stdout.splitlines()[-1].startswith("final parameters sha256: ")


def test_ranks_of_one_node_opening_the_same_blob_at_once_each_read_all_of_it(mounts, tmp_path):
    """A resume on a node of several ranks: each opens the same shard at the same moment. blobfuse2's file
    cache downloads a file once under a per-path lock and serves every handle from that copy
    (component/file_cache/file_cache.go OpenFile: `flock := fc.fileLocks.Get(name); flock.Lock()`), so no
    reader sees a copy another open is still writing or a release is deleting."""
    m = mounts("node")
    blob = tmp_path / "store" / "ckpt" / "shard.distcp"
    blob.parent.mkdir(parents=True)
    content = os.urandom(24 << 20)
    blob.write_bytes(content)
    for _ in range(3):
        start = threading.Barrier(6)
        read: list[bytes] = []

        def reader(start: threading.Barrier, read: list[bytes]) -> None:
            start.wait()
            with open(m.mountpoint / "ckpt" / "shard.distcp", "rb") as f:
                read.append(f.read())

        threads = [threading.Thread(target=reader, args=(start, read)) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        assert [len(r) for r in read] == [len(content)] * 6
        assert all(r == content for r in read)

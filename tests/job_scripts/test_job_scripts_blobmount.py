"""The rw_mount double (localml.blobfs, a real FUSE mount) and the checkpoint protocol on it.

First what the double does, each as blobfuse2 does it (localml/blobfs.py cites the source of each); then
checkpointing.py on it: no rename, no fsync, a stale listing, a writer killed mid-write, a node lost
mid-upload, the unmount timeout.
"""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import time

import pytest
import torch
from jobscripts_util import PY, REPO, SRC, base_env, track, wait_for

from localml.mount import BlobMount, MountOptions

sys.path.insert(0, str(SRC))
import checkpointing as ck  # noqa: E402


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


def _writer(path, mb: int) -> subprocess.Popen:
    """A process that checkpoints `mb` MB of tensors to `path` with checkpointing.save_checkpoint."""
    code = (
        f"import sys, torch; sys.path.insert(0, {str(SRC)!r}); import checkpointing as ck; "
        f"from pathlib import Path; ck.save_checkpoint({{'w': torch.ones({mb} * 262144), 'step': 7}}, "
        f"Path({str(path)!r}))"
    )
    return track(subprocess.Popen([PY, "-c", code], env=base_env()))


def test_a_writer_killed_mid_write_leaves_a_partial_file_without_marker(mounts, tmp_path):
    """The kernel closes a killed process's files, so blobfs uploads what it had: a partial file."""
    a = mounts("a")
    ck.save_checkpoint({"step": 3, "w": torch.zeros(10)}, a.mountpoint / ck.checkpoint_name(3))
    target = a.mountpoint / ck.checkpoint_name(7)
    proc = _writer(target, mb=400)
    wait_for(
        lambda: (
            "/step_00000007.pt" in a.state().get("writing", [])
            and (a.workdir / "cache" / target.name).exists()
            and (a.workdir / "cache" / target.name).stat().st_size > 10_000_000
        ),
        60,
        "the write under way",
    )
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    wait_for(
        lambda: (tmp_path / "store" / target.name).exists() and not a.state().get("uploading"),
        60,
        "the partial upload",
    )
    store = tmp_path / "store"
    assert 0 < (store / target.name).stat().st_size < 400 * 2**20
    assert not (store / f"{target.name}.sha256").exists()
    warnings: list[str] = []
    state, path = ck.resume_state(a.mountpoint, log=warnings.append)
    assert path.name == ck.checkpoint_name(3) and state["step"] == 3
    assert warnings == [
        f"warning: skipping damaged checkpoint {target}: no .sha256 completion marker "
        "(its write was interrupted)"
    ]


def test_a_node_lost_mid_upload_leaves_nothing_and_unmount_gives_pending_uploads_the_timeout(
    mounts, tmp_path
):
    store = tmp_path / "store"
    # Node lost during the upload inside close(): the blob never commits.
    a = mounts("a", upload_rate=20e6)
    proc = _writer(a.mountpoint / "step_00000001.pt", mb=40)
    wait_for(lambda: a.state().get("uploading", {}).get("/step_00000001.pt", 0) > 0, 60, "the upload")
    a.lose()
    proc.kill()
    proc.wait(timeout=30)
    assert [n for n in _ls(store) if not n.startswith(".")] == []
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


def test_checkpoints_never_rename_or_fsync_and_survive_a_mount_where_rename_fails(mounts, tmp_path):
    a = mounts("a", rename="fail")
    saver = ck.AsyncCheckpointer(a.mountpoint, keep=2)
    for step in (1, 2, 3):
        saver.save({"w": torch.full((64,), float(step)), "step": step}, step)
    saver.close()
    counts = a.state()["counts"]
    assert counts["rename"] == 0 and counts["fsync"] == 0 and counts["fsyncdir"] == 0
    assert _ls(tmp_path / "store") == [
        "step_00000002.pt",
        "step_00000002.pt.sha256",
        "step_00000003.pt",
        "step_00000003.pt.sha256",
    ]
    assert ck.resume_state(a.mountpoint)[0]["step"] == 3


def test_resume_on_a_node_with_a_stale_listing_finds_the_newest_by_name(mounts):
    """The reader listed the folder before the newest checkpoints were written: its listing lacks them."""
    writer, reader = mounts("writer"), mounts("reader")
    saver = ck.AsyncCheckpointer(writer.mountpoint, keep=5)
    saver.save({"step": 10}, 10)
    saver.close()
    assert ck.resume_state(reader.mountpoint)[0]["step"] == 10  # lists, and caches the listing
    for step in (20, 30):
        saver.save({"step": step}, step)
    saver.close()
    assert _ls(reader.mountpoint) == ["step_00000010.pt", "step_00000010.pt.sha256"]  # stale
    assert ck.resume_state(reader.mountpoint)[0]["step"] == 10  # tolerated: an older complete one
    state, path = ck.resume_state(reader.mountpoint, probe=range(10, 101, 10))  # the scheduled steps
    assert state["step"] == 30 and path == reader.mountpoint / "step_00000030.pt"


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
        lambda: node1.state().get("uploading", {}).get("/step_00000008.pt", 0) > 0,
        240,
        "the upload of step 8",
    )
    node1.lose()
    run.kill()
    run.wait(timeout=30)
    store = tmp_path / "store"
    assert "step_00000004.pt.sha256" in _ls(store) and "step_00000008.pt" not in _ls(store)
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
    assert f"resumed from {node2.mountpoint / 'step_00000004.pt'} at step 4" in out.stdout
    assert out.stdout.splitlines()[-1] == ref.stdout.splitlines()[-1]
    assert out.stdout.splitlines()[-1].startswith("final parameters sha256: ")

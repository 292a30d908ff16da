"""Start, stop and lose one emulated rw_mount (a ``doubles.localml.blobfs`` daemon): the runner's and tests'
handle.

    m = BlobMount(store, mountpoint, workdir, MountOptions(upload_rate=2e6)).start()
    ...                          # processes read and write under m.mountpoint
    m.unmount(timeout_s=30)      # job end: pending uploads get at most timeout_s
    m.lose()                     # or: the node is gone (SIGKILL of the daemon, like a VM loss)

Unmount follows Azure ML's documented contract: "Time in seconds for `unmount` to (gracefully) finish all
pending operations (for example, flush calls) before terminating the mount message loop forcefully"
(DATASET_UNMOUNT_TIMEOUT_SECONDS, default 30; MicrosoftDocs/azure-ai-docs
articles/machine-learning/how-to-read-write-data-v2.md, "Available mount settings").
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from doubles.localml.blobfs import BLOBFUSE2_TIMEOUT_S

ROOT = Path(__file__).resolve().parents[1]
#: Azure ML's default DATASET_UNMOUNT_TIMEOUT_SECONDS (how-to-read-write-data-v2.md).
DEFAULT_UNMOUNT_TIMEOUT_S = 30.0
START_TIMEOUT_S = 30.0


class MountError(RuntimeError):
    pass


@dataclass(frozen=True)
class MountOptions:
    """blobfuse2's defaults unless a test asks otherwise (see doubles/localml/blobfs.py for each source)."""

    attr_timeout: float = BLOBFUSE2_TIMEOUT_S
    list_timeout: float = BLOBFUSE2_TIMEOUT_S
    upload_rate: float = 0.0  # bytes/s; 0 = as fast as the disk
    rename: str = "copy-delete"  # or "fail"
    rename_pause: float = 0.0
    sync_to_flush: bool = False

    def argv(self) -> list[str]:
        out = [
            "--attr-timeout",
            str(self.attr_timeout),
            "--list-timeout",
            str(self.list_timeout),
            "--upload-rate",
            str(self.upload_rate),
            "--rename",
            self.rename,
            "--rename-pause",
            str(self.rename_pause),
        ]
        return out + (["--sync-to-flush"] if self.sync_to_flush else [])


def check_fuse() -> None:
    """Refuse clearly when this machine cannot mount FUSE 3 file systems."""
    missing = []
    if shutil.which("fusermount3") is None:
        missing.append("fusermount3 is not on PATH")
    if not os.path.exists("/dev/fuse"):
        missing.append("/dev/fuse does not exist")
    elif not os.access("/dev/fuse", os.R_OK | os.W_OK):
        missing.append("/dev/fuse is not readable and writable by this user")
    try:
        import mfusepy  # noqa: F401  (loads libfuse3.so.3)
    except (ImportError, OSError) as exc:
        missing.append(f"mfusepy cannot load libfuse 3 ({exc})")
    if missing:
        raise MountError(
            "localml emulates rw_mount outputs with a FUSE 3 file system, and "
            + "; ".join(missing)
            + ". Install the Debian package fuse3 (apt-get install -y fuse3: fusermount3, libfuse3.so.3), "
            "pip install -r requirements.txt (mfusepy), and run where /dev/fuse is available "
            "(a container needs --device /dev/fuse --cap-add SYS_ADMIN)"
        )


def _force_unmount(mountpoint: Path) -> None:
    subprocess.run(["fusermount3", "-u", "-z", str(mountpoint)], capture_output=True, timeout=30)


class BlobMount:
    """One blobfs daemon: `store` seen at `mountpoint`, with its cache and state under `workdir`."""

    def __init__(
        self, store: Path, mountpoint: Path, workdir: Path, options: MountOptions | None = None
    ) -> None:
        self.store, self.mountpoint, self.workdir = Path(store), Path(mountpoint), Path(workdir)
        self.options = options or MountOptions()
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = self.workdir / "blobfs.log"

    @property
    def state_dir(self) -> Path:
        return self.workdir / "state"

    def start(self) -> BlobMount:
        check_fuse()
        for folder in (self.store, self.mountpoint, self.workdir / "cache", self.state_dir):
            folder.mkdir(parents=True, exist_ok=True)
        argv = [
            sys.executable,
            "-m",
            "doubles.localml.blobfs",
            str(self.store),
            str(self.mountpoint),
            "--cache",
            str(self.workdir / "cache"),
            "--state",
            str(self.state_dir),
            *self.options.argv(),
        ]
        env = os.environ | {"PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
        with open(self.log, "ab") as out:
            # Its own session: a signal to the caller's process group (Ctrl-C, a test's kill) is not a
            # node loss; only lose() and unmount() stop it.
            self.proc = subprocess.Popen(
                argv, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True
            )
        deadline = time.monotonic() + START_TIMEOUT_S
        while not os.path.ismount(self.mountpoint):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.lose()
                raise MountError(f"blobfs did not mount {self.mountpoint}: {self.log.read_text()[-2000:]}")
            time.sleep(0.02)
        return self

    def state(self) -> dict[str, Any]:
        """Counts of uploads, renames, fsyncs and the uploads in flight, as the daemon last wrote them."""
        try:
            return json.loads((self.state_dir / "state.json").read_text())
        except (OSError, ValueError):
            return {}

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def unmount(self, timeout_s: float = DEFAULT_UNMOUNT_TIMEOUT_S) -> bool:
        """Job end: uploads, renames and closes still to come get up to `timeout_s`, then the daemon stops;
        whatever is still in flight then is lost. True when nothing was pending any more."""
        if self.proc is None:
            return True
        deadline = time.monotonic() + timeout_s
        while self.alive and self._pending() and time.monotonic() < deadline:
            time.sleep(0.02)
        drained = not self._pending()
        if self.proc.poll() is None:
            # Drained: a clean stop. Not drained: libfuse would finish the requests in flight, so the
            # daemon is killed instead; the kernel then fails the waiting close() (ENOTCONN).
            self.proc.send_signal(signal.SIGTERM if drained else signal.SIGKILL)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        _force_unmount(self.mountpoint)
        self.proc = None
        return drained

    def _pending(self) -> bool:
        state = self.state()  # "writing": files still open and dirty, whose close (upload) is still to come
        return bool(state.get("uploading") or state.get("renaming") or state.get("writing"))

    def lose(self) -> None:
        """The node is gone: the daemon dies at once, uploads in flight never commit."""
        if self.proc is not None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()
            self.proc.wait()
            self.proc = None
        _force_unmount(self.mountpoint)

    def __enter__(self) -> BlobMount:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.unmount()

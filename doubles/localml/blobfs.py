"""The rw_mount double: a FUSE file system with blobfuse2's semantics over a folder of blobs.

    python -m doubles.localml.blobfs STORE MOUNTPOINT --cache DIR --state DIR [options]   # foreground daemon

`STORE` is the blob namespace of the mount (the datastore folder of ``azureml://datastores/<ds>/paths/<p>``):
one file per blob. Each behaviour below follows Azure/azure-storage-fuse (blobfuse2) at the cited file and
function; where it differs, docs/localml.md says how.

- Writes are staged in a local cache file and reach the store only on flush/close, whole
  (component/file_cache/file_cache.go: CreateFile, WriteFile, FlushFile -> CopyFromFile, ReleaseFile).
  A new file does not exist in storage until then (CreateFile, createEmptyFile false); it is visible in
  the writer's own listing and stat (file_cache.go ReadDir / GetAttr "case 2"). An upload commits the
  whole blob at once (Put Block List), so a store never holds half an upload: an interrupted upload
  leaves the old blob or none. A process killed mid-write still has its file closed by the kernel, so
  what it wrote is flushed and uploaded: a partial file under its final name.
- fsync does nothing unless ``--sync-to-flush`` (file_cache.go SyncFile); directory fsync does nothing
  (file_cache.go SyncDir is commented out, component/azstorage does not implement it, so
  internal/base_component.go SyncDir returns nil).
- rename of a file is a copy then a delete, not atomic (component/azstorage/block_blob.go RenameFile:
  StartCopyFromURL, then DeleteFile). ``--rename-pause S`` holds between the two, so a node loss
  (SIGKILL of this daemon) leaves both names; ``--rename fail`` answers EIO, as renames on Azure ML
  outputs have failed (microsoft/hi-ml#258).
- Attributes, including "does not exist", are cached for ``--attr-timeout`` seconds (component/attr_cache/
  attr_cache.go GetAttr: positive and negative entries, defaultAttrCacheTimeout 120), and the kernel keeps
  entries, attributes and negative lookups as long (component/libfuse/libfuse.go defaultEntryExpiration,
  defaultAttrExpiration, defaultNegativeEntryExpiration, 120 s). Listings are cached per folder for
  ``--list-timeout`` seconds (blobfuse2's kernel list cache, component/libfuse/kernel_list_cache.go; Azure
  ML's data runtime caches attributes with no expiry by default, DATASET_MOUNT_ATTRIBUTE_CACHE_TTL in
  how-to-read-write-data-v2.md). A mount's own creates and deletes invalidate its caches; another mount
  of the same store (another node) keeps its stale view until the timeout.
- ``--upload-rate B`` limits uploads and copies to B bytes/s, so a test can stop a node in the middle.

The daemon writes ``<state>/state.json`` on every create, close, upload, rename, fsync and fsyncdir:
counts, files being written, uploads in flight; tests read it to stop a job "in the middle" of one.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import json
import logging
import os
import stat
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger("doubles.localml.blobfs")

#: Hidden names of uploads not yet committed (uncommitted blocks); never listed.
UPLOAD_PREFIX = ".blobfs-upload-"
CHUNK = 1 << 20
#: blobfuse2's default for every attribute / entry / negative timeout (attr_cache.go, libfuse.go).
BLOBFUSE2_TIMEOUT_S = 120.0


@dataclass
class Handle:
    path: str
    fd: int
    local: Path
    dirty: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)


class BlobFS:
    """The FUSE operations (mfusepy's high-level, path-based API)."""

    use_ns = True

    def __init__(
        self,
        store: Path,
        cache: Path,
        state: Path,
        attr_timeout: float,
        list_timeout: float,
        upload_rate: float,
        rename: str,
        rename_pause: float,
        sync_to_flush: bool,
    ) -> None:
        self.store, self.cache, self.state_dir = store, cache, state
        self.attr_timeout, self.list_timeout = attr_timeout, list_timeout
        self.upload_rate, self.rename_mode, self.rename_pause = upload_rate, rename, rename_pause
        self.sync_to_flush = sync_to_flush
        self.lock = threading.RLock()
        self.handles: dict[int, Handle] = {}
        self.next_fh = 1
        self.attrs: dict[str, tuple[float, dict[str, Any] | None]] = {}  # path -> (cached at, attrs | None)
        self.listings: dict[str, tuple[float, list[str]]] = {}  # folder -> (cached at, names)
        self.counts = {"upload": 0, "rename": 0, "fsync": 0, "fsyncdir": 0, "upload_failed": 0}
        self.uploading: dict[str, int] = {}  # blob path -> bytes sent
        self.renaming: dict[str, str] = {}  # source -> "copying" | "copied"
        # file_cache.go's fileLocks (common.LockMap): one lock per path, held by OpenFile while it downloads
        # and counts the handle (flock.Inc) and by CloseFile while it closes and uncounts it (flock.Dec), so
        # an open never serves a local copy another open is still writing or a close is deleting. Differs:
        # our release uploads under the lock; CloseFile flushes before taking it.
        self.path_locks: dict[str, threading.Lock] = {}
        self._write_state()

    # --- helpers -------------------------------------------------------------------------------

    def _blob(self, path: str) -> Path:
        return self.store / path.lstrip("/")

    def _local(self, path: str) -> Path:
        return self.cache / path.lstrip("/")

    def _write_state(self) -> None:
        with self.lock:
            body = {
                "pid": os.getpid(),
                "counts": dict(self.counts),
                "uploading": dict(self.uploading),
                "renaming": dict(self.renaming),
                "writing": sorted({h.path for h in self.handles.values() if h.dirty}),
            }
        tmp = self.state_dir / f"state.json.{threading.get_ident()}"
        tmp.write_text(json.dumps(body))
        os.replace(tmp, self.state_dir / "state.json")  # the double's own local bookkeeping, not the mount

    def _count(self, op: str) -> None:
        with self.lock:
            self.counts[op] += 1
        self._write_state()

    @staticmethod
    def _stat_dict(st: os.stat_result) -> dict[str, Any]:
        mode = (stat.S_IFDIR | 0o755) if stat.S_ISDIR(st.st_mode) else (stat.S_IFREG | 0o644)
        return {
            "st_mode": mode,
            "st_nlink": 2 if stat.S_ISDIR(st.st_mode) else 1,
            "st_size": st.st_size,
            "st_mtime": st.st_mtime_ns,
            "st_ctime": st.st_mtime_ns,
            "st_atime": st.st_mtime_ns,
            "st_uid": os.getuid(),
            "st_gid": os.getgid(),
        }

    def _invalidate(self, path: str) -> None:
        """This mount changed `path`: drop its cached attributes and its folder's listing."""
        with self.lock:
            self.attrs.pop(path, None)
            self.listings.pop(os.path.dirname(path) or "/", None)

    def _path_lock(self, path: str) -> threading.Lock:
        with self.lock:
            return self.path_locks.setdefault(path, threading.Lock())

    def _open_local(self, path: str) -> Handle | None:
        with self.lock:
            return next((h for h in self.handles.values() if h.path == path), None)

    def _transfer(self, src: Path, dst: Path, key: str) -> None:
        """Copy src to blob dst as one commit (Put Block List): a hidden temp, then one replace."""
        tmp = dst.with_name(f"{UPLOAD_PREFIX}{dst.name}.{os.getpid()}.{threading.get_ident()}")
        dst.parent.mkdir(parents=True, exist_ok=True)
        sent, t0 = 0, time.monotonic()
        try:
            with open(src, "rb") as fin, open(tmp, "wb") as fout:
                while chunk := fin.read(CHUNK):
                    fout.write(chunk)
                    sent += len(chunk)
                    with self.lock:
                        tracked = key in self.uploading
                        if tracked:
                            self.uploading[key] = sent
                    if tracked:
                        self._write_state()
                    if self.upload_rate > 0:
                        ahead = sent / self.upload_rate - (time.monotonic() - t0)
                        if ahead > 0:
                            time.sleep(ahead)
            os.replace(tmp, dst)
        finally:
            tmp.unlink(missing_ok=True)

    def _upload(self, h: Handle) -> None:
        """file_cache.go FlushFile: the whole local file to storage, when dirty."""
        if not h.dirty:
            return
        with self.lock:
            self.uploading[h.path] = 0
        self._write_state()
        try:
            self._transfer(h.local, self._blob(h.path), h.path)
            h.dirty = False
            self._count("upload")
        except OSError as exc:
            log.error("upload of %s failed: %s", h.path, exc)
            self._count("upload_failed")
            raise OSError(errno.EIO, f"upload of {h.path} failed") from exc
        finally:
            with self.lock:
                self.uploading.pop(h.path, None)
            self._invalidate(h.path)
            self._write_state()

    # --- metadata ------------------------------------------------------------------------------

    def getattr(self, path: str, fh: int | None = None) -> dict[str, Any]:
        # file_cache.go GetAttr: a file being written here is served from the local cache (case 2/3).
        h = self._open_local(path)
        if h is not None:
            return self._stat_dict(os.stat(h.local))
        now = time.monotonic()
        with self.lock:
            hit = self.attrs.get(path)
        if hit is not None and now - hit[0] < self.attr_timeout:  # attr_cache.go GetAttr, cache hit
            if hit[1] is None:
                raise OSError(errno.ENOENT, path)
            return hit[1]
        try:
            attrs = self._stat_dict(os.stat(self._blob(path)))
        except FileNotFoundError:
            with self.lock:
                self.attrs[path] = (now, None)  # attr_cache.go: cacheNegativeEntry
            raise OSError(errno.ENOENT, path) from None
        with self.lock:
            self.attrs[path] = (now, attrs)
        return attrs

    def readdir(self, path: str, fh: int) -> list[str]:
        now = time.monotonic()
        with self.lock:
            hit = self.listings.get(path)
        if hit is not None and now - hit[0] < self.list_timeout:
            names = list(hit[1])
        else:
            folder = self._blob(path)
            try:
                entries = [e for e in os.scandir(folder) if not e.name.startswith(UPLOAD_PREFIX)]
            except FileNotFoundError:
                raise OSError(errno.ENOENT, path) from None
            names = [e.name for e in entries]
            with self.lock:
                self.listings[path] = (now, names)
                for e in entries:  # attr_cache.go ReadDir: cache-on-list
                    with contextlib.suppress(FileNotFoundError):
                        self.attrs[os.path.join(path, e.name)] = (now, self._stat_dict(e.stat()))
            names = list(names)
        with self.lock:  # file_cache.go ReadDir case 2: files only in this node's local cache
            local = {
                os.path.basename(h.path) for h in self.handles.values() if os.path.dirname(h.path) == path
            }
        return [".", "..", *names, *sorted(local - set(names))]

    def mkdir(self, path: str, mode: int) -> int:
        self._blob(path).mkdir()
        self._invalidate(path)
        return 0

    def rmdir(self, path: str) -> int:
        self._blob(path).rmdir()
        self._invalidate(path)
        return 0

    def unlink(self, path: str) -> int:
        try:
            self._blob(path).unlink()
        except FileNotFoundError:
            raise OSError(errno.ENOENT, path) from None
        self._invalidate(path)
        return 0

    def statfs(self, path: str) -> dict[str, int]:
        st = os.statvfs(self.cache)
        return {
            k: getattr(st, k)
            for k in (
                "f_bsize",
                "f_frsize",
                "f_blocks",
                "f_bfree",
                "f_bavail",
                "f_files",
                "f_ffree",
                "f_favail",
                "f_namemax",
            )
        }

    def chmod(self, path: str, mode: int) -> int:
        return 0  # non-HNS accounts: chmod "succeeds" with no effect (blobfuse2-known-issues)

    def chown(self, path: str, uid: int, gid: int) -> int:
        return 0

    def utimens(self, path: str, times: tuple[int, int] | None = None) -> int:
        return 0

    # --- files ---------------------------------------------------------------------------------

    def _new_handle(self, path: str, fd: int, local: Path, dirty: bool) -> int:
        with self.lock:
            fh = self.next_fh
            self.next_fh += 1
            self.handles[fh] = Handle(path, fd, local, dirty)
        return fh

    def create(self, path: str, mode: int, fi: Any = None) -> int:
        """file_cache.go CreateFile: a local file only; storage sees it at flush."""
        local = self._local(path)
        local.parent.mkdir(parents=True, exist_ok=True)
        with self._path_lock(path):
            fd = os.open(local, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
            self._invalidate(path)
            fh = self._new_handle(path, fd, local, dirty=True)
        self._write_state()
        return fh

    def open(self, path: str, flags: int) -> int:
        """file_cache.go OpenFile: download the blob into the local cache, then work on that copy."""
        blob, local = self._blob(path), self._local(path)
        local.parent.mkdir(parents=True, exist_ok=True)
        with self._path_lock(path):  # file_cache.go OpenFile: flock.Lock() before the download
            busy = self._open_local(path)
            if busy is None:
                try:
                    if flags & os.O_TRUNC:
                        local.write_bytes(b"")
                    else:
                        self._transfer_down(blob, local)
                except FileNotFoundError:
                    raise OSError(errno.ENOENT, path) from None
            fd = os.open(local, os.O_RDWR)
            return self._new_handle(path, fd, local, dirty=bool(flags & os.O_TRUNC))

    @staticmethod
    def _transfer_down(blob: Path, local: Path) -> None:
        with open(blob, "rb") as fin, open(local, "wb") as fout:
            while chunk := fin.read(CHUNK):
                fout.write(chunk)

    def read(self, path: str, size: int, offset: int, fh: int) -> bytes:
        return os.pread(self.handles[fh].fd, size, offset)

    def write(self, path: str, data: bytes, offset: int, fh: int) -> int:
        h = self.handles[fh]
        n = os.pwrite(h.fd, data, offset)
        h.dirty = True  # file_cache.go WriteFile: HandleFlagDirty
        return n

    def truncate(self, path: str, length: int, fh: int | None = None) -> int:
        h = self.handles.get(fh) if fh is not None else self._open_local(path)
        if h is not None:
            os.ftruncate(h.fd, length)
            h.dirty = True
            return 0
        fh2 = self.open(path, os.O_RDWR)  # file_cache.go TruncateFile: change the cached copy, upload it
        try:
            self.truncate(path, length, fh2)
        finally:
            self.release(path, fh2)
        return 0

    def flush(self, path: str, fh: int) -> int:
        h = self.handles[fh]
        with h.lock:
            self._upload(h)
        return 0

    def release(self, path: str, fh: int) -> int:
        """file_cache.go ReleaseFile: flush, close; the local copy is dropped (file-cache timeout 0)."""
        h = self.handles[fh]
        with self._path_lock(h.path):  # file_cache.go CloseFile: flock.Lock(), close, flock.Dec()
            try:
                with h.lock:
                    self._upload(h)
            finally:
                os.close(h.fd)
                with self.lock:
                    del self.handles[fh]
                    still_open = any(o.path == h.path for o in self.handles.values())
                if not still_open:
                    h.local.unlink(missing_ok=True)
        self._write_state()
        return 0

    def fsync(self, path: str, datasync: int, fh: int) -> int:
        self._count("fsync")
        if self.sync_to_flush:  # file_cache.go SyncFile: sync-to-flush uploads; the default does not
            return self.flush(path, fh)
        return 0

    def fsyncdir(self, path: str, datasync: int, fh: int) -> int:
        self._count("fsyncdir")  # base_component.go SyncDir: nil, nothing happens
        return 0

    def rename(self, old: str, new: str) -> int:
        """block_blob.go RenameFile: copy the blob, then delete the source. Not atomic."""
        self._count("rename")
        if self.rename_mode == "fail":
            raise OSError(errno.EIO, f"rename {old} -> {new}")
        src, dst = self._blob(old), self._blob(new)
        if not src.exists():  # libfuse_handler.go libfuse_rename: GetAttr of the source first
            raise OSError(errno.ENOENT, old)
        if src.is_dir():
            raise OSError(errno.ENOTSUP, f"{old}: the double renames files only")
        with self.lock:
            self.renaming[old] = "copying"
        self._write_state()
        self._transfer(src, dst, old)
        with self.lock:
            self.renaming[old] = "copied"
        self._write_state()
        if self.rename_pause > 0:
            time.sleep(self.rename_pause)
        src.unlink(missing_ok=True)
        with self.lock:
            self.renaming.pop(old, None)
        self._invalidate(old)
        self._invalidate(new)
        self._write_state()
        return 0


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m doubles.localml.blobfs", description=__doc__.split("\n")[0])
    p.add_argument("store", type=Path, help="folder of blobs behind the mount")
    p.add_argument("mountpoint", type=Path)
    p.add_argument("--cache", type=Path, required=True, help="local file cache (file_cache tmp-path)")
    p.add_argument("--state", type=Path, required=True, help="where state.json is written")
    p.add_argument("--attr-timeout", type=float, default=BLOBFUSE2_TIMEOUT_S)
    p.add_argument("--list-timeout", type=float, default=BLOBFUSE2_TIMEOUT_S)
    p.add_argument("--upload-rate", type=float, default=0.0, help="bytes/s, uploads and copies (0: no limit)")
    p.add_argument("--rename", choices=("copy-delete", "fail"), default="copy-delete")
    p.add_argument("--rename-pause", type=float, default=0.0, help="seconds between copy and delete")
    p.add_argument("--sync-to-flush", action="store_true")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="blobfs: %(message)s")
    from mfusepy import FUSE  # imported here: `--help` and the checks in mount.py need no libfuse

    for folder in (args.store, args.cache, args.state):
        folder.mkdir(parents=True, exist_ok=True)
    fs = BlobFS(
        args.store.resolve(),
        args.cache.resolve(),
        args.state.resolve(),
        args.attr_timeout,
        args.list_timeout,
        args.upload_rate,
        args.rename,
        args.rename_pause,
        args.sync_to_flush,
    )
    timeout = f"{args.attr_timeout:g}"
    # The kernel's caches with blobfuse2's timeouts (libfuse.go: entry, attribute, negative entry).
    try:
        FUSE(
            _Ops(fs),
            str(args.mountpoint),
            foreground=True,
            fsname="localml-blobfs",
            subtype="blobfs",
            entry_timeout=timeout,
            attr_timeout=timeout,
            negative_timeout=timeout,
        )
    except RuntimeError as exc:  # fuse_main_real answers 8 when a signal (SIGTERM: unmount) ended its loop
        if str(exc) != "8":
            raise
    return 0


class _Ops:
    """Adapts BlobFS to mfusepy: OSError -> FuseOSError with its errno (EIO when it has none)."""

    def __init__(self, fs: BlobFS) -> None:
        self._fs = fs
        self.use_ns = True

    def __getattr__(self, name: str) -> Any:
        target = getattr(self._fs, name, None)
        if name.startswith("_") or not callable(target):
            raise AttributeError(name)
        from mfusepy import FuseOSError

        def call(*args: Any) -> Any:
            try:
                return target(*args)
            except OSError as exc:
                raise FuseOSError(exc.errno or errno.EIO) from None

        return call


if __name__ == "__main__":
    sys.exit(main())

"""Checkpoints with torch.distributed.checkpoint (DCP) on a blob mount: what DCP does not do. Importable.

    from checkpointing import CheckpointManager

    ckpt = CheckpointManager(args.ckpt, interval=100, keep=3, total_steps=1000)  # every rank
    saved = ckpt.latest()                 # the newest committed checkpoint's commit record, or None
    model = build(saved["config"] if saved else fresh)                  # its shape comes from it
    start = ckpt.restore(model, optimizer, config=asdict(cfg))          # 0 on a fresh start
    for step in range(start, total):
        ...forward/backward/optimizer.step...
        ckpt.maybe_save(step + 1, force=stopping)   # on the interval, at the last step, or when told
    ckpt.close()                          # the last save committed (or CheckpointError)

DCP does the checkpoint itself: every rank writes its own shard of the model and optimizer state (DDP's
replicated tensors are spread over the ranks, FSDP's DTensor shards stay where they are), the coordinator
writes `.metadata` only after every rank reported its write (torch/distributed/checkpoint/utils.py
_DistWrapper.all_reduce: a failure on any rank becomes a CheckpointException on every rank and `finish` is
not called), `dcp.load` reshards to any world size, and `dcp.async_save` copies the state to CPU then
writes it from a thread while training goes on (state_dict_saver.py async_save).

What is left for this module (Azure facts: docs/azure-behaviour.md "Blob mounts (rw_mount)",
docs/reference/azure-notes.md §5):
- No rename. DCP's FileSystemWriter writes `.metadata.tmp` and renames it (filesystem.py
  _FileSystemWriter.finish); on the output mount a rename is a copy then a delete (blobfuse2
  component/azstorage/block_blob.go RenameFile) and can fail outright on Azure ML (microsoft/hi-ml#258).
  BlobWriter writes `.metadata` under its final name, and no fsync (file_cache.go SyncFile does nothing by
  default; a file reaches storage when it is closed, FlushFile).
- The commit: `commit.json`, written by rank 0 after DCP returned, i.e. after `.metadata` was closed. A step
  folder without it is incomplete (a kill, a node loss, a failed rank), whatever else it holds. At resume the
  marker is checked against DCP's own metadata: every shard file it names must be there, at least as long
  as the byte ranges recorded for it (a truncated or missing shard makes the step incomplete).
- Which one to resume: the newest committed step, chosen by rank 0 and broadcast by name, also looking up
  the steps this run would save at by name (a blob mount's listing on one node may lack the newest files;
  a lookup of a name goes to storage: attr_cache.go GetAttr on a miss).
- Retention: rank 0, after committing step N, deletes steps older than N beyond the `keep` newest
  committed ones (marker first), never anything newer than N, so the last good checkpoint is never
  deleted, and a failed save (no commit) deletes nothing.
- Stopping on SIGTERM at a step boundary (StopRequest).

On disk, for step N in the checkpoint folder (`step_0000000N/`):
    __0_0.distcp, __1_0.distcp, ...   DCP's shards, one per rank that held data
    .metadata                         DCP's index of them (written when every rank's write returned)
    commit.json                       ours, last: {"step", "world_size", "total_steps", "config", "saved_at"}
Checkpoints of the format before DCP (`step_0000000N.pt` + `.sha256`) are refused with a message (OldFormat).
"""

from __future__ import annotations

import datetime
import json
import os
import pickle
import re
import shutil
import signal
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from torch.distributed.checkpoint.filesystem import CURRENT_DCP_VERSION, FileSystemReader, FileSystemWriter
from torch.distributed.checkpoint.metadata import Metadata
from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict

STEP = re.compile(r"^step_(\d{8})$")
OLD = re.compile(r"^step_(\d{8})\.pt(\.sha256|\.shard-\d{5}-of-\d{5}(\.sha256)?)?$")
COMMIT = "commit.json"
METADATA = ".metadata"  # DCP's (filesystem.py _metadata_fn)
Log = Callable[[str], None]
#: Scheduled checkpoint names looked up beyond the newest one a listing shows (list_steps).
PROBE_AHEAD = 8
# One process without a process group is a supported DCP mode (no_dist); rewriting a step after a resume is
# this module's choice (the marker went first). Neither is worth a warning in every log.
warnings.filterwarnings("ignore", message="torch.distributed is disabled, unavailable or uninitialized")
warnings.filterwarnings("ignore", message="Detected an existing checkpoint in")


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def step_name(step: int) -> str:
    return f"step_{step:08d}"


class CheckpointError(RuntimeError):
    pass


class OldFormat(CheckpointError):
    """The folder holds checkpoints of the format before DCP; train.py exits 2 with this message."""


# ----------------------------------------------------------------------------- writing


class BlobWriter(FileSystemWriter):
    """DCP's file system writer with `.metadata` written under its final name, and no fsync.

    The metadata object is DCP's own, filled as _FileSystemWriter.finish fills it (version, the storage
    data of every write result, storage_meta); only the temporary name and the rename are left out.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__(path, sync_files=False, overwrite=True)

    def finish(self, metadata: Metadata, results: list[list[Any]]) -> None:
        metadata.version = CURRENT_DCP_VERSION
        metadata.storage_data = {wr.index: wr.storage_data for wrs in results for wr in wrs}
        metadata.storage_meta = self.storage_meta()
        path = Path(self.path) / METADATA
        with open(path, "wb") as f:  # the upload happens in close(), which raises if it failed
            pickle.dump(metadata, f)


def write_commit(folder: Path, record: dict[str, Any]) -> None:
    with open(folder / COMMIT, "w") as f:
        json.dump(record, f, sort_keys=True)


def failure_text(e: BaseException) -> str:
    """One line per failed rank of DCP's CheckpointException (api.py: `failures` maps rank to (exception,
    stack)), without the stacks; any other exception as its type and message."""
    failures = getattr(e, "failures", None)
    if isinstance(failures, dict) and failures:
        return "; ".join(f"rank {r}: {type(exc).__name__}: {exc}" for r, (exc, _) in sorted(failures.items()))
    return f"{type(e).__name__}: {e}"


# ----------------------------------------------------------------------------- reading


def _step_of(name: str) -> int | None:
    m = STEP.match(name)
    return int(m.group(1)) if m else None


def list_steps(directory: Path, probe: Iterable[int] = ()) -> list[tuple[int, Path]]:
    """(step, folder) of every step folder the checkpoint folder names, newest first (committed or not).
    The first PROBE_AHEAD steps of `probe` newer than anything listed are also looked up by name."""
    if not directory.is_dir():
        return []
    steps = {s for p in directory.iterdir() if (s := _step_of(p.name)) is not None}
    newest = max(steps, default=-1)
    for step in sorted(s for s in set(probe) if s > newest)[:PROBE_AHEAD]:
        if (directory / step_name(step) / COMMIT).exists():
            steps.add(step)
    return [(s, directory / step_name(s)) for s in sorted(steps, reverse=True)]


def read_commit(folder: Path) -> dict[str, Any] | None:
    try:
        record = json.loads((folder / COMMIT).read_text())
    except (FileNotFoundError, NotADirectoryError, ValueError):
        return None
    return record if isinstance(record, dict) and "step" in record else None


def verify(folder: Path) -> str | None:
    """None when `folder` is a committed step whose shards DCP's metadata can read, else why not."""
    if read_commit(folder) is None:
        if (folder / COMMIT).exists():
            return f"{COMMIT} is unreadable"
        return f"no {COMMIT} marker (its save did not finish)"
    try:
        metadata = FileSystemReader(folder).read_metadata()
    except FileNotFoundError:
        return f"{COMMIT} is there but DCP's {METADATA} is not"
    except Exception as e:  # noqa: BLE001  a truncated or corrupt pickle
        return f"DCP's {METADATA} is unreadable ({type(e).__name__})"
    needed: dict[str, int] = {}
    for info in (metadata.storage_data or {}).values():
        needed[info.relative_path] = max(needed.get(info.relative_path, 0), info.offset + info.length)
    for name, size in sorted(needed.items()):
        try:
            have = (folder / name).stat().st_size
        except FileNotFoundError:
            return f"shard {name} is missing"
        if have < size:
            return f"shard {name} is truncated ({have} of {size} bytes)"
    return None


def old_format(directory: Path) -> str | None:
    """A message when `directory` holds pre-DCP checkpoints and no DCP step folder, else None."""
    if not directory.is_dir() or list_steps(directory):
        return None
    old = sorted(p.name for p in directory.iterdir() if OLD.match(p.name))
    if not old:
        return None
    return (
        f"--ckpt {directory} holds checkpoints of the format before DCP ({old[0]}, ...): this train.py "
        "writes torch.distributed.checkpoint folders (step_NNNNNNNN/) and a Llama model, so it cannot "
        "resume them; pass a new --ckpt folder (or resume that run with the release that wrote it)"
    )


def choose(directory: Path, log: Log = _log, probe: Iterable[int] = ()) -> Path | None:
    """The newest committed, readable step folder; incomplete ones are skipped with a warning."""
    for _, folder in list_steps(directory, probe):
        problem = verify(folder)
        if problem is None:
            return folder
        log(f"warning: skipping incomplete checkpoint {folder}: {problem}")
    return None


def prune(directory: Path, keep: int, newest: int) -> list[Path]:
    """Retention after step `newest` was committed by this run. Returns the step folders deleted.

    Among steps at or before `newest`, the `keep` newest committed ones stay (`newest` always: a stale
    listing cannot make us delete it); older ones, committed or leftovers, go, marker first. Anything newer
    than `newest` (another run's leftover, or one a stale listing hid at resume) is left alone."""
    steps = list_steps(directory)
    committed = [s for s, f in steps if s < newest and (f / COMMIT).exists()]
    kept = {newest, *committed[: max(0, keep - 1)]}
    deleted = []
    for step, folder in steps:
        if step >= newest or step in kept:
            continue
        (folder / COMMIT).unlink(missing_ok=True)  # first: from here on it is not a checkpoint
        shutil.rmtree(folder, ignore_errors=True)
        deleted.append(folder)
    return deleted


# ----------------------------------------------------------------------------- the manager


def _dist() -> tuple[bool, int, int]:
    on = dist.is_available() and dist.is_initialized()
    return on, dist.get_rank() if on else 0, dist.get_world_size() if on else 1


class CheckpointManager:
    """Interval, commit and retention of one training run's DCP checkpoints; a no-op when `folder` is None.

    Every rank constructs it and calls every method at the same steps (`latest`, `restore`, `maybe_save`
    and `close` hold collectives). Saves are asynchronous (`async_=True`): `maybe_save` returns once the state
    is copied to CPU; the write runs in DCP's thread, and rank 0 commits it when it finished. At most one
    save is in flight: the next one, `close`, and a forced save wait for it. A failed save (any rank) is
    raised as CheckpointError by the next of those, having committed and deleted nothing.
    """

    def __init__(
        self,
        folder: str | os.PathLike[str] | None,
        *,
        interval: int,
        keep: int,
        total_steps: int,
        log: Log = _log,
        timeout: datetime.timedelta | None = None,
        async_: bool = True,
    ) -> None:
        self.folder = Path(folder) if folder is not None else None
        self.interval, self.keep, self.total_steps, self.log, self.async_ = (
            interval,
            keep,
            total_steps,
            log,
            async_,
        )
        self.distributed, self.rank, self.world = _dist()
        # DCP's collectives run on a gloo group of their own: async_save needs a CPU backend, and a
        # collective from the writer thread must not interleave with the training group's.
        self.group = (
            dist.new_group(backend="gloo", **({"timeout": timeout} if timeout else {}))
            if self.distributed and self.folder is not None
            else None
        )
        self._found: tuple[dict[str, Any], Path] | None = None
        self._looked = False
        self._model: torch.nn.Module | None = None
        self._optimizer: torch.optim.Optimizer | None = None
        self._config: dict[str, Any] = {}
        self._pending: tuple[Future, int, threading.Event] | None = None
        self._commit_error: BaseException | None = None
        self.last_blocked_s = 0.0  # what the last maybe_save cost the training thread
        if self.folder is not None:
            self.folder.mkdir(parents=True, exist_ok=True)  # every rank (each through its node's mount)

    @property
    def enabled(self) -> bool:
        return self.folder is not None

    def should_save(self, step: int, force: bool = False) -> bool:
        """On the interval, at the run's last step, or when forced (a stop request)."""
        return self.enabled and (force or step % self.interval == 0 or step == self.total_steps)

    def latest(self) -> dict[str, Any] | None:
        """The newest committed checkpoint's commit record (the same step on every rank), or None. A
        collective. Raises OldFormat when the folder holds only checkpoints of the format before DCP."""
        if self._looked or self.folder is None:
            return self._found[0] if self._found else None
        self._looked = True
        chosen, problem = None, None
        if self.rank == 0:
            problem = old_format(self.folder)
            planned = [*range(self.interval, self.total_steps + 1, self.interval), self.total_steps]
            found = None if problem else choose(self.folder, self.log, planned)
            chosen = found.name if found else None
        if self.distributed:
            box: list[Any] = [chosen, problem]
            dist.broadcast_object_list(box, src=0, group=self.group)
            chosen, problem = box
        if problem:
            raise OldFormat(problem)
        if chosen is None:
            return None
        path = self.folder / chosen
        record = read_commit(path)  # every rank through its own view (on Azure ML, its node's mount)
        if record is None:
            raise CheckpointError(f"rank {self.rank} cannot read {path / COMMIT}, which rank 0 chose")
        self._found = (record, path)
        return record

    @property
    def path(self) -> Path | None:
        """The step folder `latest` chose, if any."""
        return self._found[1] if self._found else None

    def _state(self) -> dict[str, Any]:
        assert self._model is not None and self._optimizer is not None
        model_sd, optim_sd = get_state_dict(self._model, self._optimizer)
        return {"model": model_sd, "optimizer": optim_sd}

    def track(self, model: torch.nn.Module, optimizer: torch.optim.Optimizer, config: dict[str, Any]) -> None:
        """What `maybe_save` saves, without loading anything (restore does both)."""
        self._model, self._optimizer, self._config = model, optimizer, dict(config)

    def restore(
        self, model: torch.nn.Module, optimizer: torch.optim.Optimizer, config: dict[str, Any]
    ) -> int:
        """Track `model` (plain, DDP or FSDP), `optimizer` and the model `config` for saving; load them from
        `latest()` if there is one, resharded to this world size. Returns the step to continue from."""
        self.track(model, optimizer, config)
        record = self.latest()
        if record is None:
            return 0
        state = self._state()
        dcp.load(
            state,
            storage_reader=FileSystemReader(self.path),
            process_group=self.group,
            no_dist=not self.distributed,
        )
        set_state_dict(model, optimizer, model_state_dict=state["model"], optim_state_dict=state["optimizer"])
        if record.get("total_steps", self.total_steps) != self.total_steps:
            self.log(
                f"warning: {self.path} belongs to a run of --steps {record['total_steps']}, this one has "
                f"--steps {self.total_steps}: the learning-rate schedule differs from an uninterrupted run"
            )
        if record.get("world_size", self.world) != self.world:
            self.log(
                f"note: {self.path} was written by {record['world_size']} ranks, this run has {self.world}: "
                "DCP reshards it; the global batch changes with the world size"
            )
        self.log(f"resumed from {self.path} at step {record['step']}")
        return int(record["step"])

    def maybe_save(self, step: int, force: bool = False) -> bool:
        """Checkpoint after `step` optimizer steps if `should_save`; returns whether it did. A forced
        save (a stop) blocks until it is committed, since the process is about to exit."""
        if self.folder is None or not self.should_save(step, force):
            return False
        if self._model is None or self._optimizer is None:
            raise RuntimeError("CheckpointManager.maybe_save before restore(): nothing to save")
        t0 = time.perf_counter()
        self.wait()  # one save in flight at most
        folder = self.folder / step_name(step)
        if self.rank == 0:
            folder.mkdir(exist_ok=True)
            (folder / COMMIT).unlink(missing_ok=True)  # a rewrite (after a resume from an older step)
        if self.distributed:
            # Every rank's first lookup of the step folder comes after rank 0 created it. Ranks on other
            # nodes see the output through their own mounts, which cache "does not exist" (blobfuse2
            # attr_cache.go negative entries): a rank that looked before rank 0's mkdir, then tried to
            # create it too, failed with "File exists" on localml's mount (tests/jobs, 2 nodes).
            dist.barrier(group=self.group)
        state = self._state()
        writer = BlobWriter(folder)
        if self.async_ and not force:
            fut = dcp.async_save(
                state, storage_writer=writer, process_group=self.group, no_dist=not self.distributed
            )
        else:
            fut = Future()
            try:
                fut.set_result(
                    dcp.save(
                        state, storage_writer=writer, process_group=self.group, no_dist=not self.distributed
                    )
                )
            except BaseException as e:  # noqa: BLE001  raised by wait() below, as an async failure is
                fut.set_exception(e)
        self._pending = (fut, step, threading.Event())
        fut.add_done_callback(self._commit)
        if force or not self.async_:
            self.wait()
        self.last_blocked_s = time.perf_counter() - t0
        return True

    def _commit(self, fut: Future) -> None:
        """When a save finished (in DCP's writer thread): rank 0 writes the commit marker and applies
        retention, only if every rank's write succeeded."""
        assert self._pending is not None and self.folder is not None
        _, step, done = self._pending
        try:
            if self.rank == 0 and fut.exception() is None:
                write_commit(
                    self.folder / step_name(step),
                    {
                        "step": step,
                        "world_size": self.world,
                        "total_steps": self.total_steps,
                        "config": self._config,
                        "saved_at": time.time(),
                    },
                )
                for old in prune(self.folder, self.keep, step):
                    self.log(f"deleted checkpoint {old} (--keep {self.keep})")
        except BaseException as e:  # noqa: BLE001  raised on the training thread by wait()
            self._commit_error = e
        finally:
            done.set()

    def wait(self) -> None:
        """Wait for the save in flight and its commit. Raises CheckpointError when it failed on any rank
        (DCP's CheckpointException names them): nothing is committed or deleted then."""
        if self._pending is None:
            return
        fut, step, done = self._pending
        folder = self.folder / step_name(step)  # type: ignore[operator]
        try:
            try:
                fut.result()
            except BaseException as e:  # noqa: BLE001
                raise CheckpointError(f"writing checkpoint {folder} failed: {failure_text(e)}") from e
            done.wait()
            if self._commit_error is not None:
                err, self._commit_error = self._commit_error, None
                raise CheckpointError(f"committing checkpoint {folder} failed: {err}") from err
        finally:
            done.wait()
            self._pending = None

    def close(self) -> None:
        """Wait for the last save; raises CheckpointError if it failed."""
        self.wait()


# ----------------------------------------------------------------------------- stopping


class StopRequest:
    """Turns SIGTERM into a request that the training loop honours at the next step boundary.

    Azure ML's cancel and a Spot eviction (30 s best effort, docs/reference/azure-notes.md §5) arrive as
    SIGTERM at best, so finish the step, checkpoint, and exit non-zero so the job is never recorded as
    completed.
    The same signal a second time ends the process at once.
    """

    def __init__(self, signals: tuple[int, ...] = (signal.SIGTERM,)) -> None:
        self.signum: int | None = None  # the stop reason: received here, or adopted from another rank
        self._received: int | None = None  # what this process itself was sent
        for s in signals:
            signal.signal(s, self._handle)

    def _handle(self, signum: int, frame: Any) -> None:
        # The same signal twice (Ctrl-C, Ctrl-C): stop now, the default way. Only a signal this process
        # received counts: a rank that adopted a peer's stop and is still writing the checkpoint when the
        # launcher's SIGTERM arrives (the peer has exited) finishes the checkpoint instead of dying in it.
        if self._received == signum:
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
        self._received = self._received or signum
        if self.signum is None:  # a launcher forwarding SIGTERM after a Ctrl-C changes nothing
            self.signum = signum

    @property
    def requested(self) -> bool:
        return self.signum is not None

    def agreed(self, device: torch.device) -> bool:
        """True on every rank when any rank was asked to stop. A collective the host waits for: every rank
        must call it at the same steps (train.py: log and checkpoint steps, so not every step).

        Ranks that got no signal adopt the signal number another rank got, so all report the same.
        """
        if not (dist.is_available() and dist.is_initialized()):
            return self.requested
        flag = torch.tensor([float(self.signum or 0)], device=device)
        dist.all_reduce(flag, op=dist.ReduceOp.MAX)
        agreed = int(flag.item())
        if agreed and self.signum is None:
            self.signum = agreed
        return agreed > 0

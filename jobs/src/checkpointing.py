"""Checkpoints that survive preemption on a blob mount: verified, written in the background. Importable alone.

    from checkpointing import CheckpointManager

    ckpt = CheckpointManager(args.ckpt, interval=100, keep=3, total_steps=1000)  # every rank writes a shard
    saved = ckpt.latest()                # the newest complete checkpoint's contents (a collective), or None
    model = GPT(config_from(saved))      # the model's shape comes from the checkpoint (nanoGPT)
    start = ckpt.restore(model, optimizer, config=vars(cfg))   # weights, optimizer, RNG; 0 on a fresh start
    for step in range(start, total):
        ...forward/backward...
        ckpt.fence()                     # the previous snapshot has left the weights: they may change now
        optimizer.step()
        ckpt.maybe_save(step + 1, force=stopping)   # on the interval, at the last step, or when told
    ckpt.close()                         # flush the last write before exiting

The manager has the shape of torchtitan's CheckpointManager (pytorch/torchtitan
torchtitan/components/checkpoint.py: `load`, `save(curr_step)` deciding by `_should_save` on the interval,
`maybe_wait_for_staging`, `_purge_stale_checkpoints` keeping `keep_latest_k`), over the pieces below:
AsyncCheckpointer (write in a thread, the fence, retention) and resume_state (choose and load).

Why it looks like this (Azure facts: docs/azure-behaviour.md "Blob mounts (rw_mount)",
docs/reference/azure-notes.md §5): a job is preempted with no dependable signal and must be resubmitted,
so it checkpoints often to its output mount and resumes from the newest *complete* checkpoint. That mount
is a blob FUSE file system: rename is a copy then a delete (blobfuse2 component/azstorage/block_blob.go
RenameFile) and can fail outright on Azure ML (microsoft/hi-ml#258); fsync and directory fsync do nothing
by default (component/file_cache/file_cache.go SyncFile; SyncDir is not implemented); a file reaches
storage when it is closed (file_cache.go FlushFile), and a process killed mid-write has its partial file
closed, hence uploaded.
So nothing here renames or fsyncs, and completeness is a marker written last that holds the checksum.

On disk, for step N in the checkpoint folder:
    step_0000000N.pt         torch.save of one dict (weights_only-loadable), written under its final name
    step_0000000N.pt.sha256  "<hex>  step_0000000N.pt", written only after the .pt was closed successfully
With W > 1 ranks, every rank writes a disjoint shard of the state's tensors in parallel (W writers
instead of one), and the step's own file is a small manifest written by rank 0 once all shards are:
    step_0000000N.pt.shard-0000r-of-0000W           {"leaves": {i: tensor}}: rank r's part (partition())
    step_0000000N.pt.shard-0000r-of-0000W.sha256    its marker, as above
    step_0000000N.pt         {"__shards__": W, "skeleton": the state, each tensor replaced by {"__leaf__": i}}
    step_0000000N.pt.sha256  "<hex>  step_0000000N.pt  shards=W", written after every shard's marker
load() joins the shards whatever the world size of the run that loads them; a single-file checkpoint
(one process, or one written before shards existed) loads as before.
A checkpoint without its .sha256, or whose bytes do not match it (a partial upload, a flipped bit), or a
sharded one any of whose shards is so, is skipped with a warning. Retention (rank 0) deletes whole steps,
only ones older than the newest one this run wrote complete: the newest `keep` complete ones stay, so
the last good checkpoint is never deleted.
"""

from __future__ import annotations

import datetime
import hashlib
import os
import random
import re
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.distributed as dist

NAME = re.compile(r"^step_(\d{8})\.pt$")
MARKER = re.compile(r"^step_(\d{8})\.pt\.sha256$")
SHARD = re.compile(r"^step_(\d{8})\.pt\.shard-\d{5}-of-\d{5}(\.sha256)?$")
#: A manifest's key holding its shard count; LEAF stands for a tensor in its skeleton.
SHARDED, LEAF = "__shards__", "__leaf__"
Log = Callable[[str], None]
#: Scheduled checkpoint names looked up beyond the newest one a listing shows (list_checkpoints).
PROBE_AHEAD = 8


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def checkpoint_name(step: int) -> str:
    return f"step_{step:08d}.pt"


# ----------------------------------------------------------------------------- RNG state


def rng_state() -> dict[str, Any]:
    """Every RNG a training step may draw from: python, numpy (global), torch CPU, CUDA (current device)."""
    np_state = np.random.get_state()
    return {
        "python": random.getstate(),
        "numpy": {
            "name": np_state[0],
            "keys": torch.from_numpy(np_state[1].astype(np.int64)),
            "pos": int(np_state[2]),
            "has_gauss": int(np_state[3]),
            "gauss": float(np_state[4]),
        },
        "torch": torch.get_rng_state(),
        "cuda": torch.cuda.get_rng_state() if torch.cuda.is_available() else None,
    }


def set_rng_state(state: dict[str, Any]) -> None:
    random.setstate(state["python"])
    n = state["numpy"]
    np.random.set_state(
        (n["name"], n["keys"].numpy().astype(np.uint32), n["pos"], n["has_gauss"], n["gauss"])
    )
    torch.set_rng_state(state["torch"])
    if state["cuda"] is not None and torch.cuda.is_available():
        torch.cuda.set_rng_state(state["cuda"])


def gather_rng_states() -> list[dict[str, Any]]:
    """Every rank's RNG states, indexed by rank (a collective: all ranks must call it at the same step)."""
    mine = rng_state()
    if not (dist.is_available() and dist.is_initialized()):
        return [mine]
    out: list[Any] = [None] * dist.get_world_size()
    dist.all_gather_object(out, mine)
    return out


# ----------------------------------------------------------------------------- writing


def to_cpu(obj: Any) -> Any:
    """A snapshot: every tensor copied to CPU (clone on CPU, so later in-place updates do not leak in)."""
    if isinstance(obj, torch.Tensor):
        t = obj.detach()
        return t.clone() if t.device.type == "cpu" else t.to("cpu")
    if isinstance(obj, dict):
        return {k: to_cpu(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return type(obj)(to_cpu(v) for v in obj)
    return obj


class _HashingWriter:
    """File wrapper that hashes what torch.save writes, so the checksum costs no second read."""

    def __init__(self, f: Any) -> None:
        self.f, self.sha = f, hashlib.sha256()

    def write(self, b: bytes) -> int:
        self.sha.update(b)
        return self.f.write(b)

    def flush(self) -> None:
        self.f.flush()


def marker_of(path: Path) -> Path:
    return path.with_name(path.name + ".sha256")


def save_checkpoint(obj: Any, path: Path) -> str:
    """torch.save `obj` under its final name, close it, then write its .sha256 marker. Returns the hex.

    No temporary name, no rename, no fsync: on a blob mount the upload happens inside close(), which
    raises if it failed, so the marker exists only for bytes that reached storage (file_cache.go
    FlushFile / ReleaseFile). Rewriting an existing step drops its marker first, so a half-rewritten
    file is never taken for complete.
    """
    marker = marker_of(path)
    marker.unlink(missing_ok=True)
    with open(path, "wb") as f:
        w = _HashingWriter(f)
        torch.save(obj, w)
        digest = w.sha.hexdigest()
    with open(marker, "wb") as f:
        f.write(f"{digest}  {path.name}\n".encode())
    return digest


# ----------------------------------------------------------------------------- sharded checkpoints


def shard_name(step: int, index: int, count: int) -> str:
    return f"{checkpoint_name(step)}.shard-{index:05d}-of-{count:05d}"


def split_state(state: Any) -> tuple[Any, list[torch.Tensor]]:
    """(skeleton, leaves): `state` with every tensor replaced by {LEAF: i}, i its index in `leaves` (a
    depth-first walk in key order, so the same state gives the same indices on every rank)."""
    leaves: list[torch.Tensor] = []

    def walk(obj: Any) -> Any:
        if isinstance(obj, torch.Tensor):
            leaves.append(obj)
            return {LEAF: len(leaves) - 1}
        if isinstance(obj, dict):
            return {k: walk(v) for k, v in obj.items()}
        if isinstance(obj, list | tuple):
            return type(obj)(walk(v) for v in obj)
        return obj

    return walk(state), leaves


def join_state(skeleton: Any, leaves: dict[int, torch.Tensor]) -> Any:
    """The inverse of split_state."""
    if isinstance(skeleton, dict):
        if set(skeleton) == {LEAF}:
            return leaves[skeleton[LEAF]]
        return {k: join_state(v, leaves) for k, v in skeleton.items()}
    if isinstance(skeleton, list | tuple):
        return type(skeleton)(join_state(v, leaves) for v in skeleton)
    return skeleton


def partition(sizes: list[int], count: int) -> list[int]:
    """The shard of each leaf: largest first to the least-filled shard (ties: lowest index, then lowest
    shard), a balanced split by bytes that depends only on the sizes in key order and `count`."""
    owner = [0] * len(sizes)
    filled = [0] * count
    for i in sorted(range(len(sizes)), key=lambda i: (-sizes[i], i)):
        shard = min(range(count), key=lambda r: (filled[r], r))
        owner[i] = shard
        filled[shard] += sizes[i]
    return owner


def shard_of(state: dict[str, Any], index: int, count: int) -> tuple[Any, dict[int, torch.Tensor]]:
    """(skeleton, this shard's leaves by index) of `state` split into `count` shards. No copy is made."""
    skeleton, leaves = split_state(state)
    owner = partition([t.numel() * t.element_size() for t in leaves], count)
    return skeleton, {i: t for i, t in enumerate(leaves) if owner[i] == index}


def save_manifest(skeleton: Any, path: Path, count: int) -> str:
    """The step's own file, written by rank 0 after every shard is complete: the skeleton and the shard
    count. Its marker names the count too, so verify() knows which shards to check without loading it."""
    marker = marker_of(path)
    marker.unlink(missing_ok=True)
    with open(path, "wb") as f:
        w = _HashingWriter(f)
        torch.save({SHARDED: count, "skeleton": skeleton}, w)
        digest = w.sha.hexdigest()
    with open(marker, "wb") as f:
        f.write(f"{digest}  {path.name}  shards={count}\n".encode())
    return digest


def _step_of(name: str) -> int | None:
    m = NAME.match(name) or MARKER.match(name) or SHARD.match(name)
    return int(m.group(1)) if m else None


def list_checkpoints(directory: Path, probe: Iterable[int] = ()) -> list[tuple[int, Path]]:
    """(step, path of the .pt) of every checkpoint the folder names, newest first (complete or not).

    A name counts when the listing shows the .pt or its marker. The first PROBE_AHEAD steps of `probe`
    newer than anything listed are also looked up by name: a blob mount's listing on this node may lack
    the newest files (attribute and list caches), while a lookup of a name this mount has not asked
    about goes to storage (attr_cache.go GetAttr on a miss).
    """
    if not directory.is_dir():
        return []
    steps = {s for p in directory.iterdir() if (s := _step_of(p.name)) is not None}
    newest = max(steps, default=-1)
    for step in sorted(s for s in set(probe) if s > newest)[:PROBE_AHEAD]:
        path = directory / checkpoint_name(step)
        if path.exists() or marker_of(path).exists():
            steps.add(step)
    return [(s, directory / checkpoint_name(s)) for s in sorted(steps, reverse=True)]


def prune(directory: Path, keep: int, newest: int, log: Log = _log) -> list[Path]:
    """Retention after step `newest` was written complete by this process. Returns what was deleted.

    Among checkpoints at or before `newest`, the `keep` newest complete ones (marker present) stay;
    older complete ones go, and so do incomplete leftovers (a .pt without marker, a marker without .pt)
    older than `newest`; a step's shards go with it. Anything newer than `newest` (another run's
    leftover, or one a stale listing hid at resume) is left alone. The marker goes before its .pt, and
    both before the step's shards, so a kill in between leaves an incomplete step, never a marker that
    vouches for nothing.
    """
    names = {p.name for p in directory.iterdir()}
    complete = sorted(
        (
            s
            for s in {_step_of(n) for n in names}
            if s is not None
            and s <= newest
            and checkpoint_name(s) in names
            and checkpoint_name(s) + ".sha256" in names
        ),
        reverse=True,
    )
    if newest not in complete:
        complete.insert(0, newest)  # just written; a listing cannot make us delete it
    kept = set(complete[: max(1, keep)])
    deleted = []
    for name in sorted(names):
        step = _step_of(name)
        if step is None or step >= newest or step in kept:
            continue
        path = directory / checkpoint_name(step)
        # The step's manifest and its marker sort before its shards, so they go first.
        victims = [directory / name] if SHARD.match(name) else [marker_of(path), path]
        for victim in victims:
            if victim.name in names:
                victim.unlink(missing_ok=True)
                deleted.append(victim)
        names -= {v.name for v in victims}
    return deleted


class AsyncCheckpointer:
    """Snapshot at a step boundary, write in a background thread, keep the newest `keep` complete ones.

    `save(state, step)` copies every tensor of `state` to CPU, then returns while a thread writes it; at
    most one write is in flight (the next `save` waits for the previous one). With `overlap=True` the
    copy itself also moves to the thread, so it runs during the next forward/backward, which read the
    weights but do not change them: the caller must call `fence()` before anything modifies a tensor
    of `state` in place (before `optimizer.step()`). train.py does this.

    With one process, a checkpoint is one file. With W ranks (DDP replicas hold identical state), rank r
    writes shard r of W (a partition of the state's tensors by bytes), in parallel; rank 0 writes the
    manifest once all W shards are complete (an all-reduce among the writer threads) and prunes.
    A failed background write is raised by the next `save`, `fence`, `wait` or `close`.
    """

    def __init__(
        self,
        directory: str | os.PathLike[str],
        keep: int = 3,
        log: Log = _log,
        timeout: datetime.timedelta | None = None,
    ) -> None:
        self.dir = Path(directory)
        self.keep = keep
        self.log = log
        distributed = dist.is_available() and dist.is_initialized()
        self.rank = dist.get_rank() if distributed else 0
        self.world = dist.get_world_size() if distributed else 1
        # The writer threads agree that every shard is complete over a group of their own (a collective
        # on the training group from another thread would interleave with DDP's). A collective: every
        # rank constructs this at the same point.
        self._group = (
            dist.new_group(backend="gloo", **({"timeout": timeout} if timeout else {}))
            if self.world > 1
            else None
        )
        self._thread: threading.Thread | None = None
        self._copied = threading.Event()
        self._copied.set()
        self._error: BaseException | None = None
        self.last_write_s = 0.0
        self.dir.mkdir(parents=True, exist_ok=True)  # every rank writes here (each through its node's mount)
        if self.rank == 0:
            for stale in self.dir.glob("step_*.tmp"):  # left by the rename protocol this one replaced
                stale.unlink(missing_ok=True)

    def save(self, state: dict[str, Any], step: int, block: bool = False, overlap: bool = False) -> float:
        """Checkpoint `state` as step `step`; returns the seconds the caller was blocked."""
        t0 = time.perf_counter()
        self.wait()
        if self.world > 1:  # no copy yet: only the references to this rank's tensors
            skeleton, leaves = shard_of(state, self.rank, self.world)
            state = {"skeleton": skeleton if self.rank == 0 else None, "leaves": leaves}
        self._copied.clear()
        # The copy must see every kernel queued so far on this thread's CUDA stream (the optimizer step).
        ready = None
        if torch.cuda.is_available():
            ready = torch.cuda.Event()
            ready.record(torch.cuda.current_stream())
        if not overlap:
            state = to_cpu(state)
            self._copied.set()
        self._thread = threading.Thread(target=self._run, args=(state, step, ready), name="ckpt-writer")
        self._thread.start()
        if block:
            self.wait()
        return time.perf_counter() - t0

    def _run(self, state: dict[str, Any], step: int, ready: Any) -> None:
        try:
            if not self._copied.is_set():
                if ready is not None:  # copy on a side stream, so compute on the main stream goes on
                    with torch.cuda.device(ready.device):  # a new thread starts on device 0
                        side = torch.cuda.Stream()
                        side.wait_event(ready)
                        with torch.cuda.stream(side):
                            state = to_cpu(state)
                        side.synchronize()
                else:
                    state = to_cpu(state)
                self._copied.set()
            t0 = time.perf_counter()
            if self.world == 1:
                save_checkpoint(state, self.dir / checkpoint_name(step))
            else:
                self._write_shard(state, step)
            self.last_write_s = time.perf_counter() - t0
            if self.rank == 0:
                prune(self.dir, self.keep, step, self.log)
        except BaseException as e:  # surfaced on the training thread by fence() or wait()
            self._error = e
        finally:
            self._copied.set()

    def _write_shard(self, state: dict[str, Any], step: int) -> None:
        """This rank's shard and its marker; then, once every rank reports its shard complete, rank 0
        writes the manifest and its marker, which make the step complete."""
        path = self.dir / checkpoint_name(step)
        if self.rank == 0:  # rewriting a step (after a resume from an older one): not complete until redone
            marker_of(path).unlink(missing_ok=True)
        ok = 1
        try:
            save_checkpoint(
                {"leaves": state["leaves"]}, path.with_name(shard_name(step, self.rank, self.world))
            )
        except BaseException:
            ok = 0
            raise
        finally:  # every rank joins, even after a failed write, so no rank waits forever
            flag = torch.tensor([ok])
            dist.all_reduce(flag, op=dist.ReduceOp.MIN, group=self._group)
        if int(flag.item()) != 1:
            raise CheckpointError(f"another rank failed to write its shard of step {step}")
        if self.rank == 0:
            save_manifest(state["skeleton"], path, self.world)

    def fence(self) -> float:
        """Wait until the last `save(overlap=True)` has copied its tensors; returns the seconds waited."""
        t0 = time.perf_counter()
        self._copied.wait()
        if self._error is not None:
            self.wait()
        return time.perf_counter() - t0

    @property
    def busy(self) -> bool:
        """True while a background write is in flight."""
        return self._thread is not None and self._thread.is_alive()

    def wait(self) -> None:
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self._error is not None:
            err, self._error = self._error, None
            raise CheckpointError(f"writing a checkpoint to {self.dir} failed: {err}") from err

    def close(self) -> None:
        self.wait()


class CheckpointError(RuntimeError):
    pass


class CheckpointManager:
    """Interval, fence and retention of one training run's checkpoints; a no-op when `folder` is None.

    Every rank constructs it and calls every method at the same steps (`latest`, `restore` and
    `maybe_save` hold collectives); each rank writes its shard (AsyncCheckpointer). A checkpoint holds
    "model", "optimizer", "step", "rng" (every rank's RNG states, by rank), "total_steps" and "config"
    (the model's, as restore got it).
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
    ) -> None:
        self.folder = Path(folder) if folder is not None else None
        self.interval, self.total_steps, self.log = interval, total_steps, log
        self.writer = (
            AsyncCheckpointer(self.folder, keep=keep, log=log, timeout=timeout)
            if self.folder is not None
            else None
        )
        self._found: tuple[dict[str, Any], Path] | None = None
        self._looked = False
        self._model: torch.nn.Module | None = None
        self._optimizer: torch.optim.Optimizer | None = None
        self._config: dict[str, Any] = {}

    @property
    def enabled(self) -> bool:
        return self.folder is not None

    def should_save(self, step: int, force: bool = False) -> bool:
        """On the interval, at the run's last step, or when forced (a stop request)."""
        return self.enabled and (force or step % self.interval == 0 or step == self.total_steps)

    def latest(self) -> dict[str, Any] | None:
        """The newest complete checkpoint's contents (the same file on every rank), or None. A collective.

        The steps this run saves at are also looked up by name, so a stale listing of the mount that
        lacks the newest files does not send the run back further than needed (list_checkpoints)."""
        if not self._looked and self.folder is not None:
            planned = [*range(self.interval, self.total_steps + 1, self.interval), self.total_steps]
            self._found = resume_state(self.folder, log=self.log, probe=planned)
            self._looked = True
        return self._found[0] if self._found else None

    @property
    def path(self) -> Path | None:
        """The file `latest` chose, if any."""
        return self._found[1] if self._found else None

    def restore(
        self, model: torch.nn.Module, optimizer: torch.optim.Optimizer, config: dict[str, Any]
    ) -> int:
        """Track `model`, `optimizer` and the model `config` for saving; load them, and this rank's RNG
        states, from `latest()` if there is one. Returns the step to continue from (0 on a fresh start)."""
        self._model, self._optimizer, self._config = model, optimizer, dict(config)
        state = self.latest()
        if state is None:
            return 0
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        if state.get("total_steps", self.total_steps) != self.total_steps:
            self.log(
                f"warning: {self.path} belongs to a run of --steps {state['total_steps']}, this one has "
                f"--steps {self.total_steps}: the learning-rate schedule differs from an uninterrupted run"
            )
        rank = dist.get_rank() if dist.is_available() and dist.is_initialized() else 0
        world = dist.get_world_size() if dist.is_available() and dist.is_initialized() else 1
        if len(state["rng"]) == world:
            set_rng_state(state["rng"][rank])
        else:
            self.log(
                f"warning: {self.path} was written by {len(state['rng'])} ranks, this run has {world}: "
                "RNG streams restart from the seed, so dropout differs from an uninterrupted run"
            )
        self.log(f"resumed from {self.path} at step {state['step']}")
        return int(state["step"])

    def fence(self) -> float:
        """Before anything changes the weights in place (optimizer.step): wait until the snapshot of the
        last save has been copied. Returns the seconds waited."""
        return self.writer.fence() if self.writer is not None else 0.0

    def maybe_save(self, step: int, force: bool = False) -> bool:
        """Checkpoint after `step` optimizer steps if `should_save`; returns whether it did.

        The copy to CPU overlaps the next forward/backward (fence() ends it); a forced save (a stop)
        blocks until its .sha256 marker is written, since the process is about to exit."""
        if self.writer is None or not self.should_save(step, force):
            return False
        if self._model is None or self._optimizer is None:
            raise RuntimeError("CheckpointManager.maybe_save before restore(): nothing to save")
        state = {
            "model": self._model.state_dict(),
            "optimizer": self._optimizer.state_dict(),
            "step": step,
            "rng": gather_rng_states(),  # a collective: every rank is here at the same step
            "total_steps": self.total_steps,
            "config": self._config,
        }
        self.writer.save(state, step, block=force, overlap=True)
        return True

    def close(self) -> None:
        """Wait for the last write; raises CheckpointError if it failed."""
        if self.writer is not None:
            self.writer.close()


# ----------------------------------------------------------------------------- reading


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 22):
            h.update(chunk)
    return h.hexdigest()


def verify(path: Path) -> str | None:
    """None when `path` is a complete checkpoint, else why it is not."""
    marker = marker_of(path)
    try:
        fields = marker.read_text().split()
    except FileNotFoundError:
        return "no .sha256 completion marker (its write was interrupted)"
    expected = fields[0] if fields else ""
    try:
        actual = _sha256(path)
    except FileNotFoundError:
        return "its .sha256 marker is there but the .pt is not"
    if actual != expected:
        return "sha256 mismatch (truncated or corrupt)"
    count = next((int(f.split("=", 1)[1]) for f in fields[2:] if f.startswith("shards=")), 0)
    step = _step_of(path.name)
    for index in range(count if step is not None else 0):
        shard = path.with_name(shard_name(step, index, count))
        if (problem := verify(shard)) is not None:
            return f"shard {shard.name}: {problem}"
    return None


def latest_complete(
    directory: str | os.PathLike[str], log: Log = _log, probe: Iterable[int] = ()
) -> Path | None:
    """The newest checkpoint whose bytes match its checksum; damaged ones are skipped with a warning."""
    for _, path in list_checkpoints(Path(directory), probe):
        problem = verify(path)
        if problem is None:
            return path
        log(f"warning: skipping damaged checkpoint {path}: {problem}")
    return None


def load(path: Path) -> dict[str, Any]:
    """A checkpoint's state: one file, or a manifest whose shards are loaded and joined (whatever the
    world size of the run that loads it)."""
    obj = torch.load(path, map_location="cpu", weights_only=True)
    if not (isinstance(obj, dict) and SHARDED in obj):
        return obj
    step = _step_of(path.name)
    if step is None:
        raise CheckpointError(f"{path}: a sharded checkpoint's manifest must be named step_NNNNNNNN.pt")
    leaves: dict[int, torch.Tensor] = {}
    for index in range(obj[SHARDED]):
        shard = path.with_name(shard_name(step, index, obj[SHARDED]))
        leaves.update(torch.load(shard, map_location="cpu", weights_only=True)["leaves"])
    return join_state(obj["skeleton"], leaves)


def resume_state(
    directory: str | os.PathLike[str] | None, log: Log = _log, probe: Iterable[int] = ()
) -> tuple[dict[str, Any], Path] | None:
    """Load the newest complete checkpoint, the same one on every rank.

    Rank 0 chooses (verifying checksums, and loading to be sure) and broadcasts the file *name*; every
    other rank loads that name from its own view of the folder (on Azure ML, its node's mount), so all
    ranks agree on the resume step even if their listings differ. `probe`: steps at which checkpoints
    are expected (see list_checkpoints). A collective when a process group is initialised.
    """
    distributed = dist.is_available() and dist.is_initialized()
    rank = dist.get_rank() if distributed else 0
    chosen: str | None = None
    state: dict[str, Any] | None = None
    if rank == 0 and directory is not None:
        for _, path in list_checkpoints(Path(directory), probe):
            problem = verify(path)
            if problem is None:
                try:
                    state = load(path)
                    chosen = path.name
                    break
                except Exception as e:  # a valid checksum over a file torch cannot read
                    problem = f"unreadable ({type(e).__name__}: {e})"
            log(f"warning: skipping damaged checkpoint {path}: {problem}")
    if distributed:
        box: list[Any] = [chosen]
        dist.broadcast_object_list(box, src=0)
        chosen = box[0]
        if rank != 0 and chosen is not None and directory is not None:
            state = load(Path(directory) / chosen)
    if chosen is None or state is None or directory is None:
        return None
    return state, Path(directory) / chosen


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
        """True on every rank when any rank was asked to stop (a collective, once per step).

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

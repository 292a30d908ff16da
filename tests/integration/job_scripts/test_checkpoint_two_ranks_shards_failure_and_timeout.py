"""CheckpointManager on two real gloo ranks, without train.py: one shard per rank (async and forced saves),
a rank whose write fails (every rank raises naming it, nothing is committed, --keep 1 keeps the last good
step, both ranks resume from it), a rank that cannot read the shards (every rank's restore fails naming
it), a stop signalled to one rank agreed by both, and a peer that never joins a save (the checkpoint
group's timeout ends the wait instead of torch's 30-minute default).

test_job_scripts_train.py runs the same through train.py (minutes); this is the few-second version.
"""

from __future__ import annotations

import signal
import subprocess
import time

from tests.jobs.jobs_util import PY, SRC, base_env

from .jobscripts_util import free_port, track

RANK = f"""
import datetime, os, signal, sys, time
sys.path.insert(0, {str(SRC)!r})
import torch, torch.distributed as dist
import checkpointing as ck

dist.init_process_group("gloo")
rank, folder = dist.get_rank(), sys.argv[1]


def manager():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Linear(32, 4))
    opt = torch.optim.AdamW(model.parameters(), lr=0.01)
    mgr = ck.CheckpointManager(
        folder, interval=10, keep=1, total_steps=100, timeout=datetime.timedelta(seconds=3), log=print
    )
    return mgr, model, opt, mgr.restore(model, opt, config={{}})


mgr, model, opt, _ = manager()
mgr.maybe_save(10)  # async
mgr.maybe_save(20, force=True)  # a stop's save: synchronous
mgr.close()
if rank == 1:
    def broken(*args, **kwargs):
        raise OSError(5, "Input/output error")
    ck.BlobWriter.write_data = broken
mgr.maybe_save(30)
try:
    mgr.close()
    print("close: ok", flush=True)
except ck.CheckpointError as e:
    print("close:", e, flush=True)
_, _, _, start = manager()
print("resumed at", start, flush=True)
real_read = ck.FileSystemReader.read_data
if rank == 1:  # this rank cannot read the shards (its node's mount fails)
    def unreadable(*args, **kwargs):
        raise OSError(5, "Input/output error")
    ck.FileSystemReader.read_data = unreadable
try:
    manager()
    print("restore: ok", flush=True)
except BaseException as e:  # DCP's CheckpointException is a BaseException
    print("restore:", ck.failure_text(e), flush=True)
ck.FileSystemReader.read_data = real_read
stop = ck.StopRequest((signal.SIGTERM,))
print("agreed", stop.agreed(torch.device("cpu")), stop.signum, flush=True)  # nobody was signalled
if rank == 1:
    os.kill(os.getpid(), signal.SIGTERM)
print("agreed", stop.agreed(torch.device("cpu")), stop.signum, flush=True)  # rank 0 adopts rank 1's
hangup = ck.StopRequest((signal.SIGHUP,))  # the lowest signal number (1) is a stop too
if rank == 1:
    os.kill(os.getpid(), signal.SIGHUP)
print("agreed", hangup.agreed(torch.device("cpu")), hangup.signum, flush=True)
dist.barrier()
if rank == 1:  # alive but never joins the next save
    time.sleep(30)  # well past the 3 s timeout; torch's default would wait for this exit
t0 = time.monotonic()
try:
    mgr.maybe_save(40)
    print("save 40: ok", flush=True)
except Exception as e:
    print(f"save 40 failed after {{time.monotonic() - t0:.0f}} s", flush=True)
"""


def test_two_ranks_shards_a_failed_rank_and_a_peer_that_never_joins(tmp_path):
    script = tmp_path / "rank.py"
    script.write_text(RANK)
    ckpt = tmp_path / "ckpt"
    port = str(free_port())
    procs = []
    for rank in (0, 1):
        env = base_env() | {
            "MASTER_ADDR": "127.0.0.1",
            "MASTER_PORT": port,
            "WORLD_SIZE": "2",
            "RANK": str(rank),
        }
        out = open(tmp_path / f"rank{rank}.txt", "w")  # noqa: SIM115 (the child owns it)
        procs.append(track(subprocess.Popen([PY, str(script), str(ckpt)], env=env, stdout=out, stderr=out)))
        out.close()
    deadline = time.monotonic() + 90
    while procs[0].poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    log0, log1 = ((tmp_path / f"rank{r}.txt").read_text() for r in (0, 1))
    assert procs[0].returncode == 0, log0[-3000:]
    # one shard per rank, then DCP's index and our marker: the steps 20 (forced) and, before its deletion
    # by --keep 1, 10 (async) were whole checkpoints of both ranks
    assert sorted(p.name for p in (ckpt / "step_00000020").iterdir()) == [
        ".metadata",
        "__0_0.distcp",
        "__1_0.distcp",
        "commit.json",
    ]
    assert f"deleted checkpoint {ckpt / 'step_00000010'} (--keep 1)" in log0
    failed = (
        f"close: writing checkpoint {ckpt / 'step_00000030'} failed: "
        "rank 1: OSError: [Errno 5] Input/output error"
    )
    assert failed in log0.splitlines() and failed in log1.splitlines(), log0 + log1
    assert not (ckpt / "step_00000030" / "commit.json").exists()
    assert sorted(p.name for p in ckpt.iterdir() if (p / "commit.json").exists()) == ["step_00000020"]
    assert "resumed at 20" in log0.splitlines() and "resumed at 20" in log1.splitlines()
    unreadable = "restore: rank 1: OSError: [Errno 5] Input/output error"  # every rank learns it
    assert unreadable in log0.splitlines() and unreadable in log1.splitlines(), log0 + log1
    for log in (log0, log1):  # a stop on one rank is a stop on every rank, with its signal
        assert [line for line in log.splitlines() if line.startswith("agreed")] == [
            "agreed False None",
            f"agreed True {int(signal.SIGTERM)}",
            f"agreed True {int(signal.SIGHUP)}",
        ]
    last = log0.splitlines()[-1]
    assert last.startswith("save 40 failed after ") and int(last.split()[4]) <= 15, log0[-2000:]

"""peerloss.is_peer_loss: which failures smoke.py and train.py report as "lost a peer" (exit 1, one line)
and which are local errors that must surface with their traceback.

A real peer loss under gloo (kill -9: "Connection reset by peer"; a stopped rank: gloo's collective
timeout) is covered end to end by the smoke and train tests (tests/integration/job_scripts). Here: real local
gloo errors from a real process group of one rank, and NCCL's texts (no GPU here) as ProcessGroupNCCL raises
them.
"""

from __future__ import annotations

import json
import subprocess

import pytest
import torch.distributed as dist
from peerloss import is_peer_loss

from ..jobs_util import PY, SRC, base_env

LOCAL_GLOO_ERRORS = r"""
import json, sys
import torch, torch.distributed as dist
sys.path.insert(0, sys.argv[1])
from peerloss import is_peer_loss
dist.init_process_group("gloo", init_method="file://" + sys.argv[2], rank=0, world_size=1)
cases = {
    "invalid root": lambda: dist.broadcast(torch.ones(2), src=3),
    "wrong output list": lambda: dist.all_gather([torch.ones(2), torch.ones(2)], torch.ones(2)),
    "wrong tensor size": lambda: dist.all_gather([torch.ones(3)], torch.ones(2)),
    "unsupported op": lambda: dist.all_reduce(torch.ones(2).to_sparse(), op=dist.ReduceOp.MAX),
}
seen = {}
for name, call in cases.items():
    try:
        call()
        seen[name] = None
    except RuntimeError as e:
        seen[name] = [type(e).__name__, str(e), is_peer_loss(e)]
dist.destroy_process_group()
print(json.dumps(seen))
"""


def test_local_gloo_errors_are_not_peer_losses(tmp_path):
    p = subprocess.run(
        [PY, "-c", LOCAL_GLOO_ERRORS, str(SRC), str(tmp_path / "store")],
        env=base_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr
    seen = json.loads(p.stdout.strip().splitlines()[-1])
    for name, got in seen.items():
        assert got is not None, f"{name}: no error raised"
        kind, text, lost = got
        assert "ProcessGroupGloo" in text, (name, text)
        assert lost is False, f"{name}: {kind}({text!r}) classified as a lost peer"


NCCL = "NCCL error in: /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:3356, "
LOCAL = [  # ProcessGroupNCCL / CUDA failures on this rank: a traceback, not "lost a peer"
    dist.DistBackendError(
        NCCL + "invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.26.2\n"
        "ncclInvalidUsage: This usually reflects invalid usage of NCCL library.\nLast error:\n"
        "Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 1000"
    ),
    dist.DistBackendError(
        NCCL + "unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.26.2\n"
        "ncclUnhandledCudaError: Call to CUDA function failed.\nLast error:\n"
        "Cuda failure 'invalid device ordinal'"
    ),
    dist.DistBackendError(
        NCCL + "invalid argument (run with NCCL_DEBUG=WARN for details), NCCL version 2.26.2\n"
        "ncclInvalidArgument: Invalid value for an argument."
    ),
    RuntimeError("CUDA error: out of memory"),
    RuntimeError("NCCL Error 1: unhandled cuda error (run with NCCL_DEBUG=INFO for details)"),
    dist.DistError("gloo connection setup: unsupported device"),
    dist.DistStoreError("Socket address already in use: cannot bind rendezvous store"),
    ValueError("all_reduce does not support RedOpType.MAX on complex tensors"),
    TimeoutError("timed out"),  # not a collective's error
]
LOST = [  # a peer died or stopped answering
    RuntimeError(
        "[/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:537] Read error [127.0.0.1]:60041: "
        "Connection reset by peer. This is typically caused by a remote worker hanging or bugs in the "
        "application."
    ),
    RuntimeError(
        "[/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:590] Connection closed by peer [10.0.0.5]:4242"
    ),
    RuntimeError(
        "[/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:78] Timed out waiting 30000ms for "
        "recv operation to complete"
    ),
    dist.DistBackendError(
        "[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=57, OpType=ALLREDUCE, "
        "NumelIn=262144, NumelOut=262144, Timeout(ms)=600000) ran for 600059 milliseconds before timing out."
    ),
    dist.DistBackendError(
        "[PG ID 0 PG GUID 0(default_pg) Rank 1] Work WorkNCCL(SeqNum=9, OpType=ALLREDUCE) timed out in "
        "blocking wait."
    ),
    dist.DistBackendError(
        NCCL + "remote process exited or there was a network error, NCCL version 2.26.2\n"
        "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting "
        "prematurely."
    ),
    dist.DistNetworkError("failed to recv, got 0 bytes"),
    dist.DistStoreError("wait timeout after 600000ms, keys: /default_pg/0//cuda//0"),
]


@pytest.mark.parametrize("error", LOCAL, ids=lambda e: f"{type(e).__name__}:{str(e)[:40]}")
def test_a_local_error_is_not_a_peer_loss(error):
    assert not is_peer_loss(error)


@pytest.mark.parametrize("error", LOST, ids=lambda e: f"{type(e).__name__}:{str(e)[:40]}")
def test_a_dead_or_silent_peer_is_a_peer_loss(error):
    assert is_peer_loss(error)

"""Is this exception a lost peer (another rank died or stopped answering), or a local error?

smoke.py and train.py report a lost peer in one line and exit 1 without process-group teardown (which can
block on a dead peer). Every other error, NCCL's local ones included (bad device, invalid usage, CUDA
errors), must surface with its traceback, so only the signatures a dead or silent peer produces count.
Checked against torch 2.13 (gloo on CPU: the survivor of a kill -9 gets the pair.cc "Connection reset by
peer" error; a hung peer gives unbound_buffer.cc's "Timed out waiting 5000ms for recv operation to
complete"; both are plain RuntimeErrors) and ProcessGroupNCCL's timeout and ncclRemoteError texts.
"""

from __future__ import annotations

import re

import torch.distributed as dist

# Texts a collective fails with when the other side is gone or silent.
PEER_LOSS = re.compile(
    "|".join(
        (
            r"Connection reset by peer",  # gloo pair.cc read error, TCPStore (ECONNRESET)
            r"Connection closed by peer",  # gloo pair.cc: the peer's socket closed (EOF)
            r"Broken pipe",  # a write to a peer whose socket is gone (EPIPE)
            r"Timed out waiting \d+ms for \w+ operation to complete",  # gloo collective timeout
            r"Watchdog caught collective operation timeout",  # ProcessGroupNCCL watchdog
            r"timed out in blocking wait",  # ProcessGroupNCCL with TORCH_NCCL_BLOCKING_WAIT=1
            r"remote process exited or there was a network error",  # ncclRemoteError
            r"ncclRemoteError",
        )
    )
)


def is_peer_loss(e: BaseException) -> bool:
    """True only when a collective failed because a peer died or stopped answering.

    DistNetworkError (a socket to a peer or the rendezvous store failed) always counts; a DistStoreError
    counts when it is a timeout (a peer never wrote its key); any RuntimeError (DistBackendError
    included) counts when its text is one of PEER_LOSS. Anything else is a local error.
    """
    if isinstance(e, dist.DistNetworkError):
        return True
    if not isinstance(e, RuntimeError):
        return False
    text = str(e)
    if isinstance(e, dist.DistStoreError) and re.search(r"timed? ?out", text, re.IGNORECASE):
        return True
    return PEER_LOSS.search(text) is not None

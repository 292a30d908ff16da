"""The launch contract smoke.py and health.py run under: Azure ML's PyTorch distribution, torchrun, or
`python -m jobs local` set MASTER_ADDR, MASTER_PORT, WORLD_SIZE, RANK, LOCAL_RANK and the node rank
(docs/reference/azure-notes.md §4). torchrun calls the node rank GROUP_RANK; Azure ML calls it NODE_RANK."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

REQUIRED = ("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE")


@dataclass(frozen=True)
class DistEnv:
    rank: int
    world: int
    local_rank: int
    node_rank: int


def from_environ(script: str, kind: str) -> DistEnv | None:
    """This process's place in the job, or None after saying on stderr which variables are missing."""
    missing = [v for v in REQUIRED if v not in os.environ]
    if missing:
        print(
            f"{script}: error: {', '.join(missing)} not set: run it as an Azure ML PyTorch job, under "
            f"torchrun, or with `python -m jobs local {kind} --nodes N --procs-per-node P`",
            file=sys.stderr,
        )
        return None
    return DistEnv(
        rank=int(os.environ["RANK"]),
        world=int(os.environ["WORLD_SIZE"]),
        local_rank=int(os.environ.get("LOCAL_RANK", 0)),
        node_rank=int(os.environ.get("NODE_RANK", os.environ.get("GROUP_RANK", 0))),
    )

"""Start one rank of a localml job on its node: ``python nodeexec.py NODES_DIR -- COMMAND...``.

Azure ML mounts a job's outputs on every node at the same path; here every node has its own mount
instance (so one node's cached listing is really its own), at ``NODES_DIR/node-<N>/...``. The runner binds
``${{outputs.x}}`` to a path holding ``@NODE_RANK@``; this shim, run as each rank, replaces it with the
rank's NODE_RANK (set by jobs.local.launcher), records its pid under ``NODES_DIR/node-<N>/pids/`` (so a test
can take the whole node down), and execs the command: the rank is this very process. Standard library only.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

PLACEHOLDER = "@NODE_RANK@"


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        print("usage: nodeexec.py NODES_DIR -- COMMAND...", file=sys.stderr)
        return 2
    node = os.environ.get("NODE_RANK", "0")
    pids = Path(argv[0]) / f"node-{node}" / "pids"
    pids.mkdir(parents=True, exist_ok=True)
    (pids / str(os.getpid())).touch()
    command = [a.replace(PLACEHOLDER, node) for a in argv[2:]]
    os.execvp(command[0], command)
    return 127  # not reached


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

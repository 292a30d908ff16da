"""The line between the fast loop and the rest, kept true.

`make check` runs every test outside tests/integration/ with `AZML_GPU_CHECK=1`: tests that need only Python
(docs/testing.md). Under it, a test that reaches for what only `make test` sets up fails at once, naming the
rule, instead of passing slowly on a machine that happens to have it: the Pulumi CLI (none is findable: the
builder's cache points at an empty folder and `pulumi` is not run), Go, Node.js or npm (Azurite), FUSE
(fusermount3), and torch in more than one process (`jobs.local.launcher.launch` of more than one rank,
torchrun). Such a test belongs in tests/integration/<topic>/.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

CHECK = os.environ.get("AZML_GPU_CHECK") == "1"
#: Executables only `make test` provides (or needs).
NEEDS_MAKE_TEST = {"pulumi", "go", "node", "npm", "npx", "fusermount3", "azurite-blob", "torchrun"}
RULE = (
    "needs what only `make test` provides ({what}); under `make check` (AZML_GPU_CHECK=1) tests use Python "
    "only: move this test to tests/integration/<topic>/ (docs/testing.md)"
)


def _refused(argv: object, env: dict[str, str] | None) -> str | None:
    """What `argv` needs that only `make test` provides; None when nothing, or when the executable is a
    stand-in a test wrote into its own temporary folder (a fake `go` on a test's PATH)."""
    args = [str(a) for a in argv] if isinstance(argv, list | tuple) else [str(argv)]
    if not args:
        return None
    exe = Path(args[0]).name
    if exe in NEEDS_MAKE_TEST:
        found = args[0] if "/" in args[0] else shutil.which(args[0], path=(env or os.environ).get("PATH"))
        if found and "/pytest-of-" in str(Path(found).resolve()):
            return None
        return exe
    if "torch.distributed.run" in args or "torch.distributed.launch" in args:
        return "torchrun"
    return None


if CHECK:
    _popen_init = subprocess.Popen.__init__

    def _guarded_init(self, args, *rest, **kw):  # type: ignore[no-untyped-def]
        what = _refused(args, kw.get("env"))
        if what is not None:
            raise AssertionError(RULE.format(what=what))
        _popen_init(self, args, *rest, **kw)

    subprocess.Popen.__init__ = _guarded_init  # type: ignore[method-assign]


@pytest.fixture(autouse=True)
def _fast_loop_only(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    if not CHECK:
        return
    monkeypatch.setenv("AZML_ENGINE_CACHE", str(tmp_path_factory.mktemp("no-engine")))
    import jobs.local.launcher

    launch = jobs.local.launcher.launch

    def one_rank_only(argv, nodes, procs_per_node, *a, **kw):  # type: ignore[no-untyped-def]
        if nodes * procs_per_node > 1:
            raise AssertionError(RULE.format(what=f"torch in {nodes * procs_per_node} processes"))
        return launch(argv, nodes, procs_per_node, *a, **kw)

    monkeypatch.setattr(jobs.local.launcher, "launch", one_rank_only)

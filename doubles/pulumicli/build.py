"""`python -m doubles.pulumicli build [--json]` (`make engine`): the Pulumi CLI at `versions.PULUMI_VERSION`,
built from the Go module proxy with the ordinary go command, cached outside the checkout and reused by every
clone.

The cache key is the CLI version and a hash of doubles/pulumicli/go/go.mod + go.sum, so a changed pin builds
anew. The folder holds `bin/pulumi` and `build.json` (what was built, how long it took, its size). Where it
lives is the gate's to know (`preflight.pulumicli.cache_root`, which finds the CLI there):
`AZML_ENGINE_CACHE`,
else `$XDG_CACHE_HOME/azml-gpu/engine`, else `~/.cache/azml-gpu/engine`.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from doubles.pulumicli import gotool
from preflight.pulumicli import cache_root
from preflight.versions import PULUMI_VERSION

HERE = Path(__file__).resolve().parent
GO_MODULE = HERE / "go"
VERSION_VAR = "github.com/pulumi/pulumi/sdk/v3/go/common/version.Version"
CLI_PACKAGE = "github.com/pulumi/pulumi/pkg/v3/cmd/pulumi"


class BuildError(RuntimeError):
    """The go command failed: the message quotes the command and the end of its output."""


def cache_key() -> str:
    digest = hashlib.sha256()
    for name in ("go.mod", "go.sum"):
        digest.update((GO_MODULE / name).read_bytes())
    return f"pulumi-v{PULUMI_VERSION}-{digest.hexdigest()[:12]}"


def bin_dir() -> Path:
    return cache_root() / cache_key() / "bin"


def pulumi_path() -> Path:
    return bin_dir() / "pulumi"


@dataclass
class Built:
    pulumi: str
    version: str
    cached: bool
    build_seconds: float
    size_bytes: int
    go: str


def _say(msg: str) -> None:
    print(f"[engine] {msg}", file=sys.stderr, flush=True)


def _run_with_progress(cmd: list[str], cwd: Path, env: dict[str, str], label: str) -> None:
    _say(f"$ {' '.join(cmd)}")
    started = time.monotonic()
    proc = subprocess.Popen(
        cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    tail: list[str] = []
    done = threading.Event()

    def ticker() -> None:
        while not done.wait(30):
            _say(f"{label}: still running ({time.monotonic() - started:.0f} s)")

    threading.Thread(target=ticker, daemon=True).start()
    assert proc.stdout is not None
    for line in proc.stdout:
        tail = (tail + [line.rstrip()])[-30:]
    rc = proc.wait()
    done.set()
    if rc != 0:
        raise BuildError(f"`{' '.join(cmd)}` exited {rc}:\n" + "\n".join(tail))


def _cached() -> Built | None:
    record = cache_root() / cache_key() / "build.json"
    if not (record.exists() and pulumi_path().exists()):
        return None
    data = json.loads(record.read_text())
    return Built(**{**data, "cached": True})


def build(force: bool = False) -> Built:
    if not force and (found := _cached()) is not None:
        return found
    try:
        go = gotool.find()
    except gotool.GoMissing as e:
        raise BuildError(str(e)) from e
    target = bin_dir()
    target.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "GOFLAGS": "-mod=readonly -buildvcs=false", **go.env}
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="azml-engine-go-") as work:
        for name in ("go.mod", "go.sum", "tools.go"):
            shutil.copyfile(GO_MODULE / name, Path(work) / name)
        out = Path(work) / "pulumi"
        cmd = [
            go.path,
            "build",
            "-ldflags",
            f"-s -w -X {VERSION_VAR}=v{PULUMI_VERSION}",
            "-o",
            str(out),
            CLI_PACKAGE,
        ]
        _run_with_progress(cmd, Path(work), env, "go build (first build: about 10 minutes on 2 cores)")
        shutil.move(str(out), pulumi_path())
    built = Built(
        pulumi=str(pulumi_path()),
        version=PULUMI_VERSION,
        cached=False,
        build_seconds=round(time.monotonic() - started, 1),
        size_bytes=pulumi_path().stat().st_size,
        go=go.describe(),
    )
    (cache_root() / cache_key() / "build.json").write_text(json.dumps(asdict(built), indent=1))
    return built


def main(argv: list[str]) -> int:
    as_json = "--json" in argv
    try:
        built = build(force="--force" in argv)
    except BuildError as e:
        if as_json:
            print(json.dumps({"ok": False, "error": str(e)}))
        else:
            print(f"pulumicli build: {e}", file=sys.stderr)
        return 1
    if as_json:
        print(json.dumps({"ok": True, **asdict(built)}))
    else:
        how = "cached" if built.cached else f"built in {built.build_seconds:.0f} s"
        print(f"pulumi v{built.version}: {built.pulumi} ({built.size_bytes / 1e6:.0f} MB, {how})")
    return 0

"""The Pulumi CLI the gate runs: which one, and running it.

Which one (`find`), in this order:
1. `$AZML_GPU_PULUMI`, when set: that file, whatever its version (an explicit choice; a version outside the
   supported range gets a note, not a refusal);
2. `pulumi` on PATH, when its version is one the project supports (`preflight.versions`: 3.x from 3.274.1);
   an unsupported one is skipped with a note saying so;
3. the CLI `make engine` builds from Pulumi's Go modules (doubles/pulumicli), at the location it documents:
   `$AZML_ENGINE_CACHE` or `${XDG_CACHE_HOME:-~/.cache}/azml-gpu/engine/pulumi-v<version>-<hash>/bin/pulumi`.
None of them: `CliMissing`, whose message says how to install one.

Running it (`Cli.run`): `pulumi <command> ... --non-interactive`, with the stack program served by this
process (`preflight.langhost`) and the engine's events written to a file (`--event-log`, which the CLI offers
with `PULUMI_DEBUG_COMMANDS` set, as the Automation API sets it: pulumi/automation/_local_workspace.py).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from preflight.versions import MAX_CLI_EXCLUSIVE, MIN_CLI, PULUMI_VERSION, parse_version, supported

ENV_CLI = "AZML_GPU_PULUMI"
INSTALL = (
    f"install the Pulumi CLI {PULUMI_VERSION} or a later 3.x (`curl -fsSL https://get.pulumi.com | sh -s -- "
    f"--version {PULUMI_VERSION}`, or see https://www.pulumi.com/docs/install/) and put it on PATH, or set "
    f"{ENV_CLI} to its path; in a checkout of this repository `make engine` builds one from Pulumi's Go "
    "modules"
)


class CliMissing(RuntimeError):
    """No usable Pulumi CLI: the message names what was tried and how to install one."""


def _shown(version: tuple[int, int, int]) -> str:
    return ".".join(map(str, version))


@dataclass(frozen=True)
class Cli:
    path: Path
    version: str
    source: str  # "AZML_GPU_PULUMI" | "PATH" | "built by make engine"
    notes: tuple[str, ...] = field(default=())

    def as_json(self) -> dict[str, object]:
        return {
            "path": str(self.path),
            "version": self.version,
            "source": self.source,
            "notes": list(self.notes),
        }

    def run(
        self,
        args: list[str],
        *,
        cwd: Path,
        env: dict[str, str],
        timeout: float = 900,
        client: str | None = None,
        event_log: Path | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """`pulumi <args> --non-interactive [--client ADDRESS --exec-kind auto.inline] [--event-log F]`,
        output captured."""
        argv = [str(self.path), *args, "--non-interactive"]
        if client is not None:
            argv += ["--client", client, "--exec-kind", "auto.inline"]
        if event_log is not None:
            argv += ["--event-log", str(event_log)]
        return subprocess.run(argv, cwd=cwd, env=env, timeout=timeout, text=True, capture_output=True)


def version_of(path: Path) -> tuple[int, int, int] | None:
    """`pulumi version` of the CLI at `path`, parsed; None when it does not run or answers no version."""
    try:
        answer = subprocess.run(
            [str(path), "version"],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "NO_COLOR": "1"},
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return parse_version(answer.stdout) if answer.returncode == 0 else None


def cache_root() -> Path:
    """Where `make engine` keeps the CLIs it builds (doubles/pulumicli/build.py writes there)."""
    if os.environ.get("AZML_ENGINE_CACHE"):
        return Path(os.environ["AZML_ENGINE_CACHE"])
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "azml-gpu" / "engine"


def built() -> list[Path]:
    """The CLIs `make engine` built at the tested version, newest build first."""
    found = cache_root().glob(f"pulumi-v{PULUMI_VERSION}-*/bin/pulumi")
    return sorted((p for p in found if os.access(p, os.X_OK)), key=lambda p: p.stat().st_mtime, reverse=True)


def find() -> Cli:
    """The CLI to run (module docstring), or CliMissing."""
    notes: list[str] = []
    wanted = f"{_shown(MIN_CLI)} or later, below {_shown(MAX_CLI_EXCLUSIVE)}"
    explicit = os.environ.get(ENV_CLI)
    if explicit:
        path = Path(explicit)
        version = version_of(path) if path.is_file() else None
        if version is None:
            raise CliMissing(
                f"{ENV_CLI}={explicit}: not a Pulumi CLI that answers `pulumi version`; point it at the "
                "`pulumi` "
                f"executable, or unset it to use the one on PATH"
            )
        if not supported(version):
            notes.append(f"{ENV_CLI} names Pulumi CLI {_shown(version)}, outside the tested range ({wanted})")
        return Cli(path, _shown(version), ENV_CLI, tuple(notes))
    on_path = shutil.which("pulumi")
    if on_path:
        version = version_of(Path(on_path))
        if version is not None and supported(version):
            return Cli(Path(on_path), _shown(version), "PATH")
        shown = _shown(version) if version else "a version it does not say"
        notes.append(f"the Pulumi CLI on PATH ({on_path}) is {shown}; the gate needs {wanted}")
    for path in built():
        version = version_of(path)
        if version is not None and supported(version):
            return Cli(path, _shown(version), "built by make engine", tuple(notes))
    tried = "; ".join(notes) or "no `pulumi` on PATH"
    raise CliMissing(f"no Pulumi CLI to run ({tried}): {INSTALL}")

"""A scratch workspace for the real CLI: a copy of the checkout, a local file backend, passphrase secrets, and
the stand-in azure-native plugin installed with automatic plugin download turned off.

Why a copy: `pulumi stack init` with passphrase secrets writes `encryptionsalt:` into `Pulumi.<stack>.yaml`,
and the backend, plugin cache and ARM store are per run. The copy links the checkout's virtualenvs (`.venv`
for the program, `policies/.venv` for the pack) instead of copying them.

Environment (pulumi/pulumi sdk/go/common/env/env.go): `PULUMI_HOME` (plugins, credentials),
`PULUMI_BACKEND_URL` (`file://<work>/state`), `PULUMI_CONFIG_PASSPHRASE` (empty: a local test backend
holds no secret worth a passphrase, and the CLI accepts an empty one when the variable is set),
`PULUMI_SKIP_UPDATE_CHECK`, `PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION` (a missing plugin is an error, never
a download), `PULUMI_SKIP_CONFIRMATIONS`, `PULUMI_DEBUG_COMMANDS` (for `--event-log`).

The policy pack: the CLI (v3.274) starts a policy-pack folder only through its runtime's language host
(pkg/resource/plugin/analyzer_plugin.go `NewPolicyAnalyzer` -> the host's `RunPlugin`), and no
`pulumi-language-python` can be built here (docs/engine.md). The same function starts an executable given as
`--policy-pack` directly as a binary analyzer plugin, with the engine's address as its last argument. So the
workspace writes `policy-pack/azml-gpu-policies`, which runs exactly what the Python host's `RunPlugin` runs
for a policy pack (pulumi/pulumi sdk/python/cmd/pulumi-language-python/main.go): `<pack virtualenv>/python -u
-m pulumi.policy <args...> <pack folder>` with the pack folder as working directory.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from doubles.pulumicli import build
from preflight.provider.store import ENV as ARM_STORE_ENV
from preflight.versions import AZURE_NATIVE_VERSION

ROOT = Path(__file__).resolve().parent.parent
#: Not copied: virtualenvs (linked), caches, the engine's own work folders.
SKIP = {".git", ".venv", "node_modules", "__pycache__", ".pytest_cache", ".ruff_cache", "out", "build"}


class WorkspaceError(RuntimeError):
    """Setting up the scratch workspace failed (message names the step and the fix)."""


def _copy_checkout(src: Path, dest: Path) -> None:
    def ignore(folder: str, names: list[str]) -> set[str]:
        return {n for n in names if n in SKIP or n.endswith(".egg-info")}

    shutil.copytree(src, dest, ignore=ignore, symlinks=True)
    for venv in (".venv", "policies/.venv"):
        if not (src / venv / "bin" / "python").exists():
            raise WorkspaceError(f"{src / venv} is missing: run `make setup` first")
        (dest / venv).symlink_to(src / venv)
    if (src / "localml" / "node_modules").exists():
        (dest / "localml" / "node_modules").symlink_to(src / "localml" / "node_modules")


@dataclass
class Workspace:
    """`Workspace.create(stack)`: everything `pulumi preview` / `up` of that stack needs, under `work`."""

    stack: str
    work: Path
    pulumi: Path
    env: dict[str, str] = field(default_factory=dict)

    @property
    def project(self) -> Path:
        return self.work / "project"

    @classmethod
    def create(cls, stack: str, work: Path | None = None, source: Path = ROOT) -> Workspace:
        if not (source / f"Pulumi.{stack}.yaml").exists():
            stacks = sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in source.glob("Pulumi.*.yaml"))
            raise WorkspaceError(
                f"no stack file Pulumi.{stack}.yaml in {source}; stacks: {', '.join(stacks)}"
            )
        built = build.build()
        work = work or Path(tempfile.mkdtemp(prefix=f"azml-engine-{stack}-"))
        ws = cls(stack, work, Path(built.pulumi))
        _copy_checkout(source, ws.project)
        (work / "state").mkdir(exist_ok=True)
        ws.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("PULUMI_")},
            "PULUMI_HOME": str(work / "pulumi-home"),
            "PULUMI_BACKEND_URL": (work / "state").as_uri(),
            "PULUMI_CONFIG_PASSPHRASE": "",
            "PULUMI_SKIP_UPDATE_CHECK": "true",
            "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION": "true",
            "PULUMI_SKIP_CONFIRMATIONS": "true",
            # `--event-log` exists only with debug commands on (pkg/cmd/pulumi/operations/preview.go), as the
            # Automation API sets it (pulumi/automation/_local_workspace.py).
            "PULUMI_DEBUG_COMMANDS": "true",
            "NO_COLOR": "1",
            ARM_STORE_ENV: str(work / "arm-store.json"),
        }
        ws._install_plugin()
        ws._write_policy_launcher()
        ws.cli("stack", "init", stack, "--secrets-provider", "passphrase")
        return ws

    def cli(
        self, *args: str, check: bool = True, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess:
        """Run the CLI in the project copy, its output captured."""
        r = subprocess.run(
            [str(self.pulumi), *args, "--non-interactive"]
            if args[0] != "plugin"
            else [str(self.pulumi), *args],
            cwd=self.project,
            env=env or self.env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        if check and r.returncode != 0:
            raise WorkspaceError(f"`pulumi {' '.join(args)}` exited {r.returncode}:\n{r.stdout}{r.stderr}")
        return r

    def _install_plugin(self) -> None:
        """`pulumi plugin install resource azure-native <version> --file <executable>`: the stand-in, a script
        that starts preflight/provider with the program's interpreter and this checkout on its path."""
        launcher = self.work / "plugin" / "pulumi-resource-azure-native"
        launcher.parent.mkdir(parents=True, exist_ok=True)
        launcher.write_text(
            "#!/bin/sh\n"
            "# The stand-in azure-native provider (preflight/provider): docs/engine.md.\n"
            f'PYTHONPATH="{self.project}" exec "{self.project / ".venv" / "bin" / "python"}" '
            '-m preflight.provider "$@"\n'
        )
        launcher.chmod(0o755)
        self.cli(
            "plugin", "install", "resource", "azure-native", AZURE_NATIVE_VERSION, "--file", str(launcher)
        )

    @property
    def policy_pack(self) -> Path:
        return self.work / "policy-pack" / "azml-gpu-policies"

    def _write_policy_launcher(self) -> None:
        pack = self.project / "policies"
        self.policy_pack.parent.mkdir(parents=True, exist_ok=True)
        self.policy_pack.write_text(
            "#!/bin/sh\n"
            "# The policies/ pack as a binary analyzer plugin: what pulumi-language-python's RunPlugin\n"
            "# runs for a Python policy pack (preflight/workspace.py, docs/engine.md).\n"
            f'cd "{pack}" || exit 1\n'
            f'exec "{pack / ".venv" / "bin" / "python"}" -u -m pulumi.policy "$@" "{pack}"\n'
        )
        self.policy_pack.chmod(0o755)
        # "It's valid for a binary to also ship a PulumiPolicy.yaml" (NewPolicyAnalyzer): the pack's own,
        # so the engine reports its version.
        (self.policy_pack.parent / "PulumiPolicy.yaml").symlink_to(pack / "PulumiPolicy.yaml")

    def cleanup(self) -> None:
        shutil.rmtree(self.work, ignore_errors=True)


def say(msg: str) -> None:
    print(f"[engine] {msg}", file=sys.stderr, flush=True)

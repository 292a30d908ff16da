"""Scratch workspaces for the real Pulumi CLI: one per evaluation, each a project folder and a local file
backend, so that the gate never writes into the user's checkout, state or Pulumi account.

- The project folder holds the program's `Pulumi.yaml` and `Pulumi.<stack>.yaml` (the stack file as given,
  whose `config:` the CLI reads); `pulumi stack init` with passphrase secrets writes `encryptionsalt:` there,
  which is why it is a copy. The program itself runs from its own folder (`preflight.langhost`).
- The backend is `file://<work>/<evaluation>/state` (two evaluations of one stack name need two backends).
- The policy pack is started by the CLI through a launcher (`policy-pack/<name>`), an executable that runs
what
  the Python language host's `RunPlugin` runs for a Python policy pack (pulumi/pulumi
  sdk/python/cmd/pulumi-language-python/main.go): `<python> -u -m pulumi.policy <engine address> <pack
  folder>` in the pack folder. The CLI (v3.274) starts an executable given as `--policy-pack` directly as a
  binary analyzer plugin (pkg/resource/plugin/analyzer_plugin.go `NewPolicyAnalyzer`), so no
  `pulumi-language-python` host is needed. The pack's python is its own virtualenv (`policies/.venv`, as the
  CLI would use for `runtime.options.virtualenv`) when there is one, else this interpreter (an installed
  gate).
  The launcher ends the pack at once on the engine's SIGINT (nothing to flush; an orderly interpreter shutdown
  took 0.3 s of every CLI run, measured).

Environment (pulumi/pulumi sdk/go/common/env/env.go): `PULUMI_HOME`, `PULUMI_BACKEND_URL`,
`PULUMI_CONFIG_PASSPHRASE` (empty: a scratch backend holds no secret worth a passphrase),
`PULUMI_SKIP_UPDATE_CHECK`,
`PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION` (a missing plugin is an error, never a download),
`PULUMI_SKIP_CONFIRMATIONS`, `PULUMI_DEBUG_COMMANDS` (for `--event-log`), and `PULUMI_DEBUG_PROVIDERS`
(azure-native is the gate's offline provider, already running: `preflight.provider.process`).
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

from preflight.pulumicli import Cli


class WorkspaceError(RuntimeError):
    """Setting up a scratch workspace failed (the message names the step and the CLI's answer)."""


#: What the launcher runs in the pack's interpreter: pulumi.policy's own entry point, ended at once by
#: SIGINT or SIGTERM.
_PACK_MAIN = (
    "import os, runpy, signal, sys; "
    "[signal.signal(s, lambda *_: os._exit(0)) for s in (signal.SIGINT, signal.SIGTERM)]; "
    "sys.argv[0] = 'pulumi.policy'; runpy.run_module('pulumi.policy', run_name='__main__')"
)


def pack_python(pack_dir: Path) -> Path:
    """The interpreter that runs the pack: its own virtualenv when it has one, else this one."""
    own = pack_dir / ".venv" / "bin" / "python"
    return own if own.exists() else Path(sys.executable)


def write_pack_launcher(work: Path, pack_dir: Path, name: str = "azml-gpu-policies") -> Path:
    """The executable the CLI is given as `--policy-pack` (module docstring)."""
    launcher = work / "policy-pack" / name
    launcher.parent.mkdir(parents=True, exist_ok=True)
    python = pack_python(pack_dir)
    launcher.write_text(
        "#!/bin/sh\n"
        "# The policy pack as a binary analyzer plugin (preflight/workspace.py).\n"
        f"cd {shlex.quote(str(pack_dir))} || exit 1\n"
        f'exec {shlex.quote(str(python))} -u -c {shlex.quote(_PACK_MAIN)} "$@" {shlex.quote(str(pack_dir))}\n'
    )
    launcher.chmod(0o755)
    # "It's valid for a binary to also ship a PulumiPolicy.yaml" (NewPolicyAnalyzer): the pack's own, so the
    # engine reports its name and version.
    manifest = launcher.parent / "PulumiPolicy.yaml"
    if not manifest.exists():
        manifest.symlink_to(pack_dir / "PulumiPolicy.yaml")
    return launcher


@dataclass
class Workspace:
    """One evaluation's project folder and backend (`create`), and the CLI run in it (`run`)."""

    cli: Cli
    stack: str
    root: Path  # <work>/<evaluation>
    env: dict[str, str] = field(default_factory=dict)

    @property
    def project(self) -> Path:
        return self.root / "project"

    @classmethod
    def create(
        cls,
        cli: Cli,
        root: Path,
        stack: str,
        project_file: Path,
        stack_text: str,
        provider_port: int,
        base_env: dict[str, str] | None = None,
    ) -> Workspace:
        """A project folder with `project_file` as Pulumi.yaml and `stack_text` as Pulumi.<stack>.yaml, an
        empty backend, the stack initialised."""
        ws = cls(cli, stack, root)
        ws.project.mkdir(parents=True)
        (root / "state").mkdir()
        shutil.copyfile(project_file, ws.project / "Pulumi.yaml")
        (ws.project / f"Pulumi.{stack}.yaml").write_text(stack_text)
        ws.env = ws._environment(base_env if base_env is not None else dict(os.environ), provider_port)
        ws.cli_checked("stack", "init", stack, "--secrets-provider", "passphrase")
        return ws

    def copy(self, root: Path) -> Workspace:
        """The same project and backend under `root` (a file backend is its folder: the copy is the same
        stack,
        its encryption salt included), without a second `pulumi stack init` (0.3 s of CPU, measured)."""
        shutil.copytree(self.root, root, symlinks=True, ignore=shutil.ignore_patterns("pulumi-home"))
        twin = Workspace(self.cli, self.stack, root)
        port = self.env["PULUMI_DEBUG_PROVIDERS"].rsplit(":", 1)[1]
        twin.env = twin._environment(self.env, int(port))
        return twin

    def _environment(self, inherited: dict[str, str], provider_port: int) -> dict[str, str]:
        root = self.root
        return {
            **{k: v for k, v in inherited.items() if not k.startswith("PULUMI_")},
            "PULUMI_HOME": str(root / "pulumi-home"),
            "PULUMI_BACKEND_URL": (root / "state").as_uri(),
            "PULUMI_CONFIG_PASSPHRASE": "",
            "PULUMI_SKIP_UPDATE_CHECK": "true",
            "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION": "true",
            "PULUMI_SKIP_CONFIRMATIONS": "true",
            # `--event-log` exists only with debug commands on (pkg/cmd/pulumi/operations/preview.go), as the
            # Automation API sets it (pulumi/automation/_local_workspace.py).
            "PULUMI_DEBUG_COMMANDS": "true",
            "PULUMI_DEBUG_PROVIDERS": f"azure-native:{provider_port}",
            "NO_COLOR": "1",
        }

    def run(self, *args: str, client: str | None = None, event_log: Path | None = None, timeout: float = 900):
        """The CLI in this workspace's project folder (`Cli.run`)."""
        return self.cli.run(
            [*args, "--stack", self.stack],
            cwd=self.project,
            env=self.env,
            timeout=timeout,
            client=client,
            event_log=event_log,
        )

    def cli_checked(self, *args: str) -> str:
        """A CLI command that must succeed (stack init, import, export, output); its stdout."""
        r = self.cli.run(list(args), cwd=self.project, env=self.env, timeout=300)
        if r.returncode != 0:
            said = (r.stderr.strip() or r.stdout.strip()).splitlines()[-5:]
            raise WorkspaceError(f"`pulumi {' '.join(args)}` exited {r.returncode}: {' / '.join(said)}")
        return r.stdout

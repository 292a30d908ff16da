"""A stack deployed into localml with the real `pulumi up`, through the gate's own CLI driver.

    with LocalAzureML(implicit_workspaces=False) as local:
        with StackDeployment("dev", work, local.subprocess_env()) as d:
            d.up()                      # pulumi up (the policy pack too), every resource PUT to localml
            code, outputs, err = d.outputs()   # pulumi stack output --json --show-secrets
            d.destroy()                 # pulumi destroy --run-program

The parts are preflight's (docs/engine.md): the CLI `preflight.pulumicli.find()` picks (PATH, or the one `make
engine` built), a scratch project and file backend (`preflight.workspace.Workspace`), the stack program served
from this process (`preflight.langhost.serve`, for the runs that execute it: up, preview, refresh), and the
offline azure-native provider as one process the CLI attaches to (`preflight.provider.process`), started with
localml's environment: `ARM_CLOUD_METADATA_URL` is set, so the provider sends every resource's create, read,
update and delete to localml as azure-native sends them to Azure (`preflight/provider/arm.py`). The policy
pack runs as in the deploy workflow (`--policy-pack policies --policy-pack-config
policies/config/<stack>.json`, .github/workflows/deploy-stack.yml) unless `policy=False` (a test's variation
of a stack).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from preflight import events

ROOT = Path(__file__).resolve().parent.parent.parent


@dataclass
class Ran:
    """One CLI run: its exit code, seconds, the engine's run (from `--event-log`) when it had one, output."""

    command: str
    exit_code: int
    seconds: float
    run: events.Run | None = None
    stdout: str = ""
    stderr: str = ""

    @property
    def ok(self) -> bool:
        return self.exit_code == 0

    def tail(self, lines: int = 12) -> str:
        """The end of what the CLI said: its error diagnostics, else the end of stderr and stdout."""
        if self.run is not None and self.run.errors:
            return " / ".join(d.message for d in self.run.errors)
        said = (self.stderr.strip() + "\n" + self.stdout.strip()).strip().splitlines()
        return "\n".join(said[-lines:]) or "(no output)"


@dataclass
class StackDeployment:
    """`pulumi` runs of `stack` of the program in `root`, in a scratch workspace under `work`, against the ARM
    endpoint `env` names (localml's `subprocess_env()`). `stack_text`: the stack file (default
    `<root>/Pulumi.<stack>.yaml`)."""

    stack: str
    work: Path
    env: dict[str, str]
    stack_text: str | None = None
    policy: bool = True
    root: Path = ROOT
    timeout: float = 900
    _provider: Any = field(default=None, repr=False)
    _ws: Any = field(default=None, repr=False)
    _policy_args: list[str] = field(default_factory=list, repr=False)

    def __enter__(self) -> StackDeployment:
        from preflight import pulumicli
        from preflight.gate import pack_dir
        from preflight.provider.process import ProviderProcess
        from preflight.workspace import Workspace, write_pack_launcher

        cli = pulumicli.find()  # CliMissing: the message says how to get one
        self.work.mkdir(parents=True, exist_ok=True)
        self._provider = ProviderProcess(env=self.env).spawn()
        try:
            text = self.stack_text
            if text is None:
                text = (self.root / f"Pulumi.{self.stack}.yaml").read_text(encoding="utf-8")
            self._ws = Workspace.create(
                cli,
                self.work / "pulumi",
                self.stack,
                self.root / "Pulumi.yaml",
                text,
                self._provider.port,
                self.env,
            )
            if self.policy:
                pack = write_pack_launcher(self.work, pack_dir(self.root))
                config = self.root / "policies" / "config" / f"{self.stack}.json"
                self._policy_args = ["--policy-pack", str(pack), "--policy-pack-config", str(config)]
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._provider is not None:
            self._provider.close()
            self._provider = None

    @property
    def backend(self) -> str:
        """The file backend holding the stack's state (`PULUMI_BACKEND_URL`)."""
        return self._ws.env["PULUMI_BACKEND_URL"]

    def _run(self, command: str, *args: str, program: bool) -> Ran:
        from preflight import langhost

        log = self.work / f"{command}-{time.monotonic_ns()}.jsonl"
        started = time.monotonic()
        if program:
            # The program (and the clusters' before-delete hook in it, components/compute_delete.py) runs in
            # this process: it sees localml's environment (ARM endpoint, identity, CA) for the run, as a
            # program the CLI starts inherits the CLI's.
            saved = dict(os.environ)
            os.environ.update(self.env)
            try:
                with langhost.serve(self.root) as host:
                    r = self._ws.run(command, *args, client=host.address, event_log=log, timeout=self.timeout)
            finally:
                os.environ.clear()
                os.environ.update(saved)
        else:
            r = self._ws.run(command, *args, event_log=log, timeout=self.timeout)
        run = events.parse(r.returncode, events.read(log), r.stderr) if log.exists() else None
        return Ran(command, r.returncode, time.monotonic() - started, run, r.stdout, r.stderr)

    def up(self, skip_preview: bool = False) -> Ran:
        """`pulumi up --yes` (with the policy pack unless `policy=False`)."""
        extra = ["--skip-preview"] if skip_preview else []
        return self._run("up", "--yes", *extra, *self._policy_args, program=True)

    def refresh(self) -> Ran:
        return self._run("refresh", "--yes", "--skip-preview", program=True)

    def preview(self) -> Ran:
        return self._run("preview", "--diff", *self._policy_args, program=True)

    def destroy(self, refresh: bool = False, run_program: bool = True) -> Ran:
        """`pulumi destroy --yes --run-program`, as the project's commands run it (README): the program runs,
        so the clusters' before-delete hook is there to delete each compute (components/compute_delete.py);
        `run_program=False`: a plain `pulumi destroy` (the state alone says what to delete; the CLI then
        refuses the whole destroy, since the clusters have delete hooks). `refresh`: read every resource
        first (`--refresh`), so what was deleted outside Pulumi is not deleted again."""
        return self._run(
            "destroy",
            "--yes",
            "--skip-preview",
            *(["--run-program"] if run_program else []),
            *(["--refresh"] if refresh else []),
            program=run_program,
        )

    def set_stack_text(self, text: str) -> None:
        """Replace the stack file's config (keeping the `encryptionsalt:` that `pulumi stack init` wrote), for
        the next run: a change of the stack between two `pulumi up`s."""
        target = self._ws.project / f"Pulumi.{self.stack}.yaml"
        salt = [line for line in target.read_text().splitlines() if line.startswith("encryptionsalt:")]
        target.write_text("\n".join(salt) + ("\n" if salt else "") + text)

    def outputs(self) -> tuple[int, dict[str, Any], str]:
        """`pulumi stack output --json --show-secrets`: (exit code, outputs, error text)."""
        r = self._cli("stack", "output", "--json", "--show-secrets")
        try:
            return r.returncode, json.loads(r.stdout) if r.returncode == 0 else {}, r.stderr
        except ValueError:
            return 1, {}, f"not JSON: {r.stdout[-2000:]}"

    def export(self) -> dict[str, Any]:
        """`pulumi stack export --show-secrets`: the deployment's state."""
        r = self._cli("stack", "export", "--show-secrets")
        if r.returncode != 0:
            raise RuntimeError(f"pulumi stack export exited {r.returncode}: {r.stderr[-2000:]}")
        return json.loads(r.stdout)

    def _cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        return self._ws.run(*args, timeout=300)

"""``python -m doubles.localml smoke [--json] [--work DIR] [--keep]`` (``make smoke``): the deploy workflow
(.github/workflows/deploy-stack.yml) on the dev stack, offline, with the real Pulumi CLI.

1. start Azurite and the local Azure ML control plane (`doubles.localml.env.LocalAzureML`, no implicit
   workspaces: `pulumi up` makes the workspace, as on Azure);
2. ``pulumi up`` of the dev stack with the policy pack (`doubles.localml.pulumiup.StackDeployment`: the CLI
   `preflight.pulumicli.find()` picks, the offline azure-native provider sending every resource's PUT to
   localml as azure-native sends it to ARM);
3. ``pulumi stack output --json --show-secrets`` -> the outputs file the jobs read (``--outputs F``);
4. ``python -m jobs check-deploy``: the live clusters against the stack outputs, through azure-ai-ml;
5. ``python -m jobs submit smoke`` on the stack's smoke cluster (its first, `preflight.stacks.smoke_cluster`,
   as the deploy workflow picks it), followed, its logs downloaded and verified (``--allow-socket``: a CPU run
   has gloo, no NCCL lines);
6. ``pulumi destroy``; the step reports what is left in localml's ARM store (nothing, when the destroy
   deleted every resource it made).
Progress goes to stderr (``[localml smoke] ...``); ``--json`` prints one document with each step (its exit
code, seconds and report). Exit: the first failing step's exit code (0 when all pass; ``pulumi destroy``
runs whenever ``pulumi up`` ran); 2 when there is no Pulumi CLI or Azurite.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from doubles.localml.env import LocalAzureML
from doubles.localml.pulumiup import ROOT, StackDeployment

STACK = "dev"


def say(msg: str) -> None:
    print(f"[localml smoke] {msg}", file=sys.stderr, flush=True)


def _json_or_text(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text[-4000:]


class Steps:
    """The steps run so far, each `{"step", "exit_code", "seconds", ...}`; the first failure's exit code."""

    def __init__(self) -> None:
        self.done: list[dict[str, Any]] = []
        self.exit_code = 0

    def add(self, name: str, code: int, seconds: float, **extra: Any) -> bool:
        self.done.append({"step": name, "exit_code": code, "seconds": round(seconds, 1), **extra})
        say(f"{name}: exit {code} ({seconds:.1f} s)")
        if code != 0 and self.exit_code == 0:
            self.exit_code = code
        return code == 0


def _jobs(
    env: dict[str, str], *args: str, timeout: float = 600
) -> tuple[subprocess.CompletedProcess[str], float]:
    say("$ python -m jobs " + " ".join(args))
    started = time.monotonic()
    r = subprocess.run(
        [sys.executable, "-m", "jobs", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if r.returncode != 0:
        sys.stderr.write(r.stderr[-4000:])
    return r, time.monotonic() - started


def _after_up(d: StackDeployment, env: dict[str, str], work: Path, steps: Steps) -> None:
    from preflight.stacks import smoke_cluster

    started = time.monotonic()
    code, outputs, err = d.outputs()
    if not steps.add(
        "pulumi stack output", code, time.monotonic() - started, error=err.strip()[-2000:] or None
    ):
        return
    outputs_file = work / f"{d.stack}.json"
    outputs_file.write_text(json.dumps(outputs, indent=2) + "\n")
    r, seconds = _jobs(env, "check-deploy", "--outputs", str(outputs_file), "--json")
    if not steps.add("jobs check-deploy", r.returncode, seconds, report=_json_or_text(r.stdout)):
        return
    cluster = smoke_cluster(d.stack, d.root)
    r, seconds = _jobs(
        env,
        "submit",
        "smoke",
        "--outputs",
        str(outputs_file),
        "--cluster",
        cluster,
        "--allow-socket",
        "--logs",
        str(work / "smoke-logs"),
        "--poll-seconds",
        "1",
        "--json",
    )
    steps.add(f"jobs submit smoke --cluster {cluster}", r.returncode, seconds, report=_json_or_text(r.stdout))


def run(work: Path, as_json: bool) -> int:
    from preflight.pulumicli import CliMissing

    t0 = time.monotonic()
    steps = Steps()
    calls = 0
    left: list[str] = []
    say(f"starting Azurite and the control plane (work folder {work})")
    with LocalAzureML(work / "localml", implicit_workspaces=False) as local:
        assert local.control_plane is not None
        env = local.subprocess_env()
        say(
            f"control plane {local.control_plane.base_url}; the SDKs and the provider reach it through the "
            "environment"
        )
        try:
            with StackDeployment(STACK, work / "deploy", env) as deployment:
                say(f"$ pulumi up --yes --stack {STACK} --policy-pack policies ({deployment.backend})")
                up = deployment.up()
                report: dict[str, Any] = {"ops": up.run.ops if up.run else {}}
                if up.run is not None and up.run.violations:
                    report["violations"] = [v.as_json() for v in up.run.violations]
                if not up.ok:
                    report["error"] = up.tail()
                    say(f"pulumi up failed: {report['error']}")
                steps.add("pulumi up", up.exit_code, up.seconds, **report)
                if up.ok:
                    _after_up(deployment, env, work, steps)
                say(f"$ pulumi destroy --yes --run-program --stack {STACK}")
                down = deployment.destroy()
                left = sorted(r.id for r in local.control_plane.store.resources.values())
                extra: dict[str, Any] = {"left_in_store": left}
                if not down.ok:
                    extra["error"] = down.tail()
                    say(f"pulumi destroy failed: {extra['error']}")
                steps.add("pulumi destroy", down.exit_code, down.seconds, **extra)
        except CliMissing as exc:
            say(f"FAILED: {exc}")
            steps.add("pulumi up", 2, time.monotonic() - t0, error=str(exc))
        calls = len(local.control_plane.server.log)
    return _finish(steps, t0, calls, left, work, as_json)


def _finish(steps: Steps, t0: float, calls: int, left: list[str], work: Path, as_json: bool) -> int:
    seconds = time.monotonic() - t0
    verdict = "OK" if steps.exit_code == 0 else f"FAILED (exit {steps.exit_code})"
    say(
        f"{verdict}; {calls} control-plane calls; {len(left)} resources left; {seconds:.0f} s; "
        "everything stopped"
    )
    if as_json:
        document = {
            "command": "smoke",
            "stack": STACK,
            "ok": steps.exit_code == 0,
            "exit_code": steps.exit_code,
            "steps": steps.done,
            "control_plane_calls": calls,
            "seconds": round(seconds, 1),
            "work": str(work),
        }
        print(json.dumps(document, indent=2))
    return steps.exit_code


def main(as_json: bool = False, work: Path | None = None, keep: bool = False) -> int:
    own = work is None
    folder = Path(tempfile.mkdtemp(prefix="localml-smoke-")) if work is None else Path(work)
    try:
        return run(folder, as_json)
    finally:
        if own and not keep:
            shutil.rmtree(folder, ignore_errors=True)
        elif keep or not own:
            say(f"work folder kept: {folder}")

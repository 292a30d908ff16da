"""`python -m engine up STACK` (`make engine-up STACK=dev`): the README's deploy flow, with the real CLI.

1. start the local Azure ML control plane and Azurite (`doubles.localml.env.LocalAzureML`); the CLI, the stand-in
   azure-native plugin and the jobs package all get its environment;
2. `pulumi up --policy-pack policies`: the workspace and its clusters are PUT to the control plane by the
   stand-in plugin, everything else kept in the plugin's ARM store;
3. `pulumi stack output --json --show-secrets` -> the outputs file `jobs` reads (`--outputs F`);
4. `python -m jobs check-deploy`: the live clusters against the stack outputs;
5. `python -m jobs submit smoke` on the stack's first cluster, through azure-ai-ml, verified;
6. `pulumi destroy`, and the scratch workspace removed (unless `--keep`).

Exit: the first failing step's exit code (0 when all pass). `--json` prints one object with each step.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from preflight import events
from preflight import pulumicli as run
from preflight.workspace import Workspace, say


def _step(steps: list[dict[str, Any]], name: str, rc: int, started: float, **extra: Any) -> bool:
    steps.append({"step": name, "exit_code": rc, "seconds": round(time.monotonic() - started, 1), **extra})
    say(f"{name}: exit {rc} ({steps[-1]['seconds']} s)")
    return rc == 0


def _jobs(ws: Workspace, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    argv = [str(ws.project / ".venv" / "bin" / "python"), "-m", "jobs", *args]
    say("$ python -m jobs " + " ".join(args))
    return subprocess.run(argv, cwd=ws.project, env=ws.env, capture_output=True, text=True, timeout=timeout)


def up_smoke_destroy(stack: str, work: Path | None, keep: bool, as_json: bool) -> int:
    from doubles.localml.env import LocalAzureML

    t0 = time.monotonic()
    steps: list[dict[str, Any]] = []
    ws = Workspace.create(stack, work)
    say(f"scratch workspace {ws.work}")
    rc = 0
    try:
        with LocalAzureML(ws.work / "localml") as local:
            ws.env = local.subprocess_env(ws.env)
            started = time.monotonic()
            log = ws.work / "up-events.jsonl"
            r = run.up(ws, events=log, capture=as_json)
            v = events.verdict(r.returncode, events.read(log))
            if as_json:
                sys.stderr.write(r.stdout + r.stderr)
            deployed = _step(
                steps, "pulumi up", r.returncode, started, creates=v.creates, mandatory=v.mandatory
            )
            rc = r.returncode
            if deployed:
                rc = _after_up(ws, steps)
            started = time.monotonic()
            d = run.destroy(ws, capture=as_json)
            if as_json:
                sys.stderr.write(d.stdout + d.stderr)
            if not _step(steps, "pulumi destroy", d.returncode, started) and rc == 0:
                rc = d.returncode
    finally:
        if not keep:
            ws.cleanup()
    say(f"{'OK' if rc == 0 else 'FAILED'} in {time.monotonic() - t0:.0f} s")
    if as_json:
        print(
            json.dumps(
                {"command": "up", "stack": stack, "ok": rc == 0, "exit_code": rc, "steps": steps}, indent=2
            )
        )
    return rc


def _after_up(ws: Workspace, steps: list[dict[str, Any]]) -> int:
    started = time.monotonic()
    out = ws.cli("stack", "output", "--json", "--show-secrets", "--stack", ws.stack, check=False)
    if not _step(steps, "pulumi stack output", out.returncode, started):
        return out.returncode
    outputs_file = ws.work / "outputs.json"
    outputs_file.write_text(out.stdout)
    clusters = sorted((json.loads(out.stdout).get("clusters") or {}).keys())
    started = time.monotonic()
    r = _jobs(ws, "check-deploy", "--outputs", str(outputs_file), "--json")
    if not _step(steps, "jobs check-deploy", r.returncode, started, report=_json_or_text(r.stdout)):
        return r.returncode
    if not clusters:
        return 0
    started = time.monotonic()
    r = _jobs(
        ws,
        "submit",
        "smoke",
        "--outputs",
        str(outputs_file),
        "--cluster",
        clusters[0],
        "--allow-socket",
        "--logs",
        str(ws.work / "smoke-logs"),
        "--poll-seconds",
        "1",
        "--json",
    )
    report = _json_or_text(r.stdout)
    _step(steps, f"jobs submit smoke --cluster {clusters[0]}", r.returncode, started, report=report)
    return r.returncode


def _json_or_text(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text[-4000:]

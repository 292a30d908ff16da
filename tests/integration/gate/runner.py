"""Gate runs shared by the integration tests, two at a time.

A `Spec` is one input of `preflight.gate.evaluate` (a stack of a program, its stack file, policy config,
state, existing resources, date); a `Command` is one `python -m preflight ...` as users run it.
`Gates.run(*tasks)` runs those not run yet in this session, two at once (the machine has two cores, and a
gate run spends a good part of its time waiting on its CLI processes), and returns their outcomes; each
outcome is kept for the session, so that one run serves every test that reads it (the prod stack deployed
as declared is the base of several update tests and of the recorded event logs).

A `Spec` runs in a worker process (`python -m tests.integration.gate.runner`: the program's imports paid
once per worker) with its scratch folder kept: the tests read the engine's event logs there, and the engine
judge (`judge`) runs the CLI's own `pulumi preview` in the gate's workspaces. The worker writes each outcome
as JSON (`Outcome`).
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import traceback
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
DONE = "@@gate-runner-done@@"
PROGRAMS = ROOT / "tests" / "fixtures" / "programs"


@dataclass(frozen=True)
class Spec:
    """One `evaluate(...)`. Texts are written to files in the run's folder; `state_of`: the run whose
    exported state is the `--state`; `judge`: the evaluations whose workspaces the CLI previews again."""

    name: str
    stack: str
    root: str = ""  # the program's folder; "" is this repository
    stack_text: str | None = None  # --config-file content
    config_path: str | None = None  # --config-file path
    policy_text: str | None = None  # --policy-config content
    policy_path: str | None = None
    state_of: Spec | None = None
    state_text: str | None = None  # --state content
    existing_text: str | None = None
    export_state: bool = False
    on: str | None = None
    judge: tuple[str, ...] = ()


@dataclass(frozen=True)
class Command:
    """One `python -m preflight ARGS` in `cwd` (default the repository root), `env` added to (or, with None
    values, removed from) the environment."""

    name: str
    args: tuple[str, ...]
    env: tuple[tuple[str, str | None], ...] = ()
    cwd: str = ""


@dataclass
class Outcome:
    """What one task left: for a Spec the result's JSON and the engine's runs, for a Command its output."""

    name: str
    exit_code: int
    folder: str
    document: dict[str, Any] = field(default_factory=dict)  # GateResult.as_json()
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    outputs: dict[str, Any] = field(default_factory=dict)
    exported_state: dict[str, Any] | None = None
    resource_problems: list[dict[str, Any]] = field(default_factory=list)
    # per evaluation: the engine's run as the gate read it (exit code, op and custom per URN, errors)
    runs: dict[str, dict[str, Any]] = field(default_factory=dict)
    text: str = ""  # the plain report (`render`), when there are no errors
    rich: str = ""  # the report as a terminal shows it
    markdown: str = ""
    judged: dict[str, dict[str, Any]] = field(default_factory=dict)  # per evaluation: the CLI's own preview
    stdout: str = ""
    stderr: str = ""
    seconds: float = 0.0

    @property
    def work(self) -> Path:
        """The gate's scratch folder (work folder of `evaluate`)."""
        return Path(self.folder) / "work"

    @property
    def json(self) -> dict[str, Any]:
        """A Command's stdout as JSON."""
        return json.loads(self.stdout)

    def evaluation(self, kind: str) -> dict[str, Any]:
        return next(e for e in self.document["evaluations"] if e["kind"] == kind)

    @property
    def state_file(self) -> Path:
        """The exported state (export_state), written by the worker as `--export-state` writes it."""
        path = Path(self.folder) / "exported-state.json"
        assert path.exists(), f"{self.name} exported no state"
        return path


# -- the worker --


def _cli_env(evaluation: Path, port: int) -> dict[str, str]:
    """The environment the gate gives the CLI in one of its workspaces (preflight.workspace), attached to a
    fresh provider process."""
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith("PULUMI_")},
        "PULUMI_HOME": str(evaluation / "pulumi-home"),
        "PULUMI_BACKEND_URL": (evaluation / "state").as_uri(),
        "PULUMI_CONFIG_PASSPHRASE": "",
        "PULUMI_SKIP_UPDATE_CHECK": "true",
        "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION": "true",
        "PULUMI_SKIP_CONFIRMATIONS": "true",
        "PULUMI_DEBUG_PROVIDERS": f"azure-native:{port}",
        "NO_COLOR": "1",
    }


def judge(stack: str, root: Path, work: Path, kinds: Iterable[str], existing: Path | None) -> dict[str, Any]:
    """The CLI's own `pulumi preview --json` (steps, diagnostics) and plain `pulumi preview` (the policy
    violations, which the JSON display leaves out: pkg/backend/display/json.go) in the gate's workspaces, with
    the gate's policy pack launcher and policy config, against a provider and program host of their own."""
    from preflight import langhost, pulumicli
    from preflight.provider.process import ProviderProcess

    cli = pulumicli.find()
    policy = ["--policy-pack", str(work / "policy-pack" / "azml-gpu-policies")]
    policy += ["--policy-pack-config", str(work / "policy-config.json")]
    judged: dict[str, Any] = {}
    with ProviderProcess(existing=existing) as provider, langhost.serve(root) as host:
        for kind in kinds:
            folder = work / kind
            env = _cli_env(folder, provider.port)

            def preview(*extra: str, folder: Path = folder, env: dict[str, str] = env) -> Any:
                argv = ["preview", *extra, *policy, "--stack", stack]
                return cli.run(argv, cwd=folder / "project", env=env, timeout=300, client=host.address)

            with ThreadPoolExecutor(2) as pool:
                as_json, as_text = pool.submit(preview, "--json"), pool.submit(preview)
                j, t = as_json.result(), as_text.result()
            judged[kind] = {
                "json_exit": j.returncode,
                "json_stdout": j.stdout,
                "json_stderr": j.stderr,
                "text_exit": t.returncode,
                "text": t.stdout,
                "text_stderr": t.stderr,
            }
    return judged


def _write(folder: Path, name: str, text: str | None) -> Path | None:
    if text is None:
        return None
    path = folder / name
    path.write_text(text)
    return path


def evaluate_spec(spec: Spec, folder: Path, state: Path | None) -> Outcome:
    import io
    import time
    from datetime import date

    from preflight.gate import evaluate
    from preflight.report import markdown, render

    folder.mkdir(parents=True, exist_ok=True)
    root = Path(spec.root) if spec.root else ROOT
    config = _write(folder, f"Pulumi.{spec.stack}.yaml", spec.stack_text)
    if spec.config_path:
        config = Path(spec.config_path)
    policy = _write(folder, "policy.json", spec.policy_text)
    if spec.policy_path:
        policy = Path(spec.policy_path)
    existing = _write(folder, "existing.json", spec.existing_text)
    state = _write(folder, "state.json", spec.state_text) or state
    started = time.monotonic()
    result = evaluate(
        spec.stack,
        root=root,
        config_file=config,
        policy_config_path=policy,
        state_path=state,
        existing_path=existing,
        export_state=spec.export_state,
        on=date.fromisoformat(spec.on) if spec.on else None,
        work=folder / "work",
    )
    outcome = Outcome(
        spec.name,
        result.exit_code,
        str(folder),
        document=result.as_json(),
        errors=list(result.errors),
        notes=list(result.notes),
        outputs=dict(result.outputs),
        exported_state=result.exported_state,
        resource_problems=list(result.resource_problems),
    )
    if result.exported_state is not None:
        text = json.dumps(result.exported_state, indent=2, sort_keys=True) + "\n"
        (folder / "exported-state.json").write_text(text)
    for e in result.evaluations:
        outcome.runs[e.kind] = {
            "exit_code": e.run.exit_code,
            "ops": {s.urn: s.op for s in e.run.steps},
            "custom": {s.urn: s.custom for s in e.run.steps},
            "errors": [d.message for d in e.run.errors],
        }
    if not result.errors:
        plain, fancy = io.StringIO(), io.StringIO()
        render(result, plain, rich_output=False)
        render(result, fancy, rich_output=True)
        outcome.text, outcome.rich, outcome.markdown = plain.getvalue(), fancy.getvalue(), markdown(result)
    if spec.judge and (folder / "work").exists():
        outcome.judged = judge(spec.stack, root, folder / "work", spec.judge, existing)
    outcome.seconds = round(time.monotonic() - started, 1)
    return outcome


def run_command(command: Command, folder: Path) -> Outcome:
    import time

    folder.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    for key, value in command.env:
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    started = time.monotonic()
    r = subprocess.run(
        [sys.executable, "-m", "preflight", *command.args],
        cwd=command.cwd or ROOT,
        env={**env, "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])},
        capture_output=True,
        text=True,
        timeout=600,
    )
    return Outcome(
        command.name,
        r.returncode,
        str(folder),
        stdout=r.stdout,
        stderr=r.stderr,
        seconds=round(time.monotonic() - started, 1),
    )


def worker() -> int:
    """Read one request a line on stdin ({spec, folder, state}); write the outcome to <folder>/outcome.json,
    then say DONE on stdout (the program may print there too)."""
    for line in sys.stdin:
        request = json.loads(line)
        spec = _spec(request["spec"])
        folder = Path(request["folder"])
        try:
            state = Path(request["state"]) if request["state"] else None
            outcome = evaluate_spec(spec, folder, state)
            (folder / "outcome.json").write_text(json.dumps(asdict(outcome)))
            status = "ok"
        except BaseException:  # reported to the test that waits for it
            (folder / "failure.txt").write_text(traceback.format_exc())
            status = "failed"
        print(f"{DONE} {spec.name} {status}", flush=True)
    return 0


def _spec(data: dict[str, Any]) -> Spec:
    base = data.pop("state_of")
    return Spec(**{**data, "judge": tuple(data["judge"]), "state_of": _spec(base) if base else None})


# -- the client --


class Worker:
    def __init__(self, log: Path) -> None:
        self.log = log
        with log.open("w") as stderr:
            self.proc = subprocess.Popen(
                [sys.executable, "-u", "-m", "tests.integration.gate.runner"],
                cwd=ROOT,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                text=True,
            )

    def ask(self, spec: Spec, folder: Path, state: Path | None) -> Outcome:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        request = {"spec": asdict(spec), "folder": str(folder), "state": str(state) if state else None}
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        for line in self.proc.stdout:
            if line.startswith(f"{DONE} {spec.name} "):
                break
        else:
            tail = self.log.read_text()[-3000:]
            raise RuntimeError(f"the gate runner worker died while running {spec.name}:\n{tail}")
        failure = folder / "failure.txt"
        if failure.exists():
            raise RuntimeError(f"gate run {spec.name} raised:\n{failure.read_text()}")
        return Outcome(**json.loads((folder / "outcome.json").read_text()))

    def close(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class Gates:
    """The session's gate runs (module docstring)."""

    def __init__(self, base: Path, slots: int = 2) -> None:
        self.base = base
        self.pool = ThreadPoolExecutor(slots)
        self.workers: queue.SimpleQueue[Worker] = queue.SimpleQueue()
        self.all: list[Worker] = []
        self.lock = threading.Lock()
        self.tasks: dict[str, Spec | Command] = {}
        self.futures: dict[str, Future[Outcome]] = {}

    def _worker(self) -> Worker:
        try:
            return self.workers.get_nowait()
        except queue.Empty:
            with self.lock:
                made = Worker(self.base / f"worker-{len(self.all)}.log")
                self.all.append(made)
            return made

    def _run_spec(self, spec: Spec) -> Outcome:
        state = None
        if spec.state_of is not None:
            state = self.futures[spec.state_of.name].result().state_file
        w = self._worker()
        try:
            outcome = w.ask(spec, self.base / spec.name, state)
        except BaseException:
            w.close()
            raise
        self.workers.put(w)
        return outcome

    def _submit(self, task: Spec | Command) -> Future[Outcome]:
        with self.lock:
            known = self.tasks.get(task.name)
            if known is not None:
                assert known == task, f"two different gate runs are named {task.name}"
                return self.futures[task.name]
            self.tasks[task.name] = task
        if isinstance(task, Spec) and task.state_of is not None:
            self._submit(task.state_of)  # submitted first: a worker never waits on a run queued behind it
        if isinstance(task, Spec):
            future = self.pool.submit(self._run_spec, task)
        else:
            future = self.pool.submit(run_command, task, self.base / task.name)
        with self.lock:
            self.futures[task.name] = future
        return future

    def run(self, *tasks: Spec | Command) -> list[Outcome]:
        """Every task's outcome (run now, two at a time, unless this session ran it already)."""
        futures = [self._submit(t) for t in tasks]
        return [f.result() for f in futures]

    def one(self, task: Spec | Command) -> Outcome:
        return self.run(task)[0]

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)
        for w in self.all:
            w.close()


if __name__ == "__main__":
    sys.exit(worker())

"""`python -m doubles.localml serve` as a person or a CI job runs it: a plain SIGTERM stops Azurite too, and
`--deploy STACK --env-file F` (the stack deployed with the real `pulumi up`) leaves an environment in which
`python -m jobs ... --stack STACK` works offline, with no Pulumi CLI on PATH (jobs/outputs.py,
AZML_GPU_OUTPUTS_DIR)."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from doubles.localml.env import CONFLICTING

ROOT = Path(__file__).resolve().parents[3]
pytestmark = pytest.mark.slow


def _children(pid: int) -> list[int]:
    kids: list[int] = []
    for tid in os.listdir(f"/proc/{pid}/task"):
        kids += [int(c) for c in Path(f"/proc/{pid}/task/{tid}/children").read_text().split()]
    return kids


def _serve(*flags: str) -> tuple[subprocess.Popen[str], dict]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "doubles.localml", "serve", "--json", "--minutes", "5", *flags],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    text = ""
    for line in proc.stdout:  # one JSON object, ending in a line "}", once everything serves
        text += line
        if line.startswith("}"):
            break
    if not text:
        proc.kill()
        pytest.fail(f"localml serve printed nothing: {proc.communicate(timeout=30)[1]}")
    return proc, json.loads(text)


def _stop(proc: subprocess.Popen[str]) -> tuple[int, str]:
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    return proc.returncode, err


def test_sigterm_stops_azurite_and_exits_0() -> None:
    proc, document = _serve()
    azurite = [k for k in _children(proc.pid) if "azurite" in Path(f"/proc/{k}/cmdline").read_text()]
    assert len(azurite) == 1, "localml serve should have started one Azurite process"
    assert document["ok"] is True and "ARM_CLOUD_METADATA_URL" in document["env"]
    code, err = _stop(proc)
    assert code == 0, err
    assert "localml: stopping" in err and "Traceback" not in err
    assert not Path(f"/proc/{azurite[0]}").exists(), "Azurite outlived localml serve"


def test_deploy_writes_an_env_file_that_jobs_stack_reads_offline(tmp_path: Path) -> None:
    env_file = tmp_path / "doubles.localml.env"
    proc, document = _serve("--deploy", "dev", "--env-file", str(env_file))
    try:
        env = document["env"]
        outputs = Path(document["deployed"]["outputs"])
        assert document["deployed"]["stack"] == "dev" and outputs.name == "dev.json"
        assert env["AZML_GPU_OUTPUTS_DIR"] == str(outputs.parent)
        # The env file holds the same variables, each KEY=value, sourceable by sh.
        lines = [ln for ln in env_file.read_text().splitlines() if ln and not ln.startswith("#")]
        assert {ln.split("=", 1)[0]: shlex.split(ln.split("=", 1)[1])[0] for ln in lines} == env
        # No Pulumi CLI anywhere on PATH: --stack dev is read from the folder the env names.
        path = os.pathsep.join(
            p for p in os.environ.get("PATH", "").split(os.pathsep) if p and not (Path(p) / "pulumi").exists()
        )
        child_env = {k: v for k, v in os.environ.items() if k not in CONFLICTING} | env | {"PATH": path}
        r = subprocess.run(
            [sys.executable, "-m", "jobs", "check-deploy", "--stack", "dev", "--json"],
            cwd=ROOT,
            env=child_env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert r.returncode == 0, r.stdout + r.stderr
        report = json.loads(r.stdout)
        assert report["ok"] is True
        assert [c["cluster"] for c in report["clusters"]] == ["t4-dev"]
    finally:
        code, err = _stop(proc)
    assert code == 0, err


def test_deploy_of_an_unknown_stack_is_refused_before_starting(tmp_path: Path) -> None:
    r = subprocess.run(
        [sys.executable, "-m", "doubles.localml", "serve", "--deploy", "nosuch", "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 2
    stacks = sorted(p.name.removeprefix("Pulumi.").removesuffix(".yaml") for p in ROOT.glob("Pulumi.*.yaml"))
    assert "dev" in stacks and "prod" in stacks
    assert json.loads(r.stdout) == {
        "ok": False,
        "error": "--deploy nosuch: no stack file Pulumi.nosuch.yaml; name a stack of this project "
        f"({', '.join(stacks)})",
        "exit_code": 2,
    }

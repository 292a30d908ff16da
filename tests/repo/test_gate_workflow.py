"""The reusable gate workflow (.github/workflows/gate.yml): another repository calls it to gate its own
program's stacks offline, the report in the job summary and as one pull-request comment per stack, updated in
place. Schema validity: tests/preflight/test_stacks.py (every workflow)."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from preflight.__main__ import parser
from preflight.versions import PULUMI_VERSION

ROOT = Path(__file__).resolve().parents[2]
FLOW = yaml.safe_load((ROOT / ".github" / "workflows" / "gate.yml").read_text())
HAND_BUILT = ROOT / "tests" / "fixtures" / "programs" / "hand-built"


def _step(job: str, name_start: str) -> dict[str, Any]:
    (step,) = [s for s in FLOW["jobs"][job]["steps"] if str(s.get("name", "")).startswith(name_start)]
    return step


def test_it_is_called_by_other_repositories_with_documented_inputs() -> None:
    # PyYAML reads the bare key `on` as True (YAML 1.1).
    inputs = FLOW[True]["workflow_call"]["inputs"]
    assert {k for k, v in inputs.items() if v["required"]} == {"azml-gpu-repository", "azml-gpu-ref"}
    assert inputs["program"]["default"] == "."
    assert inputs["stacks"]["default"] == ""
    assert inputs["comment"] == {**inputs["comment"], "type": "boolean", "default": True}
    assert all(v.get("description") for v in inputs.values())


def test_it_runs_the_cli_release_the_gate_supports() -> None:
    assert FLOW[True]["workflow_call"]["inputs"]["pulumi-version"]["default"] == PULUMI_VERSION


def test_the_gate_step_runs_the_gate_on_the_callers_program_with_real_flags() -> None:
    script = _step("gate", "Offline policy gate")["run"]
    (line,) = [x for x in script.splitlines() if "-m preflight" in x]
    words = shlex.split(line.split(">", 1)[0])
    assert words[:3] == [".azml-gpu/.venv/bin/python", "-m", "preflight"]
    args = parser().parse_args(["STACK" if w == "$STACK" else w for w in words[3:]])
    assert (str(args.program), args.format) == ("$PROGRAM", "markdown")
    assert 'cat gate-report.md >> "$GITHUB_STEP_SUMMARY"' in script


def test_no_secret_and_write_access_only_where_it_comments() -> None:
    text = (ROOT / ".github" / "workflows" / "gate.yml").read_text()
    assert "secrets." not in text
    assert FLOW["permissions"] == {"contents": "read"}
    assert "permissions" not in FLOW["jobs"]["stacks"]
    assert FLOW["jobs"]["gate"]["permissions"] == {"contents": "read", "pull-requests": "write"}


def test_the_gate_runs_the_checkouts_packages_from_the_callers_folder(tmp_path: Path) -> None:
    """`python -m preflight` runs in the caller's repository with the step's PYTHONPATH: the gate and a
    program importing `azml_gpu.components` (the installed name, azml_gpu/__init__.py) both resolve."""
    step = _step("gate", "Offline policy gate")
    (tmp_path / ".azml-gpu").symlink_to(ROOT)  # where the job checks azml-gpu out
    path = step["env"]["PYTHONPATH"].replace("${{ github.workspace }}", str(tmp_path))
    env = {**os.environ, "PYTHONPATH": path}
    for argv in (["-m", "preflight", "pack-path"], ["-c", "from azml_gpu.components import GpuCluster"]):
        r = subprocess.run([sys.executable, *argv], cwd=tmp_path, env=env, capture_output=True, text=True)
        assert r.returncode == 0, (argv, r.stderr)


def test_the_verdict_is_the_gates_exit_code() -> None:
    assert _step("gate", "The gate's verdict")["run"] == 'exit "$CODE"'
    assert _step("gate", "The gate's verdict")["env"]["CODE"] == "${{ steps.gate.outputs.exit_code }}"


def test_the_stack_list_of_another_program(tmp_path: Path) -> None:
    """What the `stacks` job runs, with azml-gpu checked out in another folder: the caller's stack files."""
    script = FLOW["jobs"]["stacks"]["steps"][-1]["run"]
    (line,) = [x.strip() for x in script.splitlines() if "preflight.stacks" in x]
    (tmp_path / ".azml-gpu").symlink_to(ROOT)  # where the job checks azml-gpu out
    out = tmp_path / "github_output"
    r = subprocess.run(
        ["bash", "-c", line],
        cwd=tmp_path,
        env={**os.environ, "PROGRAM": str(HAND_BUILT), "GITHUB_OUTPUT": str(out)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    expected = sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in HAND_BUILT.glob("Pulumi.*.yaml"))
    assert json.loads(r.stdout) == expected
    assert f"stacks={json.dumps(expected)}" in out.read_text().splitlines()


def _comment(tmp_path: Path, listed: str) -> list[list[str]]:
    """Run the comment step's script with a `gh` on PATH that records its arguments and answers the comment
    listing with `listed`."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "gh.log"
    gh = bin_dir / "gh"
    gh.write_text(
        f"#!{sys.executable}\nimport json, sys\n"
        f"open({str(log)!r}, 'a').write(json.dumps(sys.argv[1:]) + '\\n')\n"
        f"if '--jq' in sys.argv: print({listed!r}, end='')\n"
    )
    gh.chmod(0o755)
    (tmp_path / "gate-report.md").write_text("## Policy gate: PASS for stack `raw`\n")
    step = _step("gate", "The report as a pull-request comment")
    r = subprocess.run(
        ["bash", "-e", "-c", step["run"]],
        cwd=tmp_path,
        env={
            **os.environ,
            "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
            "STACK": "raw",
            "PR": "7",
            "REPO": "team/infra",
        },
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    body = (tmp_path / "comment.md").read_text()
    assert body == "<!-- azml-gpu-gate:raw -->\n## Policy gate: PASS for stack `raw`\n"
    return [json.loads(x) for x in log.read_text().splitlines()]


def test_a_new_pull_request_gets_one_comment_per_stack(tmp_path: Path) -> None:
    calls = _comment(tmp_path, "")
    assert calls[-1] == [
        "api",
        "--method",
        "POST",
        "repos/team/infra/issues/7/comments",
        "-F",
        "body=@comment.md",
    ]
    assert len(calls) == 2


def test_a_later_push_updates_the_stacks_comment_in_place(tmp_path: Path) -> None:
    calls = _comment(tmp_path, "4242\n")
    assert calls[0][:2] == ["api", "repos/team/infra/issues/7/comments"]
    assert re.search(r'startswith\("<!-- azml-gpu-gate:raw -->"\)', " ".join(calls[0]))
    assert calls[-1] == [
        "api",
        "--method",
        "PATCH",
        "repos/team/infra/issues/comments/4242",
        "-F",
        "body=@comment.md",
    ]

"""Stack outputs from a file or the real `pulumi` CLI (a stand-in executable on PATH, the process boundary),
and `submit`'s exit codes 2, 3 and 4 and its status retries through the real MLClient and HTTP pipeline."""

from __future__ import annotations

import json
import os
import re
import stat
import sys
from pathlib import Path

import pytest
from jobs_azure_fakes import RoutedTransport, ml_client
from rich.console import Console

from jobs import outputs
from jobs.builders import cluster_target, smoke
from jobs.cli import main
from jobs.errors import UsageError
from jobs.lifecycle import EXIT_CREATE, EXIT_OK, EXIT_OTHER, EXIT_STATUS, STATUS_RETRIES, submit

FIXTURE = Path(__file__).parent / "fixtures" / "outputs-prod.json"


def fake_pulumi(tmp_path: Path, body: str, rc: int = 0) -> Path:
    """A `pulumi` executable that answers `stack output --json --stack S` like the CLI, and logs its argv."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    exe = bindir / "pulumi"
    exe.write_text(
        f"#!{sys.executable}\nimport sys\n"
        f"open({str(tmp_path / 'argv')!r}, 'w').write(' '.join(sys.argv[1:]))\n"
        f"sys.stdout.write({body!r})\n"
        f"sys.stderr.write('error: no stack named prod found\\n' if {rc} else '')\n"
        f"sys.exit({rc})\n"
    )
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return bindir


def test_from_file_validates_the_contract_shape():
    o = outputs.from_file(FIXTURE)
    assert o.clusters["h100-x4"].gpus_per_node == 8 and o.workspace_name == "ws-llm"


def test_from_file_errors_name_the_flag(tmp_path):
    with pytest.raises(UsageError, match=r"--outputs .*no such file"):
        outputs.from_file(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(UsageError, match="not JSON"):
        outputs.from_file(tmp_path / "bad.json")
    (tmp_path / "shape.json").write_text(json.dumps({"clusters": {}}))
    with pytest.raises(UsageError, match="subscription_id"):
        outputs.from_file(tmp_path / "shape.json")


def test_from_stack_runs_the_pulumi_cli(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(fake_pulumi(tmp_path, FIXTURE.read_text())))
    o = outputs.load("prod", None)
    assert (tmp_path / "argv").read_text() == "stack output --json --stack prod"
    assert sorted(o.clusters) == ["a100-lp", "h100-one", "h100-x4"]


def test_from_stack_failure_and_missing_cli(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(fake_pulumi(tmp_path, "", rc=255)))
    with pytest.raises(UsageError, match="no stack named prod"):
        outputs.from_stack("prod")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(UsageError, match="not on PATH.*--outputs FILE"):
        outputs.from_stack("prod")


def test_stack_and_outputs_are_exclusive():
    with pytest.raises(UsageError, match="not both"):
        outputs.load("prod", str(FIXTURE))
    with pytest.raises(UsageError, match="--stack NAME"):
        outputs.load(None, None)


def test_cluster_lookup_lists_what_exists():
    with pytest.raises(UsageError, match=r"clusters: a100-lp, h100-one, h100-x4"):
        outputs.cluster(outputs.from_file(FIXTURE), "gpu")


def test_submit_exit_3_when_create_is_refused(tmp_path):
    transport = RoutedTransport(
        lambda m, u: (
            403,
            {"error": {"code": "AuthorizationFailed", "message": "no access to the workspace"}},
        )
    )
    built = smoke(cluster_target(outputs.from_file(FIXTURE), "h100-x4"))
    out = submit(
        ml_client(transport),
        built,
        console=Console(file=open(os.devnull, "w")),  # noqa: SIM115
        logs_root=tmp_path,
    )
    assert out.exit_code == EXIT_CREATE and out.name is None
    assert out.error.startswith("create failed")
    assert transport.requests  # it went through the HTTP pipeline


WS = (
    "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg-train/providers/"
    "Microsoft.MachineLearningServices/workspaces/ws-llm"
)


class JobService:
    """The calls `ml.jobs.create_or_update` and `ml.jobs.get` make for a smoke job: the code asset is found
    by its content hash (so nothing is uploaded), the PUT answers Queued, and each job GET answers the next
    of `answers` (a status, or an HTTP error code); the last answer repeats."""

    def __init__(self, *answers: str | int) -> None:
        self.answers = list(answers)
        self.code: dict = {}
        self.transport = RoutedTransport(self.route)

    def job(self, name: str, status: str) -> dict:
        return {
            "id": f"{WS}/jobs/{name}",
            "name": name,
            "type": "Microsoft.MachineLearningServices/workspaces/jobs",
            "properties": {
                "jobType": "Command",
                "status": status,
                "command": "python smoke.py",
                "environmentId": "azureml://registries/azureml/environments/acpt/labels/latest",
                "computeId": f"{WS}/computes/h100-x4",
                "services": {"Studio": {"endpoint": f"https://ml.azure.com/runs/{name}"}},
            },
        }

    def route(self, method: str, url: str) -> tuple[int, dict]:
        path = url.split("?")[0]
        if method == "GET" and re.search(r"/codes/[^/]+/versions$", path):
            digest = re.search(r"hash=(\w+)", url).group(1)
            self.code = {
                "id": f"{WS}/codes/src/versions/1",
                "name": "1",
                "properties": {"codeUri": "https://st.blob.core.windows.net/code/src", "hash": digest},
            }
            return 200, {"value": [self.code]}
        if method == "GET" and re.search(r"/codes/[^/]+/versions/[^/]+$", path):
            return 200, self.code
        if "/jobs/" in path and method in ("PUT", "GET"):
            name = path.rsplit("/", 1)[1]
            if method == "PUT":
                return 201, self.job(name, "Queued")
            answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
            if isinstance(answer, int):
                return answer, {"error": {"code": "InternalServerError", "message": "try again later"}}
            return 200, self.job(name, answer)
        return 404, {"error": {"code": "NotFound", "message": f"no such resource: {method} {path}"}}

    def job_gets(self) -> int:
        return sum(
            r.method == "GET" and re.search(r"/jobs/[^/?]+(\?|$)", r.url) is not None
            for r in self.transport.requests
        )


def run_submit(service: JobService, monkeypatch, tmp_path: Path, *extra: str) -> int:
    """`python -m jobs submit smoke` with the real flags; only the HTTP transport is a fake. azure-core's own
    RetryPolicy (which retries a 500 up to 10 times with backoff) is off, so every answer reaches submit."""
    import jobs.azure_client

    monkeypatch.setattr(jobs.azure_client, "ml_client", lambda o: ml_client(service.transport, retry_total=0))
    argv = ["submit", "smoke", "--outputs", str(FIXTURE), "--cluster", "h100-x4", "--no-stream"]
    return main([*argv, "--poll-seconds", "0.01", "--logs", str(tmp_path / "logs"), *extra])


def test_submit_exit_2_when_the_job_is_canceled(tmp_path, monkeypatch, capsys):
    service = JobService("Running", "Canceled")
    assert run_submit(service, monkeypatch, tmp_path, "--json") == EXIT_OTHER == 5
    summary = json.loads(capsys.readouterr().out)
    (job,) = summary["jobs"]
    assert (job["status"], job["exit_code"], summary["exit_code"]) == ("Canceled", 5, 5)
    assert job["verify"] is None  # nothing to verify on a canceled job


@pytest.mark.parametrize(
    "answers",
    [
        (500, 500, "Completed"),
        (500, 500, "Running", 500, 500, "Completed"),  # the count is of failures in a row
    ],
)
def test_submit_retries_a_failing_status_query_and_completes(answers):
    service = JobService(*answers)
    out = submit(
        ml_client(service.transport, retry_total=0),
        smoke(cluster_target(outputs.from_file(FIXTURE), "h100-x4")),
        console=Console(file=open(os.devnull, "w")),  # noqa: SIM115
        stream=False,
        logs_root=None,
        poll_s=0.01,  # what --poll-seconds sets; also the wait between status retries
        verify=False,
    )
    assert (out.status, out.exit_code, out.error) == ("Completed", EXIT_OK, None)
    assert service.job_gets() == len(answers)
    assert out.elapsed_s < 5


def test_submit_exit_4_when_the_status_query_keeps_failing(tmp_path, monkeypatch, capsys):
    service = JobService(500)
    assert run_submit(service, monkeypatch, tmp_path) == EXIT_STATUS == 4
    captured = capsys.readouterr()
    assert service.job_gets() == STATUS_RETRIES
    line = captured.out.strip()
    assert line.startswith("smoke: ") and "Queued (exit 4)" in line
    assert f"status query failed {STATUS_RETRIES} times in a row" in line
    assert "(InternalServerError) try again later" in line
    assert "may still be running: check https://ml.azure.com/runs/" in line
    assert "Traceback" not in captured.err

    service = JobService(500)
    assert run_submit(service, monkeypatch, tmp_path, "--json") == 4
    (job,) = json.loads(capsys.readouterr().out)["jobs"]
    assert job["exit_code"] == 4 and job["status"] == "Queued" and job["logs"] is None


def test_submit_logs_that_is_a_file_exits_2_before_creating_the_job(tmp_path, monkeypatch, capsys):
    service = JobService("Completed")
    afile = tmp_path / "logs.txt"
    afile.write_text("not a folder")
    assert run_submit(service, monkeypatch, tmp_path, "--logs", str(afile)) == 2
    captured = capsys.readouterr()
    assert f"--logs {afile}: is a file, not a folder" in captured.err
    assert service.transport.requests == []  # nothing was sent: no job created
    assert "Traceback" not in captured.err

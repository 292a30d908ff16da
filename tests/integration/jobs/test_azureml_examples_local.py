"""The runnable Azure/azureml-examples job files (tests/fixtures/userjobs/README.md, each copied byte for byte
at its cited commit) rendered with every field kept, then submitted unchanged with `python -m jobs submit
--file` against localml: each completes, and what it printed, wrote to `./outputs`, to its named output on the
datastore, or read from the local input azure-ai-ml uploaded, is checked against the fixture files (issue 35,
"Done when")."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from jobs.cli import main
from tests.jobs.jobs_util import FIXTURES, REPO
from tests.jobs.userjob_util import differences

OUTPUTS = FIXTURES / "outputs-prod.json"
EXAMPLES = REPO / "tests" / "fixtures" / "userjobs"
BASICS = EXAMPLES / "cli" / "jobs" / "basics"
MODEL = EXAMPLES / "cli" / "assets" / "model" / "mlflow-model"
#: The files submitted: a 1-GPU cluster of the fixture stack, so one process as the files ask; none has a
#: checkpoint output (--no-checkpoint); submit: a CPU run has no NCCL lines to verify a transport
#: (--allow-socket).
RUNNABLE = (
    "hello-world.yml",
    "hello-world-input.yml",
    "hello-world-env-var.yml",
    "hello-world-output.yml",
    "hello-world-output-data.yml",
    "hello-code.yml",
    "hello-model-as-input.yml",
)
FLAGS = ("--cluster", "a100-lp", "--no-checkpoint")


@pytest.fixture(scope="module")
def local_azure_ml():
    from doubles.localml import LocalAzureML

    with LocalAzureML() as env:
        yield env


def submit(env, tmp_path: Path, job: Path, run_name: str) -> dict:
    cmd = [sys.executable, "-m", "jobs", "submit", "--file", str(job), "--outputs", str(OUTPUTS), *FLAGS]
    cmd += [
        "--allow-socket",
        "--run-name",
        run_name,
        "--logs",
        str(tmp_path / "logs"),
        "--poll-seconds",
        "0.5",
    ]
    cmd += ["--no-stream", "--json"]
    p = subprocess.run(cmd, env=env.subprocess_env(), cwd=REPO, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    (job_report,) = json.loads(p.stdout)["jobs"]
    assert job_report["status"] == "Completed" and job_report["failure"] is None
    return job_report


def printed(job_report: dict) -> list[str]:
    """What the job's command printed (rank 0's log), after the platform's rank line."""
    log0 = next(Path(job_report["logs"]).rglob("std_log_process_0*.txt")).read_text().splitlines()
    assert log0[0].startswith("azml-gpu rank=0 ")
    return log0[1:]


def datastore(env, path: str) -> Path:
    return Path(env.control_plane.store.datastore_path("workspaceblobstore", path))


@pytest.mark.parametrize("name", RUNNABLE)
def test_each_runnable_example_renders_with_every_field_kept(tmp_path, capsys, name):
    out = tmp_path / "built.yml"
    argv = ["render", "--file", str(BASICS / name), "--outputs", str(OUTPUTS), *FLAGS, "--run-name", "r1"]
    assert main([*argv, "--out", str(out)]) == 0, capsys.readouterr().err
    assert differences(BASICS / name, out, ckpt_output=None) == []


@pytest.mark.slow
def test_the_hello_world_examples_print_what_their_files_say(local_azure_ml, tmp_path):
    got = submit(local_azure_ml, tmp_path, BASICS / "hello-world.yml", "ex-hello")
    assert printed(got) == ["hello world"]  # command: echo "hello world"
    # inputs hello_string "hello world" and hello_number 42, each echoed on its own line
    got = submit(local_azure_ml, tmp_path, BASICS / "hello-world-input.yml", "ex-input")
    assert printed(got) == ["hello world", "42"]
    # environment_variables.hello_env_var, echoed by the command
    got = submit(local_azure_ml, tmp_path, BASICS / "hello-world-env-var.yml", "ex-env")
    assert printed(got) == ["hello world"]
    spec = yaml.safe_load((BASICS / "hello-world-env-var.yml").read_text())
    assert spec["environment_variables"] == {"hello_env_var": "hello world"}


@pytest.mark.slow
def test_what_the_output_examples_write_is_in_the_runs_artifacts_and_on_the_datastore(
    local_azure_ml, tmp_path
):
    # `echo "hello world" > ./outputs/helloworld.txt`: the run's ./outputs folder, uploaded as its artifacts
    got = submit(local_azure_ml, tmp_path, BASICS / "hello-world-output.yml", "ex-out")
    written = Path(got["logs"]) / "artifacts" / "outputs" / "helloworld.txt"
    assert written.read_text() == "hello world\n"
    # `> ${{outputs.hello_output}}/helloworld.txt`, an output with no path: Azure's default datastore folder
    got = submit(local_azure_ml, tmp_path, BASICS / "hello-world-output-data.yml", "ex-out-data")
    folder = datastore(local_azure_ml, f"azureml/{got['name']}/hello_output")
    assert (folder / "helloworld.txt").read_text() == "hello world\n"


@pytest.mark.slow
def test_the_code_and_local_input_examples_see_their_uploaded_folders(local_azure_ml, tmp_path):
    # code: src, command `ls`: the uploaded code folder is the working folder (with Azure ML's outputs/)
    got = submit(local_azure_ml, tmp_path, BASICS / "hello-code.yml", "ex-code")
    assert printed(got) == sorted([p.name for p in (BASICS / "src").iterdir()] + ["outputs"])
    # inputs.my_model: ../../assets/model/mlflow-model, relative to the YAML (not to the caller's folder,
    # REPO): azure-ai-ml uploads it and the job lists what arrived
    got = submit(local_azure_ml, tmp_path, BASICS / "hello-model-as-input.yml", "ex-model")
    assert printed(got) == sorted(p.name for p in MODEL.iterdir())
    (uploaded,) = datastore(local_azure_ml, "LocalUpload").rglob("mlflow-model")
    assert (uploaded / "model.pkl").read_bytes() == (MODEL / "model.pkl").read_bytes()


def local_input_job(tmp_path: Path) -> Path:
    """A job file with a relative local folder input and a relative local file input, in its own folder."""
    folder = tmp_path / "project"
    (folder / "src").mkdir(parents=True)
    (folder / "data" / "shards").mkdir(parents=True)
    (folder / "data" / "shards" / "part-0.txt").write_text("folder input content\n")
    (folder / "labels.csv").write_text("id,label\n1,cat\n")
    (folder / "src" / "read.py").write_text(
        "import pathlib, sys\n"
        "print(pathlib.Path(sys.argv[1], 'shards', 'part-0.txt').read_text(), end='')\n"
        "print(pathlib.Path(sys.argv[2]).read_text(), end='')\n"
    )
    job = {
        "type": "command",
        "code": "./src",
        "command": "python read.py ${{inputs.data}} ${{inputs.labels}}",
        "environment": "azureml://registries/azureml/environments/acpt-pytorch-2.2-cuda12.1/versions/55",
        "inputs": {
            "data": {"type": "uri_folder", "path": "./data"},
            "labels": {"type": "uri_file", "path": "labels.csv"},
        },
    }
    path = folder / "job.yml"
    path.write_text(yaml.safe_dump(job, sort_keys=False))
    return path


@pytest.mark.slow
def test_relative_local_inputs_reach_the_job_as_azure_ml_uploads_them(local_azure_ml, tmp_path):
    """Submitted from another folder (REPO): the inputs resolve against the YAML's folder, azure-ai-ml uploads
    them to the default datastore, and the job reads their content (before the fix localml looked for the
    upload in its session folder and the job failed with FileNotFoundError)."""
    got = submit(local_azure_ml, tmp_path, local_input_job(tmp_path), "ex-local-inputs")
    assert printed(got) == ["folder input content", "id,label", "1,cat"]

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
#: The data asset hello-data-uri-folder.yml reads (`azureml:local-folder-example@latest`), as upstream's
#: setup/setup-repo/create-datasets.sh creates it: `az ml data create -f .../4d_data_input/data.yml`.
DATA_INPUT = EXAMPLES / "cli" / "jobs" / "pipelines-with-components" / "basics" / "4d_data_input"
#: The files submitted: a 1-GPU cluster of the fixture stack, so one process as the files ask; none has a
#: checkpoint output (--no-checkpoint); submit: a CPU run has no NCCL lines to verify a transport
#: (--allow-socket).
RUNNABLE = (
    "hello-world.yml",
    "hello-world-org.yml",
    "hello-world-input.yml",
    "hello-world-env-var.yml",
    "hello-world-output.yml",
    "hello-world-output-data.yml",
    "hello-code.yml",
    "hello-model-as-input.yml",
    "hello-data-uri-folder.yml",
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


def printed(job_report: dict, rank: int = 0) -> list[str]:
    """What the job's command printed (the rank's log), after the platform's rank line."""
    log = next(Path(job_report["logs"]).rglob(f"std_log_process_{rank}*.txt")).read_text().splitlines()
    assert log[0].startswith(f"azml-gpu rank={rank} ")
    return log[1:]


#: `az ml data create` through azure-ai-ml: `--file F` (load_data) or `--name N --version V --path P`.
CREATE_DATA = """
import json, sys
from azure.ai.ml import load_data
from azure.ai.ml.entities import Data
from jobs import outputs
from jobs.azure_client import ml_client
ml = ml_client(outputs.load(None, sys.argv[1]))
if sys.argv[2] == "--file":
    data = load_data(sys.argv[3])
else:
    data = Data(name=sys.argv[2], version=sys.argv[3], path=sys.argv[4], type="uri_folder")
made = ml.data.create_or_update(data)
print(json.dumps({"name": made.name, "version": made.version, "path": made.path}))
"""


def create_data(env, *argv: str) -> dict:
    p = subprocess.run(
        [sys.executable, "-c", CREATE_DATA, str(OUTPUTS), *argv],
        env=env.subprocess_env(),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.splitlines()[-1])


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
    # tags, display_name, experiment_name and a Markdown description: sent to Azure ML as the file has them
    got = submit(local_azure_ml, tmp_path, BASICS / "hello-world-org.yml", "ex-org")
    assert printed(got) == ["hello world"]
    spec = yaml.safe_load((BASICS / "hello-world-org.yml").read_text())
    sent = next(
        j for j in local_azure_ml.control_plane.store.jobs.values() if j.name == got["name"]
    ).properties
    assert sent["description"] == spec["description"] and sent["tags"]["hello"] == spec["tags"]["hello"]
    assert (sent["displayName"], sent["experimentName"]) == (spec["display_name"], spec["experiment_name"])


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


@pytest.mark.slow
def test_the_data_asset_example_reads_the_registered_version(local_azure_ml, tmp_path):
    """`azureml:local-folder-example@latest`: azure-ai-ml resolves the label through the data API, the job's
    input names the version, and the job lists the folder that version was registered from."""
    job = BASICS / "hello-data-uri-folder.yml"
    cmd = [sys.executable, "-m", "jobs", "submit", "--file", str(job), "--outputs", str(OUTPUTS), *FLAGS]
    cmd += ["--run-name", "ex-no-asset", "--no-stream"]
    p = subprocess.run(
        cmd, env=local_azure_ml.subprocess_env(), cwd=REPO, capture_output=True, text=True, timeout=300
    )
    # before the asset exists: azure-ai-ml's own message, and no job created (exit 3)
    assert p.returncode == 3, p.stdout[-3000:] + p.stderr[-3000:]
    assert "Asset local-folder-example does not exist in workspace ws-llm." in p.stdout + p.stderr
    made = create_data(local_azure_ml, "--file", str(DATA_INPUT / "data.yml"))
    assert (made["name"], made["version"]) == ("local-folder-example", "1")
    got = submit(local_azure_ml, tmp_path, job, "ex-data-asset")
    assert printed(got) == sorted(p.name for p in (DATA_INPUT / "data").iterdir())


@pytest.mark.slow
def test_cifar_distributed_runs_on_two_nodes_from_its_data_asset(local_azure_ml, tmp_path):
    """cifar-distributed/job.yml unchanged (`azureml:cifar-10-example@latest`, 2 nodes x 1 process) with the
    stand-in trainer of its src/ (the real one needs CUDA, torchvision and the CIFAR-10 download); the data
    asset registered as upstream's setup does (`az ml data create --name cifar-10-example --version 1
    --set path=data`, data/ the untarred archive), here from stand-in batch files."""
    batches = tmp_path / "data" / "cifar-10-batches-py"
    batches.mkdir(parents=True)
    for name in ("data_batch_1", "test_batch"):
        (batches / name).write_bytes(b"stand-in")
    create_data(local_azure_ml, "cifar-10-example", "1", str(tmp_path / "data"))
    job = EXAMPLES / "cifar-distributed" / "job.yml"
    cmd = [sys.executable, "-m", "jobs", "submit", "--file", str(job), "--outputs", str(OUTPUTS), *FLAGS]
    cmd += ["--allow-tcp", "--allow-socket", "--run-name", "ex-cifar", "--logs", str(tmp_path / "logs")]
    cmd += ["--poll-seconds", "0.5", "--no-stream", "--json"]
    p = subprocess.run(
        cmd, env=local_azure_ml.subprocess_env(), cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    (got,) = json.loads(p.stdout)["jobs"]
    assert got["status"] == "Completed" and got["verify"]["world_size"] == 2
    for rank in (0, 1):
        # inputs.epochs 1 and learning_rate 0.2 as the file sets them; both ranks read the asset's folder
        lines = printed(got, rank)
        assert f"rank {rank}/2: epochs 1 lr 0.2 batches ['data_batch_1', 'test_batch']" in lines
        assert f"rank {rank}: ranks summed 1" in lines  # 0 + 1: the two ranks met in one process group


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


def test_an_inputs_blobs_are_its_file_or_its_folder_not_a_sibling_with_the_same_prefix(
    local_azure_ml, tmp_path
):
    """What the runner copies for an input on a datastore path (Blobs.download_path): the blob itself (a
    uri_file), or every blob under `path/` (a uri_folder), and never `path2/...` beside it."""
    blobs = local_azure_ml.control_plane.blobs
    for name, text in {
        "t/data/a.txt": "a",
        "t/data/sub/b.txt": "b",
        "t/data2/c.txt": "c",
        "t/f.csv": "f",
    }.items():
        src = tmp_path / "src.txt"
        src.write_text(text)
        blobs.upload_file("azureml-blobstore", name, src)
    assert blobs.download_path("azureml-blobstore", "t/data/", tmp_path / "folder") == 2
    found = sorted(
        p.relative_to(tmp_path / "folder").as_posix() for p in (tmp_path / "folder").rglob("*.txt")
    )
    assert found == ["a.txt", "sub/b.txt"]
    assert blobs.download_path("azureml-blobstore", "t/f.csv", tmp_path / "f.csv") == 1
    assert (tmp_path / "f.csv").read_text() == "f"

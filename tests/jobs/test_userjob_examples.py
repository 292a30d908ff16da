"""The regression set: real job files from Azure/azureml-examples (tests/fixtures/userjobs/README.md, each
with its commit) through `render --file`. Each renders with every field kept (load_job of the original vs of
the rendered file, REST field by field, minus what the platform changes: tests/jobs/userjob_util.py), and
what the platform refuses in them is refused before submit with the fix."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from jobs.cli import main

from .jobs_util import FIXTURES
from .userjob_util import differences

EXAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "userjobs"
OUTPUTS = str(FIXTURES / "outputs-prod.json")


def render(tmp_path: Path, name: str, *flags: str) -> tuple[int, Path]:
    out = tmp_path / "out" / "built.yml"
    argv = ["render", "--file", str(EXAMPLES / name), "--outputs", OUTPUTS, "--cluster", "h100-x4"]
    return main([*argv, "--run-name", "r1", "--out", str(out), *flags]), out


@pytest.mark.parametrize(
    ("name", "flags", "nodes", "processes"),
    [
        # PyTorch distributed, one process per node as the example runs it
        ("cifar-distributed/job.yml", ("--no-checkpoint", "--allow-idle-gpus"), 2, 1),
        # DeepSpeed under distribution pytorch, 8 per node, its own rw_mount output, limits.timeout
        ("deepspeed-training/job-schema-fixed.yml", ("--no-checkpoint",), 2, 8),
        # a plain command job: no distribution, one process
        ("iris/job.yml", ("--no-checkpoint", "--processes-per-node", "1", "--allow-idle-gpus"), 1, 1),
    ],
)
def test_an_azureml_example_renders_with_every_field_kept(tmp_path, capsys, name, flags, nodes, processes):
    code, out = render(tmp_path, name, *flags)
    assert code == 0, capsys.readouterr().err
    assert differences(EXAMPLES / name, out, ckpt_output=None) == []
    job = yaml.safe_load(out.read_text())
    assert job["compute"] == "azureml:h100-x4" and job["resources"]["instance_count"] == nodes
    assert job["distribution"]["process_count_per_instance"] == processes
    assert "ckpt" not in (job.get("outputs") or {})
    assert "warning: --no-checkpoint" in capsys.readouterr().err


def test_the_deepspeed_examples_timeout_and_output_are_the_users(tmp_path, capsys):
    code, out = render(tmp_path, "deepspeed-training/job-schema-fixed.yml", "--no-checkpoint")
    job = yaml.safe_load(out.read_text())
    assert code == 0 and job["limits"]["timeout"] == 900  # not the platform's 7 days
    assert (
        job["outputs"]["output"]["path"]
        == "azureml://datastores/workspaceblobstore/paths/outputs/training_results"
    )
    assert job["environment_variables"]["AZUREML_SSH_KEY"] == "generated-key"
    # the Docker build context, relative to the rendered YAML as it was to the example's
    build = out.parent / job["environment"]["build"]["path"]
    assert build.resolve() == (EXAMPLES / "deepspeed-training" / "docker-context").resolve()
    printed = capsys.readouterr().out
    assert "  the user's (from the file): limits.timeout\n" in printed
    assert "  set by the platform: resources.shm_size: 950g\n" in printed


def test_a_url_input_stays_the_url(tmp_path):
    """The dump writes `azureml:https://...` (a data asset name); render writes the URL back."""
    flags = ("--no-checkpoint", "--processes-per-node", "1", "--allow-idle-gpus")
    code, out = render(tmp_path, "iris/job.yml", *flags)
    job = yaml.safe_load(out.read_text())
    assert code == 0
    assert (
        job["inputs"]["iris_csv"]["path"] == "https://azuremlexamples.blob.core.windows.net/datasets/iris.csv"
    )
    assert job["inputs"]["epochs"] == 10 and job["inputs"]["lr"] == 0.1


def test_what_the_examples_need_is_said_before_submit(tmp_path, capsys):
    code, _ = render(tmp_path, "cifar-distributed/job.yml")
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert (
        "distribution.process_count_per_instance 1: Standard_ND96isr_H100_v5 has 8 GPUs per node, so 7 of "
        "them would sit idle; use 8 (one process per GPU), or pass --allow-idle-gpus" in err
    )
    assert "its command does not use ${{outputs.ckpt}}" in err and "or pass --no-checkpoint" in err


def test_the_deepspeed_example_as_published_is_refused_by_azure_ai_ml(tmp_path, capsys):
    """At the cited commit its first key is a literal `\\$schema`, which azure-ai-ml's schema rejects."""
    code, _ = render(tmp_path, "deepspeed-training/job.yml", "--no-checkpoint")
    err = capsys.readouterr().err
    assert code == 2 and "azure-ai-ml cannot load it as a job: \\$schema: Unknown field." in err, err


def test_the_torchtitan_example_renders_with_its_checkpoint_bound(tmp_path, capsys):
    """docs/examples/torchtitan-job.yml (pinned to torchtitan v0.2.2) renders on an 8-GPU cluster unchanged:
    the command uses ${{outputs.ckpt}}, no launcher, one process per GPU, every field kept."""
    example = Path(__file__).resolve().parents[2] / "docs" / "examples" / "torchtitan-job.yml"
    out = tmp_path / "built.yml"
    argv = ["render", "--file", str(example), "--outputs", OUTPUTS, "--cluster", "h100-x4"]
    assert main([*argv, "--run-name", "cpt-8b", "--out", str(out)]) == 0, capsys.readouterr().err
    assert differences(example, out) == []
    job = yaml.safe_load(out.read_text())
    assert job["outputs"]["ckpt"]["path"] == "azureml://datastores/workspaceblobstore/paths/ckpt/cpt-8b/"
    assert job["distribution"]["process_count_per_instance"] == 8
    assert "--checkpoint.enable --checkpoint.interval 500" in job["command"]

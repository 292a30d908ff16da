"""`python -m jobs render`: the YAML's code folder relative to the file (jobs/render/jobyaml.py), the folders
--out creates, and the usage errors of a missing --outputs file or of no KIND."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from jobs.cli import main

from .render_util import FIXTURE, render


def test_code_is_jobs_src_relative_to_the_yaml(tmp_path):
    path = render(tmp_path, "smoke", "--cluster", "h100-x4")
    code = yaml.safe_load(path.read_text())["code"]
    assert (path.parent / code).resolve() == (Path("jobs") / "payload").resolve()
    assert "component" not in yaml.safe_load(path.read_text())


def test_missing_outputs_file_is_a_usage_error(tmp_path, capsys):
    code = main(
        [
            "render",
            "smoke",
            "--outputs",
            str(tmp_path / "nope.json"),
            "--cluster",
            "h100-x4",
            "--out",
            str(tmp_path / "x.yml"),
        ]
    )
    assert code == 2
    assert "--outputs" in capsys.readouterr().err


def test_out_creates_missing_folders_and_says_so(tmp_path, capsys):
    target = tmp_path / "new" / "sub" / "job.yml"
    argv = ["render", "smoke", "--cluster", "h100-x4", "--outputs", FIXTURE, "--out", str(target), "--json"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert target.is_file()
    assert f"note: created folder {tmp_path / 'new'}" in captured.err
    created = [str(tmp_path / "new"), str(tmp_path / "new" / "sub")]
    assert json.loads(captured.out)["created_folders"] == created


def test_render_without_arguments_does_not_call_script_args_required(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["render"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "the following arguments are required: --out" in err  # KIND or --file: checked after parsing
    assert "[-- SCRIPT_ARGS ...]" in err  # optional in the usage
    assert main(["render", "--out", "x.yml"]) == 2
    assert "pass a job KIND (smoke, train, scaling, health) or --file JOB.yml" in capsys.readouterr().err


def test_a_url_data_input_is_written_as_the_url(tmp_path):
    """azure-ai-ml's dump writes an https input as `azureml:https://...` (an asset name load_job would look
    up); the YAML has the URL, and load_job reads it back as the URL."""
    from azure.ai.ml import load_job

    url = "https://acct.blob.core.windows.net/c/shards/"
    path = render(tmp_path, "train", "--cluster", "h100-x4", "--run-name", "r1", "--data", url)
    assert yaml.safe_load(path.read_text())["inputs"]["data"]["path"] == url
    assert load_job(path).inputs["data"].path == url
    store = "azureml://datastores/workspaceblobstore/paths/shards/"
    path = render(tmp_path / "b", "train", "--cluster", "h100-x4", "--run-name", "r1", "--data", store)
    assert yaml.safe_load(path.read_text())["inputs"]["data"]["path"] == store

"""`python -m jobs render` as the tests of the job builders and of `render` call it: a job rendered from the
recorded stack outputs (fixtures/outputs-prod.json), and the REST body Azure ML receives for its YAML (loaded
back with azure-ai-ml's own `load_job`)."""

from __future__ import annotations

from pathlib import Path

from azure.ai.ml import load_job

from jobs.cli import main

from .jobs_util import FIXTURES

FIXTURE = str(FIXTURES / "outputs-prod.json")


def rest_body(path: Path) -> dict:
    """What `ml.jobs.create_or_update(load_job(path))` sends as the job's `properties`."""
    return load_job(path)._to_job()._to_rest_object().as_dict()["properties"]


def render(tmp_path: Path, *argv: str, out: str = "job.yml") -> Path:
    target = tmp_path / out
    assert main(["render", *argv, "--outputs", FIXTURE, "--out", str(target)]) == 0
    return target

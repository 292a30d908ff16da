"""Stack outputs from a file or the real `pulumi` CLI (a stand-in executable on PATH, the process boundary),
and `submit`'s create-failure path through the real HTTP pipeline."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest
from jobs_azure_fakes import RoutedTransport, ml_client
from rich.console import Console

from jobs import outputs
from jobs.builders import cluster_target, smoke
from jobs.errors import UsageError
from jobs.submit import EXIT_CREATE, submit

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

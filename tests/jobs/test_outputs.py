"""The stack outputs (jobs/outputs.py): from a file (--outputs), from the real `pulumi` CLI (a stand-in
executable on PATH, the process boundary), or offline from `$AZML_GPU_OUTPUTS_DIR/S.json` (--stack S); the
contract's shape, the cluster lookup, and each error naming its flag."""

from __future__ import annotations

import json
import shutil
import stat
import sys
from pathlib import Path

import pytest

from jobs import outputs
from jobs.cli import main
from jobs.errors import UsageError

from .jobs_util import FIXTURES

FIXTURE = FIXTURES / "outputs-prod.json"

# --- --stack S offline: $AZML_GPU_OUTPUTS_DIR/S.json instead of the Pulumi CLI -------------------------


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copy(FIXTURE, tmp_path / "prod.json")
    monkeypatch.setenv("AZML_GPU_OUTPUTS_DIR", str(tmp_path))
    return tmp_path


def test_the_folder_is_read_without_any_pulumi_cli(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(folder))  # no pulumi here
    assert outputs.load("prod", None) == outputs.from_file(FIXTURE)


def test_the_folder_wins_over_a_pulumi_cli_on_path(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = folder / "bin"
    fake.mkdir()
    (fake / "pulumi").write_text("#!/bin/sh\nexit 99\n")
    (fake / "pulumi").chmod(0o755)
    monkeypatch.setenv("PATH", str(fake))
    assert outputs.load("prod", None).workspace_name == outputs.from_file(FIXTURE).workspace_name


def test_a_stack_the_folder_lacks_names_the_stacks_it_has(folder: Path) -> None:
    with pytest.raises(UsageError) as exc:
        outputs.load("dev", None)
    assert str(exc.value) == (
        f"--stack dev: no {folder / 'dev.json'} (AZML_GPU_OUTPUTS_DIR={folder} holds the outputs of: prod); "
        "use one of those stacks, start `python -m doubles.localml serve --deploy dev`, or unset "
        "AZML_GPU_OUTPUTS_DIR to ask the Pulumi CLI"
    )


def test_a_broken_file_in_the_folder_names_the_variable(folder: Path) -> None:
    (folder / "prod.json").write_text("{")
    with pytest.raises(UsageError, match=r"^--stack prod \(AZML_GPU_OUTPUTS_DIR\): --outputs .*: not JSON"):
        outputs.load("prod", None)


def test_without_the_variable_or_a_cli_the_message_offers_both(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("AZML_GPU_OUTPUTS_DIR", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(UsageError) as exc:
        outputs.load("dev", None)
    assert "the `pulumi` CLI is not on PATH" in str(exc.value)
    assert "set AZML_GPU_OUTPUTS_DIR to a folder of <stack>.json outputs" in str(exc.value)
    assert "`python -m doubles.localml serve --deploy dev` prints it" in str(exc.value)


# --- a file, or the pulumi CLI ----------------------------------------------------------------------------


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


def test_outputs_file_that_is_not_utf8_exits_2(tmp_path, capsys):
    bad = tmp_path / "outputs.json"
    bad.write_bytes(b"\xff\xfe{}")
    out = str(tmp_path / "j.yml")
    assert main(["render", "smoke", "--cluster", "h100-x4", "--outputs", str(bad), "--out", out]) == 2
    assert f"--outputs {bad}: not UTF-8 text" in capsys.readouterr().err

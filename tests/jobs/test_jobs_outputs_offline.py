"""`--stack S` offline: `$AZML_GPU_OUTPUTS_DIR/S.json` instead of the Pulumi CLI (jobs/outputs.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from jobs import outputs
from jobs.errors import UsageError

FIXTURE = Path(__file__).parent / "fixtures" / "outputs-prod.json"


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

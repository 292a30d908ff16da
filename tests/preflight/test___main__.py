"""`python -m preflight`'s own checks of its flags, before the engine starts (--program)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from preflight.__main__ import _program_problems, main

ROOT = Path(__file__).resolve().parents[2]
HAND_BUILT = ROOT / "tests" / "fixtures" / "programs" / "hand-built"


def test_a_python_program_folder_is_accepted() -> None:
    assert _program_problems(HAND_BUILT) == []
    assert _program_problems(ROOT) == []


def test_a_missing_folder_is_named_with_the_fix(tmp_path: Path) -> None:
    gone = tmp_path / "nope"
    assert _program_problems(gone) == [
        f"--program: {gone} does not exist; give the folder that holds the program's Pulumi.yaml"
    ]


def test_a_file_instead_of_the_folder_is_named(tmp_path: Path) -> None:
    manifest = tmp_path / "Pulumi.yaml"
    manifest.write_text("name: x\nruntime: python\n")
    assert _program_problems(manifest) == [
        f"--program: {manifest} is a file; give the folder that holds the program's Pulumi.yaml"
    ]


def test_a_folder_without_pulumi_yaml_is_named(tmp_path: Path) -> None:
    assert _program_problems(tmp_path) == [
        f"--program: no Pulumi.yaml in {tmp_path}; give the folder that holds the program's Pulumi.yaml"
    ]


@pytest.mark.parametrize(
    ("runtime", "shown"),
    [("nodejs", "'nodejs'"), ("{name: go, options: {}}", "'go'"), ("", "None")],
)
def test_a_program_in_another_language_is_refused(tmp_path: Path, runtime: str, shown: str) -> None:
    (tmp_path / "Pulumi.yaml").write_text(f"name: x\nruntime: {runtime}\n")
    assert _program_problems(tmp_path) == [
        f"--program: {tmp_path / 'Pulumi.yaml'} has runtime {shown}; the gate runs Python programs "
        "(runtime: python) with its own language host"
    ]


def test_the_runtime_may_be_a_mapping(tmp_path: Path) -> None:
    (tmp_path / "Pulumi.yaml").write_text("name: x\nruntime:\n  name: python\n  options: {toolchain: pip}\n")
    assert _program_problems(tmp_path) == []


def test_a_bad_program_is_reported_with_the_other_flag_problems_as_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every problem at once, exit 2, before any engine runs."""
    code = main(
        ["dev", "--json", "--program", str(tmp_path), "--config-file", str(tmp_path / "missing.yaml")]
    )
    document = json.loads(capsys.readouterr().out)
    assert code == 2
    assert document["errors"] == [
        f"--program: no Pulumi.yaml in {tmp_path}; give the folder that holds the program's Pulumi.yaml",
        f"--config-file: {tmp_path / 'missing.yaml'} does not exist; give the file's path",
    ]

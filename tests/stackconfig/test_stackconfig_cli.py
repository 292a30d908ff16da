"""`python -m stackconfig`: stack names, file-level errors, plain and --json output."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from stackconfig.cli import main
from stackconfig.loader import stack_file

REPO = Path(__file__).resolve().parents[2]


def test_stack_names_map_to_stack_files() -> None:
    assert stack_file("dev") == Path("Pulumi.dev.yaml")
    assert stack_file("configs/Pulumi.x.yaml") == Path("configs/Pulumi.x.yaml")


def test_real_process_ok_and_json(tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "stackconfig", "prod"], cwd=REPO, capture_output=True, text=True, timeout=30
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("ok: Pulumi.prod.yaml") and run.stdout.count("\n") == 1
    run = subprocess.run(
        [sys.executable, "-m", "stackconfig", "dev", "--json"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=30,
    )
    report = json.loads(run.stdout)
    assert run.returncode == 0 and report["ok"] is True
    assert report["config"]["clusters"][0]["size"] == "Standard_NC4as_T4_v3"


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        (None, "cannot read"),
        ("config: [unclosed\n", "is not valid YAML at line"),
        ("encryptionsalt: x\n", "has no 'config:' mapping"),
        ("config:\n  azml_gpu:workspace: {}\n", "did you mean azml-gpu:workspace?"),
        ("config:\n  azml-gpu:workspace:\n    secure: AAABxyz\n", "encrypted"),
    ],
    ids=["missing-file", "invalid-yaml", "no-config", "namespace-typo", "secure-value"],
)
def test_file_problems_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None, fragment: str
) -> None:
    path = tmp_path / "Pulumi.x.yaml"
    if content is not None:
        path.write_text(content)
    assert main([str(path)]) == 2
    err = capsys.readouterr().err
    assert fragment in err and "Traceback" not in err
    assert main([str(path), "--json"]) == 2
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is False and any(fragment in p for p in report["problems"])
    assert all(p.startswith("azml-gpu:") for p in report["problems"])


def test_invalid_yaml_in_a_real_process_has_no_traceback(tmp_path: Path) -> None:
    path = tmp_path / "Pulumi.bad.yaml"
    path.write_text("config:\n  azml-gpu:clusters: [\n")
    run = subprocess.run(
        [sys.executable, "-m", "stackconfig", str(path)], cwd=REPO, capture_output=True, text=True, timeout=30
    )
    assert run.returncode == 2 and "Traceback" not in run.stdout + run.stderr
    assert "is not valid YAML" in run.stderr


def test_a_file_that_is_not_utf8_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "Pulumi.x.yaml"
    path.write_bytes(b"config:\n  azml-gpu:workspace: {name: \xff}\n")
    assert main([str(path), "--json"]) == 2
    assert json.loads(capsys.readouterr().out) == {
        "ok": False,
        "file": str(path),
        "problems": [f"azml-gpu: {path} is not UTF-8 text (byte 0xff at offset 37); save it as UTF-8"],
    }


def test_invalid_yaml_is_one_line_with_the_position(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "Pulumi.x.yaml"
    path.write_text("config:\n  azml-gpu:clusters: [\n")
    assert main([str(path), "--json"]) == 2
    assert json.loads(capsys.readouterr().out)["problems"] == [
        f"azml-gpu: {path} is not valid YAML at line 3, column 1: expected the node content, but found "
        "'<stream end>'; fix the YAML syntax"
    ]


@pytest.mark.parametrize(
    ("argv", "problem"),
    [
        (["dev", "--bogus", "--json"], "unrecognized arguments: --bogus; see python -m stackconfig --help"),
        (["--json"], "the following arguments are required: STACK_OR_FILE; see python -m stackconfig --help"),
    ],
)
def test_usage_errors_with_json_print_the_json_error_document(
    capsys: pytest.CaptureFixture[str], argv: list[str], problem: str
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    out, err = capsys.readouterr()
    assert json.loads(out) == {"ok": False, "file": None, "problems": [problem]}
    assert "usage:" not in out


def test_usage_errors_without_json_keep_argparse_usage(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["dev", "--bogus"])
    assert exit_info.value.code == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("usage: python -m stackconfig")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read {path}: No such file or directory; check the stack name or path"),
        (b"config: [unclosed\n", "{path} is not valid YAML at line 2, column 1"),
        (b"config:\n  azml-gpu:workspace: \xfe\n", "{path} is not UTF-8 text (byte 0xfe at offset 30)"),
        (b"encryptionsalt: x\n", "{path} has no 'config:' mapping"),
        (b"config:\n", "{path} has no 'config:' mapping"),
    ],
    ids=["missing-file", "invalid-yaml", "not-utf8", "no-config", "empty-config"],
)
def test_one_reader_one_message_for_stackconfig_and_preflight(
    tmp_path: Path, content: bytes | None, message: str
) -> None:
    """stackconfig's loader and preflight's run_program read a stack file with the same reader
    (stackconfig.loader.read_config_block), so a bad file gets the same one-line problem from both."""
    from preflight.program import run_program
    from stackconfig import ConfigError, load_stack_file
    from stackconfig.loader import StackFileError, read_config_block

    path = tmp_path / "Pulumi.x.yaml"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(StackFileError) as raised:
        read_config_block(path)
    assert str(raised.value).startswith(message.format(path=path))
    with pytest.raises(ConfigError) as invalid:
        load_stack_file(path)
    result = run_program("x", root=tmp_path)
    assert invalid.value.problems == result.problems == [f"azml-gpu: {raised.value}"]
    assert not result.ok and not result.resources

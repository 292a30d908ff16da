"""stackconfig/cli.py: `python -m stackconfig STACK_OR_FILE [--json]` (plain and --json output, exit 2 without
a traceback for a bad file or config, the subscription id check) and the command-line conventions every CLI of
the project shares (the program name a usage text shows, the JSON error document of a usage error)."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from stackconfig import ConfigError, load_stack_file
from stackconfig.cli import JsonErrorParser, main

from .stackconfig_factory import INVALID_CASES, bad

REPO = Path(__file__).resolve().parents[2]
SUB = "00000000-0000-0000-0000-000000000000"
PLACEHOLDER = "<your subscription id>"


# --- the conventions every CLI shares -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv0", "shown"),
    [
        ("/opt/azml/.venv/bin/azml-gpu-stackconfig", "azml-gpu-stackconfig"),  # the console script
        ("/work/azml-gpu/stackconfig/__main__.py", "python -m stackconfig"),  # python -m stackconfig
        ("", "python -m stackconfig"),  # python -c / an embedded interpreter's empty argv[0]
        (None, "python -m stackconfig"),  # an embedded interpreter without sys.argv entries
    ],
    ids=["console-script", "python-m", "empty-argv0", "no-argv"],
)
def test_a_usage_error_names_the_program_the_user_ran(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], argv0: str | None, shown: str
) -> None:
    monkeypatch.setattr(sys, "argv", [] if argv0 is None else [argv0])
    with pytest.raises(SystemExit) as exit_info:
        main(["--json"])
    assert exit_info.value.code == 2
    out, err = capsys.readouterr()
    problem = f"the following arguments are required: STACK_OR_FILE; see {shown} --help"
    assert json.loads(out) == {"ok": False, "file": None, "problems": [problem]}
    assert err == f"{shown}: error: {problem}\n"


def _tool(**subparsers: object) -> JsonErrorParser:
    """A CLI with its own JSON error document and one subcommand `run --steps N`."""
    parser = JsonErrorParser(prog="tool", json_error=lambda problem: {"failed": True, "why": problem})
    sub = parser.add_subparsers(dest="command", required=True, **subparsers)
    run = sub.add_parser("run")
    run.add_argument("--steps", type=int, required=True)
    run.add_argument("--json", action="store_true")
    return parser


def test_a_subcommand_s_usage_error_under_json_is_the_parent_s_document(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        _tool().parse_args(["run", "--steps", "ten", "--json"])
    assert exit_info.value.code == 2
    out, _ = capsys.readouterr()
    assert json.loads(out) == {
        "failed": True,
        "why": "argument --steps: invalid int value: 'ten'; see tool run --help",
    }


def test_a_subcommand_parser_class_the_cli_names_is_kept(capsys: pytest.CaptureFixture[str]) -> None:
    """`add_subparsers(parser_class=...)`: the CLI's own class, with argparse's plain usage error."""
    with pytest.raises(SystemExit) as exit_info:
        _tool(parser_class=argparse.ArgumentParser).parse_args(["run", "--steps", "ten", "--json"])
    assert exit_info.value.code == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("usage: tool run [-h] --steps STEPS [--json]\n")
    assert err.endswith("tool run: error: argument --steps: invalid int value: 'ten'\n")


# --- python -m stackconfig ----------------------------------------------------------------------------------


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


def test_the_stack_file_check_reports_the_placeholder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = (REPO / "Pulumi.dev.yaml").read_text()
    assert f"azure-native:subscriptionId: {SUB}" in text
    stack = tmp_path / "Pulumi.dev.yaml"
    stack.write_text(
        text.replace(f"azure-native:subscriptionId: {SUB}", f"azure-native:subscriptionId: {PLACEHOLDER}")
    )
    assert main([str(stack), "--json"]) == 2
    assert capsys.readouterr().out.count("is not a subscription id") == 1
    stack.write_text(text.replace(f"  azure-native:subscriptionId: {SUB}\n", ""))  # azure-native: the CLI's
    assert main([str(stack)]) == 0


# --- every invalid config of the table (stackconfig_factory.INVALID_CASES), through the CLI -----------------


def _write_stack(tmp_path: Path, raw: dict[str, Any]) -> Path:
    path = tmp_path / "Pulumi.bad.yaml"
    config = {"azure-native:location": "eastus"} | {f"azml-gpu:{key}": value for key, value in raw.items()}
    path.write_text(yaml.safe_dump({"config": config}, sort_keys=False))
    return path


# Runs `python -m stackconfig FILE --json` for every case in ONE interpreter (runpy, the mechanism behind
# `python -m`), so the table costs one process start instead of one per case. Anything that escapes main()
# is printed as a traceback and fails the case.
_DRIVER = """
import contextlib, io, json, runpy, sys, traceback
for path in sys.argv[1:]:
    out, err, code = io.StringIO(), io.StringIO(), None
    sys.argv = ["stackconfig", path, "--json"]
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            runpy.run_module("stackconfig", run_name="__main__", alter_sys=True)
        except SystemExit as exc:
            code = exc.code
        except BaseException:
            traceback.print_exc()
    print(json.dumps({"path": path, "code": code, "stdout": out.getvalue(), "stderr": err.getvalue()}))
"""


@pytest.fixture(scope="module")
def cli_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """Exit code and output of the CLI for each case's stack file, keyed by case id."""
    files = {
        case_id: _write_stack(tmp_path_factory.mktemp(case_id), bad(change))
        for case_id, change, *_ in INVALID_CASES
    }
    run = subprocess.run(
        [sys.executable, "-c", _DRIVER, *map(str, files.values())],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    by_path = {row["path"]: row for row in map(json.loads, run.stdout.splitlines())}
    return {case_id: by_path[str(path)] | {"file": path} for case_id, path in files.items()}


@pytest.mark.parametrize(
    ("case_id", "path", "fragment"),
    [(c[0], c[2], c[3]) for c in INVALID_CASES],
    ids=[c[0] for c in INVALID_CASES],
)
def test_cli_exits_2_without_traceback(
    cli_runs: dict[str, dict[str, Any]], case_id: str, path: str, fragment: str
) -> None:
    result = cli_runs[case_id]
    with pytest.raises(ConfigError) as info:
        load_stack_file(result["file"])
    assert [p.split(": ", 1)[0] for p in info.value.problems] == [f"azml-gpu:{path}"]
    assert result["code"] == 2, result
    assert "Traceback" not in result["stdout"] + result["stderr"]
    report = json.loads(result["stdout"])
    assert report["ok"] is False
    assert report["problems"] == info.value.problems
    assert fragment in report["problems"][0]

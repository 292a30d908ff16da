"""The command-line conventions every CLI of the project shares (stackconfig/cli.py): the program name a
usage text shows, and the JSON error document of a subcommand's usage error."""

from __future__ import annotations

import argparse
import json
import sys

import pytest

from stackconfig.cli import JsonErrorParser, main


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

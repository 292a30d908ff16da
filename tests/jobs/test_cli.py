"""The shape of `python -m jobs` (jobs/cli.py): the command list `COMMANDS` and the parser built from it, the
--json error document of a usage error, and the `--` split of script arguments (no abbreviated flags, no
stray positionals, no script arguments for a command without a script)."""

from __future__ import annotations

import importlib
import json
import pkgutil

import pytest

import jobs.cli
import jobs.commands
from jobs.cli import COMMANDS, build_parser, main
from jobs.errors import EXIT_USAGE

from .jobs_util import FIXTURES

FIXTURE = str(FIXTURES / "outputs-prod.json")


def test_every_command_module_is_in_the_command_list_and_adds_that_command():
    modules = {f"jobs.commands.{m.name}" for m in pkgutil.iter_modules(jobs.commands.__path__)}
    assert set(COMMANDS.values()) == modules  # a module left out of COMMANDS is never registered
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    assert list(sub.choices) == list(COMMANDS)  # --help lists them in the table's order


def test_a_module_that_adds_another_name_than_the_table_says_is_refused(monkeypatch):
    monkeypatch.setattr(jobs.cli, "COMMANDS", {"verify-logs": "jobs.verify"})
    with pytest.raises(RuntimeError, match="'verify-logs'"):
        build_parser()


def test_help_lists_every_command(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    for name in COMMANDS:
        assert f"    {name}" in out
    for module in COMMANDS.values():
        assert importlib.import_module(module).register


# --json on every exit path, argparse's usage errors included (docs/jobs.md: one JSON object even on failure).
USAGE_ERRORS = [
    (["sbumit", "--json"], "argument COMMAND: invalid choice: 'sbumit'"),
    (["plan", "--json"], "the following arguments are required: --tokens, --tokens-per-gpu-s, --gpus"),
    (["plan", "--gpus", "x", "--tokens", "1", "--tokens-per-gpu-s", "1", "--json"], "--gpus: invalid int"),
    (["submit", "smoke", "--json", "--bogus"], "unrecognized arguments: --bogus"),
    (["local", "smok", "--json"], "invalid choice: 'smok'"),
    (["submit", "smoke", "extra", "--json"], "submit: unexpected argument(s) extra"),
]


@pytest.mark.parametrize(("argv", "needle"), USAGE_ERRORS, ids=[" ".join(a) for a, _ in USAGE_ERRORS])
def test_a_usage_error_under_json_prints_the_json_error_document(argv, needle, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    out, err = capsys.readouterr()
    document = json.loads(out)
    assert document["ok"] is False and document["exit_code"] == 2
    assert needle in document["error"] and document["error"].endswith("--help")
    assert needle in err and "Traceback" not in err


def test_a_usage_error_without_json_keeps_argparse_usage_on_stderr(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["plan"])
    assert exc.value.code == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("usage: python -m jobs plan")
    assert "python -m jobs plan: error: the following arguments are required" in err


def test_json_after_the_script_separator_belongs_to_the_script(capsys):
    # `--json` after `--` is the script's flag, not ours: the usage error (no workspace named; KIND is
    # optional since `--file JOB.yml`) stays plain text on stderr, exit 2, nothing on stdout.
    assert main(["submit", "--", "--json"]) == EXIT_USAGE
    out, err = capsys.readouterr()
    assert out == ""
    assert err == "error: submit needs the workspace: pass --stack NAME or --outputs FILE\n"


def test_commands_without_a_script_refuse_script_arguments(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["plan", "--tokens", "1", "--tokens-per-gpu-s", "1", "--gpus", "1", "--", "x"])
    assert exited.value.code == 2
    assert "plan takes no script arguments after `--` (got x)" in capsys.readouterr().err


def test_abbreviated_flags_are_not_expanded(tmp_path, capsys):
    # `--out` is not `--outputs` on submit (which has no --out): argparse must not expand it.
    with pytest.raises(SystemExit) as exited:
        main(["submit", "smoke", "--out", FIXTURE, "--cluster", "h100-x4"])
    assert exited.value.code == 2
    assert "unrecognized arguments: --out" in capsys.readouterr().err
    out = str(tmp_path / "j.yml")
    with pytest.raises(SystemExit):
        main(["render", "smoke", "--output", FIXTURE, "--cluster", "h100-x4", "--out", out])
    assert not (tmp_path / "j.yml").exists()


def test_stray_positionals_before_the_double_dash_are_refused(tmp_path, capsys):
    # right after the kind, argparse would take `stray` as a script argument; only `--` starts those
    argv = ["render", "smoke", "stray", "--cluster", "h100-x4", "--outputs", FIXTURE]
    with pytest.raises(SystemExit) as exited:
        main([*argv, "--out", str(tmp_path / "j.yml")])
    assert exited.value.code == 2
    assert "render: unexpected argument(s) stray; script arguments go after `--`" in capsys.readouterr().err
    assert not (tmp_path / "j.yml").exists()

"""The shape of `python -m jobs` (jobs/cli.py): the command list `COMMANDS`, the layout of jobs/ it stands for
(one module or folder per command, named for it; the rest is shared plumbing), the parser built from it, the
--json error document of a usage error, and the `--` split of script arguments (no abbreviated flags, no
stray positionals, no script arguments for a command without a script)."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

import jobs.cli
from jobs.cli import COMMANDS, build_parser, main
from jobs.errors import EXIT_USAGE

from .jobs_util import FIXTURES, REPO

FIXTURE = str(FIXTURES / "outputs-prod.json")

#: What sits at the top of jobs/ and is no command: the plumbing several commands share (docs/jobs.md,
#: "Layout"). A module here that holds one command's logic belongs in that command's folder instead.
SHARED = {
    "__init__": "the package",
    "__main__": "`python -m jobs`",
    "cli": "COMMANDS and the parser",
    "errors": "exit codes, UsageError, fail",
    "progress": "the stderr console and spinners",
    "outputs": "the stack outputs (--stack / --outputs)",
    "azure_client": "the one MLClient and the ARM pipeline",
    "jobargs": "the flags render, submit and run share, the job kinds",
    "builders": "building a job (azure-ai-ml command(...))",
    "settings": "per-size job settings and --set",
    "unmount": "the train job's unmount timeout, part of building it",
    "userjob": "a --file job with the platform layer, built for render, submit and run",
    "userjobcheck": "what a --file job would fail on, checked for render, submit and run",
    "paths": "checks on --out / --logs paths",
    "regions": "region flags",
    "ranklogs": "a job's rank logs: finding them, reading them, their line patterns",
    "health": "the health job kind (render and submit build it, submit judges it); no command of its own",
    "payload": "what Azure ML uploads as the job's code (not a package: the scripts run alone)",
}


def command_module(name: str) -> str:
    """The module a command lives in: its name with underscores, at the top of jobs/."""
    return "jobs." + name.replace("-", "_")


def layout_problems(root: Path, commands: dict[str, str], shared: dict[str, str]) -> list[str]:
    """Every way the folder `root` (a jobs/ tree) disagrees with the command list, one line each."""
    problems = []
    for name, module in commands.items():
        short = module.removeprefix("jobs.")
        if module != command_module(name):
            problems.append(f"{name}: its module is {module}, not {command_module(name)}, the command's name")
        elif not ((root / f"{short}.py").is_file() or (root / short / "__init__.py").is_file()):
            problems.append(f"{name}: neither jobs/{short}.py nor jobs/{short}/__init__.py exists")
    named = {m.removeprefix("jobs.") for m in commands.values()}
    for entry in sorted(root.iterdir()):
        short = entry.stem if entry.suffix == ".py" else entry.name
        if entry.name == "__pycache__" or (entry.is_file() and entry.suffix != ".py"):
            continue
        if short not in named and short not in shared:
            problems.append(
                f"jobs/{entry.name}: no command is named {short!r}: move a command's logic into its folder "
                "(jobs/<command>/), or list shared plumbing in SHARED with what it is"
            )
    return problems


def test_jobs_holds_one_module_or_folder_per_command_and_the_shared_plumbing():
    assert layout_problems(REPO / "jobs", COMMANDS, SHARED) == []


def test_a_command_s_logic_under_another_name_breaks_the_layout(tmp_path):
    (tmp_path / "verify").mkdir()
    (tmp_path / "verify" / "__init__.py").write_text("")
    (tmp_path / "verify" / "logchecks.py").write_text("")  # inside the command's folder: fine
    (tmp_path / "cli.py").write_text("")
    (tmp_path / "logchecks.py").write_text("")  # verify's logic named for its concept, at the top
    (tmp_path / "checks").mkdir()  # a command folder COMMANDS does not list
    (tmp_path / "checks" / "__init__.py").write_text("")
    commands = {"verify": "jobs.verify", "scaling": "jobs.scaling", "check-deploy": "jobs.commands.drift"}
    assert layout_problems(tmp_path, commands, {"cli": "the parser"}) == [
        "scaling: neither jobs/scaling.py nor jobs/scaling/__init__.py exists",
        "check-deploy: its module is jobs.commands.drift, not jobs.check_deploy, the command's name",
        "jobs/checks: no command is named 'checks': move a command's logic into its folder "
        "(jobs/<command>/), or list shared plumbing in SHARED with what it is",
        "jobs/logchecks.py: no command is named 'logchecks': move a command's logic into its folder "
        "(jobs/<command>/), or list shared plumbing in SHARED with what it is",
    ]


def test_help_lists_the_commands_the_folders_say_in_the_table_s_order():
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    assert list(sub.choices) == list(COMMANDS)  # a module left out of COMMANDS is never registered
    on_disk = {
        (p.stem if p.suffix == ".py" else p.name).replace("_", "-")
        for p in (REPO / "jobs").iterdir()
        if (p.suffix == ".py" or (p / "__init__.py").is_file())
        and (p.stem if p.suffix == ".py" else p.name) not in SHARED
    }
    assert sorted(sub.choices) == sorted(on_disk)


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

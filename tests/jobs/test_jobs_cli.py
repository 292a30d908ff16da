"""The shape of `python -m jobs`: the command list in `jobs.cli.COMMANDS`, the one error-detail helper, and
the log-line patterns of `jobs.logpatterns` against the lines the job scripts print."""

from __future__ import annotations

import importlib
import json
import pkgutil
import re
from pathlib import Path

import pytest
from azure.core.exceptions import HttpResponseError
from azure.core.rest import HttpRequest
from azure.core.rest._requests_basic import RestRequestsTransportResponse
from azure.mgmt.core.exceptions import ARMErrorFormat

import jobs.cli
import jobs.commands
import jobs.errors
from jobs import logpatterns
from jobs.cli import COMMANDS, build_parser, main
from jobs.errors import EXIT_USAGE, error_detail


def test_every_command_module_is_in_the_command_list_and_adds_that_command():
    modules = {f"jobs.commands.{m.name}" for m in pkgutil.iter_modules(jobs.commands.__path__)}
    assert set(COMMANDS.values()) == modules  # a module left out of COMMANDS is never registered
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    assert list(sub.choices) == list(COMMANDS)  # --help lists them in the table's order


def test_a_module_that_adds_another_name_than_the_table_says_is_refused(monkeypatch):
    monkeypatch.setattr(jobs.cli, "COMMANDS", {"verify-logs": "jobs.commands.verify"})
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


def _arm_error(status: int, body: bytes) -> HttpResponseError:
    """An HttpResponseError as azure-mgmt-core raises it for an ARM error body (the code path of every
    generated ARM client: `HttpResponseError(response=..., error_format=ARMErrorFormat)`)."""
    import io

    import requests

    raw = requests.Response()
    raw.status_code, raw._content, raw.raw = status, body, io.BytesIO(body)
    raw.headers["Content-Type"] = "application/json"
    request = HttpRequest("GET", "https://management.azure.com/x")
    response = RestRequestsTransportResponse(request=request, internal_response=raw)
    response.read()
    return HttpResponseError(response=response, error_format=ARMErrorFormat)


def test_error_detail_is_the_type_and_the_first_line_of_an_arm_error():
    exc = _arm_error(
        403,
        b'{"error": {"code": "AuthorizationFailed", "message": "The client does not have authorization"}}',
    )
    assert len(str(exc).splitlines()) > 1  # azure-core's message: "(Code) Message", then Code:, Message:
    first = "(AuthorizationFailed) The client does not have authorization"
    assert error_detail(exc) == f"HttpResponseError: {first}"


@pytest.mark.parametrize(
    ("exc", "detail"),
    [
        (RuntimeError(), "RuntimeError: "),
        (RuntimeError("\n  first\nsecond"), "RuntimeError: first"),
        (TimeoutError("read timed out"), "TimeoutError: read timed out"),
    ],
)
def test_error_detail_of_other_exceptions(exc, detail):
    assert error_detail(exc) == detail


@pytest.mark.parametrize(
    ("line", "world"),
    [
        ("world size 4", 4),  # smoke.py, rank 0
        ("smoke rank=3 local_rank=1 node_rank=1 world_size=4 host=node-1 device=cuda:1", 4),  # every rank
        ("model 1.23M params | world size 16 | device cuda | 8192 tokens/step/GPU | peak table", 16),  # train
        ("local_world_size=2", None),  # torchrun's LOCAL_WORLD_SIZE is not the world size
    ],
)
def test_world_size_pattern(line, world):
    m = logpatterns.WORLD_SIZE.search(line)
    assert (int(m.group(1)) if m else None) == world


def test_smoke_rank_line_patterns():
    line = "smoke rank=3 local_rank=1 node_rank=1 world_size=4 host=node-1 device=cuda:1"
    assert logpatterns.RANK.search(line).group(1) == "3"  # not local_rank or node_rank
    assert logpatterns.NODE_RANK.search(line).group(1) == "1"
    assert logpatterns.HOST.search(line).group(1) == "node-1"
    assert logpatterns.PEAK_BUSBW.search("smoke peak busbw: 12.75 GB/s").group(1) == "12.75"


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


def test_jobs_local_bad_value_under_json_is_the_json_document(capsys):
    assert main(["local", "smoke", "--nodes", "0", "--json"]) == EXIT_USAGE
    out, err = capsys.readouterr()
    assert json.loads(out) == {
        "ok": False,
        "error": "--nodes must be at least 1 (got 0)",
        "exit_code": EXIT_USAGE,
    }
    assert err == "error: --nodes must be at least 1 (got 0)\n"


# One flag name per concept: --processes-per-node (Azure ML's process_count_per_instance) in every command.
def _parse(argv):
    return build_parser().parse_args(argv)


@pytest.mark.parametrize(
    "command",
    [["local", "smoke"], ["submit", "smoke"], ["render", "smoke", "--out", "x.yml"], ["run", "smoke"]],
)
def test_every_command_takes_processes_per_node(command):
    assert _parse([*command, "--processes-per-node", "3"]).processes_per_node == 3


def test_procs_per_node_is_a_deprecated_alias_that_says_so(capsys):
    args = _parse(["local", "train", "--procs-per-node", "2"])
    assert args.processes_per_node == 2
    assert capsys.readouterr().err == (
        "python -m jobs local train: warning: --procs-per-node is deprecated and will be removed; "
        "use --processes-per-node\n"
    )


def test_the_new_name_alone_warns_nothing_and_the_default_holds(capsys):
    assert _parse(["local", "train"]).processes_per_node == 1
    assert _parse(["submit", "smoke"]).processes_per_node is None
    assert capsys.readouterr().err == ""


def test_help_shows_only_the_new_name(capsys):
    with pytest.raises(SystemExit):
        main(["local", "smoke", "--help"])
    out = capsys.readouterr().out
    assert "--processes-per-node" in out and "--procs-per-node" not in out


# Distinct exit codes for distinct outcomes, one table (README.md "Exit codes").
def test_each_exit_code_has_one_meaning():
    codes = {name: value for name, value in vars(jobs.errors).items() if name.startswith("EXIT_")}
    assert codes == {
        "EXIT_OK": 0,
        "EXIT_FAILED": 1,
        "EXIT_USAGE": 2,
        "EXIT_NOT_CREATED": 3,
        "EXIT_QUERY": 4,
        "EXIT_ENDED_OTHERWISE": 5,
        "EXIT_INTERRUPTED": 130,
        "EXIT_CLOSED_PIPE": 141,
    }
    assert len(set(codes.values())) == len(codes)


def test_a_canceled_job_is_not_the_bad_input_code():
    from jobs import lifecycle
    from jobs.runs import loop

    assert lifecycle.EXIT_OTHER == loop.EXIT_OTHER == jobs.errors.EXIT_ENDED_OTHERWISE == 5
    assert lifecycle.EXIT_OTHER != jobs.errors.EXIT_USAGE


def test_the_readme_table_lists_every_code_with_its_meaning():
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    section = readme.split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    rows = {
        int(m.group(1)): m.group(2)
        for m in re.finditer(r"^\| `(\d+)` \| ([^|]+) \|", section, flags=re.MULTILINE)
    }
    codes = {v for k, v in vars(jobs.errors).items() if k.startswith("EXIT_")}
    assert set(rows) == codes
    assert "bad input" in rows[2] and "Canceled" in rows[5] and "Canceled" not in rows[2]


# Silent acceptances closed: a capped smoke job says so; `run` on a cluster the workspace lacks says so first.
FIXTURES = Path(__file__).parent / "fixtures"
CAPPED = (
    "note: smoke job capped to 1 node x {procs} (default 2 nodes): {why}; it checks that a job runs, "
    "not NCCL {lost}; to test that, {fix}\n"
)


def _dev_like_outputs(tmp_path, **cluster):
    """outputs-prod.json with one cluster changed (the dev stack's t4-dev is 1 node x 1 GPU)."""
    data = json.loads((FIXTURES / "outputs-prod.json").read_text())
    data["clusters"]["h100-x4"].update(cluster)
    path = tmp_path / "outputs.json"
    path.write_text(json.dumps(data))
    return path


def _render(tmp_path, outputs, *flags):
    return main(["render", "smoke", "--outputs", str(outputs), "--out", str(tmp_path / "s.yml"), *flags])


def test_a_smoke_job_capped_to_one_node_and_one_process_says_so(tmp_path, capsys):
    outputs = _dev_like_outputs(
        tmp_path,
        size="Standard_NC4as_T4_v3",
        gpus_per_node=1,
        vcpus_per_node=4,
        max_instances=1,
        rdma_usable=False,
    )
    assert _render(tmp_path, outputs, "--cluster", "h100-x4") == 0
    assert capsys.readouterr().err == CAPPED.format(
        procs="1 process",
        why="cluster h100-x4 allows 1 node (max_instances)",
        lost="across nodes or between GPUs",
        fix="raise the cluster's max_instances to 2 or smoke-test a larger cluster",
    )


def test_a_smoke_job_capped_for_want_of_rdma_names_allow_tcp(tmp_path, capsys):
    outputs = _dev_like_outputs(tmp_path, rdma_usable=False)
    assert _render(tmp_path, outputs, "--cluster", "h100-x4") == 0
    assert capsys.readouterr().err == CAPPED.format(
        procs="8 processes",
        why="Standard_ND96isr_H100_v5 has no usable RDMA and a multi-node job over TCP needs --allow-tcp",
        lost="across nodes",
        fix="add --allow-tcp to test 2 nodes over TCP",
    )


@pytest.mark.parametrize("flags", [["--cluster", "h100-x4"], ["--cluster", "h100-one", "--nodes", "1"]])
def test_a_smoke_job_at_its_default_or_at_the_nodes_asked_says_nothing(tmp_path, capsys, flags):
    assert _render(tmp_path, FIXTURES / "outputs-prod.json", *flags) == 0
    assert capsys.readouterr().err == ""


def test_the_capped_note_is_in_render_json(tmp_path, capsys):
    assert _render(tmp_path, FIXTURES / "outputs-prod.json", "--cluster", "h100-one", "--json") == 0
    out = json.loads(capsys.readouterr().out)
    (job,) = out["jobs"]
    assert job["notes"][0].startswith(
        "smoke job capped to 1 node x 8 processes (default 2 nodes): cluster h100-one"
    )


def test_run_on_a_cluster_the_workspace_lacks_says_so_before_anything_else(monkeypatch, capsys, tmp_path):
    from jobs_azure_fakes import RoutedTransport, ml_client

    import jobs.azure_client

    def route(method: str, url: str):
        return 404, {"error": {"code": "ResourceNotFound", "message": "compute h100-x4 not found"}}

    transport = RoutedTransport(route)
    monkeypatch.setattr(jobs.azure_client, "ml_client", lambda o: ml_client(transport, retry_total=0))
    argv = ["run", "smoke", "--outputs", str(FIXTURES / "outputs-prod.json"), "--cluster", "h100-x4"]
    assert main([*argv, "--logs", str(tmp_path / "logs"), "--json"]) == jobs.errors.EXIT_NOT_CREATED
    out, err = capsys.readouterr()
    message = (
        "--cluster h100-x4: the workspace ws-llm (resource group rg-train) has no cluster h100-x4, though "
        "the stack outputs list it: the stack is not deployed or the cluster was deleted; run `pulumi up`, "
        "then `python -m jobs check-deploy`"
    )
    assert json.loads(out) == {"ok": False, "error": message, "exit_code": 3, "ledger": None}
    assert err == f"error: {message}\n"
    # one call, the compute GET: no quota read, no code upload, no job
    assert [(r.method, r.url.split("?")[0].rsplit("/", 2)[-2:]) for r in transport.requests] == [
        ("GET", ["computes", "h100-x4"])
    ]


# CI-friendly progress: off a terminal, one log line per call, never wrapped at rich's 80 columns, no colour.
def test_log_lines_off_a_terminal_are_one_plain_line_each(capsys, monkeypatch):
    from jobs.progress import PlainLog, stderr_console

    monkeypatch.delenv("FORCE_COLOR", raising=False)
    console = stderr_console()
    assert isinstance(console, PlainLog)
    long = "smoke h100-x4-0123: Running; waiting for nodes: " + "cluster h100-x4: allocation Resizing; " * 5
    console.log(long.strip(), markup=False)
    console.log("[bold]2[/bold] nodes 0/2")
    console.log("[not markup] 0/2", markup=False)
    with console.status("waiting"):
        pass
    lines = capsys.readouterr().err.splitlines()
    assert [re.sub(r"^\[\d\d:\d\d:\d\d\] ", "", line) for line in lines] == [
        long.strip(),
        "2 nodes 0/2",
        "[not markup] 0/2",
    ]
    assert all("\x1b" not in line for line in lines)


def test_force_color_keeps_rich_terminal_output(monkeypatch):
    from rich.console import Console

    from jobs.progress import PlainLog, stderr_console

    monkeypatch.setenv("FORCE_COLOR", "1")
    console = stderr_console()
    assert isinstance(console, Console) and not isinstance(console, PlainLog)

"""The flags `render`, `submit` and `run` share (jobs/jobargs.py): one flag name per concept
(--processes-per-node, with --procs-per-node a deprecated alias), and the note a smoke job capped below its
default shape prints (`shape_notes`)."""

from __future__ import annotations

import json

import pytest

from jobs.cli import build_parser, main

from .jobs_util import FIXTURES


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


# Silent acceptances closed: a capped smoke job says so.


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

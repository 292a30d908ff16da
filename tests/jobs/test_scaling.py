"""`python -m jobs scaling`: the scaling efficiency of a 1-node / 2-node pair (jobs/scaling/efficiency.py)
from train.py's metrics records in the runs' rank logs, its refusals, and each run checked against a plan's
rate."""

from __future__ import annotations

import json

import pytest

from jobs.cli import main

from .ranklogs_util import train_log


def test_efficiency_from_two_runs(tmp_path, capsys):
    one = train_log(tmp_path / "one", 8, [2000, 10000, 10000, 10000])  # first report is warm-up
    two = train_log(tmp_path / "two", 16, [1500, 9000, 9200, 9100])
    assert main(["scaling", str(one), str(two), "--json"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["one_node"]["throughput"] == 80000 and s["two_nodes"]["throughput"] == 16 * 9100
    assert s["efficiency"] == pytest.approx(9100 / 10000)
    assert s["ok"] is True


def test_poor_scaling_points_at_the_transport(tmp_path, capsys):
    one = train_log(tmp_path / "one", 8, [10000, 10000, 10000])
    two = train_log(tmp_path / "two", 16, [6500, 6500, 6500])  # 1.3x: the seed's bad case
    assert main(["scaling", str(one), str(two)]) == 1
    out = capsys.readouterr().out
    assert "efficiency 0.65" in out and "communication is the bottleneck" in out and "jobs verify" in out


def test_efficiency_exactly_at_the_threshold_passes(tmp_path, capsys):
    one = train_log(tmp_path / "one", 8, [10000, 10000, 10000])
    two = train_log(tmp_path / "two", 16, [7500, 7500, 7500])  # 1.5x: efficiency 0.75, the threshold
    assert main(["scaling", str(one), str(two), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["efficiency"] == 0.75


def test_scaling_refuses_logs_without_throughput(tmp_path, capsys):
    (tmp_path / "a" / "user_logs").mkdir(parents=True)
    (tmp_path / "a" / "user_logs" / "std_log_process_0.txt").write_text("hello\n")
    assert main(["scaling", str(tmp_path / "a"), str(tmp_path / "a")]) == 2
    assert "no `train.step` metrics record" in capsys.readouterr().err
    assert main(["scaling", str(tmp_path / "a")]) == 2


def test_throughput_and_world_size_come_from_the_records_not_the_prose(tmp_path, capsys):
    """The human lines are for people: a header claiming another world size changes nothing, and a log
    with the human lines but no records is refused rather than parsed."""
    one = train_log(tmp_path / "one", 8, [10000, 10000, 10000], prose_world=99)
    two = train_log(tmp_path / "two", 16, [9000, 9000, 9000], prose_world=99)
    assert main(["scaling", str(one), str(two), "--json"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert (s["one_node"]["world_size"], s["two_nodes"]["world_size"]) == (8, 16)
    assert s["two_nodes"]["samples"] == 2 and s["efficiency"] == pytest.approx(0.9)
    log0 = two / "artifacts" / "user_logs" / "std_log_process_0.txt"
    log0.write_text("".join(line + "\n" for line in log0.read_text().splitlines() if "{" not in line))
    assert main(["scaling", str(one), str(two)]) == 2
    assert "rank 0's log has no `train.step` metrics record" in capsys.readouterr().err


def test_a_record_of_another_version_is_refused_naming_the_line(tmp_path, capsys):
    one = train_log(tmp_path / "one", 8, [10000, 10000, 10000])
    two = train_log(tmp_path / "two", 16, [9000, 9000, 9000])
    log0 = two / "artifacts" / "user_logs" / "std_log_process_0.txt"
    log0.write_text(log0.read_text().replace('"v": 1,', '"v": 2,', 1))
    assert main(["scaling", str(one), str(two)]) == 2
    err = capsys.readouterr().err
    assert "std_log_process_0.txt line 3: a train.step record of version 2; this reader knows 1" in err


def test_two_runs_fewer_than_three_records_use_them_all(tmp_path, capsys):
    one = train_log(tmp_path / "one", 8, [5000, 10000])  # two records: no warm-up dropped
    two = train_log(tmp_path / "two", 16, [5000, 10000])
    assert main(["scaling", str(one), str(two), "--json"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["one_node"]["tokens_per_gpu_s"] == 7500 and s["one_node"]["samples"] == 2


def test_world_size_mismatch_is_bad_input_with_only_that_message(tmp_path, capsys):
    one = train_log(tmp_path / "one", 8, [10000, 10000, 10000])
    two = train_log(tmp_path / "two", 8, [6500, 6500, 6500])  # "2-node" run with 1 node's GPUs
    assert main(["scaling", str(one), str(two)]) == 2
    captured = capsys.readouterr()
    assert "world sizes 8" in captured.err and "twice the GPUs" in captured.err
    assert "bottleneck" not in captured.err + captured.out and captured.out == ""


def test_scaling_checks_each_run_against_the_plans_rate(tmp_path, capsys):
    one = train_log(tmp_path / "one", 8, [9000, 9000, 9000])
    two = train_log(tmp_path / "two", 16, [6000, 6000, 6000])
    plan_file = tmp_path / "plan.json"
    assert main(["plan", "--tokens", "2e9", "--tokens-per-gpu-s", "8200", "--gpus", "16", "--json"]) == 0
    plan_file.write_text(capsys.readouterr().out)
    assert (
        main(["scaling", str(one), str(two), "--plan", str(plan_file), "--json"]) == 1
    )  # 0.67: scaling fails
    s = json.loads(capsys.readouterr().out)
    assert [(t["measured_tokens_per_gpu_s"], t["within"]) for t in s["throughput"]] == [
        (9000, True),
        (6000, False),
    ]
    assert s["throughput"][1]["expected_tokens_per_gpu_s"] == 8200
    assert main(["scaling", str(one), str(two), "--expect-tokens-per-gpu-s", "8200"]) == 1
    out = capsys.readouterr().out
    assert "tokens/s per GPU: 6,000 measured, 8,200 planned (-27%, beyond 20%)" in out
    assert "input pipeline stalls" in out and "TCP fallback" in out

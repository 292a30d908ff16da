"""`python -m jobs verify`: its --json document and exit codes on rank logs in the real formats
(tests/jobs/ranklogs_util.py), its bad input, and the first-run check against the expected rate
(--expect-tokens-per-gpu-s or --plan)."""

from __future__ import annotations

import json

import pytest

from jobs.cli import main

from .ranklogs_util import H100, nccl_socket, train_log, write_job


def test_verify_warns_on_a_slow_first_run_without_failing(tmp_path, capsys):
    logs = train_log(tmp_path / "run", 2, [5000, 5000, 5000])
    argv = ["verify", str(logs), "--expect-world-size", "2", "--allow-socket"]
    assert main([*argv, "--json"]) == 0
    assert "throughput" not in json.loads(capsys.readouterr().out)  # nothing to compare without a rate
    assert main([*argv, "--expect-tokens-per-gpu-s", "8200", "--json"]) == 0
    t = json.loads(capsys.readouterr().out)["throughput"]
    assert (t["measured_tokens_per_gpu_s"], t["within"], t["tolerance"]) == (5000, False, 0.2)
    assert main([*argv, "--expect-tokens-per-gpu-s", "8200"]) == 0
    assert "warning: " in capsys.readouterr().out


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (["--expect-tokens-per-gpu-s", "0"], "--expect-tokens-per-gpu-s 0.0: must be above 0"),
        (["--plan", "missing.json"], "--plan missing.json: no such file"),
        (["--plan", "{bad}"], "not the JSON of `python -m jobs plan --json`"),
        (
            ["--plan", "x", "--expect-tokens-per-gpu-s", "1"],
            "pass --expect-tokens-per-gpu-s or --plan, not both",
        ),
    ],
)
def test_first_run_flags_name_the_problem(tmp_path, capsys, monkeypatch, extra, needle):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "{bad}").write_text("[]")
    logs = train_log(tmp_path / "run", 2, [5000])
    assert main(["verify", str(logs), "--expect-world-size", "2", "--allow-socket", *extra]) == 2
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err


def test_cli_json_shape_and_exit_codes(tmp_path, capsys):
    write_job(tmp_path / "good", 2, 8)
    assert (
        main(["verify", str(tmp_path / "good"), "--expect-world-size", "16", "--size", H100, "--json"]) == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert {
        "world_size",
        "expected_world_size",
        "rank_logs",
        "transport",
        "transport_by_rank",
        "busbw_gbps",
        "ok",
        "problems",
    } <= out.keys()
    assert out["transport_by_rank"]["15"] == "IB"
    assert (out["busbw_gbps"], out["link_gbps_per_gpu"]) == (3640.0, 400.0)  # both Gb/s
    main(["verify", str(tmp_path / "good"), "--expect-world-size", "16", "--size", H100])
    assert "peak busbw: 3640 Gb/s (455.0 GB/s)" in capsys.readouterr().out
    write_job(tmp_path / "bad", 2, 8, transport=nccl_socket)
    assert main(["verify", str(tmp_path / "bad"), "--expect-world-size", "16"]) == 1
    assert "NOT OK" in capsys.readouterr().out


def test_cli_bad_input_exits_2(tmp_path, capsys):
    assert main(["verify", str(tmp_path / "missing"), "--expect-world-size", "16"]) == 2
    assert "LOGDIR" in capsys.readouterr().err
    assert main(["verify", str(tmp_path), "--expect-world-size", "0"]) == 2
    assert main(["verify", str(tmp_path), "--expect-world-size", "2", "--size", "Standard_Bogus"]) == 2


def test_cli_exit_2_when_no_rank_logs_below_logdir(tmp_path, capsys):
    (tmp_path / "user_logs").mkdir()
    (tmp_path / "user_logs" / "other.txt").write_text("x")
    assert main(["verify", str(tmp_path), "--expect-world-size", "16", "--json"]) == 2
    captured = capsys.readouterr()
    assert f"LOGDIR {tmp_path}: no rank logs" in captured.err
    assert json.loads(captured.out)["ok"] is False

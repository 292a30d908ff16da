"""jobs/local/launcher.py with real child processes: plain Python children (fast, no torch), so these stay
unit tests; the launcher starting torch ranks is in tests/integration/job_scripts."""

from __future__ import annotations

import json
import os
import threading
import time

from jobs.local.launcher import CANCELLED, launch, log_path, run

from ..jobs_util import PY

AZURE_VARS = {"MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "NODE_RANK", "RANK", "LOCAL_RANK"}
PRINT_ENV = "import json, os; print(json.dumps(dict(os.environ)))"


def test_each_rank_gets_exactly_azure_mls_variables_and_the_job_env(tmp_path):
    code = launch(
        [PY, "-c", PRINT_ENV],
        nodes=2,
        procs_per_node=3,
        logs_dir=tmp_path,
        env={"NCCL_DEBUG": "INFO"},
        stream_rank0=False,
    )
    assert code == 0
    parent = set(os.environ)
    ports = set()
    for rank in range(6):
        env = json.loads(log_path(tmp_path, rank).read_text())
        assert set(env) - parent - {"NCCL_DEBUG"} <= AZURE_VARS  # nothing else added (no torchrun extras)
        assert set(env) >= AZURE_VARS
        assert env["NCCL_DEBUG"] == "INFO"
        assert (env["RANK"], env["LOCAL_RANK"], env["NODE_RANK"]) == (
            str(rank),
            str(rank % 3),
            str(rank // 3),
        )
        assert env["WORLD_SIZE"] == "6" and env["MASTER_ADDR"] == "127.0.0.1"
        ports.add(env["MASTER_PORT"])
    assert len(ports) == 1 and 0 < int(ports.pop()) < 65536


def test_rank0_is_streamed_and_logs_use_azure_mls_layout(tmp_path, capfd):
    (tmp_path / "user_logs").mkdir()
    (tmp_path / "user_logs" / "std_log_process_7.txt").write_text("from an earlier 8-rank run")
    code = launch([PY, "-c", "import os; print('hello from', os.environ['RANK'])"], 1, 2, tmp_path)
    assert code == 0
    out, err = capfd.readouterr()
    assert "hello from 0" in out and "hello from 1" not in out
    assert "all 2 ranks exited 0" in err
    assert sorted(p.name for p in (tmp_path / "user_logs").iterdir()) == [
        "std_log_process_0.txt",
        "std_log_process_1.txt",
    ]
    assert log_path(tmp_path, 1).read_text() == "hello from 1\n"


def test_a_failed_rank_stops_the_others_and_is_named(tmp_path, capfd):
    script = (
        "import os, sys, time\n"
        "if os.environ['RANK'] == '1': print('boom', flush=True); sys.exit(7)\n"
        "time.sleep(60)\n"
    )
    t0 = time.monotonic()
    result = run([PY, "-c", script], 2, 2, tmp_path, stream_rank0=False, grace_s=5)
    assert time.monotonic() - t0 < 20
    assert result.exit_code == 7 and result.failed_rank == 1
    assert result.rank_exit_codes[1] == 7
    assert all(result.rank_exit_codes[r] == 143 for r in (0, 2, 3))  # SIGTERM
    err = capfd.readouterr().err
    assert f"rank 1 exited with code 7; see {log_path(tmp_path, 1)}" in err


def test_a_rank_ignoring_sigterm_is_killed_after_the_grace_period(tmp_path):
    script = (
        "import os, signal, sys, time\n"
        "if os.environ['RANK'] == '0': time.sleep(0.5); sys.exit(3)\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN); print('ignoring', flush=True); time.sleep(60)\n"
    )
    t0 = time.monotonic()
    result = run([PY, "-c", script], 1, 2, tmp_path, stream_rank0=False, grace_s=1.0)
    assert result.exit_code == 3 and result.rank_exit_codes[1] == 137  # SIGKILL
    assert time.monotonic() - t0 < 15


def test_stop_event_cancels_every_rank_with_a_distinct_code(tmp_path):
    stop = threading.Event()
    threading.Timer(1.0, stop.set).start()
    t0 = time.monotonic()
    result = run(
        [PY, "-c", "import time; time.sleep(60)"],
        2,
        1,
        tmp_path,
        stream_rank0=False,
        stop_event=stop,
        grace_s=5,
    )
    assert result.exit_code == CANCELLED and result.cancelled
    assert set(result.rank_exit_codes.values()) == {143}
    assert time.monotonic() - t0 < 15

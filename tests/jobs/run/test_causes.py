"""Why a job ended and whether a resubmit can help (jobs/run/causes.py `classify`), from the texts Azure ML
and the job scripts really print, and the evidence line a cause names. The loop that acts on it runs end to
end against localml in tests/integration/e2e/test_runs_drills.py."""

from __future__ import annotations

import pytest

from jobs.run.causes import classify

from ..runs_util import SIGTERM, TRACEBACK

PREEMPTED = (
    "UserError: AzureMLCompute job failed. PreemptionError: Nodes of this job got pre-empted. Check "
    "if the run has failed or restarted. Reason: Received pre-emption warning signal"
)
LOST = (
    "rank 0: error: lost a peer: a collective failed "
    "([../third_party/gloo/gloo/transport/tcp/pair.cc:537] Connection closed by peer [127.0.0.1]:4321); "
    "another rank died or hung"
)
SIGTERMED = (
    "rank 1: interrupted by signal 15 after step 120/400 (checkpoint step 120 written to /ckpt); "
    "exiting 143: the run did NOT complete, resubmit to resume"
)


@pytest.mark.parametrize(
    ("status", "error", "logs", "cause", "retry"),
    [
        ("Completed", None, {}, "completed", False),
        ("Canceled", None, {0: SIGTERMED}, "canceled", False),
        (
            "Paused",
            None,
            {0: SIGTERMED},
            "paused",
            False,
        ),  # JobStatus PAUSED: terminal, not an infrastructure cause
        ("Failed", PREEMPTED, {}, "preempted", True),
        ("Failed", PREEMPTED, {0: TRACEBACK}, "preempted", True),  # the service's reason outranks the logs
        ("NotResponding", None, {}, "not-responding", True),
        (
            "Failed",
            "UserError: command exited with code 1",
            {
                0: "[Rank 0] Watchdog caught collective operation "
                "timeout: WorkNCCL(SeqNum=7, OpType=ALLREDUCE)"
            },
            "nccl-timeout",
            True,
        ),
        ("Failed", None, {0: LOST, 1: ""}, "node-lost", True),
        ("Failed", None, {0: LOST, 1: SIGTERMED}, "node-lost", True),  # the launcher SIGTERMed the survivor
        ("Failed", None, {0: TRACEBACK, 1: SIGTERMED}, "user-error", False),
        ("Failed", None, {0: SIGTERMED, 1: SIGTERMED}, "interrupted", True),
        (
            "Failed",
            "UserError: command exited with code 2",
            {0: "train.py: error: --data x: no *.bin token shards there"},
            "user-error",
            False,
        ),
    ],
)
def test_classify(status, error, logs, cause, retry):
    got = classify(status, error, logs)
    assert (got.name, got.retry) == (cause, retry), got


def test_evidence_names_the_rank_and_line():
    got = classify("Failed", None, {0: "x\n" + SIGTERMED, 1: "y\n" + LOST + "\nz"})
    assert got.evidence.startswith("rank 1: rank 0: error: lost a peer")


# --- the evidence a cause names ---------------------------------------------------------------------------


def test_the_evidence_is_exactly_the_matching_line_with_its_rank():
    from jobs.run.causes import classify

    middle = classify("Failed", None, {0: "", 3: "step 5\n" + TRACEBACK + "\nmore"})
    assert middle.evidence == "rank 3: Traceback (most recent call last):"
    last = classify("Failed", None, {2: "step 5\n" + SIGTERM.format(step=5)})  # last line, no newline
    assert last.evidence == "rank 2: " + SIGTERM.format(step=5)


def test_the_evidence_of_a_long_line_is_cut_to_300_characters():
    from jobs.run.causes import classify

    got = classify("Failed", None, {0: SIGTERM.format(step=5) + " " + "x" * 400})
    assert got.evidence == "rank 0: " + (SIGTERM.format(step=5) + " " + "x" * 400)[:300]


def test_no_logs_folder_reads_as_no_logs(tmp_path):
    from jobs.run.causes import read_logs

    assert read_logs(None) == {} and read_logs(tmp_path / "absent") == {}
    got = read_logs(tmp_path)
    assert got == {}


def _rank_logs(root, texts: dict[int, str]):
    logs = root / "artifacts" / "user_logs"
    logs.mkdir(parents=True)
    for rank, text in texts.items():
        (logs / f"std_log_process_{rank:02d}.txt").write_text(text)
    return logs


MISSING = (
    "azml-gpu rank=3 local_rank=1 node_rank=1 world_size=4 host=node-b\n"
    "Traceback (most recent call last):\n"
    '  File "<frozen runpy>", line 198, in _run_module_as_main\n'
    '  File "/mnt/code/train.py", line 4, in <module>\n'
    "    import torchtitan\n"
    "ModuleNotFoundError: No module named 'torchtitan'\n"
)


def test_a_failed_jobs_cause_is_the_failing_ranks_last_frame_and_message(tmp_path):
    from jobs.run.causes import failure, failure_lines

    logs = _rank_logs(tmp_path, {0: "step 1\n" + SIGTERMED, 1: LOST + "\n" + TRACEBACK, 3: MISSING})
    got = failure(tmp_path, 2)
    assert got == {
        "rank": 3,  # rank 1's traceback follows a lost peer: a consequence, not the cause
        "node": 1,
        "host": "node-b",
        "frame": 'File "/mnt/code/train.py", line 4, in <module>: import torchtitan',
        "message": "ModuleNotFoundError: No module named 'torchtitan'",
        "log": str(logs / "std_log_process_03.txt"),
    }
    assert failure_lines(got) == [
        "cause: rank 3 (node 1, host node-b): ModuleNotFoundError: No module named 'torchtitan'",
        '  at File "/mnt/code/train.py", line 4, in <module>: import torchtitan',
        f"  log: {logs / 'std_log_process_03.txt'}",
    ]


def test_without_a_rank_line_the_node_is_the_rank_over_processes_per_node(tmp_path):
    from jobs.run.causes import failure

    _rank_logs(tmp_path, {5: "x\n" + TRACEBACK + "\n"})
    got = failure(tmp_path, 4)
    assert (got["rank"], got["node"], got["host"]) == (5, 1, None)
    assert got["message"] == "ZeroDivisionError: division by zero"
    assert got["frame"] == 'File "train.py", line 3'


def test_only_consequences_then_the_first_is_named_and_no_traceback_is_none(tmp_path):
    from jobs.run.causes import failure

    _rank_logs(tmp_path / "a", {2: LOST + "\n" + TRACEBACK, 1: LOST + "\n" + TRACEBACK})
    assert failure(tmp_path / "a", 8)["rank"] == 1
    _rank_logs(tmp_path / "b", {0: SIGTERMED, 1: "exit 1"})
    assert failure(tmp_path / "b", 8) is None
    assert failure(None, 8) is None and failure(tmp_path / "none", 8) is None


def test_the_last_traceback_of_a_log_is_the_one_named(tmp_path):
    from jobs.run.causes import failure

    first = 'Traceback (most recent call last):\n  File "a.py", line 1, in f\n    g()\nKeyError: 1\n'
    _rank_logs(tmp_path, {0: first + "retrying\n" + TRACEBACK})
    assert failure(tmp_path, 1)["message"] == "ZeroDivisionError: division by zero"

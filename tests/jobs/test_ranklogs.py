"""jobs/ranklogs.py, the one reader of rank logs: its log-line patterns against the lines the job scripts and
torch print (the world size, smoke.py's rank line, the host, and prose that names none), which files are a
job's rank logs, their text, and train.py's metrics records read back."""

from __future__ import annotations

import pytest

from jobs import ranklogs
from jobs.errors import UsageError

from .ranklogs_util import GLOO_HOSTNAME_WARNING


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
    m = ranklogs.WORLD_SIZE.search(line)
    assert (int(m.group(1)) if m else None) == world


def test_smoke_rank_line_patterns():
    line = "smoke rank=3 local_rank=1 node_rank=1 world_size=4 host=node-1 device=cuda:1"
    assert ranklogs.RANK.search(line).group(1) == "3"  # not local_rank or node_rank
    assert ranklogs.NODE_RANK.search(line).group(1) == "1"
    assert ranklogs.HOST.search(line).group(1) == "node-1"
    assert ranklogs.PEAK_BUSBW.search("smoke peak busbw: 12.75 GB/s").group(1) == "12.75"


@pytest.mark.parametrize(
    "line, host",
    [("host=10f2c1a0000000", "10f2c1a0000000"), ("hostname: node-1", "node-1"), ("host = a.b", "a.b")],
)
def test_host_forms_a_script_prints(line, host):
    from jobs import ranklogs

    m = ranklogs.HOST.search(f"smoke rank=0 {line}")
    assert m is not None and m.group(1) == host


@pytest.mark.parametrize(
    "prose", [GLOO_HOSTNAME_WARNING, "could not reach host after 3 tries", "hostname to x"]
)
def test_prose_names_no_host(prose):
    from jobs import ranklogs

    assert ranklogs.HOST.search(prose) is None


def _log(root, rel: str, text: str = "x\n") -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_rank_logs_are_every_rank_of_the_newest_attempt_whatever_the_padding(tmp_path):
    # Azure ML pads the rank (`_0`, `_00`) and writes a retried job's attempts under user_logs/retry_NNN/.
    _log(tmp_path, "artifacts/user_logs/std_log_process_00.txt")
    _log(tmp_path, "artifacts/user_logs/std_log_process_01.txt")
    _log(tmp_path, "artifacts/user_logs/retry_001/std_log_process_0.txt")
    _log(tmp_path, "artifacts/user_logs/retry_002/std_log_process_00.txt")
    _log(tmp_path, "artifacts/user_logs/retry_002/std_log_process_01.txt")
    logs, attempt = ranklogs.rank_logs(tmp_path)
    assert attempt == 2
    assert {r: p.relative_to(tmp_path).as_posix() for r, p in logs.items()} == {
        0: "artifacts/user_logs/retry_002/std_log_process_00.txt",
        1: "artifacts/user_logs/retry_002/std_log_process_01.txt",
    }


def test_rank_logs_of_a_first_attempt_are_attempt_0_and_other_files_are_not_rank_logs(tmp_path):
    _log(tmp_path, "user_logs/std_log_process_1.txt")
    _log(tmp_path, "user_logs/std_log_process_0.txt")
    _log(tmp_path, "std_log_process_2.txt")  # not below user_logs/
    _log(tmp_path, "user_logs/std_log_process_x.txt")  # no rank
    logs, attempt = ranklogs.rank_logs(tmp_path)
    assert (list(logs), attempt) == ([0, 1], 0)  # in rank order
    assert ranklogs.rank_logs(tmp_path / "user_logs" / "none") == ({}, 0)


def test_a_log_with_bytes_that_are_not_utf8_still_reads(tmp_path):
    path = tmp_path / "std_log_process_0.txt"
    path.write_bytes(b"step 1\n\xff\xfe partial write\n")
    assert ranklogs.read(path) == "step 1\n\ufffd\ufffd partial write\n"


def test_a_metrics_record_this_reader_cannot_read_names_the_log_and_line():
    record = '{"record": "train.step", "v": 999}'
    with pytest.raises(UsageError, match=r"^rank0\.txt line 2: a train.step record of version 999; "):
        ranklogs.records(f"model 1.23M params\n{record}\n", "rank0.txt")
    assert ranklogs.records("no records here\n") == []

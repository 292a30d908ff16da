"""The log-line patterns of jobs/ranklogs.py against the lines the job scripts and torch print: the world
size, smoke.py's rank line, the host, and prose that names none."""

from __future__ import annotations

import pytest

from jobs import ranklogs

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

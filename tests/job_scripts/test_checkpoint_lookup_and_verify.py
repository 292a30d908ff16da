"""checkpointing.py's reading side at its edges: a stale listing's hidden steps found by name, a marker
without a step, a shard short by one byte, and the text of a failed rank.

A blob mount's listing on one node may lack the files another node wrote since it listed (blobfuse2
component/attr_cache/attr_cache.go caches a directory's listing; a name never asked about goes to storage,
GetAttr on a miss). test_job_scripts_blobmount.py shows both on the FUSE double; here a listing that hides
given names stands for the cached one, so each boundary of the lookup is one fast case.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch
import torch.distributed.checkpoint as dcp
from jobscripts_util import SRC
from torch.distributed.checkpoint.api import CheckpointException, _wrap_exception

sys.path.insert(0, str(SRC))
import checkpointing as ck  # noqa: E402


def committed(folder: Path, steps) -> None:
    for s in steps:
        (folder / ck.step_name(s)).mkdir(parents=True)
        ck.write_commit(folder / ck.step_name(s), {"step": s})


@pytest.fixture
def stale_listing(monkeypatch):
    """hide(folder, steps): listing `folder` omits those step folders; looking them up by name still works."""
    real = Path.iterdir
    hidden: dict[Path, set[str]] = {}

    def iterdir(self):
        return (p for p in real(self) if p.name not in hidden.get(self, set()))

    monkeypatch.setattr(Path, "iterdir", iterdir)

    def hide(folder: Path, steps) -> None:
        hidden.setdefault(folder, set()).update(ck.step_name(s) for s in steps)

    return hide


def found(folder: Path, probe) -> list[int]:
    return [s for s, _ in ck.list_steps(folder, probe)]


def test_hidden_steps_newer_than_the_listing_are_found_by_name_up_to_the_lookahead(tmp_path, stale_listing):
    """The listing shows step 10; the next PROBE_AHEAD scheduled steps are hidden and all found, the newest
    included (the lookup starts after the newest listed step, not at it)."""
    window = ck.PROBE_AHEAD
    hidden = [10 * (i + 2) for i in range(window)]  # 20, 30, ...
    committed(tmp_path, [10, *hidden])
    stale_listing(tmp_path, hidden)
    assert found(tmp_path, range(10, 10 * (window + 5), 10)) == sorted([10, *hidden], reverse=True)


def test_the_lookup_starts_after_the_newest_listed_step_not_the_oldest(tmp_path, stale_listing):
    """Listed 10..50, hidden 60..100: the scheduled steps after 50 are looked up, so 100 is found; starting
    after the oldest listed (10) would spend the lookups on 20..90 and miss 100."""
    committed(tmp_path, range(10, 101, 10))
    stale_listing(tmp_path, range(60, 101, 10))
    assert found(tmp_path, range(10, 101, 10)) == list(range(100, 9, -10))


def test_scheduled_steps_never_written_are_not_listed_and_give_no_warning(tmp_path):
    """A run of 100 steps saving every 10 was killed after step 20: 30..100 are looked up, none is there."""
    committed(tmp_path, [10, 20])
    assert found(tmp_path, range(10, 101, 10)) == [20, 10]
    warnings: list[str] = []
    assert ck.choose(tmp_path, log=warnings.append, probe=range(10, 101, 10)) is None  # no DCP files here
    assert warnings == [
        f"warning: skipping incomplete checkpoint {tmp_path / ck.step_name(s)}: "
        "commit.json is there but DCP's .metadata is not"
        for s in (20, 10)
    ]


def test_the_manager_looks_up_its_last_step_when_it_is_off_the_interval(tmp_path, stale_listing):
    """--steps 101, --ckpt-every 10: step 100 is scheduled (and 101, the last). The listing shows 90 only;
    the resume must find 100 by name."""
    for s in (90, 100):
        mgr = ck.CheckpointManager(tmp_path, interval=10, keep=5, total_steps=101, async_=False)
        model = torch.nn.Linear(2, 2)
        mgr.track(model, torch.optim.SGD(model.parameters(), lr=0.1), config={})
        assert mgr.maybe_save(s)
    stale_listing(tmp_path, [100])
    again = ck.CheckpointManager(tmp_path, interval=10, keep=5, total_steps=101)
    assert again.latest()["step"] == 100


@pytest.mark.parametrize("text", ['{"world_size": 2, "total_steps": 100}', '["step"]', "{}"])
def test_a_marker_without_a_step_is_unreadable_and_the_previous_step_is_used(tmp_path, text):
    committed(tmp_path, [10, 20])
    (tmp_path / "step_00000020" / "commit.json").write_text(text)
    assert ck.read_commit(tmp_path / "step_00000020") is None
    assert ck.verify(tmp_path / "step_00000020") == "commit.json is unreadable"


def save(folder: Path, state: dict) -> Path:
    """One committed step as CheckpointManager writes it: DCP through BlobWriter, then the marker."""
    dcp.save(state, storage_writer=ck.BlobWriter(folder), no_dist=True)
    ck.write_commit(folder, {"step": 1})
    return folder / "__0_0.distcp"


def test_a_shard_one_byte_short_is_truncated_and_a_whole_one_is_complete(tmp_path):
    """DCP's metadata records each item's byte range (offset, length); the shard must reach the end of
    the last one. Exactly that size is complete; one byte less is not."""
    shard = save(tmp_path / "s", {"w": torch.arange(1000, dtype=torch.float32), "b": torch.ones(7)})
    size = shard.stat().st_size
    assert size >= 1007 * 4 and ck.verify(tmp_path / "s") is None
    shard.write_bytes(shard.read_bytes()[:-1])
    assert ck.verify(tmp_path / "s") == f"shard __0_0.distcp is truncated ({size - 1} of {size} bytes)"


def test_a_failed_save_names_each_failed_rank_in_rank_order_without_stacks():
    """DCP's CheckpointException (torch/distributed/checkpoint/api.py) maps rank -> (exception, stack)."""
    try:
        raise OSError(5, "Input/output error")
    except OSError as e:
        io = _wrap_exception(e)
    e = CheckpointException("save failed", {3: (ValueError("bad plan"), None), 1: io})
    assert ck.failure_text(e) == "rank 1: OSError: [Errno 5] Input/output error; rank 3: ValueError: bad plan"


def test_a_failure_without_per_rank_failures_is_its_type_and_message():
    """No rank recorded (an empty mapping), or a `failures` of another shape: the exception itself."""
    empty = CheckpointException("save failed", {})
    assert ck.failure_text(empty) == f"CheckpointException: {empty}"
    other = RuntimeError("three writers failed")
    other.failures = ["w1", "w2", "w3"]  # type: ignore[attr-defined]
    assert ck.failure_text(other) == "RuntimeError: three writers failed"
    assert (
        ck.failure_text(OSError(28, "No space left on device"))
        == "OSError: [Errno 28] No space left on device"
    )

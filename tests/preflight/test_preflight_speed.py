"""What the gate does for speed and must not change: the garbage-collector settings around a program run
(preflight/gctuning.py) and the pack's channel setup (no connectivity-polling thread)."""

from __future__ import annotations

import gc

import grpc
import pytest

from preflight.analyzer import PolicyPack
from preflight.gctuning import POSTPONED_THRESHOLD, postponed_full_collections
from preflight.program import run_program


def test_full_collections_are_postponed_inside_and_restored_after() -> None:
    before = gc.get_threshold()
    with postponed_full_collections():
        inside = gc.get_threshold()
    assert inside == (before[0], before[1], max(before[2], POSTPONED_THRESHOLD))
    assert gc.get_threshold() == before


def test_thresholds_are_restored_when_the_block_raises() -> None:
    before = gc.get_threshold()
    with pytest.raises(RuntimeError), postponed_full_collections():
        raise RuntimeError("boom")
    assert gc.get_threshold() == before


def test_run_program_leaves_the_thresholds_as_it_found_them() -> None:
    before = gc.get_threshold()
    assert run_program("dev").ok
    assert gc.get_threshold() == before


def test_pack_connects_without_channel_ready_future(monkeypatch: pytest.MonkeyPatch) -> None:
    """channel_ready_future starts a thread that polls every 0.2 s, and channel.close() waits for it;
    the first call waits for readiness instead (wait_for_ready)."""

    def refuse(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("grpc.channel_ready_future must not be used")

    monkeypatch.setattr(grpc, "channel_ready_future", refuse)
    with PolicyPack("azml-gpu", "fixtures") as pack:
        assert "quota-reservation" in pack.policies()

"""Planning a training run on its own (jobs/plan/runplan.py): the Young/Daly checkpoint interval and goodput,
the low-priority pool, partial nodes, expensive checkpoints, and whether a model fits at each GPU's memory."""

from __future__ import annotations

import math

import pytest

from jobs.plan.runplan import plan, young_daly


def test_low_priority_plan_draws_on_the_regional_low_priority_pool():
    p = plan(2e9, 8200, 16, size="Standard_ND96isr_H100_v5", region="eastus", tier="low_priority")
    assert [(q["kind"], q["vcpus"]) for q in p.quota] == [("low-priority", 192)]


def test_young_daly_interval_and_goodput():
    c = young_daly(60, 24)
    assert c.interval_seconds == pytest.approx(math.sqrt(2 * 60 * 24 * 3600))  # 3220 s
    assert 1 - c.expected_goodput == pytest.approx(math.sqrt(2 * 60 / (24 * 3600)))  # waste at the optimum
    # a shorter or longer interval than the optimum loses more
    for tau in (c.interval_seconds / 2, c.interval_seconds * 2):
        assert 60 / tau + tau / (2 * 24 * 3600) > 1 - c.expected_goodput


def test_partial_nodes_are_noted():
    p = plan(1e9, 1000, 12, size="Standard_ND96isr_H100_v5")
    assert p.nodes == 2 and "4 GPU(s) idle" in p.notes[0]


def test_expensive_checkpoints_are_noted_not_silent():
    p = plan(1e9, 8200, 16, checkpoint_seconds=900, mtbf_hours=1)
    assert p.checkpointing.expected_goodput < 0.5
    assert any("checkpointing loses" in n for n in p.notes)


@pytest.mark.parametrize(
    ("gib", "fits_ddp", "fits_fsdp", "use"),
    [
        (16.0, True, True, "ddp"),  # exactly the replicated states: fits
        (16.0 - 1e-9, False, True, "fsdp"),  # just below
        (8.0, False, True, "fsdp"),  # exactly half: FSDP over 2 fits
        (8.0 - 1e-9, False, False, None),  # just below half: nothing fits
    ],
)
def test_fit_boundaries_at_the_gpus_memory(gib, fits_ddp, fits_fsdp, use):
    """2**30 parameters x 16 bytes = 16 GiB of states; over 2 GPUs, 8 GiB each."""
    p = plan(1e9, 1000, 2, params=2**30, gpu_memory_gib=gib)
    assert (p.memory.fits_ddp, p.memory.fits_fsdp, p.memory.use) == (fits_ddp, fits_fsdp, use)
    assert (p.memory.ddp_gib_per_gpu, p.memory.fsdp_gib_per_gpu) == (16.0, 8.0)
    assert any("exceed a GPU's" in n for n in p.notes) is (use is None)


def test_one_gpu_shards_nothing():
    p = plan(1e9, 1000, 1, params=2**30, gpu_memory_gib=80)
    assert p.memory.fsdp_gib_per_gpu == p.memory.ddp_gib_per_gpu == 16.0 and p.memory.use == "ddp"

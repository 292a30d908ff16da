"""The first run checked against the plan's rate (jobs/scaling/efficiency.py `first_run`): within 20 percent
either way passes, beyond it warns with the usual causes."""

from __future__ import annotations

import pytest

# ----------------------------------------------------------------------------- first run against the plan


@pytest.mark.parametrize(
    ("measured", "within", "said"),
    [
        (8000, True, None),  # exactly 20 % below: within the seed's "about 20 percent"
        (7999, False, "20% below the plan's 10,000 (more than 20%); the usual causes are not the GPUs"),
        (12000, True, None),  # exactly 20 % above
        (12001, False, "20% above the plan's 10,000 (more than 20%): the plan's hours and cost are too high"),
        (10000, True, None),
    ],
)
def test_first_run_check_at_and_beyond_20_percent(measured, within, said):
    from jobs.scaling.efficiency import Run, first_run

    c = first_run(Run("logs", 16, float(measured), 5), 10000.0)
    assert c.within is within and c.deviation == pytest.approx((measured - 10000) / 10000)
    assert [said in w for w in c.warnings] == ([] if said is None else [True])
    if measured < 8000:
        assert "input pipeline stalls" in c.warnings[0] and "TCP fallback" in c.warnings[0]

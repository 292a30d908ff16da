"""Read train.py's metrics records (jobs/payload/metrics.py) back from a rank log: the reader side of the
record.

jobs/payload stays self-contained (it is what Azure ML uploads), so the record is defined there and only read
here; `scaling` and `verify` take throughput and world size from these records, not from the prose line.
"""

from __future__ import annotations

from jobs.errors import UsageError
from jobs.payload.metrics import RECORD, StepMetrics

__all__ = ["RECORD", "StepMetrics", "records"]


def records(text: str, source: str = "log") -> list[StepMetrics]:
    """Every metrics record in `text`, in order. A record this reader cannot read is bad input."""
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        try:
            rec = StepMetrics.from_line(line)
        except ValueError as e:
            raise UsageError(f"{source} line {n}: {e}; use the jobs package of its version") from None
        if rec is not None:
            out.append(rec)
    return out

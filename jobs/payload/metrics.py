"""The training metrics record: one JSON line per log step on rank 0's stdout. Importable alone.

    {"record": "train.step", "v": 1, "step": 20, "steps": 50, "loss": 5.1034, "step_ms": 80.1,
     "tokens_per_s_per_gpu": 12345.6, "mfu": 0.41, "world_size": 16, "lr": 0.00095}

train.py prints it next to the human line `StepMetrics.text()` renders from the same values; `python -m
jobs scaling` and `jobs verify` read it back with `StepMetrics.from_line` (jobs/ranklogs.py), so the
contract between the job and its readers is this dataclass, not a printed f-string. A reader accepts
only VERSION: a change of a field's name, type or unit bumps it (docs/job-scripts.md "Metrics record").
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from typing import Any

RECORD = "train.step"
VERSION = 1


@dataclass(frozen=True)
class StepMetrics:
    step: int  # optimizer steps done, counted from 0 of the whole run (a resume continues the count)
    steps: int  # --steps: the run's total
    loss: float  # training loss of this step, mean over ranks (nats per token)
    step_ms: float  # wall-clock milliseconds per optimizer step since the previous record
    tokens_per_s_per_gpu: float  # tokens per second per rank over the same interval
    mfu: float | None  # model FLOPs utilisation as a fraction (0.41 = 41%); None without a peak
    world_size: int  # ranks in the run
    lr: float  # learning rate of this step

    def to_line(self) -> str:
        return json.dumps({"record": RECORD, "v": VERSION, **asdict(self)}, separators=(", ", ": "))

    def text(self) -> str:
        """The human line: `step 20/50 | loss 5.1034 | 80.1 ms/step | tok/s/gpu 12,346 | mfu 41.0%`."""
        mfu = f"{100 * self.mfu:.1f}%" if self.mfu is not None else "n/a"
        return (
            f"step {self.step}/{self.steps} | loss {self.loss:.4f} | {self.step_ms:.1f} ms/step | "
            f"tok/s/gpu {self.tokens_per_s_per_gpu:,.0f} | mfu {mfu}"
        )

    def scalars(self) -> dict[str, float]:
        """The values an experiment tracker (MLflow) charts per step."""
        out = {"loss": self.loss, "tokens_per_s_per_gpu": self.tokens_per_s_per_gpu, "lr": self.lr}
        return out | ({"mfu": self.mfu} if self.mfu is not None else {})

    @classmethod
    def from_line(cls, line: str) -> StepMetrics | None:
        """The record on `line`, or None when the line is not one. Raises ValueError for a record of
        another version or with missing fields: a reader must not guess at a contract it does not know."""
        start = line.find('{"record": "' + RECORD + '"')
        if start < 0:  # anything before the JSON (a log prefix) is ignored
            return None
        try:
            obj: Any = json.loads(line[start:])
        except json.JSONDecodeError as e:
            raise ValueError(f"a {RECORD} record that is not JSON ({e.msg}): {line.strip()[:200]}") from None
        if obj.get("v") != VERSION:
            raise ValueError(f"a {RECORD} record of version {obj.get('v')!r}; this reader knows {VERSION}")
        names = [f.name for f in fields(cls)]
        missing = [n for n in names if n not in obj]
        if missing:
            raise ValueError(f"a {RECORD} record without {', '.join(missing)}: {line.strip()[:200]}")
        return cls(**{n: obj[n] for n in names})

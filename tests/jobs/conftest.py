"""Import path for the tests of jobs/ (this folder and every folder below it): jobs/payload, so the job
scripts' modules are imported by their basename (`import healthparse`), as Azure ML runs them (the uploaded
folder is the working directory). The shared helpers are this package's modules, imported relatively."""

from __future__ import annotations

import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "jobs" / "payload"
if str(SRC) not in sys.path:
    sys.path.insert(0, str(SRC))

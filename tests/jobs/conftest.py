"""Import paths for the tests of jobs/ (this folder and every folder below it).

- jobs/src: the job scripts' modules are imported by their basename (`import healthparse`), as Azure ML runs
  them (the uploaded folder is the working directory).
- this folder: the helper modules the tests below it share (`jobs_util`, `jobs_azure_fakes`, ...), found by
  basename from any subfolder, whatever pytest's import mode.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
for folder in (HERE.parents[1] / "jobs" / "src", HERE):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

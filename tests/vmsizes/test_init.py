"""The package as a whole (vmsizes/__init__.py and every module it imports): the policy pack imports vmsizes
from a virtualenv holding only pulumi, pulumi-policy and PyYAML."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# A finder that refuses every top-level import outside the standard library, PyYAML and vmsizes itself.
PROBE = """
import sys

ALLOWED = set(sys.stdlib_module_names) | {"vmsizes", "yaml", "_yaml"}

class Refuse:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] not in ALLOWED:
            raise ImportError(f"vmsizes imported {name}")
        return None

sys.meta_path.insert(0, Refuse())
import vmsizes, vmsizes.quota
vmsizes.describe("Standard_ND96isr_H100_v5")
vmsizes.quota.reserve([vmsizes.quota.ClusterDemand("c", "Standard_HB120-16rs_v3", "eastus", "dedicated", 1)])
print("ok")
"""


def test_imports_only_the_standard_library_and_pyyaml() -> None:
    run = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "ok"


def test_the_probe_would_catch_a_third_party_import() -> None:
    probe = PROBE.replace("import vmsizes, vmsizes.quota", "import pydantic")
    run = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode != 0 and "vmsizes imported pydantic" in run.stderr

"""The pack runs in its own virtualenv built from policies/requirements.txt (as the Pulumi CLI builds it), so
every third-party module the pack imports, directly or through vmsizes/, must be pinned there."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
LOCAL = {"policies", "vmsizes"}
# import name -> distribution name on PyPI
DISTRIBUTION = {"pulumi_policy": "pulumi-policy", "yaml": "pyyaml", "google": "protobuf", "grpc": "grpcio"}
# installed as dependencies of the pinned pulumi (its own requirements), not pinned separately
VIA_PULUMI = {"protobuf", "grpcio"}


def third_party_imports() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in [*sorted((ROOT / "policies").glob("*.py")), *sorted((ROOT / "vmsizes").glob("*.py"))]:
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in names:
                top = name.split(".")[0]
                if top not in LOCAL and top not in sys.stdlib_module_names and top != "__future__":
                    found.setdefault(DISTRIBUTION.get(top, top), set()).add(path.relative_to(ROOT).as_posix())
    return found


def pinned() -> set[str]:
    lines = (ROOT / "policies" / "requirements.txt").read_text().splitlines()
    return {m.group(1).lower() for line in lines if (m := re.match(r"^([A-Za-z0-9_.-]+)==", line.strip()))}


def test_every_pack_import_is_pinned_in_policies_requirements() -> None:
    missing = {
        dist: sorted(files)
        for dist, files in third_party_imports().items()
        if dist not in pinned() and dist not in VIA_PULUMI
    }
    assert missing == {}, f"add to policies/requirements.txt: {missing}"


def test_the_scan_sees_the_pack_imports() -> None:
    imports = third_party_imports()
    assert {"pulumi-policy", "pyyaml", "isodate"} <= set(imports)
    assert "policies/_common.py" in imports["isodate"]

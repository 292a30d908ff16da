"""The pack runs in its own virtualenv built from policies/requirements.txt (as the Pulumi CLI builds it), so
every third-party module the pack imports, directly or through vmsizes/ and the stackconfig modules it uses
(standard library only, e.g. stackconfig.sshkeys), must be pinned there."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
LOCAL = {"policies", "vmsizes", "stackconfig", "azroles"}
# import name -> distribution name on PyPI
DISTRIBUTION = {"pulumi_policy": "pulumi-policy", "yaml": "pyyaml", "google": "protobuf", "grpc": "grpcio"}
# installed as dependencies of the pinned pulumi (its own requirements), not pinned separately
VIA_PULUMI = {"protobuf", "grpcio"}


def _imports(path: Path) -> list[str]:
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
    return names


def pack_files() -> list[Path]:
    """policies/ and vmsizes/, plus each stackconfig module they import and stackconfig/__init__.py."""
    files = [*sorted((ROOT / "policies").glob("*.py")), *sorted((ROOT / "vmsizes").glob("*.py"))]
    used = {n for f in files for n in _imports(f) if n.startswith("stackconfig.")}
    if used:
        files.append(ROOT / "stackconfig" / "__init__.py")
    files += [ROOT / (name.replace(".", "/") + ".py") for name in sorted(used)]
    return files


def third_party_imports() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in pack_files():
        for name in _imports(path):
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
    assert "policies/clusters.py" in imports["isodate"]


def test_the_scan_follows_the_stackconfig_modules_the_pack_uses() -> None:
    names = [p.relative_to(ROOT).as_posix() for p in pack_files()]
    assert "stackconfig/sshkeys.py" in names and "stackconfig/__init__.py" in names
    assert "stackconfig/regions.py" in names  # quota-reservation's config check
    assert "stackconfig/models.py" not in names  # pydantic stays out of the pack

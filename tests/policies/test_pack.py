"""The pack as a whole (policies/ with its requirements.txt and __main__.py, what `pulumi policy publish`
uploads). It runs in its own virtualenv built from policies/requirements.txt (as the Pulumi CLI builds it), so
every third-party module the pack imports, directly or through vmsizes/ and the stackconfig modules it uses
(standard library only, e.g. stackconfig.sshkeys), must be pinned there."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
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


# --- policies/ alone is the pack (what `pulumi policy publish` uploads) ---
PACK_VENV = ROOT / "policies" / ".venv"
CATALOG = ("vmsizes", "azroles", "stackconfig")


def test_the_pack_reads_no_repository_folder() -> None:
    main = (ROOT / "policies" / "__main__.py").read_text()
    assert "parent.parent" not in main and "sys.path" not in main


def test_the_catalog_in_the_pack_venv_is_the_installed_wheel_not_the_checkout(tmp_path: Path) -> None:
    import subprocess

    probe = "import vmsizes, azroles, stackconfig.sshkeys, stackconfig.regions; print(vmsizes.__file__)"
    out = subprocess.run(
        [str(PACK_VENV / "bin" / "python"), "-I", "-c", probe],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert Path(out.stdout.strip()).is_relative_to(PACK_VENV.resolve() / "lib")


def test_the_installed_catalog_is_the_checkout_s(tmp_path: Path) -> None:
    """The wheel is built from this checkout, never edited: a stale one (vmsizes/ changed since `make`) is
    named, with the command that rebuilds it."""
    import hashlib

    site = next((PACK_VENV.resolve() / "lib").glob("python3*/site-packages"))
    stale = []
    for package in CATALOG:
        for source in sorted((ROOT / package).rglob("*")):
            if source.suffix not in (".py", ".yaml") or "__pycache__" in source.parts:
                continue
            installed = site / source.relative_to(ROOT)
            digest = hashlib.sha256(source.read_bytes()).hexdigest()
            if not installed.is_file() or hashlib.sha256(installed.read_bytes()).hexdigest() != digest:
                stale.append(source.relative_to(ROOT).as_posix())
    assert stale == [], f"the pack's catalog is older than {stale}: run `make policies/.venv/.installed`"

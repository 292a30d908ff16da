"""preflight/layout.py in a checkout: the packages' own names, this repository as the program and the pack.
Installed (one name, azml_gpu): tests/packaging/test_azml_gpu_build.py runs the staged tree, and
tests/integration/package/test_wheel.py the wheel."""

from __future__ import annotations

from pathlib import Path

from preflight import layout

ROOT = Path(__file__).resolve().parents[2]


def test_in_a_checkout_the_packages_are_imported_under_their_own_names() -> None:
    assert layout.PREFIX == ""
    assert layout.own("policies") == "policies"
    assert layout.own("preflight.provider") == "preflight.provider"
    assert layout.IMPORT_ROOT == ROOT == layout.PACKAGES_DIR
    assert layout.pack_folder() == ROOT / "policies"


def test_the_program_is_the_current_folders_else_this_checkouts(tmp_path: Path) -> None:
    assert layout.checkout() == ROOT
    assert layout.program_folder(tmp_path) == ROOT
    (tmp_path / "Pulumi.yaml").write_text("name: team\nruntime: python\n")
    assert layout.program_folder(tmp_path) == tmp_path.resolve()


def test_by_default_the_program_is_the_working_folders(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    assert layout.program_folder() == ROOT
    (tmp_path / "Pulumi.yaml").write_text("name: team\nruntime: python\n")
    assert layout.program_folder() == tmp_path.resolve()


def test_a_folder_with_packages_but_no_program_is_not_a_checkout(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setattr(layout, "PACKAGES_DIR", tmp_path)  # e.g. site-packages/azml_gpu: no Pulumi.yaml
    assert layout.checkout() is None
    assert layout.program_folder(tmp_path / "x") == (tmp_path / "x").resolve()

"""The release contract (CONTRIBUTING.md, "Release"): an Apache-2.0 LICENSE that the wheel's metadata names,
one version across the wheel, the pack and the pack's catalog wheel, and a CHANGELOG
section for that version."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def _version() -> str:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def test_license_is_the_apache_2_0_text() -> None:
    text = (ROOT / "LICENSE").read_text()
    assert "Apache License\n                           Version 2.0, January 2004" in text
    # The whole license, not its header: the last of the nine sections and the appendix are there.
    assert "9. Accepting Warranty or Additional Liability." in text
    assert "APPENDIX: How to apply the Apache License to your work." in text


def test_pyproject_declares_the_license_and_ships_the_file() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "Apache-2.0"
    assert project["license-files"] == ["LICENSE"]
    assert project["readme"] == "README.md"


def test_version_is_semantic() -> None:
    assert re.fullmatch(r"\d+\.\d+\.\d+", _version()), _version()


def test_pack_and_catalog_wheel_carry_the_same_version() -> None:
    version = _version()
    pack = yaml.safe_load((ROOT / "policies" / "PulumiPolicy.yaml").read_text())
    catalog = tomllib.loads((ROOT / "packaging" / "pack-catalog" / "pyproject.toml").read_text())
    wheel = f"azml_gpu_catalog-{version}-py3-none-any.whl"
    assert str(pack["version"]) == version
    assert catalog["project"]["version"] == version
    assert f"./vendor/{wheel}" in (ROOT / "policies" / "requirements.txt").read_text().splitlines()
    assert f"PACK_CATALOG := policies/vendor/{wheel}" in (ROOT / "Makefile").read_text().splitlines()


def test_changelog_has_a_section_for_the_version_below_unreleased() -> None:
    headings = re.findall(r"^## \[([^\]]+)\]", (ROOT / "CHANGELOG.md").read_text(), flags=re.M)
    assert headings[0] == "Unreleased"
    assert _version() in headings[1:]

"""preflight/packpath.py: `python -m preflight pack-path [--json]` prints the pack's folder for
`pulumi preview --policy-pack`; installed, tests/integration/package/test_wheel.py checks it is
site-packages/azml_gpu/policies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from preflight import layout
from preflight.__main__ import main
from preflight.packpath import main as pack_path

ROOT = Path(__file__).resolve().parents[2]


def test_it_prints_the_folder_with_the_packs_manifest(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["pack-path"]) == 0
    assert capsys.readouterr().out == f"{ROOT / 'policies'}\n"
    assert main(["pack-path", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "path": str(ROOT / "policies"),
        "manifest": str(ROOT / "policies" / "PulumiPolicy.yaml"),
        "installed": False,
    }


def test_a_bad_flag_is_exit_2_naming_it(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        pack_path(["--bogus", "--json"])
    assert exit_.value.code == 2
    document = json.loads(capsys.readouterr().out)
    assert document["path"] is None and document["exit_code"] == 2
    assert document["errors"][0].startswith("unrecognized arguments: --bogus")


def test_a_pack_without_its_manifest_is_exit_2_saying_to_reinstall(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(layout, "pack_folder", lambda: tmp_path)
    assert pack_path([]) == 2
    assert capsys.readouterr().err == (
        f"pack-path: no policy pack at {tmp_path} (no PulumiPolicy.yaml); reinstall azml-gpu\n"
    )
    assert pack_path(["--json"]) == 2
    assert json.loads(capsys.readouterr().out)["errors"] == [
        f"no policy pack at {tmp_path} (no PulumiPolicy.yaml); reinstall azml-gpu"
    ]

"""preflight/initconfig.py: `python -m preflight init-config STACK` writes a reviewable policy config for a
new
stack from its stack file, never over an existing one without --force, and says what to do next."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from preflight.initconfig import main as init_config

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def no_prices(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AZML_GPU_PRICES", raising=False)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "policies" / "config").mkdir(parents=True)
    shutil.copy(ROOT / "Pulumi.prod.yaml", tmp_path / "Pulumi.prod-eu.yaml")
    shutil.copy(ROOT / "Pulumi.dev.yaml", tmp_path / "Pulumi.dev2.yaml")
    return tmp_path


def written(folder: Path, stack: str) -> dict:
    return json.loads((folder / "policies" / "config" / f"{stack}.json").read_text())


def test_a_prod_stack_gets_mandatory_secure_defaults_and_replacements(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert init_config(["prod-eu"], folder) == 0
    config = written(folder, "prod-eu")
    assert config["cluster-replacement"] == {"enforcementLevel": "mandatory", "acknowledged": []}
    assert config["secure-defaults"] == {
        "enforcementLevel": "mandatory",
        "public_workspaces": [],
        "ssh_clusters": [],  # prod's clusters have no SSH (no-public-IP nodes in a managed network)
    }
    assert config["quota-reservation"] == {"quotas": {"eastus": {}}}
    assert config["idle-timer-bounds"] == {"min_seconds": 120, "max_seconds": 900}
    out = capsys.readouterr().out
    assert "python -m jobs quota --stack prod-eu --write policies/config/prod-eu.json" in out


def test_another_stack_is_advisory_and_lists_its_deliberate_settings(folder: Path) -> None:
    assert init_config(["dev2"], folder) == 0
    config = written(folder, "dev2")
    assert config["cluster-replacement"]["enforcementLevel"] == "advisory"
    assert config["secure-defaults"] == {
        "enforcementLevel": "advisory",
        "public_workspaces": ["ws-llm-dev"],  # dev is public on purpose
        "ssh_clusters": ["t4-dev"],  # and has SSH for debugging
    }
    assert config["idle-timer-bounds"]["max_seconds"] == 1800


def test_an_existing_config_is_kept_unless_forced(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = folder / "policies" / "config" / "prod-eu.json"
    target.write_text('{"hand": "written"}')
    assert init_config(["prod-eu"], folder) == 2
    assert "policies/config/prod-eu.json exists; edit it, or pass --force" in capsys.readouterr().err
    assert target.read_text() == '{"hand": "written"}'
    assert init_config(["prod-eu", "--force"], folder) == 0
    assert "cluster-replacement" in written(folder, "prod-eu")


def test_a_missing_or_invalid_stack_is_exit_2_with_json(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert init_config(["nope", "--json"], folder) == 2
    document = json.loads(capsys.readouterr().out)
    assert document["errors"] == ["STACK 'nope': no Pulumi.nope.yaml; use one of: dev2, prod-eu"]
    (folder / "Pulumi.bad.yaml").write_text("config:\n  azml-gpu:clusters: 3\n")
    assert init_config(["bad"], folder) == 2
    assert "azml-gpu:" in capsys.readouterr().err


def _prices(folder: Path, by_region: dict) -> Path:
    path = folder / "prices.json"
    path.write_text(
        json.dumps(
            {"fetched": "2026-12-01T00:00:00+00:00", "currency": "USD", "source": "t", "prices": by_region}
        )
    )
    return path


def test_the_budget_is_the_stack_s_own_cost_at_max_nodes(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # prod: h100-x4 4 x ND96isr H100 v5 (dedicated) + a100-spot 1 x NC24ads A100 v4 (low_priority), eastus.
    path = _prices(
        folder,
        {
            "eastus": {
                "Standard_ND96isr_H100_v5": {"pay_as_you_go": 98.32},
                "Standard_NC24ads_A100_v4": {"pay_as_you_go": 3.673, "low_priority": 0.7346},
            }
        },
    )
    monkeypatch.setenv("AZML_GPU_PRICES", str(path))
    assert init_config(["prod-eu"], folder) == 0
    # 4 x 98.32 + 0.7346 = 394.0146, rounded up to 395
    assert written(folder, "prod-eu")["cluster-cost-budget"] == {
        "enforcementLevel": "mandatory",
        "max_per_hour": 395.0,
    }


def test_no_budget_when_a_price_is_unknown(folder: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    path = _prices(folder, {"eastus": {"Standard_ND96isr_H100_v5": {"pay_as_you_go": 98.32}}})
    monkeypatch.setenv("AZML_GPU_PRICES", str(path))
    assert init_config(["prod-eu"], folder) == 0
    assert written(folder, "prod-eu")["cluster-cost-budget"] == {"enforcementLevel": "mandatory"}
    assert "no cost budget written (no price for every cluster)" in capsys.readouterr().out
    monkeypatch.delenv("AZML_GPU_PRICES")
    assert init_config(["dev2"], folder) == 0
    assert written(folder, "dev2")["cluster-cost-budget"] == {"enforcementLevel": "advisory"}


def test_a_bad_price_file_is_exit_2(folder: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.setenv("AZML_GPU_PRICES", str(folder / "none.json"))
    assert init_config(["prod-eu", "--json"], folder) == 2
    errors = json.loads(capsys.readouterr().out)["errors"]
    assert errors[0].startswith("AZML_GPU_PRICES: price file ") and "not found" in errors[0]

"""preflight/initconfig.py: `python -m preflight init-config STACK` writes a reviewable policy config for a
new stack from its stack file, its enforcement decided by `azml-gpu:environment` (never the stack's name),
never over an existing one without --force, and with --force keeps every quota and acknowledgement entered by
hand (issue 33 item 8), and says what to do next."""

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


def test_a_folder_without_policies_config_gets_it(tmp_path: Path) -> None:
    shutil.copy(ROOT / "Pulumi.dev.yaml", tmp_path / "Pulumi.dev.yaml")
    assert init_config(["dev"], tmp_path) == 0
    assert written(tmp_path, "dev")["quota-reservation"] == {"quotas": {"eastus": {}}}
    made = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*"))
    assert made == ["Pulumi.dev.yaml", "policies", "policies/config", "policies/config/dev.json"]


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
    assert document["errors"] == [
        f"STACK 'nope': no Pulumi.nope.yaml in {folder}; use one of: dev2, prod-eu "
        "(or run it in the program's folder)"
    ]
    (folder / "Pulumi.bad.yaml").write_text("config:\n  azml-gpu:clusters: 3\n")
    assert init_config(["bad"], folder) == 2
    assert "azml-gpu:" in capsys.readouterr().err


def set_environment(path: Path, environment: str | None) -> None:
    """The stack file at `path` with `azml-gpu:environment` set to `environment` (removed for None)."""
    lines = [line for line in path.read_text().splitlines() if "azml-gpu:environment:" not in line]
    if environment is not None:
        at = lines.index("config:") + 1
        lines.insert(at, f"  azml-gpu:environment: {environment}")
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize(
    "source, stack, environment, level, max_idle",
    [
        ("Pulumi.prod.yaml", "staging", "production", "mandatory", 900),  # not named prod*, still enforced
        ("Pulumi.prod.yaml", "prod-sandbox", "development", "advisory", 1800),  # named prod*, not production
        ("Pulumi.dev.yaml", "prodlike", "production", "mandatory", 900),
    ],
)
def test_the_environment_decides_enforcement_never_the_name(
    tmp_path: Path, source: str, stack: str, environment: str, level: str, max_idle: int
) -> None:
    (tmp_path / "policies" / "config").mkdir(parents=True)
    shutil.copy(ROOT / source, tmp_path / f"Pulumi.{stack}.yaml")
    set_environment(tmp_path / f"Pulumi.{stack}.yaml", environment)
    assert init_config([stack], tmp_path) == 0
    config = written(tmp_path, stack)
    assert config["secure-defaults"]["enforcementLevel"] == level
    assert config["cluster-replacement"]["enforcementLevel"] == level
    assert config["idle-timer-bounds"]["max_seconds"] == max_idle


def test_a_stack_file_without_an_environment_is_refused_naming_the_key(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    set_environment(folder / "Pulumi.prod-eu.yaml", None)
    assert init_config(["prod-eu", "--json"], folder) == 2
    document = json.loads(capsys.readouterr().out)
    assert document["errors"] == [
        "azml-gpu:environment: not set in Pulumi.prod-eu.yaml; it decides the enforcement written "
        "(production: secure-defaults and cluster-replacement mandatory; development: advisory): add "
        "`azml-gpu:environment: production` or `azml-gpu:environment: development`"
    ]
    assert not (folder / "policies" / "config" / "prod-eu.json").exists()


def test_a_bad_environment_and_another_config_problem_are_reported_together(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = folder / "Pulumi.prod-eu.yaml"
    set_environment(path, "prod")
    path.write_text(path.read_text().replace("max_instances: 4", "max_instances: 0"))
    assert init_config(["prod-eu", "--json"], folder) == 2
    errors = json.loads(capsys.readouterr().out)["errors"]
    assert "azml-gpu:environment: 'prod' is not allowed; did you mean production?" in errors
    assert any(e.startswith("azml-gpu:clusters[0].max_instances: 0 is below 1") for e in errors)


# --- --force: a merge, never a silent loss ------------------------------------------------------------------

HAND = {
    "vm-series-retiring-soon": {"warn_days": 90},
    "quota-reservation": {
        "quotas": {"eastus": {"StandardNDSH100v5Family": 96, "total": 200}, "westus3": {"total": 50}}
    },
    "min-nodes-zero": {"allow": ["h100-x4"]},
    "idle-timer-bounds": {"min_seconds": 120, "max_seconds": 600},
    "cross-region-compute": {"acknowledged": []},
    "secure-defaults": {"enforcementLevel": "advisory", "public_workspaces": [], "ssh_clusters": []},
    "cluster-replacement": {"enforcementLevel": "mandatory", "acknowledged": ["h100-x4"]},
    "compute-in-virtual-network": {"acknowledged": ["a100-spot"]},
}


def test_force_keeps_every_quota_and_acknowledgement_entered_by_hand(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = folder / "policies" / "config" / "prod-eu.json"
    target.write_text(json.dumps(HAND))
    assert init_config(["prod-eu", "--force", "--json"], folder) == 0
    config = written(folder, "prod-eu")
    assert config["quota-reservation"]["quotas"] == HAND["quota-reservation"]["quotas"]
    assert config["cluster-replacement"] == {"enforcementLevel": "mandatory", "acknowledged": ["h100-x4"]}
    assert config["min-nodes-zero"] == {"allow": ["h100-x4"]}
    assert config["compute-in-virtual-network"] == {"acknowledged": ["a100-spot"]}
    assert config["vm-series-retiring-soon"] == {"warn_days": 90}
    assert config["idle-timer-bounds"] == {"min_seconds": 120, "max_seconds": 600}
    # production (Pulumi.prod.yaml's environment) enforces secure-defaults again
    assert config["secure-defaults"]["enforcementLevel"] == "mandatory"
    document = json.loads(capsys.readouterr().out)
    assert document["changed"] == [
        'secure-defaults.enforcementLevel: "advisory" -> "mandatory" (azml-gpu:environment)'
    ]
    assert "quota-reservation.quotas.eastus.StandardNDSH100v5Family: 96" in document["kept"]
    assert 'quota-reservation.quotas.westus3: {"total": 50}' in document["kept"]
    assert 'cluster-replacement.acknowledged: "h100-x4"' in document["kept"]
    assert 'compute-in-virtual-network: {"acknowledged": ["a100-spot"]}' in document["kept"]


def test_force_adds_what_the_stack_file_now_has(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The workspace (and its cluster) moved to westus3 since the config was written: the new region is
    added empty, the old one's hand-entered quota kept."""
    target = folder / "policies" / "config" / "dev2.json"
    target.write_text(json.dumps({"quota-reservation": {"quotas": {"eastus": {"total": 24}}}}))
    path = folder / "Pulumi.dev2.yaml"
    path.write_text(
        path.read_text().replace("region: eastus\n    # Disposable", "region: westus3\n    # Disposable")
    )
    assert init_config(["dev2", "--force"], folder) == 0
    config = written(folder, "dev2")
    assert config["quota-reservation"]["quotas"] == {"eastus": {"total": 24}, "westus3": {}}
    assert config["secure-defaults"]["ssh_clusters"] == ["t4-dev"]
    out = capsys.readouterr().out
    assert 'kept from the existing file: quota-reservation.quotas.eastus: {"total": 24}\n' in out


@pytest.mark.parametrize(
    "text, why",
    [
        ('{"quota-reservation": ', "is not valid JSON (line 1 column 23: Expecting value)"),
        ("[1, 2]", "is not a JSON object keyed by policy name"),
        (
            '{"version": 2, "policies": {}}',
            'is the versioned form ("version": 2), which init-config does not merge',
        ),
    ],
)
def test_force_refuses_a_file_it_cannot_merge_and_says_what_would_be_lost(
    folder: Path, capsys: pytest.CaptureFixture[str], text: str, why: str
) -> None:
    target = folder / "policies" / "config" / "prod-eu.json"
    target.write_text(text)
    assert init_config(["prod-eu", "--force"], folder) == 2
    err = capsys.readouterr().err
    assert err == (
        f"preflight init-config: policies/config/prod-eu.json {why}; --force would lose what "
        "policies/config/prod-eu.json holds; fix it, or move it away to write a fresh one\n"
    )
    assert target.read_text() == text


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

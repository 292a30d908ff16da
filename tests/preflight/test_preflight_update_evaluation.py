"""Issue 22, "Why", each bullet reproduced through the gate as users run it (a subprocess each, or
`evaluate` with the session's pack), against the upstream behaviour it cites:

- an unknown new input is a change (azure-native diff.go), so renaming the workspace replaces the clusters
  (step_generator.go: the replaced workspace's outputs are unknown to its dependents) and prod's mandatory
  cluster-replacement fires; a region change is a replacement of everything, not a cross-region cluster;
- duplicate resource URNs stop the engine (step_generator.go generateURN); the gate names both config entries;
- the same input gives the same bytes (four runs of a stack with two clusters in one quota pool);
- `--state` from another stack or project is refused (exit 2, naming both); a cluster the change deletes is
  gated like a replaced one; `--export-state` writes a state the gate reads back as all sames;
- issue 26: an acknowledged replacement whose delete a workspace lock blocks is mandatory; an allow-list
  naming no cluster is a config error.
The state is exported once per module (`python -m preflight prod --export-state`) and reused.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from preflight.analyzer import PolicyPack
from preflight.gate import evaluate
from preflight.initconfig import main as init_config
from preflight.program import read_stack_config
from stackconfig.loader import parse_yaml

ROOT = Path(__file__).resolve().parent.parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "stacks"
PROD_POLICY = json.loads((ROOT / "policies" / "config" / "prod.json").read_text())


def preflight(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "preflight", *args], cwd=ROOT, capture_output=True, text=True, timeout=300
    )


@pytest.fixture(scope="module")
def prod_state(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("state") / "prod-state.json"
    run = preflight("prod", "--export-state", str(path))
    assert run.returncode == 0, run.stderr
    assert f"preflight: wrote the deployed-as-declared state to {path}" in run.stderr
    return path


def prod_file(tmp_path: Path, edit) -> Path:
    """Pulumi.prod.yaml with `edit(config)` applied, written as JSON (YAML's superset) for --config-file."""
    config = read_stack_config("prod")
    edit(config)
    path = tmp_path / "Pulumi.prod.yaml"
    path.write_text(json.dumps({"config": config}))
    return path


def policy_file(tmp_path: Path, edit) -> Path:
    policy = json.loads(json.dumps(PROD_POLICY))
    edit(policy)
    path = tmp_path / "prod.json"
    path.write_text(json.dumps(policy))
    return path


def test_the_exported_state_reads_back_as_all_sames(prod_state: Path) -> None:
    document = json.loads(prod_state.read_text())
    resources = document["deployment"]["resources"]
    compute = next(r for r in resources if r["urn"].endswith("::h100-x4") and r["type"].endswith(":Compute"))
    assert compute["id"].endswith("/workspaces/ws-llm/computes/h100-x4")
    assert "replaceOnChanges" in compute and compute["propertyDependencies"]["workspaceName"]
    run = preflight("prod", "--json", "--state", str(prod_state))
    assert run.returncode == 0, run.stderr
    update = json.loads(run.stdout)["evaluations"][1]
    assert (update["steps"], update["replacements"], update["deletes"]) == ({"same": 34}, [], [])


def test_renaming_the_workspace_replaces_the_clusters_and_fails_prod(
    prod_state: Path, tmp_path: Path
) -> None:
    def rename(config: dict) -> None:
        config["azml-gpu:workspace"]["name"] = "ws-llm2"

    run = preflight(
        "prod", "--json", "--config-file", str(prod_file(tmp_path, rename)), "--state", str(prod_state)
    )
    assert run.returncode == 1, run.stderr
    update = json.loads(run.stdout)["evaluations"][1]
    clusters = [r for r in update["replacements"] if r["type"].endswith(":Compute")]
    assert [(r["name"], r["fields"], r["trigger"]) for r in clusters] == [
        ("a100-spot", ["resourceGroupName", "workspaceName"], "provider"),
        ("h100-x4", ["resourceGroupName", "workspaceName"], "provider"),
    ]
    mandatory = [
        (v["policy"], v["urn"].split("::")[-1])
        for v in update["violations"]
        if v["enforcement"] == "mandatory"
    ]
    assert mandatory == [("cluster-replacement", "a100-spot"), ("cluster-replacement", "h100-x4")]
    # the old workspace's resources are deleted by the update
    assert any(u.endswith("::ws-llm-mlw") for u in update["deletes"])


def test_a_region_change_is_a_replacement_not_a_cross_region_cluster(
    prod_state: Path, tmp_path: Path
) -> None:
    """The resource group's location is force-new (gen/replacement.go), so everything under it is replaced
    with the new region: the real plan shows no cluster outside its workspace's region."""

    def move(config: dict) -> None:
        config["azml-gpu:workspace"]["region"] = "westus3"
        config["azure-native:location"] = "westus3"

    run = preflight(
        "prod", "--json", "--config-file", str(prod_file(tmp_path, move)), "--state", str(prod_state)
    )
    document = json.loads(run.stdout)
    update = document["evaluations"][1]
    assert [v for v in update["violations"] if v["policy"] == "cross-region-compute"] == []
    names = {r["name"] for r in update["replacements"]}
    assert {"ws-llm-rg", "ws-llm-mlw", "h100-x4", "a100-spot"} <= names


def test_a_deleted_cluster_is_gated_like_a_replaced_one(prod_state: Path, tmp_path: Path) -> None:
    def drop(config: dict) -> None:
        config["azml-gpu:clusters"] = [c for c in config["azml-gpu:clusters"] if c["name"] != "a100-spot"]

    run = preflight(
        "prod", "--json", "--config-file", str(prod_file(tmp_path, drop)), "--state", str(prod_state)
    )
    assert run.returncode == 1, run.stderr
    update = json.loads(run.stdout)["evaluations"][1]
    gated = [v for v in update["violations"] if v["policy"] == "cluster-replacement"]
    assert [(v["enforcement"], v["message"].split(":")[0]) for v in gated] == [
        ("mandatory", "a100-spot will be deleted (no longer in the stack config)")
    ]
    assert any(
        u.endswith("$azure-native:machinelearningservices:Compute::a100-spot") for u in update["deletes"]
    )


def test_an_acknowledged_replacement_blocked_by_a_workspace_lock_fails(tmp_path: Path) -> None:
    """Issue 26: a lock applies to every resource below its scope (learn.microsoft.com/azure/
    azure-resource-manager/management/lock-resources), so the workspace lock blocks deleting the cluster.
    On the capacity stack: prod can't have locks (a managed network; docs/azure-behaviour.md section 17)."""
    state = tmp_path / "capacity-state.json"
    assert preflight("capacity", "--export-state", str(state)).returncode == 0
    config = read_stack_config("capacity")
    config["azml-gpu:clusters"][0]["size"] = "Standard_NC48ads_A100_v4"
    config["azml-gpu:locks"]["workspace"] = True
    stack_file = tmp_path / "Pulumi.capacity.yaml"
    stack_file.write_text(json.dumps({"config": config}))
    policy = json.loads((ROOT / "policies" / "config" / "capacity.json").read_text())
    policy["cluster-replacement"]["acknowledged"] = ["a100-wus3"]
    policy_path = tmp_path / "capacity.json"
    policy_path.write_text(json.dumps(policy))
    run = preflight(
        "capacity",
        "--json",
        "--config-file",
        str(stack_file),
        "--state",
        str(state),
        "--policy-config",
        str(policy_path),
    )
    assert run.returncode == 1, run.stderr
    update = json.loads(run.stdout)["evaluations"][1]
    (blocked,) = [v for v in update["violations"] if v["policy"] == "cluster-replacement"]
    ws = "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg-train-cap/providers/"
    assert blocked["enforcement"] == "mandatory"
    assert blocked["message"].startswith(
        "cluster-replacement.acknowledged: 'a100-wus3' is acknowledged, but the CanNotDelete lock "
    )
    assert (
        f" on {ws}Microsoft.MachineLearningServices/workspaces/ws-llm-cap blocks deleting it"
        in blocked["message"]
    )


def test_a_state_of_another_stack_or_project_is_refused(prod_state: Path, tmp_path: Path) -> None:
    other = tmp_path / "other.json"
    other.write_text(prod_state.read_text().replace("urn:pulumi:prod::azml-gpu::", "urn:pulumi:dev::other::"))
    run = preflight("prod", "--json", "--state", str(other))
    assert run.returncode == 2
    assert json.loads(run.stdout)["errors"] == [
        f"--state: {other} is the state of stack 'dev' of project 'other', not of stack 'prod' of project "
        "'azml-gpu'; export this stack's state with `pulumi stack export --stack prod --show-secrets --file "
        "FILE` or `python -m preflight prod --export-state FILE`"
    ]
    assert "Traceback" not in run.stderr


def test_four_runs_print_the_same_bytes(tmp_path: Path) -> None:
    """Two clusters in one quota pool: the pool's message lists both in one order whatever the registration
    order, and the two evaluations merge into one violation per pool (2 mandatory, never 4)."""
    folder = FIXTURES / "over-quota"
    text = (folder / "Pulumi.over-quota.yaml").read_text()
    config = parse_yaml(text, "over-quota")["config"]
    second = dict(config["azml-gpu:clusters"][0], name="h100-x2", max_instances=2)
    config["azml-gpu:clusters"].append(second)
    stack = tmp_path / "Pulumi.over-quota.yaml"
    stack.write_text(json.dumps({"config": config}))
    args = (
        "over-quota",
        "--date",
        "2026-11-30",
        "--config-file",
        str(stack),
        "--policy-config",
        str(folder / "policy.json"),
    )
    runs = [preflight(*args) for _ in range(4)]
    assert {r.returncode for r in runs} == {1}
    assert len({r.stdout for r in runs}) == 1
    assert "FAIL: 2 mandatory violation(s)" in runs[0].stdout
    assert "h100-x2 (2 x 96 vCPUs of Standard_ND96isr_H100_v5), h100-x4 (4 x 96 vCPUs of" in runs[0].stdout
    markdown = preflight(*args, "--format", "markdown")
    lines = markdown.stdout.splitlines()
    assert lines[0] == "## Policy gate: FAIL for stack `over-quota`"
    assert lines[2].startswith("2 mandatory, ")
    assert (
        sum(line.startswith("- **quota-reservation** on the stack (first-deploy, update):") for line in lines)
        == 2
    )
    assert max(len(line) for line in lines if not line.startswith("|")) <= 110
    assert "urn:pulumi" not in markdown.stdout


def test_duplicate_resource_urns_name_both_config_entries(pack: PolicyPack) -> None:
    config = read_stack_config("prod")
    ids = [
        "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg-a/providers/Microsoft.Storage/"
        "storageAccounts/stdata",
        "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg-b/providers/Microsoft.Storage/"
        "storageAccounts/stdata",
    ]
    config["azml-gpu:identity"]["data_stores"] = ids
    # Internet outbound reaches the stores without private-endpoint rules (stackconfig.combinations [MNO]).
    config["azml-gpu:network"]["managed"]["isolation_mode"] = "AllowInternetOutbound"
    result = evaluate("prod", config=config, pack=pack)
    assert result.exit_code == 2
    base = (
        "urn:pulumi:prod::azml-gpu::azml-gpu:components:RoleAssignments"
        "$azure-native:authorization:RoleAssignment::"
    )
    assert result.errors == [
        f"Duplicate resource URN '{base}ws-llm-access-{cluster}-stdata-blob-reader'; try giving it a unique "
        f"name "
        "(the engine stops the preview here): azml-gpu:identity.data_stores[0] and "
        "azml-gpu:identity.data_stores[1] derive the same resource name "
        f"'ws-llm-access-{cluster}-stdata-blob-reader'; remove the repeated entry, or make the entries "
        f"differ "
        "in what names the resource"
        for cluster in ("a100-spot", "h100-x4")
    ]


def test_an_allow_list_naming_no_cluster_is_a_config_error(pack: PolicyPack) -> None:
    folder = FIXTURES / "clean"
    result = evaluate(
        "clean",
        config=read_stack_config("clean", folder),
        policy_config={
            "secure-defaults": {"ssh_clusters": ["h100-x3"]},
            "min-nodes-zero": {"allow": ["h100-x2"]},
        },
        pack=pack,
    )
    assert result.exit_code == 2
    assert result.errors == [
        "policy config: secure-defaults.ssh_clusters[0]: 'h100-x3' names no cluster of stack 'clean' (its "
        "clusters: h100-x2), so it allows or acknowledges nothing; did you mean h100-x2?"
    ]


def test_init_config_writes_a_reviewable_policy_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "policies" / "config").mkdir(parents=True)
    shutil.copy(ROOT / "Pulumi.prod.yaml", tmp_path / "Pulumi.prod-eu.yaml")
    assert init_config(["prod-eu"], tmp_path) == 0
    written = json.loads((tmp_path / "policies" / "config" / "prod-eu.json").read_text())
    assert written["cluster-replacement"] == {"enforcementLevel": "mandatory", "acknowledged": []}
    assert written["secure-defaults"] == {
        "enforcementLevel": "mandatory",
        "public_workspaces": [],
        "ssh_clusters": [],  # prod's clusters have no SSH (no-public-IP nodes in a managed network)
    }
    assert written["quota-reservation"] == {"quotas": {"eastus": {}}}
    out = capsys.readouterr().out
    assert "python -m jobs quota --stack prod-eu --write policies/config/prod-eu.json" in out
    assert init_config(["prod-eu"], tmp_path) == 2  # never overwritten without --force
    assert "exists; edit it, or pass --force" in capsys.readouterr().err
    assert init_config(["nope"], tmp_path) == 2

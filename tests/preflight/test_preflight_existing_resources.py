"""Resources outside the stack that the program reads: the customer-managed key's vault (`getVault`), answered
by the one model the gate's mocks and the stand-in plugin share (`preflight.provider.model.get_vault`), and
`python -m preflight --existing F`, the way a user tells the offline gate what the vault is.

Shapes from the sources: the SDK's `keyvault.get_vault` result (pulumi_azure_native 3.29 `GetVaultResult`,
`VaultPropertiesResponse`), the REST spec's `VaultProperties` defaults (azure-rest-api-specs keyvault.json
2024-11-01: enableSoftDelete true, enableRbacAuthorization false, softDeleteRetentionInDays 90; none for
enablePurgeProtection), ARM's 404 (troubleshooting/error-not-found), the engine's invoke error (pulumi/pulumi
source_eval.go `(*resmon).Invoke`: "invocation of <tok> returned an error: ...")."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pulumi_azure_native.keyvault as keyvault
import pytest
import yaml
from pulumi.runtime import mocks as pulumi_mocks
from pulumi.runtime.proto import resource_pb2

from preflight.engine import UPDATE, Deployment
from preflight.mocks import AzureMocks, ExistingFileError, InvokeFailed, RecordingMonitor, read_existing

ROOT = Path(__file__).resolve().parent.parent.parent
SUB = "00000000-0000-0000-0000-000000000000"
KV = f"/subscriptions/{SUB}/resourceGroups/rg-keys/providers/Microsoft.KeyVault/vaults/kv-cmk"
GET_VAULT = "azure-native:keyvault:getVault"
ARGS = {"resourceGroupName": "rg-keys", "vaultName": "kv-cmk"}


def wire_names(cls: type) -> set[str]:
    return {
        getattr(v.fget, "_pulumi_name", None) or n for n, v in vars(cls).items() if isinstance(v, property)
    }


def record(properties: dict) -> dict:
    return {"id": KV, "type": "", "outputs": {"id": KV, "name": "kv-cmk", "properties": properties}}


def call(mocks: AzureMocks) -> dict:
    return mocks.call(pulumi_mocks.MockCallArgs(GET_VAULT, ARGS, ""))


def test_the_answer_has_the_sdks_shape_and_the_specs_defaults() -> None:
    answer = call(AzureMocks(existing={KV.lower(): record({"enablePurgeProtection": True})}))
    assert set(answer) <= wire_names(keyvault.GetVaultResult)
    assert {"id", "name", "type", "properties"} <= set(answer)
    assert (answer["id"], answer["name"], answer["type"]) == (KV, "kv-cmk", "Microsoft.KeyVault/vaults")
    props = answer["properties"]
    assert set(props) <= wire_names(keyvault.outputs.VaultPropertiesResponse)
    # What Key Vault stored at creation from the spec's defaults, and the one property the vault sets.
    assert props["enableSoftDelete"] is True
    assert props["enableRbacAuthorization"] is False
    assert props["softDeleteRetentionInDays"] == 90
    assert props["enablePurgeProtection"] is True


def test_purge_protection_never_set_stays_absent_and_stored_values_win() -> None:
    stored = {"enableRbacAuthorization": True, "softDeleteRetentionInDays": 7}
    props = call(AzureMocks(existing={KV.lower(): record(stored)}))["properties"]
    assert "enablePurgeProtection" not in props  # the spec gives it no default
    assert (props["enableRbacAuthorization"], props["softDeleteRetentionInDays"]) == (True, 7)


def test_a_vault_outside_the_world_is_arms_404_through_the_engine() -> None:
    mocks = AzureMocks()
    monitor = RecordingMonitor(mocks, Deployment(UPDATE))
    request = resource_pb2.ResourceInvokeRequest(tok=GET_VAULT)
    request.args.update(ARGS)
    with pytest.raises(InvokeFailed) as info:
        monitor.Invoke(request)
    assert info.value.details() == (
        f'invocation of {GET_VAULT} returned an error: Status=404 Code="ResourceNotFound" '
        "Message=\"The Resource 'Microsoft.KeyVault/vaults/kv-cmk' under resource group 'rg-keys' was not "
        'found."'
    )


def test_read_existing_takes_what_az_keyvault_show_prints(tmp_path: Path) -> None:
    shown = {"id": KV, "name": "kv-cmk", "properties": {"enablePurgeProtection": None}}
    one = tmp_path / "one.json"
    one.write_text(json.dumps(shown))
    many = tmp_path / "many.json"
    other = KV.replace("kv-cmk", "kv-two")
    many.write_text(json.dumps([shown, {**shown, "id": other}]))
    assert list(read_existing(one)) == [KV.lower()]
    assert read_existing(one)[KV.lower()]["outputs"] == shown
    assert sorted(read_existing(many)) == sorted([KV.lower(), other.lower()])


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ("{not json", "is not JSON"),
        (json.dumps({"name": "kv-cmk"}), "item 0 has no ARM id"),
        (json.dumps([{"id": KV}, "kv-cmk"]), "item 1 has no ARM id"),
    ],
)
def test_read_existing_refuses_a_bad_file_naming_it(tmp_path: Path, content: str, says: str) -> None:
    path = tmp_path / "vault.json"
    path.write_text(content)
    with pytest.raises(ExistingFileError) as info:
        read_existing(path)
    message = str(info.value)
    assert message.startswith(f"--existing: {path}") and says in message
    assert message.endswith(
        "give the JSON `az keyvault show --ids <vault id>` prints (one object, or a list of them)"
    )


def test_read_existing_of_a_missing_file() -> None:
    with pytest.raises(ExistingFileError, match="--existing: cannot read /nonexistent/vault.json"):
        read_existing(Path("/nonexistent/vault.json"))


# -- the gate, as a user runs it ---------------------------------------------------------------------------


def preflight(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "preflight", *args], cwd=ROOT, capture_output=True, text=True, timeout=300
    )


@pytest.fixture(scope="module")
def cmk_stack(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Pulumi.prod.yaml with a customer-managed key (acknowledged) in the workspace's subscription."""
    document = yaml.safe_load((ROOT / "Pulumi.prod.yaml").read_text())
    config = document["config"]
    sub = config["azure-native:subscriptionId"]
    identity = dict(config.get("azml-gpu:identity") or {})
    identity["customer_managed_key"] = {
        "key_vault_id": KV.replace(SUB, sub),
        "key_uri": "https://kv-cmk.vault.azure.net/keys/ws-key/0123456789abcdef0123456789abcdef",
        "user_assigned_identity_id": (
            f"/subscriptions/{sub}/resourceGroups/rg-id/providers/Microsoft.ManagedIdentity/"
            "userAssignedIdentities/id-cmk"
        ),
        "acknowledged": ["cosmos_db_key_access", "providers_registered"],
    }
    config["azml-gpu:identity"] = identity
    path = tmp_path_factory.mktemp("cmk") / "Pulumi.prod.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return path


def shown(folder: Path, stack: Path, purge: bool | None) -> Path:
    sub = yaml.safe_load(stack.read_text())["config"]["azure-native:subscriptionId"]
    path = folder / "vault.json"
    body = {"id": KV.replace(SUB, sub), "name": "kv-cmk", "properties": {"enablePurgeProtection": purge}}
    path.write_text(json.dumps(body))
    return path


def test_the_gate_passes_a_key_whose_vault_is_purge_protected(cmk_stack: Path, tmp_path: Path) -> None:
    run = preflight(
        "prod", "--json", "--config-file", str(cmk_stack), "--existing", str(shown(tmp_path, cmk_stack, True))
    )
    assert run.returncode == 0, run.stderr[-3000:]
    rows = {r["action"]: r for r in json.loads(run.stdout)["permissions"]}
    assert rows["Microsoft.KeyVault/vaults/read"]["why"] == "read the customer-managed key's vault kv-cmk"


def test_the_gate_refuses_a_vault_without_purge_protection(cmk_stack: Path, tmp_path: Path) -> None:
    run = preflight(
        "prod", "--config-file", str(cmk_stack), "--existing", str(shown(tmp_path, cmk_stack, None))
    )
    assert run.returncode == 2
    assert "has purge protection off" in run.stderr
    assert "--enable-purge-protection true" in run.stderr
    assert "Traceback" not in run.stderr


def test_the_gate_without_the_vault_says_how_to_give_it(cmk_stack: Path) -> None:
    run = preflight("prod", "--config-file", str(cmk_stack))
    assert run.returncode == 2
    assert "ResourceNotFound" in run.stderr
    assert "offline, the gate knows a vault outside the stack only from --existing F" in run.stderr
    assert "Traceback" not in run.stderr


def test_a_bad_existing_file_exits_2_before_the_evaluation(tmp_path: Path) -> None:
    bad = tmp_path / "vault.json"
    bad.write_text("[]x")
    run = preflight("dev", "--existing", str(bad))
    assert run.returncode == 2
    assert f"--existing: {bad} is not JSON" in run.stderr
    assert "evaluating __main__.py" not in run.stderr and "Traceback" not in run.stderr


def test_the_gate_with_another_vault_in_f_says_f_lacks_it(cmk_stack: Path, tmp_path: Path) -> None:
    other = tmp_path / "other.json"
    sub = yaml.safe_load(cmk_stack.read_text())["config"]["azure-native:subscriptionId"]
    body = {
        "id": KV.replace(SUB, sub).replace("kv-cmk", "kv-other"),
        "properties": {"enablePurgeProtection": True},
    }
    other.write_text(json.dumps(body))
    run = preflight("prod", "--config-file", str(cmk_stack), "--existing", str(other))
    assert run.returncode == 2
    assert "ResourceNotFound" in run.stderr
    assert "F has no vault of that id; add what `az keyvault show --ids <vault id>` prints to F" in run.stderr

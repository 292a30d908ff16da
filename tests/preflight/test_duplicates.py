"""preflight/duplicates.py: the engine's "Duplicate resource URN" traced back to the stack config entries that
derive the same resource name (two entries of one config list), or said plainly when no entry explains it."""

from __future__ import annotations

from preflight import duplicates

STORE = "/subscriptions/x/resourceGroups/rg-data/providers/Microsoft.Storage/storageAccounts/stcorpus01"
URN = (
    "urn:pulumi:dev::azml-gpu::azml-gpu:components:RoleAssignments$"
    "azure-native:authorization:RoleAssignment::"
)
PERSON = "7f1c2a9e-0d3b-4f5a-9c8e-2b6d4e1f3a50"


def test_two_data_stores_with_one_account_name() -> None:
    config = {"azml-gpu:identity": {"data_stores": [STORE, STORE.replace("rg-data", "rg-other")]}}
    name = "ws-llm-dev-access-t4-dev-stcorpus01-blob-reader"
    assert duplicates.config_entries(name, config) == [
        "azml-gpu:identity.data_stores[0]",
        "azml-gpu:identity.data_stores[1]",
    ]
    [line] = duplicates.problems([URN + name], config)
    assert line == (
        f"Duplicate resource URN '{URN + name}'; try giving it a unique name (the engine stops the preview "
        "here): "
        "azml-gpu:identity.data_stores[0] and azml-gpu:identity.data_stores[1] derive the same resource name "
        f"'{name}'; remove the repeated entry, or make the entries differ in what names the resource"
    )


def test_the_same_person_and_role_twice_and_a_third_entry_that_differs() -> None:
    grant = {"principal_id": PERSON, "principal_type": "User", "role": "AzureML Data Scientist"}
    other = {
        "principal_id": "11111111-2222-3333-4444-555555555555",
        "principal_type": "User",
        "role": "Reader",
    }
    config = {"identity": {"role_assignments": [grant, other, dict(grant)]}}  # bare keys are the project's
    name = f"ws-llm-access-people-{PERSON}-azureml-data-scientist"
    assert duplicates.config_entries(name, config) == [
        "azml-gpu:identity.role_assignments[0]",
        "azml-gpu:identity.role_assignments[2]",
    ]


def test_a_duplicate_no_list_explains_is_the_programs() -> None:
    [line] = duplicates.problems([URN + "x-y", URN + "x-y"], {"azml-gpu:clusters": [{"name": "a"}]})
    assert line.endswith(
        "two resources of the program are named 'x-y' (no config list entry explains it); give each resource "
        "a "
        "unique name in the program"
    )

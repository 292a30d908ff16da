"""The test doubles: Azure (localml: the Azure ML control plane, Azurite, the blob mount) and the Pulumi CLI
builder (pulumicli) for machines without a CLI. No product module imports them
(tests/repo/test_repo_import_cycles.py) and the wheel does not ship them (pyproject.toml)."""

"""The gate's offline azure-native provider: one model of pulumi-azure-native (model.py: Check defaults, Diff
and
forced replacements, preview and deployed outputs; schema.py and azure_specs/: the REST-spec check of every
resource's inputs; armids.py, invokes.py: ids and function answers), served over the provider protocol
(server.py) as one process per gate (process.py); against a control plane it sends azure-native's ARM
requests (arm.py)."""

#: The resources outside the stack the program may read (`python -m preflight --existing F`), and where each
#: Invoke is journalled (one JSON line: token and arguments), both read by the provider process.
EXISTING_ENV = "AZML_GPU_EXISTING"
JOURNAL_ENV = "AZML_GPU_PROVIDER_JOURNAL"

"""The real Pulumi engine, offline: the CLI built from Pulumi's Go modules (`engine/go`, `python -m engine
build`), a stand-in azure-native plugin that shares the gate's provider model (`engine/provider`), and the
driver that runs `pulumi preview --policy-pack` and `pulumi up` on a local file backend
(`engine/workspace.py`, `engine/run.py`). docs/engine.md.
"""

"""The stand-in pulumi-resource-azure-native plugin (server.py), its ARM calls to the local control plane
(arm.py) and its store for every other resource (store.py)."""

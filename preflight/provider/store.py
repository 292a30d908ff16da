"""The stand-in provider's ARM store: every resource it made that the local Azure ML control plane does not
serve (resource group, storage account, key vault, registry, locks, role assignments, ...), by ARM id.

A plugin process lives for one engine operation, so the store is a JSON file that outlives it
(`AZML_ENGINE_ARM_STORE`, set by `engine.workspace`; one per scratch workspace). ARM ids compare without
regard to case, as ARM's do.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

ENV = "AZML_ENGINE_ARM_STORE"


class ArmStore:
    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._lock = threading.Lock()

    @classmethod
    def from_env(cls) -> ArmStore:
        where = os.environ.get(ENV)
        return cls(Path(where) if where else None)

    def _load(self) -> dict[str, Any]:
        if self.path is None or not self.path.exists():
            return {}
        return json.loads(self.path.read_text())

    def _save(self, data: dict[str, Any]) -> None:
        if self.path is None:
            return
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=1, sort_keys=True))
        tmp.replace(self.path)

    def get(self, arm_id: str) -> dict[str, Any] | None:
        with self._lock:
            return self._load().get(arm_id.lower())

    def put(self, arm_id: str, token: str, inputs: dict[str, Any], outputs: dict[str, Any]) -> None:
        with self._lock:
            data = self._load()
            data[arm_id.lower()] = {"id": arm_id, "type": token, "inputs": inputs, "outputs": outputs}
            self._save(data)

    def delete(self, arm_id: str) -> None:
        with self._lock:
            data = self._load()
            data.pop(arm_id.lower(), None)
            self._save(data)

    def all(self) -> list[dict[str, Any]]:
        with self._lock:
            return [self._load()[k] for k in sorted(self._load())]

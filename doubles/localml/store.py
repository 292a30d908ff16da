"""In-memory state of one control-plane session: code versions, jobs and computes, per workspace.

Any subscription / resource group / workspace name is accepted: the session plays the workspace the
stack outputs name. Datastore folders live on disk under the session directory, so a job's
``rw_mount`` output (e.g. a checkpoint folder) is still there for the next job of the session.
"""

from __future__ import annotations

import datetime as dt
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PROVIDER = "providers/Microsoft.MachineLearningServices/workspaces"

#: Run states (azure-ai-ml RunHistoryConstants / JobStatus).
TERMINAL = {"Completed", "Failed", "Canceled"}


def now_iso() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def workspace_id(sub: str, rg: str, ws: str) -> str:
    return f"/subscriptions/{sub}/resourceGroups/{rg}/{PROVIDER}/{ws}"


@dataclass
class CodeVersion:
    name: str
    version: str
    body: dict[str, Any]  # ARM resource as answered (id, name, type, properties)


@dataclass
class Job:
    name: str
    ws_id: str
    properties: dict[str, Any]  # REST properties as submitted, plus what the service adds
    status: str = "NotStarted"
    created: str = field(default_factory=now_iso)
    start_time: str | None = None
    end_time: str | None = None
    error: str | None = None
    exit_code: int | None = None
    #: The service-side reason a drill set (doubles/localml/drills.py): it replaces the exit-code message.
    system_error: str | None = None
    stop_event: threading.Event = field(default_factory=threading.Event)
    done: threading.Event = field(default_factory=threading.Event)
    thread: threading.Thread | None = None

    @property
    def artifact_prefix(self) -> str:
        """Blob prefix of the job's logs in the artifact container (Azure: ExperimentRun/dcid.<run id>)."""
        return f"ExperimentRun/dcid.{self.name}"

    def resource(self) -> dict[str, Any]:
        props = dict(self.properties)
        props["status"] = self.status
        return {
            "id": f"{self.ws_id}/jobs/{self.name}",
            "name": self.name,
            "type": "Microsoft.MachineLearningServices/workspaces/jobs",
            "properties": props,
            "systemData": {"createdAt": self.created, "createdBy": "localml", "createdByType": "User"},
        }


@dataclass
class Store:
    root: Path  # session directory
    codes: dict[tuple[str, str, str], CodeVersion] = field(default_factory=dict)  # (ws_id, name, version)
    jobs: dict[tuple[str, str], Job] = field(default_factory=dict)  # (ws_id lower, name)
    #: Computes as GET answers them (ARM resource), keyed (ws_id lower, compute name lower): ARM names
    #: are case-insensitive. `detached`: what a cluster deleted with underlyingResourceAction=Detach
    #: leaves behind for a later PUT of the same name (doubles/localml/computes.py).
    computes: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    detached: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    #: Workspaces (key: workspace id lower): the body a PUT sent, and the state of one that is not live
    #: (Deleting, SoftDeleted, Purged; doubles/localml/workspaces.py).
    workspaces: dict[str, dict[str, Any]] = field(default_factory=dict)
    workspace_state: dict[str, str] = field(default_factory=dict)
    #: Key vaults as GET answers them and deleted ones (`{"subscription", "resource"}`), keyed by the
    #: lower-case name: vault names are global (doubles/localml/keyvault.py).
    vaults: dict[str, dict[str, Any]] = field(default_factory=dict)
    deleted_vaults: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: Long-running operations by id (doubles/localml/operations.py).
    operations: dict[str, Any] = field(default_factory=dict)
    lock: threading.RLock = field(default_factory=threading.RLock)

    @property
    def datastores_root(self) -> Path:
        return self.root / "datastores"

    def datastore_path(self, datastore: str, path: str) -> Path:
        """Local folder behind ``azureml://datastores/<datastore>/paths/<path>``."""
        target = (self.datastores_root / datastore / path.strip("/")).resolve()
        if not target.is_relative_to(self.datastores_root.resolve()):
            raise ValueError(f"datastore path escapes the datastore: {path!r}")
        return target

    def job(self, ws_id: str, name: str) -> Job | None:
        with self.lock:
            return self.jobs.get((ws_id.lower(), name))

    def compute(self, ws_id: str, name: str) -> dict[str, Any] | None:
        with self.lock:
            return self.computes.get((ws_id.lower(), name.lower()))

    def computes_in(self, ws_id: str) -> list[dict[str, Any]]:
        with self.lock:
            return [c for (w, _), c in self.computes.items() if w == ws_id.lower()]

    def jobs_in(self, ws_id: str) -> list[Job]:
        with self.lock:
            return [j for (w, _), j in self.jobs.items() if w == ws_id.lower()]

"""In-memory state of one control-plane session: the ARM resources (one store for every resource type, by
ARM id), and per workspace its code versions and jobs.

Every ARM resource the session holds (resource groups, storage accounts, key vaults, registries, workspaces,
computes, role assignments, locks, ...) is one `ArmResource` in `Store.resources`, keyed by its lower-case
ARM id: ARM resource ids compare without regard to case ("Resource IDs are case-insensitive",
Azure/azure-resource-manager-rpc `v1.0/resource-api-reference.md`; learn.microsoft.com
azure-resource-manager/management/resource-name-rules: "Resource names are case-insensitive unless noted"),
and keep the casing of the PUT that created them. The handlers that serve them: `doubles/localml/resources.py`
(any type with a vendored spec), with the ML workspace, its computes and key vaults in their own modules.
Datastore folders live on disk under the session directory, so a job's ``rw_mount`` output (e.g. a checkpoint
folder) is still there for the next job of the session.
"""

from __future__ import annotations

import datetime as dt
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PROVIDER = "providers/Microsoft.MachineLearningServices/workspaces"

#: A job input naming a data asset version: its ARM id, with or without azure-ai-ml's `azureml:` prefix
#: (doubles/localml/dataassets.py).
DATA_VERSION_ID = re.compile(
    r"^(?:azureml:)?(?P<ws>/subscriptions/[^/]+/resourceGroups/[^/]+/providers/"
    r"Microsoft\.MachineLearningServices/workspaces/[^/]+)/data/(?P<name>[^/]+)/versions/(?P<version>[^/]+)$",
    re.IGNORECASE,
)
#: Run states (azure-ai-ml RunHistoryConstants / JobStatus).
TERMINAL = {"Completed", "Failed", "Canceled"}
#: Workspace states other than live (doubles/localml/workspaces.py).
DELETING, SOFT_DELETED, PURGED = "Deleting", "SoftDeleted", "Purged"


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
class ArmResource:
    """One ARM resource of the session: `resource` as GET answers it (id, name, type, the envelope and
    `properties`), `sent` the body of the PUT that made it what it is (what the client sent, unchanged), and
    the `api_version` of that PUT."""

    resource: dict[str, Any]
    sent: dict[str, Any]
    api_version: str | None = None

    @property
    def id(self) -> str:
        return str(self.resource["id"])

    @property
    def type(self) -> str:
        return str(self.resource.get("type", ""))


@dataclass
class Store:
    root: Path  # session directory
    codes: dict[tuple[str, str, str], CodeVersion] = field(default_factory=dict)  # (ws_id, name, version)
    jobs: dict[tuple[str, str], Job] = field(default_factory=dict)  # (ws_id lower, name)
    #: Every ARM resource, by lower-case ARM id (module docstring).
    resources: dict[str, ArmResource] = field(default_factory=dict)
    #: What a cluster deleted with underlyingResourceAction=Detach leaves behind for a later PUT of the same
    #: name, by the compute's lower-case id (doubles/localml/computes.py).
    detached: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: The state of a workspace that is not live (Deleting, SoftDeleted, Purged), by its lower-case id
    #: (doubles/localml/workspaces.py).
    workspace_state: dict[str, str] = field(default_factory=dict)
    #: Deleted key vaults (`{"subscription", "resource"}`), keyed by the lower-case name: vault names are
    #: global (doubles/localml/keyvault.py).
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

    def data_uri(self, uri: str) -> tuple[str | None, str | None]:
        """For a job input naming a data asset version: (its registered dataUri, None), or (None, why not);
        for any other uri (None, None). Azure ML reads the version's dataUri for such an input
        (doubles/localml/dataassets.py)."""
        m = DATA_VERSION_ID.match(uri)
        if not m:
            return None, None
        found = self.arm(f"{m.group('ws')}/data/{m.group('name')}/versions/{m.group('version')}")
        if found is None:
            return None, f"data asset {m.group('name')}:{m.group('version')} not found in this workspace"
        return str(found.resource["properties"]["dataUri"]), None

    def job(self, ws_id: str, name: str) -> Job | None:
        with self.lock:
            return self.jobs.get((ws_id.lower(), name))

    # -- ARM resources ------------------------------------------------------------------------------------
    def arm(self, arm_id: str) -> ArmResource | None:
        with self.lock:
            return self.resources.get(arm_id.lower())

    def arm_put(self, record: ArmResource) -> bool:
        """Store `record` under its id; True when it is new (a create), False for a replace."""
        with self.lock:
            key = record.id.lower()
            created = key not in self.resources
            self.resources[key] = record
            return created

    def arm_delete(self, arm_id: str) -> ArmResource | None:
        with self.lock:
            return self.resources.pop(arm_id.lower(), None)

    def arm_under(self, scope: str, arm_type: str | None = None) -> list[ArmResource]:
        """Every resource whose id lies under `scope` (children, nested and extension resources at it or
        below), optionally of one ARM type, in id order."""
        prefix = scope.lower().rstrip("/") + "/"
        with self.lock:
            found = [r for k, r in self.resources.items() if k.startswith(prefix)]
        if arm_type is not None:
            found = [r for r in found if r.type.lower() == arm_type.lower()]
        return sorted(found, key=lambda r: r.id.lower())

    def arm_of_type(self, arm_type: str) -> list[ArmResource]:
        with self.lock:
            return [r for r in self.resources.values() if r.type.lower() == arm_type.lower()]

    def compute(self, ws_id: str, name: str) -> dict[str, Any] | None:
        found = self.arm(f"{ws_id}/computes/{name}")
        return found.resource if found is not None else None

    def computes_in(self, ws_id: str) -> list[dict[str, Any]]:
        return [
            r.resource
            for r in self.arm_under(ws_id, "Microsoft.MachineLearningServices/workspaces/computes")
            if r.id.lower().rsplit("/computes/", 1)[0] == ws_id.lower()
        ]

    def jobs_in(self, ws_id: str) -> list[Job]:
        with self.lock:
            return [j for (w, _), j in self.jobs.items() if w == ws_id.lower()]

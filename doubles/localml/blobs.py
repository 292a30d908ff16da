"""Azurite access for the control plane: fresh upload containers with SAS URLs, log uploads, code download.

Talks to Azurite with azure-storage-blob over its path-style URL (https://127.0.0.1:<port>/devstoreaccount1).
"""

from __future__ import annotations

import datetime as dt
import uuid
from pathlib import Path

from azure.storage.blob import (
    BlobSasPermissions,
    BlobServiceClient,
    ContainerSasPermissions,
    generate_blob_sas,
    generate_container_sas,
)

from doubles.localml.azurite import ACCOUNT_KEY, ACCOUNT_NAME

#: The container behind the workspace's artifact store (Azure ML names it "azureml").
ARTIFACT_CONTAINER = "azureml"
#: The workspace's datastores: name -> container in Azurite (what the datastore GET answers).
DATASTORES = {"workspaceblobstore": "azureml-blobstore", "workspaceartifactstore": ARTIFACT_CONTAINER}


class Blobs:
    def __init__(self, account_url: str, ca_file: Path) -> None:
        self.account_url = account_url.rstrip("/")
        self.client = BlobServiceClient(
            self.account_url,
            credential={"account_name": ACCOUNT_NAME, "account_key": ACCOUNT_KEY},
            connection_verify=str(ca_file),
        )

    def ensure_container(self, name: str) -> None:
        container = self.client.get_container_client(name)
        if not container.exists():
            container.create_container()

    def new_upload_container(self) -> tuple[str, str]:
        """A fresh container for one pending upload: (container URL, container URL with a write SAS)."""
        name = f"upload-{uuid.uuid4().hex}"
        self.client.create_container(name)
        sas = generate_container_sas(
            ACCOUNT_NAME,
            name,
            account_key=ACCOUNT_KEY,
            permission=ContainerSasPermissions(read=True, write=True, create=True, list=True, add=True),
            expiry=_in(hours=8),
        )
        url = f"{self.account_url}/{name}"
        return url, f"{url}?{sas}"

    def read_url(self, container: str, blob: str) -> str:
        sas = generate_blob_sas(
            ACCOUNT_NAME,
            container,
            blob,
            account_key=ACCOUNT_KEY,
            permission=BlobSasPermissions(read=True),
            expiry=_in(hours=2),
        )
        return f"{self.account_url}/{container}/{blob}?{sas}"

    def download_prefix(self, blob_url: str, dest: Path) -> int:
        """Download every blob under ``blob_url`` (``<account url>/<container>/<prefix>``) into ``dest``."""
        rest = blob_url[len(self.account_url) :].lstrip("/")
        container, _, prefix = rest.partition("/")
        prefix = prefix.strip("/")
        client = self.client.get_container_client(container)
        count = 0
        for item in client.list_blobs(name_starts_with=f"{prefix}/" if prefix else None):
            relative = item.name[len(prefix) :].lstrip("/") if prefix else item.name
            target = dest / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(client.download_blob(item.name).readall())
            count += 1
        return count

    def download_path(self, container: str, path: str, dest: Path) -> int:
        """The blob ``path`` of ``container`` to the file ``dest``, or every blob under ``path/`` into the
        folder ``dest`` (a datastore path names a file or a folder: a uri_file or a uri_folder input)."""
        path = path.strip("/")
        client = self.client.get_container_client(container)
        count = 0
        for item in client.list_blobs(name_starts_with=path or None):
            if item.name == path:
                target = dest
            elif not path or item.name.startswith(f"{path}/"):
                target = dest / item.name[len(path) :].lstrip("/")
            else:  # a sibling with the same prefix (`data2` beside `data`)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(client.download_blob(item.name).readall())
            count += 1
        return count

    def upload_folder(self, container: str, prefix: str, folder: Path) -> int:
        """Every file under ``folder`` to ``container`` as ``prefix/<relative path>``."""
        files = sorted(p for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else []
        for path in files:
            self.upload_file(container, f"{prefix}/{path.relative_to(folder).as_posix()}", path)
        return len(files)

    def upload_file(self, container: str, blob: str, path: Path) -> None:
        self.client.get_blob_client(container, blob).upload_blob(path.read_bytes(), overwrite=True)

    def list_names(self, container: str, prefix: str) -> list[str]:
        container_client = self.client.get_container_client(container)
        return [b.name for b in container_client.list_blobs(name_starts_with=prefix)]


def _in(hours: int) -> dt.datetime:
    return dt.datetime.now(dt.UTC) + dt.timedelta(hours=hours)

"""The HTTPS control plane: ARM (every resource type the stacks declare, `resources.py`) + Azure ML workspace
calls + run history, on one loopback port."""

from __future__ import annotations

import ssl
from pathlib import Path

from doubles.localml import arm, history
from doubles.localml.blobs import Blobs
from doubles.localml.certs import CertFiles
from doubles.localml.http import RoutedServer, Router
from doubles.localml.runner import Runner
from doubles.localml.store import Store
from doubles.localml.validation import ValidationLog

#: The local cloud's name and storage suffix, as the cloud metadata document announces them.
CLOUD_NAME = "LocalAzureML"
#: azure-storage-blob finds the account name only in hosts "<account>.blob.core.<...>".
STORAGE_SUFFIX = "core.localml.test"


class ControlPlane:
    def __init__(
        self,
        root: Path,
        certs: CertFiles,
        blobs: Blobs,
        region: str = "eastus",
        implicit_workspaces: bool = True,
    ) -> None:
        self.region = region
        self.implicit_workspaces = implicit_workspaces
        #: Polls of a long-running operation's Location that answer 202 before it is done (operations.py).
        self.lro_polls = 1
        self.storage_suffix = STORAGE_SUFFIX
        self.store = Store(root)
        #: Request bodies the Azure REST spec check rejected or could not check (validation.py).
        self.validation = ValidationLog()
        self.blobs = blobs
        self.runner = Runner(self.store, blobs)
        self.router = Router()
        arm.register(self.router, self)
        history.register(self.router, self)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(certs.cert, certs.key)
        self.server = RoutedServer(self.router, "control-plane", context)

    @property
    def base_url(self) -> str:
        return f"https://127.0.0.1:{self.server.port}"

    @property
    def metadata_url(self) -> str:
        return f"{self.base_url}/metadata/endpoints?api-version=2022-09-01"

    def cloud_metadata(self) -> list[dict[str, object]]:
        """ARM's /metadata/endpoints shape, read by azure-ai-ml's _get_clouds_by_metadata_url."""
        base = self.base_url + "/"
        return [
            {
                "name": CLOUD_NAME,
                "portal": "https://portal.localml.test/",
                "resourceManager": base,
                "authentication": {
                    "loginEndpoint": base,
                    "audiences": [base],
                    "tenant": "common",
                    "identityProvider": "AAD",
                },
                "suffixes": {"storage": STORAGE_SUFFIX},
                "media": base,
                "graph": base,
                "graphAudience": base,
            }
        ]

    def start(self) -> None:
        self.server.start()

    def stop(self) -> None:
        for job in list(self.store.jobs.values()):
            job.stop_event.set()
        for job in list(self.store.jobs.values()):
            if job.thread is not None:
                job.thread.join(timeout=30)
        self.server.stop()


class HandlersOnly:
    """The ARM handlers over a store, without a server, Azurite or a job runner: what a unit test of the ARM
    resources (or of a client of them, such as the offline provider) dispatches requests to, in-process
    (`router.dispatch(doubles.localml.http.Request(...))`). Long-running operations finish on their first
    poll; no bearer token is asked for. Calls that need blobs or runs (code versions, jobs) are not served."""

    def __init__(self, root: Path, region: str = "eastus", implicit_workspaces: bool = False) -> None:
        self.region = region
        self.implicit_workspaces = implicit_workspaces
        self.lro_polls = 0
        self.storage_suffix = STORAGE_SUFFIX
        self.store = Store(root)
        self.validation = ValidationLog()
        self.blobs = None
        self.runner = None
        self.router = Router()
        arm.register(self.router, self)  # type: ignore[arg-type]  # no blobs, no runner: see the docstring

    @property
    def base_url(self) -> str:
        return "https://localml.invalid"

    def cloud_metadata(self) -> list[dict[str, object]]:
        return []

"""``with LocalAzureML() as env:``: Azurite + the control plane + host services, and the environment
variables that point the real SDKs at them.

``env.environ`` holds only settings azure-ai-ml, azure-identity and requests already read:

- ``ARM_CLOUD_METADATA_URL``: the cloud-metadata document (azure-ai-ml ``_azure_environments.py``);
  its ``resourceManager`` is this control plane, so every ARM / workspace call comes here.
- ``AZUREML_CURRENT_CLOUD``: the name of that cloud (azure-ai-ml reads it first).
- ``IDENTITY_ENDPOINT`` + ``IDENTITY_HEADER``: App Service managed identity, which
  ``DefaultAzureCredential`` -> ``ManagedIdentityCredential`` uses (azure-identity ``app_service.py``).
- ``AZURE_TOKEN_CREDENTIALS=ManagedIdentityCredential``: keeps DefaultAzureCredential on that one
  credential, so a developer's Azure CLI login is never used against the local cloud.
- ``REQUESTS_CA_BUNDLE`` / ``SSL_CERT_FILE``: trust the session's CA (requests, Python's ssl).
- ``HTTPS_PROXY`` + ``NO_PROXY``: ``*.blob.core.localml.test`` reaches Azurite through the host services'
  CONNECT proxy; loopback addresses go direct.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from pathlib import Path

from doubles.localml.azurite import ACCOUNT_NAME, Azurite
from doubles.localml.blobs import DATASTORES, Blobs
from doubles.localml.certs import make_certs
from doubles.localml.controlplane import CLOUD_NAME, STORAGE_SUFFIX, ControlPlane
from doubles.localml.hostservices import HostServices

log = logging.getLogger("localml")

#: Variables that would steer azure-identity or requests elsewhere; dropped from a subprocess's env.
CONFLICTING = (
    "AZURE_CLIENT_ID",
    "AZURE_CLIENT_SECRET",
    "AZURE_TENANT_ID",
    "AZURE_CLIENT_CERTIFICATE_PATH",
    "AZURE_FEDERATED_TOKEN_FILE",
    "AZURE_USERNAME",
    "AZURE_PASSWORD",
    "MSI_ENDPOINT",
    "MSI_SECRET",
    "IMDS_ENDPOINT",
    "IDENTITY_SERVER_THUMBPRINT",
    "AZUREML_DEV_URL_MFE",
    "CURL_CA_BUNDLE",
    "HTTP_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "ALL_PROXY",
    "all_proxy",
)


class LocalAzureML:
    def __init__(
        self, root: Path | None = None, region: str = "eastus", implicit_workspaces: bool = True
    ) -> None:
        """`implicit_workspaces`: a workspace no one has PUT exists (jobs can be submitted to whatever
        workspace a stack outputs file names); False where `pulumi up` creates the workspace, as on Azure."""
        self._own_root = root is None
        self.implicit_workspaces = implicit_workspaces
        self.root = Path(root) if root is not None else Path(tempfile.mkdtemp(prefix="localml-"))
        self.region = region
        self.azurite: Azurite | None = None
        self.control_plane: ControlPlane | None = None
        self.host: HostServices | None = None
        self.environ: dict[str, str] = {}

    def start(self) -> LocalAzureML:
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def _start(self) -> None:
        certs = make_certs(self.root / "tls", ["localhost", f"*.blob.{STORAGE_SUFFIX}"], ["127.0.0.1"])
        self.azurite = Azurite(certs, self.root / "azurite").start()
        blobs = Blobs(self.azurite.blob_endpoint, certs.ca)
        for container in DATASTORES.values():
            blobs.ensure_container(container)
        self.host = HostServices(STORAGE_SUFFIX, lambda: self.azurite.port if self.azurite else 0)
        self.host.server.start()
        self.control_plane = ControlPlane(
            self.root / "session", certs, blobs, self.region, self.implicit_workspaces
        )
        self.control_plane.router.authorize = self.host.check_bearer
        self.control_plane.start()
        self.environ = {
            "ARM_CLOUD_METADATA_URL": self.control_plane.metadata_url,
            "AZUREML_CURRENT_CLOUD": CLOUD_NAME,
            "IDENTITY_ENDPOINT": self.host.identity_endpoint,
            "IDENTITY_HEADER": self.host.identity_header,
            "AZURE_TOKEN_CREDENTIALS": "ManagedIdentityCredential",
            "REQUESTS_CA_BUNDLE": str(certs.ca),
            "SSL_CERT_FILE": str(certs.ca),
            "HTTPS_PROXY": self.host.proxy_url,
            "NO_PROXY": "127.0.0.1,localhost",
        }
        log.info(
            "control plane %s, Azurite %s (account %s), host services %s",
            self.control_plane.base_url,
            self.azurite.blob_endpoint,
            ACCOUNT_NAME,
            self.host.proxy_url,
        )

    def subprocess_env(self, base: dict[str, str] | None = None) -> dict[str, str]:
        """``base`` (default os.environ) without conflicting credentials/proxies, plus ``environ``."""
        env = {k: v for k, v in (os.environ if base is None else base).items() if k not in CONFLICTING}
        return env | self.environ

    def stop(self) -> None:
        if self.control_plane is not None:
            self.control_plane.stop()
            self.control_plane = None
        if self.host is not None:
            self.host.server.stop()
            self.host = None
        if self.azurite is not None:
            self.azurite.stop()
            self.azurite = None
        if self._own_root:
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> LocalAzureML:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

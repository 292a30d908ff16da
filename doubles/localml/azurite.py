"""Start and stop Azurite's blob service (npm ``azurite``, pinned in doubles/localml/package.json).

Loopback only, in-memory persistence, HTTPS with the session's certificate. Nothing outlives
``Azurite.stop()``: the node process is terminated, then killed if it does not exit.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import threading
import time
from pathlib import Path

from doubles.localml.certs import CertFiles

PACKAGE_DIR = Path(__file__).resolve().parent
AZURITE_BIN = PACKAGE_DIR / "node_modules" / ".bin" / "azurite-blob"

#: Azurite's well-known development account (documented in Azurite's README).
ACCOUNT_NAME = "devstoreaccount1"
ACCOUNT_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="


class AzuriteError(RuntimeError):
    pass


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Azurite:
    """``with Azurite(certs, workdir) as az: az.port``."""

    def __init__(self, certs: CertFiles, workdir: Path, start_timeout: float = 60.0) -> None:
        self.certs = certs
        self.workdir = workdir
        self.start_timeout = start_timeout
        self.port = 0
        self._proc: subprocess.Popen[str] | None = None
        self._lines: list[str] = []

    @property
    def blob_endpoint(self) -> str:
        """Path-style account URL: https://127.0.0.1:<port>/devstoreaccount1."""
        return f"https://127.0.0.1:{self.port}/{ACCOUNT_NAME}"

    def start(self) -> Azurite:
        node = shutil.which("node")
        if not AZURITE_BIN.exists() or node is None:
            raise AzuriteError(
                f"Azurite is not installed at {AZURITE_BIN}: run `npm ci --prefix localml` "
                "(or `make setup`); Node.js 20 or later is needed"
            )
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        argv = [
            str(AZURITE_BIN),
            "--blobHost",
            "127.0.0.1",
            "--blobPort",
            str(self.port),
            "--inMemoryPersistence",
            "--skipApiVersionCheck",
            "--loose",
            "--silent",
            "--cert",
            str(self.certs.cert),
            "--key",
            str(self.certs.key),
        ]
        env = {k: v for k, v in os.environ.items() if k != "AZURITE_ACCOUNTS"}
        self._proc = subprocess.Popen(
            argv, cwd=self.workdir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
        )
        ready = threading.Event()
        threading.Thread(target=self._pump, args=(ready,), daemon=True).start()
        deadline = time.monotonic() + self.start_timeout
        while not ready.wait(0.1):
            if self._proc.poll() is not None or time.monotonic() > deadline:
                out = "".join(self._lines[-20:])
                self.stop()
                raise AzuriteError(f"Azurite did not start on 127.0.0.1:{self.port}:\n{out}")
        return self

    def _pump(self, ready: threading.Event) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        for line in self._proc.stdout:
            self._lines.append(line)
            if "successfully listens" in line:
                ready.set()

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)

    def __enter__(self) -> Azurite:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

"""The offline azure-native provider as one process for all the CLI runs of a gate.

Started before the first CLI run (it imports the SDK modules and reads the specs while the gate sets up), it
prints its port, and every `pulumi` run attaches to it through `PULUMI_DEBUG_PROVIDERS=azure-native:<port>`
(pulumi/pulumi sdk/go/common/resource/plugin/provider_plugin.go `GetProviderAttachPort`: the engine dials the
port and calls `Attach` instead of starting the plugin). One provider instead of one per run saves its start
and its imports three times (docs/benchmarks.md, "Where the gate's seconds go").
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections import deque
from pathlib import Path

from preflight import layout
from preflight.provider import EXISTING_ENV, JOURNAL_ENV

#: On the provider's PYTHONPATH: the folder this project is imported from (the checkout, or site-packages).
PACKAGE_ROOT = layout.IMPORT_ROOT


class ProviderError(RuntimeError):
    """The provider did not start: the message carries the end of its stderr."""


class ProviderProcess:
    """`with ProviderProcess(existing=F, journal=J) as p: p.port`."""

    def __init__(
        self,
        existing: Path | None = None,
        journal: Path | None = None,
        env: dict[str, str] | None = None,
        start_timeout: float = 60.0,
    ) -> None:
        self.env = dict(os.environ if env is None else env)
        self.env["PYTHONPATH"] = os.pathsep.join(
            [str(PACKAGE_ROOT), *filter(None, [self.env.get("PYTHONPATH")])]
        )
        self.env.pop(EXISTING_ENV, None)
        self.env.pop(JOURNAL_ENV, None)
        if existing is not None:
            self.env[EXISTING_ENV] = str(existing)
        if journal is not None:
            self.env[JOURNAL_ENV] = str(journal)
        self.start_timeout = start_timeout
        self._proc: subprocess.Popen[bytes] | None = None
        self._stderr: deque[str] = deque(maxlen=40)
        self._port: int | None = None

    def spawn(self) -> ProviderProcess:
        """Start it; returns at once (`port` waits for it)."""
        self._proc = subprocess.Popen(
            [sys.executable, "-m", layout.own("preflight.provider")],
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        threading.Thread(target=self._drain, daemon=True).start()
        return self

    def _drain(self) -> None:
        assert self._proc is not None and self._proc.stderr is not None
        for line in self._proc.stderr:
            self._stderr.append(line.decode(errors="replace").rstrip())

    @property
    def port(self) -> int:
        if self._port is None:
            assert self._proc is not None and self._proc.stdout is not None
            box: list[bytes] = []
            reader = threading.Thread(target=lambda: box.append(self._proc.stdout.readline()), daemon=True)
            reader.start()
            reader.join(self.start_timeout)
            line = box[0].decode(errors="replace").strip() if box else ""
            if not line.isdigit():
                self.close()
                tail = "\n".join(self._stderr) or "(nothing on stderr)"
                raise ProviderError(f"the offline azure-native provider did not start:\n{tail}")
            self._port = int(line)
        return self._port

    def close(self) -> None:
        if self._proc is not None:
            if self._proc.poll() is None:
                self._proc.terminate()
                try:
                    self._proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self._proc.kill()
                    self._proc.wait()
            for stream in (self._proc.stdout, self._proc.stderr):
                if stream is not None:
                    stream.close()
            self._proc = None

    def __enter__(self) -> ProviderProcess:
        return self.spawn()

    def __exit__(self, *exc: object) -> None:
        self.close()

"""One Azurite + local control plane per test module (tests/integration/e2e), started once, stopped at the
end, and the dev stack deployed into it with the real `pulumi up` (doubles/localml/pulumiup.py): the
workspace, its cluster and every other resource exist in localml's ARM store, as after the deploy workflow.
The control plane has no implicit workspaces: what the jobs reach is what `pulumi up` made."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from doubles.localml import LocalAzureML
from doubles.localml.pulumiup import StackDeployment
from stackconfig.loader import read_config_block

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalAzureML]:
    with LocalAzureML(root=tmp_path_factory.mktemp("localml"), implicit_workspaces=False) as env:
        yield env


def stack_text(config: dict[str, Any]) -> str:
    """A stack file with this `config:` block."""
    return yaml.safe_dump({"config": config}, sort_keys=False)


def stack_config(stack: str) -> dict[str, Any]:
    return read_config_block(ROOT / f"Pulumi.{stack}.yaml")


def deployment(
    local: LocalAzureML, stack: str, work: Path, config: dict[str, Any] | None = None, policy: bool = False
) -> StackDeployment:
    """`pulumi` runs of `stack` (with `config` instead of its stack file's) against `local`."""
    text = stack_text(config) if config is not None else None
    return StackDeployment(stack, work, local.subprocess_env(), stack_text=text, policy=policy)


def up_and_outputs(d: StackDeployment, path: Path) -> dict[str, Any]:
    """`pulumi up` (asserting it succeeds), then `pulumi stack output --json --show-secrets` written to
    `path`."""
    up = d.up(skip_preview=True)
    assert up.ok, up.tail(40)
    code, outputs, err = d.outputs()
    assert code == 0, err
    path.write_text(json.dumps(outputs, indent=2))
    return outputs


@pytest.fixture(scope="module")
def outputs_file(local: LocalAzureML, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The dev stack deployed with `pulumi up` (the policy pack too, as the deploy workflow runs it), and its
    `pulumi stack output --json --show-secrets`."""
    work = tmp_path_factory.mktemp("dev")
    with deployment(local, "dev", work / "deploy", policy=True) as d:
        up_and_outputs(d, work / "dev-outputs.json")
    return work / "dev-outputs.json"


def arm_request(local: LocalAzureML, method: str, path: str, api: str, body: Any = None) -> tuple[int, Any]:
    """One ARM call to localml over HTTPS with a token of the session's managed identity, as any client makes
    it (someone's change outside Pulumi; a resource outside the stack)."""
    import http.client
    import ssl

    assert local.control_plane is not None and local.host is not None
    conn = http.client.HTTPConnection("127.0.0.1", local.host.server.port, timeout=30)
    conn.request(
        "GET", "/msi/token?resource=https://x", headers={"X-IDENTITY-HEADER": local.host.identity_header}
    )
    token = json.loads(conn.getresponse().read())["access_token"]
    conn.close()
    context = ssl.create_default_context(cafile=local.environ["REQUESTS_CA_BUNDLE"])
    conn = http.client.HTTPSConnection(
        "127.0.0.1", local.control_plane.server.port, timeout=30, context=context
    )
    data = json.dumps(body).encode() if body is not None else None
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    conn.request(method, f"{path}?api-version={api}", body=data, headers=headers)
    resp = conn.getresponse()
    text = resp.read()
    conn.close()
    return resp.status, json.loads(text) if text else None

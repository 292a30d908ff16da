"""What the ARM and run-history handlers read of the control plane: its state, not the server around it.

`doubles.localml.controlplane.ControlPlane` satisfies this; the handler modules (arm, resources, computes,
workspaces, keyvault, operations, history) type against it, so none of them imports controlplane, which
imports them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from doubles.localml.blobs import Blobs
    from doubles.localml.runner import Runner
    from doubles.localml.store import Store
    from doubles.localml.validation import ValidationLog


class Plane(Protocol):
    region: str
    #: Whether a workspace no one has PUT exists (answers GET, takes jobs and computes); off where `pulumi up`
    #: creates the workspace (doubles/localml/workspaces.py).
    implicit_workspaces: bool
    #: Polls of a long-running operation's Location that answer 202 before it is done (operations.py).
    lro_polls: int
    storage_suffix: str
    store: Store
    validation: ValidationLog
    blobs: Blobs
    runner: Runner

    @property
    def base_url(self) -> str: ...

    def cloud_metadata(self) -> list[dict[str, object]]: ...

"""Read the stack outputs: `pulumi stack output --json --stack S`, or the same JSON from a file.

`--stack S` reads `$AZML_GPU_OUTPUTS_DIR/S.json` instead of asking the Pulumi CLI when that variable names a
folder: offline, no Pulumi CLI needed. `python -m doubles.localml serve --deploy S` sets it in the environment
it
prints (the outputs of the stack it deployed on the local control plane); a CI job can point it at the
outputs an earlier job saved.

The shape is defined once, in `stackconfig.outputs` (StackOutputs / ClusterOutput); this module only
fetches the JSON and turns every way it can go wrong into a `UsageError` that names the flag.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jobs.errors import UsageError

if TYPE_CHECKING:
    from stackconfig.outputs import ClusterOutput, StackOutputs


def _validate(raw: Any, origin: str) -> StackOutputs:
    from pydantic import ValidationError

    from stackconfig.outputs import StackOutputs

    try:
        return StackOutputs.model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '<root>'}: {err['msg']}" for err in exc.errors()
        )
        raise UsageError(
            f"{origin} is not in the stack outputs shape ({problems}); "
            "re-export it with `pulumi stack output --json` from a stack deployed by this project"
        ) from None


def from_file(path: str | Path) -> StackOutputs:
    """`--outputs FILE`: the JSON `pulumi stack output --json` prints (or the offline gate writes)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(
            f"--outputs {path}: no such file; pass the JSON written by "
            "`pulumi stack output --json > FILE` or use --stack NAME"
        ) from None
    except IsADirectoryError:
        raise UsageError(f"--outputs {path}: is a folder; pass the JSON file itself") from None
    except OSError as exc:
        raise UsageError(f"--outputs {path}: cannot read it ({exc.strerror})") from None
    except UnicodeDecodeError as exc:
        raise UsageError(
            f"--outputs {path}: not UTF-8 text (byte {exc.start}); re-export it with "
            "`pulumi stack output --json > FILE` (in PowerShell add `| Out-File -Encoding utf8`)"
        ) from None
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"--outputs {path}: not JSON ({exc.msg} at line {exc.lineno}); "
            "write it with `pulumi stack output --json > FILE`"
        ) from None
    return _validate(raw, f"--outputs {path}")


#: A folder of `<stack>.json` stack outputs that `--stack` reads instead of the Pulumi CLI.
OUTPUTS_DIR_ENV = "AZML_GPU_OUTPUTS_DIR"


def from_outputs_dir(stack: str, folder: str) -> StackOutputs:
    """`--stack S` with AZML_GPU_OUTPUTS_DIR set: `<folder>/S.json`."""
    path = Path(folder) / f"{stack}.json"
    if not path.is_file():
        known = sorted(p.stem for p in Path(folder).glob("*.json")) if Path(folder).is_dir() else []
        raise UsageError(
            f"--stack {stack}: no {path} ({OUTPUTS_DIR_ENV}={folder} holds the outputs of: "
            f"{', '.join(known) or 'no stack'}); use one of those stacks, start `python -m doubles.localml "
            "serve "
            f"--deploy {stack}`, or unset {OUTPUTS_DIR_ENV} to ask the Pulumi CLI"
        )
    try:
        return from_file(path)
    except UsageError as exc:
        raise UsageError(f"--stack {stack} ({OUTPUTS_DIR_ENV}): {exc}") from None


def from_stack(stack: str) -> StackOutputs:
    """`--stack S`: `$AZML_GPU_OUTPUTS_DIR/S.json` when that is set, else the real Pulumi CLI
    (`pulumi stack output --json --stack S`)."""
    folder = os.environ.get(OUTPUTS_DIR_ENV)
    if folder:
        return from_outputs_dir(stack, folder)
    exe = shutil.which("pulumi")
    if exe is None:
        raise UsageError(
            f"--stack {stack}: the `pulumi` CLI is not on PATH; install it "
            "(https://www.pulumi.com/docs/install/), pass --outputs FILE with the JSON "
            f"of `pulumi stack output --json`, or, offline, set {OUTPUTS_DIR_ENV} to a folder of "
            f"<stack>.json outputs (`python -m doubles.localml serve --deploy {stack}` prints it)"
        )
    proc = subprocess.run(
        [exe, "stack", "output", "--json", "--stack", stack], capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        detail = (proc.stderr or proc.stdout).strip().splitlines()
        raise UsageError(
            f"--stack {stack}: `pulumi stack output` failed ({detail[-1] if detail else 'no output'}); "
            "check the stack name with `pulumi stack ls` or pass --outputs FILE"
        )
    try:
        raw = json.loads(proc.stdout)
    except json.JSONDecodeError:
        raise UsageError(f"--stack {stack}: `pulumi stack output --json` did not print JSON") from None
    return _validate(raw, f"--stack {stack}")


def load(stack: str | None, outputs_file: str | None) -> StackOutputs:
    """Exactly one of `--stack` / `--outputs`."""
    if stack and outputs_file:
        raise UsageError("pass either --stack NAME or --outputs FILE, not both")
    if outputs_file:
        return from_file(outputs_file)
    if stack:
        return from_stack(stack)
    raise UsageError(
        "no stack outputs: pass --stack NAME (reads `pulumi stack output --json`) or --outputs FILE"
    )


def cluster(outputs: StackOutputs, name: str, flag: str = "--cluster") -> ClusterOutput:
    """The cluster named `name`, or a UsageError that lists the clusters the stack has."""
    clusters = outputs.clusters
    if name in clusters:
        return clusters[name]
    known = ", ".join(sorted(clusters)) or "none"
    raise UsageError(
        f"{flag} {name}: no such cluster in the stack outputs (clusters: {known}); "
        "pick one of those or deploy it first"
    )

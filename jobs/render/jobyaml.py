"""Render a built job as CLI v2 YAML that `azure.ai.ml.load_job` and `az ml job create -f` accept.

The YAML is the dump of the *job* (`command(...)._to_job().dump()`), not of the builder node: dumping
the builder writes a `component:` block that load_job rejects (platform-notes, azure-ai-ml 1.35).
A `--file` job (jobs/userjob.py) is already the job (azure-ai-ml's `CommandJob`) and is dumped as is.
`code:` and local input paths are rewritten relative to the YAML file, which is how the CLI and load_job
resolve them (reference-yaml-job-command: "local path ... relative to the YAML file"; azure-ai-ml resolves
an input against the job's `_base_path`, the YAML's folder). The dump writes a local input path as
`azureml:<path>`, which would name a data asset, so each is written back as the relative path; any URL input
(`https://...`, a --file job's or train's `--data`) likewise comes out as `azureml:https://...` and is written
back as the URL (azure-ai-ml's `is_url`: a scheme and a host; `azureml://datastores/...` is kept); a local
`environment.build.path` is written relative to the YAML too.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import yaml

from jobs.builders import SRC_DIR, BuiltJob
from jobs.errors import UsageError

#: JSON schema of a command job, as in the azureml-examples YAML files.
SCHEMA = "https://azuremlschemas.azureedge.net/latest/commandJob.schema.json"


def to_yaml(built: BuiltJob, out: Path) -> str:
    """The YAML text for `built`, with `code:` relative to where it will be written."""
    from azure.ai.ml._utils.utils import is_url

    from jobs.azure_client import quiet_sdk_logs

    quiet_sdk_logs()  # the dump walks azure-ai-ml's experimental schema classes
    buf = io.StringIO()
    job = built.job._to_job() if hasattr(built.job, "_to_job") else built.job
    job.dump(buf)
    data = yaml.safe_load(buf.getvalue())
    code = built.extra.get("code", SRC_DIR)  # a --file job's own code folder (jobs/userjob.py)
    if isinstance(code, Path) or os.path.isabs(str(code)):
        data["code"] = os.path.relpath(code, out.resolve().parent)
    for name, local in built.extra.get("local_inputs", {}).items():
        data["inputs"][name]["path"] = os.path.relpath(local, out.resolve().parent)
    for inp in (data.get("inputs") or {}).values():
        path = inp.get("path") if isinstance(inp, dict) else None
        if isinstance(path, str) and path.startswith("azureml:") and is_url(path[len("azureml:") :]):
            inp["path"] = path[len("azureml:") :]  # the dump's `azureml:https://...` names no asset
    env = data.get("environment")
    if isinstance(env, dict) and os.path.isabs(str((env.get("build") or {}).get("path", ""))):
        env["build"]["path"] = os.path.relpath(env["build"]["path"], out.resolve().parent)
    # Drop empty mappings the dump writes; the CLI and load_job read them as absent.
    data = {k: v for k, v in data.items() if v not in ({}, None)}
    return yaml.safe_dump({"$schema": SCHEMA, **data}, sort_keys=False, default_flow_style=False)


def environment_of(built: BuiltJob) -> str:
    """The environment the job runs in, as the YAML names it (the pinned default or `--environment`)."""
    env = built.job.environment
    return env if isinstance(env, str) else str(getattr(env, "id", None) or getattr(env, "name", env))


def write(built: BuiltJob, out: Path) -> Path:
    """Write the YAML, creating missing parent folders (check them first with `paths.check_out_file`)."""
    text = to_yaml(built, out)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"--out {out}: cannot write it ({exc.strerror}); pick another path") from None
    return out


def out_paths(out: Path, built: list[BuiltJob]) -> list[Path]:
    """One file per job: `--out x.yml` for one job; `x-<label suffix>.yml` for the scaling pair."""
    if len(built) == 1:
        return [out]
    stem, suffix = out.stem, out.suffix or ".yml"
    return [out.with_name(f"{stem}-{b.label.split('-', 1)[-1]}{suffix}") for b in built]

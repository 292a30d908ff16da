"""A job as azure-ai-ml sends it, for comparing a `--file` job with what render wrote: `load_job(path)` ->
the `CommandJob` create_or_update sends (`Command._to_job()`) -> its REST body (`_to_rest_object()`), with
each local input path resolved against the YAML's folder, as `JobOperations._resolve_job_input` does
(`Path(base_path, entry.path)`), so two files in different folders naming one folder compare equal."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from azure.ai.ml import load_job


def rest(path: Path) -> dict[str, Any]:
    node = load_job(path)
    base = Path(node._base_path)
    body = node._to_job()._to_rest_object().as_dict()["properties"]
    for inp in (body.get("inputs") or {}).values():
        uri = inp.get("uri")
        if (
            uri and "://" not in uri and ":" not in uri and "@" not in uri
        ):  # a local path (azure-ai-ml's rule)
            inp["uri"] = str((base / uri).resolve())
    env = body.get("environmentId")
    if not isinstance(env, (str, type(None))):  # an inline Environment: compare what it is built from
        build = env.build
        body["environmentId"] = {
            "image": env.image,
            "conda_file": env.conda_file,
            "build": str((base / build.path).resolve()) if build else None,
            "dockerfile": build.dockerfile_path if build else None,
        }
    code = body.get("codeId")
    if code and "://" not in code and not code.startswith("azureml:"):
        body["codeId"] = str((base / code).resolve())
    return body


#: What the platform sets (jobs/userjob.py), leaving each of these keys out of the comparison.
PLATFORM_KEYS = ("computeId", "command", "distribution", "displayName", "experimentName")


def differences(original: Path, rendered: Path, ckpt_output: str | None = "ckpt") -> list[str]:
    """Every field of `original` that `rendered` does not carry as the user wrote it, minus what the platform
    changes: compute, the command's rank-line prefix (the user's command must still end it), instance_count,
    process count, the checkpoint output, azml-gpu.* tags, and settings where the file is silent."""
    a, b = rest(original), rest(rendered)
    out = []
    if not b["command"].endswith(a["command"].strip()):
        out.append(f"command: {b['command']!r} does not end with {a['command']!r}")
    for key in sorted(set(a) | set(b)):
        if key in PLATFORM_KEYS:
            continue
        va, vb = a.get(key), b.get(key)
        if key in ("environmentVariables", "tags", "outputs", "inputs", "properties"):
            va, vb = va or {}, vb or {}
            for k in va:
                if va[k] != vb.get(k):
                    out.append(f"{key}.{k}: {va[k]!r} became {vb.get(k)!r}")
            extra = set(vb) - set(va) - ({ckpt_output} if key == "outputs" else set())
            if key == "tags":
                extra = {k for k in extra if not k.startswith("azml-gpu.")}
            if key in ("inputs", "properties") and extra:
                out.append(f"{key}: added {sorted(extra)}")
            continue
        if key in ("resources", "limits"):
            va, vb = va or {}, vb or {}
            for k in va:
                if k not in ("instanceCount", "properties") and va[k] != vb.get(k):
                    out.append(f"{key}.{k}: {va[k]!r} became {vb.get(k)!r}")
            continue
        if va != vb:
            out.append(f"{key}: {va!r} became {vb!r}")
    if (a.get("distribution") or {}).get("distributionType") not in (
        None,
        b["distribution"]["distributionType"],
    ):
        out.append("distribution: type changed")
    return out

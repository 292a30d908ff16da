"""A submitted health job's verdict: its report from the downloaded logs, node ids from the cluster.

Exit codes as for smoke (`jobs.submit.lifecycle`): 0 no node failed, 1 a node failed (or the job failed before
its report), 2 another terminal state, 3 create failed, 4 status query failed.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from jobs.health import report as health_report
from jobs.health.report import render_text  # noqa: F401 - the command prints through judge

if TYPE_CHECKING:
    from azure.ai.ml import MLClient

    from jobs.builders import BuiltJob
    from jobs.submit.lifecycle import Outcome


def outcome(ml: MLClient, built: BuiltJob, out: Outcome, code: int) -> tuple[dict[str, Any], int]:
    """(the report as JSON, the exit code) for a submitted health job."""
    if out.logs is None:
        return {"error": out.error or "no logs: the job was not followed to its end (--no-wait)"}, code
    report = health_report.read(Path(out.logs))
    compute = built.extra.get("compute")
    if compute and report.nodes:
        try:
            listed = list(ml.compute.list_nodes(compute))
        except Exception as exc:  # any SDK/HTTP error: the report stands without node ids
            for n in report.nodes:
                n.node_id_note = f"compute.list_nodes({compute}) failed: {type(exc).__name__}: {exc}"[:300]
        else:
            health_report.attach_node_ids(report, listed, out.name)
    elif report.nodes:
        for n in report.nodes:
            n.node_id_note = "serverless compute: no cluster to list nodes of"
    result = report.to_json()
    if out.status in ("Completed", "Failed") and report.summary is not None:
        code = 1 if report.failed else 0
    elif out.status == "Completed":
        code = 1  # completed without a report: health.py did not run to its end
    return result, code

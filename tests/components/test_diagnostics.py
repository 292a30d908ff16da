"""components/diagnostics.py: the workspace's resource logs and metrics go to its Log Analytics workspace when
`identity.diagnostic_settings` is on (prod), and nothing is declared when it is off (dev: ingestion is billed
per GB)."""

from __future__ import annotations

from .components_helpers import DIAGNOSTIC_SETTING, DIAGNOSTICS_COMPONENT, LOG_ANALYTICS, ML_WORKSPACE, one


def test_diagnostic_setting_sends_all_logs_to_log_analytics(runs):
    run = runs["prod"]
    diag = one(run, DIAGNOSTIC_SETTING)
    assert diag.inputs == {
        "name": "to-log-analytics",
        "resourceUri": one(run, ML_WORKSPACE).id,
        "workspaceId": one(run, LOG_ANALYTICS).id,
        "logs": [{"categoryGroup": "allLogs", "enabled": True}],
        "metrics": [{"category": "AllMetrics", "enabled": True}],
    }
    assert one(run, DIAGNOSTICS_COMPONENT).outputs == {"settingId": diag.id}


def test_no_diagnostic_setting_unless_asked(runs, typed_configs):
    assert typed_configs["dev"].identity.diagnostic_settings is False
    assert runs["dev"].of_type(DIAGNOSTIC_SETTING) == [] and runs["dev"].of_type(DIAGNOSTICS_COMPONENT) == []

"""WorkspaceDiagnostics: the Azure ML workspace's resource logs and metrics, sent to its Log Analytics.

Resource: `azure-native:monitor:DiagnosticSetting` (azure-native 3.29: Azure REST API 2021-05-01-preview).
`categoryGroup: allLogs` and the `AllMetrics` category are what Azure Verified Modules send by default
(Azure/bicep-registry-modules avm/res/machine-learning-services/workspace/main.bicep,
workspace_diagnosticSettings); category groups: learn.microsoft.com/azure/azure-monitor/essentials/
diagnostic-settings ("allLogs"). Log ingestion is billed per GB (PerGB2018), hence off by default.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_azure_native.monitor as monitor

TYPE_TOKEN = "azml-gpu:components:WorkspaceDiagnostics"


@dataclass(frozen=True)
class WorkspaceDiagnosticsArgs:
    """Arguments of the WorkspaceDiagnostics component.

    Required:
    - `workspace_id`: ARM id of the Azure ML workspace (the diagnostic setting's `resourceUri`).
    - `log_analytics_id`: ARM id of the Log Analytics workspace that receives the logs.

    Optional:
    - `name` (default "to-log-analytics"): the setting's name, unique per resource.
    """

    workspace_id: pulumi.Input[str]
    log_analytics_id: pulumi.Input[str]
    name: str = "to-log-analytics"


class WorkspaceDiagnostics(pulumi.ComponentResource):
    """One DiagnosticSetting. Output: `setting`."""

    def __init__(
        self, name: str, args: WorkspaceDiagnosticsArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__(TYPE_TOKEN, name, None, opts)
        self.setting = monitor.DiagnosticSetting(
            f"{name}-diag",
            name=args.name,
            resource_uri=args.workspace_id,
            workspace_id=args.log_analytics_id,
            logs=[monitor.DiagnosticsLogSettingsArgs(category_group="allLogs", enabled=True)],
            metrics=[monitor.DiagnosticsMetricSettingsArgs(category="AllMetrics", enabled=True)],
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.register_outputs({"settingId": self.setting.id})

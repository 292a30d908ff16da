"""The one place an `MLClient` is built: `ml_client(outputs)`.

    MLClient(DefaultAzureCredential(), subscription_id, resource_group, workspace_name)

from the stack outputs (`stackconfig.outputs.StackOutputs`), and `arm_client(ml)`: a plain ARM pipeline
(azure-mgmt-core's `ARMPipelineClient`) on the same credential and cloud, for the few management calls
azure-ai-ml has no operation for (`python -m jobs teardown`: the key vault). There is no other knob here:
where the clients talk to, and how they authenticate, is decided only by settings the real SDKs already read
from the environment. Read from the installed sources (azure-ai-ml 1.35.2, azure-identity 1.27.0,
azure-core 1.41):

azure-ai-ml, which endpoint (`azure/ai/ml/_azure_environments.py`, `_utils/utils.py`, `_ml_client.py`):
- `AZUREML_CURRENT_CLOUD`: cloud name (AzureCloud, AzureChinaCloud, AzureUSGovernment or a name from the
  metadata below); `_get_default_cloud_name()` reads it first (`constants/_common.py` AZUREML_CLOUD_ENV_NAME).
- `ARM_CLOUD_METADATA_URL`: URL of an ARM cloud-metadata document (`ArmConstants.METADATA_URL_ENV_NAME`);
  its `resourceManager` becomes the base URL of every control-plane call.
- `AZUREML_DEV_URL_MFE`: overrides the control-plane base URL (`_get_mfe_url_override()`, read by
  `MLClient.__init__` through `_get_base_url_from_metadata(is_local_mfe=True)`); when that URL is
  plain http, MLClient passes `enforce_https=False` to its operations (`_ml_client.py`, `_is_https_url`).

azure-identity, which credential (`azure/identity/_constants.py` EnvironmentVariables):
- `AZURE_CLIENT_ID`, `AZURE_TENANT_ID`, `AZURE_CLIENT_SECRET` (or `AZURE_CLIENT_CERTIFICATE_PATH`,
  `AZURE_FEDERATED_TOKEN_FILE`), `AZURE_AUTHORITY_HOST`: EnvironmentCredential / workload identity.
- `IDENTITY_ENDPOINT` + `IDENTITY_HEADER`, `MSI_ENDPOINT`, `IMDS_ENDPOINT`: managed identity endpoint.
- `AZURE_TOKEN_CREDENTIALS`: restricts the DefaultAzureCredential chain (e.g. `ManagedIdentityCredential`).

azure-core transport (`azure/core/pipeline/transport/_requests_basic.py` uses `requests`):
- `REQUESTS_CA_BUNDLE` / `CURL_CA_BUNDLE`: CA bundle for TLS, read by `requests`;
  `HTTPS_PROXY` / `NO_PROXY` likewise.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from azure.ai.ml import MLClient
    from azure.mgmt.core import ARMPipelineClient

    from stackconfig.outputs import StackOutputs

NO_CREDENTIALS = (
    "no Azure credentials: run az login, or set AZURE_CLIENT_ID/AZURE_TENANT_ID/AZURE_FEDERATED_TOKEN_FILE "
    "(see docs/jobs.md)"
)

#: ARM's scope in the public cloud, if the client does not say which it uses.
_ARM_SCOPE = "https://management.azure.com/.default"


class NoCredentials(Exception):
    """DefaultAzureCredential found no credential; the message is `NO_CREDENTIALS`, one line."""

    def __init__(self) -> None:
        super().__init__(NO_CREDENTIALS)


class _DropMessages(logging.Filter):
    """Drops the records whose message starts with one of `prefixes`; lets every other record through."""

    def __init__(self, *prefixes: str) -> None:
        super().__init__()
        self.prefixes = prefixes

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(self.prefixes)


#: azure-ai-ml's job operations log this at INFO on every `jobs.get` when the token has no tenant claim
#: (`operations/_job_operations.py`); MLClient attaches an INFO stream handler on stderr to `azure.ai.ml`.
_NO_TENANT = _DropMessages("Proceeding with no tenant id")
#: `workspaces.begin_delete` logs this at INFO once the DELETE is sent
#: (`operations/_workspace_operations_base.py`); `python -m jobs teardown` prints its own progress line.
_DELETE_STARTED = _DropMessages("Delete request initiated for workspace")


def quiet_sdk_logs() -> None:
    """Silence the SDK log lines that are noise on a command line, and only those.

    - `azure.identity`: DefaultAzureCredential logs every credential it tried, several lines, at WARNING
      when the chain fails (`_credentials/chain.py`); `ml_client` turns that failure into one line instead.
    - `azure.ai.ml._utils._experimental`: "Class X: This is an experimental class ..." at WARNING, once per
      schema class the job's serialisation touches (six per submit); that logger logs nothing else.
    - `azure.ai.ml.operations._job_operations`: only its "Proceeding with no tenant id appended to studio
      URL" line (a filter); its other messages stay.
    - `azure.ai.ml.operations._workspace_operations_base`: only its "Delete request initiated for workspace"
      line (a filter).
    """
    logging.getLogger("azure.identity").setLevel(logging.CRITICAL)
    logging.getLogger("azure.ai.ml._utils._experimental").setLevel(logging.ERROR)
    logging.getLogger("azure.ai.ml.operations._job_operations").addFilter(_NO_TENANT)
    logging.getLogger("azure.ai.ml.operations._workspace_operations_base").addFilter(_DELETE_STARTED)


def check_credential(credential: Any, scopes: list[str] | tuple[str, ...]) -> None:
    """Get one token now, so a missing credential is one clear error before any call (or job) is made.

    The token is cached by the credential, so the client's first request reuses it.
    """
    from azure.core.exceptions import ClientAuthenticationError

    try:
        credential.get_token(*scopes)
    except ClientAuthenticationError:
        raise NoCredentials() from None


def ml_client(outputs: StackOutputs) -> MLClient:
    """An MLClient for the workspace the stack deployed; raises `NoCredentials` when there are none."""
    from azure.ai.ml import MLClient
    from azure.identity import DefaultAzureCredential

    quiet_sdk_logs()
    credential = DefaultAzureCredential()
    client = MLClient(
        credential,
        subscription_id=outputs.subscription_id,
        resource_group_name=outputs.resource_group,
        workspace_name=outputs.workspace_name,
    )
    check_credential(credential, _scopes(client))
    return client


def _scopes(ml: MLClient) -> list[str]:
    # MLClient puts the cloud's ARM scope (`resourceManager` + /.default) in the kwargs it hands to
    # its service clients (`_azure_environments._get_cloud_information_from_metadata`).
    return list((getattr(ml, "_kwargs", None) or {}).get("credential_scopes") or [_ARM_SCOPE])


def arm_client(ml: MLClient, **kwargs: Any) -> ARMPipelineClient:
    """An ARM pipeline on `ml`'s credential, for the cloud azure-ai-ml resolved. `kwargs` go to azure-core's
    policies and pipeline (e.g. `transport`, `retry_total`).

    The base URL is the cloud's `resourceManager` as azure-ai-ml reads it (the function MLClient calls,
    `_azure_environments._get_base_url_from_metadata`), without the Azure ML-only `AZUREML_DEV_URL_MFE`
    override. The policies, in order, are those of azure-ai-ml's own generated ARM client
    (`_restclient/arm_ml_service/_client.py`, `_configuration.py` `_configure`), with the ARM scope above.
    """
    from azure.ai.ml._azure_environments import _get_base_url_from_metadata
    from azure.core.pipeline import policies
    from azure.mgmt.core import ARMPipelineClient
    from azure.mgmt.core.policies import (
        ARMAutoResourceProviderRegistrationPolicy,
        ARMChallengeAuthenticationPolicy,
        ARMHttpLoggingPolicy,
    )

    kwargs.setdefault("sdk_moniker", "azml-gpu-jobs")
    pipeline = [
        policies.RequestIdPolicy(**kwargs),
        policies.HeadersPolicy(**kwargs),
        policies.UserAgentPolicy(**kwargs),
        policies.ProxyPolicy(**kwargs),
        policies.ContentDecodePolicy(**kwargs),
        ARMAutoResourceProviderRegistrationPolicy(),
        policies.RedirectPolicy(**kwargs),
        policies.RetryPolicy(**kwargs),
        ARMChallengeAuthenticationPolicy(ml._credential, *_scopes(ml), **kwargs),
        policies.CustomHookPolicy(**kwargs),
        policies.NetworkTraceLoggingPolicy(**kwargs),
        policies.DistributedTracingPolicy(**kwargs),
        policies.SensitiveHeaderCleanupPolicy(**kwargs),
        ARMHttpLoggingPolicy(**kwargs),
    ]
    return ARMPipelineClient(_get_base_url_from_metadata(), policies=pipeline, **kwargs)

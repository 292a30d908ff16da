"""Azure ML's usages as `GET .../locations/{region}/usages` lists them (the REST shape of
azure-rest-api-specs machinelearningservices examples/Usage/list.json; fixtures/usages-eastus.json), for the
tests of `quota` (jobs/quota/quotausage.py) and of the quota pre-check of `run` (jobs/run/precheck.py)."""

from __future__ import annotations

import json

from .jobs_util import FIXTURES

USAGES = json.loads((FIXTURES / "usages-eastus.json").read_text())


def usage_route(method: str, url: str):
    if "/providers/Microsoft.MachineLearningServices/locations/" in url and "/usages" in url:
        return 200, USAGES
    return 404, {"error": {"code": "NotFound", "message": url}}

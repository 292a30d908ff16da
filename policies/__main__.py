"""Entry point the Pulumi CLI runs: `python -u -m pulumi.policy <engine-address> .` in the pack's folder.

The pack is this folder alone (what `pulumi policy publish` uploads), whatever it is called: its modules
import each other as `policies.<module>`, so the folder is registered as the package `policies` here.
Everything else it imports (pulumi-policy, PyYAML, isodate, and the repository's size catalog `vmsizes`,
`azroles` and `stackconfig`'s standard-library checks as the wheel `azml-gpu-catalog`) comes from the pack's
virtualenv, built from requirements.txt; nothing is read from outside the folder.

Installed with the wheel the folder is `azml_gpu/policies` inside a package (an `__init__.py` beside it) and
every import here and in its modules reads `azml_gpu.<package>` (packaging/azml_gpu_build.py): the interpreter
azml-gpu is installed in imports it as it is, and nothing is registered.
"""

import importlib.util
import sys
from pathlib import Path

_HERE = Path(__file__).resolve().parent
if not (_HERE.parent / "__init__.py").is_file() and "policies" not in sys.modules:
    _spec = importlib.util.spec_from_file_location(
        "policies", _HERE / "__init__.py", submodule_search_locations=[str(_HERE)]
    )
    assert _spec is not None and _spec.loader is not None
    _package = importlib.util.module_from_spec(_spec)
    sys.modules["policies"] = _package
    _spec.loader.exec_module(_package)

from policies.registry import build_pack  # noqa: E402

build_pack()

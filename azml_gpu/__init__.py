"""`azml_gpu` in a checkout: the installed names (`azml_gpu.components`, `azml_gpu.stackconfig`, ...) for code
written against the wheel (examples/team-gpu, README's "Use it from your own code", a team's program gated
from here), each the very module the repository imports under its own name: `azml_gpu.components` *is*
`components`, loaded once (never a second copy whose classes differ).

Not in the wheel: the wheel's azml_gpu/ holds the packages themselves, their imports rewritten
(packaging/azml_gpu_build.py; docs/architecture.md, "One installed name"). The repository's own code never
imports this package."""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types

PACKAGES = ("azroles", "components", "jobs", "policies", "preflight", "stackconfig", "vmsizes")


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """`azml_gpu.<package>[.<module>]` -> the module `<package>[.<module>]`, the same object under both names.

    The import system reads the module back from sys.modules after `exec_module` (importlib._bootstrap
    `_load_unlocked`), so putting the real module there makes it the result of the import."""

    def find_spec(self, fullname: str, path=None, target=None) -> importlib.machinery.ModuleSpec | None:
        head, _, rest = fullname.partition(".")
        if head != __name__ or rest.split(".")[0] not in PACKAGES:
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        sys.modules[module.__name__] = importlib.import_module(module.__name__.partition(".")[2])


# First on the meta path: before the path finder, which would load `azml_gpu.components.x` a second time from
# components/ (the real package's __path__).
if not any(isinstance(f, _Alias) for f in sys.meta_path):
    sys.meta_path.insert(0, _Alias())

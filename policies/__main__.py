"""Entry point the Pulumi CLI runs: `python -u -m pulumi.policy <engine-address> .` in policies/.

The size catalog `vmsizes/` lives at the repository root and is read in place, not copied: the repository root
(the parent of this file's folder) is put on sys.path, so `import vmsizes` and `import policies` resolve to
the checkout whatever the working directory. vmsizes needs only the standard library and PyYAML, both in
policies/requirements.txt.
"""

import sys
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent
if str(_ROOT) not in sys.path:
    sys.path.insert(0, str(_ROOT))

from policies.registry import build_pack  # noqa: E402

build_pack()

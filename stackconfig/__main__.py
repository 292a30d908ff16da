"""Entry point for `python -m stackconfig`."""

import sys

from stackconfig.cli import main

sys.exit(main())

"""Entry point for `python -m stackconfig`."""

from stackconfig.cli import entry

entry()

"""Entry point for `python -m stackconfig`."""

from stackconfig.cli import main, run_main

run_main(main)

from jobs.cli import main
from stackconfig.cli import run_main

run_main(main)

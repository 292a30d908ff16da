from jobs.cli import entry

entry()

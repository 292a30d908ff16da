"""One module per `python -m jobs <command>`: it defines the command's flags (`register(subparsers)`),
checks them and prints; the work is done by a logic module of `jobs/` named for its concept.

The list of commands is `jobs.cli.COMMANDS`.
"""

"""One module per `python -m jobs <command>`; each exposes `register(subparsers)`.

`jobs.cli` discovers the modules here, so adding a command never edits a shared file.
"""

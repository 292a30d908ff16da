"""Errors a user can fix, and the one place that turns them into a message and exit code 2.

Every command's `func` is wrapped by `guarded`: a `UsageError` (bad flag, missing file, unknown cluster,
a job the SDK would accept but Azure ML would run wrongly) prints `error: <message>` on stderr and
returns 2, with no traceback; under `--json` stdout also gets `{"ok": false, "error", "exit_code": 2}`.
"""

from __future__ import annotations

import functools
import json
import re
import sys
from collections.abc import Callable
from typing import Any

#: The exit codes of every `python -m jobs` command, one meaning each (the table in docs/jobs.md, "Exit
# codes").
EXIT_OK = 0
#: The check ran and said no: a job failed or was not verified, a cluster differs from the stack.
EXIT_FAILED = 1
#: Bad input: a flag, a file, a cluster name; the message names it and the fix. Never anything else.
EXIT_USAGE = 2
#: The job was not created: Azure refused the create, or (`run`) its nodes do not fit the region's quota.
EXIT_NOT_CREATED = 3
#: An Azure query failed (job status, the compute list, a delete or purge), so there is no verdict.
EXIT_QUERY = 4
#: The job ended in a terminal state other than Completed or Failed: Canceled, NotResponding, Paused.
EXIT_ENDED_OTHERWISE = 5
#: Interrupted here (Ctrl-C or SIGTERM to `jobs local`): 128 + SIGINT, as a shell reports it.
EXIT_INTERRUPTED = 130
#: stdout was closed before the report was written (`--json | head`): 128 + SIGPIPE, as a shell reports a
#: process that SIGPIPE ended (stackconfig.cli.EXIT_CLOSED_PIPE).
EXIT_CLOSED_PIPE = 141


class UsageError(Exception):
    """Input the user can correct. The message names the flag and the fix."""


def guarded(func: Callable[[Any], int]) -> Callable[[Any], int]:
    """Wrap a command's `func(args) -> int` so a `UsageError` becomes exit 2 with a clear message."""

    @functools.wraps(func)
    def wrapper(args: Any) -> int:
        try:
            return int(func(args) or 0)
        except UsageError as exc:
            # --json promises JSON on stdout, also on failure.
            return fail(str(exc), EXIT_USAGE, bool(getattr(args, "json", False)))

    return wrapper


def fail(message: str, code: int, as_json: bool, **fields: Any) -> int:
    """A failure that is not bad input (no credentials, a query Azure refused): `error: <message>` on
    stderr and, under --json, `{"ok": false, "error": <message>, "exit_code": code, **fields}` on stdout.
    Returns `code`."""
    print(f"error: {message}", file=sys.stderr)
    if as_json:
        print(json.dumps({"ok": False, "error": message, "exit_code": code, **fields}, indent=2))
    return code


#: Terminal colour codes (colorama's `Fore`/`Style`), which azure-ai-ml puts in its formatted errors.
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def error_detail(exc: BaseException) -> str:
    """A failed call in one line: `<exception type>: <first line of its message>`.

    azure-core's `HttpResponseError` message runs to several lines (`(Code) Message`, then `Code: ...`,
    `Message: ...`, the target and details: `azure/core/exceptions.py`, `ODataV4Format.message_details`);
    its first line holds the error code and message, which is what a command prints. azure-ai-ml's formatted
    validation error (the `MlException` that `create_or_update` raises for a `ValidationException`:
    `_exception_helper.log_and_raise_error` / `format_create_validation_error`) opens with colour codes and
    a category ("Resource was not found."); its message is the Details line it marks `(x) `, which is taken.
    """
    lines = [line.strip() for line in _ANSI.sub("", str(exc)).splitlines() if line.strip()]
    marked = [line[len("(x) ") :] for line in lines if line.startswith("(x) ")]
    return f"{type(exc).__name__}: {(marked or lines or [''])[0]}"

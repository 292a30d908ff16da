"""A component's arguments checked by stackconfig's rules: one implementation and the same messages for a
stack file and for a program that builds the components itself: `GpuClusterArgs(max_instances=0, ...)`
fails at construction, naming every argument at once, instead of at `pulumi up`.

Values that are Pulumi outputs (a subnet id from another resource) are known only during the deployment and
are left to the policy pack, which judges them when they are."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pulumi


class ArgumentsError(pulumi.RunError, ValueError):
    """Invalid component arguments; `problems` lists each as `<Args>.<argument>: <what>; <fix>`. A RunError,
    which the Pulumi language host reports as its message alone, without the program's traceback
    (pulumi/runtime/stack.py; sdk/python/lib/pulumi/errors.py `RunError`)."""

    def __init__(self, args: str, problems: Iterable[str]) -> None:
        self.problems = [f"{args}.{p}" for p in problems]
        lines = "\n".join(f"  - {p}" for p in self.problems)
        super().__init__(f"{args}: {len(self.problems)} invalid argument(s):\n{lines}")


def plain(values: Mapping[str, Any]) -> dict[str, Any]:
    """The values known now: Pulumi outputs dropped."""
    return {k: v for k, v in values.items() if not isinstance(v, pulumi.Output)}


def renamed(problems: Iterable[str], names: Mapping[str, str]) -> list[str]:
    """Stack-config key paths -> argument names (`idle_time_before_scale_down: ...` -> `idle_seconds:
    ...`)."""
    out = []
    for line in problems:
        key, sep, rest = line.partition(":")
        if key in names:
            out.append(f"{names[key]}{sep}{rest}")
            continue
        head, dot, tail = key.partition(".")
        out.append(f"{names.get(head, head)}{dot}{tail}{sep}{rest}")
    return out

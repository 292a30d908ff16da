"""The gate's report for people: the plan and the violations grouped by enforcement level.

Rich tables on a terminal; plain aligned text when stdout is not a tty (CI logs, pipes). `--json` is
GateResult.as_json (schema in docs/preflight.md).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import IO

from preflight.gate import GateResult

LEVEL_ORDER = ("mandatory", "advisory", "remediate", "disabled")


def _fmt(value: object) -> str:
    return "-" if value is None else str(value)


def tables(result: GateResult) -> list[tuple[str, list[str], list[list[str]]]]:
    """(title, headers, rows) of every table in the report, in order."""
    out: list[tuple[str, list[str], list[list[str]]]] = []
    by_type = Counter(r.type for r in result.resources)
    out.append(("Resources by type", ["type", "count"], [[t, str(n)] for t, n in sorted(by_type.items())]))
    out.append(
        (
            "Clusters",
            ["cluster", "size", "GPUs/node", "max nodes", "region", "tier", "idle", "SSH"],
            [
                [
                    c["name"],
                    _fmt(c["size"]),
                    _fmt(c["gpus_per_node"]),
                    _fmt(c["max_nodes"]),
                    _fmt(c["region"]),
                    c["tier"],
                    f"{c['idle_seconds']} s" if c["idle_seconds"] is not None else _fmt(c["idle"]),
                    c["ssh"],
                ]
                for c in result.clusters
            ],
        )
    )
    out.append(
        (
            "Quota reserved (max nodes x vCPUs) against the policy config",
            ["region", "pool", "reserved vCPUs", "quota", "status", "clusters"],
            [
                [
                    q["region"],
                    q["label"],
                    str(q["reserved_vcpus"]),
                    _fmt(q["quota"]),
                    q["status"],
                    ", ".join(q["clusters"]),
                ]
                for q in result.quota
            ],
        )
    )
    return out


def _plain_table(stream: IO[str], title: str, headers: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    stream.write(f"{title}\n")
    if not rows:
        stream.write("  (none)\n\n")
        return
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    for line in [list(headers), *rows]:
        cells = "  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True))
        stream.write("  " + cells.rstrip() + "\n")
    stream.write("\n")


def render(result: GateResult, stream: IO[str], rich_output: bool) -> None:
    """Write the plan and the violations to `stream`, with rich tables when `rich_output`."""
    header = f"Policy gate for stack {result.stack} (retirement evaluated on {result.evaluation_date})"
    if rich_output:
        from rich.console import Console
        from rich.table import Table

        console = Console(file=stream)
        console.print(f"[bold]{header}[/bold]")
        for title, headers, rows in tables(result):
            table = Table(title=title, title_justify="left")
            for h in headers:
                table.add_column(h)
            for row in rows:
                table.add_row(*row)
            console.print(table)
        for level in LEVEL_ORDER:
            found = result.by_level(level)
            if not found:
                continue
            style = "red" if level == "mandatory" else "yellow"
            console.print(f"[bold {style}]{level.upper()} ({len(found)})[/bold {style}]")
            for v in found:
                console.print(f"  [{style}]{v.policy}[/{style}] {v.urn or '(stack)'}", highlight=False)
                console.print(f"    {v.message}", highlight=False, markup=False)
        console.print(_verdict(result), highlight=False)
        return
    stream.write(header + "\n\n")
    for title, headers, rows in tables(result):
        _plain_table(stream, title, headers, rows)
    for level in LEVEL_ORDER:
        found = result.by_level(level)
        if not found:
            continue
        stream.write(f"{level.upper()} ({len(found)})\n")
        for v in found:
            stream.write(f"  {v.policy} {v.urn or '(stack)'}\n    {v.message}\n")
        stream.write("\n")
    stream.write(_verdict(result) + "\n")


def _verdict(result: GateResult) -> str:
    mandatory, advisory = len(result.by_level("mandatory")), len(result.by_level("advisory"))
    if mandatory:
        return f"FAIL: {mandatory} mandatory violation(s), {advisory} advisory; `pulumi up` would be blocked."
    return f"PASS: no mandatory violation ({advisory} advisory)."

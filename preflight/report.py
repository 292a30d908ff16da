"""The gate's report for people: the plan, each evaluation's violations grouped by enforcement level (and the
update's replacements), the Azure permissions `pulumi up` needs, and the verdict.

Rich tables on a terminal; plain aligned text when stdout is not a tty (CI logs, pipes). `--json` is
GateResult.as_json (schema in docs/preflight.md). `markdown(result)` is the review form (`--format markdown`,
written to the CI job summary): verdict first, each violation once with the evaluations it appeared in,
resource and cluster names rather than URNs, short lines.
"""

from __future__ import annotations

import textwrap
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from preflight import costs, permissions
from preflight.gate import QUOTA_WARN_PERCENT, Evaluation, GateResult

LEVEL_ORDER = ("mandatory", "advisory", "remediate", "disabled")


#: The quota table's status words (gate.quota_status).
QUOTA_STATUS = {
    "over": "OVER QUOTA (mandatory)",
    "full": "at quota: no headroom (warning)",
    "near": f"near quota, {QUOTA_WARN_PERCENT}%+ (warning)",
    "ok": "ok",
    "unknown": "quota unknown",
}


def _fmt(value: object) -> str:
    return "-" if value is None else str(value)


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{value:g}%"


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
            ["region", "pool", "reserved vCPUs", "quota", "headroom", "used", "status", "clusters"],
            [
                [
                    q["region"],
                    q["label"],
                    str(q["reserved_vcpus"]),
                    _fmt(q["quota"]),
                    _fmt(q["headroom_vcpus"]),
                    _percent(q["used_percent"]),
                    QUOTA_STATUS[q["status"]],
                    ", ".join(q["clusters"]),
                ]
                for q in result.quota
            ],
        )
    )
    if result.costs:
        out.append((costs.title(result.costs), costs.HEADERS, costs.table_rows(result.costs)))
    out.append(
        (
            "Resource inputs checked against the Azure REST specs (preflight/provider/azure_specs)",
            ["type", "API version", "resources", "spec check", "not checked"],
            [
                [
                    row["type"],
                    row["api_version"] or "-",
                    str(row["resources"]),
                    (
                        ("partly checked" if row["not_checked"] else "checked")
                        if row["checked"]
                        else f"NOT CHECKED: {row['why_not']}"
                    )
                    + (f" ({row['spec_note']})" if row.get("spec_note") else ""),
                    "; ".join(row["not_checked"]) or "-",
                ]
                for row in result.resource_check
            ],
        )
    )
    return out


def environment(result: GateResult) -> str:
    """The stack's `azml-gpu:environment` as the report shows it."""
    if result.environment == "production":
        return "production (azml-gpu:environment: secure-defaults and cluster-replacement enforced)"
    if result.environment == "development":
        return "development (azml-gpu:environment)"
    return "not set (azml-gpu:environment; init-config needs it)"


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


def _evaluation_lines(evaluation: Evaluation) -> list[tuple[str, str]]:
    """(style, text) lines of one evaluation: its steps, replacements, deletes and violations."""
    steps = ", ".join(f"{n} {op}" for op, n in evaluation.steps.items())
    lines = [
        (
            "bold",
            f"Evaluation: {evaluation.title} ({steps}; {evaluation.unknown_inputs} input values "
            "unknown until deployment)",
        )
    ]
    for row in evaluation.replacements:
        lines.append(("yellow", f"  replace: {row['summary']}"))
    for urn in evaluation.deletes:
        lines.append(("yellow", f"  delete: {urn.split('::')[-1]} ({urn.split('::')[-2].split('$')[-1]})"))
    for level in LEVEL_ORDER:
        found = sorted(
            (v for v in evaluation.violations if v.enforcement == level),
            key=lambda v: (v.policy, v.urn, v.message),
        )
        if not found:
            continue
        style = "red" if level == "mandatory" else "yellow"
        lines.append((f"bold {style}", f"  {level.upper()} ({len(found)})"))
        for v in found:
            lines.append((style, f"    {v.policy} {v.urn or '(stack)'}"))
            lines.append(("", f"      {v.message}"))
    mandatory = sum(v.enforcement in ("mandatory", "remediate") for v in evaluation.violations)
    advisory = sum(v.enforcement == "advisory" for v in evaluation.violations)
    verdict = "FAIL" if evaluation.exit_code else "PASS"
    lines.append(("", f"  {verdict} ({mandatory} mandatory, {advisory} advisory)"))
    return lines


def _tail_lines(result: GateResult, permissions_shown: bool) -> list[str]:
    lines = []
    if result.permissions and not permissions_shown:
        lines.append(
            f"Azure permissions: {permissions.roles(result.permissions)} (--permissions lists the "
            f"{len(result.permissions)} actions)"
        )
    elif result.permissions:
        lines.append("Azure permissions `pulumi up` of this stack needs (and `pulumi destroy`):")
        for row in result.permissions:
            lines.append(f"  {row['action']}  ({row['granted_by']})")
        lines.append(f"  {permissions.roles(result.permissions)}")
    return lines


def render(result: GateResult, stream: IO[str], rich_output: bool, permissions_shown: bool = False) -> None:
    """Write the plan, both evaluations and the verdict to `stream`, with rich tables when `rich_output`;
    the Azure permissions `pulumi up` needs action by action with `permissions_shown` (`--permissions`), else
    the one line of roles that covers them."""
    header = f"Policy gate for stack {result.stack} (retirement evaluated on {result.evaluation_date})"
    config = (
        f"environment: {environment(result)}\n"
        f"policy config: {result.policy_config_file or 'none (the pack defaults)'}"
    )
    if rich_output:
        from rich.console import Console
        from rich.table import Table

        console = Console(file=stream)
        console.print(f"[bold]{header}[/bold]")
        console.print(config, highlight=False)
        for note in result.notes:
            console.print(f"note: {note}", highlight=False, markup=False)
        for title, headers, rows in tables(result):
            table = Table(title=title, title_justify="left")
            for h in headers:
                table.add_column(h)
            for row in rows:
                table.add_row(*row)
            console.print(table)
        for evaluation in result.evaluations:
            for style, text in _evaluation_lines(evaluation):
                console.print(text, style=style or None, highlight=False, markup=False)
        for line in _tail_lines(result, permissions_shown):
            console.print(line, highlight=False, markup=False)
        console.print(_verdict(result), highlight=False)
        return
    stream.write(header + "\n" + config + "\n")
    for note in result.notes:
        stream.write(f"note: {note}\n")
    stream.write("\n")
    for title, headers, rows in tables(result):
        _plain_table(stream, title, headers, rows)
    for evaluation in result.evaluations:
        for _style, text in _evaluation_lines(evaluation):
            stream.write(text + "\n")
        stream.write("\n")
    for line in _tail_lines(result, permissions_shown):
        stream.write(line + "\n")
    if result.permissions:
        stream.write("\n")
    stream.write(_verdict(result) + "\n")


def _verdict(result: GateResult) -> str:
    mandatory, advisory = len(result.by_level("mandatory")), len(result.by_level("advisory"))
    failed = [e.kind for e in result.evaluations if e.exit_code]
    if mandatory:
        return (
            f"FAIL: {mandatory} mandatory violation(s), {advisory} advisory (failed: {', '.join(failed)}); "
            "`pulumi up` would be blocked."
        )
    return f"PASS: no mandatory violation in either evaluation ({advisory} advisory)."


def _subject(urn: str) -> str:
    """A violation's resource by name: `h100-x4 (Compute)`; the stack for the root stack's URN (where the
    engine puts a stack-level finding) or an empty one."""
    if not urn or urn.split("::")[-2:-1] == ["pulumi:pulumi:Stack"]:
        return "the stack"
    parts = urn.split("::")
    return f"{parts[-1]} ({parts[-2].split('$')[-1].split(':')[-1]})" if len(parts) >= 2 else urn


def _relative(path: str | None, root: Path) -> str:
    if path is None:
        return "none"
    try:
        return str(Path(path).resolve().relative_to(root))
    except ValueError:
        return path


def markdown(result: GateResult) -> str:
    """The review form of the report (module docstring)."""
    mandatory, advisory = result.by_level("mandatory"), result.by_level("advisory")
    verdict = "FAIL" if result.exit_code else "PASS"
    out = [
        f"## Policy gate: {verdict} for stack `{result.stack}`",
        "",
        f"{len(mandatory)} mandatory, {len(advisory)} advisory violation(s);",
        f"policy config `{_relative(result.policy_config_file, result.root)}`;",
        f"retirement evaluated on {result.evaluation_date};",
        f"environment {environment(result)}.",
        "",
    ]
    for evaluation in result.evaluations:
        steps = ", ".join(f"{n} {op}" for op, n in evaluation.steps.items())
        mark = "fails" if evaluation.exit_code else "passes"
        out.append(f"- {evaluation.kind} preview {mark} ({steps})")
    out.append("")
    for title, found in (("Mandatory", mandatory), ("Advisory", advisory)):
        if not found:
            continue
        out += [f"### {title}", ""]
        for v in found:
            seen = ", ".join(result.evaluations_of(v))
            out.append(f"- **{v.policy}** on {_subject(v.urn)} ({seen}):")
            out += _wrapped(v.message)
        out.append("")
    changes = [row for e in result.evaluations for row in e.replacements]
    deletes = [u for e in result.evaluations for u in e.deletes]
    if changes or deletes:
        out += ["### What the update replaces or deletes", ""]
        for row in sorted(changes, key=lambda r: r["summary"]):
            out += _wrapped(f"replace: {row['summary']}", first="- ")
        out += [f"- delete: {_subject(u)}" for u in sorted(set(deletes))]
        out.append("")
    if result.clusters:
        out += [
            "### Clusters",
            "",
            "| cluster | size | GPUs/node | max nodes | region | tier | idle | SSH |",
            "|---|---|---:|---:|---|---|---:|---|",
        ]
        for c in result.clusters:
            idle = f"{c['idle_seconds']} s" if c["idle_seconds"] is not None else _fmt(c["idle"])
            cells = [c["name"], _fmt(c["size"]), _fmt(c["gpus_per_node"]), _fmt(c["max_nodes"])]
            cells += [_fmt(c["region"]), c["tier"], idle, c["ssh"]]
            out.append("| " + " | ".join(cells) + " |")
        out.append("")
    if result.quota:
        out += [
            "### Quota reserved (max nodes x vCPUs per node)",
            "",
            "| region | pool | reserved vCPUs | quota | headroom | used | status |",
            "|---|---|---:|---:|---:|---:|---|",
        ]
        for q in result.quota:
            cells = [q["region"], q["label"], str(q["reserved_vcpus"]), _fmt(q["quota"])]
            cells += [_fmt(q["headroom_vcpus"]), _percent(q["used_percent"]), QUOTA_STATUS[q["status"]]]
            out.append("| " + " | ".join(cells) + " |")
        out.append("")
    if result.costs.get("clusters"):
        out += [
            "### Cost at max nodes",
            "",
            *textwrap.wrap(costs.title(result.costs), 100, break_long_words=False),
            "",
        ]
        out.append("| " + " | ".join(costs.HEADERS) + " |")
        out.append("|" + "---|" * len(costs.HEADERS))
        out += ["| " + " | ".join(row) + " |" for row in costs.table_rows(result.costs)]
        out.append("")
    return "\n".join(out)


def _wrapped(text: str, first: str = "  ") -> list[str]:
    """Lines of at most 100 characters, never broken inside a word: a key such as
    `compute-in-virtual-network.acknowledged` or a URL stays whole (textwrap breaks on hyphens by default)."""
    return textwrap.wrap(
        text,
        width=100,
        initial_indent=first,
        subsequent_indent="  ",
        break_on_hyphens=False,
        break_long_words=False,
    )

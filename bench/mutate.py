"""Mutation check: does every comparison and default in the policies, the catalog's quota arithmetic they
use, and the jobs' log verdicts (verify's checks, scaling's efficiency) have a test that fails on a change?

Method (docs/policies.md, "Mutation check"): a small AST mutator, one mutant at a time, in a scratch copy of
the repository's tracked files (the working tree is never touched):
- every comparison operator: `<`<->`<=`, `>`<->`>=`, `==`<->`!=`, `is`<->`is not`, `in`<->`not in`;
- every default: a number compared against (`x <= 1`), assigned to a module-level name
  (`DEFAULT_MIN = 120`), given as a keyword or parameter default, or as the fallback of `.get(key, fallback)`,
  `_or(value, fallback)` or `read(..., default=...)`: a literal there is changed (numbers +1, booleans
  flipped, strings suffixed, None -> 0); numbers in the config schemas (`"minimum": 0`, `"default": ...`)
  likewise.
With `--extended` also the bugs a developer writes in loops and conditions (the kinds issue 25 sampled):
- `and`<->`or`; `not x` -> `x`; `if c:` / `while c:` / `x if c else y` with `c` -> `not c`;
- arithmetic `+`<->`-`, `*`<->`/`, `//` -> `/`; `min(...)`<->`max(...)`;
- `break`<->`continue`, a loop body's `continue` -> `pass` (a skipped element), a `return X` inside an
  `if` -> `return None`.
For each mutant the policy tests run (tests/policies, plus tests/vmsizes/test_quota.py for
vmsizes/quota.py) with `-x`; a mutant no test kills "survives". Known equivalent mutants (no behaviour
changes) are listed in EQUIVALENT with the reason, and reported apart.

    .venv/bin/python bench/mutate.py [--json] [--only policies/min_nodes_zero.py jobs/verify/logchecks.py ...]
        [--extended] [--tests tests/jobs/run/test_loop.py ...] [--timeout 120]

Each mutant's tests run in a child forked from a process that has imported the heavy packages once
(PRELOAD; `--no-fork` starts a new interpreter per mutant instead). `--tests` replaces the module's test
selection in TESTS (keep it to the files that cover the module: each mutant runs them); `--timeout` is the
seconds one mutant's tests may take (a hang counts as killed).

Exit 1 when a mutant survives that is not listed as equivalent.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_SKIP = {"__init__.py", "__main__.py"}
TARGETS = [
    *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "policies").glob("*.py") if p.name not in _SKIP),
    "vmsizes/quota.py",
]
TESTS = {
    "vmsizes/quota.py": ["tests/policies", "tests/vmsizes/test_quota.py"],
    # verify's checks and scaling's efficiency (jobs/verify/, jobs/scaling/): run with --only.
    "jobs/verify/logchecks.py": [
        "tests/jobs/verify/test_logchecks.py",
        "tests/jobs/test_verify.py",
        "tests/jobs/verify/test_nccl.py",
        "tests/jobs/test_ranklogs.py",
    ],
    "jobs/scaling/efficiency.py": [
        "tests/jobs/scaling/test_efficiency.py",
        "tests/jobs/test_scaling.py",
        "tests/jobs/test_verify.py",
        "tests/jobs/test_plan.py",
        "tests/jobs/plan/test_runplan.py",
    ],
    # managed runs (issue 25): the unit tests of the loop, ledger, causes and quota pre-check
    **{
        f"jobs/run/{m}.py": [
            "tests/jobs/run/test_loop.py",
            "tests/jobs/run/test_ledger.py",
            "tests/jobs/run/test_causes.py",
            "tests/jobs/run/test_precheck.py",
            "tests/jobs/test_run.py",
        ]
        for m in ("loop", "ledger", "causes")
    },
    "jobs/run/precheck.py": [
        "tests/jobs/run/test_precheck.py",
        "tests/jobs/run/test_causes.py",
        "tests/jobs/run/test_ledger.py",
        "tests/jobs/run/test_loop.py",
        "tests/jobs/test_run.py",
    ],
    "components/identity.py": ["tests/components/test_identity.py"],
    "stackconfig/combinations.py": [
        "tests/stackconfig/test_combinations.py",  # the combinations and the lock decision
        "tests/stackconfig/test_identity.py",  # the grant plan (combinations.plan)
    ],
    "preflight/replacements.py": ["tests/preflight/test_replacements.py"],
    "stackconfig/network.py": [
        "tests/stackconfig/test_network.py",
        "tests/stackconfig/test_combinations.py",
    ],
    # Re-run 2026-12-02 after issue 23's customer-managed key (acknowledgements, the grant plan's callers).
    "stackconfig/identity.py": [
        "tests/stackconfig/test_identity.py",
        "tests/stackconfig/test_models.py",
        "tests/stackconfig/test_combinations.py",
        "tests/stackconfig/test_validation.py",
    ],
    "components/workspace.py": [
        "tests/components/test_workspace.py",
        "tests/components/test_identity.py",
        "tests/program/test_main.py",
    ],
    "components/network.py": ["tests/components/test_network.py"],
    # node health: the boundary tables first (fast), then the format and report tests
    **{
        m: [
            "tests/jobs/payload/test_healthparse.py",
            "tests/jobs/health/test_build.py",
            "tests/jobs/payload/test_health.py",
            "tests/jobs/health/test_report.py",
            "tests/jobs/test_run.py",
        ]
        for m in ("jobs/payload/healthparse.py", "jobs/health/build.py")
    },
    **{
        m: [
            "tests/jobs/health/test_judge.py",
            "tests/jobs/health/test_report.py",
            "tests/jobs/payload/test_healthparse.py",
            "tests/jobs/health/test_build.py",
            "tests/jobs/payload/test_health.py",
            "tests/jobs/test_run.py",
        ]
        for m in ("jobs/health/judge.py", "jobs/health/report.py")
    },
    # issue 25, run of 2026-12-02 (checkpointing, components)
    "jobs/payload/checkpointing.py": [
        "tests/jobs/payload/test_checkpointing.py",
        # 2 processes: last
        "tests/integration/job_scripts/test_checkpoint_two_ranks_shards_failure_and_timeout.py",
    ],
    "components/locks.py": ["tests/components/test_locks.py"],
    "components/naming.py": ["tests/components/test_naming.py"],
    "components/diagnostics.py": ["tests/components/test_diagnostics.py"],
    "components/gpu_cluster.py": [
        "tests/components/test_gpu_cluster.py",
        "tests/components/test_identity.py",  # the nodes' identity in the grants
        "tests/components/test_workspace.py",  # clusters with a user-assigned identity
    ],
    # issue 25, run of 2026-12-02 (stackconfig, schema)
    # The spec check: the small-spec and name-limit tests first, then the provider model and the resource
    # check (all on recorded checked inputs: no program run, no policy pack).
    "preflight/provider/schema.py": [
        "tests/preflight/provider/test_schema.py",
        "tests/preflight/provider/test_model.py",
        "tests/components/test_workspace.py::"
        "test_the_workspace_body_with_a_user_assigned_identity_passes_the_rest_spec_check",
        "tests/preflight/test_resource_check.py",
    ],
    "stackconfig/rules.py": [
        "tests/stackconfig/test_validation.py",
        "tests/stackconfig/test_rules.py",
        "tests/stackconfig/test_models.py",
    ],
    "stackconfig/names.py": [
        "tests/stackconfig/test_validation.py",
        "tests/stackconfig/test_names.py",
        "tests/stackconfig/test_identity.py",
        "tests/stackconfig/test_network.py",
    ],
    "stackconfig/sizes.py": [
        "tests/stackconfig/test_validation.py",
        "tests/stackconfig/test_sizes.py",
    ],
    "stackconfig/sshkeys.py": [
        "tests/stackconfig/test_sshkeys.py",
        "tests/stackconfig/test_validation.py",
    ],
    "stackconfig/validation.py": [
        "tests/stackconfig/test_validation.py",
        "tests/stackconfig/test_models.py",
        "tests/stackconfig/test_combinations.py",
    ],
    "stackconfig/loader.py": [
        "tests/stackconfig/test_loader.py",
        "tests/stackconfig/test_cli.py",
        "tests/stackconfig/test_validation.py",
        "tests/stackconfig/test_outputs.py",
    ],
    "stackconfig/models.py": [
        "tests/stackconfig/test_models.py",
        "tests/stackconfig/test_validation.py",
        "tests/stackconfig/test_identity.py",
        "tests/stackconfig/test_combinations.py",
        "tests/stackconfig/test_network.py",
        "tests/stackconfig/test_outputs.py",
        "tests/stackconfig/test_loader.py",
        "tests/stackconfig/test_cli.py",
    ],
    "stackconfig/regions.py": [
        "tests/stackconfig/test_validation.py",
        "tests/stackconfig/test_regions.py",
        "tests/vmsizes/test_regions.py",
    ],
    "stackconfig/outputs.py": [
        "tests/stackconfig/test_outputs.py",
        "tests/stackconfig/test_sizes.py",
        "tests/program/test_main.py",
    ],
    "stackconfig/errors.py": [
        "tests/stackconfig/test_errors.py",
        "tests/stackconfig/test_validation.py",
    ],
    "stackconfig/cli.py": [
        "tests/stackconfig/test_cli.py",
        "tests/repo/test_repo_cli_promises.py",
        "tests/jobs/test_cli.py",
        "tests/jobs/test_errors.py",
        "tests/jobs/test_ranklogs.py",
        "tests/jobs/test_local.py",
        "tests/jobs/test_jobargs.py",
        "tests/jobs/run/test_clustercheck.py",
        "tests/jobs/test_progress.py",
    ],
    "doubles/pulumicli/gotool.py": ["tests/doubles/pulumicli/test_gotool.py"],
}
DEFAULT_TESTS = ["tests/policies"]
SWAP = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
}
BINOPS = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult, ast.FloorDiv: ast.Div}
MINMAX = {"min": "max", "max": "min"}
FALLBACK_CALLS = {"get": 1, "_or": 1}  # call name -> index of the fallback argument
# (file, line, mutation) -> why no test can tell the mutant from the original.
EQUIVALENT: dict[tuple[str, int, str], str] = {
    ("jobs/run/loop.py", 62, "default ''"): (
        "progress() of '-mutant' equals progress(''): neither holds a resume line or a metrics record"
    ),
    ("jobs/run/causes.py", 70, "GtE -> Gt"): (
        "end = text.find('\\n', m.end()) is -1 or at least m.end() >= 1 (every pattern matches text): never 0"
    ),
    ("jobs/run/causes.py", 70, "compared 0"): "as above: `end >= 1` and `end >= 0` agree as end is never 0",
    ("jobs/health/report.py", 91, "continue -> pass"): "the continue is the loop body's last statement",
    ("jobs/health/build.py", 72, "default None"): (
        "environment=0 reaches builders._command, which sends `environment or DEFAULT_ENVIRONMENT`: the same"
    ),
    ("policies/quota_reservation.py", 101, "default 1"): (
        "get_close_matches(..., n=2) returns the same best match first, and only close[0] is read"
    ),
    # issue 25, run of 2026-12-02 (checkpointing, components)
    ("jobs/payload/checkpointing.py", 180, "default 0"): (
        "every item DCP writes has a length above 0 (a tensor goes through torch.save: a shard of one empty"
        " tensor is 1513 bytes; other state is pickled), so max(0, end) and max(1, end) agree"
    ),
    ("jobs/payload/checkpointing.py", 226, "GtE -> Gt"): (
        "newest is always in `kept`: the step equal to it is skipped by either test"
    ),
    ("jobs/payload/checkpointing.py", 260, "default None"): (
        "`{'timeout': timeout} if timeout else {}`: 0 and None both pass no timeout to new_group"
    ),
    ("jobs/payload/checkpointing.py", 414, "and -> or"): (
        "_commit is only the done-callback maybe_save adds after setting _pending, with folder set: both set"
    ),
    ("components/naming.py", 73, "Sub -> Add"): (
        "both `50 - 2 - len(suffix)` mutants leave room for 46 or 54 characters, and a workspace name has at"
        " most 33 (stackconfig.names.workspace_name_problem): the registry name is never cut"
    ),
    ("components/network.py", 219, "default 0"): (
        "`old or 'Disabled'` and `new or 'Disabled'` are one of the three modes (stackconfig.network."
        "IsolationMode; the state's inputs are what such a config sent): the `.get` fallback is never read"
    ),
    ("stackconfig/combinations.py", 94, "and -> or"): (
        "OutboundRule._keys_of_type requires service_resource_id on a private_endpoint rule and refuses it"
        " on the other types (and an empty one is not an ARM id): the two conditions select the same rules"
    ),
    # issue 25, run of 2026-12-02 (stackconfig, schema)
    ("stackconfig/rules.py", 20, "default False"): (
        "no caller takes the default: validation and combinations pass managed_network, models passes None"
    ),
    ("stackconfig/names.py", 68, "GtE -> Gt"): (
        "name[0] is a letter (checked just before), so rfind('-') is -1 or at least 1, never 0"
    ),
    (
        "stackconfig/names.py",
        68,
        "compared 0",
    ): "as above: `>= 1` and `>= 0` agree as the last '-' is never at 0",
    ("stackconfig/sizes.py", 37, "default 1"): (
        "get_close_matches(..., n=2) returns the same best match first, and only close[0] is read"
    ),
    ("stackconfig/loader.py", 160, "Lt -> LtE"): (
        "again_line is the 0-based line of the repeated key, a line of the text: always < len(lines)"
    ),
    ("stackconfig/models.py", 315, "default None"): (
        "an unset key_vault lock resolves to False either way: the stack always grants the workspace "
        "identity Key Vault Administrator on the vault (identity.plan), and bool(0) is False"
    ),
    ("stackconfig/regions.py", 88, "default 1"): (
        "get_close_matches(..., n=2) returns the same best match first, and only close[0] is read"
    ),
    ("preflight/provider/schema.py", 97, "default '?'"): "source_of() has no caller",
    ("preflight/provider/schema.py", 149, "return X -> return None"): (
        "only a name of underscores alone reaches it: no vendored property or parameter has one"
    ),
    ("preflight/provider/schema.py", 170, "default '?'"): (
        "_deref of a parent without $ref returns the parent itself, so only a parent with $ref is missing"
    ),
    ("preflight/provider/schema.py", 477, "default '?'"): (
        "as line 170: _deref of a parameter without $ref returns it, so an unresolved one always has a $ref"
    ),
    ("preflight/provider/schema.py", 487, "continue -> pass"): (
        "the body parameter then meets `if where != 'path' ...: continue`, the same skip"
    ),
    ("preflight/provider/schema.py", 578, "Gt -> GtE"): (
        "over every vendored resource type, metadata().identifiers is the same with the depth guard at "
        "2, 8 or 9 (x-ms-identifiers sit at most 2 levels deep): the guard only stops recursive types"
    ),
    ("preflight/provider/schema.py", 578, "compared 8"): "as above: `depth > 9` gives the same identifiers",
    ("preflight/provider/schema.py", 639, "and -> or"): (
        "differs only for a schema with `items` but no `type: array`: no vendored schema has one "
        "(OpenAPI 2.0 requires items exactly when type is array)"
    ),
    ("preflight/provider/schema.py", 618, "and -> or"): (
        "differs only for a body parameter without `schema` or another with one: OpenAPI 2.0 gives `schema` "
        "to body parameters only, and so do all vendored specs (checked)"
    ),
    ("preflight/provider/schema.py", 195, "default ''"): (
        "a parent without $ref: neither '' nor '-mutant' ends with '/definitions/<base>', the same skip"
    ),
    # issue 25, run of 2026-12-02 (workspace, identity after issue 23)
    ("stackconfig/identity.py", 93, "Gt -> GtE"): (
        "the acknowledgement's vault id is either a valid vault id (9 parts: the field's own validator ran "
        "first) or the '<key_vault_id>' placeholder (1 part): never exactly 8"
    ),
    ("components/workspace.py", 375, "and -> or"): (
        "__main__ passes only before_workspace grants (identity_grants=[g for g in plan if "
        "g.before_workspace])"
        " and grant_plan puts those on scopes declared before the workspace, so both conditions always hold"
    ),
    # issue 25: stackconfig/errors.py
    ("stackconfig/errors.py", 116, "default 1"): (
        "get_close_matches(..., n=2) puts the same best match first, and only close[0] is read"
    ),
    ("stackconfig/errors.py", 182, "default 1"): (
        "get_close_matches(..., n=2) puts the same best match first, and only close[0] is read"
    ),
    ("stackconfig/errors.py", 179, "default ''"): (
        "a literal_error always has `expected` in its ctx: pydantic-core's ErrorType::LiteralError requires "
        "it (PydanticKnownError('literal_error') without it raises \"'expected' required in context\"), "
        "so the fallback is never read"
    ),
    # issue 25: stackconfig/cli.py
    ("stackconfig/cli.py", 46, "default None"): (
        "`json_error or usage_error_document`: 0 and None both pick the default document"
    ),
    ("stackconfig/cli.py", 65, "default None"): (
        "argparse calls parse_known_args with both arguments given (Lib/argparse.py: parse_args passes "
        "(args, namespace), a subcommand's _SubParsersAction.__call__ (arg_strings, None)), and no code of "
        "ours calls a JsonErrorParser's parse_known_args itself"
    ),
    # doubles/pulumicli/gotool.py
    ("doubles/pulumicli/gotool.py", 133, "continue -> pass"): (
        "the continue is the except clause's only statement and the try the loop body's last: the next file "
        "is read either way"
    ),
    ("doubles/pulumicli/gotool.py", 152, "default ''"): (
        "a stanza without Types: ['-mutant'] holds no 'deb', as [] does not"
    ),
    ("doubles/pulumicli/gotool.py", 153, "default ''"): (
        "a stanza without Suites: ['-mutant'] holds the codename only if a release were named '-mutant'; the "
        "codename is os-release's VERSION_CODENAME (a word such as bookworm)"
    ),
    ("doubles/pulumicli/gotool.py", 156, "default ''"): (
        "the fallback is read only when fields.get('URIs') is true, that is when URIs is there: never"
    ),
    ("components/compute_delete.py", 118, "default None"): (
        "_send reads `dict(params or {})`: 0 and None both send no query beyond the URL's"
    ),
    ("preflight/events.py", 201, "Gt -> GtE"): (
        "on a URN's first event the step was just made from the same metadata: re-filling old, new, keys and"
        " detailedDiff from it changes nothing"
    ),
    ("preflight/events.py", 209, "default ''"): (
        "the engine sends every resOutputsEvent with its urn (apitype StepEventMetadata.URN): the fallback"
        " is read only for a malformed event, which then matches no step of a well-formed log either way"
    ),
    ("preflight/events.py", 216, "default ''"): (
        "a diagnostic without a severity is dropped either way: neither '' nor '-mutant' is error or warning"
    ),
    ("jobs/userjobcheck.py", 82, "Gt -> GtE"): (
        "`gpus >= 0 and per_node < gpus` on a size without GPUs asks per_node < 0, which no count is"
    ),
    ("preflight/langhost.py", 93, "and -> or"): (
        "getattr(value, '__all__', None) on any other attribute of the program's module (a plain module, a"
        " value) reads an attribute or gives None: nothing loads, as when the value is skipped"
    ),
    (
        "preflight/langhost.py",
        118,
        "continue -> pass",
    ): "the except clause's continue ends the loop body anyway",
    # vmsizes/prices.py, run of 2026-12-06
    (
        "vmsizes/prices.py",
        78,
        "default None",
    ): ("age_days reads `now or datetime.now(UTC)`: 0 and None both mean now"),
    (
        "vmsizes/prices.py",
        87,
        "default None",
    ): ("describe passes `now` to age_days, where 0 and None both mean now"),
    (
        "vmsizes/prices.py",
        109,
        "default None",
    ): ("locate reads `if explicit:`: 0 and None both mean no path given"),
    ("vmsizes/prices.py", 183, "default ''"): (
        "a productName of '-mutant' holds no 'windows', as '' does not: the same tier"
    ),
    ("vmsizes/prices.py", 185, "default ''"): (
        "a missing meterName or skuName read as '-mutant' holds neither 'low priority' nor 'spot',"
        " as '' does not"
    ),
    (
        "vmsizes/prices.py",
        202,
        "default ''",
    ): ("no catalog size is named '-mutant', as none is named '': skipped"),
    ("vmsizes/prices.py", 210, "default ''"): (
        "a missing effectiveStartDate ('' or '-mutant') sorts before every ISO date (digits > '-' > ''), and"
        " two undated items keep the first either way: the same newest"
    ),
    ("doubles/pulumicli/gotool.py", 186, "default ''"): (
        "without VERSION_CODENAME, '' skips debian_mirror and '-mutant' asks it for suite '-mutant', which "
        "no apt source names: both give no mirror and return before the backports list"
    ),
}


@dataclass
class Mutant:
    file: str
    line: int
    what: str
    killed: bool | None = None
    seconds: float = 0.0


def _mutated_constant(node: ast.Constant) -> ast.Constant | None:
    value = node.value
    if isinstance(value, bool):
        return ast.Constant(not value)
    if isinstance(value, (int, float)):
        return ast.Constant(value + 1)
    if isinstance(value, str):
        return ast.Constant(value + "-mutant")
    if value is None:
        return ast.Constant(0)
    return None


class _Sites(ast.NodeVisitor):
    """Every mutation site of a module, as (node id, kind, description, line)."""

    def __init__(self, extended: bool = False) -> None:
        self.sites: list[tuple[int, str, str, int]] = []
        self._docstrings: set[int] = set()
        self.extended = extended

    def _add(self, node: ast.AST, kind: str, what: str) -> None:
        if self.extended:
            self.sites.append((id(node), kind, what, node.lineno))  # type: ignore[attr-defined]

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        self._add(node, "boolop", "and -> or" if isinstance(node.op, ast.And) else "or -> and")
        self.generic_visit(node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> None:
        if isinstance(node.op, ast.Not):
            self._add(node, "unnot", "not x -> x")
        self.generic_visit(node)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        new = BINOPS.get(type(node.op))
        if new is not None and not (isinstance(node.left, ast.Constant) and isinstance(node.left.value, str)):
            self._add(node, "binop", f"{type(node.op).__name__} -> {new.__name__}")
        self.generic_visit(node)

    def visit_If(self, node: ast.If) -> None:
        if isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            return  # imports for type hints only: no behaviour to change
        self._add(node, "negate", "if c -> if not c")
        for child in node.body:
            if isinstance(child, ast.Return) and child.value is not None:
                is_none = isinstance(child.value, ast.Constant) and child.value.value is None
                if not is_none:
                    self._add(child, "retnone", "return X -> return None")
        self.generic_visit(node)

    def visit_While(self, node: ast.While) -> None:
        if not (isinstance(node.test, ast.Constant) and node.test.value is True):
            self._add(node, "negate", "while c -> while not c")
        self.generic_visit(node)

    def visit_IfExp(self, node: ast.IfExp) -> None:
        self._add(node, "negate", "x if c else y -> x if not c else y")
        self.generic_visit(node)

    def visit_Break(self, node: ast.Break) -> None:
        self._add(node, "loopjump", "break -> continue")

    def visit_Continue(self, node: ast.Continue) -> None:
        self._add(node, "loopjump", "continue -> break")
        self._add(node, "pass", "continue -> pass")

    def visit_Module(self, node: ast.Module) -> None:
        self._mark_docstrings(node)
        self.generic_visit(node)

    def _mark_docstrings(self, node: ast.AST) -> None:
        for child in ast.walk(node):
            body = getattr(child, "body", None)
            first = body[0] if isinstance(body, list) and body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                self._docstrings.add(id(first.value))

    def _default(self, node: ast.AST | None, line: int) -> None:
        """A literal default (a name such as DEFAULT_MIN_SECONDS is mutated where it is assigned)."""
        literal = isinstance(node, ast.Constant) and id(node) not in self._docstrings
        if literal and _mutated_constant(node) is not None:  # type: ignore[arg-type]
            self.sites.append((id(node), "constant", f"default {node.value!r}", line))

    def visit_Compare(self, node: ast.Compare) -> None:
        for i, op in enumerate(node.ops):
            if type(op) in SWAP:
                new = SWAP[type(op)].__name__
                self.sites.append((id(node), f"op{i}", f"{type(op).__name__} -> {new}", node.lineno))
        for operand in [node.left, *node.comparators]:
            number = isinstance(operand, ast.Constant) and isinstance(operand.value, (int, float))
            if number and not isinstance(operand.value, bool):  # type: ignore[union-attr]
                self.sites.append((id(operand), "constant", f"compared {operand.value!r}", node.lineno))  # type: ignore[union-attr]
        self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> None:
        # module-level constants: DEFAULT_WARN_DAYS = 180
        value = node.value
        if node.col_offset == 0 and isinstance(value, ast.Constant) and isinstance(value.value, (int, float)):
            self._default(value, node.lineno)
        self.generic_visit(node)

    def visit_Dict(self, node: ast.Dict) -> None:
        # JSON-schema numbers: {"minimum": 0, "default": ...}
        for key, value in zip(node.keys, node.values, strict=True):
            schema_number = isinstance(key, ast.Constant) and key.value in ("minimum", "maximum", "default")
            if schema_number and isinstance(value, ast.Constant):
                self._default(value, value.lineno)
        self.generic_visit(node)

    def visit_arguments(self, node: ast.arguments) -> None:
        for default in [*node.defaults, *(d for d in node.kw_defaults if d is not None)]:
            self._default(default, default.lineno)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Name) and node.func.id in MINMAX:
            self._add(node, "minmax", f"{node.func.id} -> {MINMAX[node.func.id]}")
        if isinstance(node.func, ast.Attribute):
            name = node.func.attr if node.func.attr == "get" else ""  # mapping.get(key, fallback)
        else:
            name = getattr(node.func, "id", "")
        index = FALLBACK_CALLS.get(name)
        if index is not None and len(node.args) > index:
            self._default(node.args[index], node.lineno)
        for kw in node.keywords:
            if kw.arg in ("default", "cutoff", "n"):
                self._default(kw.value, kw.value.lineno)
        self.generic_visit(node)


class _Apply(ast.NodeTransformer):
    def __init__(self, target: int, kind: str) -> None:
        self.target, self.kind = target, kind

    def visit(self, node: ast.AST) -> ast.AST:
        if id(node) == self.target:
            if self.kind.startswith("op"):
                assert isinstance(node, ast.Compare)
                i = int(self.kind[2:])
                node.ops[i] = SWAP[type(node.ops[i])]()
                return node
            if self.kind == "constant":
                assert isinstance(node, ast.Constant)
                return ast.copy_location(_mutated_constant(node), node)  # type: ignore[arg-type]
            return self._extended(node)
        return super().visit(node)

    def _extended(self, node: ast.AST) -> ast.AST:
        kind = self.kind
        if kind == "boolop":
            assert isinstance(node, ast.BoolOp)
            node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        elif kind == "unnot":
            assert isinstance(node, ast.UnaryOp)
            return node.operand
        elif kind == "binop":
            assert isinstance(node, ast.BinOp)
            node.op = BINOPS[type(node.op)]()
        elif kind == "negate":
            assert isinstance(node, (ast.If, ast.While, ast.IfExp))
            node.test = ast.UnaryOp(ast.Not(), node.test)
        elif kind == "retnone":
            assert isinstance(node, ast.Return)
            node.value = ast.Constant(None)
        elif kind == "loopjump":
            return ast.Continue() if isinstance(node, ast.Break) else ast.Break()
        elif kind == "pass":
            return ast.Pass()
        elif kind == "minmax":
            assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            node.func = ast.Name(MINMAX[node.func.id], ast.Load())
        return ast.copy_location(node, node)


def mutants(file: str, source: str, extended: bool = False) -> Iterator[tuple[Mutant, str]]:
    """Each mutant of `file` with the mutated module source."""
    sites = _Sites(extended)
    sites.visit(ast.parse(source))
    for target, kind, what, line in sites.sites:
        tree = ast.parse(source)  # fresh tree: node ids below refer to this parse's nodes
        finder = _Sites(extended)
        finder.visit(tree)
        index = [s[:2] for s in sites.sites].index((target, kind))
        new_target, new_kind, _, _ = finder.sites[index]
        mutated = _Apply(new_target, new_kind).visit(tree)
        yield Mutant(file, line, what), ast.unparse(ast.fix_missing_locations(mutated))


# Third-party packages the tests import, loaded once by the parent of `--fork` (never a project module: each
# mutant's test process imports the project fresh from the scratch copy).
PRELOAD = (
    "pytest",
    "azure.core",
    "azure.ai.ml",
    "pulumi",
    "pulumi_azure_native.machinelearningservices",
    "pydantic",
    "rich.console",
    "yaml",
    "grpc",
    "torch",  # jobs/payload/checkpointing.py's tests: ~3 s of each mutant's run otherwise
    "torch.distributed.checkpoint",
)


def preload() -> None:
    import importlib

    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except Exception:  # a package this checkout lacks: its tests import it themselves
            continue


def run_tests_forked(copy: Path, tests: list[str], timeout: float = 300) -> bool:
    """run_tests in a child forked from a parent that has the heavy packages imported (a test run of a
    small module is then a second or two instead of the imports' seven on a busy machine)."""
    pid = os.fork()
    if pid == 0:  # the child: pytest in the scratch copy, output discarded, its exit status back
        code = 99
        try:
            os.chdir(copy)
            sys.path.insert(0, str(copy))
            sys.dont_write_bytecode = True
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 1)
            os.dup2(null, 2)
            import pytest

            code = int(pytest.main(["-x", "-q", "-p", "no:cacheprovider", "-o", "addopts=", *tests]))
        finally:
            os._exit(code)
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status) != 0
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            return True  # a mutant that hangs is detected
        time.sleep(0.05)


def run_tests(copy: Path, tests: list[str], timeout: float = 300) -> bool:
    """True when the tests fail (the mutant is killed)."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-o", "addopts=", *tests]
    try:
        done = subprocess.run(cmd, cwd=copy, env=env, capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return True  # a mutant that hangs is detected
    return done.returncode != 0


def scratch_copy() -> Path:
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    dest = Path(tempfile.mkdtemp(prefix="azml-mutate-"))
    for name in files.splitlines():
        src = ROOT / name
        if src.is_file() and not src.is_symlink():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    return dest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--only",
        nargs="*",
        help="files to mutate (default: policies/*.py, vmsizes/quota.py; "
        "jobs/verify/logchecks.py etc. by name)",
    )
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument(
        "--extended", action="store_true", help="also mutate conditions, arithmetic, loops and returns"
    )
    parser.add_argument(
        "--no-fork",
        action="store_true",
        help="run each mutant's tests in a new interpreter (default: fork one with the packages imported)",
    )
    parser.add_argument(
        "--lines",
        type=lambda v: {int(x) for x in v.split(",")},
        metavar="N,M",
        help="mutate only these lines (re-check the survivors of a full run after adding tests)",
    )
    parser.add_argument("--tests", nargs="+", metavar="PATH", help="the tests to run (default: TESTS[file])")
    parser.add_argument(
        "--timeout", type=float, default=300.0, metavar="S", help="seconds per mutant's tests (default 300)"
    )
    args = parser.parse_args(argv)
    if not (args.timeout > 0):
        parser.error(f"--timeout {args.timeout}: must be above 0, e.g. 120")
    missing = [t for t in args.tests or [] if not (ROOT / t.split("::")[0]).exists()]
    if missing:
        parser.error(f"--tests {' '.join(missing)}: no such file or folder under {ROOT}")
    targets = args.only or TARGETS
    runner = run_tests
    if not args.no_fork and hasattr(os, "fork"):
        preload()
        runner = run_tests_forked
    copy = scratch_copy()
    results: list[Mutant] = []
    started = time.monotonic()
    try:
        for file in targets:
            original = (ROOT / file).read_text()
            tests = args.tests or TESTS.get(file, DEFAULT_TESTS)
            # The unparsed original must pass: the mutator's round trip changes nothing.
            (copy / file).write_text(ast.unparse(ast.parse(original)))
            if runner(copy, tests, args.timeout):
                print(
                    f"{file}: the tests fail on the unparsed, unmutated module; fix that first",
                    file=sys.stderr,
                )
                return 2
            for mutant, source in mutants(file, original, args.extended):
                if args.lines and mutant.line not in args.lines:
                    continue
                (copy / file).write_text(source)
                t0 = time.monotonic()
                mutant.killed = runner(copy, tests, args.timeout)
                mutant.seconds = round(time.monotonic() - t0, 1)
                results.append(mutant)
                if not args.json:
                    mark = "killed " if mutant.killed else "SURVIVED"
                    print(f"{mark} {file}:{mutant.line} {mutant.what} ({mutant.seconds}s)", flush=True)
            (copy / file).write_text(original)
    finally:
        shutil.rmtree(copy, ignore_errors=True)
    survivors = [m for m in results if not m.killed]
    equivalent = [m for m in survivors if (m.file, m.line, m.what) in EQUIVALENT]
    unexplained = [m for m in survivors if (m.file, m.line, m.what) not in EQUIVALENT]
    summary = {
        "mutants": len(results),
        "killed": len(results) - len(survivors),
        "equivalent": [{**asdict(m), "why": EQUIVALENT[(m.file, m.line, m.what)]} for m in equivalent],
        "survivors": [asdict(m) for m in unexplained],
        "seconds": round(time.monotonic() - started),
    }
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print(
            f"{summary['mutants']} mutants, {summary['killed']} killed, {len(equivalent)} equivalent, "
            f"{len(unexplained)} surviving ({summary['seconds']} s)"
        )
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main())

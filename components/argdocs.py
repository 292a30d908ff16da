"""The components' argument tables, read from the `*Args` docstrings: one text for code and docs.

Each `*Args` docstring has a `Required:` and an `Optional:` section of bullets,
``- `name`: text`` and ``- `name` (default X): text`` (several names may share a bullet); this module
parses them, checks them against the dataclass (every field documented once, in the right section, with
its real default) and renders the markdown tables of docs/components.md between
``<!-- argdocs:WorkspaceArgs -->`` and ``<!-- /argdocs -->``. `python -m components.argdocs --write`
rewrites those tables; tests/components/test_argdocs.py fails when they differ.
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

DOC = Path(__file__).resolve().parent.parent / "docs" / "components.md"
_BULLET = re.compile(
    r"^- (?P<names>`[^`]+`(?:, `[^`]+`)*)(?: \(default (?P<default>[^)]*)\))?(?P<text>(?:[:.] ?.*)?)$"
)
_BLOCK = re.compile(r"(<!-- argdocs:(?P<cls>\w+) -->\n)(?P<body>.*?)(<!-- /argdocs -->)", re.S)


@dataclass(frozen=True)
class ArgDoc:
    name: str
    required: bool
    default: str  # as written after "(default", "" for a required argument
    text: str


def _sections(doc: str) -> dict[str, list[str]]:
    """The bullets of each section, continuation lines joined with one space."""
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in inspect.cleandoc(doc).splitlines():
        head = line.strip()
        if head in ("Required:", "Optional:"):
            current = sections.setdefault(head[:-1], [])
        elif current is not None and line.startswith("- "):
            current.append(line)
        elif current is not None and line.startswith("  ") and current:
            current[-1] += " " + head
        elif current is not None and head:
            current = None  # prose after the lists belongs to no argument
    return sections


def parse(cls: type) -> tuple[list[ArgDoc], list[str]]:
    """The documented arguments of `cls` in docstring order, and the bullets that do not parse."""
    docs: list[ArgDoc] = []
    bad: list[str] = []
    for section, bullets in _sections(cls.__doc__ or "").items():
        for bullet in bullets:
            m = _BULLET.match(bullet)
            if not m:
                bad.append(
                    f"{cls.__name__}: cannot read the bullet {bullet[:60]!r}; write - `name` (default X): text"  # noqa: E501
                )
                continue
            names = re.findall(r"`([^`]+)`", m["names"])
            for name in names:
                text = m["text"].lstrip(":. ")
                docs.append(ArgDoc(name, section == "Required", (m["default"] or "").strip(), text))
    return docs, bad


def _default_text(f: dataclasses.Field) -> str | None:
    """How the docstring must spell a field's default: None, True, 0, "dedicated", empty."""
    if f.default is not dataclasses.MISSING:
        value = f.default
    elif f.default_factory is not dataclasses.MISSING:
        value = f.default_factory()
    else:
        return None
    if isinstance(value, str):
        return f'"{value}"'
    if not isinstance(value, bool | int | float) and value is not None and len(value) == 0:
        return "empty"
    return repr(value)


def problems(cls: type) -> list[str]:
    """Every mismatch between the docstring and the dataclass, each naming the argument and the fix."""
    docs, found = parse(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    seen: dict[str, int] = {}
    for d in docs:
        seen[d.name] = seen.get(d.name, 0) + 1
    for name in fields:
        if name not in seen:
            found.append(f"{cls.__name__}.{name}: not in the docstring; add it under Required or Optional")
        elif seen[name] > 1:
            found.append(f"{cls.__name__}.{name}: documented {seen[name]} times; keep one bullet")
    for d in docs:
        f = fields.get(d.name)
        if f is None:
            found.append(f"{cls.__name__}.{d.name}: documented but not a field; remove it or add the field")
            continue
        expected = _default_text(f)
        if expected is None and not d.required:
            found.append(
                f"{cls.__name__}.{d.name}: has no default but is under Optional; move it to Required"
            )
        elif expected is not None and d.required:
            found.append(f"{cls.__name__}.{d.name}: has a default ({expected}) but is under Required")
        elif expected is not None:
            written = re.split(r" = |: |, ", d.default, maxsplit=1)[0]
            if written != expected:
                found.append(
                    f"{cls.__name__}.{d.name}: the docstring says default {written}, the field {expected}"
                )
    return found


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def table(cls: type) -> str:
    """The markdown table of `cls`'s arguments: Required first, each in docstring order."""
    docs, _ = parse(cls)
    rows = ["| argument | | default | what |", "|---|---|---|---|"]
    for d in sorted(docs, key=lambda d: not d.required):
        kind = "Required" if d.required else "Optional"
        rows.append(f"| `{d.name}` | {kind} | {_cell(d.default)} | {_cell(d.text)} |")
    return "\n".join(rows) + "\n"


def classes() -> dict[str, type]:
    import components

    return {name: getattr(components, name) for name in components.__all__ if name.endswith("Args")}


def render(text: str) -> str:
    """`text` (docs/components.md) with every argdocs block replaced by its class's table."""
    known = classes()

    def block(m: re.Match[str]) -> str:
        cls = known.get(m["cls"])
        if cls is None:
            raise KeyError(f"docs/components.md names {m['cls']}, not a components *Args class")
        return m.group(1) + table(cls) + m.group(4)

    return _BLOCK.sub(block, text)


def main(argv: list[str] | None = None) -> int:
    """Exit 0: tables equal the docstrings (or were rewritten); 1: tables stale; 2: a docstring drifted."""
    p = argparse.ArgumentParser(prog="python -m components.argdocs", description=__doc__.splitlines()[0])
    p.add_argument("--write", action="store_true", help="rewrite the tables in docs/components.md")
    p.add_argument("--json", action="store_true", help="one JSON document: problems, stale, written")
    args = p.parse_args(argv)
    found = [problem for cls in classes().values() for problem in problems(cls)]
    if not DOC.is_file():
        found.append(f"{DOC}: not found; run this in a checkout of the repository (the wheel ships no docs/)")
        current = ""
    else:
        current = DOC.read_text()
    stale = not found and render(current) != current
    written = stale and args.write
    if written:
        DOC.write_text(render(current))
    rc = 2 if found else 1 if stale and not written else 0
    if args.json:
        print(json.dumps({"problems": found, "stale": stale, "written": written, "exit": rc}))
        return rc
    for problem in found:
        print(problem, file=sys.stderr)
    if written:
        print("docs/components.md: argument tables rewritten from the docstrings")
    elif stale:
        print("docs/components.md: the argument tables differ from the docstrings; run: make docs")
    elif not found:
        print("docs/components.md: the argument tables equal the docstrings")
    return rc


if __name__ == "__main__":
    raise SystemExit(main())

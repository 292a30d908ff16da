"""components/argdocs.py: the argument tables of docs/components.md are the `*Args` docstrings, and a
docstring that drifts from its dataclass (a field left out, a wrong default, a section mix-up) is named."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pytest

from components import argdocs


def test_every_args_class_documents_each_field_once_with_its_default() -> None:
    names = set(argdocs.classes())
    assert names == {
        "WorkspaceArgs",
        "GpuClusterArgs",
        "ResourceLocksArgs",
        "PrivateEndpointsArgs",
        "RoleAssignmentsArgs",
        "WorkspaceDiagnosticsArgs",
    }
    assert {name: argdocs.problems(cls) for name, cls in argdocs.classes().items()} == {n: [] for n in names}


def test_docs_components_md_tables_equal_the_docstrings() -> None:
    text = argdocs.DOC.read_text()
    assert argdocs.render(text) == text, "run: python -m components.argdocs --write"
    for name in argdocs.classes():
        assert f"<!-- argdocs:{name} -->" in text


def test_the_table_lists_required_then_optional_with_defaults() -> None:
    rows = argdocs.table(argdocs.classes()["GpuClusterArgs"]).splitlines()
    assert rows[0] == "| argument | | default | what |"
    kinds = [r.split(" | ")[1] for r in rows[2:]]
    assert kinds == ["Required"] * 7 + ["Optional"] * 9
    tier = next(r for r in rows if r.startswith("| `tier` "))
    assert tier.startswith('| `tier` | Optional | "dedicated" | ')
    assert next(r for r in rows if r.startswith("| `resource_group_name` ")).startswith(
        "| `resource_group_name` | Required |  | the parent workspace"
    )


@dataclass(frozen=True)
class _Good:
    """Required:
    - `a`, `b`: two names in one bullet.

    Optional:
    - `c` (default 3): a number.
    - `d` (default "x" = the usual): a string | with a bar.
    - `e` (default empty).
    - `f` (default None: nothing).
    """

    a: int
    b: int
    c: int = 3
    d: str = "x"
    e: dict = field(default_factory=dict)
    f: str | None = None


def test_a_well_formed_docstring_has_no_problems_and_escapes_bars() -> None:
    assert argdocs.problems(_Good) == []
    table = argdocs.table(_Good)
    assert '| `d` | Optional | "x" = the usual | a string \\| with a bar. |' in table
    assert "| `e` | Optional | empty |  |" in table
    assert "| `b` | Required |  | two names in one bullet. |" in table


@dataclass(frozen=True)
class _Drifted:
    """Required:
    - `a`: required.
    - `b`: has a default in the code.
    - `gone`: not a field.

    Optional:
    - `c` (default 4): the code says 3.
    - `d`: no default in the code.
    - `a`: twice.
    bad bullet ends the section
    - `e` (default empty): after prose, ignored.
    """

    a: int
    d: int
    b: int = 1
    c: int = 3
    e: tuple = ()
    f: bool = True


def test_each_drift_is_named_with_its_fix() -> None:
    assert argdocs.problems(_Drifted) == [
        "_Drifted.a: documented 2 times; keep one bullet",
        "_Drifted.e: not in the docstring; add it under Required or Optional",
        "_Drifted.f: not in the docstring; add it under Required or Optional",
        "_Drifted.b: has a default (1) but is under Required",
        "_Drifted.gone: documented but not a field; remove it or add the field",
        "_Drifted.c: the docstring says default 4, the field 3",
        "_Drifted.d: has no default but is under Optional; move it to Required",
        "_Drifted.a: has no default but is under Optional; move it to Required",
    ]


def test_an_unreadable_bullet_is_named() -> None:
    @dataclass
    class Odd:
        """Optional:
        - c has no backticks
        """

        c: int = 1

    assert argdocs.problems(Odd) == [
        "Odd: cannot read the bullet '- c has no backticks'; write - `name` (default X): text",
        "Odd.c: not in the docstring; add it under Required or Optional",
    ]


def test_the_command_writes_then_accepts_and_refuses_a_stale_file(tmp_path, monkeypatch, capsys) -> None:
    doc = tmp_path / "components.md"
    doc.write_text("# x\n<!-- argdocs:WorkspaceDiagnosticsArgs -->\nold table\n<!-- /argdocs -->\n")
    monkeypatch.setattr(argdocs, "DOC", doc)
    assert argdocs.main([]) == 1
    assert "differ from the docstrings; run: make docs" in capsys.readouterr().out
    assert argdocs.main(["--json"]) == 1
    assert json.loads(capsys.readouterr().out) == {"problems": [], "stale": True, "written": False, "exit": 1}
    assert argdocs.main(["--write", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"problems": [], "stale": True, "written": True, "exit": 0}
    assert "| `log_analytics_id` | Required |" in doc.read_text()
    assert "old table" not in doc.read_text()
    assert argdocs.main([]) == 0


def test_a_drifted_docstring_exits_2_and_names_it(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setattr(argdocs, "classes", lambda: {"_Drifted": _Drifted})
    doc = tmp_path / "components.md"
    doc.write_text("<!-- argdocs:_Drifted -->\n<!-- /argdocs -->\n")
    monkeypatch.setattr(argdocs, "DOC", doc)
    assert argdocs.main(["--write"]) == 2
    err = capsys.readouterr().err
    assert "_Drifted.c: the docstring says default 4, the field 3" in err
    assert doc.read_text() == "<!-- argdocs:_Drifted -->\n<!-- /argdocs -->\n"  # nothing written


def test_without_the_docs_file_it_says_to_run_in_a_checkout(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setattr(argdocs, "DOC", tmp_path / "missing.md")
    assert argdocs.main([]) == 2
    assert "not found; run this in a checkout of the repository" in capsys.readouterr().err


def test_a_block_naming_an_unknown_class_is_an_error() -> None:
    with pytest.raises(KeyError, match="NoSuchArgs"):
        argdocs.render("<!-- argdocs:NoSuchArgs -->\n<!-- /argdocs -->")

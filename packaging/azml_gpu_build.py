"""The build backend of the `azml-gpu` wheel (pyproject.toml `[build-system]`, `backend-path =
["packaging"]`): setuptools' own (`setuptools.build_meta`), run on a staged copy of the repository in which
every package of this project sits under one top-level name, `azml_gpu` (docs/architecture.md, "One installed
name").

The repository keeps its layout (`components/`, `policies/`, `jobs/`, ... at the root, importing each other as
`components`, `policies`, ...); the wheel installs `azml_gpu.components`, `azml_gpu.policies`, ... and nothing
else. Staging (`stage`) copies each package to `azml_gpu/<package>/` and changes, in every copied `.py` file:

- absolute imports of the project's own packages (`import components.x`, `from stackconfig import y`): the
  module name gets the prefix `azml_gpu.` (`ast` finds the `Import` / `ImportFrom` nodes, level 0, whose first
  name is ours; the text is edited at their line and column, everything else is kept byte for byte);
- the commands printed to users (`python -m jobs plan`, `python3 -m preflight.stacks`) in string literals and
  comments: `python -m azml_gpu.jobs plan`, so a hint names what runs where it is printed.

Imports computed at run time (`importlib.import_module`, `-m` in a subprocess argv, `find_spec`) are written
package-relative in the source itself (`f"{__package__}.commands.plan"`, `preflight.layout`);
tests/packaging/test_build_backend.py fails on a new absolute one.

The pack's manifest (`policies/PulumiPolicy.yaml`) loses its `virtualenv: .venv` runtime option in the
wheel: installed, the pack runs on the interpreter azml-gpu is installed in (the Pulumi CLI's pip toolchain
runs `python` from PATH when no virtualenv is named: pulumi/pulumi sdk/python/toolchain/pip.go `Command`,
v3.274.1), not in a `.venv` inside site-packages.

`pip wheel .` and `pip install .` call `build_wheel`; `build_sdist` writes the staged tree as a plain
setuptools source distribution; an editable install is refused with the reason (the checkout runs from its
root)."""

from __future__ import annotations

import ast
import contextlib
import io
import os
import re
import shutil
import tempfile
import tokenize
from collections.abc import Iterator
from pathlib import Path

from setuptools import build_meta as _setuptools

ROOT = Path(__file__).resolve().parent.parent
#: The one installed top-level name.
NAME = "azml_gpu"
#: The repository's packages, each installed as `azml_gpu.<package>`.
PACKAGES = ("azroles", "components", "jobs", "policies", "preflight", "stackconfig", "vmsizes")
#: Repository files the build reads besides the packages (pyproject.toml names them).
FILES = ("pyproject.toml", "README.md", "LICENSE", "requirements.txt")
#: Never staged: virtualenvs, caches, the pack's vendored catalog wheel, Node.js modules.
IGNORE = shutil.ignore_patterns(".venv", "__pycache__", "*.pyc", "node_modules", "vendor", "*.egg-info")

_HINT = re.compile(r"\b(python3?\s+-m\s+)(" + "|".join(PACKAGES) + r")\b")

INIT = f'''"""azml-gpu: Azure ML GPU compute as code, installed as one name.

`azml_gpu.components` (Pulumi components), `azml_gpu.policies` (the CrossGuard pack, with its
PulumiPolicy.yaml), `azml_gpu.preflight` (the gate), `azml_gpu.jobs` (post-deploy jobs),
`azml_gpu.stackconfig`, `azml_gpu.vmsizes`, `azml_gpu.azroles`. Built by packaging/azml_gpu_build.py."""

PACKAGES = {PACKAGES!r}
'''


def _ours(module: str | None) -> bool:
    return module is not None and module.split(".")[0] in PACKAGES


def _offsets(text: str) -> list[int]:
    """The character offset of each line's start (ast's col_offset counts UTF-8 bytes: see `_at`)."""
    starts, total = [0], 0
    for line in text.splitlines(keepends=True):
        total += len(line)
        starts.append(total)
    return starts


def _at(lines: list[str], starts: list[int], lineno: int, col_bytes: int) -> int:
    """The character offset of (lineno, col_offset in UTF-8 bytes)."""
    line = lines[lineno - 1]
    return starts[lineno - 1] + len(line.encode("utf-8")[:col_bytes].decode("utf-8"))


def rewrite_imports(text: str) -> str:
    """`text` with each absolute import of one of PACKAGES prefixed `azml_gpu.`; the rest byte for byte.
    `import vmsizes` becomes `import azml_gpu.vmsizes as vmsizes` (the name the code uses stays bound); a
    dotted `import vmsizes.quota` without `as` is refused (it would bind `azml_gpu`): write `from vmsizes
    import quota`."""
    tree = ast.parse(text)
    lines = text.splitlines(keepends=True)
    starts = _offsets(text)
    inserts: list[tuple[int, str]] = []  # (character offset, text inserted there)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if not _ours(a.name):
                    continue
                inserts.append((_at(lines, starts, a.lineno, a.col_offset), f"{NAME}."))
                if a.asname is None:
                    if "." in a.name:
                        parent, _, last = a.name.rpartition(".")
                        raise ValueError(
                            f"line {a.lineno}: `import {a.name}` binds `{NAME}` once installed; "
                            f"write `from {parent} import {last}`"
                        )
                    end = _at(lines, starts, a.end_lineno, a.end_col_offset)  # type: ignore[arg-type]
                    inserts.append((end, f" as {a.name}"))
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and _ours(node.module):
            inserts.append((_module_offset(text, lines, starts, node), f"{NAME}."))
    out = text
    for offset, piece in sorted(inserts, reverse=True):
        out = out[:offset] + piece + out[offset:]
    ast.parse(out)  # still Python
    return out


def _module_offset(text: str, lines: list[str], starts: list[int], node: ast.ImportFrom) -> int:
    """Where the module name of `from <module> import ...` starts: the first token after `from`."""
    begin = _at(lines, starts, node.lineno, node.col_offset)
    tokens = tokenize.generate_tokens(io.StringIO(text[begin:]).readline)
    for tok in tokens:
        if tok.type == tokenize.NAME and tok.string != "from":
            row, col = tok.start
            if row == 1:
                return begin + col
            return starts[node.lineno - 1 + row - 1] + col
    raise ValueError(f"line {node.lineno}: no module after `from`")


def rewrite_hints(text: str) -> str:
    """`python -m jobs ...` -> `python -m azml_gpu.jobs ...` in string literals and comments only."""
    out: list[str] = []
    starts = _offsets(text)
    last = 0
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type not in (tokenize.STRING, tokenize.COMMENT, getattr(tokenize, "FSTRING_MIDDLE", -1)):
            continue
        begin = starts[tok.start[0] - 1] + tok.start[1]
        end = starts[tok.end[0] - 1] + tok.end[1]
        piece = text[begin:end]
        changed = _HINT.sub(lambda m: f"{m.group(1)}{NAME}.{m.group(2)}", piece)
        if changed != piece:
            out += [text[last:begin], changed]
            last = end
    out.append(text[last:])
    return "".join(out)


def rewrite(text: str) -> str:
    """One module of the repository as the wheel holds it."""
    return rewrite_hints(rewrite_imports(text))


def installed_manifest(text: str) -> str:
    """policies/PulumiPolicy.yaml for the wheel: the `virtualenv:` runtime option replaced by a comment saying
    which interpreter runs the pack (module docstring)."""
    out = []
    for line in text.splitlines(keepends=True):
        found = re.match(r"(\s+)virtualenv:\s", line)
        note = "# installed: no virtualenv; `python` on PATH, the one azml-gpu is installed in\n"
        out.append(f"{found.group(1)}{note}" if found else line)
    return "".join(out)


def stage(into: Path, root: Path = ROOT) -> Path:
    """The staged tree under `into`: FILES, `azml_gpu/__init__.py` and `azml_gpu/<package>/` rewritten."""
    for name in FILES:
        shutil.copy2(root / name, into / name)
    pyproject = (into / "pyproject.toml").read_text(encoding="utf-8")
    # The staged tree is a plain setuptools project (what build_sdist ships).
    pyproject = re.sub(
        r"(?ms)^\[build-system\]\n.*?(?=^\[)",
        '[build-system]\nrequires = ["setuptools==80.9.0"]\nbuild-backend = "setuptools.build_meta"\n\n',
        pyproject,
        count=1,
    )
    (into / "pyproject.toml").write_text(pyproject, encoding="utf-8")
    top = into / NAME
    top.mkdir()
    (top / "__init__.py").write_text(INIT, encoding="utf-8")
    for package in PACKAGES:
        shutil.copytree(root / package, top / package, ignore=IGNORE)
    for path in top.rglob("*.py"):  # azml_gpu/__init__.py too: nothing in it to rewrite
        path.write_text(rewrite(path.read_text(encoding="utf-8")), encoding="utf-8")
    manifest = top / "policies" / "PulumiPolicy.yaml"
    manifest.write_text(installed_manifest(manifest.read_text(encoding="utf-8")), encoding="utf-8")
    return into


@contextlib.contextmanager
def _staged() -> Iterator[Path]:
    here = Path.cwd()
    with tempfile.TemporaryDirectory(prefix="azml-gpu-build-") as tmp:
        tree = stage(Path(tmp))
        os.chdir(tree)
        try:
            yield tree
        finally:
            os.chdir(here)


def _absolute(directory: str) -> str:
    return str(Path(directory).resolve())


def get_requires_for_build_wheel(config_settings=None):
    with _staged():
        return _setuptools.get_requires_for_build_wheel(config_settings)


def get_requires_for_build_sdist(config_settings=None):
    with _staged():
        return _setuptools.get_requires_for_build_sdist(config_settings)


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    metadata_directory = _absolute(metadata_directory)
    with _staged():
        return _setuptools.prepare_metadata_for_build_wheel(metadata_directory, config_settings)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    wheel_directory = _absolute(wheel_directory)
    metadata_directory = _absolute(metadata_directory) if metadata_directory else None
    with _staged():
        return _setuptools.build_wheel(wheel_directory, config_settings, metadata_directory)


def build_sdist(sdist_directory, config_settings=None):
    sdist_directory = _absolute(sdist_directory)
    with _staged():
        return _setuptools.build_sdist(sdist_directory, config_settings)


class EditableUnsupported(RuntimeError):
    pass


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    raise EditableUnsupported(
        "azml-gpu: no editable install: in the repository the packages run from its root under their own "
        "names (`python -m preflight`, `import components`; `make check`), and `azml_gpu.<package>` "
        "resolves there through azml_gpu/__init__.py; install the wheel with `pip install .` instead"
    )

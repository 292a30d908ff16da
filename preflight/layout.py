"""Where this code runs from: a checkout of the repository (the packages at its root, imported as
`preflight`, `policies`, `jobs`, ...) or the installed wheel (one top-level name: `azml_gpu.preflight`,
`azml_gpu.policies`, ...; packaging/azml_gpu_build.py). Computed once, from this module's own name, so that
what is named at run time (a subprocess's `-m`, the shipped pack, the program folder a command falls back
to) is right in both."""

from __future__ import annotations

from pathlib import Path

#: "" in a checkout, "azml_gpu." installed: what goes before a package's name to import it.
PREFIX = __name__.removesuffix("preflight.layout")
#: The folder holding preflight/, policies/, ...: the repository's root, or site-packages/azml_gpu.
PACKAGES_DIR = Path(__file__).resolve().parent.parent
#: The sys.path entry the top-level package is found in: the repository's root, or site-packages.
IMPORT_ROOT = Path(__file__).resolve().parents[__name__.count(".")]


def own(module: str) -> str:
    """The importable name of one of this project's modules: `own("policies")` -> `policies` in a checkout,
    `azml_gpu.policies` installed."""
    return PREFIX + module


def pack_folder() -> Path:
    """The policy pack that ships with this code, beside this package in both layouts: the repository's
    policies/, or site-packages/azml_gpu/policies (the wheel ships it whole, PulumiPolicy.yaml included)."""
    return PACKAGES_DIR / "policies"


def checkout() -> Path | None:
    """The repository's root when this code runs from a checkout with its own program (Pulumi.yaml), else None
    (installed: site-packages is never a program folder)."""
    return PACKAGES_DIR if not PREFIX and (PACKAGES_DIR / "Pulumi.yaml").is_file() else None


def program_folder(cwd: Path | None = None) -> Path:
    """The program a command reads stack files from: the current folder when it holds a Pulumi.yaml, else
    this checkout's program, else (installed) the current folder all the same."""
    here = Path.cwd() if cwd is None else cwd
    if (here / "Pulumi.yaml").is_file():
        return here.resolve()
    return checkout() or here.resolve()

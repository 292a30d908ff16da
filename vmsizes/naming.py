"""Azure VM size naming convention: split a size name into its parts.

Pattern (azure-notes.md 1.1, from
MicrosoftDocs/azure-compute-docs:articles/virtual-machines/vm-naming-conventions.md):
``[Family] + [Sub-family*] + [# of vCPUs] + [Constrained vCPUs*] + [Additive features] + [Accelerator type*]
+ [Memory capacity*] + [Version]``. Constrained sizes (``E64-32s_v5``) are described in
MicrosoftDocs/azure-compute-docs:articles/virtual-machines/constrained-vcpu.md (azure-notes.md 1.2).

Feature letters are only the lower-case run right after the vCPU count (or after ``-<n>``); upper case
later in the name (``RTXPRO`` has an ``R``) never counts (azure-notes.md 1.2, parsing tips). ``r`` = RDMA is
a convention, not in the official letter list (azure-notes.md 1.1, citing how-to-train-distributed-gpu.md
and setup-infiniband.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from vmsizes.errors import UnknownSize

# azure-notes.md 1.2 suggests ^Standard_([A-Z]+)(\d+)(?:-(\d+))?([a-z]*)(.*)$; the prefix and letters are
# matched case-insensitively here because Azure accepts any case, and the feature run is decided below.
_STEM = re.compile(r"^(?P<letters>[A-Za-z]+)(?P<vcpus>\d+)(?:-(?P<active>\d+))?(?P<tail>.*)$")
_PREFIX = "standard_"
_VERSION = re.compile(r"^[vV]\d+$")
# An accelerator token starts with a letter and holds a digit (H100, A10, T4, MI300X, V710, GB300,
# RTXPRO6000BSE: the accelerator segments of azure-gpu-sizes.yaml and azure-notes.md 1.1).
_ACCELERATOR = re.compile(r"^[A-Z][A-Z0-9]*\d[A-Z0-9]*$")
_WORD = re.compile(r"^[A-Za-z][A-Za-z0-9]*$")
# Letters seen after the vCPU count: the official list (a b d e f i l m n o p s t, vm-naming-conventions.md),
# the 'r' RDMA convention, and the undocumented 'h' of NV12hs_v3 / NV4ahs_v4 (azure-notes.md 1.1). Used
# only to split names written in a single case, where upper case cannot mark where the features end
# (isrG5 vs isrg5).
_KNOWN_FEATURE_LETTERS = frozenset("abdefilmnopstrh")
# Tokens that are written in lower case in real names (NC128ds_xl_RTXPRO6000BSE_v6; azure-notes.md 1.1).
_LOWER_TOKENS = frozenset({"xl"})


@dataclass(frozen=True)
class ParsedName:
    """The parts of a size name. ``vcpus`` is the count as written (the base count of a constrained size)."""

    name: str
    family: str
    subfamily: str | None
    vcpus: int
    constrained_vcpus: int | None
    features: str
    accelerator: str | None
    version: str | None
    promo: bool
    memory_capacity: str | None
    extras: tuple[str, ...]
    canonical: str

    @property
    def letters(self) -> str:
        """Family plus sub-family, e.g. "ND", "NCC", "HB"."""
        return self.family + (self.subfamily or "")

    @property
    def active_vcpus(self) -> int:
        """vCPUs the VM can use: the constrained count when there is one (constrained-vcpu.md)."""
        return self.constrained_vcpus if self.constrained_vcpus is not None else self.vcpus

    @property
    def constrained(self) -> bool:
        return self.constrained_vcpus is not None

    @property
    def rdma(self) -> bool:
        """'r' in the feature run: RDMA / InfiniBand by convention (azure-notes.md 1.1 and 1.3 item 5)."""
        return "r" in self.features

    @property
    def amd_cpu(self) -> bool:
        return "a" in self.features

    @property
    def arm_cpu(self) -> bool:
        return "p" in self.features

    @property
    def local_disk(self) -> bool:
        return "d" in self.features

    @property
    def isolated(self) -> bool:
        return "i" in self.features

    @property
    def premium_storage(self) -> bool:
        return "s" in self.features


def parse_name(name: str) -> ParsedName:
    """Split ``name`` into its naming-convention parts; UnknownSize (a ValueError) if it doesn't follow it."""
    if not isinstance(name, str):
        raise UnknownSize(name, f"expected a string, got {type(name).__name__}")
    if not name.strip():
        raise UnknownSize(name, "the name is empty")
    if name != name.strip():
        raise UnknownSize(name, "the name has leading or trailing spaces")
    if not name.lower().startswith(_PREFIX):
        reason = "it must start with 'Standard_'"
        if _try(_PREFIX.capitalize() + name) is not None:
            reason += f" (did you mean 'Standard_{name}'?)"
        raise UnknownSize(name, reason)
    stem = name[len(_PREFIX) :]
    match = _STEM.match(stem)
    if match is None:
        raise UnknownSize(name, "expected family letters followed by the vCPU count after 'Standard_'")
    vcpus = int(match["vcpus"])
    active = int(match["active"]) if match["active"] is not None else None
    if vcpus == 0:
        raise UnknownSize(name, "the vCPU count must be positive")
    if active is not None and not 0 < active < vcpus:
        raise UnknownSize(name, f"the active vCPU count after '-' ({active}) must be from 1 to {vcpus - 1}")

    single_case = stem == stem.lower() or stem == stem.upper()
    features, suffix = _split_features(match["tail"], single_case)
    accelerator, version, promo, memory, extras, canonical_suffix = _read_suffix(name, suffix, single_case)

    letters = match["letters"].upper()
    active_part = f"-{active}" if active is not None else ""
    return ParsedName(
        name=name,
        family=letters[0],
        subfamily=letters[1:] or None,
        vcpus=vcpus,
        constrained_vcpus=active,
        features=features,
        accelerator=accelerator,
        version=version,
        promo=promo,
        memory_capacity=memory,
        extras=extras,
        canonical=f"Standard_{letters}{vcpus}{active_part}{features}{canonical_suffix}",
    )


def _try(name: str) -> ParsedName | None:
    try:
        return parse_name(name)
    except UnknownSize:
        return None


def _split_features(tail: str, single_case: bool) -> tuple[str, str]:
    """Return (feature letters, the rest). In mixed case the features are the lower-case run."""
    if not single_case:
        run = re.match(r"[a-z]*", tail)[0]
        attached = re.match(r"[A-Za-z0-9]*", tail[len(run) :])[0]
        # Feature letters typed in upper case (ND96ISR_H100_v5): a digit-free run of known feature letters is
        # still the features; a token with a digit (isrG5) is not.
        if (
            attached
            and not any(c.isdigit() for c in attached)
            and set(attached.lower()) <= _KNOWN_FEATURE_LETTERS
        ):
            return (run + attached).lower(), tail[len(run) + len(attached) :]
        return run, tail[len(run) :]
    count = 0
    for char in tail.lower():
        if char not in _KNOWN_FEATURE_LETTERS:
            break
        count += 1
    # Single case: the features are the leading run of known feature letters, so isrg5 reads as isr + G5.
    return tail[:count].lower(), tail[count:]


def _read_suffix(
    name: str, suffix: str, single_case: bool
) -> tuple[str | None, str | None, bool, str | None, tuple[str, ...], str]:
    """Read the parts after the features: an attached token (G5), then '_'-separated parts."""
    if not suffix:
        return None, None, False, None, (), ""
    if suffix.startswith("_"):
        attached, parts = None, suffix[1:].split("_")
    else:
        first, *rest = suffix.split("_")
        attached, parts = first, rest
    raws = ([attached] if attached is not None else []) + parts
    # The version is the last part, or the one before a final '_Promo'; elsewhere "V710" is an accelerator.
    version_at = len(raws) - 2 if raws[-1].lower() == "promo" else len(raws) - 1
    tokens: list[tuple[str, str]] = []  # (kind, canonical text)
    for index, raw in enumerate(raws):
        if raw == "":
            raise UnknownSize(name, "it has an empty part between underscores")
        if attached is not None and index == 0 and not _WORD.match(raw):
            raise UnknownSize(name, f"unexpected text {raw!r} after the feature letters")
        tokens.append(_classify(name, raw, single_case, may_be_version=index == version_at))

    kinds = [kind for kind, _ in tokens]
    if kinds.count("version") > 1 or kinds.count("promo") > 1 or kinds.count("memory") > 1:
        raise UnknownSize(name, "it repeats the version, 'Promo' or memory-capacity part")
    if "promo" in kinds and kinds[-1] != "promo":
        raise UnknownSize(name, "'Promo' must be the last part")
    if "version" in kinds and kinds.index("version") != len(kinds) - 1 - ("promo" in kinds):
        raise UnknownSize(name, "the version (e.g. '_v5') must come last, before an optional '_Promo'")

    accelerators = [text for kind, text in tokens if kind == "accelerator"]
    accelerator = accelerators[-1] if accelerators else None
    extras = tuple(accelerators[:-1]) + tuple(text for kind, text in tokens if kind == "word")
    version = next((text for kind, text in tokens if kind == "version"), None)
    memory = next((text for kind, text in tokens if kind == "memory"), None)
    texts = [text for _, text in tokens]
    canonical = (
        (texts[0] + "".join("_" + t for t in texts[1:]))
        if attached is not None
        else "".join("_" + t for t in texts)
    )
    return accelerator, version, "promo" in kinds, memory, extras, canonical


def _classify(name: str, raw: str, single_case: bool, may_be_version: bool) -> tuple[str, str]:
    if raw.lower() == "promo":
        return "promo", "Promo"
    # Mixed case: the version has a lower-case 'v' (V710 is an accelerator). Single case: by position.
    if _VERSION.match(raw) and (may_be_version if single_case else raw[0] == "v"):
        return "version", raw.lower()
    if raw.isdigit():
        return "memory", raw  # M-series memory capacity, e.g. M48ds_1_v3 (azure-notes.md 1.1)
    if not _WORD.match(raw):
        raise UnknownSize(name, f"unexpected part {raw!r}")
    text = raw
    if single_case:
        text = raw.lower() if raw.lower() in _LOWER_TOKENS else raw.upper()
    if _ACCELERATOR.match(text):
        return "accelerator", text
    return "word", text

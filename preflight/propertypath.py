"""Property paths as the Pulumi engine parses and matches them (replaceOnChanges against a detailed diff).

A port of pulumi/pulumi `sdk/go/common/resource/properties_path.go` (read at 1b5949891b, v3.259):
`parsePropertyPath(path, strict=false)` and `PropertyPath.Contains`.

Syntax: bare names run up to the next `.` or `[` (any characters, the property-name production is not
enforced); `[<digits>]` is an int index; `["..."]` a quoted key in which `\\"` escapes a quote; `[*]`, `["*"]`
and a bare `*` segment are the wildcard `"*"`. A leading `.` is an error, as are a missing closing quote or
bracket and a non-numeric unquoted index. `.` followed by `[` is tolerated (non-strict mode).

`contains(p, other)`: `other` is `p` itself or a descendant of it; `"*"` in `p` (only) matches any one
segment, string or int; an int never matches a string and vice versa; a shorter `other` never matches.
"""

from __future__ import annotations

Segment = str | int
PropertyPath = tuple[Segment, ...]


class PropertyPathError(ValueError):
    """A path the engine would refuse (it fails step generation: step_generator.go applyReplaceOnChanges)."""


def parse(path: str) -> PropertyPath:
    """`"properties.properties.vmSize"` -> `("properties", "properties", "vmSize")`; `a[0]["b.c"]` ->
    `("a", 0, "b.c")`."""
    segments: list[Segment] = []
    i, n = 0, len(path)
    if path.startswith("."):
        raise PropertyPathError(f"expected property path {path!r} not to start with '.'")
    while i < n:
        ch = path[i]
        if ch == "[":
            if i + 1 < n and path[i + 1] == '"':
                j, key = i + 2, []
                while j < n and path[j] != '"':
                    if path[j] == "\\" and j + 1 < n:
                        j += 1
                    key.append(path[j])
                    j += 1
                if j >= n or j + 1 >= n or path[j + 1] != "]":
                    raise PropertyPathError(f"missing closing quote or bracket in property path {path!r}")
                segments.append("".join(key))
                i = j + 2
            else:
                end = path.find("]", i)
                if end < 0:
                    raise PropertyPathError(f"missing closing bracket in property path {path!r}")
                index = path[i + 1 : end]
                if index == "*":
                    segments.append("*")
                elif index.isdigit():
                    segments.append(int(index))
                else:
                    raise PropertyPathError(f"invalid array index {index!r} in property path {path!r}")
                i = end + 1
        elif ch == ".":
            i += 1
            if i < n and path[i] == ".":
                raise PropertyPathError(f"empty segment in property path {path!r}")
        else:
            j = i
            while j < n and path[j] not in ".[":
                j += 1
            segments.append(path[i:j])
            i = j
    return tuple(segments)


def contains(p: PropertyPath, other: PropertyPath) -> bool:
    """pulumi `PropertyPath.Contains`: does the path `p` contain `other` (equal, or an ancestor of it)?"""
    if len(other) < len(p):
        return False
    for mine, theirs in zip(p, other, strict=False):
        if isinstance(mine, int):
            if not isinstance(theirs, int) or isinstance(theirs, bool) or theirs != mine:
                return False
        elif mine == "*":
            continue
        elif not isinstance(theirs, str) or theirs != mine:
            return False
    return True


def to_string(p: PropertyPath) -> str:
    """pulumi `PropertyPath.String`: keys outside `[A-Za-z0-9_]` quoted as `["..."]`, ints as `[n]`."""
    out = ""
    for segment in p:
        if isinstance(segment, int):
            out += f"[{segment}]"
        elif segment and all(c.isascii() and (c.isalnum() or c == "_") for c in segment):
            out += f".{segment}" if out else segment
        else:
            escaped = segment.replace('"', '\\"')
            out += f'["{escaped}"]'
    return out

"""Property paths as the Pulumi engine parses and matches them (replaceOnChanges against a detailed diff).

A port of pulumi/pulumi `sdk/go/common/resource/properties_path.go` (read at 1b5949891b, v3.259):
`parsePropertyPath(path, strict=false)` and `PropertyPath.Contains`.

Syntax: bare names run up to the next `.` or `[` (any characters, the property-name production is not
enforced); `[<digits>]` is an int index; `["..."]` a quoted key in which only `\\"` is an escape (a quote);
`[*]`, `["*"]` and a bare `*` segment are the wildcard `"*"`. A leading or trailing `.`, a missing closing
quote or bracket and a non-numeric unquoted index are errors; `.` followed by `[` is tolerated (non-strict
mode), and so, as in the Go code, are repeated dots.

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
    `("a", 0, "b.c")`. A line-by-line port of `parsePropertyPath(path, strict=false)`."""
    elements: list[Segment] = []
    if path.startswith("."):
        raise PropertyPathError("expected property path to start with a name or index")
    while path:
        if path[0] == ".":
            path = path[1:]
            if not path:
                raise PropertyPathError("expected property path to end with a name or index")
            # A '.' followed by a '[' is tolerated (non-strict): "common from old providers".
        elif path[0] == "[":
            element: Segment
            if len(path) > 1 and path[1] == '"':
                key: list[str] = []
                i = 2
                while True:
                    if i >= len(path):
                        raise PropertyPathError("missing closing quote in property name")
                    if path[i] == '"':
                        i += 1
                        break
                    if path[i] == "\\" and i + 1 < len(path) and path[i + 1] == '"':
                        key.append('"')
                        i += 2
                    else:
                        key.append(path[i])
                        i += 1
                if i >= len(path) or path[i] != "]":
                    raise PropertyPathError("missing closing bracket in property access")
                element, path = "".join(key), path[i:]
            else:
                rbracket = path.find("]")
                if rbracket == -1:
                    raise PropertyPathError("missing closing bracket in array index")
                segment = path[1:rbracket]
                if segment == "*":
                    element = "*"
                else:
                    try:  # strconv.ParseInt(segment, 10, 0): an optional sign, then decimal digits
                        if not segment.lstrip("+-").isdigit():
                            raise ValueError(segment)
                        element = int(segment)
                    except ValueError:
                        raise PropertyPathError(f"invalid array index: {segment!r}") from None
                path = path[rbracket:]
            elements.append(element)
            path = path[1:]
        else:
            i = 0
            while i < len(path) and path[i] not in ".[":
                i += 1
            elements.append(path[:i])
            path = path[i:]
    return tuple(elements)


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

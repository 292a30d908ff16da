"""Size names through the catalog (`vmsizes`): canonical casing, or a clear error naming the nearest size."""

from __future__ import annotations

import difflib

import vmsizes


def canonical_size(name: str) -> str:
    """The catalog's casing of `name` (or the name as given when it is inferred from the naming convention).

    Raises ValueError("<what>; <fix>") when the name is neither in the catalog nor parseable.
    """
    try:
        return vmsizes.describe(name).name
    except vmsizes.UnknownSize:
        pass
    names = {size.name.lower(): size.name for size in vmsizes.all_sizes()}
    close = difflib.get_close_matches(name.lower(), list(names), n=1, cutoff=0.5)
    fix = (
        f"did you mean {names[close[0]]}?"
        if close
        else "use an Azure VM size name such as Standard_NC24ads_A100_v4"
    )
    return_msg = f"'{name}' is neither in the size catalog nor a valid Azure size name; {fix}"
    raise ValueError(return_msg)

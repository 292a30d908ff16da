"""Retirement by date, with regional extensions: never by the catalog's status text.

azure-notes.md (top and section 2): status values describe a doc snapshot, so compare retirement_date with
the date. A size is retired ON its retirement date and after it ("will be retired on September 30, 2025":
ncv3-retirement.md); a regional extension date replaces the retirement date in that region, read the same way.
"""

from __future__ import annotations

from datetime import date, datetime

from vmsizes.catalog import resolve
from vmsizes.model import VmSize
from vmsizes.regions import normalize_region


def retirement_date(name_or_size: str | VmSize, region: str | None = None) -> date | None:
    """The date the size is retired in ``region`` (its regional extension if any), or None when none is known.

    A withdrawn preview (Standard_ND40s_v2) has no date: use retired(), which says retired on every date.
    """
    size = resolve(name_or_size)
    if region is not None:
        extended = size.retirement_extensions.get(normalize_region(region))
        if extended is not None:
            return extended
    return size.retirement_date


def retired(name_or_size: str | VmSize, on: date, region: str | None = None) -> bool:
    """True when the size cannot be used on ``on`` in ``region``: withdrawn, or on/after its retirement."""
    if isinstance(on, datetime):
        on = on.date()
    if not isinstance(on, date):
        raise TypeError(f"retired(): 'on' must be a datetime.date, got {type(on).__name__}")
    size = resolve(name_or_size)
    if size.withdrawn:
        return True
    when = retirement_date(size, region)
    return when is not None and on >= when

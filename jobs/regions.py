"""Region flags (`plan --region`, `quota --regions`): checked against `stackconfig.regions`, normalised to
the programmatic name ARM expects (`East US` -> `eastus`), with the nearest known name as the fix."""

from __future__ import annotations

from jobs.errors import UsageError


def check_region(value: str, flag: str) -> str:
    """The programmatic name of `value`, or a UsageError naming `flag` and the nearest known region."""
    from stackconfig.regions import canonical_region, nearest_region

    name = canonical_region(value.strip())
    if name is not None:
        return name
    near = nearest_region(value.strip())
    fix = f"did you mean {near}?" if near else "use a region name such as eastus (az account list-locations)"
    raise UsageError(f"{flag} {value}: not a known Azure region; {fix}")

"""Size names through the catalog (`vmsizes`): canonical casing, or a clear error naming the nearest size.

A cluster size must be a GPU size whose GPU count is known, because the stack outputs carry
`gpus_per_node` (jobs start one process per GPU): a catalog entry with at least one whole GPU, or a
constrained-vCPU name whose catalog base size has one (it keeps the base's GPUs). Rejected:
- sizes outside the catalog: the naming convention gives the family and vCPUs but not the GPU count, and
  it accepts names of families that do not exist (`Standard_Bogus99`);
- CPU/HPC sizes (HB, HC, HX: no GPU);
- partial-GPU sizes (NVv4, NVadsA10 v5, NVadsV710 v5, NGadsV620: 1/8 to 1/2 of a GPU), which are meant for
  virtual desktops, not AmlCompute training clusters;
- catalog entries whose GPU count the catalog does not know;
- sizes Azure ML cannot run the project's jobs on (`vmsizes.azureml.refusal`: AMD GPUs such as ND MI300X v5,
  Arm (Grace) hosts such as ND GB200/GB300 v6), each with its reason.
The policy pack still judges inferred sizes: it reads stacks that this validation did not check.
"""

from __future__ import annotations

import difflib
from datetime import date

import vmsizes
from vmsizes import azureml

_EXAMPLE = "Standard_NC24ads_A100_v4"


def _gpu_sizes() -> dict[str, str]:
    """Lower-case name -> catalog name of every size worth suggesting: a whole GPU or more, not retired."""
    today = date.today()
    return {
        size.name.lower(): size.name
        for size in vmsizes.all_sizes()
        if (size.gpus or 0) >= 1 and not vmsizes.retired(size, today) and azureml.refusal(size) is None
    }


def _nearest(name: str) -> str | None:
    names = _gpu_sizes()
    close = difflib.get_close_matches(name.lower(), list(names), n=1, cutoff=0.5)
    return names[close[0]] if close else None


def _why_not(size: vmsizes.VmSize) -> str | None:
    """Why a described size can't be a GPU cluster's size, or None when it can."""
    if size.gpus is not None and size.gpus >= 1:
        return azureml.refusal(size)
    if size.inferred and size.gpus is None:
        return "is not in the size catalog, so its GPU count is unknown"
    if size.gpu_fraction:
        return f"has a fraction of a GPU ({size.gpu_fraction}), not a whole GPU per node"
    if size.gpus == 0:
        return "has no GPU (a CPU/HPC size)"
    return "is in the size catalog without a GPU count, so its GPU count is unknown"


def canonical_size(name: str) -> str:
    """The catalog's casing of `name`, for a size with a known GPU count of at least 1.

    Raises ValueError("<what>; <fix>") otherwise (unparseable, not in the catalog, no or partial GPU).
    """
    try:
        size = vmsizes.describe(name)
    except vmsizes.UnknownSize:
        close = _nearest(name)
        fix = f"did you mean {close}?" if close else f"use a catalog size such as {_EXAMPLE}"
        raise ValueError(
            f"'{name}' is neither in the size catalog nor a valid Azure size name; {fix}"
        ) from None
    why = _why_not(size)
    if why is None:
        return size.name
    raise ValueError(
        f"'{name}' {why}; a cluster needs a GPU size from the size catalog (vmsizes/data/sizes.yaml), "
        f"such as {_nearest(name) or _EXAMPLE}"
    )

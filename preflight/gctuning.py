"""Garbage-collector settings for the gate: postpone CPython's full collections while the heap only grows.

Pulumi's Python runtime runs the program body synchronously, so every resource, Output, future and task
the program creates stays alive until the event loop drains the registrations at the end of the run. The
heap only grows during a run (1.6 million tracked objects at 200 clusters), and each automatic full
(generation-2) collection walks all of it to free next to nothing: 100-200 objects per collection,
measured with `gc.callbacks`. Those walks grow with the heap: at 200 clusters they were 8 of the 16 s
of `run_program`, and in the prod gate 3 collections of about 0.15 s each (docs/preflight.md, benchmark).

Postponing them changes no result: young generations are still collected as usual (they free the
short-lived cycles the runtime makes), whatever is left is freed by the next full collection after the
block, and the peak memory stays the same because the live set is the same.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

# Generation-1 collections allowed between two full collections inside the block: none in practice.
POSTPONED_THRESHOLD = 1_000_000


@contextmanager
def postponed_full_collections() -> Iterator[None]:
    """No automatic full (generation-2) collection inside the block; the generation-0 and -1 thresholds
    are kept, and all three are restored on exit."""
    thresholds = gc.get_threshold()
    gc.set_threshold(thresholds[0], thresholds[1], max(thresholds[2], POSTPONED_THRESHOLD))
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)


__all__ = ["POSTPONED_THRESHOLD", "postponed_full_collections"]

"""StopRequest in this process: the first SIGTERM or Ctrl-C is a stop request at the next step boundary, and a
launcher's SIGTERM forwarded after a Ctrl-C does not change the reason (train.py reports the first one)."""

from __future__ import annotations

import os
import signal
import sys

import pytest
from jobscripts_util import SRC

sys.path.insert(0, str(SRC))
import checkpointing as ck  # noqa: E402


@pytest.fixture
def handlers():
    """The SIGTERM and SIGINT handlers as they were before the test."""
    saved = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    yield
    for s, h in saved.items():
        signal.signal(s, h)


def test_no_signal_no_stop(handlers):
    stop = ck.StopRequest((signal.SIGTERM, signal.SIGINT))
    assert not stop.requested and stop.signum is None and not stop.agreed(None)


def test_one_sigterm_is_a_stop_request_naming_it(handlers):
    stop = ck.StopRequest((signal.SIGTERM, signal.SIGINT))
    os.kill(os.getpid(), signal.SIGTERM)
    assert stop.requested and stop.signum == signal.SIGTERM and stop.agreed(None)


def test_a_sigterm_forwarded_after_a_ctrl_c_keeps_the_ctrl_c_as_the_reason(handlers):
    stop = ck.StopRequest((signal.SIGTERM, signal.SIGINT))
    os.kill(os.getpid(), signal.SIGINT)
    os.kill(os.getpid(), signal.SIGTERM)  # another signal, not the same one twice: still alive
    assert stop.requested and stop.signum == signal.SIGINT

"""The NCCL transport read from one rank's NCCL_DEBUG=INFO lines (jobs/verify/nccl.py), in NCCL's real formats
(NVIDIA/nccl src/init.cc, src/transport/net.cc, net_ib, net_socket)."""

from __future__ import annotations

import pytest

from jobs.verify import nccl

from ..ranklogs_util import nccl_ib


def test_socket_bootstrap_line_alone_does_not_decide(tmp_path):
    # Every IB log also has `NET/Socket : Using` (bootstrap); the decision is IB.
    text = "\n".join(nccl_ib("h", 0, 8))
    assert "NET/Socket : Using" in text
    assert nccl.parse(text).transport == "IB"
    assert (
        nccl.parse("h:1:1 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.4<0>").transport == nccl.NONE_SEEN
    )


@pytest.mark.parametrize(
    ("line", "transport"),
    [
        ("n:1:2 [7] NCCL INFO Ring 00 : 7 -> 8 [send] via NET/IB/0", "IB"),
        ("n:1:2 [7] NCCL INFO Ring 00 : 7[7] -> 8[0] via NET/Socket/0", "Socket"),
        ("n:1:2 [0] NCCL INFO Channel 00 : 0[c1000] -> 8[c1000] [send] via NET/IB/0/GDRDMA", "IB"),
        ("n:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IBext_v8/0/GDRDMA", "IBext_v8"),
        ("n:1:2 [0] NCCL INFO Using network IBext", "IBext"),
        ("n:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read", nccl.NONE_SEEN),
    ],
)
def test_old_ring_and_new_channel_formats(line, transport):
    assert nccl.parse(line).transport == transport


def test_ib_plugins_count_as_rdma_and_socket_does_not():
    assert nccl.is_rdma("IB") and nccl.is_rdma("IBext_v8")
    assert not nccl.is_rdma("Socket") and not nccl.is_rdma(nccl.NONE_SEEN) and not nccl.is_rdma("IB+Socket")

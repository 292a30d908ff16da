"""Which transport NCCL used, read from one rank's NCCL_DEBUG=INFO log.

Formats, from NVIDIA/nccl sources (platform-notes "NCCL log lines"):
- `host:pid:tid [rank] NCCL INFO <text>`
- `Using network %s` (src/init.cc, `INFO(NCCL_INIT, "Using network %s", ...)`): the network plugin chosen:
  `IB`, `Socket`, or a plugin's name such as `IBext` / `IBext_v8`.
- Channel setup (src/transport/net.cc), new format
  `Channel %02d/%d : %d[%d] -> %d[%d] [send] via NET/%s/%d%s%s` e.g.
  `Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA`; older releases print
  `Channel %02d : %d[%lx] -> %d[%lx] [send] via NET/%s/%d` and, before channels, rings:
  `Ring 00 : 7 -> 8 [send] via NET/IB/0`.
- `NET/IB : Using [0]mlx5_0:1/IB ...` lists the IB devices; `NET/IB : No device found.` when none.
- `NET/Socket : Using [0]eth0:...` also appears on InfiniBand runs (the bootstrap network), so it never
  decides the transport on its own.

The decision: the networks named in `via NET/<X>` lines (what inter-node traffic actually used) win;
without them, the `Using network X` line; without either (a log from an NCCL that prints no `Using network`
line, or NCCL_DEBUG_SUBSYS without INIT), the `NET/IB : Using` device list: NCCL's network init
(src/net.cc, `ncclNetInit`) takes the first network that initialises with a device, the built-in IB
before Socket, so an IB device list means IB; without any of these, "none seen".
"""

from __future__ import annotations

from dataclasses import dataclass, field

from jobs.ranklogs import IB_DEVICES, IB_NONE, NCCL_ANY, USING_NETWORK, VIA_NET

NONE_SEEN = "none seen"


@dataclass
class RankTransport:
    """What one rank's log says about NCCL."""

    network: str | None = None  # from `Using network X`
    via: list[str] = field(default_factory=list)  # distinct X of `via NET/X`, in order seen
    ib_devices: str | None = None  # the `NET/IB : Using ...` device list
    ib_missing: bool = False  # `NET/IB : No device found.`
    nccl_lines: int = 0

    @property
    def transport(self) -> str:
        if self.via:
            return "+".join(self.via)
        if self.network:
            return self.network
        if self.ib_devices and not self.ib_missing:
            return "IB"
        return NONE_SEEN


def parse(text: str) -> RankTransport:
    out = RankTransport()
    for line in text.splitlines():
        if not NCCL_ANY.search(line):
            continue
        out.nccl_lines += 1
        if m := VIA_NET.search(line):
            if m.group(1) not in out.via:
                out.via.append(m.group(1))
        elif m := USING_NETWORK.search(line):
            out.network = m.group(1)
        elif m := IB_DEVICES.search(line):
            out.ib_devices = m.group(1).strip()
        elif IB_NONE.search(line):
            out.ib_missing = True
    return out


def is_rdma(transport: str) -> bool:
    """IB and the IB plugins (`IBext`, `IBext_v8`: nccl-rdma-sharp-plugins / HPC-X) carry RDMA;
    RoCE devices also run under NET/IB."""
    return transport != NONE_SEEN and all(part.upper().startswith("IB") for part in transport.split("+"))


def is_socket(transport: str) -> bool:
    return "Socket" in transport.split("+")


def overall(by_rank: dict[int, str]) -> str:
    """One word for the job: the transport every rank agrees on, else `mixed (A, B)`."""
    kinds = sorted(set(by_rank.values()))
    if not kinds:
        return NONE_SEEN
    if len(kinds) == 1:
        return kinds[0]
    return f"mixed ({', '.join(kinds)})"

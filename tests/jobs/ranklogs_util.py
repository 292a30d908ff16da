"""Rank logs in the formats jobs/ reads, written for the tests of `verify` (jobs/verify/logchecks.py,
jobs/verify/nccl.py, jobs/ranklogs.py) and `scaling` (jobs/scaling/efficiency.py): NCCL's INFO lines
(NVIDIA/nccl src/init.cc, src/transport/net.cc, net_ib, net_socket), jobs/payload/smoke.py's lines and
jobs/payload/train.py's metrics records, in Azure ML's `user_logs/std_log_process_<rank>.txt` layout."""

from __future__ import annotations

from pathlib import Path

from jobs.payload.metrics import StepMetrics

H100 = "Standard_ND96isr_H100_v5"


def nccl_ib(host: str, rank: int, peer: int) -> list[str]:
    p = f"{host}:{1000 + rank}:{2000 + rank} [{rank % 8}] NCCL INFO"
    return [
        f"{p} NCCL_SOCKET_IFNAME set by environment to eth0",
        f"{p} Bootstrap : Using eth0:10.0.0.{4 + rank // 8}<0>",
        f"{p} NET/Plugin: No plugin found (libnccl-net.so)",
        f"{p} NET/IB : Using [0]mlx5_ib0:1/IB [1]mlx5_ib1:1/IB [2]mlx5_ib2:1/IB [3]mlx5_ib3:1/IB "
        f"[4]mlx5_ib4:1/IB [5]mlx5_ib5:1/IB [6]mlx5_ib6:1/IB [7]mlx5_ib7:1/IB "
        f"; OOB eth0:10.0.0.{4 + rank // 8}<0>",
        f"{p} NET/Socket : Using [0]eth0:10.0.0.{4 + rank // 8}<0>",
        f"{p} Using network IB",
        f"{p} Channel 00/0 : {rank}[{rank % 8}] -> {peer}[{peer % 8}] [send] via NET/IB/{rank % 8}/GDRDMA",
        f"{p} Channel 01/0 : {peer}[{peer % 8}] -> {rank}[{rank % 8}] [receive] via NET/IB/{rank % 8}/GDRDMA",
        f"{p} Connected all rings",
    ]


def nccl_socket(host: str, rank: int, peer: int) -> list[str]:
    p = f"{host}:{1000 + rank}:{2000 + rank} [{rank % 8}] NCCL INFO"
    return [
        f"{p} NET/IB : No device found.",
        f"{p} NET/Socket : Using [0]eth0:10.0.0.{4 + rank // 8}<0>",
        f"{p} Using network Socket",
        f"{p} Channel 00/0 : {rank}[{rank % 8}] -> {peer}[{peer % 8}] [send] via NET/Socket/0",
    ]


def smoke_lines(rank: int, world: int, node: int, local: int, host: str, peak: float | None) -> list[str]:
    lines = [
        f"smoke rank={rank} local_rank={local} node_rank={node} world_size={world} host={host} "
        f"device=cuda:{local}"
    ]
    if rank == 0:
        lines.append(f"world size {world}")
        lines.append(
            f"smoke all_reduce size=1048576 count=262144 time_us=90.1 algbw=11.64 busbw={peak or 0:.2f}"
        )
        if peak is not None:
            lines.append(f"smoke peak busbw: {peak:.2f} GB/s")
    return lines


def write_job(
    root: Path,
    nodes: int,
    procs: int,
    transport=nccl_ib,
    peak: float | None = 455.0,
    padding: int = 0,
    sub: str = "artifacts/user_logs",
) -> Path:
    world = nodes * procs
    logs = root / sub
    logs.mkdir(parents=True, exist_ok=True)
    for rank in range(world):
        node, local = divmod(rank, procs)
        host = f"10f2c1a{node}000000"
        peer = (rank + procs) % world
        lines = [*transport(host, rank, peer), *smoke_lines(rank, world, node, local, host, peak)]
        (logs / f"std_log_process_{rank:0{padding}d}.txt").write_text("\n".join(lines) + "\n")
    return root


# torch/csrc/distributed/c10d/ProcessGroupGloo.cpp prints this on each rank when the node's own name does not
# resolve (seen in a bare Debian chroot whose /etc/hosts lacks the machine's name).
GLOO_HOSTNAME_WARNING = (
    "[W1202 04:50:54.624804486 ProcessGroupGloo.cpp:524] Warning: Unable to resolve hostname to a (local) "
    "address. Using the loopback address as fallback. Manually set the network interface to bind to with "
    "GLOO_SOCKET_IFNAME. (function operator())"
)


def train_log(root: Path, world: int, per_gpu: list[float], prose_world: int | None = None) -> Path:
    """Rank logs as jobs/payload/train.py writes them: rank 0 prints a header, then per log step the human
    line and the metrics record, both from StepMetrics; the other ranks print nothing of their own."""
    logs = root / "artifacts" / "user_logs"
    logs.mkdir(parents=True)
    header = prose_world if prose_world is not None else world
    lines = [f"model 0.11M params | world size {header} | device cuda | 256 tokens/step/GPU | peak table"]
    for i, v in enumerate(per_gpu, 1):
        m = StepMetrics(10 * i, 50, 5.0 + i / 10, 80.0, v, 0.401, world, 1e-3)
        lines += [m.text(), m.to_line()]
    (logs / "std_log_process_0.txt").write_text("\n".join(lines) + "\n")
    for r in range(1, world):
        (logs / f"std_log_process_{r}.txt").write_text("")
    return root

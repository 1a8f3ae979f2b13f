"""Runs a test function in N real processes, the way torchrun would.

A test script calls ``run(worker, ...)``. Started without ``--child``, the script is the
parent: it exits 77 (CTest's SKIP_RETURN_CODE) when torch cannot be imported, starts N
copies of itself with ``--child --rank R``, waits for them within a time limit (killing
them all when it passes) and fails when any of them fails. In a child, ``worker(ctx)``
runs with the default process group made on gloo and, in ``ctx.braid``, a group of the
same ranks on the "braid" backend: every operation can run on both, on the same inputs.
"""

import argparse
import datetime
import os
import signal
import socket
import subprocess
import sys
import time

SKIP = 77


class Context:
    def __init__(self, rank, world, args):
        self.rank = rank
        self.world = world
        self.args = args
        self.braid = None


def _free_port():
    """A port that is free now, below the kernel's ephemeral range: a port the kernel handed
    out (bind to 0) may be taken by any outgoing connection before rank 0 listens on it."""
    import random
    low = 32768
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        pass
    rng = random.Random(os.getpid() ^ time.time_ns())
    for _ in range(200):
        port = rng.randrange(max(1024, low - 12000), low)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
                return port
            except OSError:
                continue
    raise RuntimeError("no free port below the ephemeral range")


def _parent(args, passthrough):
    try:
        import torch  # noqa: F401
    except ImportError as e:
        print(f"SKIP: torch is not importable ({e})")
        sys.exit(SKIP)
    port = _free_port()
    procs = []
    for rank in range(args.nprocs):
        cmd = [sys.executable, sys.argv[0], "--child", "--rank", str(rank), "--nprocs", str(args.nprocs),
               "--port", str(port)] + passthrough
        procs.append(subprocess.Popen(cmd, start_new_session=True))
    deadline = time.monotonic() + args.time_limit
    codes = [None] * len(procs)
    while any(c is None for c in codes) and time.monotonic() < deadline:
        for i, p in enumerate(procs):
            if codes[i] is None:
                codes[i] = p.poll()
        time.sleep(0.05)
    if any(c is None for c in codes):
        print(f"FAIL: ranks still running after {args.time_limit} s: "
              f"{[i for i, c in enumerate(codes) if c is None]} (killed)")
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
        for p in procs:
            p.wait()
        sys.exit(1)
    expected = {int(r): int(c) for r, c in (x.split(":") for x in args.expect_exit)} if args.expect_exit else {}
    bad = [(i, c) for i, c in enumerate(codes) if c != expected.get(i, 0)]
    if bad:
        print(f"FAIL: exit codes {codes} (expected 0 except {expected})")
        sys.exit(1)
    print(f"PASS: {args.nprocs} ranks")


def run(worker, braid_group=True, default_backend="gloo", extra_args=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--nprocs", type=int, default=2)
    parser.add_argument("--child", action="store_true")
    parser.add_argument("--rank", type=int, default=0)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--time-limit", type=float, default=120)
    parser.add_argument("--expect-exit", nargs="*", default=[], help="RANK:CODE for ranks that must fail")
    if extra_args:
        extra_args(parser)
    args, _ = parser.parse_known_args()
    if not args.child:
        passthrough = [a for a in sys.argv[1:]]
        _parent(args, passthrough)
        return

    import torch.distributed as dist
    import braid_torch  # noqa: F401  (registers "braid")

    timeout = datetime.timedelta(seconds=60)
    dist.init_process_group(default_backend, init_method=f"tcp://127.0.0.1:{args.port}", rank=args.rank,
                            world_size=args.nprocs, timeout=timeout)
    ctx = Context(args.rank, args.nprocs, args)
    if braid_group:
        ctx.braid = dist.new_group(backend="braid", timeout=timeout)
    failures = worker(ctx)
    if failures:
        for f in failures:
            print(f"rank {args.rank}: FAIL {f}", flush=True)
        sys.stdout.flush()
        os._exit(1)
    dist.destroy_process_group()
    sys.exit(0)

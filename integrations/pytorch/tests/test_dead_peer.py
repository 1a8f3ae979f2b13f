"""A rank killed in the middle of training: the others raise an exception, not hang.

With --transport sockets, Braid reports the closed connection; over shared memory (the
default on one host) Braid's watchdog reports the dead rank, and the backend's peer
monitor (BRAID_TORCH_PEER_TIMEOUT, 5 s here) is behind it.
"""

import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

VICTIM_STEPS = 5
LIMIT_S = 30


def worker(ctx):
    import torch
    import torch.distributed as dist

    victim = ctx.world - 1
    x = torch.ones(50000)
    if ctx.rank == victim:
        for _ in range(VICTIM_STEPS):
            dist.all_reduce(x, group=ctx.braid)
        os.kill(os.getpid(), signal.SIGKILL)
    start = time.monotonic()
    try:
        for _ in range(1000000):
            dist.all_reduce(x, group=ctx.braid)
            if time.monotonic() - start > LIMIT_S:
                return [f"no exception {LIMIT_S} s after rank {victim} was killed"]
    except RuntimeError as e:
        took = time.monotonic() - start
        print(f"rank {ctx.rank}: raised after {took:.1f} s: {e}", flush=True)
        # Later calls fail at once, naming the first failure.
        try:
            dist.all_reduce(x, group=ctx.braid)
            return ["a call after the failure succeeded"]
        except RuntimeError as again:
            if "failed earlier" not in str(again):
                return [f"the second failure does not say the group failed earlier: {again}"]
        sys.stdout.flush()
        os._exit(0)  # gloo's default group would wait for the dead rank at teardown
    return ["the loop ended without an exception"]


if __name__ == "__main__":
    os.environ.setdefault("BRAID_TORCH_PEER_TIMEOUT", "5")
    if "--transport" in sys.argv and sys.argv[sys.argv.index("--transport") + 1] == "sockets":
        os.environ["NCCL_SHM_DISABLE"] = "1"
    harness.run(worker, extra_args=lambda p: p.add_argument("--transport", choices=["shm", "sockets"],
                                                            default="shm"))

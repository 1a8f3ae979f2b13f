"""TORCH_DISTRIBUTED_DEBUG=DETAIL: ranks that call allreduce with different sizes get an
exception that says so, instead of a hang."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402


def worker(ctx):
    import torch
    import torch.distributed as dist

    x = torch.ones(4)
    dist.all_reduce(x, group=ctx.braid)
    if not torch.equal(x, torch.full((4,), float(ctx.world))):
        return [f"allreduce through the debug wrapper: {x}"]
    try:
        dist.all_reduce(torch.ones(10 + ctx.rank), group=ctx.braid)
    except RuntimeError as e:
        print(f"rank {ctx.rank}: {str(e).splitlines()[0][:200]}", flush=True)
        if "shape" not in str(e).lower() and "mismatch" not in str(e).lower():
            return [f"the message does not name the mismatch: {e}"]
        sys.stdout.flush()
        os._exit(0)  # the groups are out of step now
    return ["allreduce of different sizes did not raise"]


if __name__ == "__main__":
    os.environ["TORCH_DISTRIBUTED_DEBUG"] = "DETAIL"
    harness.run(worker)

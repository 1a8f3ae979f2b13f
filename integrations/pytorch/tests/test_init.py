"""init_process_group("braid") as the default group, in 1 and 3 processes; the store's
timeout bounds init when a rank never comes; the backend's communicators run in host mode
whatever BRAID_DEVICE says (it asks for host mode per communicator). The 3-process run
names the backend "cpu:braid" and binds the group to cpu:0, so that torch makes new_group
and new_subgroups_by_enumeration by splitting it: Braid's INFO log must show
ncclCommSplit, and the subgroups must reduce right."""

import datetime
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

CHILD = r'''
import datetime, os, sys, socket, time
import torch, torch.distributed as dist
import braid_torch
rank, world, port = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
timeout = datetime.timedelta(seconds=float(sys.argv[4]))
if len(sys.argv) > 5:
    # A braid group that rank `absent` never joins: the others' init fails within `timeout`.
    absent = int(sys.argv[5])
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    if rank == absent:
        time.sleep(3 * timeout.total_seconds())
        os._exit(0)
    start = time.monotonic()
    try:
        dist.new_group(backend="braid", timeout=timeout)
    except RuntimeError as e:
        print(f"INIT FAILED after {time.monotonic() - start:.1f} s: {e}", flush=True)
        os._exit(3)
    print("INIT SUCCEEDED without rank", absent, flush=True)
    os._exit(0)
start = time.monotonic()
bound = world == 3
try:
    dist.init_process_group("cpu:braid" if bound else "braid", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world, timeout=timeout, device_id=torch.device("cpu", 0) if bound else None)
except RuntimeError as e:
    print(f"INIT FAILED after {time.monotonic() - start:.1f} s: {e}", flush=True)
    sys.exit(3)
assert dist.get_backend() in ("braid", "cpu:braid"), dist.get_backend()
x = torch.full((5,), float(rank + 1))
dist.all_reduce(x)
assert torch.equal(x, torch.full((5,), world * (world + 1) / 2)), x
if bound:
    pair = dist.new_group([0, 1])  # rank 2 takes part in the split with no color
    if rank < 2:
        y = torch.full((3,), float(rank + 1))
        dist.all_reduce(y, group=pair)
        assert torch.equal(y, torch.full((3,), 3.0)), y
    mine, _ = dist.new_subgroups_by_enumeration([[0, 2], [1]])
    z = torch.full((2,), float(rank + 1))
    dist.all_reduce(z, group=mine)
    assert torch.equal(z, torch.full((2,), 4.0 if rank != 1 else 2.0)), z
    print(f"rank {rank}: subgroups ok", flush=True)
dist.barrier()
dist.destroy_process_group()
print(f"rank {rank}/{world} ok", flush=True)
'''


def launch(world, ranks, timeout_s, extra=(), absent=None, env=None):
    """Runs the ranks (with `env` added to the environment); returns [(exit code, output)].
    The absent rank is killed as soon as the others are done."""
    port = harness._free_port()
    child_env = dict(os.environ, **(env or {}))
    procs = [subprocess.Popen([sys.executable, "-c", CHILD, str(r), str(world), str(port), str(timeout_s)] + list(extra),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=child_env)
             for r in ranks]
    out = [None] * len(procs)
    order = [i for i in range(len(procs)) if ranks[i] != absent] + [i for i in range(len(procs)) if ranks[i] == absent]
    for i in order:
        p = procs[i]
        if ranks[i] == absent:
            p.kill()
        try:
            text, _ = p.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            p.kill()
            text, _ = p.communicate()
            text += "\n(killed after 120 s)"
        out[i] = (p.returncode, text)
    return out


def main():
    try:
        import torch  # noqa: F401
    except ImportError as e:
        print(f"SKIP: torch is not importable ({e})")
        return harness.SKIP
    failures = []
    for rank, (code, text) in enumerate(launch(1, range(1), 60)):
        if code != 0:
            failures.append(f"world 1 exited {code}:\n{text}")
    # BRAID_DEVICE=gpu asks every communicator of the process for GPU mode (an error where
    # there is no GPU); the backend's own communicators still run in host mode, on CPU tensors.
    env = {"BRAID_DEVICE": "gpu", "NCCL_DEBUG": "INFO", "NCCL_DEBUG_SUBSYS": "INIT"}
    for rank, (code, text) in enumerate(launch(3, range(3), 60, env=env)):
        if code != 0:
            failures.append(f"world 3 (BRAID_DEVICE=gpu) rank {rank} exited {code}:\n{text}")
        # Members of new_group([0, 1]) and of new_subgroups_by_enumeration's groups log their
        # split (rank 2 is in the second only).
        elif text.count("ncclCommSplit: parent rank") != (1 if rank == 2 else 2):
            failures.append(f"world 3 rank {rank}: Braid logged {text.count('ncclCommSplit: parent rank')} "
                            f"splits:\n{text}")
    # One rank of 2 never makes the braid group: the other's init (rank 0 serving the id, or
    # rank 1 waiting for it) fails within the group's timeout of 4 s, saying why.
    for absent in (1, 0):
        results = launch(2, [0, 1], 4, [str(absent)], absent=absent)
        code, text = results[1 - absent]
        # The child times its own init (process start and import torch take seconds more on a
        # loaded machine): it must give up within the 4 s timeout, plus a margin.
        match = re.search(r"INIT FAILED after ([0-9.]+) s", text)
        if code != 3 or not match or float(match.group(1)) > 10:
            failures.append(f"rank {absent} absent: the other exited {code}:\n{text}")
        else:
            print(f"rank {absent} absent: {text.strip().splitlines()[-1]}")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

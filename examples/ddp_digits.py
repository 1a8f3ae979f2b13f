#!/usr/bin/env python3
"""DistributedDataParallel training of a small CNN on real handwritten digits, on Braid.

The network is the one of PyTorch's classic MNIST example (two convolutions, max pooling,
dropout, two linear layers) sized for the 8x8 digits that scikit-learn ships
(sklearn.datasets.load_digits: 1797 images, no download). Each rank trains on its part
of the training set (DistributedSampler); DDP averages the gradients with the chosen
backend's allreduce.

    python3 -m torch.distributed.run --nproc_per_node 4 examples/ddp_digits.py
    braidrun -n 4 /usr/bin/python3 examples/ddp_digits.py
    srun -N 2 --ntasks-per-node=2 python3 examples/ddp_digits.py
    python3 examples/ddp_digits.py --backend gloo            # one process, for comparison

braid_torch must be importable (PYTHONPATH=<build>/integrations/pytorch/python, or the
install prefix's python directory; see docs/pytorch.md).
"""

import argparse
import json
import os
import socket
import subprocess
import sys
import time


def launcher_env():
    """RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT from torchrun/braidrun, Slurm, Open MPI
    or nothing (one process)."""
    env = os.environ
    if "RANK" in env and "WORLD_SIZE" in env:  # torchrun, braidrun, torch.distributed.launch
        return int(env["RANK"]), int(env["WORLD_SIZE"])
    if "SLURM_PROCID" in env and "SLURM_NTASKS" in env:
        rank, world = int(env["SLURM_PROCID"]), int(env["SLURM_NTASKS"])
        if "MASTER_ADDR" not in env:
            nodes = env.get("SLURM_STEP_NODELIST") or env.get("SLURM_JOB_NODELIST", "127.0.0.1")
            try:  # expands node[01-04] syntax
                first = subprocess.run(["scontrol", "show", "hostnames", nodes], capture_output=True, text=True,
                                       check=True).stdout.split()[0]
            except (OSError, subprocess.CalledProcessError, IndexError):
                first = nodes.split(",")[0]
            env["MASTER_ADDR"] = first
        if "MASTER_PORT" not in env:  # as Braid's own launcher support: distinct per job and step
            env["MASTER_PORT"] = str(10000 + (int(env.get("SLURM_JOB_ID", "0")) * 64
                                              + int(env.get("SLURM_STEP_ID", "0"))) % 20000)
        return rank, world
    if "OMPI_COMM_WORLD_RANK" in env:
        env.setdefault("MASTER_ADDR", "127.0.0.1")
        env.setdefault("MASTER_PORT", "29500")
        return int(env["OMPI_COMM_WORLD_RANK"]), int(env["OMPI_COMM_WORLD_SIZE"])
    env.setdefault("MASTER_ADDR", "127.0.0.1")
    if "MASTER_PORT" not in env:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            env["MASTER_PORT"] = str(s.getsockname()[1])
    return 0, 1


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--backend", default="braid", help="torch.distributed backend: braid (default) or gloo")
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--batch-size", type=int, default=32, help="per rank")
    p.add_argument("--lr", type=float, default=1.0, help="Adadelta learning rate, as the MNIST example")
    p.add_argument("--gamma", type=float, default=0.7, help="learning rate decay per epoch")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--metrics", help="rank 0 writes per-epoch loss and accuracy to this JSON file")
    p.add_argument("--quiet", action="store_true", help="only the hello line and the final result")
    return p.parse_args()


def main():
    args = parse_args()
    rank, world = launcher_env()
    print(f"hello from rank {rank}/{world} on {socket.gethostname()}", flush=True)

    import torch
    import torch.distributed as dist
    import torch.nn as nn
    import torch.nn.functional as F
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    from torch.nn.parallel import DistributedDataParallel as DDP
    from torch.utils.data import DataLoader, TensorDataset
    from torch.utils.data.distributed import DistributedSampler

    if args.backend == "braid":
        import braid_torch  # noqa: F401  (registers the backend)
    torch.set_num_threads(1)  # ranks share the machine's cores
    dist.init_process_group(args.backend, init_method="env://", rank=rank, world_size=world)

    class Net(nn.Module):
        """PyTorch's MNIST example network, for 8x8 inputs (28x28 there)."""

        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 32, 3, padding=1)
            self.conv2 = nn.Conv2d(32, 64, 3, padding=1)
            self.dropout1 = nn.Dropout(0.25)
            self.dropout2 = nn.Dropout(0.5)
            self.fc1 = nn.Linear(64 * 4 * 4, 128)
            self.fc2 = nn.Linear(128, 10)

        def forward(self, x):
            x = F.relu(self.conv1(x))
            x = F.relu(self.conv2(x))
            x = self.dropout1(F.max_pool2d(x, 2))
            x = self.dropout2(F.relu(self.fc1(torch.flatten(x, 1))))
            return F.log_softmax(self.fc2(x), dim=1)

    digits = load_digits()
    images = torch.tensor(digits.images, dtype=torch.float32).unsqueeze(1) / 16.0
    images = (images - images.mean()) / images.std()
    labels = torch.tensor(digits.target, dtype=torch.long)
    x_train, x_test, y_train, y_test = train_test_split(images, labels, test_size=0.2, random_state=0,
                                                        stratify=labels)
    train = TensorDataset(x_train, y_train)
    sampler = DistributedSampler(train, num_replicas=world, rank=rank, shuffle=True, seed=args.seed)
    loader = DataLoader(train, batch_size=args.batch_size, sampler=sampler)

    torch.manual_seed(args.seed)  # the same initial weights everywhere (DDP also broadcasts rank 0's)
    model = DDP(Net())
    optimizer = torch.optim.Adadelta(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=args.gamma)

    history = []
    start = time.monotonic()
    for epoch in range(1, args.epochs + 1):
        sampler.set_epoch(epoch)
        model.train()
        totals = torch.zeros(2, dtype=torch.float64)  # summed loss, samples
        for x, y in loader:
            optimizer.zero_grad()
            loss = F.nll_loss(model(x), y)
            loss.backward()
            optimizer.step()
            totals += torch.tensor([loss.item() * len(y), len(y)], dtype=torch.float64)
        scheduler.step()
        dist.all_reduce(totals)  # the epoch's mean loss over every rank's samples
        model.eval()
        with torch.no_grad():  # every rank holds the same weights: rank 0 evaluates for all
            accuracy = (model.module(x_test).argmax(1) == y_test).float().mean().item()
        entry = {"epoch": epoch, "loss": (totals[0] / totals[1]).item(), "accuracy": accuracy,
                 "seconds": time.monotonic() - start}
        history.append(entry)
        if rank == 0 and not args.quiet:
            print(f"epoch {epoch:2d}  loss {entry['loss']:.4f}  test accuracy {accuracy:.3f}  "
                  f"({entry['seconds']:.1f} s)", flush=True)

    if rank == 0:
        print(f"final test accuracy {history[-1]['accuracy']:.3f} after {args.epochs} epochs on {world} rank(s) "
              f"with backend {args.backend}", flush=True)
        if args.metrics:
            with open(args.metrics, "w") as f:
                json.dump({"backend": args.backend, "world_size": world, "batch_size": args.batch_size,
                           "history": history}, f, indent=1)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())

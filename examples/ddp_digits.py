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
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from digits_common import (accuracy, default_epochs, hello, launcher_env, load_digits_tensors,  # noqa: E402
                           make_net)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--backend", default="braid", help="torch.distributed backend: braid (default) or gloo")
    p.add_argument("--epochs", type=int, default=default_epochs(10))
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
    hello(rank, world)

    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    from torch.nn.parallel import DistributedDataParallel as DDP
    from torch.utils.data import DataLoader, TensorDataset
    from torch.utils.data.distributed import DistributedSampler

    if args.backend == "braid":
        import braid_torch  # noqa: F401  (registers the backend)
    torch.set_num_threads(1)  # ranks share the machine's cores
    dist.init_process_group(args.backend, init_method="env://", rank=rank, world_size=world)

    x_train, y_train, x_test, y_test = load_digits_tensors()
    train = TensorDataset(x_train, y_train)
    sampler = DistributedSampler(train, num_replicas=world, rank=rank, shuffle=True, seed=args.seed)
    loader = DataLoader(train, batch_size=args.batch_size, sampler=sampler)

    torch.manual_seed(args.seed)  # the same initial weights everywhere (DDP also broadcasts rank 0's)
    model = DDP(make_net())
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
        # Every rank holds the same weights: each evaluates the same model.
        acc = accuracy(model.module, x_test, y_test)
        entry = {"epoch": epoch, "loss": (totals[0] / totals[1]).item(), "accuracy": acc,
                 "seconds": time.monotonic() - start}
        history.append(entry)
        if rank == 0 and not args.quiet:
            print(f"epoch {epoch:2d}  loss {entry['loss']:.4f}  test accuracy {acc:.3f}  "
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

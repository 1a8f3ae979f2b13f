#!/usr/bin/env python3
"""Fully sharded data parallel (FSDP2, torch.distributed.fsdp.fully_shard) training of the
digits network on the CPU, over Braid: each rank holds a shard of every layer's weights;
the layers are gathered (all_gather_into_tensor) before use and the gradients reduced
and scattered back (reduce_scatter_tensor) on the "braid" backend.

    torchrun --nproc_per_node 2 examples/fsdp_digits.py
    braidrun -n 2 ~/.cache/braid/venv/bin/python examples/fsdp_digits.py --epochs 5

braid_torch must be importable (PYTHONPATH=<build>/integrations/pytorch/python, or the
install prefix's; see docs/pytorch.md).
"""

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from digits_common import (accuracy, default_epochs, hello, launcher_env, load_digits_tensors,  # noqa: E402
                           make_net)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--backend", default="braid")
    p.add_argument("--epochs", type=int, default=default_epochs(8))
    p.add_argument("--batch-size", type=int, default=32, help="per rank")
    p.add_argument("--lr", type=float, default=1e-3, help="Adam's learning rate")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--metrics", help="rank 0 writes per-epoch loss and accuracy to this JSON file")
    args = p.parse_args()
    rank, world = launcher_env()
    hello(rank, world)

    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard
    from torch.utils.data import DataLoader, TensorDataset
    from torch.utils.data.distributed import DistributedSampler

    if args.backend == "braid":
        import braid_torch  # noqa: F401  (registers the backend)
    torch.set_num_threads(1)  # ranks share the machine's cores
    dist.init_process_group(args.backend, init_method="env://", rank=rank, world_size=world)
    mesh = init_device_mesh("cpu", (world,))

    x_train, y_train, x_test, y_test = load_digits_tensors()
    train = TensorDataset(x_train, y_train)
    sampler = DistributedSampler(train, num_replicas=world, rank=rank, shuffle=True, seed=args.seed)
    loader = DataLoader(train, batch_size=args.batch_size, sampler=sampler)

    torch.manual_seed(args.seed)
    model = make_net()
    for layer in (model.conv1, model.conv2, model.fc1, model.fc2):
        fully_shard(layer, mesh=mesh)  # one unit per layer: gathered just before it runs
    fully_shard(model, mesh=mesh)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)

    history = []
    start = time.monotonic()
    for epoch in range(1, args.epochs + 1):
        sampler.set_epoch(epoch)
        model.train()
        totals = torch.zeros(2, dtype=torch.float64)
        for x, y in loader:
            optimizer.zero_grad()
            loss = F.nll_loss(model(x), y)
            loss.backward()
            optimizer.step()
            totals += torch.tensor([loss.item() * len(y), len(y)], dtype=torch.float64)
        dist.all_reduce(totals)
        acc = accuracy(model, x_test, y_test)  # every rank runs the sharded model on the same test set
        history.append({"epoch": epoch, "loss": (totals[0] / totals[1]).item(), "accuracy": acc,
                        "seconds": time.monotonic() - start})
        if rank == 0:
            print(f"epoch {epoch:2d}  loss {history[-1]['loss']:.4f}  test accuracy {acc:.3f}", flush=True)
    if rank == 0:
        print(f"final test accuracy {history[-1]['accuracy']:.3f} after {args.epochs} epochs on {world} rank(s) "
              f"with FSDP on backend {args.backend}", flush=True)
        if args.metrics:
            with open(args.metrics, "w") as f:
                json.dump({"backend": args.backend, "world_size": world, "history": history}, f, indent=1)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())

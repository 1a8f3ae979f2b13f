#!/usr/bin/env python3
"""DeepSpeed trains the digits network with ZeRO stage 2 (optimizer states and gradients
partitioned across ranks) on the CPU, over Braid: deepspeed.init_distributed(
dist_backend="braid"). DeepSpeed's CPU accelerator is chosen with DS_ACCELERATOR=cpu,
which this script sets unless it is set already.

    torchrun --nproc_per_node 2 examples/deepspeed_digits.py
    braidrun -n 2 ~/.cache/braid/venv/bin/python examples/deepspeed_digits.py --zero-stage 1

braid_torch must be importable (PYTHONPATH=<build>/integrations/pytorch/python; see
docs/pytorch.md).
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from digits_common import (accuracy, default_epochs, export_rank, hello, launcher_env,  # noqa: E402
                           load_digits_tensors, make_net)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--epochs", type=int, default=default_epochs(6))
    p.add_argument("--batch-size", type=int, default=32, help="per rank")
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--zero-stage", type=int, default=2, choices=[1, 2])
    p.add_argument("--metrics", help="rank 0 writes per-epoch loss and accuracy to this JSON file")
    args = p.parse_args()
    rank, world = launcher_env()
    export_rank(rank, world)  # DeepSpeed reads RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR/PORT
    os.environ.setdefault("DS_ACCELERATOR", "cpu")
    hello(rank, world)

    import braid_torch  # noqa: F401  (registers "braid")
    import deepspeed
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    from torch.utils.data import DataLoader, TensorDataset
    from torch.utils.data.distributed import DistributedSampler

    torch.set_num_threads(1)  # ranks share the machine's cores
    deepspeed.init_distributed(dist_backend="braid", auto_mpi_discovery=False)
    assert dist.get_backend() == "braid", dist.get_backend()

    x_train, y_train, x_test, y_test = load_digits_tensors()
    train = TensorDataset(x_train, y_train)
    sampler = DistributedSampler(train, num_replicas=world, rank=rank, shuffle=True, seed=1)
    loader = DataLoader(train, batch_size=args.batch_size, sampler=sampler)
    torch.manual_seed(1)
    net = make_net()
    config = {
        "train_micro_batch_size_per_gpu": args.batch_size,
        "gradient_accumulation_steps": 1,
        "optimizer": {"type": "Adam", "params": {"lr": args.lr}},
        "zero_optimization": {"stage": args.zero_stage},
        "steps_per_print": 1000000,
    }
    engine, _, _, _ = deepspeed.initialize(model=net, model_parameters=net.parameters(), config=config)

    history = []
    for epoch in range(1, args.epochs + 1):
        sampler.set_epoch(epoch)
        engine.train()
        totals = torch.zeros(2, dtype=torch.float64)
        for x, y in loader:
            loss = F.nll_loss(engine(x), y)
            engine.backward(loss)
            engine.step()
            totals += torch.tensor([loss.item() * len(y), len(y)], dtype=torch.float64)
        dist.all_reduce(totals)
        acc = accuracy(engine.module, x_test, y_test)
        history.append({"epoch": epoch, "loss": (totals[0] / totals[1]).item(), "accuracy": acc})
        if rank == 0:
            print(f"epoch {epoch:2d}  loss {history[-1]['loss']:.4f}  test accuracy {acc:.3f}", flush=True)
    if rank == 0:
        print(f"final test accuracy {history[-1]['accuracy']:.3f} after {args.epochs} epochs on {world} rank(s) "
              f"with DeepSpeed ZeRO stage {args.zero_stage} on backend braid", flush=True)
        if args.metrics:
            with open(args.metrics, "w") as f:
                json.dump({"world_size": world, "history": history}, f, indent=1)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())

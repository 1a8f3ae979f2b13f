#!/usr/bin/env python3
"""PyTorch Lightning trains the digits network with DDP on 2 CPU processes over Braid:
Trainer(accelerator="cpu", devices=2, strategy=DDPStrategy(process_group_backend="braid")).

    python examples/lightning_digits.py                 # Lightning starts the second process itself
    python examples/lightning_digits.py --devices 4 --epochs 5

Lightning re-runs this script for its other ranks (with LOCAL_RANK set), so braid_torch is
imported at the top, in every process. braid_torch must be importable
(PYTHONPATH=<build>/integrations/pytorch/python; see docs/pytorch.md).
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from digits_common import accuracy, default_epochs, hello, load_digits_tensors, make_net  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--devices", type=int, default=2, help="processes (Lightning starts them)")
    p.add_argument("--epochs", type=int, default=default_epochs(5))
    p.add_argument("--batch-size", type=int, default=32, help="per process")
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--metrics", help="rank 0 writes the final accuracy to this JSON file")
    args = p.parse_args()

    import braid_torch  # noqa: F401  (registers "braid", in every process Lightning starts)
    import lightning as L
    import torch
    import torch.nn.functional as F
    from lightning.pytorch.strategies import DDPStrategy
    from torch.utils.data import DataLoader, TensorDataset

    torch.set_num_threads(1)  # ranks share the machine's cores

    class DigitsModule(L.LightningModule):
        def __init__(self):
            super().__init__()
            self.net = make_net()

        def setup(self, stage):
            hello(self.global_rank, self.trainer.world_size)
            pg = torch.distributed.distributed_c10d._get_default_group()
            assert torch.distributed.get_backend(pg) == "braid", torch.distributed.get_backend(pg)

        def training_step(self, batch, _):
            x, y = batch
            loss = F.nll_loss(self.net(x), y)
            self.log("loss", loss, sync_dist=True, prog_bar=True)
            return loss

        def configure_optimizers(self):
            return torch.optim.Adam(self.parameters(), lr=args.lr)

    x_train, y_train, x_test, y_test = load_digits_tensors()
    loader = DataLoader(TensorDataset(x_train, y_train), batch_size=args.batch_size, shuffle=True)
    torch.manual_seed(1)
    module = DigitsModule()
    trainer = L.Trainer(accelerator="cpu", devices=args.devices, max_epochs=args.epochs,
                        strategy=DDPStrategy(process_group_backend="braid"), logger=False,
                        enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False)
    trainer.fit(module, loader)  # Lightning adds a DistributedSampler
    acc = accuracy(module.net, x_test, y_test)
    if trainer.global_rank == 0:
        print(f"final test accuracy {acc:.3f} after {args.epochs} epochs on {trainer.world_size} rank(s) "
              f"with Lightning on backend braid", flush=True)
        if args.metrics:
            with open(args.metrics, "w") as f:
                json.dump({"accuracy": acc, "epochs": args.epochs, "world_size": trainer.world_size}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())

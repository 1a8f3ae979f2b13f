"""DDP and FSDP (fully_shard) on "braid" and on gloo from the same model, seed and data reach
the same weights."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

STEPS = 6


def _model(torch):
    torch.manual_seed(1234)
    return torch.nn.Sequential(
        torch.nn.Conv2d(1, 8, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2), torch.nn.Flatten(),
        torch.nn.Linear(8 * 4 * 4, 32), torch.nn.ReLU(), torch.nn.Linear(32, 10))


def _train(torch, dist, group, rank):
    from torch.nn.parallel import DistributedDataParallel as DDP
    model = DDP(_model(torch), process_group=group, bucket_cap_mb=0.01)  # several buckets
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    g = torch.Generator().manual_seed(rank)
    for _ in range(STEPS):
        x = torch.randn(16, 1, 8, 8, generator=g)
        y = torch.randint(0, 10, (16,), generator=g)
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    return [p.detach().clone() for p in model.module.parameters()]


def _train_fsdp(torch, group, rank):
    """FSDP2 (fully_shard) over a device mesh of `group`: parameters sharded, gathered with
    all_gather_into_tensor and gradients reduced with reduce_scatter_tensor."""
    from torch.distributed.device_mesh import DeviceMesh
    from torch.distributed.fsdp import fully_shard
    mesh = DeviceMesh.from_group(group, "cpu")
    model = _model(torch)
    for layer in model:
        if any(p.requires_grad for p in layer.parameters()):
            fully_shard(layer, mesh=mesh)
    fully_shard(model, mesh=mesh)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    g = torch.Generator().manual_seed(rank)
    for _ in range(STEPS):
        x = torch.randn(16, 1, 8, 8, generator=g)
        y = torch.randint(0, 10, (16,), generator=g)
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    return [p.full_tensor().detach().clone() for p in model.parameters()]


def _compare(torch, what, on_braid, on_gloo, start, failures):
    moved = max((a - b).abs().max().item() for a, b in zip(on_braid, start))
    if moved < 1e-3:
        failures.append(f"{what}: the weights barely moved ({moved}); the test proves nothing")
    for i, (a, b) in enumerate(zip(on_braid, on_gloo)):
        if not torch.allclose(a, b, rtol=1e-5, atol=1e-6):
            failures.append(f"{what}: parameter {i}: braid and gloo differ by {(a - b).abs().max().item()}")


def worker(ctx):
    import torch
    import torch.distributed as dist

    failures = []
    start = [p.detach().clone() for p in _model(torch).parameters()]
    on_gloo = _train(torch, dist, dist.group.WORLD, ctx.rank)
    on_braid = _train(torch, dist, ctx.braid, ctx.rank)
    _compare(torch, "DDP", on_braid, on_gloo, start, failures)
    fsdp_gloo = _train_fsdp(torch, dist.group.WORLD, ctx.rank)
    fsdp_braid = _train_fsdp(torch, ctx.braid, ctx.rank)
    _compare(torch, "FSDP", fsdp_braid, fsdp_gloo, start, failures)
    # Every rank holds the same weights.
    flat = torch.cat([p.flatten() for p in on_braid])
    gathered = [torch.empty_like(flat) for _ in range(ctx.world)]
    dist.all_gather(gathered, flat, group=ctx.braid)
    for r, other in enumerate(gathered):
        if not torch.equal(other, flat):
            failures.append(f"rank {r}'s weights differ from rank {ctx.rank}'s")
    return failures


if __name__ == "__main__":
    harness.run(worker)

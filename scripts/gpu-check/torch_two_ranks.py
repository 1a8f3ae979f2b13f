# Two processes on one GPU (BRAID_SHARED_GPU=1), torch's NCCL backend on Braid: the ring
# kernels of two CUDA contexts exchange data through shared memory.
import os, sys, torch, torch.distributed as dist
rank = int(os.environ['RANK']); world = int(os.environ['WORLD_SIZE'])
torch.cuda.set_device(0)
dist.init_process_group('nccl', device_id=torch.device('cuda:0'))
fails = 0
for dt in [torch.float32, torch.bfloat16, torch.int64]:
    for n in [4099, (1 << 20) + 13]:
        x = ((torch.arange(n, device='cuda') + 3 * rank) % 5 + 1).to(dt)
        want = sum(((torch.arange(n, device='cuda') + 3 * q) % 5 + 1) for q in range(world)).to(dt)
        y = x.clone(); dist.all_reduce(y)
        if not torch.equal(y, want): fails += 1; print(rank, 'all_reduce mismatch', dt, n, flush=True)
        out = torch.empty(n * world, device='cuda', dtype=dt); dist.all_gather_into_tensor(out, x)
        for q in range(world):
            if not torch.equal(out[q * n:(q + 1) * n], ((torch.arange(n, device='cuda') + 3 * q) % 5 + 1).to(dt)):
                fails += 1; print(rank, 'all_gather mismatch', dt, n, q, flush=True)
torch.cuda.synchronize()
print('rank', rank, 'FAILS', fails, flush=True)
dist.destroy_process_group()
sys.exit(1 if fails else 0)

# torch's own NCCL path on one GPU with Braid's libnccl.so.2 in place of the wheel's (run.sh swaps it).
import os, sys
import torch
import torch.distributed as dist
maps = sorted({l.split()[-1] for l in open('/proc/self/maps') if 'libnccl' in l})
print('torch', torch.__version__, 'nccl version reported', torch.cuda.nccl.version(), 'mapped', maps, flush=True)
assert maps and all(open(m,'rb').read().find(b'+braid') >= 0 for m in maps), maps
print('is_nccl_available', dist.is_nccl_available(), 'unique_id bytes', len(torch.cuda.nccl.unique_id()))
os.environ.setdefault('MASTER_ADDR', '127.0.0.1'); os.environ.setdefault('MASTER_PORT', '29517')
dist.init_process_group('nccl', rank=0, world_size=1, device_id=torch.device('cuda:0'))
fails = 0
for dt in [torch.float32, torch.float16, torch.bfloat16, torch.int32, torch.int64, torch.float64]:
    for n in [1, 4099, (1 << 22) + 13]:
        x = (torch.arange(n, device='cuda') % 97).to(dt)
        y = x.clone(); dist.all_reduce(y)
        if not torch.equal(x, y): fails += 1; print('all_reduce mismatch', dt, n)
        out = torch.empty(n, device='cuda', dtype=dt); dist.all_gather_into_tensor(out, x)
        if not torch.equal(out, x): fails += 1; print('all_gather mismatch', dt, n)
        b = x.clone(); dist.broadcast(b, 0)
        if not torch.equal(b, x): fails += 1; print('broadcast mismatch', dt, n)
        rs = torch.empty(n, device='cuda', dtype=dt); dist.reduce_scatter_tensor(rs, x)
        if not torch.equal(rs, x): fails += 1; print('reduce_scatter mismatch', dt, n)
# torch.cuda.nccl's own path: ncclCommInitAll over the device list
t = [torch.full((1000,), 3.0, device='cuda')]
torch.cuda.nccl.all_reduce(t); torch.cuda.synchronize()
if not torch.equal(t[0], torch.full((1000,), 3.0, device='cuda')): fails += 1; print('torch.cuda.nccl.all_reduce mismatch')
dist.destroy_process_group()
print('FAILS', fails); sys.exit(1 if fails else 0)

#!/usr/bin/env python3
"""torch.distributed's gloo all_reduce timed the way all_reduce_perf times ncclAllReduce
(float sum, warm-up, then the mean of ITERS iterations, busbw = algbw * 2(n-1)/n; in place,
as torch's all_reduce is, and without a copy per iteration, which would charge Gloo a
memcpy that the others do not pay), so that Gloo's numbers can be put next to Braid's
and an MPI's in one run (scripts/compare-mpi.sh). Rank 0 prints "bytes time_us busbw"
per size, as bench/compare/mpi_all_reduce.c does.

    python -m torch.distributed.run --standalone --nproc_per_node N \\
        bench/compare/gloo_all_reduce.py MINBYTES MAXBYTES ITERS [WARMUP=2]
"""

import os
import sys
import time

import torch
import torch.distributed as dist


def main():
    min_bytes = int(sys.argv[1]) if len(sys.argv) > 1 else 8
    max_bytes = int(sys.argv[2]) if len(sys.argv) > 2 else 64 << 20
    iters = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    warmup = int(sys.argv[4]) if len(sys.argv) > 4 else 2
    dist.init_process_group("gloo")
    rank, n = dist.get_rank(), dist.get_world_size()
    size = min_bytes
    while size <= max_bytes:
        count = max(1, size // 4)
        data = torch.arange(count, dtype=torch.float32).remainder_(7)
        for _ in range(warmup):
            dist.all_reduce(data)
        dist.barrier()
        start = time.perf_counter()
        for _ in range(iters):
            # The sums grow n-fold each time and reach infinity after about 128 / log2(n)
            # iterations; x86 adds infinities at full speed (only subnormals are slow).
            dist.all_reduce(data)
        seconds = (time.perf_counter() - start) / iters
        busbw = count * 4 / seconds / 1e9 * 2 * (n - 1) / n
        if rank == 0:
            print(f"{count * 4:12d} {seconds * 1e6:10.2f} {busbw:7.2f}", flush=True)
        size *= 4
    dist.destroy_process_group()


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    main()

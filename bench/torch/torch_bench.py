#!/usr/bin/env python3
"""torch.distributed on "braid" against "gloo", in the same processes and the same run.

For each rank count (--ranks, default 2 4) it starts that many processes; each makes a
gloo group and a braid group of the same ranks and times, on both, all_reduce,
all_gather_into_tensor and reduce_scatter_tensor of float32 and bfloat16 tensors from
1 KiB to 64 MiB (per-rank input bytes), then the DDP step of a model of about 10 M
parameters. Each figure is the best of --repeats rounds (the machine may be shared and
noisy); a round's time is the slowest rank's mean over its iterations. Writes JSON and a
PNG (bus bandwidth against size, and the 1 KiB latency and DDP step in the legend).

    PYTHONPATH=build/integrations/pytorch/python ~/.cache/braid/venv/bin/python \\
        bench/torch/torch_bench.py -o torch_bench.json --png torch_bench.png
    ... --sizes 1K 1M --ranks 2 --repeats 1          # quick

Bus bandwidth as nccl-tests computes it: all_reduce 2(n-1)/n x bytes / time; the gathers
(n-1)/n x n x bytes / time (bytes = one rank's input).
"""

import argparse
import datetime
import json
import os
import socket
import subprocess
import sys
import time

OPS = ["all_reduce", "all_gather_into_tensor", "reduce_scatter_tensor"]
DTYPES = ["float32", "bfloat16"]
SIZES = ["1K", "4K", "16K", "64K", "256K", "1M", "4M", "16M", "64M"]


def parse_size(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(text[:-1]) * units[text[-1]] if text[-1] in units else int(text)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ranks", type=int, nargs="+", default=[2, 4])
    p.add_argument("--sizes", nargs="+", default=SIZES)
    p.add_argument("--dtypes", nargs="+", default=DTYPES)
    p.add_argument("--ops", nargs="+", default=OPS)
    p.add_argument("--repeats", type=int, default=3, help="rounds per figure; the best is kept")
    p.add_argument("--seconds", type=float, default=0.2, help="time per round (at least 3 iterations)")
    p.add_argument("--ddp-steps", type=int, default=8)
    p.add_argument("--ddp-batch", type=int, default=8,
                   help="samples per rank and step: small, so that the step is not all compute")
    p.add_argument("-o", "--output", default="torch_bench.json")
    p.add_argument("--png", help="draw the plot here")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--rank", type=int, default=0, help=argparse.SUPPRESS)
    p.add_argument("--world", type=int, default=0, help=argparse.SUPPRESS)
    p.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    return p.parse_args()


def bus_factor(op, n):
    return 2 * (n - 1) / n if op == "all_reduce" else (n - 1)


def time_op(torch, dist, fn, group, seconds, repeats):
    """Best over rounds of the slowest rank's mean time per call, in seconds."""
    best = float("inf")
    fn()  # warm-up: connections, buffers
    for _ in range(repeats):
        dist.barrier(group=group)
        # The same iteration count everywhere: rank 0 decides from a trial.
        start = time.perf_counter()
        fn()
        trial = torch.tensor([time.perf_counter() - start], dtype=torch.float64)
        dist.broadcast(trial, 0, group=group)
        iters = max(3, min(1000, int(seconds / max(trial.item(), 1e-6))))
        dist.barrier(group=group)
        start = time.perf_counter()
        for _ in range(iters):
            fn()
        took = torch.tensor([(time.perf_counter() - start) / iters], dtype=torch.float64)
        dist.all_reduce(took, op=dist.ReduceOp.MAX, group=group)
        best = min(best, took.item())
    return best


def ddp_model(torch):
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(1024, 2048), torch.nn.ReLU(), torch.nn.Linear(2048, 2048),
                               torch.nn.ReLU(), torch.nn.Linear(2048, 2048), torch.nn.ReLU(),
                               torch.nn.Linear(2048, 10))


def child(args):
    import torch
    import torch.distributed as dist
    import braid_torch  # noqa: F401

    torch.set_num_threads(1)
    timeout = datetime.timedelta(seconds=300)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{args.port}", rank=args.rank,
                            world_size=args.world, timeout=timeout)
    groups = {"gloo": dist.group.WORLD, "braid": dist.new_group(backend="braid", timeout=timeout)}
    n, results = args.world, []
    for op in args.ops:
        for dtype_name in args.dtypes:
            dtype = getattr(torch, dtype_name)
            for size in args.sizes:
                nbytes = parse_size(size)
                count = max(1, nbytes // torch.empty(0, dtype=dtype).element_size())
                if op == "reduce_scatter_tensor":
                    count = max(n, count - count % n)  # the input divides into n parts
                x = torch.ones(count, dtype=dtype)
                for backend, group in groups.items():
                    if op == "all_reduce":
                        def fn(x=x, group=group):
                            dist.all_reduce(x, group=group)
                    elif op == "all_gather_into_tensor":
                        out = torch.empty(n * count, dtype=dtype)

                        def fn(x=x, out=out, group=group):
                            dist.all_gather_into_tensor(out, x, group=group)
                    else:
                        out = torch.empty(count // n, dtype=dtype)

                        def fn(x=x, out=out, group=group):
                            dist.reduce_scatter_tensor(out, x, group=group)
                    try:
                        seconds = time_op(torch, dist, fn, group, args.seconds, args.repeats)
                    except RuntimeError as e:  # gloo lacks an operation or a dtype
                        if args.rank == 0:
                            print(f"{backend} {op} {dtype_name}: {str(e).splitlines()[0][:120]}", flush=True)
                        dist.barrier()
                        continue
                    real_bytes = count * x.element_size()
                    entry = {"backend": backend, "op": op, "dtype": dtype_name, "ranks": n, "bytes": real_bytes,
                             "time_us": seconds * 1e6,
                             "busbw_gbs": real_bytes * bus_factor(op, n) / seconds / 1e9}
                    results.append(entry)
                    if args.rank == 0:
                        print(f"n={n} {op:24s} {dtype_name:8s} {size:>4s} {backend:5s} {entry['time_us']:10.1f} us "
                              f"{entry['busbw_gbs']:7.3f} GB/s", flush=True)
    # DDP step of a ~10 M parameter model, on each backend.
    from torch.nn.parallel import DistributedDataParallel as DDP
    params = sum(p.numel() for p in ddp_model(torch).parameters())
    g = torch.Generator().manual_seed(args.rank)
    x = torch.randn(args.ddp_batch, 1024, generator=g)
    y = torch.randint(0, 10, (args.ddp_batch,), generator=g)
    for backend, group in groups.items():
        model = DDP(ddp_model(torch), process_group=group)
        opt = torch.optim.SGD(model.parameters(), lr=0.01)

        def step(model=model, opt=opt):
            opt.zero_grad()
            torch.nn.functional.cross_entropy(model(x), y).backward()
            opt.step()

        best = float("inf")
        for _ in range(2):
            step()
        for _ in range(args.repeats):
            dist.barrier()
            start = time.perf_counter()
            for _ in range(args.ddp_steps):
                step()
            took = torch.tensor([(time.perf_counter() - start) / args.ddp_steps], dtype=torch.float64)
            dist.all_reduce(took, op=dist.ReduceOp.MAX)
            best = min(best, took.item())
        results.append({"backend": backend, "op": "ddp_step", "ranks": n, "parameters": params,
                        "batch": args.ddp_batch, "time_us": best * 1e6})
        if args.rank == 0:
            print(f"n={n} DDP step ({params / 1e6:.1f} M parameters, batch {args.ddp_batch}) {backend:5s} "
                  f"{best * 1e3:8.1f} ms", flush=True)
    if args.rank == 0:
        print("RESULTS " + json.dumps(results), flush=True)
    dist.destroy_process_group()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def plot(results, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ops = [op for op in OPS if any(r["op"] == op for r in results)]
    fig, axes = plt.subplots(1, len(ops), figsize=(6 * len(ops), 4.8), squeeze=False)
    styles = {"braid": "-", "gloo": "--"}
    for ax, op in zip(axes[0], ops):
        keys = sorted({(r["ranks"], r["dtype"], r["backend"]) for r in results if r["op"] == op})
        for ranks, dtype, backend in keys:
            rows = sorted((r for r in results if r["op"] == op and (r["ranks"], r["dtype"], r["backend"]) ==
                           (ranks, dtype, backend)), key=lambda r: r["bytes"])
            ax.plot([r["bytes"] for r in rows], [r["busbw_gbs"] for r in rows], styles[backend], marker="o",
                    markersize=3, label=f"{backend} {dtype} n={ranks} ({rows[0]['time_us']:.0f} us at "
                                        f"{rows[0]['bytes'] // 1024} KiB)")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("bytes per rank")
        ax.set_ylabel("bus bandwidth (GB/s)")
        ax.set_title(op)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    steps = [r for r in results if r["op"] == "ddp_step"]
    if steps:
        fig.suptitle("torch.distributed on braid (solid) and gloo (dashed), same run; DDP step: " + ", ".join(
            f"{r['backend']} n={r['ranks']} {r['time_us'] / 1e3:.0f} ms" for r in steps), fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    args = parse_args()
    if args.child:
        child(args)
        return 0
    results = []
    for n in args.ranks:
        port = free_port()
        env = dict(os.environ, OMP_NUM_THREADS="1")
        cmd = [sys.executable, os.path.abspath(__file__), "--child", "--world", str(n), "--port", str(port),
               "--repeats", str(args.repeats), "--seconds", str(args.seconds), "--ddp-steps", str(args.ddp_steps), "--ddp-batch", str(args.ddp_batch),
               "--sizes", *args.sizes, "--dtypes", *args.dtypes, "--ops", *args.ops]
        procs = [subprocess.Popen(cmd + ["--rank", str(r)], env=env, stdout=subprocess.PIPE if r == 0 else None,
                                  text=True) for r in range(n)]
        for line in procs[0].stdout:
            if line.startswith("RESULTS "):
                results += json.loads(line[len("RESULTS "):])
            else:
                print(line, end="", flush=True)
        codes = [p.wait() for p in procs]
        if any(codes):
            print(f"torch_bench: ranks exited {codes}", file=sys.stderr)
            return 1
    meta = {"schema": "braid-torch-bench/1", "host": socket.gethostname(), "cpus": os.cpu_count(),
            "load_average": os.getloadavg(), "repeats": args.repeats,
            "torch": subprocess.run([sys.executable, "-c", "import torch; print(torch.__version__)"],
                                    capture_output=True, text=True).stdout.strip()}
    with open(args.output, "w") as f:
        json.dump({"meta": meta, "results": results}, f, indent=1)
    print(f"wrote {args.output}")
    if args.png:
        plot(results, args.png)
        print(f"wrote {args.png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

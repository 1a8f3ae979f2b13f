#!/usr/bin/env python3
"""Trains examples/ddp_digits.py on 1, 2 and 4 ranks and draws loss and test accuracy
against epoch, one line per rank count, to a PNG.

    PYTHONPATH=build/integrations/pytorch/python ~/.cache/braid/venv/bin/python examples/plot_scaling.py -o scaling.png
    ... examples/plot_scaling.py --ranks 1 2 4 8 --epochs 15 --backend gloo --launcher braidrun

Each run is launched with `python3 -m torch.distributed.run --nproc_per_node N` (or with
braidrun, --launcher braidrun). The batch size is per rank, so N ranks take N times fewer
steps per epoch with an N times larger global batch: the plot shows what that costs in
accuracy per epoch, and the legend the wall time per run.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def free_port():
    """A free port below the kernel's ephemeral range, so that no outgoing connection takes it
    before the launcher listens on it (a port from bind(0) sometimes is, on a busy host)."""
    import random
    import socket
    low = 32768
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        pass
    rng = random.Random()
    for _ in range(200):
        port = rng.randrange(max(1024, low - 12000), low)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
                return port
            except OSError:
                continue
    raise RuntimeError("no free port found below the ephemeral range")


def torchrun_command(nproc):
    """torchrun on one host with a fixed store port: its workers then use the agent's store
    (with --standalone, rank 0 opens a second port that the agent picked and let go)."""
    return ([sys.executable, "-m", "torch.distributed.run", "--nnodes", "1", "--nproc_per_node", str(nproc),
             "--master_addr", "127.0.0.1", "--master_port", str(free_port())])


def run(n, args, metrics):
    script = [os.path.join(HERE, "ddp_digits.py"), "--backend", args.backend, "--epochs", str(args.epochs),
              "--batch-size", str(args.batch_size), "--metrics", metrics, "--quiet"]
    if args.launcher == "braidrun":
        braidrun = args.braidrun or shutil.which("braidrun")
        if not braidrun:
            sys.exit("plot_scaling: braidrun not found (put it on PATH or pass --braidrun)")
        cmd = [braidrun, "-n", str(n), sys.executable] + script
    else:
        cmd = torchrun_command(n) + script
    env = dict(os.environ, OMP_NUM_THREADS="1")
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, env=env)
    with open(metrics) as f:
        return json.load(f)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ranks", type=int, nargs="+", default=[1, 2, 4])
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--batch-size", type=int, default=32, help="per rank")
    p.add_argument("--backend", default="braid")
    p.add_argument("--launcher", choices=["torchrun", "braidrun"], default="torchrun")
    p.add_argument("--braidrun", help="path of braidrun (default: on PATH)")
    p.add_argument("-o", "--output", default="ddp_digits_scaling.png")
    p.add_argument("--json", help="also write the collected metrics here")
    args = p.parse_args()
    for n in args.ranks:
        if n < 1:
            p.error(f"--ranks: {n} is not a positive number of ranks")

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.ranks:
            results[n] = run(n, args, os.path.join(tmp, f"ranks{n}.json"))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({str(n): r for n, r in results.items()}, f, indent=1)

    fig, (ax_loss, ax_acc) = plt.subplots(1, 2, figsize=(11, 4.2))
    for n, r in results.items():
        h = r["history"]
        epochs = [e["epoch"] for e in h]
        label = f"{n} rank{'s' if n > 1 else ''} ({h[-1]['seconds']:.0f} s)"
        ax_loss.plot(epochs, [e["loss"] for e in h], marker="o", label=label)
        ax_acc.plot(epochs, [100 * e["accuracy"] for e in h], marker="o", label=label)
    ax_loss.set(xlabel="epoch", ylabel="training loss (mean over all ranks)", yscale="log")
    ax_acc.set(xlabel="epoch", ylabel="test accuracy (%)")
    for ax in (ax_loss, ax_acc):
        ax.grid(True, alpha=0.3)
        ax.legend()
    fig.suptitle(f"DDP on sklearn digits, backend '{args.backend}', batch {args.batch_size} per rank")
    fig.tight_layout()
    fig.savefig(args.output, dpi=110)
    print(f"wrote {args.output}")
    for n, r in results.items():
        print(f"{n} rank(s): final loss {r['history'][-1]['loss']:.4f}, "
              f"accuracy {100 * r['history'][-1]['accuracy']:.1f}%")


if __name__ == "__main__":
    main()

"""The examples train to an accuracy well above chance (10%) on 2 ranks, and every rank
says hello. Run small: BRAID_EXAMPLE_EPOCHS=2 (the examples' own default is larger).

    test_example.py ddp          torchrun, then the same with Slurm's variables (as srun starts it)
    test_example.py fsdp         torchrun
    test_example.py lightning    Lightning starts its second process itself
    test_example.py deepspeed    braidrun (BRAIDRUN: its path), ZeRO stage 2
"""

import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
EXAMPLES = os.path.join(ROOT, "examples")
sys.path.insert(0, EXAMPLES)
EPOCHS = 2
MIN_ACCURACY = 0.7


def check(name, outputs, metrics, failures):
    text = "".join(outputs)
    for r in range(2):
        if f"hello from rank {r}/2 on " not in text:
            failures.append(f"{name}: no hello from rank {r}:\n{text}")
    try:
        with open(metrics) as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        failures.append(f"{name}: no metrics ({e}):\n{text}")
        return
    if "history" in data:
        history = data["history"]
        accuracy = history[-1]["accuracy"]
        print(f"{name}: test accuracy {accuracy:.3f} after {len(history)} epochs, loss {history[0]['loss']:.3f} -> "
              f"{history[-1]['loss']:.3f}")
        if len(history) != EPOCHS or history[-1]["loss"] >= history[0]["loss"]:
            failures.append(f"{name}: did not learn: {history}")
    else:
        accuracy = data["accuracy"]
        print(f"{name}: test accuracy {accuracy:.3f} after {data['epochs']} epochs")
    if accuracy < MIN_ACCURACY:
        failures.append(f"{name}: test accuracy {accuracy:.3f} < {MIN_ACCURACY}:\n{text}")


def run(name, cmd, env, failures, timeout=240):
    start = time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout, env=env)
    print(f"{name}: {time.monotonic() - start:.1f} s")
    if p.returncode != 0:
        failures.append(f"{name} exited {p.returncode}:\n{p.stdout}")
    return p.stdout


def main():
    which = sys.argv[1]
    try:
        import sklearn  # noqa: F401
        import torch  # noqa: F401
        if which == "lightning":
            import lightning  # noqa: F401
        if which == "deepspeed":
            import deepspeed  # noqa: F401
    except ImportError as e:
        print(f"SKIP: {e}")
        return harness.SKIP
    from plot_scaling import torchrun_command

    env = dict(os.environ, BRAID_EXAMPLE_EPOCHS=str(EPOCHS), OMP_NUM_THREADS="1")
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        metrics = os.path.join(tmp, "metrics.json")
        if which in ("ddp", "fsdp"):
            script = os.path.join(EXAMPLES, f"{which}_digits.py")
            out = run(f"{which} torchrun", torchrun_command(2) + [script, "--metrics", metrics], env, failures)
            check(f"{which} torchrun", [out], metrics, failures)
        if which == "ddp":  # as srun starts it: Slurm's variables only
            metrics = os.path.join(tmp, "slurm.json")
            port = str(harness._free_port())
            procs = []
            for r in range(2):
                e = dict(env, SLURM_PROCID=str(r), SLURM_NTASKS="2", SLURM_LOCALID=str(r), SLURM_JOB_ID="4242",
                         SLURM_STEP_ID="0", SLURM_STEP_NODELIST="127.0.0.1", MASTER_PORT=port)
                for var in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR"):
                    e.pop(var, None)
                procs.append(subprocess.Popen([sys.executable, os.path.join(EXAMPLES, "ddp_digits.py"), "--metrics",
                                               metrics], env=e, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                              text=True))
            outputs = []
            for p in procs:
                out, _ = p.communicate(timeout=240)
                outputs.append(out)
                if p.returncode != 0:
                    failures.append(f"Slurm-style rank exited {p.returncode}:\n{out}")
            check("ddp slurm", outputs, metrics, failures)
        if which == "lightning":
            out = run("lightning", [sys.executable, os.path.join(EXAMPLES, "lightning_digits.py"), "--devices", "2",
                                    "--metrics", metrics], env, failures)
            check("lightning", [out], metrics, failures)
        if which == "deepspeed":
            braidrun = os.environ.get("BRAIDRUN", "")
            if not os.access(braidrun, os.X_OK):
                failures.append(f"braidrun not found (BRAIDRUN={braidrun!r})")
            else:
                out = run("deepspeed braidrun", [braidrun, "-n", "2", sys.executable,
                                                 os.path.join(EXAMPLES, "deepspeed_digits.py"), "--metrics", metrics],
                          env, failures)
                check("deepspeed braidrun", [out], metrics, failures)
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

"""examples/ddp_digits.py trains to an accuracy well above chance (10%) on 2 ranks, launched
by torchrun and, with Slurm's variables, as srun would start it; every rank says hello."""

import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
EXAMPLE = os.path.join(ROOT, "examples", "ddp_digits.py")
sys.path.insert(0, os.path.join(ROOT, "examples"))


def check(name, outputs, metrics, epochs, failures):
    text = "".join(outputs)
    for r in range(2):
        if f"hello from rank {r}/2 on " not in text:
            failures.append(f"{name}: no hello from rank {r}:\n{text}")
    try:
        with open(metrics) as f:
            history = json.load(f)["history"]
    except (OSError, ValueError, KeyError) as e:
        failures.append(f"{name}: no metrics ({e}):\n{text}")
        return
    accuracy = history[-1]["accuracy"]
    print(f"{name}: test accuracy {accuracy:.3f} after {epochs} epochs, loss {history[0]['loss']:.3f} -> "
          f"{history[-1]['loss']:.3f}")
    if len(history) != epochs or accuracy < 0.8 or history[-1]["loss"] >= history[0]["loss"]:
        failures.append(f"{name}: did not learn: {history}")


def main():
    try:
        import sklearn  # noqa: F401
        import torch  # noqa: F401
    except ImportError as e:
        print(f"SKIP: {e}")
        return harness.SKIP
    from plot_scaling import torchrun_command

    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        epochs = 4
        metrics = os.path.join(tmp, "torchrun.json")
        cmd = torchrun_command(2) + [EXAMPLE, "--epochs", str(epochs), "--metrics", metrics]
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=240)
        if p.returncode != 0:
            failures.append(f"torchrun exited {p.returncode}:\n{p.stdout}")
        check("torchrun", [p.stdout], metrics, epochs, failures)

        epochs = 2
        metrics = os.path.join(tmp, "slurm.json")
        port = str(harness._free_port())
        procs = []
        for r in range(2):
            env = dict(os.environ, SLURM_PROCID=str(r), SLURM_NTASKS="2", SLURM_LOCALID=str(r), SLURM_JOB_ID="4242",
                       SLURM_STEP_ID="0", SLURM_STEP_NODELIST="127.0.0.1", MASTER_PORT=port)
            for var in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR"):
                env.pop(var, None)
            procs.append(subprocess.Popen([sys.executable, EXAMPLE, "--epochs", str(epochs), "--metrics", metrics],
                                          env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
        outputs = []
        for p in procs:
            out, _ = p.communicate(timeout=240)
            outputs.append(out)
            if p.returncode != 0:
                failures.append(f"Slurm-style rank exited {p.returncode}:\n{out}")
        check("slurm", outputs, metrics, epochs, failures)
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

"""What the digits examples share: the rank from the launcher, the data (scikit-learn's
8x8 handwritten digits, 1797 real images, no download) and the network of PyTorch's
MNIST example sized for them.

BRAID_EXAMPLE_EPOCHS and BRAID_EXAMPLE_SAMPLES (training images used, default all 1437)
change the examples' defaults: the tests run them small.
"""

import os
import socket
import subprocess


def default_epochs(epochs):
    return int(os.environ.get("BRAID_EXAMPLE_EPOCHS", epochs))


def launcher_env():
    """RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT from torchrun/braidrun, Slurm, Open MPI
    or nothing (one process)."""
    env = os.environ
    if "RANK" in env and "WORLD_SIZE" in env:  # torchrun, braidrun, torch.distributed.launch
        return int(env["RANK"]), int(env["WORLD_SIZE"])
    if "SLURM_PROCID" in env and "SLURM_NTASKS" in env:
        rank, world = int(env["SLURM_PROCID"]), int(env["SLURM_NTASKS"])
        if "MASTER_ADDR" not in env:
            nodes = env.get("SLURM_STEP_NODELIST") or env.get("SLURM_JOB_NODELIST", "127.0.0.1")
            try:  # expands node[01-04] syntax
                first = subprocess.run(["scontrol", "show", "hostnames", nodes], capture_output=True, text=True,
                                       check=True).stdout.split()[0]
            except (OSError, subprocess.CalledProcessError, IndexError):
                first = nodes.split(",")[0]
            env["MASTER_ADDR"] = first
        if "MASTER_PORT" not in env:  # as Braid's own launcher support: distinct per job and step
            env["MASTER_PORT"] = str(10000 + (int(env.get("SLURM_JOB_ID", "0")) * 64
                                              + int(env.get("SLURM_STEP_ID", "0"))) % 20000)
        env.setdefault("LOCAL_RANK", env.get("SLURM_LOCALID", "0"))
        return rank, world
    if "OMPI_COMM_WORLD_RANK" in env:
        env.setdefault("MASTER_ADDR", "127.0.0.1")
        env.setdefault("MASTER_PORT", "29500")
        env.setdefault("LOCAL_RANK", env.get("OMPI_COMM_WORLD_LOCAL_RANK", "0"))
        return int(env["OMPI_COMM_WORLD_RANK"]), int(env["OMPI_COMM_WORLD_SIZE"])
    env.setdefault("MASTER_ADDR", "127.0.0.1")
    if "MASTER_PORT" not in env:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            env["MASTER_PORT"] = str(s.getsockname()[1])
    return 0, 1


def export_rank(rank, world):
    """RANK, WORLD_SIZE and LOCAL_RANK in the environment (what env:// and DeepSpeed read)."""
    os.environ["RANK"], os.environ["WORLD_SIZE"] = str(rank), str(world)
    os.environ.setdefault("LOCAL_RANK", str(rank))


def hello(rank, world):
    print(f"hello from rank {rank}/{world} on {socket.gethostname()}", flush=True)


def load_digits_tensors():
    """(x_train, y_train, x_test, y_test): images 1x8x8, normalised; the same split everywhere."""
    import torch
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    digits = load_digits()
    images = torch.tensor(digits.images, dtype=torch.float32).unsqueeze(1) / 16.0
    images = (images - images.mean()) / images.std()
    labels = torch.tensor(digits.target, dtype=torch.long)
    x_train, x_test, y_train, y_test = train_test_split(images, labels, test_size=0.2, random_state=0,
                                                        stratify=labels)
    samples = int(os.environ.get("BRAID_EXAMPLE_SAMPLES", len(x_train)))
    return x_train[:samples], y_train[:samples], x_test, y_test


def make_net():
    """PyTorch's MNIST example network, for 8x8 inputs (28x28 there)."""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 32, 3, padding=1)
            self.conv2 = nn.Conv2d(32, 64, 3, padding=1)
            self.dropout1 = nn.Dropout(0.25)
            self.dropout2 = nn.Dropout(0.5)
            self.fc1 = nn.Linear(64 * 4 * 4, 128)
            self.fc2 = nn.Linear(128, 10)

        def forward(self, x):
            x = F.relu(self.conv1(x))
            x = F.relu(self.conv2(x))
            x = self.dropout1(F.max_pool2d(x, 2))
            x = self.dropout2(F.relu(self.fc1(torch.flatten(x, 1))))
            return F.log_softmax(self.fc2(x), dim=1)

    return Net()


def accuracy(model, x_test, y_test):
    import torch
    model.eval()
    with torch.no_grad():
        return (model(x_test).argmax(1) == y_test).float().mean().item()

"""Braid's torch.distributed backend.

``import braid_torch`` registers the backend "braid"; then

    torch.distributed.init_process_group("braid", ...)

runs the process group's collectives on Braid's host-mode (CPU) collectives. See
docs/pytorch.md in Braid's sources.
"""

import datetime

import torch
import torch.distributed as dist

from . import _C
from ._C import BraidError  # noqa: F401  (raised by failed Braid calls; a RuntimeError)

BACKEND_NAME = "braid"


def _create(store, rank, world_size, timeout):
    if isinstance(timeout, datetime.timedelta):
        seconds = timeout.total_seconds()
    else:
        seconds = float(timeout)
        timeout = datetime.timedelta(seconds=seconds)
    pg = _C.create_process_group(store, rank, world_size, seconds)
    # TORCH_DISTRIBUTED_DEBUG=DETAIL: as for gloo and nccl, a wrapper checks before each
    # operation (through a gloo group of its own) that every rank calls the same one with
    # the same shapes, so a mismatch across ranks is an exception instead of a hang.
    if dist.get_debug_level() == dist.DebugLevel.DETAIL and dist.is_gloo_available():
        from torch.distributed.distributed_c10d import _create_process_group_wrapper
        pg = _create_process_group_wrapper(pg, "braid", store, rank, world_size, timeout)
    return pg


def nccl_version():
    """The NCCL API level of the Braid library this module loaded (e.g. 22700)."""
    return _C.nccl_version()


if not dist.is_available():
    raise ImportError("braid_torch: this torch was built without torch.distributed")

if BACKEND_NAME.upper() not in getattr(dist.Backend, "_plugins", {}):
    dist.Backend.register_backend(BACKEND_NAME, _create)

__all__ = ["BACKEND_NAME", "BraidError", "nccl_version"]

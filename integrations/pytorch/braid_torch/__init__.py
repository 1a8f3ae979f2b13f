"""Braid's torch.distributed backend.

``import braid_torch`` registers the backend "braid" for CPU tensors; then

    torch.distributed.init_process_group("braid")              # or "cpu:braid,cuda:nccl"

runs the process group's CPU collectives on Braid's host-mode collectives. See
docs/pytorch.md in Braid's sources.
"""

import atexit
import datetime

import torch  # noqa: F401  (loads libtorch before the extension)
import torch.distributed as dist

if not dist.is_available():
    raise ImportError("braid_torch: this torch was built without torch.distributed")

from . import _C, _library  # noqa: E402  (after torch.distributed: its Backend class is _C.BraidBackend's base)
from ._C import BraidBackend, BraidError  # noqa: E402,F401  (BraidError: a failed Braid call; a RuntimeError)

# Braid's libnccl.so.2, opened by its path: torch has loaded a libnccl.so.2 of its own (for
# the "nccl" backend), which the dynamic linker would give a module that asks by name.
LIBRARY = _library.PATH
_C.load_library(LIBRARY)
# Queued operations finish before Python finalizes: their Futures' callbacks may need it.
atexit.register(_C.finish_all)

BACKEND_NAME = "braid"


def _seconds(timeout):
    if isinstance(timeout, datetime.timedelta):
        return timeout.total_seconds()
    return float(timeout)


def _create(options, _pg_options=None):
    """The backend of a new group (torch's extended creator API: `options` is a
    _DistributedBackendOptions). When torch offers a group to split from (the default group
    is bound to a device: init_process_group(device_id=torch.device("cpu", 0))), the new
    group's communicator comes from ncclCommSplit; otherwise from a new unique id passed
    through the group's store. TORCH_DISTRIBUTED_DEBUG=DETAIL's checking wrapper is added
    by torch itself."""
    seconds = _seconds(options.timeout)
    parent = options.split_from
    if isinstance(parent, BraidBackend) and options.global_ranks_in_group:
        return parent.split_for_group(options.store, list(options.global_ranks_in_group), seconds)
    return _C.create_backend(options.store, options.group_rank, options.group_size, seconds)


def nccl_version():
    """The NCCL API level of the Braid library this module loaded (e.g. 23007)."""
    return _C.nccl_version()


if BACKEND_NAME.upper() not in dist.Backend._plugins:
    dist.Backend.register_backend(BACKEND_NAME, _create, extended_api=True, devices=["cpu"])

__all__ = ["BACKEND_NAME", "LIBRARY", "BraidBackend", "BraidError", "nccl_version"]

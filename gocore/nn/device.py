"""Devices: which torch device to run on, mixed precision, and moving batches there.

Written for GPUs, tested on CPU. The order of preference is CUDA, then Apple MPS, then CPU;
bf16 autocast is used on CUDA only (CPU bf16 is slower than fp32 on most CPUs, and MPS autocast
support is partial). Asking for a device that is not there is an error, never a silent fallback.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Mapping
from typing import Any

import torch

from gocore.errors import GozeroError


class DeviceError(GozeroError, ValueError):
    """A device that was asked for but does not exist on this machine, or an unknown name."""


THREADS_ENV = "GOZERO_THREADS"


def default_threads(cores: int | None = None, busy: float | None = None) -> int:
    """Torch threads for one process on a machine others may share: the cores that are idle now
    (`busy_cores`), at least 1. Torch's default takes every core, and two such processes stall
    each other (60 training steps: 8.1 s alone, 26.5 s beside a second run, 12.0 s with one thread)."""
    if cores is None:
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    if busy is None:
        busy = busy_cores()
    return max(1, min(cores, cores - round(busy)))


def busy_cores(seconds: float = 0.1) -> float:
    """How many cores other work kept busy over the next `seconds` (Linux /proc/stat), else the
    1-minute load average (which lags: a process started seconds ago barely shows)."""
    def sample() -> tuple[int, int]:
        with open("/proc/stat") as stat:
            fields = [int(value) for value in stat.readline().split()[1:]]
        return sum(fields), fields[3] + fields[4]  # total, idle + iowait (in clock ticks)

    try:
        total0, idle0 = sample()
        time.sleep(seconds)
        total1, idle1 = sample()
    except (OSError, ValueError, IndexError):
        return os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    cores = os.cpu_count() or 1
    return cores * (1 - (idle1 - idle0) / max(total1 - total0, 1))


def set_threads(threads: int | None = None) -> int:
    """Run torch on `threads` threads (None: $GOZERO_THREADS, else `default_threads()`); the count."""
    if threads is None:
        configured = os.environ.get(THREADS_ENV, "").strip()
        if configured and not configured.isdigit():
            raise DeviceError(f"${THREADS_ENV} must be a whole number of threads, not {configured!r}")
        threads = int(configured) if configured else default_threads()
    if threads < 1:
        raise DeviceError(f"torch needs at least 1 thread, not {threads}")
    torch.set_num_threads(threads)
    return threads


def choose_device(preference: str = "auto") -> torch.device:
    """The device for `preference`: auto (CUDA, then MPS, else CPU), cpu, cuda, cuda:<i> or mps."""
    choice = preference.strip().lower()
    if choice == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        return torch.device("mps") if _is_mps_available() else torch.device("cpu")
    if choice == "cpu":
        return torch.device("cpu")
    if choice == "cuda" or choice.startswith("cuda:"):
        return _cuda_device(choice)
    if choice == "mps":
        if not _is_mps_available():
            raise DeviceError("device 'mps' was requested but Apple MPS is not available here; "
                              "use --device auto or cpu")
        return torch.device("mps")
    raise DeviceError(f"unknown device {preference!r}; use auto, cpu, cuda, cuda:<index> or mps")


def _cuda_device(choice: str) -> torch.device:
    if not torch.cuda.is_available():
        build = torch.version.cuda or "none (a CPU-only build)"
        raise DeviceError(f"device {choice!r} was requested but CUDA is not available "
                          f"(torch {torch.__version__}, CUDA {build}); use --device auto or cpu")
    try:
        device = torch.device(choice)
    except RuntimeError as error:
        raise DeviceError(f"{choice!r} is not a CUDA device name (like cuda or cuda:0)") from error
    count = torch.cuda.device_count()
    if device.index is not None and device.index >= count:
        raise DeviceError(f"device {choice!r} was requested but only {count} CUDA device(s) exist")
    return device


def _is_mps_available() -> bool:
    mps = getattr(torch.backends, "mps", None)
    return bool(mps is not None and mps.is_available())


def autocast_context(device: torch.device, enabled: bool = True) -> contextlib.AbstractContextManager[Any]:
    """bf16 autocast on a CUDA device with native bf16; a no-op context anywhere else."""
    # Emulated bf16 (pre-Ampere GPUs) is slower than fp32, and fp16 would need a GradScaler
    # in the training loop, so those GPUs run in fp32.
    if enabled and device.type == "cuda" and torch.cuda.is_bf16_supported(including_emulation=False):
        return torch.autocast(device_type="cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def pin_if_cuda(tensor: torch.Tensor, device: torch.device) -> torch.Tensor:
    """`tensor` in pinned (page-locked) memory if it will be copied to CUDA, else unchanged."""
    # Pinned host memory is what makes non_blocking host-to-GPU copies truly asynchronous;
    # elsewhere it only costs locked RAM.
    if device.type == "cuda" and tensor.device.type == "cpu" and not tensor.is_pinned():
        return tensor.pin_memory()
    return tensor


def to_device(batch: Any, device: torch.device, non_blocking: bool = True) -> Any:
    """`batch` with every tensor moved to `device`, through mappings (returned as dicts), lists
    and (named) tuples; other values are returned as they are."""
    # Asynchronous copies only on CUDA: elsewhere they gain nothing (CPU) or have been
    # unreliable (MPS).
    asynchronous = non_blocking and device.type == "cuda"
    return _move(batch, device, asynchronous)


def _move(item: Any, device: torch.device, asynchronous: bool) -> Any:
    if isinstance(item, torch.Tensor):
        return item.to(device, non_blocking=asynchronous)
    if isinstance(item, Mapping):
        return {key: _move(value, device, asynchronous) for key, value in item.items()}
    if isinstance(item, tuple) and hasattr(item, "_fields"):
        return type(item)(*(_move(value, device, asynchronous) for value in item))
    if isinstance(item, (list, tuple)):
        return type(item)(_move(value, device, asynchronous) for value in item)
    return item


def return_large_buffers(threshold: int = 64 * 1024) -> bool:
    """Make glibc map every allocation of `threshold` bytes or more on its own and unmap it when
    freed (Linux/glibc; elsewhere nothing happens, and False is returned).

    Inference allocates activations of a few MB per batch. glibc's default raises its mmap threshold
    after the first such buffer is freed and keeps later ones in the heap, which then only grows:
    a self-play worker's resident memory crept up by ~90 MB over 30 lockstep games, ~50 MB with this.
    """
    from gocore.malloc import M_MMAP_THRESHOLD, glibc_mallopt

    mallopt = glibc_mallopt()
    return bool(mallopt is not None and mallopt(M_MMAP_THRESHOLD, threshold))

"""Keep freed memory in the process instead of handing it back to the kernel at once.

Self-play, training and search allocate and free the same large buffers (numpy arrays and torch
tensors above glibc's 128 KB mmap threshold) thousands of times a second. glibc serves each with a
fresh mmap and returns it with munmap, so every reuse faults its pages in again: one `gozero
selfplay` of 100 games x 16 sims took 16 million minor page faults and 36 % of its CPU time in the
kernel (benchmarks/malloc.py). With a higher mmap threshold, trim threshold and top pad the heap
keeps those pages: the same games, 1.6x faster. Self-play workers still lower their own mmap
threshold to 64 KB afterwards (`gocore.nn.device.return_large_buffers`, for their peak memory), so
there the trim threshold and top pad are what keep the heap; which of the two does it was not
isolated.

`keep_freed_memory()` sets glibc's tunables for this process (mallopt) and, through the
environment, for every process it starts (process-pool workers read them when they start). A
setting already in the environment wins; ``GOZERO_MALLOC=system`` leaves glibc's defaults alone.
Nothing happens where the C library is not glibc. This module imports nothing heavy.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os

SWITCH_ENV = "GOZERO_MALLOC"
"""``system`` turns the tuning off (glibc's own defaults)."""

M_TRIM_THRESHOLD, M_TOP_PAD, M_MMAP_THRESHOLD = -1, -2, -3  # glibc's mallopt parameters

TUNABLES = {  # environment variable: (mallopt parameter, bytes)
    "MALLOC_TRIM_THRESHOLD_": (M_TRIM_THRESHOLD, 1 << 30),  # keep up to 1 GB free at the heap top
    "MALLOC_TOP_PAD_": (M_TOP_PAD, 64 << 20),  # grow the heap 64 MB at a time
    "MALLOC_MMAP_THRESHOLD_": (M_MMAP_THRESHOLD, 256 << 20),  # mmap only blocks of 256 MB and more
}


def keep_freed_memory() -> bool:
    """Apply `TUNABLES` here and to child processes, unless turned off; whether they apply here."""
    if os.environ.get(SWITCH_ENV, "").strip().lower() == "system":
        return False
    mallopt = glibc_mallopt()
    if mallopt is None:
        return False
    for name, (parameter, value) in TUNABLES.items():
        chosen = os.environ.setdefault(name, str(value))  # a user's own setting wins
        if chosen.isdigit():
            mallopt(parameter, int(chosen))
    return True


def glibc_mallopt():
    """glibc's `mallopt(int, int) -> int`, or None on another C library."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.gnu_get_libc_version  # glibc only  # noqa: B018
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return None
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return mallopt

"""Atomic writes: bytes reach their final name only when complete (temp file, fsync, rename).

A reader never sees a half-written file under its final name, and a crash leaves at most a
``.tmp-*`` file behind, which `remove_stale_temps` clears on the next run.
"""

from __future__ import annotations

import contextlib
import ctypes
import io
import json
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

TEMP_PREFIX = ".tmp-"


@contextlib.contextmanager
def atomic_path(final: Path, sync_dir: bool = True, durable: bool = True) -> Iterator[Path]:
    """Yield a temp path next to `final`; on success it is fsynced and renamed onto `final`.

    `sync_dir=False` skips the directory fsync that makes the rename itself durable: for files
    whose durable existence a later, fully synced marker file vouches for (and checks).
    `durable=False` skips every fsync: the file is still complete or absent after a crash of
    the process, but a power cut may lose it or leave it empty; only for files whose loss costs
    a redo, and whose readers treat an unreadable file as missing.
    """
    final.parent.mkdir(parents=True, exist_ok=True)
    fd, temp_name = tempfile.mkstemp(prefix=f"{TEMP_PREFIX}{final.name}.", dir=final.parent)
    os.close(fd)
    temp = Path(temp_name)
    os.chmod(temp, 0o666 & ~_umask())  # mkstemp makes 0600; final files get the usual mode
    try:
        yield temp
        if durable:
            with open(temp, "rb+") as handle:
                os.fsync(handle.fileno())
        os.replace(temp, final)
        if sync_dir and durable:
            _fsync_dir(final.parent)
    finally:
        temp.unlink(missing_ok=True)


@contextlib.contextmanager
def atomic_open(final: Path, mode: str = "wb", durable: bool = True) -> Iterator[IO[Any]]:
    """Open a temp file for writing that becomes `final` only if the block completes."""
    with atomic_path(final, durable=durable) as temp, open(temp, mode) as handle:
        yield handle


def write_bytes(final: Path, data: bytes, durable: bool = True) -> None:
    """Write `data` to `final` atomically (see `atomic_path` for `durable`)."""
    with atomic_open(final, "wb", durable=durable) as handle:
        handle.write(data)


def write_json(final: Path, obj: Any, indent: int | None = 2, durable: bool = True) -> None:
    """Write `obj` as JSON to `final` atomically; indented unless `indent` is None (which is
    several times faster for big machine-read files: Python's C encoder does not indent)."""
    write_bytes(final, (json.dumps(obj, indent=indent, sort_keys=True) + "\n").encode(), durable=durable)


class WritebackFile(io.FileIO):
    """A file opened for writing whose data the kernel starts writing to disk every `chunk`
    bytes (Linux ``sync_file_range``, asynchronous), so the final fsync of a big file waits for
    its last chunk only, not all of it. Elsewhere it is a plain unbuffered file."""

    def __init__(self, path: Path, chunk: int = 1 << 20):
        super().__init__(path, "wb")
        self._chunk, self._written, self._flushed = chunk, 0, 0

    def write(self, data) -> int:  # type: ignore[override]
        count = super().write(data) or 0
        self._written += count
        if self._written - self._flushed >= self._chunk:
            _start_writeback(self.fileno(), self._flushed, self._written - self._flushed)
            self._flushed = self._written
        return count


def _sync_file_range():
    """libc's sync_file_range, or None where there is none (not Linux, no glibc symbol)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        function = ctypes.CDLL(None, use_errno=True).sync_file_range
    except (OSError, AttributeError):
        return None
    function.argtypes = [ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_uint]
    return function


_SYNC_FILE_RANGE = _sync_file_range()
_SYNC_FILE_RANGE_WRITE = 2  # start writeback of the range's dirty pages, do not wait


def _start_writeback(fd: int, offset: int, length: int) -> None:
    if _SYNC_FILE_RANGE is not None:
        _SYNC_FILE_RANGE(fd, offset, length, _SYNC_FILE_RANGE_WRITE)  # a hint: failures are harmless


def remove_stale_temps(directory: Path) -> int:
    """Delete temp files left by a crashed writer in `directory`; returns how many."""
    if not directory.is_dir():
        return 0
    stale = [p for p in directory.iterdir() if p.name.startswith(TEMP_PREFIX) and p.is_file()]
    for path in stale:
        path.unlink(missing_ok=True)
    return len(stale)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _fsync_dir(directory: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

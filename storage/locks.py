"""Run locks: one process at a time works on a dataset, a loop or a match.

A lock is an advisory file lock (`filelock`) beside the thing it guards, plus a small note of who
holds it (pid, host, since when), so the refusal can say which run to wait for or stop. The lock
dies with its process: a run killed with SIGKILL leaves no lock behind, only a stale note.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from gocore.errors import GozeroError


class BusyError(GozeroError):
    """Another run holds the lock; the message names it."""


@contextlib.contextmanager
def exclusive(path: Path, what: str, details: Mapping[str, Any] | None = None) -> Iterator[None]:
    """Hold the lock file `path` while the block runs; BusyError at once if another run holds it.
    `details` (JSON values) join the holder's note, for `holder` to show the refused run."""
    path.parent.mkdir(parents=True, exist_ok=True)
    note = path.with_name(path.name + ".holder")
    lock = FileLock(str(path), timeout=0)
    try:
        lock.acquire()
    except Timeout:
        raise BusyError(f"{what} is in use by another run ({_holder(note)}); wait for it to end or "
                        f"stop it, then run again") from None
    try:
        note.write_text(json.dumps({**(details or {}), "pid": os.getpid(), "host": socket.gethostname(),
                                    "since": time.time()}))
        yield
    finally:
        note.unlink(missing_ok=True)
        lock.release()


def holder(path: Path) -> dict[str, Any] | None:
    """The note of whoever holds the lock file `path` (pid, host, since, details), None if unreadable."""
    try:
        note = json.loads(path.with_name(path.name + ".holder").read_text())
    except (OSError, ValueError):
        return None
    return note if isinstance(note, dict) else None


def _holder(note: Path) -> str:
    try:
        holder = json.loads(note.read_text())
        since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(holder["since"]))
        return f"pid {holder['pid']} on {holder['host']}, since {since}"
    except (OSError, ValueError, KeyError, TypeError):
        return "holder unknown"

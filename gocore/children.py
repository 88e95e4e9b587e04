"""Child processes end with the process that started them, whatever signal ends it.

A process killed with SIGKILL runs no cleanup, so its children (process-pool workers, the temporary
Prefect server, GNU Go) would live on with parent 1, using CPU for hours. On Linux a child asks the
kernel for a signal when its parent dies (``prctl(PR_SET_PDEATHSIG)``): `die_with_parent` in a
Python child (a pool worker's initializer), `die_with_parent_preexec` as a `subprocess.Popen`
``preexec_fn`` for any other program. Elsewhere they do nothing and the cleanup on the way out
(`stop_owned`) is all there is.

The kernel sends the signal when the *thread* that started the child ends, not the process: start
such children from a thread that lives as long as they should (the main thread;
`is_main_thread`). `own` records a child the way out must stop (`stop_owned`: a second Ctrl-C
exits at once and cannot wait for each `finally`). This module imports nothing heavy.
"""

from __future__ import annotations

import ctypes
import functools
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>

_owned: list[subprocess.Popen] = []


@functools.cache
def _prctl() -> Callable[..., int] | None:
    """libc's prctl, loaded once in the parent (loading it after fork could deadlock); None off Linux."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


def die_with_parent(signum: int = signal.SIGKILL) -> bool:
    """Ask for `signum` when this process's parent dies; exit now if it already has. Whether the
    kernel will send it (Linux only)."""
    prctl = _prctl()
    parent = os.getppid()
    if prctl is None or prctl(PR_SET_PDEATHSIG, int(signum), 0, 0, 0) != 0:
        return False
    if os.getppid() != parent or parent == 1:  # the parent died before the request: nobody will signal
        os._exit(1)
    return True


def die_with_parent_preexec(signum: int = signal.SIGKILL) -> Callable[[], None] | None:
    """A `subprocess.Popen` ``preexec_fn`` that makes the child die with this process (the calling
    thread: call it from the main thread), or None where that is not possible."""
    prctl = _prctl()
    if prctl is None or not is_main_thread():
        return None
    parent = os.getpid()

    def preexec() -> None:  # runs in the child between fork and exec: no imports, no locks
        prctl(PR_SET_PDEATHSIG, int(signum), 0, 0, 0)
        if os.getppid() != parent:
            os._exit(1)

    return preexec


def is_main_thread() -> bool:
    """Whether the calling thread is the main thread (the one a parent-death signal can rely on)."""
    return threading.current_thread() is threading.main_thread()


def own(process: subprocess.Popen) -> subprocess.Popen:
    """Record `process` as one `stop_owned` stops; returns it."""
    _owned.append(process)
    return process


def disown(process: subprocess.Popen) -> None:
    """Forget `process` (it has been stopped the ordinary way)."""
    if process in _owned:
        _owned.remove(process)


def stop_owned() -> None:
    """Kill every owned process still running, at once (the last thing before an immediate exit)."""
    for process in list(_owned):
        if process.poll() is None:
            try:
                process.kill()
            except OSError:
                pass


def stop_fork_server(timeout: float = 10.0) -> bool:
    """End multiprocessing's fork server, if this process started one, and reap it: the CPU of the
    pool workers it forked (and reaped) then reaches this process's ``RUSAGE_CHILDREN``, which is
    all `time` or a parent sees of them. Left running while any of its workers lives (each holds the
    pipe whose end stops it); a later pool starts a new one. Whether it was stopped."""
    from multiprocessing import forkserver

    server = forkserver._forkserver  # the process-wide one; multiprocessing offers no public stop
    pid = server._forkserver_pid
    if pid is None:
        return False
    from gocore.cpu import descendants

    deadline = time.monotonic() + timeout
    while descendants(pid):  # workers still ending (or zombies the server has yet to reap)
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    server._stop()  # closes our end of the "alive" pipe; the server exits; waits for it
    return True

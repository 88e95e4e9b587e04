"""CPU time of a process tree: this process and every live descendant, with what each has reaped.

A step's work runs in pool workers that are not this process's direct children (multiprocessing's
fork server forks them, and lives until the flow ends), and in the programs they start (GNU Go).
`resource.getrusage(RUSAGE_CHILDREN)` counts a child only once it has ended *and been reaped by
this process*, so for a whole step it saw nothing of the workers (issue "Every CPU-second counted":
2,390 GNU Go games recorded as 6.36 CPU seconds).

`tree_cpu_seconds` adds, for this process, its own and its reaped children's CPU (getrusage), and
for every live descendant the same four counters from ``/proc/<pid>/stat`` (utime, stime, cutime,
cstime). A process that ends is reaped by its parent, which is this process or a live descendant,
so its CPU moves from its own counters into its parent's reaped ones and is still counted: the
difference of two readings is the CPU the tree spent between them, whichever processes came and
went. What it misses: a descendant orphaned by a parent that died first (re-parented out of the
tree) takes its CPU with it. Off Linux (no /proc) it is this process and its reaped children.
"""

from __future__ import annotations

import os
import resource
from pathlib import Path

PROC = Path("/proc")
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def tree_cpu_seconds(pid: int | None = None) -> float:
    """User + system CPU seconds of process `pid` (default: this one) and all its live descendants,
    each with the CPU of the children it has reaped."""
    me = os.getpid()
    pid = me if pid is None else pid
    table = _process_table()
    descendants = _descendants(pid, table)
    if pid == me:
        own, reaped = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        total = own.ru_utime + own.ru_stime + reaped.ru_utime + reaped.ru_stime
    else:
        total = table[pid][1] if pid in table else 0.0
    return total + sum(table[child][1] for child in descendants)


def descendants(pid: int | None = None) -> list[int]:
    """The process ids below `pid` (default: this process) that are alive now (Linux; else [])."""
    return _descendants(os.getpid() if pid is None else pid, _process_table())


def _process_table() -> dict[int, tuple[int, float]]:
    """{pid: (parent pid, CPU seconds of it and its reaped children)} of every process /proc shows."""
    table: dict[int, tuple[int, float]] = {}
    if not PROC.is_dir():
        return table
    for entry in os.scandir(PROC):
        if not entry.name.isdigit():
            continue
        try:
            text = Path(entry.path, "stat").read_bytes()
        except OSError:  # ended since the listing
            continue
        fields = text[text.rfind(b")") + 2:].split()  # after "pid (comm) ": comm may hold spaces and ")"
        # fields[1] ppid; fields[11:15] utime, stime, cutime, cstime in clock ticks (proc(5))
        table[int(entry.name)] = (int(fields[1]), sum(int(value) for value in fields[11:15]) / _TICKS)
    return table


def _descendants(pid: int, table: dict[int, tuple[int, float]]) -> list[int]:
    """Every process below `pid` in `table` (children, their children, ...)."""
    children: dict[int, list[int]] = {}
    for child, (parent, _) in table.items():
        children.setdefault(parent, []).append(child)
    found, frontier = [], [pid]
    while frontier:
        below = children.get(frontier.pop(), [])
        found.extend(below)
        frontier.extend(below)
    return found

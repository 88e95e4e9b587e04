"""Resumable steps: "record a step when it finishes, skip it on a rerun", once for every pipeline.

The zero loop (a step per generation: start, selfplay, train, gate, ...), the AlphaGo pipeline (a
stage each) and the strength recipe (expert games, supervised net, anchors) each run a sequence of
steps whose small JSON facts `storage.loops` records under ``<data>/loops/<run>/steps/``. A step
already recorded is read back instead of run, so a run killed at any moment and started again
continues at its first unfinished step. Every record carries the step's wall seconds and CPU
seconds: this process and its whole process tree (pool workers forked by the fork server, the GNU Go
processes they run; `gocore.cpu`), plus the Dask workers a step's tasks ran on (`remote_cpu`), summed
over every attempt: what an attempt that did not finish spent (interrupted, failed or killed: noted
every `HEARTBEAT` seconds while it runs) is added to the attempt that finishes.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from gocore.cpu import tree_cpu_seconds
from storage import loops

_remote_meters: dict[str, Callable[[], float]] = {}
HEARTBEAT = 60.0
"""Seconds between two notes of what a running step has spent (what a SIGKILL can lose at most)."""


def cpu_seconds() -> float:
    """CPU seconds, user + system, of this process's tree (live pool workers and the programs they
    run included) and of the remote workers registered with `remote_cpu` since they were: what a
    step costs on any number of cores and machines."""
    return tree_cpu_seconds() + sum(meter() for meter in list(_remote_meters.values()))


def remote_cpu(name: str, total: Callable[[], float]) -> None:
    """Count from now on the CPU of workers outside this process tree (a Dask cluster's): `total()`
    is their CPU seconds so far, read at every `cpu_seconds`; registered once per `name`, counted
    from the first reading (so a step that registers them mid-way counts what they spent since)."""
    if name in _remote_meters:
        return
    baseline = total()
    _remote_meters[name] = lambda: max(total() - baseline, 0.0)  # a restarted worker starts again at 0


class Steps:
    """The steps of one run (`run`: its directory under <data>/loops/) at one generation."""

    def __init__(self, data: Path, run: str, generation: int = 0):
        self.data, self.run, self.generation = data, run, generation

    def done(self, name: str) -> dict[str, Any] | None:
        """The record of step `name` if it has finished, else None."""
        return loops.read_step(self.data, self.run, self.generation, name)

    def step(self, name: str, work: Callable[[], Mapping[str, Any]],
             is_current: Callable[[dict[str, Any]], bool] = lambda record: True) -> dict[str, Any]:
        """Step `name`'s record: the one on disk if it `is_current`, else `work()`'s facts with the
        step's wall and CPU seconds, recorded once it has finished."""
        if (record := self.done(name)) is not None and is_current(record):
            return record
        where = (self.data, self.run, self.generation, name)
        before = loops.read_unfinished(*where) or {}
        started, cpu = time.perf_counter(), cpu_seconds()

        def spent() -> dict[str, Any]:
            return {"seconds": round(float(before.get("seconds", 0)) + time.perf_counter() - started, 2),
                    "cpu_seconds": round(float(before.get("cpu_seconds", 0)) + cpu_seconds() - cpu, 2),
                    "attempts": int(before.get("attempts", 0)) + 1}

        with _noting(lambda: loops.record_unfinished(*where, spent())):
            found = work()
        total = spent()
        facts = {**found, "seconds": total["seconds"], "cpu_seconds": total["cpu_seconds"],
                 **({"attempts": total["attempts"]} if total["attempts"] > 1 else {})}
        loops.record_step(*where, facts)
        loops.clear_unfinished(*where)
        return {"generation": self.generation, "step": name, **facts}


class _noting:
    """While a block runs, `note()` every `HEARTBEAT` seconds from a thread, and once more if the
    block raises (an interrupt or a failure), before the exception goes on."""

    def __init__(self, note: Callable[[], None]):
        self.note, self.stop = note, threading.Event()
        self.thread = threading.Thread(target=self._beat, daemon=True, name="step-spend")

    def _beat(self) -> None:
        while not self.stop.wait(HEARTBEAT):
            self.note()

    def __enter__(self) -> None:
        self.thread.start()

    def __exit__(self, exc_type: Any, exc: Any, traceback: Any) -> None:
        self.stop.set()
        self.thread.join()
        if exc_type is not None:
            self.note()

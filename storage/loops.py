"""A zero loop's state on disk: its settings, one record per finished step, and its lock.

    <data>/loops/<loop>/
        loop.json                      the settings a rerun must match (written once)
        steps/gen-<k>-<step>.json      one small record per finished step of generation k
        selfplay/gen=<k>/              the loop's self-play (storage.selfplay)
        loop.lock                      held while a process runs the loop (storage.locks)

A step's record is written atomically when the step has finished, so a process killed at any
moment leaves the loop at "the first step without a record": a rerun (or a Retry from the Prefect
UI) continues there. Nothing else about the loop lives in a process.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from gocore.errors import GozeroError
from storage import layout, locks
from storage.atomic import write_json

STEPS_DIR = "steps"


class LoopError(GozeroError):
    """A loop that cannot go on as asked (e.g. rerun with settings other than its own)."""


def loop_dir(data: Path, loop: str) -> Path:
    """The directory of loop `loop`."""
    return data / "loops" / layout.safe_name(loop, "loop name")


def lock(data: Path, loop: str) -> contextlib.AbstractContextManager[None]:
    """Held while a process runs the loop: a second one is refused, naming the first."""
    return locks.exclusive(loop_dir(data, loop) / "loop.lock", f"loop {loop}")


def read_settings(data: Path, loop: str) -> dict[str, Any] | None:
    """The settings loop.json records (None: a new loop)."""
    try:
        return json.loads((loop_dir(data, loop) / "loop.json").read_text())
    except FileNotFoundError:
        return None


def claim(data: Path, loop: str, settings: Mapping[str, Any], may_change: frozenset[str],
          absent: Mapping[str, Any] | None = None) -> None:
    """Record the loop's settings on its first run; LoopError if a rerun changes any but `may_change`
    (a key the record lacks counts as its `absent` value: a setting added since the loop began)."""
    recorded = check_claim(data, loop, settings, may_change, absent)
    if recorded != dict(settings):  # new, or e.g. more generations: the new value is the loop's from now on
        write_json(loop_dir(data, loop) / "loop.json", dict(settings))


def check_claim(data: Path, loop: str, settings: Mapping[str, Any], may_change: frozenset[str],
                absent: Mapping[str, Any] | None = None) -> dict[str, Any] | None:
    """What loop.json records (None: a new loop); LoopError if `settings` change any key but
    `may_change` (a key the record lacks counts as its `absent` value). Writes nothing: a command
    asks before it starts any server."""
    recorded = read_settings(data, loop)
    if recorded is None:
        return None
    changed = [key for key in changed_settings(recorded, settings, absent) if key not in may_change]
    if changed:
        raise LoopError(f"loop {loop!r} runs with other {', '.join(changed)} ({loop_dir(data, loop) / 'loop.json'}); "
                        "keep them, or start another loop with --loop NAME")
    return recorded


def changed_settings(recorded: Mapping[str, Any] | None, settings: Mapping[str, Any],
                     absent: Mapping[str, Any] | None = None) -> list[str]:
    """The keys whose value in `settings` differs from the record, sorted (a key the record lacks counts
    as its `absent` value); none for a new loop (`recorded` None)."""
    if recorded is None:
        return []
    was = {**(absent or {}), **recorded}
    return sorted(key for key in set(was) | set(settings) if was.get(key) != settings.get(key))


def record_step(data: Path, loop: str, generation: int, step: str, facts: Mapping[str, Any]) -> None:
    """Mark `step` of `generation` finished, with what it found (small JSON values)."""
    write_json(_step_path(data, loop, generation, step), {"generation": generation, "step": step, **facts})


def read_step(data: Path, loop: str, generation: int, step: str) -> dict[str, Any] | None:
    """The record of a finished step, or None if it has not finished (or its record is unreadable)."""
    try:
        return json.loads(_step_path(data, loop, generation, step).read_text())
    except (OSError, ValueError):
        return None


def read_steps(data: Path, loop: str) -> list[dict[str, Any]]:
    """Every step record of the loop, by generation then finishing order (for live views)."""
    records = []
    for path in (loop_dir(data, loop) / STEPS_DIR).glob("gen-*.json"):
        with contextlib.suppress(OSError, ValueError):
            records.append((path.stat().st_mtime_ns, json.loads(path.read_text())))
    return [record for _, record in sorted(records, key=lambda r: (r[1].get("generation", 0), r[0]))]


def record_unfinished(data: Path, loop: str, generation: int, step: str, spent: Mapping[str, Any]) -> None:
    """What attempts at `step` of `generation` that have not finished it spent so far (seconds,
    cpu_seconds, attempts): a step interrupted and run again counts every attempt."""
    write_json(_unfinished_path(data, loop, generation, step), dict(spent))


def read_unfinished(data: Path, loop: str, generation: int, step: str) -> dict[str, Any] | None:
    """`record_unfinished`'s record of the step, or None."""
    try:
        return json.loads(_unfinished_path(data, loop, generation, step).read_text())
    except (OSError, ValueError):
        return None


def clear_unfinished(data: Path, loop: str, generation: int, step: str) -> None:
    """Forget the unfinished attempts of a step (it has finished: its record counts them)."""
    _unfinished_path(data, loop, generation, step).unlink(missing_ok=True)


def _unfinished_path(data: Path, loop: str, generation: int, step: str) -> Path:
    return _step_path(data, loop, generation, step).with_suffix(".unfinished")


def _step_path(data: Path, loop: str, generation: int, step: str) -> Path:
    return loop_dir(data, loop) / STEPS_DIR / f"gen-{int(generation):04d}-{layout.safe_name(step, 'step')}.json"

"""The generation driver every game's AlphaGo Zero loop runs through (Go's `flows.zero_loop`,
Baghchal's `flows.baghchal_loop`).

What makes a loop resumable and safe is the same whatever the game, so it is written once here:

    with the loop's lock (a second process on the same loop is refused, naming the first):
        settings = the given ones, resolved against what the loop recorded (loop.json)
        claim       record them on the first run; refuse a rerun that changes any but `resumable`, or
                    one of `between_generations` while a generation is under way
        generation 0 = the game's initial champion (made once, then read back)
        for k in 1 .. settings.generations:
            stop?   the game's own budget rule (CPU hours, wall minutes) may end the loop here
            run     the game's generation: its steps, each recorded when finished (tasks.app.steps)

A game gives the driver a `LoopKind` (its steps, how its settings are recorded, which may change
between runs, its generation 0) and, per call, how to run and when to stop a generation; what a
generation does (self-play, training, gate, promotion, ladder) stays with the game, over the
game boundary of `gocore.rules.game` and `gocore.search.lockstep`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

from storage import loops
from tasks.app.models import ModelRef


class LoopSettingsLike(Protocol):
    """What the driver reads of a game's loop settings."""

    loop: str
    generations: int

    def resolved(self, recorded: Mapping[str, Any] | None) -> Any: ...


S = TypeVar("S", bound=LoopSettingsLike)


@dataclass(frozen=True)
class LoopKind:
    """What a game's loop tells the driver."""

    game: str
    steps: tuple[str, ...]  # the steps every generation records: a generation with all of them is finished
    resumable: frozenset[str]  # settings a rerun may change (generations, a budget)
    record: Callable[[Any], dict[str, Any]]  # resolved settings -> what loop.json keeps
    initial_champion: Callable[[Any, str], ModelRef]  # (settings, data dir) -> generation 0, made once
    added_later: Mapping[str, Any] | None = None  # settings added since loops began: their value when absent
    between_generations: frozenset[str] = frozenset()  # settings a rerun may change when no generation is under way


def finished_generations(data: Path, loop: str, steps: tuple[str, ...]) -> int:
    """The last generation of the loop whose every step in `steps` is recorded (0: none)."""
    done = {(int(r["generation"]), r["step"]) for r in loops.read_steps(data, loop)}
    finished = 0
    while all((finished + 1, step) in done for step in steps):
        finished += 1
    return finished


def generation_under_way(data: Path, loop: str, steps: tuple[str, ...]) -> int | None:
    """The generation of the loop that has recorded some but not all of `steps`, or None."""
    begun = max((int(r["generation"]) for r in loops.read_steps(data, loop)), default=0)
    return begun if begun > finished_generations(data, loop, steps) else None


def refuse_mid_generation(data: Path, loop: str, steps: tuple[str, ...], changed: list[str]) -> None:
    """LoopError if a rerun changes `changed` (settings its generations are played with: self-play's
    games and simulations, reanalysis) while a generation of the loop is under way: a generation is
    played with one set of them (its finished self-play batches would not match, SelfPlayError)."""
    if changed and (generation := generation_under_way(data, loop, steps)) is not None:
        raise loops.LoopError(f"loop {loop!r} may change {', '.join(changed)} only between generations: "
                              f"generation {generation} is under way; finish it with the recorded settings "
                              f"({loops.loop_dir(data, loop) / 'loop.json'}), then rerun with the new ones")


def check_rerun(kind: LoopKind, settings: Any, data: Path) -> dict[str, Any]:
    """What loop.json would record of `settings` (resolved); LoopError if the loop runs with others but
    `kind.resumable`, or other `kind.between_generations` while a generation is under way. Writes
    nothing: the CLI asks before it starts any server, the driver again when it claims the loop."""
    recorded, record = loops.read_settings(data, settings.loop), kind.record(settings)
    changed = loops.changed_settings(recorded, record, kind.added_later)
    refuse_mid_generation(data, settings.loop, kind.steps, [key for key in changed if key in kind.between_generations])
    loops.check_claim(data, settings.loop, record, kind.resumable | kind.between_generations, kind.added_later)
    return record


def generation_target(data: Path, loop: str, steps: tuple[str, ...], more: int) -> int:
    """The generation to reach to play `more` generations after the loop's last finished one; an
    unfinished generation is the first of them, so a retried run aims where it aimed before."""
    if more < 1:
        raise loops.LoopError(f"more_generations must be at least 1, not {more}")
    return finished_generations(data, loop, steps) + more


def drive(kind: LoopKind, settings: S, data: Path, run_generation: Callable[[S, int], None],
          stop: Callable[[S, int], str | None] = lambda settings, generation: None,
          more_generations: int | None = None) -> S:
    """Run the loop `settings.loop` of game `kind` up to `settings.generations` (or `more_generations`
    beyond its last finished one), resuming where it stopped: `run_generation(settings, k)` for each
    generation k until `stop(settings, k)` gives a reason not to start it (printed). Returns the
    settings as resolved against the loop's record."""
    if more_generations is not None:
        target = generation_target(data, settings.loop, kind.steps, more_generations)
        settings = dataclasses.replace(settings, generations=target)  # type: ignore[type-var]
        print(f"loop {settings.loop}: {more_generations} more generation(s), up to generation {target}")
    with loops.lock(data, settings.loop):
        settings = settings.resolved(loops.read_settings(data, settings.loop))
        loops.claim(data, settings.loop, check_rerun(kind, settings, data), kind.resumable | kind.between_generations,
                    kind.added_later)
        first = kind.initial_champion(settings, str(data))
        print(f"loop {settings.loop}: generation 0 is {first.label}")
        for generation in range(1, settings.generations + 1):
            if (reason := stop(settings, generation)) is not None:
                print(f"loop {settings.loop}: {reason}, no generation {generation}")
                break
            run_generation(settings, generation)
    return settings

"""Named loop settings: the one place each of gozero's standard loops is declared.

`LOOP_PRESETS` maps a name to the `LoopSettings` fields that differ from the dataclass defaults.
`gozero run` is the `run-9x9` preset, the `zero-9x9` deployment in prefect.yaml is the `zero-9x9`
preset (a test holds the two equal), the benchmarks start from `run-9x9`, and any preset is a
starting point for `gozero loop --settings NAME` (options given beside it change it further).
"""

from __future__ import annotations

from typing import Any

from tasks.app.loop_settings import LoopSettings

LOOP_PRESETS: dict[str, dict[str, Any]] = {
    "zero-9x9": {"loop": "zero-9x9", "size": 9, "games": 200, "sims": 32, "preset": "tiny", "gate": "sprt",
                 "gate_games": 400, "ladder_opponents": 0},
    # tuned on 2 cores (docs/zero-loop.md): every candidate promoted (a gate would cost as much as a
    # generation), every row kept and sampled about 3 times, a high lr, no ladder games inside the loop
    "run-9x9": {"loop": "run-9x9", "size": 9, "generations": 4, "games": 200, "sims": 16, "preset": "tiny",
                "gate": "off", "min_window": 100_000, "replay": 3.0, "lr": 0.03, "resign_threshold": -0.95,
                "ladder_opponents": 0},
    # a toy loop that learns something in a minute or two: for trying the commands and for tests
    "quick-5x5": {"loop": "quick-5x5", "size": 5, "generations": 2, "games": 16, "sims": 8, "preset": "tiny",
                  "gate": "off", "min_window": 2_000, "replay": 2.0, "lr": 0.03, "ladder_opponents": 0},
}
"""Each standard loop by name: its fields that differ from `LoopSettings`' defaults."""


def loop_preset(name: str, **changes: Any) -> LoopSettings:
    """The settings of preset `name`, with `changes` on top; ValueError names the presets there are."""
    if name not in LOOP_PRESETS:
        raise ValueError(f"unknown loop settings {name!r}; named settings: {', '.join(LOOP_PRESETS)}")
    return LoopSettings(**{**LOOP_PRESETS[name], **changes})


def loop_settings(named: str | None, changes: dict[str, Any]) -> LoopSettings:
    """`gozero loop`'s settings: the named ones (or the defaults, with the loop called zero-<N>x<N>)
    with `changes` on top."""
    if named is not None:
        return loop_preset(named, **changes)
    size = changes.get("size", LoopSettings.size)
    return LoopSettings(**{"loop": f"zero-{size}x{size}", **changes})


def main_job_settings(generations: int = 4, games: int = 200, sims: int = 16, **overrides: Any) -> LoopSettings:
    """`gozero run`'s loop: the `run-9x9` preset with its size of run and `overrides`."""
    return loop_preset("run-9x9", generations=generations, games=games, sims=sims, **overrides)

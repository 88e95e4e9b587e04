"""Baghchal player specs: the one parser that turns a name on a command line or in a match into a player.

    random                  uniform over the legal actions
    uniform                 search with uniform priors and value 0 (visits alone), `sims` simulations
    library:<depth>         the `baghchal` library's minimax engine (library = depth 2), played by its
                            exact numba port (`gocore.search.baghchal_minimax`)
    library-slow:<depth>    the same engine, the library's own code (the same moves, far slower: to check)
    human                   a person at the terminal, typing the library's move text
    models:/baghchal@champion, models:/baghchal/3, a model directory
                            our net, searched with `sims` simulations (the match preset)

`player_label` is the name the ladder and match records know a player by.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gocore.errors import GozeroError

LIBRARY_DEPTH = 2


class PlayerSpecError(GozeroError, ValueError):
    """A player spec that names no Baghchal player."""


@dataclass(frozen=True)
class Player:
    """A ready player and its label."""

    agent: Any
    label: str


def library_engine(spec: str) -> tuple[int, bool] | None:
    """(depth, slow) of a ``library[:<depth>]`` or ``library-slow[:<depth>]`` spec, else None."""
    for name, slow in (("library", False), ("library-slow", True)):
        if spec == name:
            return LIBRARY_DEPTH, slow
        if spec.startswith(f"{name}:"):
            depth = spec.removeprefix(f"{name}:")
            if not depth.isdigit() or int(depth) < 1:
                raise PlayerSpecError(f"{spec!r}: the library engine's depth is a whole number >= 1 ({name}:2)")
            return int(depth), slow
    return None


def make_player(spec: str, sims: int = 64, seed: int | None = None, data_dir: str | Path | None = None,
                device: str = "cpu") -> Player:
    """The player `spec` names (see the module doc)."""
    from gocore.play.baghchal_players import HumanAgent, LibraryEngineAgent
    from gocore.search.baghchal_agents import RandomAgent, ZeroAgent
    from gocore.search.baghchal_selfplay import MATCH

    if spec == "random":
        return Player(RandomAgent(seed), "random")
    if spec == "human":
        return Player(HumanAgent(), "human")
    if (engine := library_engine(spec)) is not None:
        agent = LibraryEngineAgent(*engine)
        return Player(agent, agent.name)
    config = MATCH.replace(sims=sims)
    evaluator, label = load_evaluator(spec, data_dir, device)
    return Player(ZeroAgent(evaluator, config, seed, name=label), label)


def load_evaluator(spec: str, data_dir: str | Path | None = None, device: str = "cpu",
                   bf16: bool = False) -> tuple[Any, str]:
    """(evaluator, label) of ``uniform`` or a Baghchal model URI or directory, on the fastest float32
    CPU path; `bf16`: the fastest path bf16 included (a loop's ``--cpu-bf16``). Baghchal keeps bf16
    out by default: two loops that self-played on it lost to a float32 one (docs/baghchal.md)."""
    from gocore.nn.baghchal_net import BaghchalNetEvaluator, UniformBaghchalEvaluator
    from tasks.app.models import ModelError, conv_path_for, load_model

    if spec == "uniform":
        return UniformBaghchalEvaluator(), "uniform"
    try:
        loaded = load_model(spec, data_dir)
    except ModelError as error:
        raise PlayerSpecError(f"{spec!r} is not random, uniform, human, library[-slow]:<depth> or a model: {error}") from None
    if loaded.net.config.game != "baghchal":
        raise PlayerSpecError(f"{spec} is a {loaded.net.config.game} net, not a Baghchal one")
    conv_path = conv_path_for(loaded.net, data_dir, device, bf16)  # measured once per data dir and machine
    return BaghchalNetEvaluator(loaded.net, device=device, conv_path=conv_path), loaded.version


def player_label(spec: str, data_dir: str | Path | None = None) -> str:
    """The label a spec plays under, without building an engine (a model URI resolves to NAME/VERSION)."""
    if spec in ("random", "human", "uniform"):
        return spec
    if (engine := library_engine(spec)) is not None:
        return f"library-d{engine[0]}"
    from tasks.app.models import ModelError, load_model

    try:
        return load_model(spec, data_dir).version
    except ModelError as error:
        raise PlayerSpecError(f"{spec!r} is not random, uniform, human, library[-slow]:<depth> or a model: {error}") from None

"""Reanalysis in the zero loop: positions of earlier games searched again by the champion, written
as self-play batches of the current generation, so the training window reads them like any other.

    plan = plan_reanalysis(settings, data, generation)    # in the loop's process: games, positions each
    reanalyse_games.map(unmapped(searched), [b.games for b in plan.batches], ...)   # flows/reanalysis.py

`plan_reanalysis` draws the loop's `reanalyse` positions with the generation's own seed: a game
uniformly for each (`reanalyse_expert` of them among the expert dataset's games, the rest among the
self-play games of the previous generation's training window), grouped into batches of about
`POSITIONS_PER_TASK` positions. `reanalyse_games` (one batch: a mapped task) loads the model, reads
its games' SGF, draws distinct moves of each uniformly, searches them all in lockstep
(`gocore.search.reanalysis`) and writes the rows as the batch (generation, seed) with the seeds from
`REANALYSIS_SEEDS` on: its sidecar says `storage.selfplay.REANALYSIS`, and lists no games. A rerun
finds a finished batch's sidecar and searches nothing, as self-play does.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from prefect import task
from prefect.cache_policies import NO_CACHE

from gocore.errors import GozeroError
from gocore.rules import sgf
from gocore.search.reanalysis import RecordedGame, pick_games, pick_moves, reanalyse, recorded_game
from gocore.search.selfplay import SelfPlayBatch
from storage import datasets, layout
from storage import selfplay as selfplay_files
from tasks.app.selfplay_settings import SelfPlaySettings
from tasks.encode import read_games as read_sgf_file
from tasks.selfplay import BatchResult, finished_batch, load_evaluator, save_batch, selfplay_config, torch_threads

if TYPE_CHECKING:
    from tasks.app.loop_settings import LoopSettings

REANALYSIS_SEEDS = 1_000_000_000
"""Seed of a generation's first reanalysis batch (the next ones count up): far from its self-play's."""
POSITIONS_PER_TASK = 100
"""Positions a reanalysis task searches in lockstep, about: fixed, so a rerun on other workers plans
the same batches (a batch is named by its seed)."""


class ReanalysisError(GozeroError):
    """Games that reanalysis cannot read again; the message says which and what to do."""


@dataclasses.dataclass(frozen=True)
class PickedGame:
    """A recorded game to take `positions` positions of, to search again."""

    __pydantic_config__ = {"use_attribute_docstrings": True}  # each docstring below: its field in a Prefect Run form

    path: str
    """Its SGF file."""
    index: int
    """The game's index in that file."""
    game_id: str
    """Its id: the game_id of its rows."""
    positions: int
    """Positions to draw from it: distinct moves, all of a shorter game's."""
    is_expert: bool
    """A game of the expert dataset, else a self-play game of an earlier generation."""


@dataclasses.dataclass(frozen=True)
class ReanalysisBatch:
    """The games one task searches again: the batch (generation, seed) it writes."""

    __pydantic_config__ = {"use_attribute_docstrings": True}

    seed: int
    """Names the batch in its generation (from `REANALYSIS_SEEDS` on) and seeds its draws."""
    games: tuple[PickedGame, ...]
    """The games whose positions it searches."""


@dataclasses.dataclass(frozen=True)
class ReanalysisPlan:
    """What one generation searches again."""

    __pydantic_config__ = {"use_attribute_docstrings": True}

    batches: tuple[ReanalysisBatch, ...]
    """The tasks: about `POSITIONS_PER_TASK` positions each."""
    expert: int
    """Positions drawn from the expert dataset's games."""
    selfplay: int
    """Positions drawn from the self-play games of earlier generations."""
    generations: tuple[int, ...]
    """The generations of those self-play games."""


def plan_reanalysis(settings: LoopSettings, data: Path, generation: int) -> ReanalysisPlan:
    """The games generation `generation` searches again and how many positions of each (seeded by
    the loop's seed and the generation: a rerun plans the same); ReanalysisError if a drawn game's
    SGF file is gone."""
    rng = np.random.default_rng([settings.seed, generation, 0x5EA])
    experts = expert_games(settings, data)
    generations = earlier_window(settings, data, generation)
    played = [PickedGame(str(selfplay_files.game_path(data, g, game_id, settings.loop)), 0, game_id, 0, False)
              for g in generations for game_id in selfplay_files.played_game_ids(data, g, settings.loop)]
    if experts and played:
        from_experts = round(settings.reanalyse * settings.reanalyse_expert)
    else:  # one kind has no games (generation 1, or no expert dataset): all from the other
        from_experts = settings.reanalyse if experts else 0
    from_played = settings.reanalyse - from_experts if played else 0
    chosen = drawn(experts, from_experts, rng) + drawn(played, from_played, rng)
    if missing := [game.path for game in chosen if not Path(game.path).is_file()]:
        raise ReanalysisError(f"{len(missing)} of the {len(chosen)} games drawn for reanalysis have no SGF file "
                              f"(first: {missing[0]}): reanalysis reads the games again; restore them, or set "
                              f"reanalyse_expert=0 when the expert games are the ones gone")
    return ReanalysisPlan(batched(chosen), from_experts, from_played, tuple(generations))


def expert_games(settings: LoopSettings, data: Path) -> list[PickedGame]:
    """The games of the loop's expert dataset with at least one move (none without `expert`)."""
    if settings.expert is None:
        return []
    dataset = layout.dataset_dir(data, settings.expert)
    games = [game for game in datasets.listed_games(dataset) if int(game[2]) > 0]  # [id, source, moves, winner]
    files = datasets.source_files(dataset, [source for _, source, *_ in games], layout.raw_root(data))
    return [PickedGame(str(path), index, game_id, 0, True) for (game_id, *_), (path, index) in zip(games, files)]


def earlier_window(settings: LoopSettings, data: Path, generation: int) -> list[int]:
    """The self-play generations the previous generation trained on (none in generation 1): games
    the champion has not searched itself, still in the window."""
    from tasks.train import selfplay_facts
    from tasks.zero import window_generations

    if generation <= 1:
        return []
    rows = {g: selfplay_facts(data, [g], settings.loop).rows for g in range(1, generation)}
    return window_generations(settings, rows, generation - 1)


def drawn(games: Sequence[PickedGame], count: int, rng: np.random.Generator) -> list[PickedGame]:
    """The games `count` positions come from, each drawn uniformly (`pick_games`), with how many."""
    counts = pick_games(len(games), count, rng)
    return [dataclasses.replace(game, positions=int(n)) for game, n in zip(games, counts) if n]


def batched(games: Sequence[PickedGame]) -> tuple[ReanalysisBatch, ...]:
    """The games in order, cut into batches of at least `POSITIONS_PER_TASK` positions (the last
    one fewer), seeded from `REANALYSIS_SEEDS` on."""
    batches: list[list[PickedGame]] = [[]]
    for game in games:
        if sum(g.positions for g in batches[-1]) >= POSITIONS_PER_TASK:
            batches.append([])
        batches[-1].append(game)
    return tuple(ReanalysisBatch(REANALYSIS_SEEDS + i, tuple(batch)) for i, batch in enumerate(batches) if batch)


def recorded(settings: SelfPlaySettings, games: Sequence[PickedGame]) -> dict[str, Any]:
    """What a reanalysis batch's sidecar keeps of its settings; a rerun must match it."""
    return {**settings.recorded(0), "reanalysed": sum(game.positions for game in games)}


@task(cache_policy=NO_CACHE)
def reanalyse_games(settings: SelfPlaySettings, games: tuple[PickedGame, ...], generation: int, seed: int,
                    data_dir: str) -> BatchResult:
    """Search positions of `games` again with `settings.model`; one shard under gen=<generation>."""
    return reanalyse_batch(settings, games, generation, seed, data_dir)


def reanalyse_batch(settings: SelfPlaySettings, games: Sequence[PickedGame], generation: int, seed: int,
                    data_dir: str) -> BatchResult:
    """The task's work without Prefect (see `reanalyse_games`)."""
    data = Path(data_dir)
    if (done := finished_batch(data, generation, seed, recorded(settings, games), settings.run)) is not None:
        return done
    from gocore.nn.device import return_large_buffers

    started = time.perf_counter()
    return_large_buffers()  # as a self-play worker: memory near what one batch needs
    readable = [(game, found) for game, found in zip(games, read_games(games, settings.size)) if found is not None]
    if not readable:
        raise ReanalysisError(f"none of the {len(games)} games of reanalysis batch gen={generation} seed={seed} can be "
                              f"replayed (colours that do not alternate, or another board size): set reanalyse_expert=0")
    rng = np.random.default_rng(seed)
    with torch_threads(settings.torch_threads):
        evaluator, model_version, net_encoder = load_evaluator(settings.model, settings.size, str(data),
                                                               settings.local_model, settings.device)
        config = selfplay_config(settings, net_encoder)
        picks = pick_moves([len(found.moves) for _, found in readable], [game.positions for game, _ in readable], rng)
        columns = reanalyse(evaluator, config, [found for _, found in readable], picks, generation=generation,
                            model_version=model_version, seed=int(rng.integers(1 << 62)))
    expert_ids = [game.game_id for game, _ in readable if game.is_expert]
    rows, expert_rows = len(columns["z"]), int(np.isin(columns["game_id"], expert_ids).sum())
    stats = {"games": 0, "positions": rows, selfplay_files.REANALYSIS: {
        "expert_rows": expert_rows, "selfplay_rows": rows - expert_rows, "games": len(readable),
        "unreadable_games": len(games) - len(readable)}}
    return save_batch(data, generation, seed, recorded(settings, games), SelfPlayBatch(columns, [], [], stats),
                      model_version, time.perf_counter() - started, settings.run, config.encoder)


def read_games(games: Sequence[PickedGame], size: int) -> list[RecordedGame | None]:
    """Each game as its SGF file says it (a file read once for all its games); None for one that
    cannot be replayed or is not `size` x `size`."""
    files: dict[str, list[sgf.GameRecord | sgf.SgfError]] = {}
    found: list[RecordedGame | None] = []
    for game in games:
        if game.path not in files:
            try:
                files[game.path] = read_sgf_file(game.path, Path(game.path).name)
            except (OSError, sgf.SgfError):  # gone since the plan, or no game in it
                files[game.path] = []
        records = files[game.path]
        record = records[game.index] if game.index < len(records) else None
        is_game = isinstance(record, sgf.GameRecord) and record.size == size
        found.append(recorded_game(record, game.game_id) if is_game else None)
    return found

"""Self-play generations on disk: shard, sidecar and SGF names, the batch writer, sidecar readers.

    <data>/selfplay/gen=<k>/
        games/<game id>.sgf        every game (atomic, one file each)
        shard-s<seed>.parquet      the rows of the batch played with `seed` (storage.schemas.SELFPLAY_SCHEMA)
        shard-s<seed>.json         the sidecar: the batch's settings and counts, written last
        plan.json                  the split the first run chose: games, seed, games per task

A batch is named by (generation, seed). Its sidecar, written after the SGF files and the shard,
marks it finished: `read_finished` returns it only while the shard it names is intact. A
reanalysis batch (positions of earlier games searched again, `tasks.reanalysis`) is a batch of the
same kind under seeds of its own: no games of its own, and its sidecar says `REANALYSIS`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from gocore.errors import GozeroError
from storage import layout
from storage.atomic import remove_stale_temps, write_bytes, write_json
from storage.datasets import write_parquet
from storage.schemas import selfplay_table

GAMES_DIR = "games"
PLAN = "plan.json"
REANALYSIS = "reanalysis"
"""The sidecar key of a reanalysis batch: what it searched again (its rows train like any other)."""


def shard_path(data: Path, generation: int, seed: int, run: str = "") -> Path:
    """The Parquet shard of the batch (generation, seed) of loop `run` (default: the data dir's)."""
    return layout.selfplay_dir(data, generation, run) / f"shard-s{seed}.parquet"


def sidecar_path(data: Path, generation: int, seed: int, run: str = "") -> Path:
    """The sidecar that marks the batch (generation, seed) finished; written last."""
    return shard_path(data, generation, seed, run).with_suffix(".json")


def game_path(data: Path, generation: int, game_id: str, run: str = "") -> Path:
    """The SGF file of one self-play game."""
    return layout.selfplay_dir(data, generation, run) / GAMES_DIR / f"{game_id}.sgf"


def plan_path(data: Path, generation: int, run: str = "") -> Path:
    """The generation's plan.json: how its first run split the games into batches."""
    return layout.selfplay_dir(data, generation, run) / PLAN


def read_split(data: Path, generation: int, games: int, seed: int, run: str = "") -> int | None:
    """Games per task that the generation's first run chose for these games and seed; None if none."""
    try:
        plan = json.loads(plan_path(data, generation, run).read_bytes())
        if plan["games"] == games and plan["seed"] == seed and int(plan["games_per_task"]) >= 1:
            return int(plan["games_per_task"])
    except (OSError, ValueError, KeyError, TypeError):  # none yet, or unreadable: pinned anew
        pass
    return None


class SelfPlayFilesError(GozeroError):
    """A generation's files do not fit the self-play asked of it."""


def plan_batches(games: int, games_per_task: int, seed: int) -> list[tuple[int, int]]:
    """(seed, games) of each task: `games` split into tasks of at most `games_per_task`."""
    per_task = max(1, games_per_task)
    return [(seed + index, min(per_task, games - start))
            for index, start in enumerate(range(0, games, per_task))]


def pin_split(data: Path, generation: int, games: int, seed: int, games_per_task: int, run: str = "") -> int:
    """The games per task to play the generation with, recorded in plan.json. A batch is (seed,
    games), so a rerun with another split (other workers) would play a new set of batches beside the
    finished shards, which training reads too: more games than asked for. So the split is the one
    the finished batches were played with: the first run's (`read_split`), else `games_per_task` if
    they fit it, else the one their sizes show (a generation written before plan.json). With no
    finished batch a rerun may still choose (e.g. smaller tasks after workers ran out of memory).
    Finished batches that no split of these games and seed has (another self-play's: other games or
    seed) are refused, in a `SelfPlayFilesError` that names them."""
    pinned = read_split(data, generation, games, seed, run)
    finished = {batch: int(sidecar.get("games", -1))  # reanalysis batches: seeds of their own, no games
                for batch, sidecar in finished_batches(data, generation, run).items() if REANALYSIS not in sidecar}
    candidates = ([pinned] if pinned is not None and finished else []) + [games_per_task]
    candidates += sorted({size for size in finished.values() if size >= 1}, reverse=True)
    chosen = next((size for size in candidates
                   if finished.items() <= dict(plan_batches(games, size, seed)).items()), None)
    if chosen is None:
        planned = dict(plan_batches(games, games_per_task, seed))
        foreign = sorted(batch for batch, size in finished.items() if planned.get(batch) != size)
        raise SelfPlayFilesError(
            f"gen={generation} in {layout.selfplay_dir(data, generation, run)} already holds finished batches "
            f"that no split of these {games} games from seed {seed} has (seeds {', '.join(map(str, foreign))}): "
            f"another self-play's, which training would read beside them. Play into a new generation, or move "
            f"that directory away")
    if chosen != pinned:
        path = plan_path(data, generation, run)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_json(path, {"games": games, "seed": seed, "games_per_task": chosen})
    return chosen


def clean_partial(data: Path, generation: int, run: str = "") -> int:
    """Remove temp files crashed writers left in the generation (before any task writes there)."""
    directory = layout.selfplay_dir(data, generation, run)
    return remove_stale_temps(directory) + remove_stale_temps(directory / GAMES_DIR)


def write_batch(data: Path, generation: int, seed: int, columns: Mapping[str, Any],
                games_sgf: Mapping[str, str], sidecar: Mapping[str, Any], run: str = "") -> dict[str, Any]:
    """SGF files (game id → text), then the shard (SELFPLAY_SCHEMA numpy columns), then the sidecar
    (last: it marks the batch finished); returns the sidecar, with "shard" and "bytes" filled in."""
    for game_id, text in games_sgf.items():
        write_bytes(game_path(data, generation, game_id, run), text.encode())
    shard = shard_path(data, generation, seed, run)
    size_bytes = write_parquet(shard, selfplay_table(columns))
    recorded = {**sidecar, "shard": str(shard), "bytes": size_bytes}
    write_json(sidecar_path(data, generation, seed, run), recorded)
    return recorded


def read_finished(data: Path, generation: int, seed: int, run: str = "") -> dict[str, Any] | None:
    """The sidecar of a finished batch; None if it is missing, unreadable or its shard was lost or
    replaced after it (then the batch must be played again)."""
    shard = shard_path(data, generation, seed, run)
    try:
        sidecar = json.loads(sidecar_path(data, generation, seed, run).read_bytes())
    except (OSError, ValueError):  # not there, or being replaced right now
        return None
    if not shard.exists() or shard.stat().st_size != sidecar.get("bytes"):
        return None
    return sidecar


def games_done(data: Path, generation: int, seeds: Iterable[int], run: str = "") -> int:
    """Games of the finished batches among `seeds` (progress bars; an unreadable sidecar counts 0)."""
    done = 0
    for seed in seeds:
        try:
            done += int(json.loads(sidecar_path(data, generation, seed, run).read_bytes())["games"])
        except (OSError, ValueError, KeyError, TypeError):  # not yet, or being replaced: next poll
            pass
    return done


def finished_batches(data: Path, generation: int, run: str = "") -> dict[int, dict[str, Any]]:
    """{seed: sidecar} of every finished batch of a generation (intact shards only), by seed."""
    found = {}
    for path in sorted(layout.selfplay_dir(data, generation, run).glob("shard-s*.json")):
        seed = path.stem.removeprefix("shard-s")
        if seed.lstrip("-").isdigit() and (sidecar := read_finished(data, generation, int(seed), run)):
            found[int(seed)] = sidecar
    return dict(sorted(found.items()))


def finished_sidecars(data: Path, generation: int, run: str = "") -> list[dict[str, Any]]:
    """The sidecars of every finished batch of a generation (intact shards only), by seed."""
    return list(finished_batches(data, generation, run).values())


def played_game_ids(data: Path, generation: int, run: str = "") -> list[str]:
    """The ids of the games of a generation's finished self-play batches, by seed (reanalysis
    batches play none); `game_path` names their SGF files."""
    return [game_id for sidecar in finished_sidecars(data, generation, run) for game_id in sidecar["game_ids"]]

"""Helpers shared by tests: ASCII boards, random legal games, datasets, planted pickles, tiny registered nets."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from gocore.rules.board import Position

ASCII_STONES = {"X": 1, "O": -1, ".": 0, "+": 0}


def position_from_ascii(diagram: str, to_play: int = 1, komi: float = 7.5) -> Position:
    """Position from rows of X (black), O (white) and . (empty), spaces ignored; the one way tests
    draw boards (`Position.to_ascii` draws them back)."""
    rows = [line.replace(" ", "") for line in diagram.strip().splitlines() if line.strip()]
    size = len(rows)
    if any(len(row) != size for row in rows):
        raise ValueError(f"an ASCII board must be square; got rows of {[len(r) for r in rows]}")
    black, white = [], []
    for r, row in enumerate(rows):
        for c, ch in enumerate(row):
            if ch not in ASCII_STONES:
                raise ValueError(f"unknown board character {ch!r} (use X, O, .)")
            (black if ASCII_STONES[ch] == 1 else white if ASCII_STONES[ch] == -1 else []).append(r * size + c)
    return Position.from_setup(size, black, white, to_play, komi)


class AreaEvaluator:
    """Uniform priors and a value from the Tromp-Taylor area count (side to move's view): a search
    guided by the rules alone, where captures matter."""

    def evaluate(self, positions) -> tuple[np.ndarray, np.ndarray]:
        from gocore.nn.inference import UniformEvaluator

        priors, _ = UniformEvaluator().evaluate(positions)
        return priors, np.array([np.tanh(p.score() * p.to_play / 5) for p in positions], np.float32)


def random_game(size: int, rng: np.random.Generator, max_moves: int | None = None,
                komi: float = 7.5) -> tuple[list[int], Position]:
    """A random game of legal moves (passes only when forced or at the cap); returns (moves, final)."""
    position = Position.initial(size, komi)
    moves: list[int] = []
    cap = max_moves if max_moves is not None else 2 * size * size
    while len(moves) < cap and not position.is_game_over():
        legal = np.flatnonzero(position.legal_moves()[:-1])
        move = int(rng.choice(legal)) if len(legal) else size * size
        position = position.play(move)
        moves.append(move)
    return moves, position


def build_uct_dataset(sgf_dir, dataset_dir, games: int, size: int = 5, extra_sgfs: dict[str, str] | None = None,
                      encoder: str = "agz17"):
    """SGFs of `games` UCT(30)-vs-random games in `sgf_dir` (and `extra_sgfs`: file name -> text),
    ingested (`encoder`, no augmentation) into `dataset_dir` through the encode tasks' own functions;
    returns `dataset_dir`.

    UCT with 30 simulations tries every 5x5 move, so its moves carry a learnable signal."""
    from pathlib import Path

    from gocore.nn.encode import EncodeOptions
    from gocore.play.match import play_game
    from gocore.rules.sgf import GameRecord, write
    from gocore.search.agents import RandomAgent, UCTAgent
    from tasks.encode import encode_shard, finalize_dataset, plan_shards

    sgf_dir, dataset_dir = Path(sgf_dir), Path(dataset_dir)
    sgf_dir.mkdir(parents=True)
    for i in range(games):
        uct, rand = UCTAgent(sims=30, seed=i), RandomAgent(seed=10_000 + i)
        black, white = (uct, rand) if i % 2 == 0 else (rand, uct)
        game = play_game(black, white, size=size, komi=7.5)
        record = GameRecord(size=size, komi=7.5, moves=game.moves, winner=game.winner, result=game.result,
                            player_black=black.name, player_white=white.name)
        (sgf_dir / f"game-{i:04d}.sgf").write_text(write(record))
    for name, text in (extra_sgfs or {}).items():
        (sgf_dir / name).write_text(text)
    options = EncodeOptions(encoder=encoder, augment="none", size=size)
    plan = plan_shards.fn([str(sgf_dir)], str(sgf_dir.parent), str(dataset_dir), options, target_rows=3000)
    for shard in plan:
        encode_shard.fn(shard, str(dataset_dir), options)
    finalize_dataset.fn(str(dataset_dir), plan, options, ["uct-vs-random"])
    return dataset_dir


def read_artifact(key: str):
    """The newest Prefect artifact with this key from the current API (the test harness), or None: the
    session's server holds every earlier test's artifacts too, in whatever order the tests ran."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey
    from prefect.client.schemas.sorting import ArtifactSort

    with get_client(sync_client=True) as client:
        found = client.read_artifacts(artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=[key])),
                                      sort=ArtifactSort.CREATED_DESC)
    return found[0] if found else None


def plant_marker(path: str) -> None:
    """What the planted pickles run when unpickled: create a file that proves code ran."""
    Path(path).write_text("code ran")


class Planted:
    """An object whose unpickling calls `plant_marker`."""

    def __init__(self, marker: Path):
        self.marker = str(marker)

    def __reduce__(self):
        return (plant_marker, (self.marker,))


def register_tiny_nets(data: Path, count: int, size: int = 5, champion: int | None = 1) -> None:
    """Register `count` tiny random dual nets as versions 1..count (generation = version) of
    gozero-<size>x<size> in `data`'s MLflow store (unset MLFLOW_TRACKING_URI first); promote `champion`."""
    from gocore.nn.nets import NetConfig, build_net
    from storage import registry, runs
    from storage.checkpoints import save_model

    for generation in range(1, count + 1):
        config = NetConfig(board_size=size, in_planes=17, encoder="agz17", blocks=1, filters=8, value_hidden=16)
        model_dir = save_model(data / "nets" / f"gen{generation}", build_net(config).eval(), config.to_dict())
        with runs.training_run(size, {"net": config}, data=data) as run_id:
            runs.log_model(run_id, model_dir, data=data)
        registry.register(run_id, generation=generation, data=data)
    if champion is not None:
        registry.promote(registry.model_name(size), champion, "test champion", data=data)


def preloaded_modules(names: tuple[str, ...]) -> list[bool]:
    """Which of `names` this process has imported (a pool worker asked what it came with)."""
    import sys

    return [name in sys.modules for name in names]


def kill_group_when(process: subprocess.Popen, happened: Callable[[], bool], timeout: float = 300) -> bool:
    """Wait until `happened()`, then SIGKILL `process`'s group (it started a new session: its
    workers too); False if it ended first. The group is killed whatever happens."""
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline and process.poll() is None:
            if happened():
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
                return True
            time.sleep(0.02)
        assert process.poll() is not None, "the process did not reach the kill point in time"
        return False
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()

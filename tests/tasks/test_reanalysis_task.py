"""tasks.reanalysis: a generation's plan draws positions from the expert games and from the earlier
self-play games of the window; a batch is written as a self-play batch of the generation that trains
on it (the window reads it), and a rerun searches nothing. 5x5, the uniform net, few sims."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

import tasks.reanalysis
from storage import layout
from storage import selfplay as selfplay_files
from storage.stream import BatchStream
from tasks.app.loop_settings import LoopSettings, loop_record
from tasks.app.rows import ROW_DECODER
from tasks.app.selfplay_settings import SelfPlaySettings
from tasks.app.strong import StrongSettings
from tasks.reanalysis import REANALYSIS_SEEDS, ReanalysisError, plan_reanalysis, reanalyse_batch
from tasks.selfplay import selfplay_games
from tasks.train import selfplay_facts
from tests.helpers import build_uct_dataset

LOOP = "re5"
SEARCH = SelfPlaySettings("uniform", 4, size=5, komi=7.5, max_moves=30, run=LOOP, resign_threshold=None)
SETTINGS = LoopSettings(loop=LOOP, size=5, sims=4, reanalyse=12, expert="uct5", reanalyse_expert=0.5)


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data dir with an expert dataset of 6 games and a loop's generation 1 of 3 self-play games."""
    data = tmp_path_factory.mktemp("reanalysis")
    build_uct_dataset(layout.raw_dir(data, "uct-vs-random"), layout.dataset_dir(data, "uct5"), 6, 5)
    selfplay_games.fn(SEARCH, 3, 1, 1, str(data))
    return data


def files_under(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): p.stat().st_mtime_ns for p in root.rglob("*") if p.is_file()}


def test_generation_1_draws_from_the_expert_games_and_later_ones_from_earlier_self_play_too(data: Path):
    first = plan_reanalysis(SETTINGS, data, 1)
    assert (first.expert, first.selfplay, first.generations) == (12, 0, ())  # no earlier self-play yet
    second = plan_reanalysis(SETTINGS, data, 2)
    assert (second.expert, second.selfplay, second.generations) == (6, 6, (1,))
    games = [game for batch in second.batches for game in batch.games]
    assert sum(game.positions for game in games if game.is_expert) == 6
    assert {game.game_id for game in games if not game.is_expert} <= set(selfplay_files.played_game_ids(data, 1, LOOP))
    assert all(Path(game.path).is_file() for game in games)
    assert [batch.seed for batch in second.batches] == [REANALYSIS_SEEDS]  # 12 positions: one task
    assert plan_reanalysis(SETTINGS, data, 2) == second  # seeded: a rerun plans the same
    assert plan_reanalysis(dataclasses.replace(SETTINGS, seed=1), data, 2) != second
    no_expert = plan_reanalysis(dataclasses.replace(SETTINGS, expert=None), data, 2)
    assert (no_expert.expert, no_expert.selfplay) == (0, 12)


def test_a_batch_is_a_self_play_batch_of_the_generation_and_a_rerun_searches_nothing(data: Path, monkeypatch):
    plan = plan_reanalysis(SETTINGS, data, 2)
    result = reanalyse_batch(SEARCH, plan.batches[0].games, 2, plan.batches[0].seed, str(data))
    sidecar = selfplay_files.read_finished(data, 2, plan.batches[0].seed, LOOP)
    assert not result.skipped and result.counts.games == 0 and result.game_ids == ()
    assert 0 < result.rows <= 12 and sidecar[selfplay_files.REANALYSIS]["expert_rows"] > 0
    assert selfplay_facts(data, [2], LOOP).rows == result.rows  # what the training window reads
    rows = [batch for batch in BatchStream([Path(result.shard)], batch_size=4, decoder=ROW_DECODER, val_percent=0,
                                           epochs=1, shuffle_buffer=16, ids=True)]
    assert sum(len(batch) for batch in rows) == result.rows
    picked = {game.game_id for game in plan.batches[0].games}
    assert {game_id for batch in rows for game_id in batch.game_id} <= picked
    assert all(np.allclose(batch.pi.sum(axis=1), 1.0, atol=1e-4) for batch in rows)

    before = files_under(data)
    monkeypatch.setattr(tasks.reanalysis, "reanalyse", lambda *args, **kwargs: pytest.fail("searched again"))
    again = reanalyse_batch(SEARCH, plan.batches[0].games, 2, plan.batches[0].seed, str(data))
    assert again.skipped and again.rows == result.rows and files_under(data) == before
    # self-play of the generation still finds its own split beside the reanalysis batch
    assert selfplay_files.pin_split(data, 2, 3, 2, 3, LOOP) == 3


def test_a_plan_whose_games_are_gone_says_so(data: Path, tmp_path: Path):
    moved = tmp_path / "games"
    games = layout.selfplay_dir(data, 1, LOOP) / selfplay_files.GAMES_DIR
    games.rename(moved)
    try:
        with pytest.raises(ReanalysisError, match="have no SGF file"):
            plan_reanalysis(dataclasses.replace(SETTINGS, expert=None), data, 2)
    finally:
        moved.rename(games)


def test_reanalysis_is_recorded_only_when_on():
    plain = loop_record(LoopSettings(loop="x").resolved(None))
    assert "reanalyse" not in plain and "reanalyse_expert" not in plain  # older loops resume unchanged
    on = loop_record(dataclasses.replace(SETTINGS, expert=None).resolved(None))
    assert on["reanalyse"] == 12 and "reanalyse_expert" not in on
    assert loop_record(SETTINGS.resolved(None))["reanalyse_expert"] == 0.5
    with pytest.raises(ValueError, match="reanalyse"):
        LoopSettings(reanalyse=-1)
    assert "reanalyse" not in StrongSettings().record()
    recipe = StrongSettings(reanalyse=400, reanalyse_expert=0.25)
    assert recipe.record()["reanalyse"] == 400 and recipe.loop_settings("models:/x/1").reanalyse_expert == 0.25

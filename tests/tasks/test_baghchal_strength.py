"""benchmarks/baghchal_strength: a real match's games split by side with Wilson's and the
opening-clustered interval, read back on a rerun; self-play from random openings for the draw rate."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from benchmarks.baghchal_strength import draw_rate, match_of, match_rows, opening_of, side_report
from gocore.nn.baghchal_net import UniformBaghchalEvaluator
from gocore.play.baghchal_match import BaghchalMatchConfig, pair_opening
from gocore.rules.baghchal.notation import move_text
from gocore.rules.baghchal.position import GOAT, LIBRARY_RULES, TIGER, Position
from gocore.search.baghchal_selfplay import MATCH, BaghchalSelfPlayConfig, play_games


def opening_text(config: BaghchalMatchConfig, game: int) -> str:
    position, texts = Position.initial(), []
    for action in pair_opening(config, game):
        texts.append(move_text(position, action))
        position = position.play(action)
    return " ".join(texts)


def test_a_match_splits_by_side_clusters_by_opening_and_is_read_back(tmp_path: Path):
    args = argparse.Namespace(games=4, sims=4, opening=3, seed=5)
    settings, match_id = match_of("random", "library:1", args, tmp_path)
    assert (settings.games, settings.opening, match_id) == (8, 3, "strength-random-vs-library-d1-s4-o3-g8-seed5")
    rows = match_rows(settings, match_id, tmp_path, workers=2)
    assert [row["game"] for row in rows] == list(range(8))
    config = BaghchalMatchConfig(seed=5, opening=3)
    assert [opening_of(row) for row in rows] == [opening_text(config, game) for game in range(8)]
    assert opening_of(rows[0]) == opening_of(rows[1]) != opening_of(rows[2])  # pairs share their opening
    goat, tiger = side_report(rows, GOAT), side_report(rows, TIGER)
    assert goat.games == tiger.games == 4 and goat.openings == 4
    for side in (goat, tiger):
        assert side.low <= side.score <= side.high and side.clustered_low <= side.score <= side.clustered_high
    assert goat.losses >= 3  # random's Goat against the engine's Tiger, which captures what it can
    again = match_rows(settings, match_id, tmp_path, workers=1)  # read back, not replayed: the same seconds
    assert [row["record"] for row in again] == [row["record"] for row in rows]
    assert [row["seconds"] for row in again] == pytest.approx([row["seconds"] for row in rows], rel=1e-6)


def test_self_play_starts_from_the_given_openings(tmp_path: Path):
    opened = Position.initial()
    for _ in range(2):
        opened = opened.play(int(opened.legal_moves().nonzero()[0][0]))
    games = play_games(UniformBaghchalEvaluator(), BaghchalSelfPlayConfig(search=MATCH.replace(sims=4)), 2,
                       seed=1, starts=[opened, opened])
    assert all(game.positions[0] == opened for game in games)
    with pytest.raises(ValueError, match="start positions"):
        play_games(UniformBaghchalEvaluator(), BaghchalSelfPlayConfig(), 3, starts=[opened])
    with pytest.raises(ValueError, match="other rules"):
        play_games(UniformBaghchalEvaluator(), BaghchalSelfPlayConfig(), 1, starts=[Position.initial(LIBRARY_RULES)])
    first = draw_rate("uniform", tmp_path, sims=4, games=6, opening=2, seed=0)
    assert first.draws + first.goat_wins + first.tiger_wins == 6 and first.low <= first.draws / 6 <= first.high
    again = draw_rate("uniform", tmp_path, sims=4, games=6, opening=2, seed=0)  # no noise: the same games
    assert (again.draws, again.goat_wins, again.tiger_wins) == (first.draws, first.goat_wins, first.tiger_wins)

"""benchmarks/baghchal_strength: a real match's games split by side with Wilson's and the
opening-clustered interval, and the draw rate of self-play started from random openings."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.baghchal_strength import draw_rate, match_rows, opening_of, side_report
from gocore.nn.baghchal_net import UniformBaghchalEvaluator
from gocore.rules.baghchal.position import GOAT, TIGER, Position
from gocore.search.baghchal_selfplay import MATCH, BaghchalSelfPlayConfig, play_games
from tasks.app.baghchal_settings import BaghchalMatchSettings


def test_a_match_splits_by_side_and_clusters_by_opening(tmp_path: Path):
    settings = BaghchalMatchSettings("random", "library:1", games=8, sims=4, opening=3, seed=5)
    rows = match_rows(settings, "random-vs-d1", tmp_path, workers=2)
    assert [row["game"] for row in rows] == list(range(8))
    assert opening_of(rows[0]) == opening_of(rows[1]) != opening_of(rows[2])  # pairs share their opening
    assert len(opening_of(rows[0]).split()) == 3
    goat, tiger = side_report(rows, GOAT), side_report(rows, TIGER)
    assert goat["games"] == tiger["games"] == 4 and goat["openings"] == 4
    for side in (goat, tiger):
        assert side["wins"] + side["draws"] + side["losses"] == 4
        assert side["low"] <= side["score"] <= side["high"]
        assert side["clustered_low"] <= side["score"] <= side["clustered_high"]
    assert goat["losses"] >= 3  # random's Goat against the engine's Tiger, which captures what it can


def test_self_play_starts_from_the_given_openings_and_counts_draws(tmp_path: Path):
    opened = Position.initial()
    for _ in range(2):
        opened = opened.play(int(opened.legal_moves().nonzero()[0][0]))
    games = play_games(UniformBaghchalEvaluator(), BaghchalSelfPlayConfig(search=MATCH.replace(sims=4)), 2,
                       seed=1, starts=[opened, opened])
    assert all(game.positions[0] == opened for game in games)
    with pytest.raises(ValueError, match="start positions"):
        play_games(UniformBaghchalEvaluator(), BaghchalSelfPlayConfig(), 3, starts=[opened])
    rate = draw_rate("uniform", tmp_path, sims=4, games=3, opening=2, seed=0)
    assert rate["draws"] + rate["goat_wins"] + rate["tiger_wins"] == 3 and 0 <= rate["low"] <= rate["high"] <= 1

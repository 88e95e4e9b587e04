"""gocore.play.ladder: Bradley–Terry ratings recovered from synthetic games of known strength."""

from __future__ import annotations

import numpy as np
import pytest

from gocore.play.ladder import Outcome, expected_score, fit_ladder, informative_opponents

TRUE = {"random": 0.0, "uct-100": 350.0, "gen-1": 150.0, "gen-2": 420.0, "gnugo-1": 800.0}


def synthetic_games(true: dict[str, float], pairs: list[tuple[str, str]], per_pair: int, seed: int) -> list[Outcome]:
    rng = np.random.default_rng(seed)
    games = []
    for a, b in pairs:
        p = expected_score(true[a], true[b])
        games += [Outcome(a, b, float(rng.random() < p)) for _ in range(per_pair)]
    return games


PAIRS = [("uct-100", "random"), ("gen-1", "random"), ("gen-2", "gen-1"), ("gen-2", "uct-100"),
         ("gnugo-1", "gen-2"), ("gnugo-1", "uct-100"), ("gen-1", "uct-100")]


def test_known_ratings_are_recovered_within_their_errors():
    ratings = {r.player: r for r in fit_ladder(synthetic_games(TRUE, PAIRS, 400, seed=1), prior_draws=0.0)}
    assert ratings["random"].elo == 0.0 and ratings["random"].stderr is None
    for name, elo in TRUE.items():
        if name != "random":
            rating = ratings[name]
            assert 5 < rating.stderr < 60
            assert abs(rating.elo - elo) < 3 * rating.stderr, (name, rating)


def test_errors_shrink_with_more_games():
    few = {r.player: r.stderr for r in fit_ladder(synthetic_games(TRUE, PAIRS, 50, seed=2))}
    many = {r.player: r.stderr for r in fit_ladder(synthetic_games(TRUE, PAIRS, 800, seed=2))}
    assert all(many[name] < few[name] / 2 for name in TRUE if name != "random")


def test_a_player_who_won_everything_gets_a_finite_rating_and_order_is_kept():
    games = ([Outcome("champion", "random", 1.0)] * 20 + [Outcome("weak", "random", 1.0)] * 12
             + [Outcome("weak", "random", 0.0)] * 8)
    ratings = fit_ladder(games)
    assert [r.player for r in ratings] == ["champion", "weak", "random"]
    assert np.isfinite(ratings[0].elo) and ratings[0].elo > 300
    assert ratings[0].games == 20 and ratings[0].score == 20.0


def test_players_without_a_chain_of_games_to_the_anchor_are_left_out():
    games = [Outcome("a", "random", 1.0), Outcome("b", "c", 0.0)]
    assert {r.player for r in fit_ladder(games)} == {"a", "random"}
    assert fit_ladder([Outcome("b", "c", 1.0)]) == []


def test_jigo_is_half_a_win_for_each_side():
    ratings = {r.player: r for r in fit_ladder([Outcome("x", "random", 0.5)] * 10)}
    assert ratings["x"].elo == pytest.approx(0.0, abs=1e-6) and ratings["x"].score == 5.0


def test_informative_opponents_are_the_nearest_in_strength():
    ratings = fit_ladder(synthetic_games(TRUE, PAIRS, 200, seed=3))
    assert informative_opponents("gen-2", ratings, 2) == ["uct-100", "gen-1"]
    assert informative_opponents("new", ratings, 1) == [ratings[0].player]

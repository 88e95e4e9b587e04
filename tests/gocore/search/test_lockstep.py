"""The self-play driver both games share (gocore.search.lockstep): rounds over the unfinished games
only, a finished game is never searched or stepped again, and Go's and Baghchal's self-play both
finish every game through it."""

from __future__ import annotations

import numpy as np

from gocore.nn.baghchal_net import UniformBaghchalEvaluator
from gocore.nn.inference import UniformEvaluator
from gocore.rules.game import GO
from gocore.search import baghchal_selfplay
from gocore.search.lockstep import play_lockstep
from gocore.search.mcts import MCTSConfig, SearchResult
from gocore.search.selfplay import play_games


class RecordingSearch:
    """A stand-in for `BatchedSearch.search`: records which games each round asked for and which of
    them were fast, and answers each with a result naming the game."""

    def __init__(self) -> None:
        self.rounds: list[tuple[list[int], list[int]]] = []

    def search(self, games: list[int], fast: list[int]) -> list[SearchResult]:
        self.rounds.append((list(games), list(fast)))
        return [SearchResult(move=g, pi=np.zeros(1, np.float32), root_value=0.0, visits=np.zeros(1),
                             is_full=g not in fast) for g in games]


def test_each_game_is_searched_until_its_step_ends_it_and_never_after():
    search = RecordingSearch()
    length = {0: 1, 1: 3, 2: 2}  # game g ends after length[g] of its own steps
    steps: list[int] = []

    def step(g: int, result: SearchResult) -> bool:
        assert result.move == g  # each game gets its own result
        steps.append(g)
        return steps.count(g) == length[g]

    play_lockstep(search, 3, np.random.default_rng(0), 1.0, step)
    assert [games for games, _ in search.rounds] == [[0, 1, 2], [1, 2], [1]]
    assert all(not fast for _, fast in search.rounds)  # every search full at full_search_prob 1
    assert sorted(steps) == [0, 1, 1, 1, 2, 2]


def test_the_playout_cap_draws_fast_searches_among_the_active_games_only():
    search = RecordingSearch()
    play_lockstep(search, 4, np.random.default_rng(3), 0.0, lambda g, result: len(search.rounds) > g)
    assert [games for games, _ in search.rounds] == [[0, 1, 2, 3], [1, 2, 3], [2, 3], [3]]
    assert [fast for _, fast in search.rounds] == [games for games, _ in search.rounds]  # all fast at 0
    idle = RecordingSearch()
    play_lockstep(idle, 0, np.random.default_rng(0), 1.0, lambda g, result: True)
    assert idle.rounds == []  # no games: no search


def test_go_and_baghchal_self_play_finish_every_game_through_it():
    config = MCTSConfig(sims=4, noise=False, temperature_moves=4, resign_threshold=None, leaves_per_game=1)
    go_games = play_games(UniformEvaluator(), config, 2, size=5, seed=1)
    assert all(game.reason in ("two-passes", "move-cap") for game in go_games)
    assert all(GO.terminal_value(game.final, 75) is not None for game in go_games)
    bag_config = baghchal_selfplay.BaghchalSelfPlayConfig(search=MCTSConfig(
        sims=4, noise=False, temperature_moves=4, resign_threshold=None, sensible_moves=False))
    bag_games = baghchal_selfplay.play_games(UniformBaghchalEvaluator(), bag_config, 2, seed=1)
    assert all(game.final is not None and game.final.is_game_over() for game in bag_games)
    assert all(len(game.actions) == len(game.pis) == len(game.full) for game in bag_games)

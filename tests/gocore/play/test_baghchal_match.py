"""Baghchal games and matches: forfeits, paired openings, draws as half points, the library's engine
and a person at the terminal as players."""

from __future__ import annotations

import pytest

from gocore.play.baghchal_match import (
    BaghchalMatchConfig,
    pair_opening,
    play_game,
    play_match,
    side_counts,
)
from gocore.play.baghchal_players import HumanAgent, LibraryEngineAgent
from gocore.rules.baghchal.notation import read_record
from gocore.rules.baghchal.position import GOAT, LIBRARY_RULES, TIGER, BaghchalRules
from gocore.search.baghchal_agents import RandomAgent
from tests.gocore.rules.baghchal.library import replay_in_library


class Scripted:
    """Plays the given actions in order, then raises."""

    def __init__(self, *actions: object):
        self.name, self.actions = "scripted", list(actions)

    def select_move(self, position: object) -> object:
        return self.actions.pop(0)


def test_random_games_end_by_the_rules_and_their_records_read_back() -> None:
    for seed in range(5):
        game = play_game(RandomAgent(seed), RandomAgent(seed + 100))
        assert game.final.is_game_over() and game.winner == game.final.winner
        actions, final = read_record(game.record)
        assert tuple(actions) == game.actions and final.reason == game.reason


def test_an_illegal_action_or_an_error_loses_the_game() -> None:
    illegal = play_game(Scripted(12), Scripted(12))  # Tiger "places" on the goat's point
    assert illegal.winner == GOAT and illegal.reason == "illegal-move" and "Tiger" in illegal.detail
    broken = play_game(Scripted(12), Scripted())
    assert broken.winner == GOAT and broken.reason == "error" and "IndexError" in broken.detail
    nonsense = play_game(Scripted("G33"), RandomAgent(0))
    assert nonsense.winner == TIGER and nonsense.reason == "illegal-move"


def test_match_sides_alternate_and_each_opening_is_played_from_both_sides() -> None:
    config = BaghchalMatchConfig(seed=4, opening=3)
    assert pair_opening(config, 0) == pair_opening(config, 1) != pair_opening(config, 2)
    games = list(play_match(RandomAgent, RandomAgent, range(4), config, ("a", "b")))
    assert [game.a_side for game in games] == [GOAT, TIGER, GOAT, TIGER]
    assert [game.goat for game in games] == ["a", "b", "a", "b"]
    assert all(game.game.actions[:3] == tuple(pair_opening(config, game.index)) for game in games)


def test_a_draw_is_half_a_point_and_sides_are_counted_apart() -> None:
    config = BaghchalMatchConfig(rules=BaghchalRules(max_plies=6), opening=0)
    games = list(play_match(RandomAgent, RandomAgent, range(4), config, ("a", "b")))
    assert all(game.game.reason == "move-cap" and game.a_score == 0.5 for game in games)
    counts = side_counts(game.row() for game in games)
    assert counts["Goat"].draws == counts["Tiger"].draws == 2 and counts["Goat"].score == 0.5


def test_the_library_engine_plays_legal_moves_and_its_games_agree_with_the_library() -> None:
    engine = LibraryEngineAgent(depth=1)
    for seed in range(2):
        game = play_game(engine, RandomAgent(seed), LIBRARY_RULES)
        assert game.reason not in ("illegal-move", "error"), game.detail
        texts = game.record.replace("#", " ").split()
        board = replay_in_library([t for t in texts if t[0] in "GB"])
        assert board.is_game_over() and {"G": GOAT, "B": TIGER, 0: 0}[board.winner()] == game.winner


def test_a_person_is_told_why_a_move_is_refused_and_asked_again() -> None:
    typed, shown = iter(["hello", "G11", "B3344", "G33"]), []
    human = HumanAgent(read=lambda prompt: next(typed), write=shown.append)
    game = play_game(human, Scripted(25), rules=BaghchalRules(max_plies=2))
    assert game.actions[0] == 12  # G33 after three refusals
    assert any("not a Baghchal move" in line for line in shown)
    assert any("11 is occupied" in line for line in shown)
    assert any("Goat's turn" in line or "it is Goat" in line for line in shown)


def test_a_person_whose_input_ends_loses_with_the_reason() -> None:
    def ended(prompt: str) -> str:
        raise EOFError

    game = play_game(HumanAgent(read=ended, write=lambda line: None), RandomAgent(0))
    assert game.winner == TIGER and "input ended" in game.detail


@pytest.mark.parametrize("rules", [BaghchalRules(captures_to_win=1)])
def test_a_match_follows_the_rules_settings(rules: BaghchalRules) -> None:
    games = list(play_match(RandomAgent, RandomAgent, range(2), BaghchalMatchConfig(rules=rules, opening=0), ("a", "b")))
    assert all(game.game.final.captured <= 1 for game in games)

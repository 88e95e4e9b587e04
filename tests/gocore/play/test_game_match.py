"""The match core both games share: forfeits, draws, hooks, the move cap, a match's pairing and
openings, the split by side; and that Go's and Baghchal's matches both play through it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from gocore.play import baghchal_match, game_match, match
from gocore.play.game_match import (
    DETAIL_CHARS,
    RESIGN,
    Hooks,
    a_score,
    game_seeds,
    pair_opening,
    play_game,
    player_a_side,
    random_actions,
    seated,
    side_counts,
)
from gocore.rules.baghchal.position import BaghchalRules
from gocore.search.agents import RandomAgent
from gocore.search.baghchal_agents import RandomAgent as BaghchalRandom


@dataclass(frozen=True)
class Tally:
    """A toy game's position: each side adds 0, 1 or 2 to its own tally for `plies` plies; the larger
    tally wins, equal tallies draw."""

    tallies: tuple[int, int] = (0, 0)
    move_number: int = 0
    plies: int = 4

    @property
    def to_play(self) -> int:
        return 1 if self.move_number % 2 == 0 else -1

    def play(self, action: int) -> Tally:
        if action not in (0, 1, 2):
            raise ValueError(f"{action} is not 0, 1 or 2")
        first, second = self.tallies
        tallies = (first + action, second) if self.to_play == 1 else (first, second + action)
        return Tally(tallies, self.move_number + 1, self.plies)


class TallyGame:
    """The toy game through the boundary's match methods; its openings never add 1."""

    name = "tally"

    def __init__(self, plies: int = 4):
        self.plies = plies

    def initial(self) -> Tally:
        return Tally(plies=self.plies)

    def is_over(self, position: Tally) -> bool:
        return position.move_number >= position.plies

    def winner(self, position: Tally) -> int:
        return int(np.sign(position.tallies[0] - position.tallies[1]))

    def opening_mask(self, position: Tally) -> np.ndarray:
        return np.array([True, False, True])


HOOKS = Hooks(start_args=lambda game, side: (game.name, side), observe_args=lambda before, side, action: (side, action),
              illegal_detail=lambda side, answer, error: f"side {side} answered {answer!r}: {error}")


class Scripted:
    """Answers its actions in order; an exception among them is raised instead."""

    def __init__(self, *actions: object):
        self.actions, self.calls = list(actions), []

    def select_move(self, position: Tally) -> object:
        action = self.actions.pop(0)
        if isinstance(action, Exception):
            raise action
        return action

    def start_game(self, *args: object) -> None:
        self.calls.append(("start", *args))

    def observe(self, *args: object) -> None:
        self.calls.append(("observe", *args))


def test_a_player_that_raises_forfeits_and_the_error_is_the_detail() -> None:
    played = play_game(TallyGame(), Scripted(2, RuntimeError("out of memory")), Scripted(1), HOOKS)
    assert played.winner == -1 and played.forfeit.reason == "error"
    assert played.forfeit.detail == "RuntimeError: out of memory"
    assert played.moves == [(1, 2), (-1, 1)] and played.final.tallies == (2, 1)
    mute = play_game(TallyGame(), Scripted(1), object(), HOOKS)  # no select_move at all
    assert (mute.winner, mute.forfeit.reason) == (1, "error") and "AttributeError" in mute.forfeit.detail


def test_an_illegal_action_or_a_non_action_forfeits_with_the_games_detail() -> None:
    illegal = play_game(TallyGame(), Scripted(1), Scripted(7), HOOKS)
    assert (illegal.winner, illegal.forfeit.reason) == (1, "illegal-move")
    assert illegal.forfeit.detail == "side -1 answered 7: 7 is not 0, 1 or 2"
    assert illegal.moves == [(1, 1)] and illegal.final.move_number == 1  # the refused action is not played
    nonsense = play_game(TallyGame(), Scripted("two"), Scripted(), HOOKS)
    assert (nonsense.winner, nonsense.forfeit.reason) == (-1, "illegal-move") and "'two'" in nonsense.forfeit.detail


def test_resigning_forfeits_without_a_detail() -> None:
    played = play_game(TallyGame(), Scripted(np.int64(2), RESIGN), Scripted(0), HOOKS)
    assert (played.winner, played.forfeit.reason, played.forfeit.detail) == (-1, "resign", "")
    assert played.moves == [(1, 2), (-1, 0)]


def test_a_long_detail_is_cut_and_the_game_may_name_its_failures() -> None:
    named = Hooks(HOOKS.start_args, HOOKS.observe_args, HOOKS.illegal_detail, lambda error: "timeout")
    played = play_game(TallyGame(), Scripted(TimeoutError("x" * 2000)), Scripted(), named)
    assert played.forfeit.reason == "timeout" and len(played.forfeit.detail) == DETAIL_CHARS


def test_a_draw_is_a_game_like_any_other_and_half_a_point_for_each_side() -> None:
    game = TallyGame()
    played = play_game(game, Scripted(2, 1), Scripted(1, 2), HOOKS)
    assert played.forfeit is None and played.winner is None and game.winner(played.final) == 0
    assert a_score(0, 1) == a_score(0, -1) == 0.5 and (a_score(1, 1), a_score(1, -1)) == (1.0, 0.0)


def test_hooks_hear_the_start_and_every_move_and_a_failing_hook_forfeits() -> None:
    first, second = Scripted(2, 0), Scripted(1, 1)
    played = play_game(TallyGame(), first, second, HOOKS)
    expected = [("observe", side, action) for side, action in played.moves]
    assert first.calls == [("start", "tally", 1), *expected] and second.calls == [("start", "tally", -1), *expected]

    class DeafObserver(Scripted):
        def observe(self, *args: object) -> None:
            raise OSError("engine gone")

    broken = play_game(TallyGame(), Scripted(2), DeafObserver(), HOOKS)
    assert (broken.winner, broken.forfeit.reason) == (1, "error") and broken.moves == [(1, 2)]
    assert broken.final.move_number == 1  # the position the failure happened in


def test_an_opening_is_played_for_both_sides_and_the_cap_ends_a_game_early() -> None:
    seen = []
    played = play_game(TallyGame(plies=6), Scripted(1), Scripted(), HOOKS, cap=3, opening=[2, 0],
                       on_move=lambda before, action, after: seen.append((before.move_number, action)))
    assert played.moves == [(1, 2), (-1, 0), (1, 1)] and played.forfeit is None
    assert seen == [(0, 2), (1, 0), (2, 1)]


def test_a_match_seats_a_first_in_even_games_and_seeds_each_game_from_its_index() -> None:
    assert [player_a_side(i) for i in range(4)] == [1, -1, 1, -1]
    assert [seated(i, "a", "b") for i in range(2)] == [("a", "b"), ("b", "a")]
    assert game_seeds(3, 5) == game_seeds(3, 5) and len({game_seeds(3, i) for i in range(10)}) == 10
    made: list[int] = []

    def make(seed: int) -> Scripted:
        made.append(seed)
        return Scripted(1, 1)

    indices = list(game_match.play_match(make, make, [4, 7], 3, lambda index, a, b: (index, seated(index, a, b))))
    assert [index for index, _ in indices] == [4, 7] and made == [*game_seeds(3, 4), *game_seeds(3, 7)]


def test_games_of_a_pair_share_their_opening_drawn_from_the_opening_mask() -> None:
    game = TallyGame(plies=20)
    openings = [pair_opening(game, 5, seed=1, index=i) for i in range(12)]
    assert all(openings[2 * i] == openings[2 * i + 1] for i in range(6))
    assert len({tuple(opening) for opening in openings}) > 2
    assert all(set(opening) <= {0, 2} for opening in openings)  # never an action the mask leaves out
    assert pair_opening(game, 5, 1, 0, salt=(9,)) != pair_opening(game, 5, 1, 0) or \
        pair_opening(game, 5, 1, 2, salt=(9,)) != pair_opening(game, 5, 1, 2)
    assert len(random_actions(TallyGame(plies=3), 5, np.random.default_rng(0))) == 3  # not past the end


def test_side_counts_split_a_match_by_the_side_a_played_for_either_game() -> None:
    rows = [{"a_color": 1, "a_score": 1.0}, {"a_color": -1, "a_score": 0.5}, {"a_color": -1, "a_score": 0.0}]
    counts = side_counts(rows, ("Black", "White"), side_key="a_color")
    assert (counts["Black"].wins, counts["Black"].games) == (1, 1)
    assert (counts["White"].draws, counts["White"].losses, counts["White"].score) == (1, 1, 0.25)
    assert counts["White"].score_low < 0.25 < counts["White"].score_high


def test_go_and_baghchal_matches_both_play_through_the_shared_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    games = []

    def recording(game, *args, **kwargs):
        games.append(game.name)
        return play_game(game, *args, **kwargs)

    monkeypatch.setattr(game_match, "play_game", recording)
    go = list(match.play_match(RandomAgent, RandomAgent, range(2), match.MatchConfig(size=5, max_moves=8), ("a", "b")))
    config = baghchal_match.BaghchalMatchConfig(rules=BaghchalRules(max_plies=8))
    baghchal = list(baghchal_match.play_match(BaghchalRandom, BaghchalRandom, range(2), config, ("a", "b")))
    assert games == ["go", "go", "baghchal", "baghchal"]
    assert [g.a_color for g in go] == [g.a_side for g in baghchal] == [1, -1]
    assert go[0].opening == go[1].opening and baghchal[0].opening == baghchal[1].opening

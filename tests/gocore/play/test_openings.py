"""Random openings of matches: shared by the pair of games that play them with each colour."""

from __future__ import annotations

import pytest

from gocore.play.match import MatchConfig, play_match, play_match_game
from gocore.play.openings import ScriptedOpening, pair_opening
from gocore.rules import sgf, sgf_read
from gocore.rules.board import Position
from gocore.search.agents import RandomAgent, sensible_moves
from tests.gocore.play.test_match import Recording, gnugo


class Middle:
    """A deterministic player: the middle one of its sensible moves."""

    name = "middle"

    def select_move(self, position: Position) -> int:
        moves = sensible_moves(position)
        return int(moves[len(moves) // 2]) if len(moves) else position.size ** 2


def test_a_pair_of_games_shares_its_opening_and_pairs_differ():
    openings = [pair_opening(9, 2, seed=4, index=i) for i in range(40)]
    assert all(openings[2 * i] == openings[2 * i + 1] for i in range(20))
    assert len({tuple(o) for o in openings}) > 15  # 20 pairs, 25 x 24 two-move openings
    assert pair_opening(9, 2, seed=5, index=0) != pair_opening(9, 2, seed=4, index=0) or \
        pair_opening(9, 2, seed=5, index=2) != pair_opening(9, 2, seed=4, index=2)
    assert pair_opening(9, 0, seed=4, index=3) == []


def test_deterministic_players_play_the_opening_with_both_colours_and_record_it():
    config = MatchConfig(size=9, seed=2, opening=2)
    games = list(play_match(lambda seed: Middle(), lambda seed: Middle(), range(4), config, ("a", "b")))
    for game in games:
        assert tuple(move for _, move in game.game.moves[:2]) == game.opening == tuple(pair_opening(9, 2, 2, game.index))
        assert game.row()["opening"] == " ".join(map(str, game.opening))
    assert games[0].opening == games[1].opening and games[0].a_color == -games[1].a_color
    assert len({game.digest for game in games}) == 2  # one game per opening (A and B are the same player)
    plain = list(play_match(lambda seed: Middle(), lambda seed: Middle(), range(4), MatchConfig(size=9, opening=0),
                            ("a", "b")))
    assert len({game.digest for game in plain}) == 1  # without openings: one game, four times
    record = sgf_read.read_games(sgf.write(games[0].record()))[0]
    assert "random opening" in record.comments[1]


def test_scripted_moves_reach_the_wrapped_agent_hooks():
    inner = Recording(3)
    wrapped = ScriptedOpening(inner, {0: 40})
    game = play_match_game(0, wrapped, RandomAgent(1), MatchConfig(size=9, opening=0, max_moves=6))
    assert game.game.moves[0] == (1, 40)
    assert ("start", 9, 7.5, 1) in inner.calls and ("observe", 1, 40) in inner.calls


@pytest.mark.gnugo
def test_a_reseeded_engine_replays_a_match_exactly_and_varies_with_the_seed(gnugo_path: str):
    def digests(seed: int) -> list[str]:
        with gnugo(gnugo_path) as engine:
            config = MatchConfig(size=9, seed=seed, opening=0)
            return [g.digest for g in play_match(lambda s: Middle(), engine.reseeded, range(4), config, ("m", "g"))]

    first = digests(0)
    assert digests(0) == first  # a resumed or repeated match is the same games
    assert digests(1) != first

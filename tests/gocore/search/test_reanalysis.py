"""gocore.search.reanalysis: picked positions of played games searched again by another net (5x5,
a prior that differs from the one that played, few sims): their rows carry the new search's pi and
q, the game's z and final board, and no other move makes a row."""

from __future__ import annotations

import numpy as np
import pytest

from gocore.nn import features
from gocore.nn.inference import UniformEvaluator
from gocore.rules import sgf
from gocore.rules.board import Position, legal_masks
from gocore.search.gumbel import GumbelConfig, search_factory
from gocore.search.mcts import SELFPLAY
from gocore.search.reanalysis import RecordedGame, pick_games, pick_moves, positions_at, reanalyse, recorded_game
from gocore.search.selfplay import SelfPlayConfig, play

SIZE = 5
PLAYED = SelfPlayConfig(size=SIZE, komi=2.5, search=SELFPLAY.replace(sims=8, max_moves=40))


class CornerEvaluator:
    """Not the net that played: most of the prior on the lowest legal point, values +0.3 for black."""

    def evaluate(self, positions):
        legal = legal_masks(positions).astype(np.float32)  # (B, N*N+1)
        first = legal.argmax(axis=1)
        priors = 0.2 * legal / legal.sum(axis=1, keepdims=True)
        priors[np.arange(len(positions)), first] += 0.8
        values = np.array([0.3 * position.to_play for position in positions], np.float32)
        return priors, values


@pytest.fixture(scope="module")
def played():
    """Three self-play games of the uniform net, as their SGF records say them."""
    batch = play(UniformEvaluator(), PLAYED, 3, generation=1, seed=4, model_version="uniform")
    return batch, [recorded_game(record, game_id) for record, game_id in zip(batch.records, batch.game_ids)]


def rows_of(columns, game_id):
    return np.flatnonzero(columns["game_id"] == game_id)


@pytest.mark.parametrize("gumbel", [None, GumbelConfig(k=4)], ids=["puct", "gumbel"])
def test_picked_positions_get_the_new_search_s_pi_and_q_and_no_other_move_makes_a_row(played, gumbel):
    batch, games = played
    config = SelfPlayConfig(size=SIZE, komi=2.5, search=SELFPLAY.replace(sims=8, max_moves=40), gumbel=gumbel)
    picks = [(0, 0), (0, 3), (2, 1), (2, 5)]
    columns = reanalyse(CornerEvaluator(), config, games, picks, generation=3, model_version="net/2", seed=9)

    assert list(zip(columns["game_id"], columns["move_number"])) == [
        (games[g].game_id, m) for g, m in picks]  # game 1 has no pick: no row
    fresh = search_factory(gumbel)(CornerEvaluator(), config.search.replace(noise=False),
                                   positions_at(games, picks), seed=9).search()
    np.testing.assert_array_equal(columns["pi"], np.stack([result.pi for result in fresh]))
    np.testing.assert_allclose(columns["q"], [result.root_value for result in fresh], rtol=1e-6)
    old_pis = np.stack([batch.columns["pi"][rows_of(batch.columns, games[g].game_id)[m]] for g, m in picks])
    assert not np.allclose(columns["pi"], old_pis)  # not the targets the games were played with
    assert set(columns["generation"]) == {3} and set(columns["model_version"]) == {"net/2"}


def test_rows_keep_the_game_s_result_and_final_board_from_the_mover_s_view(played):
    batch, games = played
    picks = [(g, m) for g in range(3) for m in (0, 1)]
    columns = reanalyse(UniformEvaluator(), PLAYED, games, picks, generation=2, model_version="m")
    movers = np.array([1, -1] * 3)  # black moves first, then white
    winners = np.repeat([game.winner for game in games], 2)
    assert (columns["z"] == winners * movers).all()
    for row, (g, move) in enumerate(picks):
        planes = features.unpack_planes(columns["planes"][row:row + 1], 17, SIZE)[0]  # (17, N, N)
        np.testing.assert_array_equal(planes, features.encode_position(sgf.replay(batch.records[g])[move], "agz17"))
        own = batch.columns["ownership"][rows_of(batch.columns, games[g].game_id)[move]]
        np.testing.assert_array_equal(columns["ownership"][row], own)  # what self-play stored for it


def test_a_counted_final_board_teaches_ownership_and_a_resigned_game_none():
    moves = [(1, 0), (-1, 24), (1, 25), (-1, 25)]  # a corner stone each, then two passes
    counted = sgf.GameRecord(size=SIZE, komi=0.5, moves=moves, winner=-1, result="W+0.5")
    resigned = sgf.GameRecord(size=SIZE, komi=0.5, moves=moves, winner=-1, result="W+R")
    games = [recorded_game(counted, "a"), recorded_game(resigned, "b")]
    assert games[0].final is not None and games[1].final is None
    columns = reanalyse(UniformEvaluator(), PLAYED, games, [(0, 1), (1, 1)], generation=1, model_version="m")
    assert columns["score"][0] == pytest.approx(0.5) and np.isnan(columns["score"][1])  # white to move, ahead
    assert columns["ownership"][0].any() and not columns["ownership"][1].any()


def test_a_position_the_search_finds_over_makes_no_row():
    passes = sgf.GameRecord(size=SIZE, komi=0.5, moves=[(1, 25), (-1, 25), (1, 12)], winner=-1, result="W+0.5")
    game = recorded_game(passes, "after-two-passes")
    columns = reanalyse(UniformEvaluator(), PLAYED, [game], [(0, 1), (0, 2)], generation=1, model_version="m")
    assert columns["move_number"].tolist() == [1]


def test_a_game_whose_colours_do_not_alternate_is_not_reanalysed():
    assert recorded_game(sgf.GameRecord(size=SIZE, moves=[(1, 0), (1, 1)]), "x") is None
    assert recorded_game(sgf.GameRecord(size=SIZE, moves=[(1, 0), (-1, 0)]), "illegal") is None
    white_first = recorded_game(sgf.GameRecord(size=SIZE, moves=[(-1, 0), (1, 1)]), "w")
    assert isinstance(white_first, RecordedGame) and white_first.start.to_play == -1


def test_picks_are_distinct_moves_of_games_drawn_uniformly():
    rng = np.random.default_rng(0)
    counts = pick_games(4, 4000, rng)
    assert counts.sum() == 4000 and counts.min() > 900  # about 1,000 each
    picks = pick_moves([10, 3, 0], [4, 5, 2], np.random.default_rng(1))
    assert [m for g, m in picks if g == 1] == [0, 1, 2]  # a short game gives all its moves
    assert len({m for g, m in picks if g == 0}) == 4 and all(0 <= m < 10 for g, m in picks if g == 0)
    assert picks == pick_moves([10, 3, 0], [4, 5, 2], np.random.default_rng(1)) == sorted(picks)
    assert pick_games(0, 5, rng).size == 0


def test_reanalysed_positions_replay_the_game_s_history():
    games = [RecordedGame("g", Position.initial(SIZE, 0.5), (6, 18, 12), 0, None)]
    before = positions_at(games, [(0, 2), (0, 0)])
    assert before[0].move_number == 2 and before[1].move_number == 0
    assert before[0].stones.reshape(-1)[[6, 18]].tolist() == [1, -1]

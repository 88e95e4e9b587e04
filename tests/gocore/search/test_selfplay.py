"""gocore.search.selfplay: rows and SGF records from real self-play games (5x5, uniform priors, few sims)."""

from __future__ import annotations

import numpy as np
import pytest

from gocore.nn import features
from gocore.nn.inference import UniformEvaluator
from gocore.rules import sgf, sgf_read
from gocore.search.mcts import SELFPLAY
from gocore.search.selfplay import SelfPlayConfig, game_id, merge_stats, play

SIZE = 5
CONFIG = SelfPlayConfig(size=SIZE, komi=2.5, search=SELFPLAY.replace(sims=8, max_moves=40))


@pytest.fixture(scope="module")
def batch():
    return play(UniformEvaluator(), CONFIG, 3, generation=2, seed=11, model_version="uniform-test")


def positions_of(batch, index):
    """The position before each move of game `index`, replayed from its SGF record."""
    return sgf.replay(batch.records[index])[:-1]


def rows_of(batch, index):
    return np.flatnonzero(batch.columns["game_id"] == batch.game_ids[index])


def test_every_move_of_every_game_is_one_row_with_its_ids():
    result = play(UniformEvaluator(), CONFIG, 2, generation=4, seed=5, model_version="m")
    lengths = [len(record.moves) for record in result.records]
    assert len(result.columns["z"]) == sum(lengths) == result.stats["positions"]
    assert result.game_ids == [game_id(4, 5, 0), game_id(4, 5, 1)] == ["gen4-s5-0000", "gen4-s5-0001"]
    first = rows_of(result, 0)
    assert result.columns["move_number"][first].tolist() == list(range(lengths[0]))
    assert set(result.columns["generation"]) == {4} and set(result.columns["symmetry"]) == {0}
    assert set(result.columns["model_version"]) == {"m"} and set(result.columns["komi"]) == {2.5}
    assert set(result.columns["encoder"]) == {"agz17"} and set(result.columns["size"]) == {SIZE}


def test_pi_sums_to_one_and_is_zero_on_illegal_moves(batch):
    for index in range(len(batch.records)):
        for row, position in zip(rows_of(batch, index), positions_of(batch, index)):
            pi = batch.columns["pi"][row]  # (N*N+1,)
            assert pi.sum() == pytest.approx(1.0, abs=1e-5)
            assert not pi[~position.legal_moves()].any()


def test_z_is_the_winner_seen_by_the_side_to_move(batch):
    for index, record in enumerate(batch.records):
        z = batch.columns["z"][rows_of(batch, index)]
        movers = np.array([position.to_play for position in positions_of(batch, index)])
        assert record.winner in (-1, 0, 1)
        assert (z == record.winner * movers).all()
        if record.winner:  # both signs occur: black and white rows alternate
            assert set(z.tolist()) == {-1, 1}


def test_q_is_each_move_s_searched_root_value_from_the_mover_s_view(batch):
    for index, record in enumerate(batch.records):
        q = batch.columns["q"][rows_of(batch, index)]  # (T,)
        commented = [float(record.comments[move].split()[2]) for move in range(len(record.moves))]
        assert q == pytest.approx(commented, abs=5e-4)  # the SGF comments round to 3 places
        assert np.abs(q).max() <= 1.0 and np.abs(q).max() > 0  # terminal leaves reach the roots


def test_planes_decode_to_encode_position_of_the_replayed_position(batch):
    channels = features.get_encoder("agz17").num_planes
    for index in range(len(batch.records)):
        rows = rows_of(batch, index)
        planes = features.unpack_planes(batch.columns["planes"][rows], channels, SIZE)  # (T, 17, N, N)
        expected = np.stack([features.encode_position(p, "agz17") for p in positions_of(batch, index)])
        np.testing.assert_array_equal(planes, expected)


def test_sgf_round_trips_and_replays_to_the_recorded_result(batch):
    for record in batch.records:
        back = sgf_read.read_games(sgf.write(record))[0]
        assert back.moves == record.moves and back.comments == record.comments
        assert (back.rules, back.komi, back.result, back.player_black) == ("Chinese", 2.5, record.result, "uniform-test")
        assert len(back.comments) == len(back.moves) and "root value" in back.comments[0]
        final = sgf.replay(back)[-1]
        if record.result and not record.result.endswith("+R"):
            assert np.sign(final.score()) == record.winner


def test_the_same_seed_plays_the_same_games(batch):
    again = play(UniformEvaluator(), CONFIG, 3, generation=2, seed=11, model_version="uniform-test")
    assert [r.moves for r in again.records] == [r.moves for r in batch.records]
    np.testing.assert_array_equal(again.columns["pi"], batch.columns["pi"])


def test_stats_count_results_and_merge_by_sum(batch):
    stats = batch.stats
    assert stats["games"] == 3 and stats["black_wins"] + stats["white_wins"] + stats["draws"] == 3
    assert stats["resignations"] + stats["two_passes"] + stats["move_cap"] == 3
    merged = merge_stats([stats, stats])
    assert merged["games"] == 6 and merged["positions"] == 2 * stats["positions"]


def test_the_window_keeps_everything_up_to_its_minimum_then_grows_sub_linearly():
    from gocore.search.selfplay import window_rows

    assert window_rows(5_000, minimum=20_000) == 5_000
    assert window_rows(20_000, minimum=20_000) == 20_000
    sizes = [window_rows(total, minimum=20_000) for total in (40_000, 80_000, 160_000, 1_000_000)]
    assert sizes == sorted(sizes) and all(s > 20_000 for s in sizes)
    assert sizes[-1] < 1_000_000 / 4  # old data leaves the window
    assert sizes[1] / sizes[0] < 2  # doubling the data grows the window by less


def test_training_steps_bound_how_often_a_row_is_drawn():
    from gocore.search.selfplay import training_steps

    assert training_steps(10_000, 10_000, 100, replay=2.0, max_passes=2.0, min_steps=1) == 200
    assert training_steps(10_000, 5_000, 100, replay=4.0, max_passes=2.0, min_steps=1) == 100  # capped
    assert training_steps(10, 10, 100, min_steps=20) == 20


def test_the_resign_threshold_keeps_false_resignations_at_five_percent():
    from gocore.search.selfplay import calibrate_resign_threshold

    lows = [-0.99 + 0.01 * i for i in range(100)]  # -0.99 .. 0.0
    threshold = calibrate_resign_threshold(lows, false_rate=0.05, bounds=(-1.0, 1.0))
    assert sum(low < threshold for low in lows) == 5
    assert calibrate_resign_threshold([0.1] * 100) == -0.9  # confident winners: never above the bound
    assert calibrate_resign_threshold([-0.999] * 3 + [0.5] * 10) == -0.999  # too few games to allow any
    assert calibrate_resign_threshold([]) is None

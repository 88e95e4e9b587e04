"""Rough ranks from the Elo ladder's GNU Go anchors: monotone, interpolated, honest when unrated."""

from __future__ import annotations

import numpy as np
import pytest

from gocore.play.ratings import ELO_PER_RANK, format_rank, gnugo_nominal_kyu, strength_label

ANCHORS = {1: (300.0, 40.0), 5: (500.0, 50.0), 10: (800.0, 60.0)}  # level: (Elo, stderr) on a 9x9 ladder


def test_without_gnugo_anchors_the_label_says_unrated_not_a_guess() -> None:
    label = strength_label(412.0, 60.0, 84, {}, 9)
    assert label.kyu is None and label.rank == "unrated vs GNU Go"
    assert label.text == "unrated vs GNU Go (Elo +412 ± 118 (95 %) vs random, 84 games)"


def test_rated_levels_give_their_nominal_rank_and_interpolate_between() -> None:
    for level, (elo, _) in ANCHORS.items():
        assert strength_label(elo, 30.0, 20, ANCHORS, 9).kyu == pytest.approx(gnugo_nominal_kyu(level, 9))
    middle = strength_label(650.0, 30.0, 20, ANCHORS, 9).kyu  # halfway from level 5 to level 10 in Elo
    assert middle == pytest.approx((gnugo_nominal_kyu(5, 9) + gnugo_nominal_kyu(10, 9)) / 2)
    beyond = strength_label(1000.0, 30.0, 20, ANCHORS, 9).kyu
    assert beyond == pytest.approx(gnugo_nominal_kyu(10, 9) - 200.0 / ELO_PER_RANK)


def test_the_rank_falls_as_elo_rises_even_when_the_ladder_misorders_levels() -> None:
    noisy = {1: (520.0, 80.0), 5: (480.0, 80.0), 10: (900.0, 90.0)}  # level 1 fitted above level 5
    for anchors in (ANCHORS, noisy, {5: (500.0, None)}):
        kyus = [strength_label(elo, 50.0, 10, anchors, 9).kyu for elo in np.linspace(-200, 1600, 181)]
        assert all(later < earlier for earlier, later in zip(kyus, kyus[1:]))


def test_nominal_ranks_weaken_with_lower_levels_and_on_larger_boards() -> None:
    assert gnugo_nominal_kyu(1, 9) > gnugo_nominal_kyu(5, 9) > gnugo_nominal_kyu(10, 9)
    assert gnugo_nominal_kyu(10, 9) < gnugo_nominal_kyu(10, 13) < gnugo_nominal_kyu(10, 19)
    assert gnugo_nominal_kyu(10, 5) == gnugo_nominal_kyu(10, 9)


def test_the_label_names_the_nearest_level_the_relative_elo_and_the_games() -> None:
    label = strength_label(340.0, 30.0, 84, ANCHORS, 9)
    assert label.text == f"{label.rank} (Elo +40 ± 98 (95 %) vs GNU Go level 1, 84 games)"  # 1.96 * hypot(30, 40)
    assert format_rank(12.4) == "~12 kyu" and format_rank(0.6) == "~1 kyu"
    assert format_rank(0.2) == "~1 dan" and format_rank(-1.2) == "~2 dan" and format_rank(45.0) == "~30 kyu"

"""Wilson intervals, Elo conversions, SPRT decisions, match summaries and the Elo table."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from gocore.play.ratings import (
    SprtConfig,
    clustered_interval,
    elo_from_winrate,
    elo_interval,
    gsprt_llr,
    sprt,
    sprt_llr,
    sprt_of_scores,
    summarize,
    wilson_interval,
    winrate_from_elo,
)


def wilson_by_definition(wins: int, games: int, confidence: float = 0.95) -> tuple[float, float]:
    """The win rates p with |p̂ - p| <= z sqrt(p(1-p)/n): the roots of a quadratic in p."""
    z = stats.norm.ppf(0.5 + confidence / 2)
    p_hat = wins / games
    a, b, c = 1 + z * z / games, -(2 * p_hat + z * z / games), p_hat * p_hat
    low, high = sorted(np.roots([a, b, c]).real)
    return low, high


@pytest.mark.parametrize("wins, games", [(55, 100), (220, 400), (3, 10), (1, 1), (0, 7), (40, 40)])
def test_wilson_interval_matches_its_definition(wins: int, games: int):
    assert wilson_interval(wins, games) == pytest.approx(wilson_by_definition(wins, games), abs=1e-9)


def test_wilson_interval_known_value_and_edges():
    low, high = wilson_interval(55, 100)
    assert (round(low, 4), round(high, 4)) == (0.4524, 0.6439)
    assert wilson_interval(0, 0) == (0.0, 1.0)
    assert wilson_interval(0, 10)[0] == 0.0 and wilson_interval(10, 10)[1] == 1.0


def test_elo_conversions():
    assert elo_from_winrate(0.5) == 0.0
    assert elo_from_winrate(0.55) == pytest.approx(34.86, abs=0.01)  # AlphaGo Zero's gate
    assert winrate_from_elo(400) == pytest.approx(10 / 11)
    assert elo_from_winrate(0.0) == -math.inf and elo_from_winrate(1.0) == math.inf
    with pytest.raises(ValueError):
        elo_from_winrate(1.2)
    low, high = elo_interval(55, 100)
    assert low < 0 < elo_from_winrate(0.55) < high


@given(st.floats(0.001, 0.998), st.floats(0.0005, 0.001))
def test_elo_is_monotone_and_inverts_winrate(p: float, step: float):
    assert elo_from_winrate(p) < elo_from_winrate(p + step)
    assert winrate_from_elo(elo_from_winrate(p)) == pytest.approx(p, rel=1e-9)


def test_sprt_llr_is_the_binomial_likelihood_ratio():
    p0, p1 = winrate_from_elo(0), winrate_from_elo(35)
    expected = stats.binom.logpmf(30, 50, p1) - stats.binom.logpmf(30, 50, p0)
    assert sprt_llr(30, 20, 0, 35) == pytest.approx(expected)


def test_sprt_accepts_a_lopsided_sequence_and_rejects_its_reverse():
    assert sprt(60, 20, elo0=0, elo1=35) == "accept"
    assert sprt(20, 60, elo0=0, elo1=35) == "reject"
    assert sprt(10, 10, elo0=0, elo1=35) == "continue"
    with pytest.raises(ValueError):
        sprt(1, 1, elo0=10, elo1=10)


@pytest.mark.parametrize("true_elo, verdict", [(150.0, "accept"), (-100.0, "reject")])
def test_sprt_decides_simulated_matches_correctly(true_elo: float, verdict: str):
    rng = np.random.default_rng(7)
    wins = losses = 0
    state = "continue"
    while state == "continue":
        if rng.random() < winrate_from_elo(true_elo):
            wins += 1
        else:
            losses += 1
        state = sprt(wins, losses, 0, 35)
    assert state == verdict and wins + losses < 400


def test_the_draw_aware_llr_matches_the_binomial_one_without_draws():
    scores = [1.0] * 60 + [0.0] * 40
    assert gsprt_llr(scores, 0, 35) == pytest.approx(sprt_llr(60, 40, 0, 35), rel=0.05)
    assert gsprt_llr([0.0] * 60 + [1.0] * 40, 0, 35) == pytest.approx(sprt_llr(40, 60, 0, 35), rel=0.05)


def test_draws_make_the_same_score_more_certain():
    decisive = [1.0] * 30 + [0.0] * 20  # 60 % of the points, no draw
    drawish = [1.0] * 10 + [0.5] * 40  # the same 60 %, mostly draws
    assert gsprt_llr(drawish, 0, 35) > 2 * gsprt_llr(decisive, 0, 35) > 0
    assert sprt_of_scores(drawish, SprtConfig()) == "accept"
    assert sprt_of_scores(decisive, SprtConfig()) == "continue"  # the Bernoulli test's verdict too
    assert sprt(30, 20, 0, 35) == "continue"


def test_a_few_draws_decide_nothing_and_many_reject_a_gain():
    assert sprt_of_scores([0.5] * 4, SprtConfig()) == "continue"  # the prior keeps the variance above 0
    assert sprt_of_scores([0.5] * 200, SprtConfig()) == "reject"  # equal strength: not +35 Elo
    assert sprt_of_scores([], SprtConfig()) == "continue"
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        gsprt_llr([1.5], 0, 35)


@pytest.mark.parametrize("true_elo, verdict", [(150.0, "accept"), (-100.0, "reject")])
def test_the_draw_aware_sprt_decides_simulated_drawish_matches_correctly(true_elo: float, verdict: str):
    rng = np.random.default_rng(11)
    expected, draw_rate = winrate_from_elo(true_elo), 0.6  # 60 % draws; decisive games keep the expected score
    win = (expected - draw_rate / 2) / (1 - draw_rate)
    scores: list[float] = []
    while sprt_of_scores(scores, SprtConfig()) == "continue":
        scores.append(0.5 if rng.random() < draw_rate else float(rng.random() < win))
    assert sprt_of_scores(scores, SprtConfig()) == verdict and len(scores) < 400


def test_summary_gate_by_threshold_and_by_sprt():
    facts = summarize([1.0] * 60 + [0.0] * 38 + [0.5] * 2, gate=0.55)
    assert (facts["games"], facts["a_wins"], facts["b_wins"], facts["draws"]) == (100, 60, 38, 2)
    assert facts["a_winrate"] == pytest.approx(0.61)
    assert (facts["a_winrate_low"], facts["a_winrate_high"]) == pytest.approx(wilson_interval(61, 100))
    assert facts["gate_passed"] and facts["gate_rule"] == "threshold" and facts["sprt"] is None
    assert not summarize([1.0] * 54 + [0.0] * 46, gate=0.55)["gate_passed"]
    decided = summarize([1.0] * 60 + [0.0] * 20, gate=0.9, sprt_config=SprtConfig())
    assert (decided["sprt"], decided["gate_rule"], decided["gate_passed"]) == ("accept", "sprt", True)
    whitewash = summarize([0.0] * 4)
    assert whitewash["elo"] is None and whitewash["elo_low"] is None and whitewash["elo_high"] < 0


def test_clustered_interval_is_wilson_for_independent_games_and_halves_the_games_for_exact_repeats():
    rng = np.random.default_rng(0)
    scores = list(rng.integers(0, 2, 200).astype(float))
    alone = clustered_interval(scores, list(range(200)))
    assert alone.clusters == 200 and 150 < alone.effective_games <= 200
    assert alone.low == pytest.approx(wilson_interval(sum(scores), 200)[0], abs=0.02)
    twice = clustered_interval(scores + scores, list(range(200)) * 2)  # every game played again
    assert twice.clusters == 200 and twice.effective_games == pytest.approx(alone.effective_games, rel=0.05)
    naive = wilson_interval(2 * sum(scores), 400)
    assert twice.high - twice.low > 1.3 * (naive[1] - naive[0])


def test_clustered_interval_at_a_whitewash_counts_the_clusters_as_games():
    result = clustered_interval([1.0] * 20, [i // 2 for i in range(20)])  # 10 openings, each twice
    assert (result.clusters, result.effective_games) == (10, 10.0)
    assert (result.low, result.high) == pytest.approx(wilson_interval(10, 10))


def test_summary_reports_the_clustered_interval_when_given_clusters():
    scores = [1.0, 1.0, 0.0, 0.0] * 25  # pairs that split by opening: each opening won twice or lost twice
    facts = summarize(scores, clusters=[i // 2 for i in range(100)])
    plain = summarize(scores)
    assert facts["interval"] == "clustered" and plain["interval"] == "wilson" and facts["clusters"] == 50
    assert facts["a_winrate_high"] - facts["a_winrate_low"] > plain["a_winrate_high"] - plain["a_winrate_low"]


def test_a_paired_difference_is_tighter_than_two_independent_intervals_when_games_share_openings():
    from gocore.play.ratings import clustered_interval, paired_difference

    # 40 openings x 2 colours; B wins the first 48 games' worth, A the same plus 12 more
    b = [1.0 if i < 48 else 0.0 for i in range(80)]
    a = [1.0 if i < 60 else 0.0 for i in range(80)]
    clusters = [i // 2 for i in range(80)]
    paired = paired_difference(a, b, clusters)
    assert (paired.games, paired.only_a, paired.only_b) == (80, 12, 0)
    assert paired.difference == pytest.approx(0.15) and paired.low > 0  # every difference has one sign
    separate = [clustered_interval(scores, clusters) for scores in (a, b)]
    assert separate[0].low < separate[1].high  # the two intervals overlap: they cannot tell A from B
    # by hand: d = 1 on games 48..59 (clusters 24..29, two games each), CR1 standard error
    d = np.array([1.0 if 48 <= i < 60 else 0.0 for i in range(80)])
    sums = np.array([d[2 * c:2 * c + 2].sum() - 2 * d.mean() for c in range(40)])
    se = np.sqrt(40 / 39 * (sums ** 2).sum()) / 80
    assert paired.low == pytest.approx(0.15 - 1.959963984540054 * se)


def test_a_paired_difference_refuses_lists_of_other_lengths():
    from gocore.play.ratings import paired_difference

    with pytest.raises(ValueError, match="equal lengths"):
        paired_difference([1.0, 0.0], [1.0], [0, 0])

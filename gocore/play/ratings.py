"""Match statistics: win rate intervals, Elo, SPRT, the gate.

Elo here is the logistic model: a player `d` Elo stronger scores ``1 / (1 + 10**(-d/400))``
(+200 Elo ≈ 76 %, the 55 % gate of AlphaGo Zero ≈ +35 Elo). Scores count a jigo as half a win.

- `wilson_interval`: the 95 % score interval of a win rate (good at 0 % and 100 % and for few games).
- `clustered_interval`: the same for games that come in correlated clusters (a match's opening
  played with both colours, a game played again): Wilson on the effective number of games.
- `paired_difference`: how much more A scored than B over the same games (two matches against one
  opponent from the same openings), with a cluster-robust interval.
- `elo_interval`: that interval mapped through `elo_from_winrate` (monotone, so it stays an interval).
- `sprt`: Wald's sequential probability ratio test of H0 "A is elo0 stronger" against H1 "elo1",
  on a Bernoulli model of won and lost games; it lets a match stop as soon as the games decide.
- `summarize`: the numbers a match reports, with the gate decision.
- `strength_label`: a ladder Elo turned into a rough Go rank through the GNU Go levels rated on
  the same ladder (`GNUGO_KYU`), with the evidence behind it.

Ratings of many players from all their games (the Elo ladder) are `gocore.play.ladder`'s.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

Z_95 = 1.959963984540054  # standard normal quantile for a two-sided 95 % interval


def elo_from_winrate(winrate: float) -> float:
    """Elo difference that gives this expected score; ±inf at 0 and 1."""
    if not 0.0 <= winrate <= 1.0:
        raise ValueError(f"a win rate lies in [0, 1], not {winrate}")
    if winrate in (0.0, 1.0):
        return math.copysign(math.inf, winrate - 0.5)
    return 400.0 * math.log10(winrate / (1.0 - winrate))


def winrate_from_elo(elo: float) -> float:
    """Expected score of a player `elo` points stronger."""
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def wilson_interval(wins: float, games: int, z: float = Z_95) -> tuple[float, float]:
    """Wilson score interval of the win rate `wins / games` (jigo as half a win); (0, 1) for 0 games."""
    if games <= 0:
        return 0.0, 1.0
    p = wins / games
    centre = (p + z * z / (2 * games)) / (1 + z * z / games)
    half = z / (1 + z * z / games) * math.sqrt(p * (1 - p) / games + z * z / (4 * games * games))
    low, high = max(0.0, centre - half), min(1.0, centre + half)
    # At 0 % or 100 % the bound is exactly 0 or 1; rounding must not turn an infinite Elo finite.
    return (0.0 if wins <= 0 else low), (1.0 if wins >= games else high)


def _mean_variance_cr1(values: np.ndarray, clusters: Sequence[object]) -> tuple[float, int]:
    """The cluster-robust (CR1) variance of `values`' mean, and the number of distinct clusters
    (the variance is meaningless, and returned as inf, with fewer than 2)."""
    keys = {key: i for i, key in enumerate(dict.fromkeys(clusters))}
    count, n = len(keys), len(values)
    if count < 2:
        return math.inf, count
    sums = np.bincount([keys[key] for key in clusters], weights=values - values.mean(), minlength=count)  # (C,)
    return count / (count - 1) * float((sums ** 2).sum()) / n ** 2, count


@dataclass(frozen=True)
class ClusteredInterval:
    """A win rate's 95 % interval when games are correlated within clusters."""

    low: float
    high: float
    clusters: int
    """Distinct clusters among the games."""
    effective_games: float
    """Games divided by the design effect: as many independent games would give this interval."""


def clustered_interval(scores: Sequence[float], clusters: Sequence[object], z: float = Z_95) -> ClusteredInterval:
    """Wilson's interval of the mean score on the effective number of games n / deff, deff being the
    cluster-robust variance of the mean over the i.i.d. one (at least 1). At 0 % or 100 % the
    design effect cannot be estimated: the clusters count as the games (the cautious bound)."""
    values, n = np.asarray(scores, float), len(scores)
    if n == 0:
        return ClusteredInterval(0.0, 1.0, 0, 0.0)
    p = float(values.mean())
    robust, count = _mean_variance_cr1(values, clusters)
    if 0.0 < p < 1.0 and count > 1:
        effective = n / max(1.0, robust / (p * (1 - p) / n))
    else:
        effective = float(count)
    low, high = wilson_interval(p * effective, effective, z)  # type: ignore[arg-type]
    return ClusteredInterval(low, high, count, effective)


@dataclass(frozen=True)
class PairedDifference:
    """How much more one player scored than another over the same games (same openings, colours and
    opponent seeds), with a 95 % interval robust to correlation within clusters."""

    games: int
    difference: float
    """Mean of score A − score B over the paired games (in win-rate points, -1 .. 1)."""
    low: float
    high: float
    clusters: int
    only_a: int
    """Games A won (scored more in) where B, in the same game, did not."""
    only_b: int


def paired_difference(a: Sequence[float], b: Sequence[float], clusters: Sequence[object],
                      z: float = Z_95) -> PairedDifference:
    """The paired difference of two score lists, game i of one against game i of the other: its mean
    and a normal interval on the cluster-robust (CR1) standard error. With clusters the random
    openings (both colours of an opening are one cluster), this is how two players' matches against
    the same opponent compare: far tighter than two independent intervals when the games share
    their openings."""
    first, second = np.asarray(a, float), np.asarray(b, float)
    if first.shape != second.shape or len(clusters) != len(first):
        raise ValueError(f"paired scores need equal lengths: {len(first)}, {len(second)} and {len(clusters)} clusters")
    n = len(first)
    if n == 0:
        return PairedDifference(0, 0.0, -1.0, 1.0, 0, 0, 0)
    d = first - second
    mean = float(d.mean())
    variance, count = _mean_variance_cr1(d, clusters)
    se = math.sqrt(variance) if count > 1 else math.inf
    return PairedDifference(n, mean, max(-1.0, mean - z * se), min(1.0, mean + z * se), count,
                            int((d > 0).sum()), int((d < 0).sum()))


def elo_interval(wins: float, games: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson interval in Elo (may be infinite at a whitewash)."""
    low, high = wilson_interval(wins, games, z)
    return elo_from_winrate(low), elo_from_winrate(high)


@dataclass(frozen=True)
class SprtConfig:
    """A sequential test of A's strength: H0 "A is elo0 stronger" against H1 "A is elo1 stronger"."""

    __pydantic_config__ = {"use_attribute_docstrings": True}  # each docstring below: its field in a Prefect Run form

    elo0: float = 0.0
    """Elo advantage of H0 (no progress)."""
    elo1: float = 35.0
    """Elo advantage of H1; 35 ≈ the 55 % gate."""
    alpha: float = 0.05
    """Chance of accepting H1 when H0 holds (a false promotion)."""
    beta: float = 0.05
    """Chance of rejecting H1 when it holds (a missed improvement)."""

    def __post_init__(self) -> None:
        if not self.elo1 > self.elo0:
            raise ValueError(f"an SPRT needs elo1 > elo0, not elo0={self.elo0:g}, elo1={self.elo1:g}")
        if not (0 < self.alpha < 1 and 0 < self.beta < 1):
            raise ValueError(f"SPRT error rates lie in (0, 1), not alpha={self.alpha:g}, beta={self.beta:g}")


def sprt_llr(wins: float, losses: float, elo0: float, elo1: float) -> float:
    """Log-likelihood ratio of H1 (elo1) over H0 (elo0) after `wins` and `losses` of player A."""
    p0, p1 = winrate_from_elo(elo0), winrate_from_elo(elo1)
    return wins * math.log(p1 / p0) + losses * math.log((1.0 - p1) / (1.0 - p0))


def sprt(wins: float, losses: float, elo0: float = 0.0, elo1: float = 35.0,
         alpha: float = 0.05, beta: float = 0.05) -> str:
    """Wald's SPRT: ``"accept"`` (H1, A is elo1 stronger), ``"reject"`` (H0) or ``"continue"``.

    Draws carry no information in this Bernoulli model: pass a jigo as half a win and half a loss.
    """
    if not elo1 > elo0:
        raise ValueError(f"SPRT needs elo1 > elo0, not elo0={elo0}, elo1={elo1}")
    return _wald(sprt_llr(wins, losses, elo0, elo1), alpha, beta)


def _wald(llr: float, alpha: float, beta: float) -> str:
    """Wald's decision on a log-likelihood ratio: accept H1, reject it, or continue."""
    if llr >= math.log((1.0 - beta) / alpha):
        return "accept"
    if llr <= math.log(beta / (1.0 - alpha)):
        return "reject"
    return "continue"


def gsprt_llr(scores: Sequence[float], elo0: float, elo1: float) -> float:
    """Log-likelihood ratio of H1 (A's expected score is elo1's) over H0 (elo0's) from each game's score
    (1, 1/2 or 0): the generalized SPRT's normal approximation (Michel Van den Bergh's, the draw-aware
    test of chess engine testing), ``n (s1 - s0) (2 mean - s0 - s1) / (2 var)`` over the games' scores.
    Draws shrink the variance, so a match of many draws decides sooner than `sprt_llr` counting a draw
    as half a win and half a loss; it is that test's first-order equal when no game is drawn. One win
    and one loss are added to the scores as a prior, so the first few games (all draws, say) never
    have a variance of 0."""
    values = np.append(np.asarray(scores, float), [1.0, 0.0])
    if ((values < 0) | (values > 1)).any():
        raise ValueError("game scores must lie in [0, 1]")
    s0, s1 = winrate_from_elo(elo0), winrate_from_elo(elo1)
    mean, variance = float(values.mean()), float(values.var())
    return (len(values) - 2) * (s1 - s0) * (2.0 * mean - s0 - s1) / (2.0 * variance)


def sprt_of_scores(scores: Sequence[float], config: SprtConfig) -> str:
    """Wald's decision (``"accept"``, ``"reject"``, ``"continue"``) on `gsprt_llr`: the SPRT for games
    that can be drawn (Baghchal's gate)."""
    return _wald(gsprt_llr(scores, config.elo0, config.elo1), config.alpha, config.beta)


def _finite(value: float) -> float | None:
    """JSON has no infinity: an unbounded Elo is None."""
    return value if math.isfinite(value) else None


def summarize(a_scores: Sequence[float], gate: float = 0.55, sprt_config: SprtConfig | None = None,
              clusters: Sequence[object] | None = None) -> dict[str, Any]:
    """Win rate of A with its 95 % interval, Elo with interval, SPRT state and the gate decision.

    With `clusters` (one key per game: its opening, or the game itself) the interval is clustered
    (`clustered_interval`), else Wilson's. The gate passes if the SPRT (when given) accepted H1,
    else if the win rate reaches `gate`: a decided SPRT speaks for the games it stopped, the
    threshold for a full set of games.
    """
    games, points = len(a_scores), float(sum(a_scores))
    wins, draws = sum(1 for s in a_scores if s == 1.0), sum(1 for s in a_scores if s == 0.5)
    winrate = points / games if games else 0.5
    low, high = wilson_interval(points, games)
    clustered = None if clusters is None else clustered_interval(a_scores, clusters)
    if clustered is not None:
        low, high = clustered.low, clustered.high
    facts: dict[str, Any] = {
        "games": games, "a_wins": wins, "b_wins": games - wins - draws, "draws": draws,
        "a_winrate": winrate, "a_winrate_low": low, "a_winrate_high": high,
        "interval": "wilson" if clustered is None else "clustered",
        "clusters": None if clustered is None else clustered.clusters,
        "effective_games": None if clustered is None else round(clustered.effective_games, 1),
        "elo": _finite(elo_from_winrate(winrate)), "elo_low": _finite(elo_from_winrate(low)),
        "elo_high": _finite(elo_from_winrate(high)), "gate": gate, "sprt": None, "sprt_config": None,
    }
    if sprt_config is not None:
        facts["sprt_config"] = asdict(sprt_config)
        facts["sprt"] = sprt(points, games - points, sprt_config.elo0, sprt_config.elo1,
                             sprt_config.alpha, sprt_config.beta)
    decided = facts["sprt"] in ("accept", "reject")
    facts["gate_rule"] = "sprt" if decided else "threshold"
    facts["gate_passed"] = facts["sprt"] == "accept" if decided else bool(games) and winrate >= gate
    return facts


# ---------------------------------------------------------------- rough ranks from GNU Go anchors
GNUGO_KYU = {9: 6.5, 19: 10.0}
"""Nominal kyu rank of GNU Go 3.8 at level 10 by board size: it is commonly put at about 5-8 kyu
on 9x9 and about 10 kyu on 19x19 (folklore from servers and engine lists, not measured here);
sizes in between are interpolated linearly, smaller ones take 9x9's, larger 19x19's."""
GNUGO_KYU_PER_LEVEL = 0.4
"""Each level below 10 is taken as this much weaker (level 1 ≈ 3.6 kyu weaker than level 10): a
guess, the levels cut reading depth rather than knowledge."""
ELO_PER_RANK = 100.0
"""Elo per kyu grade beyond the rated anchors (roughly the EGF scale in the kyu range)."""


@dataclass(frozen=True)
class Strength:
    """A rough rank and the ladder evidence behind it (`strength_label`)."""

    kyu: float | None
    """Rank on a continuous kyu scale (below 1: dan, 0 = 1 dan, -1 = 2 dan); None without GNU Go anchors."""
    rank: str
    """``~12 kyu``, ``~2 dan`` or ``unrated vs GNU Go``."""
    text: str
    """The rank with its evidence: ``~12 kyu (Elo +112 ± 118 (95 %) vs GNU Go level 1, 84 games)``."""


def gnugo_nominal_kyu(level: int, size: int) -> float:
    """The nominal kyu rank of GNU Go at `level` (0..10) on an N x N board (see `GNUGO_KYU`)."""
    share = min(max((size - 9) / 10, 0.0), 1.0)
    top = GNUGO_KYU[9] + share * (GNUGO_KYU[19] - GNUGO_KYU[9])
    return top + (10 - level) * GNUGO_KYU_PER_LEVEL


def format_rank(kyu: float) -> str:
    """``~12 kyu`` for kyu >= 0.5, else ``~N dan`` (the scale runs 2 kyu, 1 kyu, 1 dan, 2 dan)."""
    kyu = min(max(kyu, -8.0), 30.0)
    return f"~{max(1, round(kyu))} kyu" if kyu >= 0.5 else f"~{round(1 - kyu)} dan"


def strength_label(elo: float, stderr: float | None, games: int, gnugo: Mapping[int, tuple[float, float | None]],
                   size: int) -> Strength:
    """A player's rough rank from its ladder Elo and the GNU Go levels rated on the same ladder
    (`gnugo`: {level: (Elo, stderr)}); ``unrated vs GNU Go`` when no level is rated.

    The rated levels are sorted by Elo and paired, in order, with their nominal ranks sorted from
    weakest to strongest (so the map is monotone even when ladder noise puts a lower level above
    a higher one); the player's kyu is interpolated linearly in Elo between them and extrapolated
    at `ELO_PER_RANK` beyond them. The text names the nearest level in Elo, the player's Elo
    relative to it with the two standard errors combined, and the player's games. Rough: the
    nominal ranks are folklore, the ladder a few hundred games at best."""
    if not gnugo:
        spread = "" if stderr is None else f" ± {1.96 * stderr:.0f} (95 %)"
        return Strength(None, "unrated vs GNU Go", f"unrated vs GNU Go (Elo {elo:+.0f}{spread} vs random, "
                                                   f"{games} games)")
    elos = sorted(anchor_elo for anchor_elo, _ in gnugo.values())
    ranks = sorted((gnugo_nominal_kyu(level, size) for level in gnugo), reverse=True)  # weakest first
    if elo <= elos[0]:
        kyu = ranks[0] + (elos[0] - elo) / ELO_PER_RANK
    elif elo >= elos[-1]:
        kyu = ranks[-1] - (elo - elos[-1]) / ELO_PER_RANK
    else:
        kyu = float(np.interp(elo, elos, ranks))
    level = min(gnugo, key=lambda lv: (abs(gnugo[lv][0] - elo), lv))
    anchor_elo, anchor_stderr = gnugo[level]
    errors = [e for e in (stderr, anchor_stderr) if e is not None]
    spread = f" ± {1.96 * math.hypot(*errors):.0f} (95 %)" if errors else ""
    rank = format_rank(kyu)
    return Strength(kyu, rank, f"{rank} (Elo {elo - anchor_elo:+.0f}{spread} vs GNU Go level {level}, {games} games)")

"""Match statistics and ratings: win rate intervals, Elo, SPRT, the gate, ratings over generations.

Elo here is the logistic model: a player `d` Elo stronger scores ``1 / (1 + 10**(-d/400))``
(+200 Elo ≈ 76 %, the 55 % gate of AlphaGo Zero ≈ +35 Elo). Scores count a jigo as half a win.

- `wilson_interval`: the 95 % score interval of a win rate (good at 0 % and 100 % and for few games).
- `elo_interval`: that interval mapped through `elo_from_winrate` (monotone, so it stays an interval).
- `sprt`: Wald's sequential probability ratio test of H0 "A is elo0 stronger" against H1 "elo1",
  on a Bernoulli model of won and lost games; it lets a match stop as soon as the games decide.
- `summarize`: the numbers a match reports, with the gate decision.
- `EloTable`: ratings of many players (generations) from pairwise results: a sequential Elo update
  for a running estimate and a Bradley-Terry maximum-likelihood fit for the plot.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

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


def elo_interval(wins: float, games: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson interval in Elo (may be infinite at a whitewash)."""
    low, high = wilson_interval(wins, games, z)
    return elo_from_winrate(low), elo_from_winrate(high)


@dataclass(frozen=True)
class SprtConfig:
    """A sequential test of A's strength: H0 "A is elo0 stronger" against H1 "A is elo1 stronger"."""

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
    llr = sprt_llr(wins, losses, elo0, elo1)
    if llr >= math.log((1.0 - beta) / alpha):
        return "accept"
    if llr <= math.log(beta / (1.0 - alpha)):
        return "reject"
    return "continue"


def _finite(value: float) -> float | None:
    """JSON has no infinity: an unbounded Elo is None."""
    return value if math.isfinite(value) else None


def summarize(a_scores: Sequence[float], gate: float = 0.55, sprt_config: SprtConfig | None = None) -> dict[str, Any]:
    """Win rate of A with its 95 % interval, Elo with interval, SPRT state and the gate decision.

    The gate passes if the SPRT (when given) accepted H1, else if the win rate reaches `gate`:
    a decided SPRT speaks for the games it stopped, the threshold for a full set of games.
    """
    games, points = len(a_scores), float(sum(a_scores))
    wins, draws = sum(1 for s in a_scores if s == 1.0), sum(1 for s in a_scores if s == 0.5)
    winrate = points / games if games else 0.5
    low, high = wilson_interval(points, games)
    facts: dict[str, Any] = {
        "games": games, "a_wins": wins, "b_wins": games - wins - draws, "draws": draws,
        "a_winrate": winrate, "a_winrate_low": low, "a_winrate_high": high,
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


class EloTable:
    """Ratings of many players from pairwise game results (e.g. generation k vs k-1).

    `record` keeps every result and updates a sequential Elo estimate (`current`, step `k`);
    `ratings` fits all results at once (Bradley-Terry, MM algorithm), shifted so `anchor`
    (default: the first player recorded) has `anchor_rating`. Players must be connected by games.
    """

    def __init__(self, k: float = 16.0, anchor: str | None = None, anchor_rating: float = 0.0):
        self.k, self.anchor, self.anchor_rating = k, anchor, anchor_rating
        self.current: dict[str, float] = {}  # sequential Elo, updated game by game
        self.results: dict[tuple[str, str], list[float]] = {}  # (a, b) with a < b -> [a points, games]

    def add_player(self, name: str) -> None:
        """Add a player with no games yet (rated as the anchor until it plays)."""
        if self.anchor is None:
            self.anchor = name
        self.current.setdefault(name, self.anchor_rating)

    def record(self, a: str, b: str, a_score: float, games: int = 1) -> None:
        """Add `games` games between a and b in which a scored `a_score` points in total."""
        if a == b:
            raise ValueError(f"a player does not play itself in an Elo table: {a!r}")
        if not 0 <= a_score <= games:
            raise ValueError(f"{a_score} points from {games} games is impossible")
        for name in (a, b):
            self.add_player(name)
        key, points = ((a, b), a_score) if a < b else ((b, a), games - a_score)
        tally = self.results.setdefault(key, [0.0, 0])
        tally[0] += points
        tally[1] += games
        expected = winrate_from_elo(self.current[a] - self.current[b])
        step = self.k * (a_score - games * expected)
        self.current[a] += step
        self.current[b] -= step

    def ratings(self, iterations: int = 10_000, tolerance: float = 1e-10) -> dict[str, float]:
        """Maximum-likelihood Elo of every player (Bradley-Terry), anchored; half a point of prior
        per pair in each direction keeps a player who never won (or never lost) finite."""
        names = list(self.current)
        if len(names) < 2:
            return dict(self.current)
        strength = dict.fromkeys(names, 1.0)
        for _ in range(iterations):
            updated = self._mm_step(strength)
            change = max(abs(math.log(updated[n] / strength[n])) for n in names)
            strength = updated
            if change < tolerance:
                break
        shift = self.anchor_rating - 400.0 * math.log10(strength[self.anchor])
        return {n: 400.0 * math.log10(strength[n]) + shift for n in names}

    def _mm_step(self, strength: Mapping[str, float]) -> dict[str, float]:
        """One minorise-maximise update of the Bradley-Terry strengths (Hunter 2004)."""
        points = dict.fromkeys(strength, 0.0)
        weights = dict.fromkeys(strength, 0.0)
        for (a, b), (a_points, games) in self.results.items():
            games_with_prior = games + 1.0
            points[a] += a_points + 0.5
            points[b] += games - a_points + 0.5
            pair = games_with_prior / (strength[a] + strength[b])
            weights[a] += pair
            weights[b] += pair
        updated = {n: points[n] / weights[n] if weights[n] else strength[n] for n in strength}
        scale = math.exp(sum(math.log(v) for v in updated.values()) / len(updated))
        return {n: v / scale for n, v in updated.items()}

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready copy (for storage)."""
        return {"k": self.k, "anchor": self.anchor, "anchor_rating": self.anchor_rating,
                "current": dict(self.current),
                "results": [[a, b, p, g] for (a, b), (p, g) in sorted(self.results.items())]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> EloTable:
        """The table `to_dict` wrote."""
        table = cls(data["k"], data["anchor"], data["anchor_rating"])
        table.current = {str(n): float(r) for n, r in data["current"].items()}
        table.results = {(a, b): [float(p), int(g)] for a, b, p, g in data["results"]}
        return table

    @classmethod
    def from_games(cls, games: Iterable[tuple[str, str, float]], k: float = 16.0,
                   anchor: str | None = None) -> EloTable:
        """A table from (a, b, a's points) triples, recorded in order."""
        table = cls(k, anchor)
        for a, b, a_score in games:
            table.record(a, b, a_score)
        return table

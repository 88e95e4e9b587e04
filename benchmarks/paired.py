"""Two players' matches against the same opponent, game by game: how much more one scored.

    python -m benchmarks.paired --data-dir D MATCH_A MATCH_B
    python -m benchmarks.paired --data-dir D --data-dir-b D2 MATCH_A MATCH_B   # B's match in another data dir

Both matches must have been played from the same openings with the same colours (the evaluate
flow's pairs of random openings, seeded by the match's seed and the game's index, and GNU Go seeded
per game the same way), e.g. a self-play champion and the supervised net it started from, each
against GNU Go level 1. Game i of one is paired with game i of the other (with `--first N`, games
0..N-1 only: a shorter match, e.g. at more simulations, against the start of a longer one); the difference of their
scores is averaged, with a 95 % interval robust to correlation within an opening (its two colours)
(`gocore.play.ratings.paired_difference`). Far tighter than comparing the two win rates' own
intervals, which treat the matches as independent. With `--data-dir-b`, B's match is read from
another data dir (an A/B arm trained in a copy of a run's data dir, paired with the original's
match without copying it). A match under way is read from the games it has finished: `--common`
pairs the games both have (an interim look; the result is the finished matches'). Prints each
match's score, the difference and the games only one of them won. A game missing from either match,
or an opening that differs, is refused with its index.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line; parsed before anything heavy, so that --help answers at once."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=None, help="the data dir of both matches")
    parser.add_argument("--data-dir-b", type=Path, default=None,
                        help="the data dir of B's match, if not --data-dir's (e.g. the run an A/B arm was copied from)")
    parser.add_argument("match_a", help="match id of player A's games (the one expected to score more)")
    parser.add_argument("match_b", help="match id of player B's games")
    parser.add_argument("--first", type=int, default=None, help="pair games 0..N-1 only (both must have them)")
    parser.add_argument("--common", action="store_true",
                        help="pair the games both matches have finished (a look at a match under way)")
    return parser.parse_args(argv)


def match_rows(data: Path, match: str) -> dict[int, dict[str, Any]]:
    """The match's game rows by index: its results table once finished, else the games finished so far
    (a match under way); SystemExit if it has none."""
    from storage import layout, matches

    folder = layout.match_dir(data, match)
    try:
        rows = matches.read_results(folder).to_pylist()
    except matches.MatchError:
        rows = matches.read_rows(folder)
    if not rows:
        raise SystemExit(f"match {match} has no finished game in {data}")
    return {int(row["game"]): row for row in rows}


def paired_rows(data: Path, match_a: str, match_b: str, first: int | None = None, data_b: Path | None = None,
                common: bool = False) -> tuple[list[float], list[float], list[str]]:
    """A's and B's scores (A's side of each match) game by game, and each game's cluster (its opening);
    with `first`, games 0..first-1 only; with `common`, the games both have finished (a match under
    way against a finished one); B's match from `data_b` if given (else `data`)."""
    from tasks.app.evaluate import game_cluster

    rows_a, rows_b = match_rows(data, match_a), match_rows(data_b or data, match_b)
    if common:
        both = set(rows_a) & set(rows_b)
        rows_a, rows_b = ({game: row for game, row in rows.items() if game in both} for rows in (rows_a, rows_b))
    if first is not None:
        if first < 1:
            raise SystemExit(f"--first must be at least 1, not {first}")
        lacking = [(match, game) for match, rows in ((match_a, rows_a), (match_b, rows_b))
                   for game in range(first) if game not in rows]
        if lacking:
            raise SystemExit(f"match {lacking[0][0]} lacks game {lacking[0][1]} of the first {first}")
        rows_a, rows_b = ({game: rows[game] for game in range(first)} for rows in (rows_a, rows_b))
    if set(rows_a) != set(rows_b):
        missing = sorted(set(rows_a) ^ set(rows_b))
        raise SystemExit(f"the matches do not have the same games: {len(missing)} differ, first game {missing[0]}")
    scores_a, scores_b, clusters = [], [], []
    for game in sorted(rows_a):
        one, other = rows_a[game], rows_b[game]
        if (one.get("opening"), one["a_color"]) != (other.get("opening"), other["a_color"]):
            raise SystemExit(f"game {game} is not the same game start in both matches: opening "
                             f"{one.get('opening')!r} with colour {one['a_color']} against {other.get('opening')!r} "
                             f"with {other['a_color']}")
        scores_a.append(float(one["a_score"]))
        scores_b.append(float(other["a_score"]))
        clusters.append(game_cluster(one))
    return scores_a, scores_b, clusters


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from gocore.play.ratings import paired_difference
    from storage import layout

    data = layout.data_dir(args.data_dir)
    data_b = None if args.data_dir_b is None else layout.data_dir(args.data_dir_b)
    scores_a, scores_b, clusters = paired_rows(data, args.match_a, args.match_b, args.first, data_b, args.common)
    result = paired_difference(scores_a, scores_b, clusters)
    n = result.games
    print(f"A = {args.match_a}: {sum(scores_a):g} of {n} ({sum(scores_a) / max(n, 1):.1%})")
    print(f"B = {args.match_b}: {sum(scores_b):g} of {n} ({sum(scores_b) / max(n, 1):.1%})")
    print(f"A - B: {result.difference:+.1%} (95 % {result.low:+.1%} .. {result.high:+.1%}, clustered by "
          f"{result.clusters} openings); games only A won: {result.only_a}, only B won: {result.only_b}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

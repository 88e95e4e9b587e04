"""How a net loses a match: its own win rate along every game, and whether it saw its losses coming.

    python -m benchmarks.losses --data-dir D MATCH [--model models:/gozero-9x9/6] [--visits 16] [--csv out.csv]

Reads the match's games (player A's side: `gozero evaluate A B`), searches every position of each with
`--model` (default: A's own net, from the match's spec) at `--visits` simulations a move (`gozero
review`'s search, `gocore.search.review`) and turns the mover's win rate into A's. Per game: the ply
from which A's win rate stays below 0.1 to the end of a lost game (above 0.9 in a won one: where it
was decided in A's eyes), A's highest win rate in the game and in the 8 plies before that, the
moves. Then, for the losses: how many A had thought won (its win rate 0.9 or more at some point) and
how many were sudden collapses (0.5 or more within the 8 plies before the decision) against slow
slides; for the wins, how many A ever thought lost (0.3 or less). The numbers say whether a net
loses by misjudging positions it thinks won (a blind spot its search cannot repair: more search
or a score utility is the wrong cure when the value and score heads are both sure) or by being
outplayed from the start. `--csv` keeps the per-game table. The review search plays no moves and
writes nothing into the data dir.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

WINDOW = 8
"""Plies before the decision in which a sudden collapse had A at 0.5 or more."""


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line; parsed before anything heavy, so that --help answers at once."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("match", help="match id (player A's side is judged)")
    parser.add_argument("--data-dir", type=Path, default=None, help="the match's data dir (and the registry's)")
    parser.add_argument("--model", default=None, help="the net that judges (default: player A's)")
    parser.add_argument("--visits", type=int, default=16, help="search simulations per position")
    parser.add_argument("--csv", type=Path, default=None, help="write the per-game table here")
    args = parser.parse_args(argv)
    if args.visits < 1:
        parser.error("--visits must be at least 1")
    return args


@dataclass(frozen=True)
class GameVerdict:
    """One game of the match in A's eyes."""

    game: int
    lost: bool
    plies: int
    decided_at: int | None  # the ply from which A's win rate stays on the final side of 0.1 / 0.9; None: never
    highest: float  # A's highest win rate in the game
    lowest: float
    before_decision: float | None  # lost: A's highest win rate in the WINDOW plies before; won: its lowest
    result: str


def judge(game: int, winrates: Sequence[float], lost: bool, result: str = "") -> GameVerdict:
    """The verdict on one game from A's win rate before each ply."""
    settled = (lambda w: w < 0.1) if lost else (lambda w: w > 0.9)
    decided = next((i for i in range(len(winrates)) if all(settled(w) for w in winrates[i:])), None)
    window = list(winrates[max(0, decided - WINDOW):decided]) if decided else []
    before = (max(window) if lost else min(window)) if window else None
    return GameVerdict(game, lost, len(winrates), decided, max(winrates, default=0.5), min(winrates, default=0.5),
                       before, result)


def summary(verdicts: Sequence[GameVerdict]) -> list[str]:
    """Lines: the losses A had thought won and the sudden ones, the wins it had thought lost."""
    losses = [v for v in verdicts if v.lost]
    wins = [v for v in verdicts if not v.lost]
    lines = [f"{len(verdicts)} games: {len(wins)} won, {len(losses)} lost (A's side)"]
    if losses:
        decided = sorted(v.decided_at for v in losses if v.decided_at is not None)
        lines += [
            f"losses A had thought won (its win rate >= 0.9 at some point): {sum(v.highest >= 0.9 for v in losses)}"
            f" of {len(losses)}; >= 0.7: {sum(v.highest >= 0.7 for v in losses)}",
            f"sudden (>= 0.5 within the {WINDOW} plies before the decision): "
            f"{sum((v.before_decision or 0) >= 0.5 for v in losses)} of {len(losses)}",
            f"decided at ply (median): {decided[len(decided) // 2] if decided else '-'} "
            f"of {sorted(v.plies for v in losses)[len(losses) // 2]} (median length)"]
    if wins:
        decided = sorted(v.decided_at for v in wins if v.decided_at is not None)
        lines.append(f"wins A had thought lost (<= 0.3 at some point): {sum(v.lowest <= 0.3 for v in wins)} of "
                     f"{len(wins)}; decided at ply (median) {decided[len(decided) // 2] if decided else '-'}")
    return lines


def player_a_model(data: Path | None, match: str) -> str:
    """The net player A's spec names (``alphazero-N...:MODEL``: MODEL); SystemExit if A is no net."""
    from storage import layout, matches
    from tasks.app.players import parse_player

    spec = matches.read_settings(layout.match_dir(layout.data_dir(data), match)).get("black", "")
    parsed = parse_player(spec) if spec else None
    if parsed is None or parsed.kind != "model":
        raise SystemExit(f"player A of {match} ({spec or 'unknown'}) is not a net: give --model")
    return parsed.command[0] if parsed.command else spec


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from benchmarks.paired import match_rows
    from gocore.nn.inference import NetEvaluator
    from gocore.rules import sgf
    from gocore.search.review import ReviewSettings, review_game
    from storage import layout, matches
    from tasks.app.models import conv_path_for, load_model
    from tasks.app.review import read_game

    data = layout.data_dir(args.data_dir)
    model = args.model or player_a_model(data, args.match)
    loaded = load_model(model, data)
    evaluator = NetEvaluator(loaded.net, conv_path=conv_path_for(loaded.net, data))
    settings = ReviewSettings(visits=args.visits)
    folder = layout.match_dir(data, args.match)
    verdicts = []
    for index, row in sorted(match_rows(data, args.match).items()):
        record = read_game(matches.sgf_path(folder, index))
        reviews = review_game(evaluator, sgf.replay(record), record.moves, settings, None)
        mine = [r.winrate_before if r.color == row["a_color"] else 1 - r.winrate_before for r in reviews]
        verdicts.append(judge(index, mine, row["a_score"] < 1, row["result"]))
        print(f"game {index}: {verdicts[-1]}", flush=True)
    print(f"\nmatch {args.match}, judged by {loaded.version} at {args.visits} visits a position")
    print("\n".join(summary(verdicts)))
    if args.csv:
        import polars as pl

        pl.DataFrame([asdict(v) for v in verdicts]).write_csv(args.csv)
        print(f"per game: {args.csv}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

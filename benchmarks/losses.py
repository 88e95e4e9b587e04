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
outplayed from the start. With a net that has the ownership head, also what it believed at the
last position A was to move and its raw value read the game won (0.8, a 90 % win rate: `SURE`): how
many of A's stones there it counted A's (ownership 0.5 or more) were GNU Go's at the end, dead; many
in the losses and none in the wins say the net loses groups it believes alive (a life-and-death
blind spot of the value and ownership heads alike). `--csv` keeps the per-game table. The review
search plays no moves and writes nothing into the data dir.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np

WINDOW = 8
"""Plies before the decision in which a sudden collapse had A at 0.5 or more."""
SURE, COUNTED, DEAD_GROUP = 0.8, 0.5, 3
"""A raw value this high reads the game won; ownership this high counts a point A's; this many stones
counted A's and dead at the end make a game's blind spot."""


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
    sure_ply: int | None = None  # the last ply (A to move) whose raw value read A winning (SURE); None: never
    dead_counted_alive: int | None = None  # A's stones there the ownership head counted A's that died


def judge(game: int, winrates: Sequence[float], lost: bool, result: str = "") -> GameVerdict:
    """The verdict on one game from A's win rate before each ply."""
    settled = (lambda w: w < 0.1) if lost else (lambda w: w > 0.9)
    decided = next((i for i in range(len(winrates)) if all(settled(w) for w in winrates[i:])), None)
    window = list(winrates[max(0, decided - WINDOW):decided]) if decided else []
    before = (max(window) if lost else min(window)) if window else None
    return GameVerdict(game, lost, len(winrates), decided, max(winrates, default=0.5), min(winrates, default=0.5),
                       before, result)


def blind_spot(values: Sequence[float], ownership: np.ndarray, stones: np.ndarray,
               final: np.ndarray) -> tuple[int | None, int | None]:
    """(index of the last of A's positions whose raw value is SURE, the stones of A there that the
    ownership head counted A's and that `final` gives the opponent), or (None, None) if A was never
    sure. `values` (P,), `ownership` (P, N*N) and `stones` (P, N*N) are A's view of A's positions
    (+1 A's), `final` (N*N,) the final owners in A's view."""
    sure = [k for k, value in enumerate(values) if value >= SURE]
    if not sure:
        return None, None
    k = sure[-1]
    died = (stones[k] == 1) & (ownership[k] >= COUNTED) & (final == -1)
    return k, int(died.sum())


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
    judged = [v for v in verdicts if v.dead_counted_alive is not None]
    if judged:
        lines.append(f"games with >= {DEAD_GROUP} of A's stones counted A's at its last sure position (raw value >= "
                     f"{SURE}) that died: " + ", ".join(
                         f"{sum(v.dead_counted_alive >= DEAD_GROUP for v in part)} of the {len(part)} {kind} it was "
                         f"sure in" for kind, part in (("losses", [v for v in judged if v.lost]),
                                                       ("wins", [v for v in judged if not v.lost]))))
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


def raw_blind_spot(evaluator: object, positions: Sequence[object], a_color: int, verdict: GameVerdict) -> GameVerdict:
    """`verdict` with `blind_spot` of A's positions of the game (`positions`: before each move and
    after the last), by the raw net (no search)."""
    mine = [i for i, position in enumerate(positions[:-1]) if position.to_play == a_color]
    if not mine:
        return verdict
    aux = evaluator.evaluate_aux([positions[i] for i in mine])
    stones = np.stack([positions[i].stones.reshape(-1) * a_color for i in mine])
    final = positions[-1].ownership().reshape(-1) * a_color
    k, died = blind_spot(aux.values, aux.ownership, stones, final)
    return replace(verdict, sure_ply=None if k is None else mine[k], dead_counted_alive=died)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from benchmarks.paired import match_rows
    from gocore.nn.inference import NetEvaluator, has_ownership
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
        positions = sgf.replay(record)
        reviews = review_game(evaluator, positions, record.moves, settings, None)
        mine = [r.winrate_before if r.color == row["a_color"] else 1 - r.winrate_before for r in reviews]
        verdict = judge(index, mine, row["a_score"] < 1, row["result"])
        if has_ownership(evaluator):
            verdict = raw_blind_spot(evaluator, positions, int(row["a_color"]), verdict)
        verdicts.append(verdict)
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

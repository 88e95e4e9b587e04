"""A game reviewed move by move: every position searched, the win rate each move gave away, the
search's best move and its principal variation, and the game record annotated with all of it.

Start at `review_game`: it searches the game's positions several at a time (`BatchedSearch`, one
evaluator call per round for all of them) and reads each tree with `gocore.search.analysis`,
then `annotate` writes the reviews into a `GameRecord` (comments, BM/TE marks, variations).

A move's loss is measured against the search's choice (KaTrain's "points lost" idea, in win
rate): none when the move is that choice, else the choice's win rate minus the move's, the move's
read from the same search when it got enough visits there and otherwise from the search of the
position after it (one minus that position's value, for the opponent). A loss of at least `blunder` marks the move
``BM[1]`` (bad move), twice that ``BM[2]``; the search's own choice, when every other searched
move would have lost at least `blunder`, is ``TE[1]`` (the one good move).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gocore.rules.board import Position
from gocore.rules.coords import pass_move, to_gtp
from gocore.rules.sgf import GameRecord, Variation
from gocore.search import mcts
from gocore.search.analysis import MoveAnalysis, PositionAnalysis, analyse

if TYPE_CHECKING:
    from gocore.nn.inference import Evaluator

COLOR_NAMES = {1: "Black", -1: "White"}
PLAYED_SHARE = 0.25  # of the choice's visits: enough for the played move's win rate in the same search


@dataclass(frozen=True)
class ReviewSettings:
    """How hard to look at each position and what counts as a mistake."""

    visits: int = 200
    """Search simulations per position."""
    blunder: float = 0.10
    """Win-rate loss (0..1) that marks a move BM[1]; twice this is BM[2]."""
    batch: int = 8
    """Positions searched together (each round evaluates up to 8 leaves of each)."""

    def __post_init__(self) -> None:
        if self.visits < 1 or self.batch < 1 or not 0 < self.blunder < 1:
            raise ValueError("ReviewSettings: visits >= 1, batch >= 1 and 0 < blunder < 1")


@dataclass(frozen=True)
class MoveReview:
    """One move of the game, judged by search."""

    number: int  # 1 = the first move
    color: int
    move: int
    before: PositionAnalysis  # the position the mover faced, from the mover's view
    after: PositionAnalysis  # the position the move left, from the opponent's view

    @property
    def winrate_before(self) -> float:
        """The mover's win rate before the move, 0..1."""
        return self.before.winrate

    @property
    def winrate_after(self) -> float:
        """The mover's win rate after the move, 0..1."""
        return self.after.winrate if self._after_is_ours else 1.0 - self.after.winrate

    @property
    def _after_is_ours(self) -> bool:
        """The next position was searched for the mover (two moves of one colour in a row)."""
        return self.after.position.to_play == self.color

    @property
    def loss(self) -> float:
        """Win rate the move gave away against the search's choice, 0..1: none when it is that
        choice; else the choice's win rate minus the move's, both from the search before the move
        when the move got at least `PLAYED_SHARE` of the choice's visits there, else the move's
        from the search of the position after it (a move the search hardly looked at)."""
        best = self.best
        if best is None:  # a finished position: nothing was searched before the move
            return max(0.0, self.winrate_before - self.winrate_after)
        if best.move == self.move:
            return 0.0
        played = self.before.of(self.move)
        looked_at = played is not None and played.visits > 0 and played.visits >= PLAYED_SHARE * best.visits
        return max(0.0, best.winrate - (played.winrate if looked_at else self.winrate_after))

    @property
    def black_winrate(self) -> float:
        """Black's win rate after the move, 0..1."""
        return self.winrate_after if self.color == 1 else 1.0 - self.winrate_after

    @property
    def score_after(self) -> float | None:
        """Points the mover leads by after the move; None when the net has no score head."""
        lead = self.after.score_lead
        return None if lead is None else lead if self._after_is_ours else -lead

    @property
    def best(self) -> MoveAnalysis | None:
        """The search's choice in the position before the move."""
        return self.before.best

    def is_only_move(self, blunder: float) -> bool:
        """The move is the search's choice and every other searched move loses `blunder` or more."""
        visited = [m for m in self.before.moves if m.visits > 0]
        return (bool(visited) and visited[0].move == self.move
                and all(visited[0].winrate - m.winrate >= blunder for m in visited[1:]) and len(visited) > 1)


def review_game(evaluator: Evaluator, positions: Sequence[Position], moves: Sequence[tuple[int, int]],
                settings: ReviewSettings = ReviewSettings(),
                on_progress: Callable[[int, int], None] | None = None) -> list[MoveReview]:
    """Search every position of a game (`positions` = before each move and after the last, as
    `sgf.replay` gives them) and judge each move; `on_progress(done, total)` after each batch."""
    if len(positions) != len(moves) + 1:
        raise ValueError("positions must be the one before each move and the one after the last")
    roots = [_facing(position, color) for position, (color, _) in zip(positions, moves)] + [positions[-1]]
    analyses = analyse_positions(evaluator, roots, settings, on_progress)
    return [MoveReview(i + 1, color, move, analyses[i], analyses[i + 1]) for i, (color, move) in enumerate(moves)]


def analyse_positions(evaluator: Evaluator, positions: Sequence[Position], settings: ReviewSettings,
                      on_progress: Callable[[int, int], None] | None = None) -> list[PositionAnalysis]:
    """Each position searched with `settings.visits` simulations and analysed; a finished game is
    scored by the rules instead."""
    config = mcts.MATCH.replace(sims=settings.visits, resign_threshold=None, temperature_moves=0)
    analyses: list[PositionAnalysis | None] = [None] * len(positions)
    todo = []
    for i, position in enumerate(positions):
        value = mcts.terminal_value(position, config.max_moves_for(position.size))
        if value is None:
            todo.append(i)
        else:
            analyses[i] = PositionAnalysis(position, 0, (1.0 + value) / 2.0, ())
    done = len(positions) - len(todo)
    for start in range(0, len(todo), settings.batch):
        chunk = todo[start:start + settings.batch]
        search = mcts.BatchedSearch(evaluator, config, [positions[i] for i in chunk], seed=start)
        search.search()
        for i, root in zip(chunk, search.roots):
            analyses[i] = analyse(root, evaluator)
        done += len(chunk)
        if on_progress is not None:
            on_progress(done, len(positions))
    return analyses  # type: ignore[return-value]


def _facing(position: Position, color: int) -> Position:
    """The position as `color` faces it: after a pass by the other side if it was not its turn
    (a record may have two moves of one colour in a row)."""
    return position if position.to_play == color else position.play(pass_move(position.size), -color)


def annotate(record: GameRecord, reviews: Sequence[MoveReview], settings: ReviewSettings) -> GameRecord:
    """The record with a comment on every reviewed move, BM/TE marks, and the search's best move
    and principal variation as a variation wherever it differs from the move played."""
    comments, marks, variations = dict(record.comments), dict(record.marks), dict(record.variations)
    for review in reviews:
        index = review.number - 1
        ours = comment(review, record.size)
        comments[index] = f"{comments[index]}\n\n{ours}" if index in comments else ours
        mark = _mark(review, settings.blunder)
        if mark:
            marks[index] = {**marks.get(index, {}), **mark}
        best = review.best
        if best is not None and best.move != review.move:
            colors = [review.color if k % 2 == 0 else -review.color for k in range(len(best.pv))]
            text = (f"gozero: {to_gtp(best.move, record.size)}, win rate {best.winrate:.1%}, "
                    f"{best.visits} visits")
            variations[index] = [*variations.get(index, []), Variation(tuple(zip(colors, best.pv)), text)]
    return dataclasses.replace(record, comments=comments, marks=marks, variations=variations)


def comment(review: MoveReview, size: int) -> str:
    """What the annotated SGF says about a move."""
    lines = [f"{COLOR_NAMES[review.color]} {to_gtp(review.move, size)}: win rate "
             f"{review.winrate_before:.1%} -> {review.winrate_after:.1%} (loss {review.loss:.1%} against gozero's choice)"]
    if review.score_after is not None:
        lines.append(f"score lead after the move: {review.score_after:+.1f}")
    best = review.best
    if best is not None:
        verdict = "gozero agrees" if best.move == review.move else f"gozero prefers {to_gtp(best.move, size)}"
        lines.append(f"{verdict} ({best.winrate:.1%}, {best.visits} visits)")
    return "\n".join(lines)


def _mark(review: MoveReview, blunder: float) -> dict[str, str]:
    if review.loss >= 2 * blunder:
        return {"BM": "2"}
    if review.loss >= blunder:
        return {"BM": "1"}
    return {"TE": "1"} if review.is_only_move(blunder) else {}


def biggest_mistakes(reviews: Sequence[MoveReview], count: int = 10) -> list[MoveReview]:
    """The moves that gave away the most win rate (a positive loss only), worst first."""
    return sorted((r for r in reviews if r.loss > 0), key=lambda r: -r.loss)[:count]

"""`gozero review`'s work: read a game, search every position with a model, write the annotated SGF
and the win-rate graph.

Reading and replaying are `gocore.rules.sgf_read` / `sgf`; the search and the judging of moves
`gocore.search.review`; where the files go and how they are written `storage.reviews`. The graph
is drawn here with matplotlib (Agg, imported only when a review is written).
"""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from gocore.errors import GozeroError
from gocore.rules import sgf, sgf_read
from gocore.search.review import MoveReview, ReviewSettings, annotate, review_game
from storage.reviews import ReviewPaths, review_paths, write_review
from tasks.app.models import ModelError, conv_path_for, default_model_uri, load_model
from tasks.app.sizes import size_of


class ReviewError(GozeroError):
    """A game or a model that cannot be reviewed (unreadable SGF, a net of another size...)."""


@dataclass(frozen=True)
class GameReview:
    """A finished review: what was reviewed, with which model, each move's verdict, and the files."""

    record: sgf.GameRecord
    model: str  # the model's version (NAME/VERSION) or directory
    moves: tuple[MoveReview, ...]
    first_black_winrate: float  # black's win rate in the position before the first move
    paths: ReviewPaths


def review_sgf(game: Path, model: str | None = None, settings: ReviewSettings = ReviewSettings(),
               data: Path | None = None, out_dir: Path | None = None,
               on_progress: Callable[[int, int], None] | None = None) -> GameReview:
    """Review the first game of the SGF file `game` with `model` (default: the champion of its board
    size), write GAME-review.sgf and GAME-winrate.png (`storage.reviews`) and return the review."""
    from gocore.nn.inference import NetEvaluator

    record = read_game(game)
    if model is not None and (named := size_of(model)) not in (None, record.size):  # before loading it
        raise ReviewError(f"{model} plays {named}x{named}; {game} is a {record.size}x{record.size} game")
    positions = sgf.replay(record)
    try:
        loaded = load_model(model or default_model_uri(record.size), data)
    except ModelError as error:
        if model is not None:
            raise
        raise ReviewError(f"{game} is a {record.size}x{record.size} game and there is no "
                          f"{default_model_uri(record.size)} to review it with: give one with --model "
                          f"(a {record.size}x{record.size} model) ({error})") from error
    config = loaded.net.config
    if config.board_size != record.size:
        raise ReviewError(f"{loaded.version} plays {config.board_size}x{config.board_size}; "
                          f"{game} is a {record.size}x{record.size} game")
    if config.family != "dual":
        raise ReviewError(f"{loaded.version} is a {config.family} net: a review needs a dual net (policy and value)")
    evaluator = NetEvaluator(loaded.net, conv_path=conv_path_for(loaded.net, data))
    reviews = review_game(evaluator, positions, record.moves, settings, on_progress)
    first = reviews[0].before if reviews else None
    first_black = 0.5 if first is None else first.winrate if first.position.to_play == 1 else 1 - first.winrate
    paths = review_paths(game, out_dir)
    write_review(paths, sgf.write(annotate(record, reviews, settings)),
                 winrate_graph(first_black, reviews, settings.blunder, title=f"{game.name} ({loaded.version})"))
    return GameReview(record, loaded.version, tuple(reviews), first_black, paths)


def read_game(game: Path) -> sgf.GameRecord:
    """The first game of an SGF file; ReviewError if it cannot be read."""
    try:
        records = sgf_read.read_games(game.read_bytes(), source=str(game))
    except OSError as error:
        raise ReviewError(f"cannot read {game}: {error.strerror or error}") from None
    if not records:
        raise ReviewError(f"{game} holds no game")
    return records[0]


def winrate_graph(first_black: float, reviews: Sequence[MoveReview], blunder: float, title: str) -> bytes:
    """A PNG of black's win rate before the first move and after every move, mistakes marked."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    numbers = [0, *(r.number for r in reviews)]
    black = [100 * first_black, *(100 * r.black_winrate for r in reviews)]
    figure = Figure(figsize=(8, 3.2), dpi=100)
    axes = figure.add_subplot()
    axes.fill_between(numbers, black, 50, color="0.85")
    axes.plot(numbers, black, color="black", linewidth=1.2)
    axes.axhline(50, color="0.5", linewidth=0.6)
    for color, label, marked in (
            ("red", f"lost {2 * blunder:.0%} or more", [r for r in reviews if r.loss >= 2 * blunder]),
            ("orange", f"lost {blunder:.0%} to {2 * blunder:.0%}", [r for r in reviews if blunder <= r.loss < 2 * blunder])):
        if marked:
            axes.scatter([r.number for r in marked], [100 * r.black_winrate for r in marked], color=color, s=14,
                         zorder=3, label=label)
    axes.set(xlim=(0, max(numbers[-1], 1)), ylim=(0, 100), xlabel="move", ylabel="black win rate (%)", title=title)
    if axes.get_legend_handles_labels()[0]:
        axes.legend(loc="upper right", fontsize="small")
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()

"""`gozero review GAME.sgf`: every position of a game searched by a model; an annotated SGF, a
win-rate graph and the biggest mistakes.

The work is `tasks.app.review.review_sgf` (which writes GAME-review.sgf and GAME-winrate.png beside
the game, `storage.reviews`); this command shows a progress bar while it runs and then the table
of mistakes. flows/cli/root.py mounts `review` as a command.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from flows.cli.common import (
    DATA_DIR_HELP,
    THREADS_HELP,
    console,
    shard_progress,
    shipped_ready,
    use_threads,
    user_errors,
)


def review(
    game: Annotated[Path, typer.Argument(help="the SGF game to review (the first game of the file)")],
    model: Annotated[str | None, typer.Option(help="models:/NAME@ALIAS, models:/NAME/VERSION or a model directory "
                                              "(default: models:/gozero-<SIZE>x<SIZE>@champion)")] = None,
    visits: Annotated[int, typer.Option(min=1, help="search simulations per position")] = 200,
    blunder: Annotated[float, typer.Option(min=0.01, max=0.5, help="win-rate loss that marks a move BM "
                                                                   "(twice this: a very bad move)")] = 0.10,
    mistakes: Annotated[int, typer.Option(min=0, help="rows of the table of biggest mistakes")] = 10,
    out_dir: Annotated[Path | None, typer.Option(help="write the review here (default: beside the game)")] = None,
    data_dir: Annotated[Path | None, typer.Option(help=DATA_DIR_HELP)] = None,
    threads: Annotated[int | None, typer.Option(min=1, help=THREADS_HELP)] = None,
) -> None:
    """Review a game with a model: annotated SGF, win-rate graph, biggest mistakes."""
    from gocore.search.review import ReviewSettings
    from tasks.app.review import review_sgf

    use_threads(threads)
    model = shipped_ready(data_dir, model)[0]
    progress = [0, 0]

    def on_progress(done: int, total: int) -> None:
        progress[:] = [done, total]

    with shard_progress(lambda: (progress[0], progress[1]), "analysing positions"), user_errors():
        result = review_sgf(game, model, ReviewSettings(visits=visits, blunder=blunder), data_dir, out_dir,
                            on_progress)
    print_mistakes(result, mistakes)
    console.print(f"annotated game: {result.paths.sgf}\nwin-rate graph: {result.paths.graph}", soft_wrap=True)


def print_mistakes(result, count: int) -> None:
    """The biggest mistakes of a review as a rich table."""
    from rich.table import Table

    from gocore.rules.coords import to_gtp
    from gocore.search.review import COLOR_NAMES, biggest_mistakes

    size = result.record.size
    table = Table(title=f"biggest mistakes ({len(result.moves)} moves, {result.model})")
    for column in ("move", "player", "played", "best", "win rate before", "after", "loss"):
        table.add_column(column, justify="left" if column in ("player", "played", "best") else "right")
    for review in biggest_mistakes(result.moves, count):
        best = review.best
        table.add_row(str(review.number), COLOR_NAMES[review.color], to_gtp(review.move, size),
                      "" if best is None else to_gtp(best.move, size), f"{review.winrate_before:.1%}",
                      f"{review.winrate_after:.1%}", f"{review.loss:.1%}")
    console.print(table)

"""`gozero ladder`: the Elo ladder of a board size, fitted from every game our players played.

By default it only reads: the ratings table (``<data>/ratings/``, filled by every finished match)
is fitted here and printed, best first. ``--play`` first runs the `ladder` flow (flows/ladder.py):
the champion (or ``--player``) plays its most informative opponents, then the ladder is refitted,
written to ladder.json and logged to MLflow. flows/cli/root.py mounts `ladder` as a command.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from flows.cli.common import (
    DATA_DIR_HELP,
    SIZE_HELP,
    WORKERS_DEVICE_HELP,
    checked_device,
    console,
    quiet_prefect,
    shipped_ready,
    user_errors,
)
from flows.cli.fields import declared_fields, field_option

if TYPE_CHECKING:  # the real imports wait for the command to run: `gozero --help` stays fast
    from tasks.ladder import Ladder

LADDER = declared_fields("tasks.app.ladder_settings", "LadderSettings")


def ladder(
    size: Annotated[int | None, typer.Option(min=5, max=19, help=SIZE_HELP)] = None,
    data_dir: Annotated[Path | None, typer.Option(help=DATA_DIR_HELP)] = None,
    play: Annotated[bool, typer.Option(help="first play ladder games for the champion (or --player)")] = False,
    player: Annotated[str | None, typer.Option(help="the player to rate with --play (default: the champion)")] = None,
    games_per_opponent: Annotated[int | None, field_option(LADDER, "games_per_opponent", min=1)] = None,
    opponents: Annotated[int | None, field_option(LADDER, "opponents", min=1)] = None,
    sims: Annotated[int | None, field_option(LADDER, "sims", min=1)] = None,
    workers: Annotated[int | None, typer.Option(min=1, help="game processes with --play (default: cores)")] = None,
    dask_address: Annotated[str | None, typer.Option(help="with --play, run the games on this Dask scheduler")] = None,
    device: Annotated[str, typer.Option(help="with --play, " + WORKERS_DEVICE_HELP)] = "cpu",
    verbose: Annotated[bool, typer.Option(help="show Prefect's logs (with --play)")] = False,
) -> None:
    """Print the Elo ladder (random = 0) of every player with games on this board size."""
    quiet_prefect(verbose, data_dir)
    from storage import layout
    from tasks.app.sizes import resolve_size
    from tasks.ladder import Ladder, ladder_rows

    data = layout.data_dir(data_dir)
    if play:
        checked_device(device)
    player = shipped_ready(data_dir, player)[0]
    with user_errors():
        size = resolve_size(size, player)
        if play:
            from flows.ladder import run_ladder
            from tasks.app.ladder_settings import LadderSettings

            given = {"games_per_opponent": games_per_opponent, "opponents": opponents, "sims": sims}
            settings = LadderSettings(size=size, device=device,
                                      **{key: value for key, value in given.items() if value is not None})
            result = run_ladder(settings, player, str(data), workers=workers, dask_address=dask_address)
        else:
            result = Ladder(size, ladder_rows(data, size))
    if not result.rows:
        console.print(f"no rated games on {size}x{size} yet in {data}: play some (gozero ladder --play, "
                      "gozero evaluate A random)", soft_wrap=True)
        return
    console.print(ladder_table(result))


def ladder_table(result: Ladder) -> Table:
    """The ladder as a rich table, best first."""
    from flows.ladder import ladder_cells

    played = f", {len(result.matches)} ladder matches this run" if result.matches else ""
    table = Table(title=f"Elo ladder {result.size}x{result.size} (random = 0){played}")
    cells = [ladder_cells(row) for row in result.rows]
    for column in cells[0]:
        table.add_column(column, justify="left" if column == "player" else "right")
    for row in cells:
        table.add_row(*row.values())
    return table

"""The `gozero` typer app: mounts every command group of flows/cli/ and holds the small commands.

Heavy imports (Prefect, torch, MLflow) happen inside the commands that need them, so
`gozero --help` and `gozero play` start fast. Errors a user can fix print one red line and exit 1.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Annotated

import typer

from flows.cli.alphago import alphago as alphago_command
from flows.cli.analysis import analysis as analysis_command
from flows.cli.baghchal import baghchal_app
from flows.cli.common import (
    DATA_DIR_HELP,
    SIZE_HELP,
    THREADS_HELP,
    console,
    fail,
    handle_interrupts,
    interrupted_by,
    quiet_prefect,
    report_interrupt,
    shard_progress,
    shipped_ready,
    use_threads,
    user_errors,
)
from flows.cli.datasets import datasets_app
from flows.cli.evaluate import evaluate as evaluate_command
from flows.cli.gtp import gtp
from flows.cli.ladder import ladder as ladder_command
from flows.cli.loop import loop as loop_command
from flows.cli.loop import run as run_command
from flows.cli.models import models_app
from flows.cli.review import review as review_command
from flows.cli.selfplay import selfplay as selfplay_command
from flows.cli.serve import serve as serve_command
from flows.cli.strong import strong as strong_command
from flows.cli.train import train_command
from tasks.app.players import SPECS_HELP
from tasks.app.sizes import DEFAULT_SIZE

app = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode=None,
                  help="AlphaGo and AlphaGo Zero for Go, as a Prefect + MLflow pipeline.")
@app.command()
def play(
    black: Annotated[str, typer.Option(help=f"black player: {SPECS_HELP}")] = "uct-400",
    white: Annotated[str, typer.Option(help=f"white player: {SPECS_HELP}")] = "random",
    size: Annotated[int | None, typer.Option(min=5, max=19, help=SIZE_HELP)] = None,
    komi: Annotated[float, typer.Option(help="komi (Tromp-Taylor area scoring)")] = 7.5,
    sims: Annotated[int, typer.Option(min=1, help="simulations per move for nets and a bare 'uct'")] = 100,
    seed: Annotated[int, typer.Option(help="random seed for both players")] = 0,
    data_dir: Annotated[Path | None, typer.Option(help=DATA_DIR_HELP)] = None,
    sgf_out: Annotated[Path | None, typer.Option("--sgf", help="also write the game as SGF here")] = None,
    threads: Annotated[int | None, typer.Option(min=1, help=THREADS_HELP + " (with a net)")] = None,
) -> None:
    """Play one game between two players (ours, nets or GTP engines) and print it."""
    from gocore.play.match import play_game
    from gocore.rules.coords import to_gtp
    from storage.layout import data_dir as resolve_data_dir
    from tasks.app.players import PlayerSettings, build_player, has_net
    from tasks.app.sizes import resolve_size

    black, white = shipped_ready(data_dir, black, white)
    with user_errors():
        size = resolve_size(size, black, white)
    settings = PlayerSettings(size=size, komi=komi, sims=sims, sample_opening=False)
    if sgf_out is not None and sgf_out.exists():
        raise fail(f"{sgf_out} already exists: give another --sgf path (or remove that file)")
    with user_errors():
        if has_net((black, white)):
            use_threads(threads)
        sides = [build_player(spec, settings, resolve_data_dir(data_dir)) for spec in (black, white)]
    console.print(f"[bold]{black}[/] (black) vs [bold]{white}[/] (white), {size}x{size}, komi {komi:g}")
    start, line = time.perf_counter(), []

    def show(position, move):
        line.append(to_gtp(move, size))
        if len(line) % 20 == 0:
            console.print(f"  moves {len(line) - 19:>3}-{len(line):<3} " + " ".join(line[-20:]))

    try:
        game = play_game(sides[0].make(seed), sides[1].make(seed + 1), size=size, komi=komi, on_move=show)
    finally:
        for side in sides:
            side.close()
    if len(line) % 20:
        console.print(f"  moves {len(line) - len(line) % 20 + 1:>3}-{len(line):<3} " + " ".join(line[-(len(line) % 20):]))
    console.print(game.final.to_ascii())
    console.print(f"result [bold]{game.result}[/] after {len(game.moves)} moves ({game.reason}), "
                  f"{time.perf_counter() - start:.1f} s")
    if game.detail:  # a forfeit (crash, timeout, illegal move) or a disputed count: why
        console.print(f"  {game.detail}", soft_wrap=True, markup=False, highlight=False)
    if sgf_out is not None:
        write_game_sgf(game, sgf_out, sides[0].display, sides[1].display)
        console.print(f"SGF written to {sgf_out}")


def write_game_sgf(game, path: Path, black: str, white: str) -> None:
    """Write a played game as SGF, atomically."""
    from gocore.rules import sgf
    from storage.atomic import write_bytes

    record = sgf.GameRecord(size=game.final.size, komi=game.final.komi, rules="Chinese",
                            moves=list(game.moves), result=game.result, winner=game.winner,
                            player_black=black, player_white=white)
    write_bytes(path, sgf.write(record).encode())


@app.command()
def ingest(
    sources: Annotated[list[str], typer.Argument(help="URLs, file:// URLs, local paths, catalog names like cgos-9x9:2023-01..2023-03, or GNU Go self-play: gnugo-9x9:level=1,games=100")],
    dataset: Annotated[str, typer.Option(help="dataset name: <data>/datasets/NAME")],
    data_dir: Annotated[Path | None, typer.Option(help=DATA_DIR_HELP)] = None,
    encoder: Annotated[str, typer.Option(help="feature encoder: agz17 (AlphaGo Zero's stones), tactical (agz17 "
                                         "+ liberties, captures, ladders), alphago48 / alphago49 (AlphaGo 2016's "
                                         "policy / value input) or oneplane")] = "agz17",
    augment: Annotated[str, typer.Option(help="all8, random1 or none")] = "all8",
    size: Annotated[int | None, typer.Option(min=5, max=19, help=f"keep games of this board size (default: the "
                                             "one size the sources name or their games say, else "
                                             f"{DEFAULT_SIZE}; sources of several sizes need it; a size GNU Go or "
                                             "catalog sources contradict is refused)")] = None,
    handicap: Annotated[bool, typer.Option(help="keep handicap games")] = True,
    min_moves: Annotated[int, typer.Option(min=0, help="refuse games with fewer moves")] = 1,
    require_result: Annotated[bool, typer.Option(help="refuse games without a known winner")] = True,
    workers: Annotated[int | None, typer.Option(min=1, help="encoding processes (default: cores)")] = None,
    dask_address: Annotated[str | None, typer.Option(help="run the encode tasks on this Dask scheduler")] = None,
    replace: Annotated[bool, typer.Option(help="rebuild an existing dataset of this name from other sources or "
                                          "options (else refused: models trained on it would point at new data)")] = False,
    verbose: Annotated[bool, typer.Option(help="show Prefect's logs (they are always in the Prefect UI)")] = False,
) -> None:
    """Download SGF sources and encode them to a Parquet dataset (flows/ingest.py)."""
    quiet_prefect(verbose, data_dir)
    from gocore.nn.encode import EncodeOptions
    from tasks.app.sizes import resolve_ingest_size

    with user_errors():  # before any game is fetched or played
        size = resolve_ingest_size(size, sources, data_dir)
    try:
        options = EncodeOptions(encoder=encoder, augment=augment, size=size, allow_handicap=handicap,
                                min_moves=min_moves, require_result=require_result)
    except (KeyError, ValueError) as error:
        raise fail(str(error).strip("'\"")) from None
    from flows.ingest import dataset_progress, run_ingest

    data = str(data_dir) if data_dir is not None else None
    with shard_progress(lambda: dataset_progress(data, dataset), "encoding shards"), user_errors():
        facts = run_ingest(sources, dataset, data, options, workers=workers, dask_address=dask_address,
                           replace=replace)
    print_dataset_summary(dataset, facts)


def print_dataset_summary(name: str, facts: dict) -> None:
    """The dataset summary as rich tables."""
    from rich.table import Table

    table = Table(title=f"dataset {name}: {facts.dataset}")
    table.add_column("measure")
    table.add_column("value", justify="right")
    for key in ("games", "positions", "rows", "bytes", "games_refused"):
        table.add_row(key, f"{getattr(facts, key):,}")
    table.add_row("bytes per row on disk", f"{facts.bytes_per_row:.1f}")
    for title, values in (("result", facts.results), ("length", facts.length_histogram),
                          ("refused", facts.refusals)):
        for key, value in values.items():
            table.add_row(f"{title}: {key}", f"{value:,}")
    console.print(table)


app.command()(gtp)
app.command("evaluate")(evaluate_command)
app.command("ladder")(ladder_command)
app.command("train")(train_command)
app.command("selfplay")(selfplay_command)
app.command("loop")(loop_command)
app.command("run")(run_command)
app.command("review")(review_command)
app.command("analysis")(analysis_command)
app.command("alphago")(alphago_command)
app.command("strong")(strong_command)
app.command("serve")(serve_command)
app.add_typer(models_app, name="models")
app.add_typer(datasets_app, name="datasets")
app.add_typer(baghchal_app, name="baghchal")


def _print_version(asked: bool) -> None:
    if asked:
        from importlib.metadata import version

        console.print(f"gozero {version('gozero')}")
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[bool, typer.Option("--version", callback=_print_version, is_eager=True,
                                          help="print gozero's version and exit")] = False,
) -> None:
    """AlphaGo and AlphaGo Zero for Go, as a Prefect + MLflow pipeline."""


def main() -> None:
    """Console-script entry point: this process and the workers it starts keep freed memory
    (`gocore.malloc`); Ctrl-C and SIGTERM stop the command cleanly (`handle_interrupts`) and end
    with one line, however the interrupt surfaced; then the command. The fork server its pools
    forked from ends with it and is reaped, so their CPU reaches whoever timed the command. The
    objects left at the end are frozen out of the interpreter's exit collections: with torch, Prefect
    and MLflow imported those took 2.5 s after a small self-play run (`benchmarks/cli_exit.py`) and
    5.5-6 s after a loop (a Ctrl-C'd loop took 5.5-6.5 s to end, past 10 s on a loaded machine); the
    operating system frees them at once."""
    import gc

    from gocore.children import stop_fork_server
    from gocore.malloc import keep_freed_memory

    keep_freed_memory()
    handle_interrupts()
    try:
        app()
    except BaseException as error:
        signum = interrupted_by()
        if signum is None or (isinstance(error, SystemExit) and error.code in (0, None)):
            raise
        sys.exit(report_interrupt(signum))
    finally:
        if interrupted_by() is None:  # interrupted: the server dies with this process (die_with_parent)
            stop_fork_server()
        gc.freeze()  # atexit handlers still run; the exit's collections skip the frozen objects

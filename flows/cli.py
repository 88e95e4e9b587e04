"""The `gozero` command line: one typer app over the flows, storage and the Go engine.

Heavy imports (Prefect, torch, MLflow) happen inside the commands that need them, so
`gozero --help` and `gozero play` start fast. Errors a user can fix print one red line and exit 1.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from flows.cli_common import console, fail, quiet_prefect
from flows.cli_evaluate import evaluate as evaluate_command
from flows.cli_gtp import gtp
from flows.cli_models import models_app
from flows.cli_selfplay import selfplay as selfplay_command
from flows.cli_train import train_command

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="AlphaGo and AlphaGo Zero for Go, as a Prefect + MLflow pipeline.")
AGENT_HELP = "random, or uct[-SIMULATIONS] (UCT with random playouts), e.g. uct-800"


def make_agent(spec: str, seed: int):
    """An agent from a short spec such as ``random`` or ``uct-400``; ValueError if unknown."""
    from gocore.search.agents import RandomAgent, UCTAgent

    name, _, arg = spec.partition("-")
    if name == "random" and not arg:
        return RandomAgent(seed=seed)
    if name == "uct" and (not arg or arg.isdigit()):
        return UCTAgent(simulations=int(arg or 800), seed=seed)
    raise ValueError(f"unknown agent {spec!r}: use {AGENT_HELP}")


@app.command()
def play(
    black: Annotated[str, typer.Option(help=f"black player: {AGENT_HELP}")] = "uct-400",
    white: Annotated[str, typer.Option(help=f"white player: {AGENT_HELP}")] = "random",
    size: Annotated[int, typer.Option(min=5, max=19, help="board size")] = 9,
    komi: Annotated[float, typer.Option(help="komi (Tromp-Taylor area scoring)")] = 7.5,
    seed: Annotated[int, typer.Option(help="random seed for both players")] = 0,
    sgf_out: Annotated[Path | None, typer.Option("--sgf", help="also write the game as SGF here")] = None,
) -> None:
    """Play one game between two built-in agents and print it."""
    from gocore.play.match import play_game
    from gocore.rules.coords import to_gtp

    try:
        players = make_agent(black, seed), make_agent(white, seed + 1)
    except ValueError as error:
        raise fail(str(error)) from None
    console.print(f"[bold]{black}[/] (black) vs [bold]{white}[/] (white), {size}x{size}, komi {komi:g}")
    start, line = time.perf_counter(), []

    def show(position, move):
        line.append(to_gtp(move, size))
        if len(line) % 20 == 0:
            console.print(f"  moves {len(line) - 19:>3}-{len(line):<3} " + " ".join(line[-20:]))

    game = play_game(*players, size=size, komi=komi, on_move=show)
    if len(line) % 20:
        console.print(f"  moves {len(line) - len(line) % 20 + 1:>3}-{len(line):<3} " + " ".join(line[-(len(line) % 20):]))
    console.print(game.final.to_ascii())
    console.print(f"result [bold]{game.result}[/] after {len(game.moves)} moves ({game.reason}), "
                  f"{time.perf_counter() - start:.1f} s")
    if sgf_out is not None:
        write_game_sgf(game, sgf_out, black, white)
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
def run(
    data_dir: Annotated[Path | None, typer.Option(help="data dir (default $GOZERO_DATA or ./gozero-data)")] = None,
) -> None:
    """The main job on embedded defaults: one 9x9 game, UCT (400 playouts/move) vs random, saved as SGF."""
    from storage.layout import data_dir as resolve_data_dir

    out = resolve_data_dir(data_dir) / "games" / f"run-{time.strftime('%Y%m%d-%H%M%S')}.sgf"
    play(black="uct-400", white="random", size=9, komi=7.5, seed=0, sgf_out=out)


@app.command()
def ingest(
    sources: Annotated[list[str], typer.Argument(help="URLs, file:// URLs, local paths, or catalog names like cgos-9x9:2023-01..2023-03")],
    dataset: Annotated[str, typer.Option(help="dataset name: <data>/datasets/NAME")],
    data_dir: Annotated[Path | None, typer.Option(help="data dir (default $GOZERO_DATA or ./gozero-data)")] = None,
    encoder: Annotated[str, typer.Option(help="feature encoder: agz17 or oneplane")] = "agz17",
    augment: Annotated[str, typer.Option(help="all8, random1 or none")] = "all8",
    size: Annotated[int, typer.Option(min=5, max=19, help="keep games of this board size")] = 9,
    handicap: Annotated[bool, typer.Option(help="keep handicap games")] = True,
    min_moves: Annotated[int, typer.Option(min=0, help="refuse games with fewer moves")] = 1,
    require_result: Annotated[bool, typer.Option(help="refuse games without a known winner")] = True,
    workers: Annotated[int | None, typer.Option(min=1, help="encoding processes (default: cores)")] = None,
    dask_address: Annotated[str | None, typer.Option(help="run the encode tasks on this Dask scheduler")] = None,
    verbose: Annotated[bool, typer.Option(help="show Prefect's logs (they are always in the Prefect UI)")] = False,
) -> None:
    """Download SGF sources and encode them to a Parquet dataset (flows/ingest.py)."""
    quiet_prefect(verbose)
    from gocore.nn.encode import EncodeOptions

    try:
        options = EncodeOptions(encoder=encoder, augment=augment, size=size, allow_handicap=handicap,
                                min_moves=min_moves, require_result=require_result)
    except (KeyError, ValueError) as error:
        raise fail(str(error).strip("'\"")) from None
    from flows.ingest import dataset_progress, run_ingest

    data = str(data_dir) if data_dir is not None else None
    with shard_progress(lambda: dataset_progress(data, dataset), "encoding shards"):
        try:
            facts = run_ingest(sources, dataset, data, options, workers=workers, dask_address=dask_address)
        except Exception as error:  # the flow re-raises the task's error: show it as one line
            raise fail(f"{type(error).__name__}: {error}") from None
    print_dataset_summary(dataset, facts)


def shard_progress(poll, description: str):
    """A progress bar, fed from `poll() -> (done, total)` by a background thread, while a block runs."""
    import contextlib
    import threading

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    @contextlib.contextmanager
    def running():
        stop = threading.Event()
        with Progress(TextColumn(description), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      console=console, transient=True) as bar:
            task_id = bar.add_task(description, total=None)

            def update() -> None:
                while not stop.wait(0.5):
                    done, total = poll()
                    bar.update(task_id, completed=done, total=total or None)

            thread = threading.Thread(target=update, daemon=True)
            thread.start()
            try:
                yield
            finally:
                stop.set()
                thread.join()

    return running()


def print_dataset_summary(name: str, facts: dict) -> None:
    """The dataset summary as rich tables."""
    from rich.table import Table

    table = Table(title=f"dataset {name}: {facts['dataset']}")
    table.add_column("measure")
    table.add_column("value", justify="right")
    for key in ("games", "positions", "rows", "bytes", "games_refused"):
        table.add_row(key, f"{facts[key]:,}")
    table.add_row("bytes per row on disk", f"{facts['bytes_per_row']:.1f}")
    for title, values in (("result", facts["results"]), ("length", facts["length_histogram"]),
                          ("refused", facts["refusals"])):
        for key, value in values.items():
            table.add_row(f"{title}: {key}", f"{value:,}")
    console.print(table)


app.command()(gtp)
app.command("evaluate")(evaluate_command)
app.command("train")(train_command)
app.command("selfplay")(selfplay_command)
app.add_typer(models_app, name="models")


def main() -> None:
    """Console-script entry point."""
    app()


if __name__ == "__main__":
    main()

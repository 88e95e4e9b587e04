"""The `gozero` command line: one typer app over the flows, storage and the Go engine.

Heavy imports (Prefect, torch, MLflow) happen inside the commands that need them, so
`gozero --help` and `gozero play` start fast. Errors a user can fix print one red line and exit 1.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="AlphaGo and AlphaGo Zero for Go, as a Prefect + MLflow pipeline.")
console = Console()
AGENT_HELP = "random, or uct[-SIMULATIONS] (UCT with random playouts), e.g. uct-800"


def fail(message: str) -> typer.Exit:
    """Print one clear line and give the exit to raise."""
    console.print(f"[bold red]error:[/] {message}")
    return typer.Exit(1)


def make_agent(spec: str, seed: int):
    """An agent from a short spec such as ``random`` or ``uct-400``."""
    from gocore.agents import RandomAgent, UCTAgent

    name, _, arg = spec.partition("-")
    if name == "random" and not arg:
        return RandomAgent(seed=seed)
    if name == "uct" and (not arg or arg.isdigit()):
        return UCTAgent(simulations=int(arg or 800), seed=seed)
    raise fail(f"unknown agent {spec!r}: use {AGENT_HELP}")


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
    from gocore.coords import to_gtp
    from gocore.match import play_game

    players = make_agent(black, seed), make_agent(white, seed + 1)
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
    from gocore import sgf
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


def main() -> None:
    """Console-script entry point."""
    app()


if __name__ == "__main__":
    main()

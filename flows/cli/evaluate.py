"""`gozero evaluate A B`: a match between two players with a live score, then the verdict.

Players are specs (tasks/app/players.py): ``random``, ``uct[-N]``, ``gnugo[-LEVEL]``,
``gtp:COMMAND`` (any GTP engine), ``models:/NAME@ALIAS``, a model directory or ``alphazero-N:MODEL``
(a net searching N simulations whatever ``--sims`` says).

By default the games are played here, one after another, without a Prefect server (no start-up
cost, and the score updates the moment a game ends). ``--workers N`` runs the `evaluate` flow on
a process pool of N (or ``--dask-address``); the score is then polled from the match directory
twice a second. Either way the match is one `MatchSettings` and one body, `tasks.app.evaluate.run_match`
(here through `play_match_here`, the flow with its workers): the CLI assembles no match logic of
its own. The match lives in ``<data>/matches/<id>/`` and rerunning with the same ``--match-id``
resumes it. flows/cli/root.py mounts `evaluate` as a command.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.live import Live
from rich.table import Table

from flows.cli.common import (
    DATA_DIR_HELP,
    DEVICE_NAMES,
    SIZE_HELP,
    THREADS_HELP,
    checked_device,
    console,
    fail,
    quiet_prefect,
    shipped_ready,
    use_threads,
    user_errors,
)

if TYPE_CHECKING:  # the real imports wait for a command to run: `gozero --help` stays fast
    from gocore.play.ratings import SprtConfig
    from tasks.app.evaluate import MatchSettings

PLAYER_HELP = ("random, uct[-N], gnugo[-LEVEL], 'gtp:COMMAND', models:/NAME@ALIAS, a model dir or "
               "alphazero-N[,score=W]:MODEL (a net at its own simulations)")


def evaluate(
    black: Annotated[str, typer.Argument(help=f"player A, black in even games (the challenger): {PLAYER_HELP}")],
    white: Annotated[str, typer.Argument(help="player B, black in odd games (the champion)")],
    games: Annotated[int, typer.Option(min=1, help="games to play (colours alternate)")] = 40,
    sims: Annotated[int, typer.Option(min=1, help="simulations per move for nets and a bare 'uct'")] = 100,
    match_id: Annotated[str | None, typer.Option(help="match name; an existing one is resumed (default: new)")] = None,
    data_dir: Annotated[Path | None, typer.Option(help=DATA_DIR_HELP)] = None,
    size: Annotated[int | None, typer.Option(min=5, max=19, help=SIZE_HELP)] = None,
    komi: Annotated[float, typer.Option(help="komi (Chinese rules, Tromp-Taylor count)")] = 7.5,
    max_moves: Annotated[int | None, typer.Option(min=1, help="move cap per game (default 3*N*N)")] = None,
    seed: Annotated[int, typer.Option(help="base seed of our agents, engines' per-game seeds and the openings")] = 0,
    opening: Annotated[int, typer.Option(min=0, help="random moves that open each pair of games (one game with "
                                                     "each colour); 0: none")] = 2,
    gate: Annotated[float | None, typer.Option(min=0.0, max=1.0, help="win rate A needs to pass the gate (the verdict shows the gate only with --gate or --sprt; default 0.55)")] = None,
    sprt: Annotated[bool, typer.Option(help="stop early once an SPRT decides (elo0 vs elo1)")] = False,
    elo0: Annotated[float, typer.Option(help="SPRT H0: A is this many Elo stronger")] = 0.0,
    elo1: Annotated[float, typer.Option(help="SPRT H1: A is this many Elo stronger (35 ≈ 55 %)")] = 35.0,
    gtp_timeout: Annotated[float, typer.Option(min=0.1, help="seconds an engine gets per GTP command")] = 30.0,
    workers: Annotated[int, typer.Option(min=0, help="0: play here; N: the Prefect flow on N processes")] = 0,
    dask_address: Annotated[str | None, typer.Option(help="run the flow's games on this Dask scheduler")] = None,
    threads: Annotated[int | None, typer.Option(min=1, help=THREADS_HELP + " (with a net playing here)")] = None,
    device: Annotated[str | None, typer.Option(help=f"where nets run: {DEVICE_NAMES} (default: auto when "
                                                   "playing here, cpu with --workers or --dask-address: with a "
                                                   "GPU each worker process holds its own CUDA context)")] = None,
    verbose: Annotated[bool, typer.Option(help="show Prefect's logs (with --workers)")] = False,
) -> None:
    """Play a match between two players, live, and print the win rate, Elo and gate decision."""
    quiet_prefect(verbose, data_dir)  # before Prefect is imported: its console logs would tear through the live score
    from gocore.play.match import MatchConfig
    from gocore.play.ratings import SprtConfig
    from storage import layout, matches
    from tasks.app.evaluate import MatchSettings
    from tasks.app.players import build_player, has_net
    from tasks.app.sizes import resolve_size

    here = workers == 0 and not dask_address
    device = checked_device(device or ("auto" if here else "cpu"))
    black, white = shipped_ready(data_dir, black, white)
    with user_errors():
        size = resolve_size(size, black, white)
    settings = MatchSettings(black, white, games, sims, MatchConfig(size, komi, max_moves, seed, opening), gtp_timeout,
                             device)
    match_id = match_id or matches.default_match_id(black, white)
    data = layout.data_dir(data_dir)
    try:
        sprt_config = SprtConfig(elo0, elo1) if sprt else None
    except ValueError as error:
        raise fail(str(error)) from None
    with user_errors():
        if has_net((black, white)) and not workers:
            use_threads(threads)
        match = layout.match_dir(data, match_id)
        for spec in (black, white):  # a bad spec fails now, before any server or engine starts
            build_player(spec, settings.player_settings(), data).close()
    console.print(f"match [bold]{match_id}[/]: A = [bold]{black}[/], B = [bold]{white}[/], {games} games, "
                  f"{size}x{size}, komi {komi:g} -> {match}", soft_wrap=True)
    threshold = 0.55 if gate is None else gate
    if here:
        summary = _play_here(match, settings, threshold, sprt_config)
        from tasks.ladder import tag_registered_players

        with user_errors():
            tag_registered_players(settings, data)  # as the flow does after its match
    else:
        summary = _run_flow(match, settings, threshold, sprt_config, workers, dask_address)
    console.print(summary_table(summary, show_gate=gate is not None or sprt))
    for side, spec in (("A", black), ("B", white)):
        if summary["games"] and summary[f"{side.lower()}_failures"] == summary["games"]:
            why = next((d for k, d in summary["failure_details"].items() if k.startswith(side)), "")
            raise fail(f"{spec} lost every game without playing it ({why}): the match says nothing about its strength")


def _play_here(match: Path, settings: MatchSettings, gate: float, sprt_config: SprtConfig | None) -> dict[str, Any]:
    """Every game in this process (`play_match_here`), the live score redrawn after each."""
    from tasks.app.evaluate import play_match_here

    with user_errors():
        with Live(score_table(match, settings), console=console, auto_refresh=False) as live:
            def redraw(row: dict[str, Any]) -> None:
                live.update(score_table(match, settings, row), refresh=True)

            summary = play_match_here(str(match), settings, gate, sprt_config, on_game=redraw)
        console.print()
        return summary


def _run_flow(match: Path, settings: MatchSettings, gate: float, sprt_config: SprtConfig | None, workers: int,
              dask_address: str | None) -> dict[str, Any]:
    """The Prefect flow on a process pool (or Dask); the live score polled from the match dir."""
    from flows.evaluate import run_evaluate

    stop = threading.Event()
    with Live(score_table(match, settings), console=console, auto_refresh=False) as live:
        def poll() -> None:
            while not stop.wait(0.5):
                live.update(score_table(match, settings), refresh=True)

        thread = threading.Thread(target=poll, daemon=True)
        thread.start()
        try:
            with user_errors():
                summary = run_evaluate(settings, match.name, str(match.parent.parent), gate, sprt_config,
                                       workers=workers or None, dask_address=dask_address)
        finally:
            stop.set()
            thread.join()
    console.print()
    return summary


def score_table(match: Path, settings: MatchSettings, last: dict[str, Any] | None = None) -> Table:
    """The running score of a match from the games on disk (and the game that just ended)."""
    from gocore.play.ratings import wilson_interval
    from storage import matches

    rows = [row for row in matches.read_rows(match) if row["game"] < settings.games]
    points = sum(row["a_score"] for row in rows)
    a_wins = sum(1 for row in rows if row["a_score"] == 1.0)
    draws = sum(1 for row in rows if row["a_score"] == 0.5)
    table = Table(title=f"{settings.black} (A) vs {settings.white} (B)")
    for column in ("games", "A wins", "B wins", "jigo", "A win rate (95 % CI)"):
        table.add_column(column, justify="right")
    table.add_column("last game")
    rate = "-"
    if rows:
        low, high = wilson_interval(points, len(rows))
        rate = f"{points / len(rows):.1%} ({low:.0%}-{high:.0%})"
    latest = last or (rows[-1] if rows else None)
    last_text = f"#{latest['game']} {latest['result']} {latest['reason']}" if latest else ""
    table.add_row(f"{len(rows)}/{settings.games}", str(a_wins), str(len(rows) - a_wins - draws), str(draws),
                  rate, last_text)
    return table


def summary_table(summary: dict[str, Any], show_gate: bool = True) -> Table:
    """The verdict: win rate with its 95 % interval, Elo, SPRT, the gate (when `show_gate`: a plain
    match has none to pass), how games ended."""
    from storage.matches import summary_rows

    table = Table(title=f"match {summary['match_id']}: {summary['player_a']} (A) vs {summary['player_b']} (B)")
    table.add_column("measure")
    table.add_column("value", justify="right")
    for measure, value in summary_rows(summary):
        if measure.startswith("gate") and not show_gate:
            continue
        if measure.startswith("gate"):
            value = f"[{'green' if summary['gate_passed'] else 'red'}]{value}[/]"
        elif measure == "WARNING":
            measure, value = f"[bold red]{measure}[/]", f"[bold red]{value}[/]"
        table.add_row(measure, value)
    return table

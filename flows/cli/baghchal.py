"""`gozero baghchal loop|evaluate|play|ladder`: Baghchal (Tigers and Goats) through our AlphaGo Zero design.

A typer sub-app that flows/cli/root.py mounts as ``baghchal``. `loop` runs flows/baghchal_loop.py
(a rerun continues where the last one stopped); `evaluate` plays a match in this process (its
games kept under <data>/baghchal/matches/, rated on Baghchal's own ladder); `play` one game with
its moves on the terminal, a person among the players if one is ``human``; `ladder` prints the
Elo of every Baghchal player. Games are written in the `baghchal` library's notation, with a PNG
of the final position. Options take their help from the settings' own docstrings.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from flows.cli.common import DATA_DIR_HELP, console, fail, quiet_prefect, use_threads, user_errors
from flows.cli.fields import declared_fields, field_option

baghchal_app = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode=None,
                           help="Baghchal (Tigers and Goats): the zero loop, matches, a game at the terminal.")
LOOP = declared_fields("tasks.app.baghchal_settings", "BaghchalLoopSettings")
MATCH = declared_fields("tasks.app.baghchal_settings", "BaghchalMatchSettings")
PLAYERS_HELP = ("random, uniform, library:<depth> (the baghchal library's engine; library-slow:<depth> runs "
                "the library's own code), human, or a model "
                "(models:/baghchal@champion, models:/baghchal/<version>, a model directory)")
DataDir = Annotated[Path | None, typer.Option(help=DATA_DIR_HELP)]


def _loop_option(name: str, **limits: int) -> typer.models.OptionInfo:
    return field_option(LOOP, name, **limits)


@baghchal_app.command()
def loop(
    name: Annotated[str | None, typer.Option("--loop", help=LOOP["loop"].doc)] = None,
    generations: Annotated[int | None, _loop_option("generations", min=1)] = None,
    games: Annotated[int | None, _loop_option("games", min=1)] = None,
    games_per_task: Annotated[int | None, _loop_option("games_per_task", min=1)] = None,
    sims: Annotated[int | None, _loop_option("sims", min=1)] = None,
    search: Annotated[str | None, _loop_option("search")] = None,
    temperature_plies: Annotated[int | None, _loop_option("temperature_plies", min=0)] = None,
    full_search_prob: Annotated[float | None, _loop_option("full_search_prob", min=0.01, max=1.0)] = None,
    fast_sims: Annotated[int | None, _loop_option("fast_sims", min=1)] = None,
    budget_cpu_hours: Annotated[float | None, _loop_option("budget_cpu_hours", min=0.01)] = None,
    preset: Annotated[str | None, _loop_option("preset")] = None,
    blocks: Annotated[int | None, _loop_option("blocks", min=0)] = None,
    filters: Annotated[int | None, _loop_option("filters", min=1)] = None,
    gate: Annotated[str | None, _loop_option("gate")] = None,
    gate_games: Annotated[int | None, _loop_option("gate_games", min=0)] = None,
    ladder_games: Annotated[int | None, _loop_option("ladder_games", min=0)] = None,
    ladder_depth: Annotated[int | None, _loop_option("ladder_depth", min=0)] = None,
    batch_size: Annotated[int | None, _loop_option("batch_size", min=1)] = None,
    replay: Annotated[float | None, _loop_option("replay", min=0.01)] = None,
    lr: Annotated[float | None, _loop_option("lr", min=1e-6)] = None,
    cpu_bf16: Annotated[bool | None, _loop_option("cpu_bf16")] = None,
    window_generations: Annotated[int | None, _loop_option("window_generations", min=1)] = None,
    seed: Annotated[int | None, _loop_option("seed")] = None,
    workers: Annotated[int | None, typer.Option(min=1, help="processes for self-play and games (default: cores)")] = None,
    device: Annotated[str, typer.Option(help="training device: auto, cpu, cuda, mps")] = "auto",
    data_dir: DataDir = None,
    verbose: Annotated[bool, typer.Option(help="show Prefect's logs")] = False,
) -> None:
    """Run (or resume) the Baghchal zero loop: self-play, training, gate, promotion, ladder."""
    quiet_prefect(verbose)
    from flows.baghchal_loop import run_baghchal_loop
    from tasks.app.baghchal_settings import BaghchalLoopSettings

    given = {key: value for key, value in locals().items() if key in LOOP and value is not None}
    if name is not None:
        given["loop"] = name
    with user_errors():
        try:
            settings = BaghchalLoopSettings(**given)
        except ValueError as error:
            raise fail(str(error)) from None
        summary = run_baghchal_loop(settings, None if data_dir is None else str(data_dir), workers, device)
    for record in summary["generations"]:
        gate, promote = record.get("gate", {}), record.get("promote", {})
        played = record.get("selfplay", {})
        console.print(f"generation {record.get('start', {}).get('generation', '?')}: self-play {played.get('games')} "
                      f"games (Goat {played.get('goat_wins')}, Tiger {played.get('tiger_wins')}, draws "
                      f"{played.get('draws')}), gate {gate.get('score')}, "
                      f"{'promoted' if promote.get('promoted') else 'kept'} {promote.get('champion')}")
    console.print(f"champion: {summary['champion']}")


@baghchal_app.command()
def evaluate(
    player_a: Annotated[str, typer.Argument(help=f"player A: {PLAYERS_HELP}")],
    player_b: Annotated[str, typer.Argument(help=f"player B: {PLAYERS_HELP}")],
    games: Annotated[int, typer.Option(min=1, help=MATCH["games"].doc)] = 20,
    sims: Annotated[int, typer.Option(min=1, help=MATCH["sims"].doc)] = 64,
    opening: Annotated[int, typer.Option(min=0, help=MATCH["opening"].doc)] = 2,
    seed: Annotated[int, typer.Option(help=MATCH["seed"].doc)] = 0,
    match_id: Annotated[str | None, typer.Option(help="the match's name under <data>/baghchal/matches/ "
                                                "(default: from the players and seed); a rerun resumes it")] = None,
    threads: Annotated[int, typer.Option(min=1, help="torch threads of this match (its searches evaluate one "
                                          "position at a time: more threads only slow them)")] = 1,
    data_dir: DataDir = None,
) -> None:
    """A match between two Baghchal players, sides alternating; wins, draws and losses per side."""
    from storage import layout
    from tasks.app.baghchal_settings import BaghchalMatchSettings
    from tasks.baghchal_match import (
        fit_ladder_here,
        match_summary,
        picture_of_record,
        run_match_here,
        start_match,
        summary_lines,
    )

    data = layout.data_dir(data_dir)
    settings = BaghchalMatchSettings(player_a, player_b, games, sims, opening, seed)
    match_id = match_id or _slug(f"{player_a}-vs-{player_b}-s{seed}")
    with user_errors():
        use_threads(threads)  # torch's default, every core: three such matches ran 10x slower side by side
        names = start_match(settings, match_id, data)
        progress = lambda rows: console.print(f"  games {rows[0]['game']}-{rows[-1]['game']}: "
                                              f"A scored {sum(r['a_score'] for r in rows)} of {len(rows)}")
        rows = run_match_here(settings, match_id, data, on_chunk=progress)
        summary = match_summary(rows)
        last = rows[-1]
        picture = picture_of_record(last["record"], settings.rules(), data, match_id,
                                    f"{match_id} game {last['game']}: {last['goat']} (Goat) vs {last['tiger']} "
                                    f"(Tiger), {last['reason']}")
        fit_ladder_here(data)
    for line in summary_lines(names, summary):
        console.print(line)
    console.print(f"last game: {last['record']}")
    console.print(f"its final position: {picture}")


@baghchal_app.command()
def play(
    goat: Annotated[str, typer.Option(help=f"who plays Goat: {PLAYERS_HELP}")] = "human",
    tiger: Annotated[str, typer.Option(help=f"who plays Tiger: {PLAYERS_HELP}")] = "library:2",
    sims: Annotated[int, typer.Option(min=1, help=MATCH["sims"].doc)] = 64,
    seed: Annotated[int, typer.Option(help="random seed of both players")] = 0,
    record_out: Annotated[Path | None, typer.Option("--record", help="also write the game's record here")] = None,
    png: Annotated[Path | None, typer.Option(help="the final position's picture (default: under the data dir)")] = None,
    data_dir: DataDir = None,
) -> None:
    """One game, its board after every move on the terminal; a `human` player types moves (G33, B1122, Bx1133)."""
    from gocore.play.baghchal_match import play_game
    from gocore.rules.baghchal.notation import board_text, move_text
    from storage import baghchal as files
    from storage import layout
    from tasks.app.baghchal_players import make_player

    data = layout.data_dir(data_dir)
    with user_errors():
        goat_player, tiger_player = (make_player(spec, sims, seed, data) for spec in (goat, tiger))
        shown = lambda before, action, after: console.print(
            f"{'Goat' if before.to_play == 1 else 'Tiger'} played {move_text(before, action)}\n{board_text(after)}\n",
            markup=False)
        game = play_game(goat_player.agent, tiger_player.agent, on_move=shown)
        path = files.plot_position(game.final.board(), png or files.picture_path(data, _slug(f"play-{goat}-{tiger}")),
                                   f"{goat_player.label} (Goat) vs {tiger_player.label} (Tiger): {game.reason}")
    verdict = {1: "Goat wins", -1: "Tiger wins", 0: "a draw"}[game.winner]
    console.print(f"{verdict} ({game.reason}{': ' + game.detail if game.detail else ''})", markup=False)
    console.print(game.record, markup=False)
    if record_out is not None:
        record_out.write_text(game.record + "\n")
    console.print(f"final position: {path}")


@baghchal_app.command()
def ladder(data_dir: DataDir = None) -> None:
    """The Elo of every Baghchal player from every Baghchal game (random = 0)."""
    from storage import layout
    from tasks.baghchal_match import fit_ladder_here

    players = fit_ladder_here(layout.data_dir(data_dir))
    if not players:
        console.print("no Baghchal games against random yet")
    for row in players:
        error = "" if row["stderr"] is None else f" ± {1.96 * row['stderr']:.0f}"
        console.print(f"{row['player']:<24} {row['elo']:8.1f}{error:>8}  ({row['games']} games)", markup=False)


def _slug(text: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in text).strip("-")[:80]

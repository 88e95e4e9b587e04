"""`gozero loop` (the AlphaGo Zero loop with a live table) and `gozero run` (the main job).

`loop` runs flows/zero_loop.py under one Prefect API and redraws a table of generations (games,
rows, losses, gate, promotion, minutes) from the loop's step records twice a second. A rerun of
the same command continues where the last one stopped. `run` is a short loop on embedded defaults
followed by the evidence that it learned: the champion against generation 0 and against random,
and what to do next. flows/cli/root.py mounts both commands.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer
from rich.live import Live
from rich.table import Table

from flows.cli.common import (
    DATA_DIR_HELP,
    PIPELINE_DEVICE_HELP,
    console,
    fail,
    fit_columns,
    pipeline_devices,
    quiet_prefect,
    shipped_ready,
    user_errors,
)
from flows.cli.fields import declared_fields, declared_keys, field_option, settings_epilog

RUN_MINUTES_HELP = ("the whole job's wall budget in minutes (0: none): the loop starts a generation only if, by what "
                    "the last one took on this machine, it ends within 80 % of it, the rest kept for the evidence")
MINUTES_HELP = ("a budget of wall minutes learning: start no new generation that would pass it, judged by what the "
                "last one took on this machine (the first always starts, the one under way finishes; a rerun counts "
                "the minutes already spent)")

T = TypeVar("T")

if TYPE_CHECKING:  # the real imports wait for a command to run: `gozero --help` stays fast
    from tasks.app.loop_settings import LoopSettings
    from tasks.app.loop_view import GenerationRow, LoopSummary


LOOP = declared_fields("tasks.app.loop_settings", "LoopSettings")
NAMED = declared_keys("tasks.app.loop_presets", "LOOP_PRESETS")
OPTIONS = ("size", "generations", "games", "sims", "preset", "gate", "gate_games", "window_generations",
           "ladder_opponents", "ladder_games", "aux_heads", "playout_cap", "forced_playouts", "search", "warm_start",
           "loop")
"""The LoopSettings fields `gozero loop` has an option for; every other one is reachable with --set."""


def option(name: str, *flags: str, **limits: int) -> typer.models.OptionInfo:
    """A typer option for LoopSettings field `name` (`field_option`): an option not given leaves the
    field to --settings or the default."""
    return field_option(LOOP, name, *flags, **limits)


def loop(
    size: Annotated[int | None, option("size", min=5, max=19)] = None,
    generations: Annotated[int | None, option("generations", min=1)] = None,
    games: Annotated[int | None, option("games", min=1)] = None,
    sims: Annotated[int | None, option("sims", min=1)] = None,
    preset: Annotated[str | None, option("preset")] = None,
    gate: Annotated[str | None, option("gate")] = None,
    gate_games: Annotated[int | None, option("gate_games", min=2)] = None,
    window_generations: Annotated[int | None, option("window_generations", min=1)] = None,
    ladder_opponents: Annotated[int | None, option("ladder_opponents", min=0)] = None,
    ladder_games: Annotated[int | None, option("ladder_games", min=1)] = None,
    aux_heads: Annotated[bool | None, option("aux_heads", "--aux-heads/--no-aux-heads")] = None,
    playout_cap: Annotated[bool | None, option("playout_cap", "--playout-cap/--no-playout-cap")] = None,
    forced_playouts: Annotated[bool | None, option("forced_playouts", "--forced-playouts/--no-forced-playouts")] = None,
    search: Annotated[str | None, option("search")] = None,
    warm_start: Annotated[str | None, option("warm_start")] = None,
    name: Annotated[str | None, typer.Option("--loop", help=LOOP["loop"].doc + " Default: the named "
                                             "settings' name, else zero-<N>x<N>.")] = None,
    named: Annotated[str | None, typer.Option("--settings", help="start from these named settings "
                                              f"(tasks/app/loop_presets.py): {', '.join(NAMED)}; options given "
                                              "beside it change them")] = None,
    set_: Annotated[list[str] | None, typer.Option("--set", help="any setting as NAME=VALUE (listed above); "
                                                                 "repeatable")] = None,
    workers: Annotated[int | None, typer.Option(min=1, help="self-play and gate processes (default: cores)")] = None,
    dask_address: Annotated[str | None, typer.Option(help="run self-play and gate games on this Dask scheduler")] = None,
    device: Annotated[str | None, typer.Option(help=PIPELINE_DEVICE_HELP)] = None,
    minutes: Annotated[float | None, typer.Option(min=0.0, help=MINUTES_HELP)] = None,
    budget_cpu_hours: Annotated[float | None, typer.Option(min=0.01, help="start no new generation once the loop's "
                                                           "learning (self-play, training, gates) has spent this many "
                                                           "CPU hours, counted across its process tree")] = None,
    data_dir: Annotated[Path | None, typer.Option(help=DATA_DIR_HELP)] = None,
    verbose: Annotated[bool, typer.Option(help="show Prefect's logs (they are always in the Prefect UI)")] = False,
) -> None:
    """Run the AlphaGo Zero loop: self-play, train, gate, promote, generation after generation."""
    params = dict(locals())
    quiet_prefect(verbose, data_dir)
    from tasks.app.loop_presets import loop_settings
    from tasks.app.loop_settings import LoopSettings
    from tasks.app.overrides import dataclass_changes
    from tasks.app.sizes import resolve_size, size_of

    devices = pipeline_devices(device)
    given = {key: value for key, value in params.items() if key in OPTIONS and value is not None}
    if name is not None:
        given["loop"] = name
    try:
        changes = {**given, **dataclass_changes(LoopSettings, set_ or [])}
    except ValueError as error:
        raise fail(str(error)) from None
    if changes.get("warm_start"):  # --warm-start shipped: from the net that ships with gozero
        changes["warm_start"] = shipped_ready(data_dir, changes["warm_start"])[0]
    with user_errors():  # a warm start names its size; named settings' size must agree with it
        if "size" in changes or (named is None and size_of(changes.get("warm_start") or "") is not None):
            changes["size"] = resolve_size(changes.get("size"), changes.get("warm_start"))
        try:
            settings = loop_settings(named, changes)
        except ValueError as error:
            raise fail(str(error)) from None
        resolve_size(settings.size, settings.warm_start)
        refuse_changed_rerun(settings, data_dir)
    summary = run_live(settings, data_dir, workers, dask_address, devices, minutes, budget_cpu_hours)
    console.print(f"champion: [bold]{summary.champion}[/] (models:/{settings.model_name}@champion)")


loop.__doc__ += "\n\n" + settings_epilog(LOOP, set(OPTIONS))  # typer shows the rest of the docstring as help


def refuse_changed_rerun(settings: LoopSettings, data_dir: Path | None) -> None:
    """LoopError now, before any server starts, if the loop exists with other settings (the flow
    checks again when it claims the loop)."""
    from flows.loop_driver import check_rerun
    from flows.zero_loop import GO_LOOP
    from storage import layout, loops

    data = layout.data_dir(data_dir)
    check_rerun(GO_LOOP, settings.resolved(loops.read_settings(data, settings.loop)), data)


def run_live(settings: LoopSettings, data_dir: Path | None, workers: int | None, dask_address: str | None,
             devices: tuple[str, str], minutes: float | None = None, cpu_hours: float | None = None,
             run: Callable[[], T] | None = None) -> T | LoopSummary:
    """The loop flow (or `run`, a flow that runs the loop as a subflow), training on `devices[0]`
    and the games' nets on `devices[1]` (`pipeline_devices`), with the loop's table of
    generations redrawn from the records on disk (off a terminal: one plain line per finished step,
    `StepLines`)."""
    from flows.runtime import dask_scheduler
    from flows.zero_loop import run_zero_loop
    from storage import layout, loops
    from tasks.app.loop_view import generation_rows

    if dask_address:  # a bad address fails now, in one line, before the table and any server
        with user_errors():
            dask_address = dask_scheduler(dask_address)
    data = layout.data_dir(data_dir)
    console.print(f"loop [bold]{settings.loop}[/]: {settings.generations} generations x {settings.games} games, "
                  f"{settings.sims} sims, {settings.preset} net, gate {settings.gate} -> {data}", soft_wrap=True)

    def records() -> list[dict]:
        return loops.read_steps(data, settings.loop)

    def run_flow() -> T | LoopSummary:
        with user_errors():
            if run is not None:
                return run()
            return run_zero_loop(settings, str(data), workers, dask_address, devices[0], minutes=minutes,
                                 inference_device=devices[1], cpu_hours=cpu_hours)

    if not console.is_terminal:  # a pipe or a log: plain lines as steps finish, no table to cut short
        return while_polling(run_flow, StepLines(records()).print_new, records)
    try:
        with Live(generations_table(settings.loop, generation_rows(records())), console=console,
                  auto_refresh=False) as live:
            def redraw(current: list[dict]) -> None:
                live.update(generations_table(settings.loop, generation_rows(current)), refresh=True)

            return while_polling(run_flow, redraw, records)
    finally:
        console.print()  # also after an interrupt: its line starts a line of its own


def while_polling(run: Callable[[], T], show: Callable[[list[dict]], None], records: Callable[[], list[dict]]) -> T:
    """`run()`, while a thread shows `records()` twice a second, and once more at the end."""
    stop = threading.Event()

    def poll() -> None:
        while not stop.wait(0.5):
            show(records())

    thread = threading.Thread(target=poll, daemon=True)
    thread.start()
    try:
        return run()
    finally:
        stop.set()
        thread.join()
        show(records())


class StepLines:
    """Off a terminal: a line for what each step adds as it finishes (`step_news`: a step with
    nothing new prints nothing), and one line for each generation that finishes."""

    def __init__(self, already: list[dict]):
        self.seen = {(record["generation"], record["step"]) for record in already}

    def print_new(self, records: list[dict]) -> None:
        for line in new_lines(records, self.seen):
            console.print(line, soft_wrap=True, highlight=False, markup=False)


def new_lines(records: list[dict], seen: set[tuple[int, str]], prefix: str = "") -> list[str]:
    """The lines of the records not in `seen` (which they join): each step's news, then, once a
    generation's last step is in, the generation's own line."""
    from tasks.app.loop_view import generation_line, generation_rows, is_generation_done, step_news

    by_generation: dict[int, dict[str, dict]] = {}
    for record in records:
        by_generation.setdefault(int(record["generation"]), {})[record["step"]] = record
    rows = {row.generation: row for row in generation_rows(records)}
    lines = []
    for record in records:
        generation, key = int(record["generation"]), (record["generation"], record["step"])
        if key in seen:
            continue
        seen.add(key)
        if news := step_news(record, by_generation[generation]):
            lines.append(f"{prefix}gen {generation} {record['step']}: {news}")
        if is_generation_done(record["step"]):
            lines.append(prefix + generation_line(rows[generation], by_generation[generation]))
    return lines


NARROW_DROPS = ("last step", "candidate", "val mse", "loss", "rows", "Elo", "promoted", "games", "val top1")
"""The loop table's columns a narrow terminal leaves out, first listed first."""


def generations_table(loop_name: str, rows: list[GenerationRow]) -> Table:
    """One row per generation: self-play, training, gate and promotion, and the minutes spent."""
    table = Table(title=f"loop {loop_name}")
    for column in ("gen", "champion", "games", "rows", "loss", "val top1", "val mse", "candidate", "gate",
                   "promoted", "Elo", "min", "last step"):
        table.add_column(column, justify="right" if column not in ("champion", "gate", "last step") else "left")

    def number(value: float | None, digits: int = 3) -> str:
        return "" if value is None else f"{value:.{digits}f}"

    for row in rows:
        promoted = "" if row.promoted is None else ("[green]yes[/]" if row.promoted else "no")
        table.add_row(str(row.generation), row.champion, str(row.games), f"{row.rows:,}", number(row.loss),
                      number(row.val_top1), number(row.val_mse), row.candidate or "", row.gate, promoted,
                      row.elo, f"{row.minutes:.1f}", row.step)
    return fit_columns(table, console.width, NARROW_DROPS)[0]  # a narrow terminal: fewer columns, none cut


def run(
    data_dir: Annotated[Path | None, typer.Option(help=DATA_DIR_HELP)] = None,
    generations: Annotated[int, typer.Option(min=1, help="generations of the loop")] = 4,
    games: Annotated[int, typer.Option(min=1, help="self-play games per generation")] = 200,
    sims: Annotated[int, typer.Option(min=1, help="simulations per move")] = 16,
    eval_games: Annotated[int, typer.Option(min=2, help="games of the champion against generation 0")] = 40,
    random_games: Annotated[int, typer.Option(min=0, help="games of the champion and of generation 0 "
                                              "against random (they anchor the ladder)")] = 10,
    workers: Annotated[int | None, typer.Option(min=1, help="processes (default: cores)")] = None,
    minutes: Annotated[float, typer.Option(min=0.0, help=RUN_MINUTES_HELP)] = 10.0,
    verbose: Annotated[bool, typer.Option(help="show Prefect's logs")] = False,
) -> None:
    """The main job: a short AlphaGo Zero loop on 9x9 (tiny net) from nothing to a promoted champion,
    then the evidence that it learned: the champion against generation 0 and random, and the ladder."""
    import time

    started = time.monotonic()
    quiet_prefect(verbose, data_dir)
    from flows.main_job import MainJobResult, loop_minutes, main_job
    from flows.runtime import prefect_api
    from storage import layout
    from tasks.app.loop_presets import main_job_settings

    settings = main_job_settings(generations, games, sims)
    data = layout.data_dir(data_dir)
    with user_errors():
        refuse_changed_rerun(settings, data)
    with prefect_api():  # one Prefect API for the flow and its subflows
        def job() -> MainJobResult:  # the budget from now: the Prefect server's start is spent
            left = None if not minutes else max(0.0, minutes - (time.monotonic() - started) / 60)
            return main_job(settings, str(data), eval_games, random_games, workers, left)

        if minutes:
            console.print(f"budget: {minutes:g} minutes in all, {loop_minutes(minutes):g} of them for learning "
                          "(--minutes 0: none)", soft_wrap=True)
        result = run_live(settings, data, workers, None, pipeline_devices(None), run=job)
    if minutes and (stopped := budget_stop_line(data, settings, minutes)):
        console.print(stopped, soft_wrap=True)
    console.print(evidence_line(result.champion, f"generation 0 ({result.first})", result.evidence))
    from flows.cli.ladder import ladder_table
    from tasks.ladder import Ladder, ladder_rows

    console.print(ladder_table(Ladder(9, ladder_rows(data, 9))))
    print_next_steps(data, settings.model_name)


def budget_stop_line(data: Path, settings: LoopSettings, minutes: float) -> str | None:
    """Why the loop played fewer generations than asked (the budget's prediction), or None."""
    from storage import loops
    from tasks.app.loop_view import last_generation_minutes, loop_spend

    records = loops.read_steps(data, settings.loop)
    done = max((int(r["generation"]) for r in records), default=0)
    if done >= settings.generations:
        return None
    last = last_generation_minutes(records, done + 1)
    spent = loop_spend(records, done)["loop_minutes"]
    return (f"budget: the loop stopped after generation {done} of {settings.generations}: one more would have taken "
            f"about {last:.1f} minutes by the last one, past the {minutes:g}-minute budget ({spent:.1f} spent "
            "learning); --minutes 0 plays them all, a rerun goes on from here")


def evidence_line(player: str, opponent: str, summary: dict) -> str:
    """"won 31 of 40 (77.5 %, 95 % CI 62-88 %) against ...": a claim with its games and interval."""
    return (f"[bold]{player}[/] won {summary['a_wins']} of {summary['games']} "
            f"({summary['a_winrate']:.1%}, 95 % CI {summary['a_winrate_low']:.0%}-{summary['a_winrate_high']:.0%}) "
            f"against {opponent}")


def print_next_steps(data: Path, model_name: str) -> None:
    """What a user does next with the models the run made."""
    import shutil
    import sys

    gozero = shutil.which("gozero") or str(Path(sys.executable).with_name("gozero"))
    console.print("\n[bold]next[/]", soft_wrap=True)
    for line in (f"  {gozero} models list --data-dir {data}",
                 f"  {Path(sys.executable).with_name('mlflow')} ui --backend-store-uri sqlite:///{data}/mlflow.db "
                 f"--default-artifact-root {data}/mlartifacts --host 127.0.0.1   # http://127.0.0.1:5000",
                 f"  {gozero} loop --generations 10 --warm-start models:/{model_name}@champion --data-dir {data}"
                 "   # go on learning",
                 f"  engine for Sabaki or GoGui: {gozero} gtp --model models:/{model_name}@champion "
                 f"--sims 200 --data-dir {data}",
                 f"  a net that beats GNU Go, shipped with gozero: {gozero} play --black shipped --white gnugo-5 "
                 f"--data-dir {data}   # or gtp --model shipped"):
        console.print(line, soft_wrap=True, highlight=False)

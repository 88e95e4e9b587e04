"""`gozero strong`: the strength recipe (flows/strong.py) with a line per finished stage.

Expert games, a supervised net, then zero-loop generations until the CPU budget is spent; each
champion against GNU Go. A rerun continues where the last one stopped; a larger
`--budget-cpu-hours` goes on with a finished run. flows/cli/root.py mounts the command.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Annotated, Any

import typer

from flows.cli.common import (
    DATA_DIR_HELP,
    PIPELINE_DEVICE_HELP,
    console,
    fail,
    pipeline_devices,
    quiet_prefect,
    user_errors,
)


def strong(
    size: Annotated[int | None, typer.Option(min=5, max=19, help="board size (default: the --set expert "
                                             "sources', else 9; a size they contradict is refused)")] = None,
    budget_cpu_hours: Annotated[float | None, typer.Option(min=0.01, help="stop starting generations once "
                                                           "expert games, training, self-play and gates have "
                                                           "spent this many CPU hours (default 4)")] = None,
    name: Annotated[str | None, typer.Option("--name", help="the run's name (default strong-<N>x<N>)")] = None,
    set_: Annotated[list[str] | None, typer.Option("--set", help="any recipe setting as name=value, e.g. "
                                                                 "preset=small, sl_steps=8000, anchors=gnugo-1;gnugo-5 "
                                                                 "(tasks.app.strong.StrongSettings); repeatable")] = None,
    workers: Annotated[int | None, typer.Option(min=1, help="processes for games (default: cores)")] = None,
    dask_address: Annotated[str | None, typer.Option(help="run the games on this Dask scheduler")] = None,
    device: Annotated[str | None, typer.Option(help=PIPELINE_DEVICE_HELP)] = None,
    data_dir: Annotated[Path | None, typer.Option(help=DATA_DIR_HELP)] = None,
    verbose: Annotated[bool, typer.Option(help="show Prefect's logs (they are always in the Prefect UI)")] = False,
) -> None:
    """Train the strongest net the budget allows: imitate GNU Go, then self-play with the gate on."""
    quiet_prefect(verbose, data_dir)
    from storage import layout
    from tasks.app.overrides import dataclass_changes
    from tasks.app.sizes import resolve_size
    from tasks.app.strong import StrongSettings

    devices = pipeline_devices(device)
    try:
        changes = dataclass_changes(StrongSettings, set_ or [])
    except ValueError as error:
        raise fail(str(error)) from None
    with user_errors():
        size = resolve_size(changes.pop("size", size), *changes.get("expert", ()))
    fields = {"size": size, "name": name or f"strong-{size}x{size}",
              **({"budget_cpu_hours": budget_cpu_hours} if budget_cpu_hours is not None else {})}
    if size != 9:
        fields["expert"] = (f"gnugo-{size}x{size}:level=1,games=2400",)
    try:
        settings = StrongSettings(**{**fields, **changes})
    except ValueError as error:
        raise fail(str(error)) from None
    data = layout.data_dir(data_dir)
    console.print(f"recipe [bold]{settings.name}[/]: {', '.join(settings.expert)}, {settings.preset} net, "
                  f"budget {settings.budget_cpu_hours:g} CPU hours -> {data}", soft_wrap=True)
    result = _run_with_lines(settings, data, workers, dask_address, devices)
    _print_curve(result)


def _run_with_lines(settings: Any, data: Path, workers: int | None, dask_address: str | None,
                    devices: tuple[str, str]) -> dict[str, Any]:
    """The flow (training on `devices[0]`, games on `devices[1]`), printing one line per step record
    as it appears (on a terminal or off one)."""
    from flows.cli.loop import new_lines
    from flows.strong import run_strong
    from storage import loops

    seen: set[tuple[int, str]] = set()  # the recipe's steps
    seen_loop: set[tuple[int, str]] = set()
    tenths = ProgressLines()

    def report(count: int = 0) -> None:
        for record in loops.read_steps(data, settings.recipe):
            if (key := (int(record["generation"]), record["step"])) not in seen:
                seen.add(key)
                console.print(step_line(record), soft_wrap=True)
        if count % 10 == 0 and (line := tenths.line(stage_progress(settings, data, {step for _, step in seen}))):
            console.print(line, soft_wrap=True)  # every 10 s: the long stages before the loop, by tenths
        for line in new_lines(loops.read_steps(data, settings.name), seen_loop):
            console.print(line, soft_wrap=True, highlight=False, markup=False)

    stop = threading.Event()

    def poll() -> None:
        count = 0
        while not stop.wait(1.0):
            count += 1
            report(count)

    thread = threading.Thread(target=poll, daemon=True)
    report()
    thread.start()
    try:
        with user_errors():
            return run_strong(settings, str(data), workers, dask_address, *devices)
    finally:
        stop.set()
        thread.join()
        report()


def stage_progress(settings: Any, data: Path, done: set[str]) -> tuple[str, int, int] | None:
    """(what, how many done, of how many) of the recipe's stage under way before its loop: the
    expert games on disk, then the supervised net's steps; None once both are recorded, or before
    the supervised training reports."""
    from storage import gnugo_source, layout
    from tasks.train import read_progress

    if "expert" not in done:
        sources = [gnugo_source.parse_gnugo_source(text) for text in settings.expert]
        total = sum(source.games for source in sources)
        return "expert games", total - sum(len(gnugo_source.missing_games(data, source)) for source in sources), total
    if "supervised" not in done:
        steps, planned = read_progress(data, layout.safe_name(settings.supervised_run, "run name"))
        return ("supervised steps", steps, planned) if planned else None
    return None


class ProgressLines:
    """A plain line each time a stage passes another tenth of its work (none for a stage that
    starts already past it, as a resumed one does, until its next tenth)."""

    def __init__(self) -> None:
        self.shown: dict[str, int] = {}

    def line(self, stage: tuple[str, int, int] | None) -> str | None:
        if stage is None or stage[2] <= 0:
            return None
        what, count, total = stage
        tenth = min(10, 10 * count // total)
        if self.shown.setdefault(what, tenth) >= tenth:
            return None
        self.shown[what] = tenth
        return f"recipe {what}: {count:,} of {total:,} ({100 * count // total}%)"


def step_line(record: dict[str, Any]) -> str:
    """One finished step of the recipe's own (expert games, supervised net, anchors) as a plain
    line: what, its time and what it found (the loop's steps: `flows.cli.loop.new_lines`)."""
    found = {"expert": lambda r: f"{r['games']:,} games, {r['rows']:,} rows",
             "supervised": lambda r: f"{r['model']} {r.get('metrics', {})}",
             "anchors": lambda r: f"{r['model']}: " + "; ".join(
                 f"vs {a}: {v['win_rate']:.1%} ({v['low']:.1%}-{v['high']:.1%}, {v['games']} games)"
                 for a, v in r["results"].items())}
    detail = found.get(record["step"], lambda r: "")(record)
    cpu = f"{float(record.get('cpu_seconds', 0)) / 60:.1f} CPU min"
    where = f"gen {record['generation']}" if record["step"] == "anchors" else "recipe"
    return f"{where} {record['step']}: {float(record.get('seconds', 0)) / 60:.1f} min, {cpu}; {detail}"


def _print_curve(result: dict[str, Any]) -> None:
    """Each rated champion's Elo at the CPU hours spent, the GNU Go levels, the spend."""
    spent = result["cpu_hours"]
    console.print(f"spent {spent['learning']:.2f} CPU hours learning, {spent['measuring']:.2f} measuring; "
                  f"MLflow run {result['mlflow_run']}", soft_wrap=True)
    for point in result["points"]:
        stderr = "" if point["stderr"] is None else f" ± {1.96 * point['stderr']:.0f} (95 %)"
        console.print(f"  {point['label']}: {point['elo']:+.0f}{stderr} Elo at {point['cpu_hours']:.2f} CPU h",
                      soft_wrap=True)
    for level, elo in sorted(result["levels"].items(), key=lambda item: item[1]):
        console.print(f"  {level}: {elo:+.0f} Elo")

"""Tables on any screen: a narrow terminal gets fewer columns, never cut numbers; a pipe gets them all."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from flows.cli import loop as loop_cli
from flows.cli.common import fit_columns, table_width
from tasks.app.loop_view import GenerationRow


def wide_table() -> Table:
    table = Table("player", "games", "Elo", "created", "comment")
    table.add_row("models:/gozero-9x9/12", "1,234,567", "+1,234.5 ± 56.7", "2026-11-27", "a rather long comment here")
    return table


def printed(table: Table, width: int) -> str:
    console = Console(width=width, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(table)
    return console.export_text()


def test_a_narrow_screen_drops_the_optional_columns_first_listed_first_and_cuts_no_cell():
    full = table_width(wide_table())
    table, width = fit_columns(wide_table(), full - 5, ("comment", "created"))
    assert [column.header for column in table.columns] == ["player", "games", "Elo", "created"]
    text = printed(table, width)
    assert "1,234,567" in text and "+1,234.5 ± 56.7" in text and "models:/gozero-9x9/12" in text
    table, width = fit_columns(wide_table(), 30, ("comment", "created"))  # still too wide: its own width
    assert [column.header for column in table.columns] == ["player", "games", "Elo"] and width > 30
    assert "+1,234.5 ± 56.7" in printed(table, width) and "…" not in printed(table, width)


def test_a_pipe_keeps_every_column():
    table, width = fit_columns(wide_table(), None, ("comment", "created"))
    assert len(table.columns) == 5 and width == table_width(wide_table())


def test_the_loop_table_at_80_columns_keeps_its_numbers_whole(monkeypatch):
    row = GenerationRow(generation=3, champion="gozero-9x9/3", games=200, rows=12_345, loss=2.3456, val_top1=0.5123,
                        val_mse=0.4321, candidate="gozero-9x9/4", gate="passed 62.5 % of 40", promoted=True,
                        minutes=12.5, step="ladder", elo="+123 ± 45 (95 %)")
    monkeypatch.setattr(loop_cli.console, "width", 80)
    table = loop_cli.generations_table("zero-9x9", [row])
    text = printed(table, 80)
    assert "…" not in text and "passed 62.5 % of 40" in text and "gozero-9x9/3" in text and "0.512" in text
    assert "last step" not in text  # left out first


def test_progress_off_a_terminal_is_plain_lines_with_full_figures(monkeypatch, capsys):
    """A pipe or a log gets `description: done/total (share), elapsed` when the count moved (no bar,
    no control characters); an unreadable poll is skipped, not fatal."""
    import time

    from flows.cli import common

    monkeypatch.setattr(common, "PLAIN_EVERY", 0.0)
    counts = iter([(0, 1200), (0, 1200), RuntimeError("half-written"), (600, 1200), (1200, 1200)])

    def poll():
        value = next(counts, (1200, 1200))
        if isinstance(value, Exception):
            raise value
        return value

    with common.shard_progress(poll, "self-play games"):
        time.sleep(3.2)
    lines = capsys.readouterr().out.splitlines()
    assert [line.rsplit(", ", 1)[0] for line in lines] == [
        "self-play games: 0/1,200 (0%)", "self-play games: 600/1,200 (50%)", "self-play games: 1,200/1,200 (100%)"]
    assert all("\x1b" not in line and line.endswith(" s") for line in lines)


def test_prefects_queue_services_say_nothing_unless_verbose(monkeypatch):
    """"EventsWorker - Still processing items" trailed the CLI's error lines: those loggers sit
    outside the "prefect" logger, so PREFECT_LOGGING_LEVEL did not reach them."""
    import logging

    from flows.cli import common

    monkeypatch.setenv("PREFECT_LOGGING_LEVEL", "CRITICAL")
    for name in common.PREFECT_SERVICE_LOGGERS:
        monkeypatch.setattr(logging.getLogger(name), "level", logging.NOTSET)
    common.quiet_prefect(verbose=False)
    assert not any(logging.getLogger(name).isEnabledFor(logging.WARNING) for name in ("EventsWorker", "APILogWorker"))

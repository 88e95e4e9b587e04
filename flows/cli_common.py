"""What every `gozero` command shares: the consoles, the one-line error exit, quiet Prefect logs."""

from __future__ import annotations

import os

import typer
from rich.console import Console
from rich.markup import escape

console = Console()
errors = Console(stderr=True)


def fail(message: str) -> typer.Exit:
    """Print one clear line on stderr (escaped, never wrapped) and give the exit to raise."""
    errors.print(f"[bold red]error:[/] {escape(message)}", soft_wrap=True)
    return typer.Exit(1)


def quiet_prefect(verbose: bool) -> None:
    """Keep Prefect's console logs out of the CLI's output unless asked; call before importing it."""
    os.environ.setdefault("PREFECT_LOGGING_LEVEL", "INFO" if verbose else "CRITICAL")
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")

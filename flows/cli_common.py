"""What every `gozero` command shares: the consoles, the one-line error exit, quiet Prefect logs,
the progress bar fed from files on disk, the streams of a stdin/stdout protocol."""

from __future__ import annotations

import contextlib
import io
import os
import sys
import threading
from collections.abc import Callable, Iterator
from typing import TextIO

import typer
from rich.console import Console
from rich.markup import escape

from gocore.errors import GozeroError

DATA_DIR_HELP = "data dir (default: $GOZERO_DATA, else ~/.local/share/gozero or your platform's user data dir)"
THREADS_HELP = "torch threads (default: $GOZERO_THREADS, else the cores idle at start)"
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


def use_threads(threads: int | None) -> int:
    """Set torch's thread count for this command (`gocore.nn.device.set_threads`); call only where
    torch runs anyway, since it imports torch."""
    from gocore.nn.device import set_threads

    with user_errors():
        return set_threads(threads)


@contextlib.contextmanager
def user_errors(prefix: str = "") -> Iterator[None]:
    """Inside: a `GozeroError` (bad input, missing model or dataset...) exits with one red line;
    any other exception is a bug and keeps its traceback."""
    try:
        yield
    except GozeroError as error:
        raise fail(f"{prefix}{error}") from None


@contextlib.contextmanager
def shard_progress(poll: Callable[[], tuple[int, int]], description: str) -> Iterator[None]:
    """A progress bar, fed from `poll() -> (done, total)` by a background thread, while a block runs."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

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


@contextlib.contextmanager
def protocol_streams() -> Iterator[tuple[TextIO, TextIO]]:
    """(stdin, stdout) for a line protocol (GTP, KataGo's JSON), UTF-8 and split on LF only; fd 1 points
    at stderr meanwhile, so no stray print (ours, a library's, C code's) reaches the protocol."""
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    stdout = io.TextIOWrapper(io.FileIO(os.dup(saved), "w"), encoding="utf-8", newline="\n")
    # newline="\n": a bare CR is not a line break in GTP, only a character preprocessing removes.
    stdin = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace", newline="\n")
    try:
        yield stdin, stdout
    finally:
        with contextlib.suppress(BrokenPipeError):
            stdout.close()
        stdin.detach()  # sys.stdin still owns the buffer
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)

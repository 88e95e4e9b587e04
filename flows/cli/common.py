"""What every `gozero` command shares: the consoles, the one-line error exit, quiet Prefect logs,
the Ctrl-C and SIGTERM handling, the progress bar fed from files on disk, the streams of a
stdin/stdout protocol."""

from __future__ import annotations

import contextlib
import io
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TextIO

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from gocore.children import stop_owned
from gocore.errors import GozeroError
from tasks.app.sizes import DEFAULT_SIZE

DATA_DIR_HELP = "data dir (default: $GOZERO_DATA, else ~/.local/share/gozero or your platform's user data dir)"
THREADS_HELP = "torch threads (default: $GOZERO_THREADS, else the cores idle at start)"
SIZE_HELP = (f"board size (default: the one its models, sources or dataset name, else {DEFAULT_SIZE}; "
             "a size they contradict is refused)")
DEVICE_NAMES = "auto (CUDA, then MPS, else CPU), cpu, cuda, cuda:<i>, mps"
DEVICE_HELP = f"where the net runs: {DEVICE_NAMES}"
WORKERS_DEVICE_HELP = (f"where the workers' nets run: {DEVICE_NAMES} (default: cpu; with a GPU each worker "
                       "process holds its own CUDA context)")
PIPELINE_DEVICE_HELP = (f"where training and every worker's games run: {DEVICE_NAMES} (default: training "
                        "auto, games cpu; with a GPU each game process holds its own CUDA context)")
console = Console()
errors = Console(stderr=True)


def table_width(table: Table) -> int:
    """Columns `table` needs to print without wrapping or cutting a cell."""
    return Console(width=10_000).measure(table).maximum


def fit_columns(table: Table, width: int | None, optional: tuple[str, ...] = ()) -> tuple[Table, int]:
    """`table` for a screen `width` wide (None: a pipe or a file, no limit): the `optional` columns
    left out, first listed first, until it fits; no cell is ever wrapped or cut, so a table that still
    does not fit is printed at its own width (the terminal wraps its lines). (table, width to print at)."""
    for column in table.columns:
        column.no_wrap = True
    for name in optional:
        if width is None or table_width(table) <= width:
            break
        table.columns[:] = [column for column in table.columns if column.header != name]
    return table, max(width or 0, table_width(table))


def fail(message: str) -> typer.Exit:
    """Print one clear line on stderr (escaped, never wrapped) and give the exit to raise."""
    errors.print(f"[bold red]error:[/] {escape(message)}", soft_wrap=True)
    return typer.Exit(1)


INTERRUPTED = "interrupted: rerun the same command to resume"
STOP_SECONDS = 8.0  # after the first signal, the way out (workers, server, Prefect's states) gets this long
_signals: list[int] = []  # the signals received, first first


def handle_interrupts() -> None:
    """The first Ctrl-C or SIGTERM raises KeyboardInterrupt in the main thread, so every `finally`
    runs (pool workers and the temporary server stopped, the flow's state recorded) within
    `STOP_SECONDS`; a second one, or that deadline, exits at once. Call in the main thread."""
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, _on_signal)


def interrupted_by() -> int | None:
    """The first interrupting signal received, or None."""
    return _signals[0] if _signals else None


def _on_signal(signum: int, frame: object) -> None:
    if _signals:
        _exit_now(signum)
    _signals.append(signum)
    deadline = threading.Timer(STOP_SECONDS, _exit_now, (signum,))
    deadline.daemon = True
    deadline.start()
    raise KeyboardInterrupt


def _exit_now(signum: int) -> None:
    """Kill what this process started and exit, with no cleanup (workers die with it)."""
    stop_owned()
    with contextlib.suppress(OSError):
        os.write(2, f"{INTERRUPTED}\n".encode())
    os._exit(128 + signum)


def report_interrupt(signum: int) -> int:
    """Print the one interrupted line; the exit status: 128 + the signal (130 for Ctrl-C)."""
    errors.print(INTERRUPTED, soft_wrap=True, highlight=False)
    return 128 + signum


def quiet_prefect(verbose: bool, data_dir: Path | None = None) -> None:
    """Keep Prefect's console logs out of the CLI's output unless asked, and Prefect's home (the
    temporary server's database and log) under the data dir unless $PREFECT_HOME or
    $PREFECT_API_URL says otherwise; a home that cannot be written exits with one line. Call before
    importing Prefect: on import it creates its home, and says so on the terminal when it cannot."""
    os.environ.setdefault("PREFECT_LOGGING_LEVEL", "INFO" if verbose else "CRITICAL")
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    if not verbose:  # Prefect's queue services log under their class names, outside the "prefect" logger:
        for service in PREFECT_SERVICE_LOGGERS:  # "EventsWorker - Still processing items" trailed errors
            logging.getLogger(service).setLevel(logging.CRITICAL)
    if os.environ.get("PREFECT_API_URL"):
        return  # a server of the user's: nothing of Prefect's is written here
    mine = not os.environ.get("PREFECT_HOME")
    if mine:
        from storage import layout

        os.environ["PREFECT_HOME"] = str(layout.prefect_home(layout.data_dir(data_dir)))
    home = Path(os.environ["PREFECT_HOME"]).expanduser()
    if (problem := unwritable(home)) is not None:
        fix = "give a writable --data-dir (or $GOZERO_DATA)" if mine else "give a writable $PREFECT_HOME"
        raise fail(f"cannot write {home} ({'the data dir' if mine else '$PREFECT_HOME'}): {problem}; {fix}")
    home.mkdir(parents=True, exist_ok=True)  # Prefect's own mkdir on import makes no parents, and warns


def unwritable(path: Path) -> str | None:
    """Why `path` could not be created or written (its nearest existing ancestor is a file, or not
    writable: a read-only mount, no permission), else None; creates nothing."""
    existing = path
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        return f"{existing} is not a directory"
    if not os.access(existing, os.W_OK | os.X_OK):
        return f"{existing} is not writable"
    return None


PREFECT_SERVICE_LOGGERS = ("EventsWorker", "APILogWorker")
"""Loggers of Prefect's background queues (`prefect._internal.concurrency.services`, named by class)."""


def shipped_ready(data_dir: Path | None, *specs: str | None) -> list[str | None]:
    """`specs` as given, but a spec naming the net that ships with gozero (``shipped``,
    ``models:/gozero-9x9-shipped...``) registered in the data dir first (once) and made a
    ``models:/`` URI (`storage.shipped.prepared`); a size that ships no net is one line."""
    if not any(spec and "shipped" in spec for spec in specs):
        return list(specs)
    from storage.shipped import prepared

    with user_errors():
        return [spec if spec is None else prepared(spec, data_dir) for spec in specs]


def use_threads(threads: int | None) -> int:
    """Set torch's thread count for this command (`gocore.nn.device.set_threads`); call only where
    torch runs anyway, since it imports torch."""
    from gocore.nn.device import set_threads

    with user_errors():
        return set_threads(threads)


def checked_device(device: str) -> str:
    """`device` if this machine has it (`gocore.nn.device.choose_device`), else the one-line exit:
    called before any work, since a worker would only find out after the server started."""
    from gocore.nn.device import choose_device

    with user_errors():
        choose_device(device)
    return device


def pipeline_devices(device: str | None) -> tuple[str, str]:
    """(training, the workers' games) devices of a pipeline's --device, checked: one device named
    means both; none means auto for training and cpu for the pool (one CUDA context per worker
    process would crowd the GPU)."""
    if device is None:
        return "auto", "cpu"
    return checked_device(device), device


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
    """A progress bar, fed from `poll() -> (done, total)` by a background thread, while a block runs;
    off a terminal (a pipe, a log), a plain line when the count moved, at most every `PLAIN_EVERY` s."""
    if not console.is_terminal:
        with _plain_progress(poll, description):
            yield
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn(description), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=True) as bar:
        task_id = bar.add_task(description, total=None)

        def update() -> None:
            done, total = poll()
            bar.update(task_id, completed=done, total=total or None)

        with _every_half_second(update):
            yield


PLAIN_EVERY = 15.0
"""Seconds between two plain progress lines (off a terminal)."""


@contextlib.contextmanager
def _plain_progress(poll: Callable[[], tuple[int, int]], description: str) -> Iterator[None]:
    """`description: done/total (share), elapsed` lines while a block runs: when the count moved and
    `PLAIN_EVERY` seconds passed since the last line; full figures, one line each."""
    import time

    start, shown = time.monotonic(), [(-1, 0), 0.0]

    def update() -> None:
        with contextlib.suppress(Exception):  # a half-written sidecar: the next poll reads it whole
            done, total = poll()
            if (done, total) != shown[0] and time.monotonic() - shown[1] >= PLAIN_EVERY:
                share = f" ({done / total:.0%})" if total else ""
                print(f"{description}: {done:,}/{total:,}{share}, {time.monotonic() - start:.0f} s", flush=True)
                shown[0], shown[1] = (done, total), time.monotonic()

    with _every_half_second(update):
        yield


@contextlib.contextmanager
def _every_half_second(show: Callable[[], None]) -> Iterator[None]:
    """`show()` twice a second on a background thread while a block runs."""
    stop = threading.Event()

    def loop() -> None:
        while not stop.wait(0.5):
            show()

    thread = threading.Thread(target=loop, daemon=True)
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

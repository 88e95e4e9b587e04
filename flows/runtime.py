"""Where flows run: one Prefect API for the flow and all its worker processes.

Without ``PREFECT_API_URL`` Prefect starts a temporary server per process, so each worker of a
process pool would start its own (8-12 s each) and they would fight over one SQLite file
("database is locked"). `prefect_api` starts one temporary server and hands its URL to every
process through the environment; with ``PREFECT_API_URL`` set it does nothing.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import multiprocessing
import os
import re
import signal
import socket
import sys
import time
from collections.abc import Iterable, Iterator
from typing import Any

from prefect.settings import PREFECT_API_URL, temporary_settings
from prefect.task_runners import ProcessPoolTaskRunner, TaskRunner

from gocore.children import die_with_parent, is_main_thread
from gocore.cpu import descendants, tree_cpu_seconds
from gocore.errors import GozeroError
from gocore.malloc import keep_freed_memory
from tasks.app.steps import remote_cpu

DASK_PORT = 8786  # `dask scheduler`'s default port

POOL_START_ENV = "GOZERO_POOL_START"  # "spawn": every pool worker a new interpreter, as Prefect starts them
FORK_SERVER_PRELOAD = ("gocore.fork_server", "numpy", "torch", "pyarrow.parquet", "numba", "prefect", "prefect.task_engine",
                       "tasks.selfplay", "tasks.evaluate", "tasks.encode", "tasks.ladder")
"""What every pool worker needs, imported once by the fork server (`_forked`): a module missing here
is imported by each worker that needs it. `gocore.fork_server` first: the server dies with its starter."""


class DaskSchedulerError(GozeroError):
    """A `--dask-address` where no Dask scheduler answers."""


@contextlib.contextmanager
def prefect_api() -> Iterator[str | None]:
    """Make sure one Prefect API serves this process and its children; yields its URL. A temporary
    server started here is out of the terminal's Ctrl-C (its own session) and is stopped on the way
    out, after Prefect has sent it what it still holds (flow states, events, logs)."""
    configured = PREFECT_API_URL.value()
    if configured:
        yield configured
        return
    from flows.prefect_server import OwnedServer

    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")  # no internet: no telemetry

    from prefect.context import refresh_global_settings_context

    server = OwnedServer()
    previous = os.environ.get("PREFECT_API_URL")
    try:
        server.start(timeout=120)
        os.environ["PREFECT_API_URL"] = server.api_url
        # Threads Prefect starts with an empty context (the pool's event forwarder) read the global
        # settings: without the URL there, they started a second temporary server, in our group.
        refresh_global_settings_context()
        with temporary_settings(updates={PREFECT_API_URL: server.api_url}):
            yield server.api_url
    finally:
        _drain_prefect_clients()
        server.stop()
        if previous is None:
            os.environ.pop("PREFECT_API_URL", None)
        else:
            os.environ["PREFECT_API_URL"] = previous
        refresh_global_settings_context()


def _drain_prefect_clients(timeout: float = 5.0) -> None:
    """Send the events and logs Prefect still queues for the API (else they fail against a stopped
    server at exit, in several-thousand-character lines)."""
    from prefect.events.worker import EventsWorker
    from prefect.logging.handlers import APILogWorker

    for service in (EventsWorker, APILogWorker):
        with contextlib.suppress(Exception):
            service.drain_all(timeout=timeout, at_exit=False)


def task_runner(workers: int | None = None, dask_address: str | None = None):
    """The one choice of where mapped tasks run: a process pool of `workers` (default: cores), or
    the existing Dask cluster at `dask_address` (prefect-dask)."""
    if dask_address:
        from prefect_dask import DaskTaskRunner

        address = dask_scheduler(dask_address)
        remote_cpu(f"dask:{address}", functools.partial(dask_cpu_seconds, address))
        return DaskTaskRunner(address=address)
    return StoppingProcessPool(max_workers=workers or os.cpu_count() or 1)


def dask_scheduler(address: str, timeout: float = 5.0) -> str:
    """`address` as Dask spells it (``tcp://host:port``; the port defaults to 8786) once a Dask
    scheduler has answered there within `timeout` seconds; else DaskSchedulerError saying why.

    Checked before a flow starts: Dask's own client retries a dead address for 30 s and then says
    only "timed out", and waits forever on a port where something else listens."""
    from distributed.comm.addressing import parse_address, parse_host_port, unparse_address
    from distributed.comm.registry import get_backend

    try:
        scheme, location = parse_address(address.strip())
        get_backend(scheme)  # ValueError naming the schemes Dask knows
        if scheme in ("tcp", "tls"):
            host, port = parse_host_port(location, default_port=DASK_PORT)
            if not host:
                raise ValueError("no host")
            location = f"{host}:{port}"
    except ValueError as error:
        raise DaskSchedulerError(f"{address!r} is not a Dask scheduler address like tcp://HOST:8786 ({error})") from None
    normalized = unparse_address(scheme, location)
    if scheme in ("tcp", "tls"):
        _reach(host, port, timeout, normalized)
    try:
        with concurrent.futures.ThreadPoolExecutor(1) as thread:  # its own event loop, even inside a flow's
            kind = thread.submit(asyncio.run, _identity(normalized, timeout)).result().get("type")
    except (TimeoutError, OSError) as error:
        raise DaskSchedulerError(f"no Dask scheduler at {normalized}: the port answers but not as Dask does "
                                 f"({type(error).__name__} within {timeout:g} s)") from None
    if kind != "Scheduler":
        raise DaskSchedulerError(f"{normalized} is a Dask {kind or 'server'}, not the scheduler: give the address "
                                 "`dask scheduler` printed (its workers connect to it too)")
    return normalized


def dask_cpu_seconds(address: str, timeout: float = 5.0) -> float:
    """CPU seconds so far of the worker processes of the Dask cluster at `address` that are not in
    this process's tree (those are counted there already: a `LocalCluster`), each with the programs
    it runs; the step records count their difference. A cluster that does not answer reads as its
    last figure, and is asked again only `DASK_RETRY` seconds later (every step reads it twice)."""
    from distributed import Client

    if time.monotonic() < _dask_silent_until.get(address, 0.0):
        return _dask_readings.get(address, 0.0)
    try:
        with Client(address, timeout=timeout, set_as_default=False) as client:
            workers = client.run(_worker_cpu).values()  # (pid, CPU seconds) of each worker
    except (OSError, TimeoutError):
        _dask_silent_until[address] = time.monotonic() + DASK_RETRY
        return _dask_readings.get(address, 0.0)
    mine = set(descendants())
    _dask_readings[address] = reading = float(sum(cpu for pid, cpu in workers if pid not in mine))
    return reading


def _worker_cpu() -> tuple[int, float]:
    """Run on a Dask worker: its process id and its tree's CPU seconds."""
    return os.getpid(), tree_cpu_seconds()


DASK_RETRY = 600.0
"""Seconds a Dask cluster that did not answer a CPU reading is left alone (it may be gone for good)."""
_dask_readings: dict[str, float] = {}
_dask_silent_until: dict[str, float] = {}


def _reach(host: str, port: int, timeout: float, address: str) -> None:
    """A TCP connection to host:port, or DaskSchedulerError with the reason (refused, unknown host...)."""
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except socket.gaierror:
        raise DaskSchedulerError(f"no Dask scheduler at {address}: unknown host {host!r}") from None
    except TimeoutError:
        raise DaskSchedulerError(f"no Dask scheduler at {address}: no answer in {timeout:g} s") from None
    except ConnectionRefusedError:
        raise DaskSchedulerError(f"no Dask scheduler at {address}: connection refused") from None
    except OSError as error:
        raise DaskSchedulerError(f"no Dask scheduler at {address}: {error.strerror or error}") from None


async def _identity(address: str, timeout: float) -> dict[str, Any]:
    """What the Dask server at `address` says it is (its ``identity`` message)."""
    from distributed.comm import connect

    comm = await asyncio.wait_for(connect(address, timeout=timeout), timeout)
    try:
        await asyncio.wait_for(comm.write({"op": "identity"}), timeout)
        return await asyncio.wait_for(comm.read(), timeout)
    finally:
        comm.abort()


def results_as_completed(futures: Iterable[Any]) -> Iterator[Any]:
    """The results of `futures` as they finish; at the first failure the ones not yet started are
    cancelled and the error raised, so the flow fails now instead of after every other task."""
    from prefect.futures import as_completed

    futures = list(futures)
    try:
        for future in as_completed(futures):
            yield future.result()
    except BaseException:
        from prefect.context import FlowRunContext

        context = FlowRunContext.get()
        if context is not None and isinstance(context.task_runner, StoppingProcessPool):
            # Stopping the workers fails every task of the pool. Cancelling the pending ones first
            # would race CPython 3.11's pool, whose manager thread then dies on the cancelled futures.
            context.task_runner.stop_running()
        else:
            for future in futures:
                wrapped = getattr(future, "wrapped_future", None)
                if wrapped is not None:
                    wrapped.cancel()
        raise


class StoppingProcessPool(ProcessPoolTaskRunner):
    """Prefect's process pool, which `results_as_completed` can stop: when one task fails, the
    tasks still running in its workers are stopped instead of waited for, so a failed run ends
    and a retry never races it for the same files. It stops them too when the flow ends with an
    error or an interrupt (Ctrl-C: the CLI's `KeyboardInterrupt`). Its workers ignore the
    terminal's Ctrl-C (the flow stops them), die with the CLI however it ends (`_start_worker`)
    and keep freed memory (`gocore.malloc.keep_freed_memory`: the tunables are in the environment
    before they start)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        keep_freed_memory()  # before the fork server starts: glibc reads its tunables at process start
        kwargs.setdefault("initializer", _start_worker)
        super().__init__(*args, **kwargs)

    def stop_running(self) -> None:
        """Terminate the worker processes (their running tasks die with them)."""
        if self._executor is not None:
            for process in list(getattr(self._executor, "_processes", {}).values()):
                process.terminate()  # ProcessPoolExecutor has no public way to stop running work

    def __enter__(self) -> StoppingProcessPool:
        """Start the pool with every worker (and multiprocessing's resource tracker) while this
        thread blocks Ctrl-C: they inherit the blocked signal, so one arriving while they import is
        no traceback ("Fatal Python error: init_import_site"); each worker then ignores it
        (`_start_worker`). This process holds a Ctrl-C of that moment back and raises it once the
        workers are up (with SIG_IGN here, as before, it was lost: the command ran on). Prefect would
        start the workers one per task later.

        A pool worker enters a copy of its flow's runner around each task (Prefect's context);
        there it starts nothing: its queues and semaphores, never used, leaked whenever a worker
        was stopped mid-task (multiprocessing's tracker warned about them at exit)."""
        if multiprocessing.parent_process() is not None:
            TaskRunner.__enter__(self)  # started, with no pool: a task never fans out itself
            return self
        if self._initializer is _start_worker:
            self._initargs = (dict(os.environ),)  # what a spawned worker would inherit now
        if not is_main_thread():
            super().__enter__()
            self._executor = _forked(self._executor)
            return self
        caught: list[int] = []
        previous = signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            super().__enter__()
            self._executor = _forked(self._executor)
            self._executor._launch_processes()
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # one held back arrives now: caught
            signal.signal(signal.SIGINT, previous)
        if caught:  # a Ctrl-C while the workers started: stop them, then it is the flow's, as any other
            self.__exit__(KeyboardInterrupt, KeyboardInterrupt(), None)
            signal.raise_signal(signal.SIGINT)
        return self

    def __exit__(self, exc_type: Any, exc_value: Any, traceback: Any) -> None:
        if exc_type is not None:  # else shutting down would wait for every running task
            self.stop_running()
        workers = list(getattr(self._executor, "_processes", {}).values()) if self._executor is not None else []
        super().__exit__(exc_type, exc_value, traceback)
        for process in workers:  # an executor given no task never starts the thread that ends its
            if process.is_alive():  # workers: started up front, they would wait for work forever and
                process.terminate()  # multiprocessing would wait for them at exit
            process.join(timeout=10)


def _start_worker(environ: dict[str, str] | None = None) -> None:
    """Initializer of a pool worker: the terminal's Ctrl-C is the flow's to handle (the worker
    would print a traceback per task; a worker started off the main thread did not inherit the
    ignoring), and the worker dies with the process that started it (the fork server, which ends
    with the flow's process). A forked worker takes the flow process's environment of when the pool
    started, as a spawned one would, not the fork server's (multiprocessing sets its directory)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # drops a Ctrl-C held back since the pool's start
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # ignored from now on, not held: what it starts inherits that
    die_with_parent()
    if environ is not None and environ != os.environ:
        os.environ.clear()
        os.environ.update(environ)
        if "prefect.context" in sys.modules:  # imported by the fork server with its own environment
            from prefect.context import refresh_global_settings_context

            refresh_global_settings_context()


def _forked(executor: Any) -> Any:
    """`executor` (Prefect's, not started, on "spawn") rebuilt on the fork server where there is one.

    A spawned worker is a new interpreter that imports torch, Prefect, numba and the task's modules
    before its first task: 2-5 CPU seconds, paid by every worker of every pool, and a loop starts
    pools for self-play, gates and ladders in each generation. The fork server (one per flow
    process, started at the first pool) imports `FORK_SERVER_PRELOAD` once and forks each worker
    from that: 3 pools of 2 workers, 12.70 s wall and 15.92 CPU s spawned, 8.44 s and 7.90 CPU s
    forked (`python -m benchmarks.pool_start`, 2026-11-28, load 3). Off ("spawn", as
    Prefect chose) with GOZERO_POOL_START=spawn, or where the platform has no fork server."""
    if os.environ.get(POOL_START_ENV, "forkserver") != "forkserver" or (
            "forkserver" not in multiprocessing.get_all_start_methods()):
        return executor
    multiprocessing.set_forkserver_preload(list(FORK_SERVER_PRELOAD))  # read when the server starts
    forked = concurrent.futures.ProcessPoolExecutor(
        max_workers=executor._max_workers, mp_context=multiprocessing.get_context("forkserver"),
        initializer=executor._initializer, initargs=executor._initargs)
    executor.shutdown(wait=False)
    return forked


def artifact_key(*parts: object) -> str:
    """A Prefect artifact key from `parts`: lowercase letters, digits and single dashes, at most 100
    characters (Prefect refuses anything else)."""
    text = "-".join(str(part) for part in parts).lower()
    return re.sub(r"[^a-z0-9]+", "-", text).strip("-")[:100].rstrip("-")

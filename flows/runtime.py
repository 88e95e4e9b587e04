"""Where flows run: one Prefect API for the flow and all its worker processes.

Without ``PREFECT_API_URL`` Prefect starts a temporary server per process, so each worker of a
process pool would start its own (8-12 s each) and they would fight over one SQLite file
("database is locked"). `prefect_api` starts one temporary server and hands its URL to every
process through the environment; with ``PREFECT_API_URL`` set it does nothing.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterable, Iterator
from typing import Any

from prefect.settings import PREFECT_API_URL, temporary_settings
from prefect.task_runners import ProcessPoolTaskRunner


@contextlib.contextmanager
def prefect_api() -> Iterator[str | None]:
    """Make sure one Prefect API serves this process and its children; yields its URL."""
    configured = PREFECT_API_URL.value()
    if configured:
        yield configured
        return
    from prefect.server.api.server import SubprocessASGIServer

    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")  # no internet: no telemetry

    server = SubprocessASGIServer()
    server.start(timeout=120)
    previous = os.environ.get("PREFECT_API_URL")
    os.environ["PREFECT_API_URL"] = server.api_url
    try:
        with temporary_settings(updates={PREFECT_API_URL: server.api_url}):
            yield server.api_url
    finally:
        if previous is None:
            os.environ.pop("PREFECT_API_URL", None)
        else:
            os.environ["PREFECT_API_URL"] = previous


def task_runner(workers: int | None = None, dask_address: str | None = None):
    """The one choice of where mapped tasks run: a process pool of `workers` (default: cores), or
    the existing Dask cluster at `dask_address` (prefect-dask)."""
    if dask_address:
        from prefect_dask import DaskTaskRunner

        return DaskTaskRunner(address=dask_address)
    return StoppingProcessPool(max_workers=workers or os.cpu_count() or 1)


def results_as_completed(futures: Iterable[Any]) -> Iterator[Any]:
    """The results of `futures` as they finish; at the first failure the ones not yet started are
    cancelled and the error raised, so the flow fails now instead of after every other task."""
    from prefect.futures import as_completed

    futures = list(futures)
    try:
        for future in as_completed(futures):
            yield future.result()
    except BaseException:
        for future in futures:
            wrapped = getattr(future, "wrapped_future", None)
            if wrapped is not None:
                wrapped.cancel()
        from prefect.context import FlowRunContext

        context = FlowRunContext.get()
        if context is not None and isinstance(context.task_runner, StoppingProcessPool):
            context.task_runner.stop_running()
        raise


class StoppingProcessPool(ProcessPoolTaskRunner):
    """Prefect's process pool, which `results_as_completed` can stop: when one task fails, the
    tasks still running in its workers are stopped instead of waited for, so a failed run ends
    and a retry never races it for the same files."""

    def stop_running(self) -> None:
        """Terminate the worker processes (their running tasks die with them)."""
        if self._executor is not None:
            for process in list(getattr(self._executor, "_processes", {}).values()):
                process.terminate()  # ProcessPoolExecutor has no public way to stop running work


def artifact_key(*parts: object) -> str:
    """A Prefect artifact key from `parts`: lowercase letters, digits and single dashes, at most 100
    characters (Prefect refuses anything else)."""
    text = "-".join(str(part) for part in parts).lower()
    return re.sub(r"[^a-z0-9]+", "-", text).strip("-")[:100].rstrip("-")

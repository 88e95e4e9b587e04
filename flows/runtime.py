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
from collections.abc import Iterator

from prefect.settings import PREFECT_API_URL, temporary_settings


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
    from prefect.task_runners import ProcessPoolTaskRunner

    return ProcessPoolTaskRunner(max_workers=workers or os.cpu_count() or 1)


def artifact_key(*parts: object) -> str:
    """A Prefect artifact key from `parts`: lowercase letters, digits and single dashes, at most 100
    characters (Prefect refuses anything else)."""
    text = "-".join(str(part) for part in parts).lower()
    return re.sub(r"[^a-z0-9]+", "-", text).strip("-")[:100].rstrip("-")

"""Where flows run: one Prefect API for the flow and all its worker processes.

Without ``PREFECT_API_URL`` Prefect starts a temporary server per process, so each worker of a
process pool would start its own (8-12 s each) and they would fight over one SQLite file
("database is locked"). `prefect_api` starts one temporary server and hands its URL to every
process through the environment; with ``PREFECT_API_URL`` set it does nothing.
"""

from __future__ import annotations

import contextlib
import os
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

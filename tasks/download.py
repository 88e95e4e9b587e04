"""Prefect adapter for fetching game records: `download_source` (a task) and `expand_sources`.

All the work is in storage.download (HTTP, resume, verification, and the one retry layer:
backoff with Range resumes, permanent errors not retried) and storage.archives (safe extraction);
this module only adds progress logging, and returns a small summary dict (directories and counts),
never the games themselves. No Prefect retries: they would multiply storage's attempts.
"""

from __future__ import annotations

import logging
from typing import Any

from prefect import task
from prefect.exceptions import MissingContextError
from prefect.logging import get_run_logger

from storage import catalog, layout
from storage.download import ProgressFn, fetch_source

_LOG_EVERY_BYTES = 16 * 2**20  # when the size is unknown


@task
def download_source(source: str, data_dir: str) -> dict[str, Any]:
    """Download (if remote) and extract one source into <data>/raw/<name>/; returns dirs and counts."""
    result = fetch_source(source, layout.data_dir(data_dir), progress=_progress_logger(source))
    summary = result.summary()
    _logger().info("%s: %d SGF files in %d directories (%d skipped, %d refused)%s", source,
                   summary["sgf_files"], len(summary["sgf_dirs"]), summary["skipped"], summary["refused"],
                   ", already present" if summary["reused"] else "")
    return summary


def expand_sources(sources: list[str]) -> list[str]:
    """One source string per archive (``cgos-9x9:2023-01..2023-03`` → 3), in order, without duplicates."""
    return catalog.expand_sources(sources)


def _progress_logger(source: str) -> ProgressFn:
    """A progress callback that logs every 10% (or every 16 MiB when the size is unknown)."""
    last_bucket: dict[str, int] = {}

    def report(name: str, done: int, total: int | None) -> None:
        bucket = done // (max(total // 10, 1) if total else _LOG_EVERY_BYTES)
        if bucket > last_bucket.get(name, 0):
            last_bucket[name] = bucket
            percent = f" ({100 * done // total}%)" if total else ""
            _logger().info("%s: %s %d/%s bytes%s", source, name, done, total or "?", percent)

    return report


def _logger() -> logging.Logger | logging.LoggerAdapter[logging.Logger]:
    # `.fn(...)` calls in tests and scripts have no run context: fall back to a plain logger.
    try:
        return get_run_logger()
    except MissingContextError:
        return logging.getLogger(__name__)

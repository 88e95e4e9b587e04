"""The registry's records as plain dataclasses, and a read-only view of a local SQLite registry.

`VersionInfo` (a registered model version) and `RunSummary` (the run that logged it) are what
`storage.registry` and `storage.runs` return; they live here, free of MLflow imports, so that
`gozero models list` can read a registry that is a SQLite file beside the data (the default) with
`sqlite3` alone, about two seconds sooner than through the MLflow client (whose import costs ~2.5 s).
`read_versions` reads MLflow's own tables (the schema of the pinned MLflow 3.x: model_versions,
model_version_tags, registered_model_aliases, runs, latest_metrics, params, tags) and returns what
`storage.registry.list_versions` returns; on any schema it does not know it returns None and the
caller goes through MLflow.
"""

from __future__ import annotations

import dataclasses
import math
import os
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

from storage.layout import data_dir

CHAMPION = "champion"
KEY_METRICS = ("gate_win_rate", "games", "elo", "val_policy_accuracy", "val_accuracy", "val_value_mse")
_DELETED = "Deleted_Internal"  # MLflow's stage of a deleted version, whose row it keeps


@dataclasses.dataclass(frozen=True)
class RunSummary:
    """One training run: status (RUNNING, FINISHED, FAILED, KILLED), params, latest metrics, tags."""

    run_id: str
    status: str
    params: dict[str, str]
    metrics: dict[str, float]
    tags: dict[str, str]
    artifact_uri: str


@dataclasses.dataclass(frozen=True)
class VersionInfo:
    """One registered model version: its aliases, tags, source and the run that logged it."""

    name: str
    version: int
    aliases: tuple[str, ...]
    tags: dict[str, str]
    created: datetime
    """Registration time, UTC."""
    source: str
    """Artifact URI of the model directory."""
    run: RunSummary | None
    """None if the run was deleted."""

    @property
    def uri(self) -> str:
        """``models:/<name>/<version>``."""
        return f"models:/{self.name}/{self.version}"

    def key_metrics(self) -> dict[str, str]:
        """The KEY_METRICS found in the version's tags, else in its run's metrics."""
        metrics = self.run.metrics if self.run else {}
        found = {k: self.tags[k] for k in KEY_METRICS if k in self.tags}
        return found | {k: f"{metrics[k]:.4g}" for k in KEY_METRICS if k in metrics and k not in found}


def tracking_uri(data: Path | None = None) -> str:
    """$MLFLOW_TRACKING_URI (a relative SQLite path made absolute), else ``<data>/mlflow.db``."""
    configured = os.environ.get("MLFLOW_TRACKING_URI")
    if not configured:
        return f"sqlite:///{data_dir(data) / 'mlflow.db'}"
    path = sqlite_path(configured)
    query = configured.partition("?")[1] + configured.partition("?")[2]
    return configured if path is None else f"sqlite:///{path}{query}"


def sqlite_path(uri: str) -> Path | None:
    """The absolute file of a ``sqlite:///`` URI (relative paths from the cwd), else None."""
    if not uri.startswith("sqlite:///"):
        return None
    path = uri[len("sqlite:///"):].partition("?")[0]
    return None if path in ("", ":memory:") else Path(path).expanduser().resolve()


def local_versions(board_size: int | None = None, data: Path | None = None) -> list[VersionInfo] | None:
    """The gozero model versions (of one board size if given) when the registry is a SQLite file
    (`storage.registry.list_models` + `list_versions` without MLflow); None when it is not, or when
    its tables are not the ones `read_versions` knows."""
    db = sqlite_path(tracking_uri(data))
    versions = None if db is None else read_versions(db)
    if versions is None or board_size is None:
        return versions
    base = f"gozero-{board_size}x{board_size}"
    return [v for v in versions if v.name == base or v.name.startswith(f"{base}-")]


def read_versions(db: Path, names_like: str = "gozero-%") -> list[VersionInfo] | None:
    """Every version of the registered models whose name is LIKE `names_like` in the SQLite registry
    `db`, by name then version; [] if the file does not exist, None if its tables are not the ones
    this reads (an MLflow this was not written for): go through MLflow then."""
    if not db.is_file():
        return []
    try:
        with sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True, timeout=10) as connection:
            return _read(connection, names_like)
    except sqlite3.DatabaseError:
        return None


def _read(connection: sqlite3.Connection, names_like: str) -> list[VersionInfo]:
    rows = connection.execute(
        "SELECT name, version, creation_time, source, run_id FROM model_versions "
        "WHERE name LIKE ? AND (current_stage IS NULL OR current_stage != ?) ORDER BY name, version",
        (names_like, _DELETED)).fetchall()
    tags: dict[tuple[str, int], dict[str, str]] = {}
    for name, version, key, value in connection.execute(
            "SELECT name, version, key, value FROM model_version_tags WHERE name LIKE ?", (names_like,)):
        tags.setdefault((name, int(version)), {})[key] = value
    aliases: dict[tuple[str, int], list[str]] = {}
    for name, version, alias in connection.execute(
            "SELECT name, version, alias FROM registered_model_aliases WHERE name LIKE ?", (names_like,)):
        aliases.setdefault((name, int(version)), []).append(alias)
    runs = {run_id: _run(connection, run_id) for run_id in {row[4] for row in rows if row[4]}}
    return [VersionInfo(name=name, version=int(version), aliases=tuple(sorted(aliases.get((name, int(version)), []))),
                        tags=tags.get((name, int(version)), {}),
                        created=datetime.fromtimestamp(created / 1000, UTC), source=source,
                        run=runs.get(run_id) if run_id else None)
            for name, version, created, source, run_id in rows]


def _run(connection: sqlite3.Connection, run_id: str) -> RunSummary | None:
    found = connection.execute("SELECT status, artifact_uri FROM runs WHERE run_uuid = ?", (run_id,)).fetchone()
    if found is None:
        return None

    def pairs(table: str) -> list[tuple[str, str]]:
        return connection.execute(f"SELECT key, value FROM {table} WHERE run_uuid = ?", (run_id,)).fetchall()

    metrics = {key: math.nan if is_nan else float(value) for key, value, is_nan in connection.execute(
        "SELECT key, value, is_nan FROM latest_metrics WHERE run_uuid = ?", (run_id,))}
    return RunSummary(run_id=run_id, status=found[0], params=dict(pairs("params")), metrics=metrics,
                      tags={k: v for k, v in pairs("tags") if not k.startswith("mlflow.")}, artifact_uri=found[1])

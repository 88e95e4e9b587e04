"""The MLflow store gozero tracks into: its URI, artifact root and this process's client.

Store: ``sqlite:///<data>/mlflow.db`` with artifacts in ``<data>/mlartifacts``, unless
``MLFLOW_TRACKING_URI`` is set. MLflow only ever sees absolute URIs (its defaults are relative to
the working directory), and every experiment gets an explicit ``artifact_location``: beside the
SQLite file (one store stays whole whichever data dir later processes use), or the server's choice
for an ``http(s)://`` tracking server. A file lock serialises first-time store creation.
storage.runs (training runs) and storage.registry (registered models) talk to MLflow through
`client`; they are the only modules besides this one that import mlflow.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import sqlite3
import subprocess
import threading
import urllib.request
import warnings
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

from filelock import FileLock
from mlflow import MlflowClient
from mlflow.exceptions import MlflowException

from gocore.errors import GozeroError
from storage.layout import data_dir
from storage.registry_records import sqlite_path, tracking_uri

_CLIENTS: dict[str, MlflowClient] = {}
_CLIENTS_LOCK = threading.Lock()


class RegistryError(GozeroError):
    """A tracking or registry request that cannot be served; the message says what to do."""


def mlflow_errors(function: Callable) -> Callable:
    """Turn an exception MLflow raises into a RegistryError with its first line."""
    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        except MlflowException as error:
            raise RegistryError(f"MLflow refused: {first_line(error)}") from error
    return wrapper


@functools.lru_cache(maxsize=1)
def code_version() -> str:
    """``git:<commit>[-dirty]`` of the checkout gozero runs from, else ``gozero==<version>``."""
    root = Path(__file__).resolve().parents[1]
    if (root / ".git").exists() and (root / "pyproject.toml").exists():  # not some enclosing repo
        commit = _git(root, "rev-parse", "HEAD")
        if commit:  # --no-optional-locks: reading the status must not rewrite the index
            dirty = _git(root, "--no-optional-locks", "status", "--porcelain", "--untracked-files=no")
            return f"git:{commit}{'-dirty' if dirty else ''}"
    try:
        return f"gozero=={metadata.version('gozero')}"
    except metadata.PackageNotFoundError:
        return "unknown"


def artifact_root(uri: str, data: Path | None = None) -> str | None:
    """Where new experiments keep artifacts: beside a SQLite store, the server's choice, or <data>."""
    db = sqlite_path(uri)
    if db is not None:
        return (db.parent / "mlartifacts").as_uri()
    if uri.startswith(("http://", "https://", "databricks")):
        return None
    return (data_dir(data) / "mlartifacts").as_uri()


def ui_stores(data: Path | None = None) -> tuple[str, str] | None:
    """What an MLflow UI serves for the store gozero uses on `data`: (backend store URI, artifacts
    destination: the ``mlartifacts`` beside the SQLite file, where this module puts experiments'
    artifacts); None if the tracking URI is not a SQLite file (a server: it has its own UI)."""
    uri = tracking_uri(data)
    root = artifact_root(uri, data)
    return (uri, root) if sqlite_path(uri) is not None and root is not None else None


def client(data: Path | None = None) -> MlflowClient:
    """This process's MLflow client for the tracking URI; the store is created on first use."""
    uri = tracking_uri(data)
    with _CLIENTS_LOCK:
        if uri not in _CLIENTS:
            _CLIENTS[uri] = _open_store(uri)
        return _CLIENTS[uri]


def _open_store(uri: str) -> MlflowClient:
    """Open the store at `uri`, creating it if needed; RegistryError if it cannot be used."""
    logging.getLogger("mlflow").setLevel(logging.WARNING)  # table creation logs at INFO
    os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")  # often offline; never phone home
    if uri.startswith(("http://", "https://")):
        _check_server(uri)
    db = sqlite_path(uri)
    try:
        if db:
            db.parent.mkdir(parents=True, exist_ok=True)
        # Creating the tables takes seconds and fails when processes race: one at a time.
        with FileLock(f"{db}.lock", timeout=300) if db else contextlib.nullcontext():
            if db and db.is_file():
                relocate_artifacts(db)
            with warnings.catch_warnings():  # MLflow's own use of deprecated SQLAlchemy API
                warnings.simplefilter("ignore", DeprecationWarning)
                opened = MlflowClient(tracking_uri=uri, registry_uri=uri)
                opened.search_experiments(max_results=1)
                opened.search_registered_models(max_results=1)
    except Exception as error:  # sqlalchemy, OS and MLflow errors all mean "cannot use this store"
        hint = ("fix or unset MLFLOW_TRACKING_URI (unset, the store lives in the data dir)"
                if os.environ.get("MLFLOW_TRACKING_URI") else "check the data dir (--data-dir, $GOZERO_DATA)")
        raise RegistryError(f"MLflow store {uri} is unreachable: {first_line(error)}; {hint}") from error
    return opened


RELOCATED_COLUMNS = (("experiments", "artifact_location"), ("runs", "artifact_uri"), ("model_versions", "source"),
                     ("model_versions", "storage_location"), ("logged_models", "artifact_location"))
"""Where MLflow's SQLite store keeps absolute artifact URIs."""


def relocate_artifacts(db: Path) -> list[str]:
    """Point a copied or moved store at its own artifacts: MLflow records every experiment's, run's
    and model version's artifacts by absolute URI, so a data dir copied elsewhere would go on reading
    and writing the original's ``mlartifacts`` (and a moved one would find nothing). A URI under
    another directory's ``mlartifacts`` is rewritten to the ``mlartifacts`` beside `db` when the
    files it names are there (copied with the store); one whose files are only at the old place
    keeps pointing there. Returns the old roots it rewrote from (none: the store was untouched)."""
    here = db.parent / "mlartifacts"
    if not here.is_dir():
        return []
    moved: set[str] = set()
    with contextlib.closing(sqlite3.connect(db, timeout=60)) as connection, connection:
        tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        for table, column in RELOCATED_COLUMNS:
            if table not in tables:
                continue
            for (uri,) in connection.execute(f"SELECT DISTINCT {column} FROM {table}").fetchall():  # noqa: S608
                if not (uri and uri.startswith("file:///") and "/mlartifacts" in uri):
                    continue
                root, _, rest = uri.partition("/mlartifacts")
                if root + "/mlartifacts" == here.as_uri() or not (here / rest.lstrip("/")).exists():
                    continue
                connection.execute(f"UPDATE {table} SET {column} = ? WHERE {column} = ?",  # noqa: S608
                                   (here.as_uri() + rest, uri))
                moved.add(root + "/mlartifacts")
    if moved:
        logging.getLogger(__name__).warning("the store %s was copied or moved: its artifacts are now read from %s "
                                            "(they were at %s)", db, here.as_uri(), ", ".join(sorted(moved)))
    return sorted(moved)


def _check_server(uri: str) -> None:
    """Fail in seconds, not after MLflow's minutes of retries, when a tracking server is down."""
    try:
        with urllib.request.urlopen(f"{uri.rstrip('/')}/health", timeout=5):
            pass
    except OSError as error:
        raise RegistryError(f"MLflow server {uri} is unreachable ({error}); start it, or unset "
                            "MLFLOW_TRACKING_URI to use the embedded store in the data dir") from None


def _git(root: Path, *args: str) -> str:
    try:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


def first_line(error: BaseException) -> str:
    """The first line of an error's message (MLflow's run on for pages)."""
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__

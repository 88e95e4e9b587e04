"""Where gozero's bytes live: the data-dir layout (the only module that spells these paths).

    <data>/raw/<source>/             downloaded archives and extracted SGF
    <data>/datasets/<name>/          encoded datasets: shard-*.parquet, manifest.json, quarantine.parquet
    <data>/selfplay/gen=<k>/         self-play shards and games (a loop's: <data>/loops/<loop>/selfplay/gen=<k>/)
    <data>/matches/<match-id>/       evaluation games and results
    <data>/checkpoints/<run-id>/     training checkpoints
    <data>/ratings/                  every game our players played, and the Elo ladder (storage.ratings)
    <data>/prefect/                  `gozero serve`'s Prefect server: its PREFECT_HOME and prefect.db
    <data>/serve/                    `gozero serve`'s lock and its children's logs
    <data>/cache/conv_paths.json     the fastest CPU convolution path per net shape (storage.conv_cache)

`<data>` is the explicit argument, else ``GOZERO_DATA``, else the per-user data directory the
platform expects (`default_data_dir`: ``~/.local/share/gozero`` on Linux): never the working
directory, so a GUI that starts ``gozero gtp`` somewhere else finds the same models.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from gocore.errors import GozeroError

_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._=-]{0,127}$")
CONFIG_FILE = "config.json"
"""A saved model's config (its net's family, board_size...), beside its weights (storage.checkpoints)."""


class LayoutError(GozeroError, ValueError):
    """A name that cannot be used as a directory in the data dir."""


def data_dir(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The data dir: `explicit`, else $GOZERO_DATA, else `default_data_dir()` (absolute, not created)."""
    chosen = explicit if explicit is not None else os.environ.get("GOZERO_DATA") or default_data_dir()
    return Path(chosen).expanduser().resolve()


def default_data_dir() -> Path:
    """The per-user data directory of gozero on this platform (XDG_DATA_HOME on Linux)."""
    import platformdirs

    return Path(platformdirs.user_data_dir("gozero", appauthor=False))


def safe_name(name: str, what: str = "name") -> str:
    """`name` if it is a plain directory name (letters, digits, . _ = -), else LayoutError."""
    if not _SAFE_NAME.match(name) or name in {".", ".."} or ".." in name:
        raise LayoutError(f"{what} {name!r} must be letters, digits, '.', '_', '=' or '-' (max 128)")
    return name


def raw_root(data: Path) -> Path:
    """Where every source's downloads live (SGF labels in datasets are relative to it)."""
    return data / "raw"


def raw_dir(data: Path, source: str) -> Path:
    """Downloads and extracted SGF of one source."""
    return raw_root(data) / safe_name(source, "source name")


def datasets_root(data: Path) -> Path:
    """Every encoded dataset's folder is in here."""
    return data / "datasets"


def dataset_dir(data: Path, name: str) -> Path:
    """One encoded dataset."""
    return datasets_root(data) / safe_name(name, "dataset name")


def selfplay_dir(data: Path, generation: int, run: str = "") -> Path:
    """Self-play output of one generation: of a loop `run` (its own numbering), else the data dir's."""
    root = data / "loops" / safe_name(run, "loop name") / "selfplay" if run else data / "selfplay"
    return root / f"gen={int(generation)}"


def matches_root(data: Path) -> Path:
    """Where every match directory lives."""
    return data / "matches"


def match_dir(data: Path, match_id: str) -> Path:
    """Games and results of one evaluation match."""
    return matches_root(data) / safe_name(match_id, "match id")


def data_of_match(match: Path) -> Path | None:
    """The data dir a match directory lies in (``<data>/matches/<id>``), None if it lies elsewhere."""
    match = Path(match).resolve()
    return match.parent.parent if match.parent.name == "matches" else None


def checkpoint_dir(data: Path, run_id: str) -> Path:
    """Checkpoints of one training run."""
    return data / "checkpoints" / safe_name(run_id, "run id")


def model_cache_dir(data: Path, name: str, version: int, run_id: str) -> Path:
    """A registered model version copied from a remote artifact store (`storage.registry.local_copy`)."""
    return data / "models" / "cache" / safe_name(name, "model name") / f"v{int(version)}-{safe_name(run_id or 'norun', 'run id')}"


def ratings_dir(data: Path) -> Path:
    """The table of every game our players played, and the ladder fitted from it."""
    return data / "ratings"


def prefect_home(data: Path) -> Path:
    """PREFECT_HOME of the Prefect server, worker and deploy steps `gozero serve` runs on `data`."""
    return data / "prefect"


def prefect_database(data: Path) -> Path:
    """The SQLite database of `gozero serve`'s Prefect server."""
    return prefect_home(data) / "prefect.db"


def serve_lock(data: Path) -> Path:
    """The lock one `gozero serve` per data dir holds while it runs (storage.locks)."""
    return data / "serve" / "serve.lock"


def serve_log(data: Path, child: str) -> Path:
    """The output of one process `gozero serve` started (`child`: e.g. prefect-server, worker, mlflow)."""
    return data / "serve" / f"{safe_name(child, 'log name')}.log"


def conv_cache_path(data: Path) -> Path:
    """This machine's measured convolution-path choices (`storage.conv_cache`)."""
    return data / "cache" / "conv_paths.json"

"""A training run's checkpoint directory: every file name in it, and its readers and writers.

    <data>/checkpoints/<run key>/
        step-<8 digits>.pt     training checkpoints (storage.checkpoints), the newest few kept
        run.json               what the key was made for (dataset, family, net): a clash is refused
        history.json           every metric reported up to the newest checkpoint, for the curves
        progress.json          {"step", "steps", "run_id"}, rewritten at every report (progress bars)
        result.json            the run's result, once the model is registered
        model/                 the saved model (storage.checkpoints.save_model), logged to MLflow

The directory is keyed by a stable *run key*, not by the MLflow run id: a rerun is a new MLflow
run, but it must find the checkpoints of the run it continues. Small files are JSON, written
atomically; a reader of one that is missing or being replaced gets None (or nothing).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from storage import layout
from storage.atomic import write_json

RUN_FILE, HISTORY_FILE, PROGRESS_FILE, RESULT_FILE = "run.json", "history.json", "progress.json", "result.json"
MODEL_DIR = "model"

History = dict[str, list[tuple[int, float]]]  # metric name → (step, value) points, in order


def run_dir(data: Path, key: str) -> Path:
    """The checkpoint directory of the run with this key."""
    return layout.checkpoint_dir(data, key)


def model_dir(directory: Path) -> Path:
    """Where the run's final model is saved."""
    return directory / MODEL_DIR


def checkpoint_path(directory: Path, step: int) -> Path:
    """The training checkpoint of `step`."""
    return directory / f"step-{step:08d}.pt"


def checkpoint_files(directory: Path) -> list[Path]:
    """The run's checkpoint files, oldest first."""
    return sorted(directory.glob("step-*.pt"))


def prune_checkpoints(directory: Path, keep: int) -> None:
    """Delete all but the newest `keep` checkpoint files."""
    for old in checkpoint_files(directory)[:-keep]:
        old.unlink(missing_ok=True)


def read_identity(directory: Path) -> dict[str, Any] | None:
    """What the run was claimed for (run.json), or None if it was never claimed."""
    return _read(directory / RUN_FILE)


def write_identity(directory: Path, identity: Mapping[str, Any]) -> None:
    """Claim the directory for a run (run.json), creating it."""
    directory.mkdir(parents=True, exist_ok=True)
    write_json(directory / RUN_FILE, dict(identity))


def read_history(directory: Path, until_step: int) -> History:
    """The saved metrics up to `until_step` (later points are reported again); {} at step 0."""
    saved = _read(directory / HISTORY_FILE) if until_step else None
    if not saved:
        return {}
    return {name: [(int(s), float(v)) for s, v in points if s <= until_step] for name, points in saved.items()}


def write_history(directory: Path, history: History) -> None:
    """Save the metrics reported so far (after each checkpoint)."""
    write_json(directory / HISTORY_FILE, {name: [list(p) for p in points] for name, points in history.items()})


def write_progress(directory: Path, step: int, steps: int, run_id: str) -> None:
    """Record that the run reported `step` of `steps` (rewritten at every report)."""
    write_json(directory / PROGRESS_FILE, {"step": step, "steps": steps, "run_id": run_id})


def read_progress(directory: Path) -> tuple[int, int]:
    """(steps done, steps planned); (0, 0) before the run reports, or while the file is replaced."""
    progress = _read(directory / PROGRESS_FILE)
    try:
        return int(progress["step"]), int(progress["steps"])  # type: ignore[index]
    except (TypeError, KeyError, ValueError):
        return 0, 0


def read_result(directory: Path) -> dict[str, Any] | None:
    """The stored result of a registered run, or None."""
    return _read(directory / RESULT_FILE)


def write_result(directory: Path, result: Mapping[str, Any]) -> None:
    """Store the run's result (last: the run is registered)."""
    write_json(directory / RESULT_FILE, dict(result))


def _read(path: Path) -> Any:
    try:
        return json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None

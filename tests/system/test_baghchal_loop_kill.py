"""The Baghchal loop SIGKILLed during self-play, during training and right after its promotion that,
rerun each time, finishes its generation with nothing played or registered twice (real processes)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from storage import baghchal as files
from storage import loops, registry, run_dirs
from tests.flows.test_baghchal_loop import SETTINGS
from tests.flows.test_zero_loop import own_store
from tests.helpers import kill_group_when

REPO = Path(__file__).resolve().parents[2]
KILLED = {**SETTINGS, "loop": "baghchal-kill", "games": 8, "games_per_task": 2, "ladder_depth": 0}
LOOP_SCRIPT = """
import os, sys
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "CRITICAL")
if __name__ == "__main__":
    from flows.baghchal_loop import run_baghchal_loop
    from tasks.app.baghchal_settings import BaghchalLoopSettings
    run_baghchal_loop(BaghchalLoopSettings(**{settings}), sys.argv[1], workers=2, device="cpu")
"""


def start_loop(data: Path) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k not in ("MLFLOW_TRACKING_URI", "PREFECT_API_URL")}
    return subprocess.Popen([sys.executable, "-c", LOOP_SCRIPT.format(settings=repr(KILLED)), str(data)], cwd=REPO,
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)


def kill_when(data: Path, happened: Callable[[], bool], timeout: float = 300) -> bool:
    """Run the loop until `happened()`, then SIGKILL it and its workers; False if it ended first."""
    return kill_group_when(start_loop(data), happened, timeout)


def recorded(data: Path, step: str) -> bool:
    return loops.read_step(data, KILLED["loop"], 1, step) is not None


def test_a_baghchal_loop_killed_at_every_step_resumes_to_one_promotion(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch):
    data = tmp_path / "data"
    own_store(data, monkeypatch)
    loop = KILLED["loop"]
    batches: dict[int, bytes] = {}

    def during_selfplay() -> bool:
        found = files.finished_batches(data, loop, 1)
        if found and not recorded(data, "selfplay"):
            batches.update({seed: files.sidecar_path(data, loop, 1, seed).read_bytes() for seed in found})
            return True
        return False

    points = {
        "self-play": during_selfplay,
        "training": lambda: bool(run_dirs.checkpoint_files(run_dirs.run_dir(data, f"{loop}-gen1")))
        and not recorded(data, "train"),
        "promotion": lambda: recorded(data, "promote"),
    }
    killed = [name for name, point in points.items() if kill_when(data, point)]
    assert killed == list(points), f"the loop ended before reaching {set(points) - set(killed)}"
    finish = start_loop(data)
    assert finish.wait(timeout=600) == 0, finish.stderr.read().decode()[-3000:]
    assert {record["step"] for record in loops.read_steps(data, loop)} == {
        "start", "selfplay", "train", "gate", "promote", "ladder"}
    for seed, sidecar in batches.items():  # batches finished before the first kill were not played again
        assert files.sidecar_path(data, loop, 1, seed).read_bytes() == sidecar
    versions = registry.list_versions("baghchal", data)
    assert sorted(v.tags["generation"] for v in versions) == ["0", "1"]  # nothing registered twice
    assert [v.version for v in versions if "champion" in v.aliases] == [2]
    ids = [game for sidecar in files.finished_batches(data, loop, 1).values() for game in sidecar["game_ids"]]
    assert len(ids) == len(set(ids)) == KILLED["games"]

"""A zero loop SIGKILLed during self-play, training, the gate and right after a promotion that, rerun
each time, ends exactly as an uninterrupted loop does (5x5, real processes: the system tier)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from storage import layout, loops, registry, run_dirs
from tasks.app.loop_view import generation_rows
from tests.flows.test_zero_loop import SETTINGS, own_store
from tests.helpers import kill_group_when

REPO = Path(__file__).resolve().parents[2]
LOOP_SCRIPT = """
import os, sys
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "CRITICAL")
if __name__ == "__main__":
    from flows.zero_loop import run_zero_loop
    from tasks.app.loop_settings import LoopSettings
    run_zero_loop(LoopSettings(**{settings}), sys.argv[1], workers=2, device="cpu")
"""


def start_loop(data: Path) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k not in ("MLFLOW_TRACKING_URI", "PREFECT_API_URL")}
    script = LOOP_SCRIPT.format(settings=repr(SETTINGS))
    return subprocess.Popen([sys.executable, "-c", script, str(data)], cwd=REPO, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)


def kill_when(data: Path, happened: Callable[[], bool], timeout: float = 300) -> bool:
    """Run the loop until `happened()`, then SIGKILL it and its workers; False if it ended first."""
    return kill_group_when(start_loop(data), happened, timeout)


def recorded(data: Path, generation: int, step: str) -> bool:
    return loops.read_step(data, "zero-5x5", generation, step) is not None


def test_a_loop_killed_at_every_step_resumes_to_the_same_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    data = tmp_path / "data"
    own_store(data, monkeypatch)
    selfplay = layout.selfplay_dir(data, 1, "zero-5x5")
    points = {
        "self-play": lambda: any(selfplay.glob("shard-*.json")) and not recorded(data, 1, "selfplay"),
        "training": lambda: bool(run_dirs.checkpoint_files(run_dirs.run_dir(data, "zero-5x5-gen1")))
        and not recorded(data, 1, "train"),
        "gate": lambda: any((layout.match_dir(data, "zero-5x5-gen1-gate") / "games").glob("*"))
        and not recorded(data, 1, "gate"),
        "promotion": lambda: recorded(data, 1, "promote"),
    }
    killed = [name for name, point in points.items() if kill_when(data, point)]
    assert killed == list(points), f"the loop ended before reaching {set(points) - set(killed)}"
    finish = start_loop(data)
    assert finish.wait(timeout=600) == 0, finish.stderr.read().decode()[-3000:]
    rows = generation_rows(loops.read_steps(data, "zero-5x5"))
    assert [row.generation for row in rows] == [1, 2] and all(row.step == "ladder" for row in rows)
    versions = registry.list_versions("gozero-5x5", data)
    assert len(versions) == 3  # generation 0 and one candidate per generation, none twice
    assert sorted(v.tags["generation"] for v in versions) == ["0", "1", "2"]
    for generation in (1, 2):
        ids = [game for path in layout.selfplay_dir(data, generation, "zero-5x5").glob("shard-*.json")
               for game in json.loads(path.read_text())["game_ids"]]
        assert len(ids) == len(set(ids)) == SETTINGS["games"]
